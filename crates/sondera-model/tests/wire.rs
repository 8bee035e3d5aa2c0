//! The wire format: every payload round-trips through JSON, names are
//! snake_case and tagged, bad input gets typed errors with its location,
//! and the checked-in JSON Schema is the one the types generate.

use std::collections::BTreeMap;

use serde_json::json;
use sondera_model::*;

fn agent() -> Agent {
    Agent::new("support-bot", "google-adk").with_platform("rust")
}

fn every_payload() -> Vec<Payload> {
    let card = AgentCard::React {
        model: Some("gemini-2.5-flash".into()),
        system_instruction: "Help.".into(),
        tools: vec![Tool {
            name: "transfer_funds".into(),
            description: "Move money".into(),
            parameters: json!({"type": "OBJECT"}),
            parameters_json_schema: Some(
                json!({"type": "object", "properties": {"amount": {"type": "integer"}}}),
            ),
            response: None,
            response_json_schema: None,
            source: Some("builtin".into()),
            annotations: None,
        }],
        sub_agents: vec![SubAgent {
            name: "billing".into(),
            parent_path: vec!["support-bot".into()],
            description: "Billing questions".into(),
            model: None,
            collaboration_mode: CollaborationMode::Transfer,
            owned_tool_names: vec!["transfer_funds".into()],
        }],
    };
    vec![
        Payload::ToolCall {
            call_id: "c1".into(),
            tool: "get_weather".into(),
            arguments: json!({"city": "Lisbon"}),
        },
        Payload::ShellCommand {
            call_id: "c2".into(),
            command: "ls -la".into(),
            working_dir: Some("/w".into()),
        },
        Payload::WebFetch {
            call_id: "c3".into(),
            url: "https://docs.rs".into(),
            prompt: "summarize".into(),
            method: Some("POST".into()),
            body: Some("{\"q\":1}".into()),
        },
        Payload::FileOperation {
            call_id: "c4".into(),
            operation: FileOperationKind::Edit,
            path: "a.rs".into(),
            content: Some("new".into()),
            old_content: Some("old".into()),
        },
        Payload::Prompt {
            role: PromptRole::User,
            content: "hi".into(),
        },
        Payload::Thought {
            content: "thinking".into(),
        },
        Payload::ToolOutput {
            call_id: "c1".into(),
            success: true,
            output: json!({"temp": 21}),
            error: None,
        },
        Payload::ShellCommandOutput {
            call_id: "c2".into(),
            exit_code: 1,
            stdout: "".into(),
            stderr: "boom".into(),
        },
        Payload::WebFetchOutput {
            call_id: "c3".into(),
            url: "https://docs.rs".into(),
            code: 200,
            result: "ok".into(),
        },
        Payload::FileOperationResult {
            call_id: "c4".into(),
            success: false,
            content: None,
            error: Some("denied".into()),
        },
        Payload::Started {
            agent: agent().with_card(card),
            task: Some("triage".into()),
            session_id: Some("s-1".into()),
        },
        Payload::Completed {
            summary: Some("done".into()),
        },
        Payload::Failed {
            reason: "crash".into(),
        },
        Payload::Terminated {
            reason: "budget".into(),
            terminated_by: Actor::new(ActorKind::Policy, "budget-guard"),
        },
        Payload::Suspended {
            reason: "waiting".into(),
        },
        Payload::Resumed {
            resumed_by: Actor::human("alice"),
        },
        Payload::Adjudicated(Adjudicated::deny(Mode::Monitor, "why")),
        Payload::Snapshot {
            working_dir: Some("/w".into()),
            open_files: vec!["a.rs".into()],
            git_branch: Some("main".into()),
            variables: BTreeMap::from([("k".to_string(), json!(1))]),
        },
    ]
}

#[test]
fn every_payload_round_trips_through_json() {
    for payload in every_payload() {
        let event = Event::new("traj-1", &agent(), payload)
            .with_execution(ExecutionAttribution {
                agent_name: "billing".into(),
                agent_path: vec!["support-bot".into(), "billing".into()],
            })
            .with_provider_call_id(Some("fc-1".into()))
            .with_causality(Causality {
                correlation_id: Some("turn-1".into()),
                causation_id: None,
                parent_id: Some("e0".into()),
            });
        let text = event.to_json();
        let back = Event::from_json(&text, 1 << 20).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(back, event, "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["payload"]["type"], event.payload.kind());
    }
}

#[test]
fn wire_format_is_snake_case_and_tagged() {
    let text = r#"{
        "event_id": "e1", "trajectory_id": "t1",
        "agent": {"id": "bot", "provider": "google-adk"},
        "timestamp": "2026-11-30T10:00:00Z",
        "payload": {"type": "file_operation", "call_id": "c", "operation": "delete", "path": "/tmp/x"},
        "actor": {"kind": "agent", "id": "bot"},
        "provider_call_id": "fc-9"
    }"#;
    let event = Event::from_json(text, 4096).unwrap();
    assert_eq!(event.timestamp.to_rfc3339(), "2026-11-30T10:00:00+00:00");
    assert!(matches!(
        event.payload,
        Payload::FileOperation {
            operation: FileOperationKind::Delete,
            ..
        }
    ));
    assert_eq!(event.payload.category(), PayloadCategory::Action);
    assert_eq!(event.provider_call_id.as_deref(), Some("fc-9"));
    let out: serde_json::Value = serde_json::from_str(&event.to_json()).unwrap();
    assert_eq!(out["timestamp"], "2026-11-30T10:00:00Z");
    assert_eq!(
        out["payload"],
        json!({"type": "file_operation", "call_id": "c", "operation": "delete", "path": "/tmp/x"})
    );
}

