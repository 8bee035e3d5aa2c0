//! Every model value survives model -> wire -> bytes -> wire -> model unchanged.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use prost::Message;
use serde_json::json;
use sondera_model::*;
use sondera_proto::{DecodeError, v1};
use sondera_store::{StoredEvent, TrajectoryStatus, TrajectorySummary};

fn through_bytes<W: Message + Default>(wire: W) -> W {
    W::decode(wire.encode_to_vec().as_slice()).unwrap()
}

fn roundtrip_event(event: &Event) -> Event {
    let wire: v1::Event = event.clone().into();
    through_bytes(wire).try_into().unwrap()
}

fn agent() -> Agent {
    Agent::new("coder", "google-adk")
        .with_platform("rust")
        .with_card(AgentCard::React {
            model: Some("gemini-2.5-pro".into()),
            system_instruction: "help".into(),
            tools: vec![Tool {
                name: "read_file".into(),
                description: "reads".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                parameters_json_schema: Some(json!({"required": ["path"]})),
                response: None,
                response_json_schema: Some(json!({"type": "string"})),
                source: Some("builtin".into()),
                annotations: None,
            }],
            sub_agents: vec![SubAgent {
                name: "researcher".into(),
                parent_path: vec!["coder".into()],
                description: "looks things up".into(),
                model: None,
                collaboration_mode: CollaborationMode::Transfer,
                owned_tool_names: vec!["web_fetch".into()],
            }],
        })
}

fn verdict() -> Adjudicated {
    Adjudicated {
        decision: Decision::Allow,
        mode: Mode::Monitor,
        reason: Some("monitoring".into()),
        policies: vec![PolicyMetadata {
            policy_id: "no-rm".into(),
            description: Some("no rm".into()),
            escalate: true,
            escalate_arg: Some("oncall".into()),
            annotations: BTreeMap::from([("severity".into(), "high".into())]),
        }],
        would_be: Some(Decision::Escalate),
        shadow_matches: vec![],
        guardrails: Some(json!({"shell": {"risks": ["delete"]}})),
        steering: Some("use the trash".into()),
        decision_id: Some("0123456789abcdef0123456789abcdef".into()),
        policy_revision: Some("ab".repeat(32)),
    }
}

/// One payload of every variant; the match below stops compiling when a
/// variant is added without a sample here.
fn every_payload() -> Vec<Payload> {
    let payloads = vec![
        Payload::ToolCall {
            call_id: "c1".into(),
            tool: "search".into(),
            arguments: json!({"q": "rust", "limit": 18446744073709551615u64, "neg": -3, "f": 1.5, "n": null, "nested": [true, {"a": []}]}),
        },
        Payload::ShellCommand {
            call_id: "c2".into(),
            command: "ls -la".into(),
            working_dir: Some("/w".into()),
        },
        Payload::WebFetch {
            call_id: "c3".into(),
            url: "https://example.com".into(),
            prompt: "summarise".into(),
            method: Some("POST".into()),
            body: Some("{}".into()),
        },
        Payload::FileOperation {
            call_id: "c4".into(),
            operation: FileOperationKind::Edit,
            path: "src/main.rs".into(),
            content: Some("new".into()),
            old_content: Some("old".into()),
        },
        Payload::Prompt {
            role: PromptRole::Assistant,
            content: "hi".into(),
        },
        Payload::Thought {
            content: "hmm".into(),
        },
        Payload::ToolOutput {
            call_id: "c1".into(),
            success: false,
            output: json!(["x"]),
            error: Some("boom".into()),
        },
        Payload::ShellCommandOutput {
            call_id: "c2".into(),
            exit_code: -1,
            stdout: "out".into(),
            stderr: "err".into(),
        },
        Payload::WebFetchOutput {
            call_id: "c3".into(),
            url: "https://example.com".into(),
            code: 404,
            result: "nope".into(),
        },
        Payload::FileOperationResult {
            call_id: "c4".into(),
            success: true,
            content: None,
            error: None,
        },
        Payload::Started {
            agent: agent(),
            task: Some("fix it".into()),
            session_id: Some("s1".into()),
        },
        Payload::Completed { summary: None },
        Payload::Failed {
            reason: "crash".into(),
        },
        Payload::Terminated {
            reason: "stop".into(),
            terminated_by: Actor::human("alice"),
        },
        Payload::Suspended {
            reason: "waiting".into(),
        },
        Payload::Resumed {
            resumed_by: Actor::new(ActorKind::Policy, "p"),
        },
        Payload::Adjudicated(verdict()),
        Payload::Snapshot {
            working_dir: Some("/w".into()),
            open_files: vec!["a.rs".into()],
            git_branch: Some("main".into()),
            variables: BTreeMap::from([("k".into(), json!({"v": 1}))]),
        },
    ];
    for p in &payloads {
        match p {
            Payload::ToolCall { .. }
            | Payload::ShellCommand { .. }
            | Payload::WebFetch { .. }
            | Payload::FileOperation { .. }
            | Payload::Prompt { .. }
            | Payload::Thought { .. }
            | Payload::ToolOutput { .. }
            | Payload::ShellCommandOutput { .. }
            | Payload::WebFetchOutput { .. }
            | Payload::FileOperationResult { .. }
            | Payload::Started { .. }
            | Payload::Completed { .. }
            | Payload::Failed { .. }
            | Payload::Terminated { .. }
            | Payload::Suspended { .. }
            | Payload::Resumed { .. }
            | Payload::Adjudicated(_)
            | Payload::Snapshot { .. } => {}
        }
    }
    payloads
}

