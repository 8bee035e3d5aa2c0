//! Escalated tool calls wait for a decision, which is recorded with who
//! made it; standing approvals cover later calls of the same shape, never a
//! deny.

mod support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use adk_agent::SequentialAgent;
use adk_core::{
    Agent as AdkAgent, Tool, ToolConfirmationDecision, ToolConfirmationHandler,
    ToolConfirmationRequest,
};
use async_trait::async_trait;
use serde_json::json;
use sondera_adk::{
    Approval, ApprovalDecision, ApprovalError, ApprovalRequest, Approver, ConfirmationApprover,
    EscalationMode, SonderaHarnessPlugin, SonderaHarnessPluginBuilder, Workflow, Yolo,
};
use sondera_model::{Actor, ActorKind, Decision, Grant, GrantScope, Payload};
use sondera_store::{Grants, MemoryStore, StoredEvent};
use support::*;

#[derive(Default)]
struct Person {
    answers: Mutex<VecDeque<Approval>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Person {
    fn answering(answers: &[Approval]) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.iter().copied().collect()),
            asked: Mutex::default(),
        })
    }

    fn asked(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

#[async_trait]
impl Approver for Person {
    async fn decide(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, ApprovalError> {
        self.asked.lock().unwrap().push(request.clone());
        let approval = self
            .answers
            .lock()
            .unwrap()
            .pop_front()
            .ok_or_else(|| ApprovalError("the person went home".into()))?;
        Ok(ApprovalDecision {
            approval,
            decided_by: Actor::human("ana-approver"),
        })
    }
}

/// The command each message makes the model run.
fn command(text: &str) -> Option<&'static str> {
    Some(match text {
        "push" => "git push --force origin main",
        "push dev" => "git push --force origin dev",
        "wipe" => "rm -rf ~",
        "test" => "cargo test",
        _ => return None,
    })
}

fn fixture_over(
    store: Arc<MemoryStore>,
    configure: impl FnOnce(SonderaHarnessPluginBuilder) -> SonderaHarnessPluginBuilder,
) -> (Fixture, Arc<RecordingTool>) {
    shell_agent(store, configure, |text| match command(text) {
        Some(command) => vec![(Some("call-1"), "run_shell", json!({ "command": command }))],
        None => vec![],
    })
}

fn fixture(
    configure: impl FnOnce(SonderaHarnessPluginBuilder) -> SonderaHarnessPluginBuilder,
) -> (Fixture, Arc<RecordingTool>) {
    fixture_over(Arc::new(MemoryStore::new()), configure)
}

/// The recorded decisions on escalations: (decision, actor, reason).
fn decisions(events: &[StoredEvent]) -> Vec<(Decision, Actor, String)> {
    events
        .iter()
        .filter_map(|e| match &e.event.payload {
            Payload::Adjudicated(a) => Some((
                a.decision,
                e.event.actor.clone(),
                a.reason.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_approved_escalation_runs_once_and_records_the_person() {
    let person = Person::answering(&[Approval::Once]);
    let (fixture, shell) = fixture({
        let person = person.clone();
        move |b| b.approver(person)
    });
    let turn = fixture.turn("ana", "s1", "push").await;
    assert!(turn.errors.is_empty(), "{turn:?}");
    assert_eq!(shell.runs(), 1);

    let asked = person.asked.lock().unwrap()[0].clone();
    assert_eq!(asked.tool, "run_shell");
    assert_eq!(asked.function_call_id.as_deref(), Some("call-1"));
    assert!(
        asked.question().contains("destructive-force-push"),
        "{}",
        asked.question()
    );
    assert!(asked.shape.is_some());

    let events = fixture.trajectory("ana", "s1").await;
    let recorded = decisions(&events);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].0, Decision::Allow);
    assert_eq!(recorded[0].1.kind, ActorKind::Human);
    assert_eq!(recorded[0].1.id, "ana-approver");
    assert!(recorded[0].2.contains("approved once"), "{recorded:?}");
    let decision = events
        .iter()
        .find(|e| matches!(e.event.payload, Payload::Adjudicated(_)))
        .unwrap();
    assert_eq!(decision.event.provider_call_id.as_deref(), Some("call-1"));

    // Once means once.
    fixture.turn("ana", "s1", "push").await;
    assert_eq!(person.asked(), 2);
}

#[tokio::test]
async fn a_refused_escalation_does_not_run() {
    let person = Person::answering(&[Approval::Deny]);
    let (fixture, shell) = fixture({
        let person = person.clone();
        move |b| b.approver(person)
    });
    let turn = fixture.turn("ana", "s1", "push").await;
    assert_eq!(shell.runs(), 0);
    let error = turn.result("run_shell")["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.starts_with("Sondera Harness blocked this step: denied by ana-approver"),
        "{error}"
    );
    assert!(!error.contains("requires approval"), "{error}");
    let recorded = decisions(&fixture.trajectory("ana", "s1").await);
    assert_eq!(recorded[0].0, Decision::Deny);
    assert_eq!(recorded[0].1.id, "ana-approver");
}

#[tokio::test]
async fn unattended_runs_deny_escalations_and_allow_and_log_lets_them_through() {
    let (unattended, shell) = fixture(|b| b);
    unattended.turn("ana", "s1", "push").await;
    assert_eq!(shell.runs(), 0);
    let recorded = decisions(&unattended.trajectory("ana", "s1").await);
    assert_eq!(recorded[0].0, Decision::Deny);
    assert_eq!(recorded[0].1.kind, ActorKind::System);
    assert!(recorded[0].2.contains("nobody is asked"), "{recorded:?}");

    let (logged, shell) = fixture(|b| b.escalation(EscalationMode::AllowAndLog));
    logged.turn("ana", "s1", "push").await;
    assert_eq!(shell.runs(), 1);
    let recorded = decisions(&logged.trajectory("ana", "s1").await);
    assert_eq!(recorded[0].0, Decision::Allow);
    assert!(recorded[0].2.contains("without asking"), "{recorded:?}");
}

#[tokio::test]
async fn a_session_approval_covers_the_same_shape_in_that_session_only() {
    let person = Person::answering(&[Approval::Session, Approval::Once]);
    let (fixture, shell) = fixture({
        let person = person.clone();
        move |b| b.approver(person)
    });
    fixture.turn("ana", "s1", "push").await;
    fixture.turn("ana", "s1", "push dev").await;
    assert_eq!((shell.runs(), person.asked()), (2, 1));
    let recorded = decisions(&fixture.trajectory("ana", "s1").await);
    assert!(
        recorded[1]
            .2
            .contains("covered by a standing approval (session)"),
        "{recorded:?}"
    );
    assert_eq!(recorded[1].1.id, "ana-approver");

    fixture.turn("ana", "s2", "push").await;
    assert_eq!((shell.runs(), person.asked()), (3, 2));
}

#[tokio::test]
async fn an_always_approval_outlives_the_session_and_the_process() {
    let store = Arc::new(MemoryStore::new());
    let person = Person::answering(&[Approval::Always]);
    let (fixture, shell) = fixture_over(store.clone(), {
        let person = person.clone();
        move |b| b.approver(person)
    });
    fixture.turn("ana", "s1", "push").await;
    fixture.turn("bo", "s2", "push dev").await;
    assert_eq!((shell.runs(), person.asked()), (2, 1));
    fixture.sondera.close().await.unwrap();

    let nobody = Person::answering(&[]);
    let (restarted, shell) = fixture_over(store.clone(), {
        let nobody = nobody.clone();
        move |b| b.approver(nobody)
    });
    let turn = restarted.turn("cy", "s3", "push").await;
    assert!(turn.errors.is_empty(), "{turn:?}");
    assert_eq!((shell.runs(), nobody.asked()), (1, 0));
    let grants = store
        .grants(&sondera_store::TenantId::default(), "coder")
        .await
        .unwrap();
    assert_eq!(grants.len(), 1);
    assert_eq!(grants[0].scope, GrantScope::Always);
}

#[tokio::test]
async fn no_approval_covers_a_deny() {
    let store = Arc::new(MemoryStore::new());
    let wipe = Payload::ShellCommand {
        call_id: "x".into(),
        command: "rm -rf ~".into(),
        working_dir: None,
    };
    let shape = sondera_guard::action_shape(&wipe).unwrap();
    let grant = Grant::new(shape, GrantScope::Always, Actor::human("careless"));
    store
        .put_grant(&sondera_store::TenantId::default(), "coder", &grant)
        .await
        .unwrap();

    let (fixture, shell) = fixture_over(store, |b| b.approver(Yolo));
    let turn = fixture.turn("ana", "s1", "wipe").await;
    assert_eq!(shell.runs(), 0);
    assert!(
        turn.result("run_shell")["error"]
            .as_str()
            .unwrap()
            .contains("blocked")
    );
    assert!(decisions(&fixture.trajectory("ana", "s1").await).is_empty());
}

#[tokio::test]
async fn yolo_approves_escalations_and_nothing_else() {
    let (fixture, shell) = fixture(|b| b.approver(Yolo));
    fixture.turn("ana", "s1", "push").await;
    fixture.turn("ana", "s1", "wipe").await;
    assert_eq!(shell.runs(), 1);
    let recorded = decisions(&fixture.trajectory("ana", "s1").await);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].1, Actor::system("sondera-yolo"));
}

#[derive(Debug)]
struct Confirms(
    ToolConfirmationDecision,
    Mutex<Vec<ToolConfirmationRequest>>,
);

#[async_trait]
impl ToolConfirmationHandler for Confirms {
    async fn decide(
        &self,
        request: &ToolConfirmationRequest,
    ) -> adk_core::Result<ToolConfirmationDecision> {
        self.1.lock().unwrap().push(request.clone());
        Ok(self.0)
    }
}

#[tokio::test]
async fn adk_confirmation_handlers_decide_escalations() {
    let handler = Arc::new(Confirms(
        ToolConfirmationDecision::Approve,
        Mutex::default(),
    ));
    let approver = ConfirmationApprover::new(handler.clone()).decided_by("ops-on-call");
    let (fixture, shell) = fixture(move |b| b.approver(approver));
    fixture.turn("ana", "s1", "push").await;
    assert_eq!(shell.runs(), 1);
    let seen = handler.1.lock().unwrap()[0].clone();
    assert_eq!(seen.tool_name, "run_shell");
    assert_eq!(seen.function_call_id.as_deref(), Some("call-1"));
    assert_eq!(seen.args["command"], "git push --force origin main");
    let recorded = decisions(&fixture.trajectory("ana", "s1").await);
    assert_eq!(recorded[0].1, Actor::human("ops-on-call"));
}

#[tokio::test]
async fn an_approver_that_fails_blocks_the_call() {
    let nobody = Person::answering(&[]);
    let (fixture, shell) = fixture(move |b| b.approver(nobody));
    let turn = fixture.turn("ana", "s1", "push").await;
    assert_eq!(shell.runs(), 0);
    assert!(
        format!("{turn:?}").contains("asking for approval failed"),
        "{turn:?}"
    );
    let turn = fixture.turn("ana", "s1", "test").await;
    assert_eq!(shell.runs(), 1, "{turn:?}");
}

/// adk-rust settles an escalation with the approver inline, where the step
/// runs: a delegated agent waits for the person and goes on with the answer,
/// nothing run again.
async fn delegated_escalation_reaches_the_person(
    build: impl FnOnce(&SonderaHarnessPlugin, Arc<dyn Tool>) -> Arc<dyn AdkAgent> + Send + 'static,
    agent: &str,
    path: &[&str],
) {
    let person = Person::answering(&[Approval::Once]);
    let shell = RecordingTool::new("run_shell", "command", json!({"stdout": "ok"}));
    let tool: Arc<dyn Tool> = shell.clone();
    let approver = person.clone();
    let fixture = Fixture::new(
        move |b| b.approver(approver),
        move |sondera| build(sondera, tool),
    );
    let turn = fixture.turn("ana", "s1", "ship it").await;
    assert!(turn.errors.is_empty(), "{turn:?}");
    assert_eq!(shell.runs(), 1);
    let asked = person.asked.lock().unwrap()[0].clone();
    assert_eq!(asked.agent, agent);
    let recorded = decisions(&fixture.trajectory("ana", "s1").await);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert_eq!(recorded[0].0, Decision::Allow);
    let events = fixture.trajectory("ana", "s1").await;
    let command = events
        .iter()
        .find(|e| matches!(e.event.payload, Payload::ShellCommand { .. }))
        .and_then(|e| e.event.execution.clone())
        .unwrap();
    assert_eq!(command.agent_path, path);
}

#[tokio::test]
async fn an_escalation_after_a_transfer_reaches_the_person() {
    delegated_escalation_reaches_the_person(
        |sondera, tool| {
            let release = llm(
                sondera,
                "release",
                ScriptedModel::runs_once("d-1", "git push --force origin main", "pushed"),
                vec![tool],
            );
            let lead = ScriptedModel::transfers_to("release");
            sondera
                .llm_agent("lead")
                .model(lead)
                .sub_agent(release)
                .build()
                .unwrap()
        },
        "release",
        &["lead", "release"],
    )
    .await;
}

#[tokio::test]
async fn an_escalation_inside_a_sequential_workflow_reaches_the_person() {
    delegated_escalation_reaches_the_person(
        |sondera, tool| {
            let build = llm(sondera, "build", ScriptedModel::planned(|_| vec![]), vec![]);
            let publish = llm(
                sondera,
                "publish",
                ScriptedModel::runs_once("d-1", "git push --force origin main", "published"),
                vec![tool],
            );
            sondera.workflow(
                Arc::new(SequentialAgent::new("pipeline", vec![build, publish])),
                Workflow::Sequential,
            )
        },
        "publish",
        &["pipeline", "publish"],
    )
    .await;
}
