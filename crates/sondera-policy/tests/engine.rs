//! The policy engine: the Cedar requests it builds from events and facts,
//! and the verdicts the built-in and test policies reach.

use cedar_policy::{Entities, Request};
use serde_json::json;
use sondera_model::*;
use sondera_policy::{ActionName, EvaluationError, PolicyEngine, PolicyError};

fn agent() -> Agent {
    Agent::new("root-agent", "google-adk").with_platform("rust")
}

fn event(payload: Payload) -> Event {
    Event::new("traj-1", &agent(), payload)
}

fn shell(command: &str) -> Event {
    event(Payload::ShellCommand {
        call_id: "c1".into(),
        command: command.into(),
        working_dir: None,
    })
}

fn tool(name: &str, arguments: serde_json::Value) -> Event {
    event(Payload::ToolCall {
        call_id: "c1".into(),
        tool: name.into(),
        arguments,
    })
}

fn engine(policies: &str) -> PolicyEngine {
    PolicyEngine::builder()
        .builtin_packs()
        .policy_source("test.cedar", policies)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn load_errors(policies: &str) -> Vec<PolicyError> {
    PolicyEngine::builder()
        .builtin_packs()
        .policy_source("test.cedar", policies)
        .build()
        .expect_err("policies should be rejected")
        .0
}

fn judge(engine: &PolicyEngine, event: &Event) -> Adjudicated {
    engine
        .evaluate(event, &TrajectoryState::default())
        .unwrap()
        .expect("governed payload")
}

const RM_FORBID: &str = r#"
@id("no-rm") @description("No rm") @severity("high") @steer("Use trash instead")
forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.command like "rm *" };
"#;

#[test]
fn builtin_packs_load_and_permit_ordinary_steps() {
    let engine = PolicyEngine::builtin().unwrap();
    assert!(engine.policy("base-default-permit").is_some());
    let verdict = judge(&engine, &shell("cargo test"));
    assert_eq!(verdict.decision, Decision::Allow);
    assert_eq!(
        verdict.policy_ids().collect::<Vec<_>>(),
        ["base-default-permit"]
    );
}

/// A set of the built-in packs alone leaves composing its schema until it
/// is asked for, and then has the schema a checked set composes at load.
#[test]
fn the_builtin_packs_alone_compose_their_schema_when_asked() {
    let later = PolicyEngine::builtin().unwrap();
    let checked = PolicyEngine::builder()
        .builtin_packs()
        .lint_builtin_packs()
        .build()
        .unwrap();
    let shape = |engine: &PolicyEngine| {
        let schema = engine.schema().unwrap();
        let mut actions: Vec<String> = schema.actions().map(ToString::to_string).collect();
        let mut types: Vec<String> = schema.entity_types().map(ToString::to_string).collect();
        actions.sort();
        types.sort();
        (actions, types)
    };
    assert_eq!(shape(&later), shape(&checked));
    assert!(shape(&later).0.len() > 10);
}

#[test]
fn lifecycle_and_state_events_are_not_policy_governed() {
    let engine = PolicyEngine::builtin().unwrap();
    for payload in [
        Payload::Completed { summary: None },
        Payload::Snapshot {
            working_dir: None,
            open_files: vec![],
            git_branch: None,
            variables: Default::default(),
        },
    ] {
        assert_eq!(
            engine
                .evaluate(&event(payload), &TrajectoryState::default())
                .unwrap(),
            None
        );
    }
}

#[test]
fn forbid_denies_and_names_the_policy() {
    let engine = engine(RM_FORBID);
    let verdict = judge(&engine, &shell("rm notes.txt"));
    assert_eq!(verdict.decision, Decision::Deny);
    assert_eq!(verdict.reason.as_deref(), Some("forbidden by no-rm"));
    let policy = &verdict.policies[0];
    assert_eq!(
        (policy.policy_id.as_str(), policy.description.as_deref()),
        ("no-rm", Some("No rm"))
    );
    assert_eq!(
        policy.annotations.get("severity").map(String::as_str),
        Some("high")
    );
    assert_eq!(verdict.steering, None, "govern mode gives no steering");
    assert!(verdict.deny_message().contains("policy `no-rm`: No rm"));
}

