//! Replaying recorded trajectories under a candidate policy set.

use std::sync::Arc;

use serde_json::json;
use sondera_harness::Adjudicator;
use sondera_harness::replay::{ReplayScope, replay};
use sondera_model::*;
use sondera_policy::{PolicyEngine, Workspace};
use sondera_store::*;

fn workspace() -> Workspace {
    Workspace::new("/workspace/project", "/home/dev")
}

fn builtin() -> PolicyEngine {
    PolicyEngine::builder()
        .builtin_packs()
        .workspace(workspace())
        .build()
        .unwrap()
}

fn with_extra(policies: &str) -> PolicyEngine {
    PolicyEngine::builder()
        .builtin_packs()
        .policy_source("candidate.cedar", policies)
        .workspace(workspace())
        .build()
        .unwrap()
}

const NO_CURL: &str = r#"
@id("no-curl") @description("No curl") @severity("high")
forbid (principal, action == Sondera::Action::"ShellCommand", resource)
when { context.shell.programs.contains("curl") };
"#;

const SECOND_DENIAL_STOPS: &str = r#"
@id("one-strike") @description("One denial ends the trajectory") @severity("high")
forbid (principal, action in Sondera::Action::"ToolUse", resource)
when { context.trajectory.denial_count >= 1 };
"#;

async fn record(adjudicator: &Adjudicator, trajectory: &str, commands: &[&str]) {
    let agent = Agent::new("coder", "google-adk");
    let event = |payload| Event::new(trajectory, &agent, payload);
    adjudicator
        .adjudicate(&event(Payload::Started {
            agent: agent.clone(),
            task: None,
            session_id: None,
        }))
        .await
        .unwrap();
    for (n, command) in commands.iter().enumerate() {
        let call = sondera_harness::classify_tool_call(
            &format!("c{n}"),
            "bash",
            &json!({ "command": command }),
        );
        adjudicator.adjudicate(&event(call)).await.unwrap();
    }
}

async fn recorded_store() -> Arc<dyn TrajectoryStore> {
    let store: Arc<dyn TrajectoryStore> = Arc::new(MemoryStore::new());
    let adjudicator = Adjudicator::new(builtin(), store.clone());
    record(
        &adjudicator,
        "t-1",
        &["ls", "curl -s https://docs.rs", "rm -rf ~", "cargo build"],
    )
    .await;
    record(&adjudicator, "t-2", &["cargo test", "git status"]).await;
    store
}

#[tokio::test]
async fn replay_reports_exactly_the_decisions_a_candidate_changes() {
    let store = recorded_store().await;
    let report = replay(
        store.as_ref(),
        &with_extra(NO_CURL),
        &ReplayScope::default(),
        |_| {},
    )
    .await
    .unwrap();
    assert_eq!((report.trajectories, report.events), (2, 6));
    assert_eq!(report.changed.len(), 1, "{:?}", report.changed);
    let change = &report.changed[0];
    assert_eq!(
        (
            change.trajectory_id.as_str(),
            change.seq,
            change.kind.as_str()
        ),
        ("t-1", 2, "shell_command")
    );
    assert_eq!(
        (change.before, change.after),
        (Decision::Allow, Decision::Deny)
    );
    assert_eq!(change.before_policies, ["base-default-permit"]);
    assert_eq!(change.after_policies, ["no-curl"]);

    let same = replay(store.as_ref(), &builtin(), &ReplayScope::default(), |_| {})
        .await
        .unwrap();
    assert!(
        same.changed.is_empty(),
        "the policies in force change nothing"
    );
}

#[tokio::test]
async fn replay_carries_state_under_the_candidates_own_decisions() {
    let store = recorded_store().await;
    let report = replay(
        store.as_ref(),
        &with_extra(SECOND_DENIAL_STOPS),
        &ReplayScope::default(),
        |_| {},
    )
    .await
    .unwrap();
    // `rm -rf ~` was denied as before; the step after it now meets a
    // denial budget the recorded policies did not have.
    let flipped: Vec<(&str, u64)> = report
        .changed
        .iter()
        .map(|c| (c.trajectory_id.as_str(), c.seq))
        .collect();
    assert_eq!(flipped, [("t-1", 4)]);
    assert_eq!(report.count(Decision::Allow, Decision::Deny), 1);
}

#[tokio::test]
async fn replay_filters_and_writes_nothing() {
    let store = recorded_store().await;
    let scope = ReplayScope {
        filter: TrajectoryFilter {
            agent_id: Some("someone-else".into()),
            ..TrajectoryFilter::default()
        },
        since: None,
    };
    let none = replay(store.as_ref(), &with_extra(NO_CURL), &scope, |_| {})
        .await
        .unwrap();
    assert_eq!(none.trajectories, 0);
    let future = ReplayScope {
        since: Some(chrono::Utc::now() + chrono::Duration::hours(1)),
        ..ReplayScope::default()
    };
    let later = replay(store.as_ref(), &with_extra(NO_CURL), &future, |_| {})
        .await
        .unwrap();
    assert_eq!(later.trajectories, 0);

    let before = store
        .trajectory_with_events(&sondera_store::TenantId::default(), "t-1")
        .await
        .unwrap()
        .unwrap();
    let mut seen = Vec::new();
    replay(
        store.as_ref(),
        &with_extra(NO_CURL),
        &ReplayScope::default(),
        |n| seen.push(n),
    )
    .await
    .unwrap();
    let after = store
        .trajectory_with_events(&sondera_store::TenantId::default(), "t-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(before, after, "replay writes nothing");
    assert_eq!(seen.len(), 2, "progress after each trajectory");
    assert_eq!(seen.last(), Some(&6));
}