#[test]
fn every_payload_variant_roundtrips() {
    let payloads = every_payload();
    let kinds: BTreeSet<&str> = payloads.iter().map(Payload::kind).collect();
    assert_eq!(kinds.len(), 18, "one sample per variant");
    for payload in payloads {
        let event = Event::new("t1", &agent().without_card(), payload)
            .with_execution(ExecutionAttribution {
                agent_name: "researcher".into(),
                agent_path: vec!["coder".into(), "researcher".into()],
            })
            .with_provider_call_id(Some("call-9".into()))
            .with_causality(Causality {
                correlation_id: Some("turn-1".into()),
                causation_id: None,
                parent_id: Some("e0".into()),
            });
        assert_eq!(roundtrip_event(&event), event, "{}", event.payload.kind());
    }
}

#[test]
fn verdicts_and_records_roundtrip() {
    for decision in [Decision::Allow, Decision::Deny, Decision::Escalate] {
        for mode in [Mode::Govern, Mode::Monitor, Mode::Steer] {
            let v = Adjudicated {
                decision,
                mode,
                ..verdict()
            };
            let wire: v1::Adjudicated = v.clone().into();
            assert_eq!(Adjudicated::try_from(through_bytes(wire)).unwrap(), v);
        }
    }
    let mut state = TrajectoryState::default();
    state.record(
        &Payload::ShellCommand {
            call_id: "c".into(),
            command: "ls".into(),
            working_dir: None,
        },
        Decision::Allow,
    );
    state.secrets_seen = true;
    state.provenance.user_effects.insert("send".into());
    state.provenance.content_effects.insert("delete".into());
    state.remember_untrusted_commands(vec!["curl x | sh".into()]);
    state.remember_script(
        "/w/setup.sh",
        vec![sondera_model::ScriptRisk {
            kind: "remote_script".into(),
            evidence: "curl x | sh".into(),
        }],
    );
    for status in [
        TrajectoryStatus::Pending,
        TrajectoryStatus::Running,
        TrajectoryStatus::Completed,
        TrajectoryStatus::Failed,
        TrajectoryStatus::Terminated,
        TrajectoryStatus::Suspended,
    ] {
        let summary = TrajectorySummary {
            id: "t".into(),
            tenant: sondera_store::TenantId::new("acme").unwrap(),
            agent_id: "coder".into(),
            session_id: Some("s".into()),
            status,
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
            event_count: 3,
            state: state.clone(),
        };
        let wire: v1::TrajectorySummary = summary.clone().into();
        assert_eq!(
            sondera_proto::summary_from_wire(
                through_bytes(wire),
                &sondera_store::TenantId::new("acme").unwrap()
            )
            .unwrap(),
            summary
        );
    }
    let stored = StoredEvent {
        seq: 7,
        event: Event::new(
            "t",
            &agent(),
            Payload::Thought {
                content: "x".into(),
            },
        ),
        adjudication: Some(verdict()),
    };
    let wire: v1::RecordedEvent = stored.clone().into();
    assert_eq!(StoredEvent::try_from(through_bytes(wire)).unwrap(), stored);
}

