//! An agent judged by a server puts its escalated tool calls to the
//! server's operators (`EscalationMode::Operator`): the call waits, runs
//! when an operator approves it and is blocked when one denies it.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sondera_adk::EscalationMode;
use sondera_harness::{RemoteConfig, RemoteHarness};
use sondera_model::{Approval, Decision, Payload};
use sondera_policy::PolicyEngine;
use sondera_server::{Caller, Governance, Role, Server};
use sondera_store::{ApprovalFilter, ApprovalStatus, MemoryStore, PageRequest, TenantId};
use support::*;

const ESCALATING: &str = r#"
@id("infra-apply") @description("Applying infrastructure changes needs an operator") @escalate
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "terraform apply*" };
"#;

struct Served {
    governance: Arc<Governance>,
    grpc: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

/// A loopback server without tokens over `store`: every caller is the
/// default tenant's operator, so the test decides as one.
async fn serve(store: Arc<MemoryStore>) -> Served {
    let loader = Arc::new(|| {
        PolicyEngine::builder()
            .builtin_packs()
            .policy_source("ops.cedar", ESCALATING)
            .build()
    });
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let server = Server::builder(store, loader)
        .grpc_addr(any)
        .http_addr(any)
        .bind()
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = Served {
        governance: server.governance().clone(),
        grpc: server.grpc_addr(),
        _stop: stop,
    };
    tokio::spawn(server.serve(async {
        let _ = stopped.await;
    }));
    served
}

fn operator() -> Caller {
    Caller {
        tenant: TenantId::default(),
        role: Role::Operator,
        name: "ana".into(),
    }
}

/// Decides the first approval that appears, as `approval`.
async fn decide_next(governance: &Governance, approval: Approval) {
    let pending = ApprovalFilter {
        status: Some(ApprovalStatus::Pending),
        ..Default::default()
    };
    for _ in 0..400 {
        let listed = governance
            .list_approvals(&operator(), pending.clone(), &PageRequest::first(1))
            .await
            .unwrap();
        if let Some(first) = listed.items.first() {
            let reason = Some(format!("{approval} from the console"));
            governance
                .decide_approval(&operator(), &first.id, approval, reason)
                .await
                .unwrap();
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no approval was asked for");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalated_calls_wait_for_the_servers_operators() {
    let store = Arc::new(MemoryStore::new());
    let served = serve(store.clone()).await;
    let config =
        RemoteConfig::resolve_from(Some(served.grpc.to_string()), None, |_| None, None).unwrap();
    let harness = RemoteHarness::new(&config, None).unwrap();
    let (fixture, shell) =
        shell_agent_judged_by(harness, store, |b| b.escalation(EscalationMode::Operator));

    let (turn, ()) = tokio::join!(
        fixture.turn("ana", "s1", "apply"),
        decide_next(&served.governance, Approval::Once)
    );
    assert!(turn.errors.is_empty(), "{turn:?}");
    assert_eq!(shell.runs(), 1, "the approved call ran");
    let events = fixture.trajectory("ana", "s1").await;
    let decided: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.event.payload {
            Payload::Adjudicated(verdict) => Some((verdict.decision, e.event.actor.id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        vec![(Decision::Allow, "ana".to_string())],
        "the server recorded the operator"
    );

    let (turn, ()) = tokio::join!(
        fixture.turn("ana", "s2", "apply"),
        decide_next(&served.governance, Approval::Deny)
    );
    assert_eq!(shell.runs(), 1, "the denied call did not run");
    let refused = turn.result("run_shell").to_string();
    assert!(refused.contains("denied by operator ana"), "{refused}");
}

fn shell_agent_judged_by(
    harness: RemoteHarness,
    store: Arc<MemoryStore>,
    configure: impl FnOnce(
        sondera_adk::SonderaHarnessPluginBuilder,
    ) -> sondera_adk::SonderaHarnessPluginBuilder,
) -> (Fixture, Arc<RecordingTool>) {
    let shell = RecordingTool::new(
        "run_shell",
        "command",
        json!({"stdout": "ok", "exit_code": 0}),
    );
    let tool = shell.clone();
    let plan = |text: &str| match text {
        "apply" => vec![(
            Some("call-1"),
            "run_shell",
            json!({ "command": "terraform apply" }),
        )],
        _ => vec![],
    };
    let fixture = Fixture::judged_by(
        harness,
        store,
        Switch::default(),
        configure,
        move |sondera| llm(sondera, "coder", ScriptedModel::planned(plan), vec![tool]),
    );
    (fixture, shell)
}