#[test]
fn hard_forbid_beats_escalating_forbid() {
    let escalating = r#"
@id("ask-rm") @escalate("security-team")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "rm *" };
"#;
    let only_escalating = judge(&engine(escalating), &shell("rm a"));
    assert_eq!(only_escalating.decision, Decision::Escalate);
    assert_eq!(
        only_escalating.reason.as_deref(),
        Some("escalated by ask-rm")
    );
    assert!(only_escalating.policies[0].escalate);
    assert_eq!(
        only_escalating.policies[0].escalate_arg.as_deref(),
        Some("security-team")
    );

    let both = judge(
        &engine(&format!("{escalating}\n{RM_FORBID}")),
        &shell("rm a"),
    );
    assert_eq!(both.decision, Decision::Deny);
    assert_eq!(both.policy_ids().collect::<Vec<_>>(), ["no-rm"]);
}

#[test]
fn no_matching_permit_denies() {
    let engine = PolicyEngine::builder()
        .policy_source("only.cedar", r#"@id("prompts-only") permit (principal, action == Sondera::Action::"Prompt", resource);"#)
        .build()
        .unwrap();
    let verdict = judge(&engine, &shell("ls"));
    assert_eq!(verdict.decision, Decision::Deny);
    assert_eq!(
        verdict.reason.as_deref(),
        Some("no permit policy matched this step")
    );
    assert!(verdict.policies.is_empty());
}

#[test]
fn a_forbid_that_fails_to_evaluate_denies() {
    let engine = engine(
        r#"
@id("overflowing")
forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.trajectory.step_count + 9223372036854775807 > 0 };
"#,
    );
    let verdict = judge(&engine, &shell("ls"));
    assert_eq!(verdict.decision, Decision::Deny);
    assert!(
        verdict
            .reason
            .as_deref()
            .unwrap()
            .contains("policy evaluation failed in overflowing"),
        "{verdict:?}"
    );
}

#[test]
fn monitor_mode_allows_but_keeps_the_would_be_decision() {
    let engine = engine(RM_FORBID).with_mode(Mode::Monitor);
    let verdict = judge(&engine, &shell("rm a"));
    assert_eq!(
        (verdict.decision, verdict.would_be, verdict.mode),
        (Decision::Allow, Some(Decision::Deny), Mode::Monitor)
    );
    assert_eq!(verdict.policy_ids().collect::<Vec<_>>(), ["no-rm"]);
}

#[test]
fn steer_mode_carries_steering_text() {
    let verdict = judge(&engine(RM_FORBID).with_mode(Mode::Steer), &shell("rm a"));
    assert_eq!(verdict.decision, Decision::Deny);
    assert_eq!(verdict.steering.as_deref(), Some("Use trash instead"));
}

#[test]
fn shadow_policies_report_matches_without_deciding() {
    let engine = engine(
        r#"
@id("shadow-curl") @mode("monitor")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "curl *" };
"#,
    );
    assert!(
        !engine
            .policy_set()
            .policies()
            .any(|p| p.id().to_string() == "shadow-curl")
    );
    let verdict = judge(&engine, &shell("curl https://example.com"));
    assert_eq!(verdict.decision, Decision::Allow);
    assert_eq!(
        verdict
            .shadow_matches
            .iter()
            .map(|p| p.policy_id.as_str())
            .collect::<Vec<_>>(),
        ["shadow-curl"]
    );
    assert!(judge(&engine, &shell("ls")).shadow_matches.is_empty());
}

#[test]
fn execution_attribution_and_trajectory_state_reach_the_context() {
    let engine = engine(
        r#"
@id("billing-no-shell")
forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.execution.agent_name == "billing" && context.execution.depth == 1 && context.execution.agent_path == "root-agent/billing" };
@id("budget")
forbid (principal, action in Sondera::Action::"ToolUse", resource) when { context.trajectory.step_count > 3 };
"#,
    );
    let sub = shell("ls").with_execution(ExecutionAttribution {
        agent_name: "billing".into(),
        agent_path: vec!["root-agent".into(), "billing".into()],
    });
    assert_eq!(
        judge(&engine, &sub).policy_ids().collect::<Vec<_>>(),
        ["billing-no-shell"]
    );
    assert_eq!(judge(&engine, &shell("ls")).decision, Decision::Allow);
    let state = TrajectoryState {
        step_count: 3,
        ..Default::default()
    };
    let verdict = engine.evaluate(&shell("ls"), &state).unwrap().unwrap();
    assert_eq!(verdict.policy_ids().collect::<Vec<_>>(), ["budget"]);
}

