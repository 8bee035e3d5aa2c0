//! Slicing by action must never change a verdict: for every policy in the
//! shipped packs and the 120-policy synthetic pack, and for requests of every
//! action with randomised fields, the sliced and the whole set agree on the
//! decision, the deciding policies and the shadow matches.

use serde_json::json;
use sondera_model::*;
use sondera_policy::{ActionName, PolicyEngine};

const PACK_120: &str = include_str!("../../../policies/bench/pack-120.cedar");
const SHADOW: &str = r#"
@id("shadow-any") @mode("monitor")
forbid (principal, action, resource) when { context.trajectory.step_count > 1010 };
@id("shadow-shell") @mode("monitor")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "*tool-7*" };
"#;

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_event(rng: &mut Rng, i: u64) -> Event {
    let n = rng.below(130);
    let call_id = format!("c{i}");
    let payload = match rng.below(13) {
        0 => Payload::Prompt {
            role: PromptRole::User,
            content: format!("please phrase {n} now"),
        },
        1 => Payload::Thought {
            content: "thinking".into(),
        },
        2 => Payload::ToolCall {
            call_id,
            tool: format!("tool_{n}"),
            arguments: json!({"token": n}),
        },
        3 => Payload::ToolOutput {
            call_id,
            success: true,
            output: json!({"v": format!("leak-{n}")}),
            error: None,
        },
        4 => Payload::ShellCommand {
            call_id,
            command: format!("run --tool-{n}-flag"),
            working_dir: None,
        },
        5 => Payload::ShellCommandOutput {
            call_id,
            exit_code: 0,
            stdout: format!("BEGIN KEY {n}"),
            stderr: String::new(),
        },
        6 => Payload::WebFetch {
            call_id,
            url: format!("https://host-{n}.example/x"),
            prompt: String::new(),
            method: None,
            body: None,
        },
        7 => Payload::WebFetchOutput {
            call_id,
            url: "https://a".into(),
            code: 400 + (n % 100) as u16,
            result: String::new(),
        },
        8 => {
            let path = if n.is_multiple_of(4) {
                "/home/dev/.ssh/id_rsa".to_string()
            } else {
                format!("/secret-{n}/k")
            };
            Payload::FileOperation {
                call_id,
                operation: FileOperationKind::Read,
                path,
                content: None,
                old_content: None,
            }
        }
        9 => Payload::FileOperation {
            call_id,
            operation: FileOperationKind::Write,
            path: format!("/etc/app-{n}/c"),
            content: Some("x".into()),
            old_content: None,
        },
        10 => {
            let path = if n.is_multiple_of(4) {
                "/home/dev/.bashrc".to_string()
            } else {
                format!("/etc/app-{n}/c")
            };
            Payload::FileOperation {
                call_id,
                operation: FileOperationKind::Edit,
                path,
                content: Some("x".into()),
                old_content: Some("y".into()),
            }
        }
        11 => Payload::FileOperation {
            call_id,
            operation: FileOperationKind::Delete,
            path: format!("/data/{n}"),
            content: None,
            old_content: None,
        },
        _ => Payload::FileOperationResult {
            call_id,
            success: true,
            content: None,
            error: None,
        },
    };
    let mut event = Event::new("t", &Agent::new("root", "google-adk"), payload);
    if rng.below(4) == 0 {
        let name = format!("agent-{}", rng.below(130));
        event = event.with_execution(ExecutionAttribution {
            agent_name: name.clone(),
            agent_path: vec!["root".into(), name],
        });
    }
    event
}

/// Judges `requests` random events sliced and whole; returns how many were
/// blocked and how many were judged without Cedar.
fn check_equivalence(engine: &PolicyEngine, requests: u64) -> (usize, usize) {
    let mut rng = Rng(0x5EED_2026);
    let (mut denied, mut known) = (0, 0);
    let mut seen_actions = std::collections::BTreeSet::new();
    for i in 0..requests {
        let event = random_event(&mut rng, i);
        let state = TrajectoryState {
            step_count: 990 + rng.below(150),
            denial_count: rng.below(30),
            ..Default::default()
        };
        let request = engine.request(&event, &state).unwrap().unwrap();
        seen_actions.insert(request.action);
        let sliced = engine.decide(&request);
        let whole =
            engine.decide_unsliced(&engine.unsliced_request(&event, &state).unwrap().unwrap());
        assert_eq!(sliced, whole, "request {i}: {event:?}");
        denied += usize::from(!sliced.is_allowed());
        known += usize::from(!engine.needs_cedar(&request));
    }
    assert_eq!(seen_actions.len(), ActionName::ALL.len());
    (denied, known)
}

#[test]
fn slicing_agrees_with_the_whole_set_on_shipped_packs() {
    let engine = PolicyEngine::builder()
        .builtin_packs()
        .policy_source("shadow.cedar", SHADOW)
        .build()
        .unwrap();
    let (denied, known) = check_equivalence(&engine, 2_000);
    assert!(denied > 0, "the random requests must exercise forbids too");
    assert_eq!(known, 0, "shadow policies are Cedar's to judge");
}

/// Without shadow policies most requests are judged by the prefilter
/// alone, and the verdicts must still be Cedar's over the whole set.
#[test]
fn verdicts_known_without_cedar_agree_with_the_whole_set() {
    let engine = PolicyEngine::builder()
        .builtin_packs()
        .policy_source("pack-120.cedar", PACK_120)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let (denied, known) = check_equivalence(&engine, 5_000);
    assert!(denied > 500, "only {denied} requests were blocked");
    assert!(
        known > 1_000,
        "only {known} requests were judged without Cedar"
    );
}

#[test]
fn slicing_agrees_with_the_whole_set_on_120_policies() {
    let engine = PolicyEngine::builder()
        .builtin_packs()
        .policy_source("pack-120.cedar", PACK_120)
        .policy_source("shadow.cedar", SHADOW)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let builtin = PolicyEngine::builtin()
        .unwrap()
        .policy_set()
        .policies()
        .count();
    assert_eq!(engine.policy_set().policies().count(), builtin + 120);
    let (denied, _) = check_equivalence(&engine, 5_000);
    assert!(
        denied > 500,
        "only {denied} requests were blocked; the pack must be exercised"
    );
    let total: usize = ActionName::ALL.iter().map(|a| engine.slice_len(*a)).sum();
    assert!(
        total < (builtin + 120) * ActionName::ALL.len() / 3,
        "slices hold {total} policies in all"
    );
}
