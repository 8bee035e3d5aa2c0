//! Recorded hook inputs of every agent (written from each agent's hook
//! documentation, under `tests/hooks/<agent>/`), judged in process by the
//! built-in packs, against the outcome each case expects and the golden
//! answer of both ways in (`<case>.answer`: a command hook's exit status
//! and output, an HTTP hook's body). `SONDERA_UPDATE_GOLDEN=1` rewrites the
//! golden answers; the expected outcomes are never rewritten.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use sondera_harness::Adjudicator;
use sondera_hooks::{CodingAgent, HookJudge, Judged, Outcome};
use sondera_policy::{PolicyEngine, Workspace};
use sondera_store::{MemoryStore, Records, TenantId};

fn adjudicator() -> (Arc<Adjudicator>, Arc<MemoryStore>) {
    let engine = PolicyEngine::builder()
        .builtin_or_directories(Vec::<PathBuf>::new())
        .workspace(Workspace::new("/home/dev/project", "/home/dev"))
        .build()
        .unwrap();
    let store = Arc::new(MemoryStore::new());
    (Arc::new(Adjudicator::new(engine, store.clone())), store)
}

struct Case {
    name: String,
    expect: String,
    event: Option<String>,
    input: Vec<u8>,
    golden: PathBuf,
}

fn cases(agent: CodingAgent) -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hooks")
        .join(agent.name());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let case: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let input = match case.get("raw") {
                Some(raw) => raw.as_str().unwrap().as_bytes().to_vec(),
                None => serde_json::to_vec(&case["input"]).unwrap(),
            };
            Case {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                expect: case["expect"].as_str().unwrap().to_string(),
                event: case
                    .get("event")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                input,
                golden: path.with_extension("answer"),
            }
        })
        .collect()
}

fn outcome_kind(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Proceed => "proceed",
        Outcome::Deny(_) => "deny",
        Outcome::Ask(_) => "ask",
        Outcome::Fail(_) => "fail",
    }
}

fn rendered(judged: &Judged) -> String {
    let command = judged.command();
    let text = format!(
        "exit: {}\nstdout: {}\nstderr: {}\nhttp: {}\n",
        command.exit_code,
        command.stdout.trim_end(),
        command.stderr.trim_end(),
        judged.http()
    );
    without_decision_ids(&text)
}

/// `text` with each decision id (derived from event ids, which are new on
/// every run) replaced by `ID`, after checking it is one.
fn without_decision_ids(text: &str) -> String {
    const MARK: &str = "(decision ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let (before, after) = rest.split_at(at + MARK.len());
        let id = after.get(..32).unwrap_or_default();
        assert!(
            id.len() == 32
                && id.bytes().all(|b| b.is_ascii_hexdigit())
                && after[32..].starts_with(')'),
            "not a decision id: {after}"
        );
        out.push_str(before);
        out.push_str("ID");
        rest = &after[32..];
    }
    out.push_str(rest);
    out
}

/// Judges every case of `agent` in order on one adjudicator (cases of one
/// session see what the earlier ones recorded) and returns the problems.
async fn check(agent: CodingAgent) -> Vec<String> {
    let (adjudicator, _) = adjudicator();
    let judge = HookJudge::new(adjudicator).user(Some("dev".into()));
    let update = std::env::var_os("SONDERA_UPDATE_GOLDEN").is_some();
    let mut problems = Vec::new();
    let all = cases(agent);
    assert!(all.len() >= 10, "{agent} has {} cases", all.len());
    for case in all {
        let judged = judge.judge(agent, case.event.as_deref(), &case.input).await;
        let kind = outcome_kind(&judged.outcome);
        if kind != case.expect {
            problems.push(format!(
                "{agent}/{}: expected {}, got {:?}",
                case.name, case.expect, judged.outcome
            ));
        }
        let answer = rendered(&judged);
        if update {
            std::fs::write(&case.golden, &answer).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&case.golden).unwrap_or_default();
        if golden != answer {
            problems.push(format!(
                "{agent}/{}: answer differs from {}:\n{answer}",
                case.name,
                case.golden.display()
            ));
        }
    }
    problems
}

#[tokio::test]
async fn every_recorded_input_of_every_agent_is_answered_as_expected() {
    let mut problems = Vec::new();
    for agent in CodingAgent::ALL {
        problems.extend(check(agent).await);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What each dialect's answers must never be, whatever the golden files say.
#[tokio::test]
async fn no_refusal_or_failure_is_an_answer_the_agent_reads_as_go_ahead() {
    let (adjudicator, _) = adjudicator();
    let judge = HookJudge::new(adjudicator);
    for agent in CodingAgent::ALL {
        for case in cases(agent) {
            let judged = judge.judge(agent, case.event.as_deref(), &case.input).await;
            let command = judged.command();
            let http = judged.http();
            match (&judged.outcome, judged.gate) {
                (Outcome::Proceed, _) => {
                    assert_ne!(command.exit_code, 2, "{agent}/{}", case.name);
                }
                (_, sondera_hooks::Gate::None) if !matches!(judged.outcome, Outcome::Fail(_)) => {}
                (Outcome::Fail(_), _) if agent != CodingAgent::Copilot => {
                    assert_eq!(command.exit_code, 2, "{agent}/{}", case.name);
                    assert!(!command.stderr.is_empty());
                    assert_ne!(http, serde_json::json!({}), "{agent}/{}", case.name);
                }
                _ => {
                    // Refused in JSON: exit 0 with a decision (Codex refuses with 2).
                    let refused = command.exit_code == 2
                        || (command.exit_code == 0 && !command.stdout.trim().is_empty());
                    assert!(refused, "{agent}/{}: {command:?}", case.name);
                    assert_ne!(http, serde_json::json!({}), "{agent}/{}", case.name);
                    assert!(
                        !http.to_string().contains("\"allow\""),
                        "{agent}/{}",
                        case.name
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn a_session_is_one_trajectory_with_its_agent_working_directory_and_sub_agents() {
    let (adjudicator, store) = adjudicator();
    let judge = HookJudge::new(adjudicator).user(Some("dev".into()));
    for case in cases(CodingAgent::ClaudeCode) {
        judge
            .judge(CodingAgent::ClaudeCode, case.event.as_deref(), &case.input)
            .await;
    }
    let tenant = TenantId::default();
    let detail = store
        .trajectory_with_events(&tenant, "claude-code-cc-session-1")
        .await
        .unwrap()
        .expect("the session is one trajectory");
    assert_eq!(
        detail.summary.status.to_string(),
        "suspended",
        "the session ended and can be resumed"
    );
    let kinds: Vec<&str> = detail
        .events
        .iter()
        .map(|e| e.event.payload.kind())
        .collect();
    assert_eq!(kinds[..2], ["started", "snapshot"]);
    assert_eq!(detail.events[0].event.agent.id, "claude-code@dev");
    let sondera_model::Payload::Snapshot { working_dir, .. } = &detail.events[1].event.payload
    else {
        panic!("a snapshot follows the start");
    };
    assert_eq!(working_dir.as_deref(), Some("/home/dev/project"));
    let sub = detail
        .events
        .iter()
        .find(|e| e.event.execution.is_some())
        .expect("the sub-agent's step is attributed");
    assert_eq!(sub.event.execution.as_ref().unwrap().agent_name, "Explore");
    assert_eq!(sub.event.provider_call_id.as_deref(), Some("toolu_11"));
}