#[test]
fn outputs_are_judged_with_the_call_they_answer() {
    let engine = engine(
        r#"
@id("no-secret-output")
forbid (principal, action == Sondera::Action::"FileOperationResult", resource)
when { context.path like "*.pem" && context.operation == "read" };
"#,
    );
    let mut state = TrajectoryState::default();
    state.record(
        &Payload::FileOperation {
            call_id: "f1".into(),
            operation: FileOperationKind::Read,
            path: "/w/key.pem".into(),
            content: None,
            old_content: None,
        },
        Decision::Allow,
    );
    let result = event(Payload::FileOperationResult {
        call_id: "f1".into(),
        success: true,
        content: Some("x".into()),
        error: None,
    });
    let verdict = engine.evaluate(&result, &state).unwrap().unwrap();
    assert_eq!(
        verdict.policy_ids().collect::<Vec<_>>(),
        ["no-secret-output"]
    );
    let unrelated = event(Payload::FileOperationResult {
        call_id: "other".into(),
        success: true,
        content: None,
        error: None,
    });
    assert_eq!(
        engine
            .evaluate(&unrelated, &state)
            .unwrap()
            .unwrap()
            .decision,
        Decision::Allow
    );
}

const TOOL_ARGS_FRAGMENT: &str = r#"
namespace Sondera {
  type ToolArgs = { "transfer_funds"?: { amount: Long, to: String, memo?: String } };
}
"#;

const BIG_TRANSFER: &str = r#"
@id("big-transfer") @escalate
forbid (principal, action == Sondera::Action::"PreToolUse", resource == Sondera::Tool::"transfer_funds")
when { context.args has transfer_funds && context.args.transfer_funds.amount > 10000 };
"#;