#[test]
fn bad_input_gets_typed_errors_with_location() {
    let err = Event::from_json("{\"event_id\": ", 100).unwrap_err();
    assert!(
        matches!(err, EventDecodeError::Syntax { line: 1, .. }),
        "{err}"
    );

    let unknown = r#"{"event_id":"e","trajectory_id":"t","agent":{"id":"a","provider":"p"},"timestamp":"2026-11-30T10:00:00Z","payload":{"type":"teleport"},"actor":{"kind":"agent","id":"a"}}"#;
    let err = Event::from_json(unknown, 4096).unwrap_err();
    match &err {
        EventDecodeError::Invalid { message, .. } => {
            assert!(message.contains("unknown variant `teleport`"), "{message}")
        }
        other => panic!("expected Invalid, got {other}"),
    }

    let bad_time = unknown
        .replace("2026-11-30T10:00:00Z", "yesterday")
        .replace("teleport", "thought\",\"content\":\"x");
    assert!(matches!(
        Event::from_json(&bad_time, 4096),
        Err(EventDecodeError::Invalid { .. })
    ));

    let empty_traj = unknown
        .replace("\"t\"", "\"  \"")
        .replace("teleport", "thought\",\"content\":\"x");
    assert_eq!(
        Event::from_json(&empty_traj, 4096),
        Err(EventDecodeError::EmptyField {
            field: "trajectory_id"
        })
    );

    let err = Event::from_json(unknown, 10).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "event is {} bytes, larger than the 10-byte limit",
            unknown.len()
        )
    );
}

#[test]
fn unknown_fields_are_rejected_not_dropped() {
    let text = r#"{"event_id":"e","trajectory_id":"t","agent":{"id":"a","provider":"p"},"timestamp":"2026-11-30T10:00:00Z","payload":{"type":"thought","content":"x","extra":1},"actor":{"kind":"agent","id":"a"}}"#;
    let err = Event::from_json(text, 4096).unwrap_err();
    assert!(err.to_string().contains("unknown field `extra`"), "{err}");
}

/// Keys sorted at every level, so the file does not depend on whether
/// serde_json's `preserve_order` feature is on in a given build.
fn canonical(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let sorted: std::collections::BTreeMap<&String, serde_json::Value> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            serde_json::to_value(sorted).unwrap()
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(canonical).collect())
        }
        other => other.clone(),
    }
}

/// The schema under `schema/` documents the wire format; it must be exactly
/// what the types generate. Regenerate with `SONDERA_UPDATE_SCHEMA=1 cargo test -p sondera-model`.
#[test]
fn checked_in_json_schema_matches_the_types() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/event.schema.json");
    let generated = canonical(&event_json_schema());
    if std::env::var_os("SONDERA_UPDATE_SCHEMA").is_some() {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&generated).unwrap() + "\n",
        )
        .unwrap();
    }
    let checked_in: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
            .unwrap_or_default();
    assert!(
        checked_in == generated,
        "schema/event.schema.json is stale: run SONDERA_UPDATE_SCHEMA=1 cargo test -p sondera-model"
    );
}

/// Corrupted input of every shape (truncations, flipped bytes, spliced
/// structure) yields a typed error or a valid event, never a panic.
#[test]
fn mangled_events_never_panic() {
    let samples: Vec<String> = every_payload()
        .into_iter()
        .map(|p| Event::new("t", &agent(), p).to_json())
        .collect();
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let splices: [&[u8]; 8] = [
        b"{",
        b"}",
        b"[",
        b"\"",
        b"\\u0000",
        b"null",
        b"1e999999",
        b"\"type\":\"started\"",
    ];
    let mut outcomes = [0usize; 2];
    for round in 0..20_000 {
        let mut bytes = samples[round % samples.len()].clone().into_bytes();
        match next() % 3 {
            0 => bytes.truncate((next() as usize) % bytes.len()),
            1 => {
                let i = (next() as usize) % bytes.len();
                bytes[i] = (next() % 256) as u8;
            }
            _ => {
                let i = (next() as usize) % bytes.len();
                let splice = splices[(next() as usize) % splices.len()];
                bytes.splice(i..i, splice.iter().copied());
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        outcomes[usize::from(Event::from_json(&text, 1 << 20).is_ok())] += 1;
    }
    assert!(
        outcomes[0] > 10_000,
        "most mangled inputs must be rejected: {outcomes:?}"
    );
}