#[test]
fn decoding_names_the_field_that_is_wrong() {
    let event = Event::new(
        "t",
        &agent(),
        Payload::Prompt {
            role: PromptRole::User,
            content: "x".into(),
        },
    );
    let mut wire: v1::Event = event.into();
    wire.payload = None;
    let err = Event::try_from(wire.clone()).unwrap_err();
    assert_eq!(err.field, "payload");
    assert!(err.to_string().contains("required"), "{err}");

    wire.payload = Some(v1::Payload {
        kind: Some(v1::payload::Kind::Prompt(v1::Prompt {
            role: 42,
            content: "x".into(),
        })),
    });
    let err: DecodeError = Event::try_from(wire.clone()).unwrap_err();
    assert_eq!(err.field, "payload.prompt.role");

    wire.payload = Some(v1::Payload {
        kind: Some(v1::payload::Kind::Started(v1::Started {
            agent: Some(v1::Agent {
                id: "a".into(),
                provider: "p".into(),
                platform: None,
                card: Some(v1::AgentCard {
                    kind: Some(v1::agent_card::Kind::React(v1::ReactCard {
                        model: None,
                        system_instruction: String::new(),
                        tools: vec![],
                        sub_agents: vec![v1::SubAgent {
                            collaboration_mode: 0,
                            ..Default::default()
                        }],
                    })),
                }),
            }),
            task: None,
            session_id: None,
        })),
    });
    let err = Event::try_from(wire.clone()).unwrap_err();
    assert_eq!(
        err.field,
        "payload.started.agent.card.react.sub_agents[0].collaboration_mode"
    );

    wire.timestamp = Some(prost_types::Timestamp {
        seconds: 0,
        nanos: -5,
    });
    assert_eq!(Event::try_from(wire).unwrap_err().field, "timestamp");
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        (-1e12f64..1e12).prop_map(serde_json::Value::from),
        ".{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_json_roundtrips_exactly(value in json_value()) {
        let wire = through_bytes(sondera_proto::json_to_wire(value.clone()));
        prop_assert_eq!(sondera_proto::json_from_wire(wire).unwrap(), value);
    }
}

#[test]
fn grants_of_every_shape_roundtrip() {
    let shapes = vec![
        ActionShape::Shell {
            commands: vec![
                CommandShape {
                    program: "git".into(),
                    subcommand: Some("push".into()),
                    privileged: false,
                },
                CommandShape {
                    program: "apt".into(),
                    subcommand: None,
                    privileged: true,
                },
            ],
        },
        ActionShape::File {
            operation: FileOperationKind::Write,
            path: "/etc/hosts".into(),
        },
        ActionShape::Web {
            host: "docs.rs".into(),
        },
        ActionShape::Tool {
            tool: "deploy".into(),
            target: r#"{"env":"prod"}"#.into(),
        },
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        let scope = if i % 2 == 0 {
            GrantScope::Always
        } else {
            GrantScope::Session
        };
        let grant = Grant::new(shape, scope, Actor::human("ana"));
        let wire = through_bytes(v1::Grant::from(grant.clone()));
        let mut back = Grant::try_from(wire).unwrap();
        if let ActionShape::Shell { commands } = &grant.shape {
            // The wire form is sorted, as coverage checks need.
            let mut sorted = commands.clone();
            sorted.sort();
            assert_eq!(back.shape, ActionShape::Shell { commands: sorted });
            back.shape = grant.shape.clone();
        }
        assert_eq!(back, grant);
    }
    let missing = v1::Grant {
        shape: None,
        ..v1::Grant::from(Grant::new(
            ActionShape::Web { host: "x".into() },
            GrantScope::Always,
            Actor::human("ana"),
        ))
    };
    assert_eq!(Grant::try_from(missing).unwrap_err().field, "shape");
}

#[test]
fn analytics_roundtrip_with_their_policy_counts() {
    let count = |policy_id: &str, count| sondera_store::PolicyCount {
        policy_id: policy_id.into(),
        count,
    };
    let analytics = sondera_store::Analytics {
        trajectories: 4,
        events: 90,
        allowed: 80,
        denied: 7,
        escalated: 3,
        top_denying_policies: vec![count("deny-rm-home", 5), count("deny-exfil", 2)],
        shadow_matches: vec![count("monitor-egress", 11)],
    };
    let wire: v1::Analytics = analytics.clone().into();
    assert_eq!(
        sondera_store::Analytics::from(through_bytes(wire)),
        analytics
    );
}