#[test]
fn typed_tool_arguments_from_a_schema_fragment() {
    let engine = PolicyEngine::builder()
        .builtin_packs()
        .schema_source("args.cedarschema", TOOL_ARGS_FRAGMENT)
        .policy_source("money.cedar", BIG_TRANSFER)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let big = judge(
        &engine,
        &tool(
            "transfer_funds",
            json!({"amount": 25000, "to": "acct-9", "note": "extra is dropped"}),
        ),
    );
    assert_eq!(big.decision, Decision::Escalate);
    let small = judge(
        &engine,
        &tool("transfer_funds", json!({"amount": 50, "to": "acct-9"})),
    );
    assert_eq!(small.decision, Decision::Allow);
    let other = judge(&engine, &tool("get_weather", json!({"amount": "many"})));
    assert_eq!(other.decision, Decision::Allow);

    let err = engine
        .evaluate(
            &tool("transfer_funds", json!({"amount": "25000", "to": "x"})),
            &TrajectoryState::default(),
        )
        .unwrap_err();
    match err {
        EvaluationError::Arguments(e) => {
            assert_eq!(
                (e.tool.as_str(), e.path.as_str()),
                ("transfer_funds", "args.transfer_funds.amount")
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn typed_tool_arguments_from_an_agent_card() {
    let card = AgentCard::React {
        model: None,
        system_instruction: String::new(),
        tools: vec![Tool {
            name: "transfer_funds".into(),
            description: String::new(),
            parameters: json!({}),
            parameters_json_schema: Some(
                json!({"type": "object", "properties": {"amount": {"type": "integer"}, "to": {"type": "string"}}, "required": ["amount"]}),
            ),
            response: None,
            response_json_schema: None,
            source: None,
            annotations: None,
        }],
        sub_agents: vec![],
    };
    let engine = PolicyEngine::builder()
        .builtin_packs()
        .agent_card(&card)
        .policy_source("money.cedar", BIG_TRANSFER)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        judge(&engine, &tool("transfer_funds", json!({"amount": 10001}))).decision,
        Decision::Escalate
    );
    assert_eq!(
        judge(&engine, &tool("transfer_funds", json!({"amount": 10000}))).decision,
        Decision::Allow
    );
}

#[test]
fn policies_on_undeclared_arguments_are_rejected_or_flagged() {
    let unguarded = r#"
@id("unguarded")
forbid (principal, action == Sondera::Action::"PreToolUse", resource)
when { context.args.transfer_funds.amount > 10000 };
"#;
    let errors = load_errors(unguarded);
    assert_eq!(errors[0].policy_id.as_deref(), Some("unguarded"));
    assert_eq!(
        (errors[0].file.as_str(), errors[0].line),
        ("test.cedar", 4),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].message.contains("transfer_funds"),
        "{}",
        errors[0]
    );

    // Guarded by `has`, the policy is valid but can never match: a warning.
    let engine = engine(BIG_TRANSFER);
    let warning = engine
        .warnings()
        .iter()
        .find(|w| w.policy_id.as_deref() == Some("big-transfer"));
    assert!(warning.is_some(), "{:?}", engine.warnings());
}

fn all_payloads() -> Vec<Payload> {
    vec![
        Payload::Prompt {
            role: PromptRole::User,
            content: "hi".into(),
        },
        Payload::Thought {
            content: "hmm".into(),
        },
        Payload::ToolCall {
            call_id: "c".into(),
            tool: "t".into(),
            arguments: json!({"a": 1}),
        },
        Payload::ToolOutput {
            call_id: "c".into(),
            success: false,
            output: json!(null),
            error: Some("e".into()),
        },
        Payload::ShellCommand {
            call_id: "c".into(),
            command: "ls".into(),
            working_dir: Some("/w".into()),
        },
        Payload::ShellCommandOutput {
            call_id: "c".into(),
            exit_code: 0,
            stdout: "".into(),
            stderr: "".into(),
        },
        Payload::WebFetch {
            call_id: "c".into(),
            url: "https://a".into(),
            prompt: "".into(),
            method: None,
            body: None,
        },
        Payload::WebFetchOutput {
            call_id: "c".into(),
            url: "https://a".into(),
            code: 200,
            result: "".into(),
        },
        Payload::FileOperation {
            call_id: "c".into(),
            operation: FileOperationKind::Read,
            path: "/a".into(),
            content: None,
            old_content: None,
        },
        Payload::FileOperation {
            call_id: "c".into(),
            operation: FileOperationKind::Write,
            path: "/a".into(),
            content: Some("x".into()),
            old_content: None,
        },
        Payload::FileOperation {
            call_id: "c".into(),
            operation: FileOperationKind::Edit,
            path: "/a".into(),
            content: Some("x".into()),
            old_content: Some("y".into()),
        },
        Payload::FileOperation {
            call_id: "c".into(),
            operation: FileOperationKind::Delete,
            path: "/a".into(),
            content: None,
            old_content: None,
        },
        Payload::FileOperationResult {
            call_id: "c".into(),
            success: true,
            content: Some("x".into()),
            error: None,
        },
        Payload::FileOperationResult {
            call_id: "c".into(),
            success: false,
            content: None,
            error: None,
        },
    ]
}

/// The request builder and the schema must agree for every action, or strict
/// validation would be checking policies against a context that never exists.
#[test]
fn every_request_conforms_to_the_schema() {
    let engine = PolicyEngine::builder()
        .builtin_packs()
        .schema_source("args.cedarschema", TOOL_ARGS_FRAGMENT)
        .build()
        .unwrap();
    let schema = engine.schema().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for payload in all_payloads() {
        let built = engine
            .request(&event(payload), &TrajectoryState::default())
            .unwrap()
            .unwrap();
        seen.insert(built.action);
        let cedar = engine.cedar(&built).unwrap();
        let r = &cedar.request;
        Request::new(
            r.principal().unwrap().clone(),
            r.action().unwrap().clone(),
            r.resource().unwrap().clone(),
            r.context().unwrap().clone(),
            Some(schema),
        )
        .unwrap_or_else(|e| panic!("{:?}: {e}", built.action));
        Entities::from_entities(cedar.entities.iter().cloned(), Some(schema))
            .unwrap_or_else(|e| panic!("{:?}: {e}", built.action));
    }
    assert_eq!(seen.len(), ActionName::ALL.len());
}

#[test]
fn slices_hold_only_policies_whose_action_scope_can_match() {
    let engine = PolicyEngine::builder()
        .policy_source("slices.cedar", format!(r#"
@id("any") permit (principal, action, resource);
@id("tool-use") forbid (principal, action in Sondera::Action::"ToolUse", resource) when {{ context.trajectory.step_count > 10 }};
@id("mutations") forbid (principal, action in Sondera::Action::"FileMutation", resource) when {{ resource.path == "/etc/hosts" }};
@id("list") forbid (principal, action in [Sondera::Action::"Prompt", Sondera::Action::"FileRead"], resource) when {{ context.trajectory.step_count > 10 }};
{RM_FORBID}"#))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        engine.slice_len(ActionName::ShellCommand),
        3,
        "any, tool-use, no-rm"
    );
    assert_eq!(
        engine.slice_len(ActionName::FileWrite),
        3,
        "any, tool-use, mutations"
    );
    assert_eq!(
        engine.slice_len(ActionName::FileRead),
        3,
        "any, tool-use, list"
    );
    assert_eq!(engine.slice_len(ActionName::Prompt), 2, "any, list");
    assert_eq!(engine.slice_len(ActionName::ToolOutput), 1, "any");
}

#[test]
fn credentials_pack_guards_keys_without_blocking_public_ones() {
    let engine = PolicyEngine::builtin().unwrap();
    let file = |operation, path: &str| {
        event(Payload::FileOperation {
            call_id: "f".into(),
            operation,
            path: path.into(),
            content: Some("x".into()),
            old_content: None,
        })
    };
    let cases = [
        (
            FileOperationKind::Read,
            "/home/dev/.ssh/id_ed25519",
            Decision::Deny,
        ),
        (
            FileOperationKind::Read,
            "/home/dev/.ssh/id_ed25519.pub",
            Decision::Allow,
        ),
        (
            FileOperationKind::Read,
            "/home/dev/.aws/credentials",
            Decision::Deny,
        ),
        (FileOperationKind::Read, "/etc/shadow", Decision::Deny),
        (
            FileOperationKind::Write,
            "/home/dev/.ssh/authorized_keys",
            Decision::Deny,
        ),
        (
            FileOperationKind::Edit,
            "/home/dev/.bashrc",
            Decision::Escalate,
        ),
        (
            FileOperationKind::Read,
            "/home/dev/.bashrc",
            Decision::Allow,
        ),
        (
            FileOperationKind::Write,
            "/workspace/project/src/main.rs",
            Decision::Allow,
        ),
    ];
    for (operation, path, expected) in cases {
        assert_eq!(
            judge(&engine, &file(operation, path)).decision,
            expected,
            "{operation:?} {path}"
        );
    }
}

#[test]
fn verdicts_do_not_depend_on_load_order() {
    let a = r#"@id("z-rm") forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "rm *" };"#;
    let b = r#"@id("a-budget") forbid (principal, action in Sondera::Action::"ToolUse", resource) when { context.trajectory.step_count > 0 };"#;
    let forward = PolicyEngine::builder()
        .builtin_packs()
        .policy_source("a.cedar", a)
        .policy_source("b.cedar", b)
        .build()
        .unwrap();
    let backward = PolicyEngine::builder()
        .policy_source("b.cedar", b)
        .policy_source("a.cedar", a)
        .builtin_packs()
        .build()
        .unwrap();
    let state = TrajectoryState {
        step_count: 4,
        denial_count: 1,
        ..Default::default()
    };
    for event in [
        shell("rm -rf x"),
        shell("ls"),
        tool("get_weather", json!({"city": "Porto"})),
    ] {
        let one = forward.evaluate(&event, &state).unwrap();
        let other = backward.evaluate(&event, &state).unwrap();
        assert_eq!(one, other);
        assert_eq!(
            one,
            forward.evaluate(&event, &state).unwrap(),
            "re-evaluation is identical"
        );
    }
    let both = forward
        .evaluate(&shell("rm -rf x"), &state)
        .unwrap()
        .unwrap();
    assert_eq!(
        both.policy_ids().collect::<Vec<_>>(),
        ["a-budget", "z-rm"],
        "deciding policies are listed by id"
    );
}
