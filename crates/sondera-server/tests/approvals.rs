//! Escalations decided by an operator through the server, over gRPC and
//! HTTP, on every store: the agent waits, the operator decides, the
//! deadline denies, and nothing is lost to a restart.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use sondera_harness::Harness;
use sondera_harness::remote::Connection;
use sondera_model::{ActorKind, Approval, Decision, Payload};
use sondera_proto::v1;
use sondera_server::Limits;
use sondera_store::ApprovalStatus;
use sondera_store::{ApprovalRecord, ApprovalState, TrajectoryStore};

async fn start_escalating(store: Arc<dyn TrajectoryStore>) -> Running {
    start(builder(store, escalating()).access(two_tenants())).await
}

/// A started trajectory whose `command` was escalated: the scope and the
/// escalated event's id.
async fn escalated(server: &Running, command: &str) -> (sondera_harness::RemoteHarness, String) {
    escalated_through(harness(server.grpc, Some(ACME)), command).await
}

/// `agent`'s trajectory started and `command` escalated in it; the event's id.
async fn escalated_through(
    mut agent: sondera_harness::RemoteHarness,
    command: &str,
) -> (sondera_harness::RemoteHarness, String) {
    agent.initialize(None, Some("s-1".into())).await.unwrap();
    let event = agent.event(shell(command)).unwrap();
    let event_id = event.event_id.clone();
    let verdict = agent.adjudicate(event).await.unwrap();
    assert_eq!(verdict.decision, Decision::Escalate, "{command}");
    (agent, event_id)
}

/// Waits until `operator` sees exactly one pending approval, and returns it.
async fn the_pending_one(operator: &Connection) -> ApprovalRecord {
    for _ in 0..200 {
        let listed = list_pending(operator).await.unwrap();
        if let [only] = listed.as_slice() {
            return only.clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no pending approval appeared");
}

async fn list_pending(operator: &Connection) -> Result<Vec<ApprovalRecord>, tonic::Status> {
    let request = v1::ListApprovalsRequest {
        status: v1::ApprovalStatus::Pending as i32,
        ..Default::default()
    };
    let listed = operator
        .client()
        .list_approvals(operator.request(request))
        .await?
        .into_inner();
    Ok(listed
        .approvals
        .into_iter()
        .map(|a| sondera_proto::approval_from_wire(a, &Default::default()).unwrap())
        .collect())
}

/// The `adjudicated` events the server recorded for `approval`'s outcome.
async fn recorded_outcomes(
    server: &Running,
    approval: &ApprovalRecord,
) -> Vec<sondera_model::Event> {
    let tenant = sondera_store::TenantId::new("acme").unwrap();
    let detail = server
        .governance
        .trajectory(&tenant, &approval.trajectory_id, false)
        .await
        .unwrap();
    detail
        .events
        .into_iter()
        .map(|e| e.event)
        .filter(|e| matches!(e.payload, Payload::Adjudicated(_)))
        .filter(|e| e.causality.causation_id.as_deref() == Some(approval.event_id.as_str()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_decides_what_the_waiting_agent_may_run() {
    for backend in each_store().await {
        let server = start_escalating(backend.store.clone()).await;
        let (agent, event_id) = escalated(&server, "terraform apply -auto-approve").await;
        let operator = connection(server.grpc, Some(ACME_OPS));
        let mut live = operator
            .client()
            .stream_events(operator.request(v1::StreamEventsRequest::default()))
            .await
            .unwrap()
            .into_inner();
        let waiting = tokio::spawn(async move {
            let mut agent = agent;
            let outcome = agent
                .ask_operator(&event_id, Some(Duration::from_secs(60)))
                .await;
            (agent, outcome)
        });
        let pending = the_pending_one(&operator).await;
        assert_eq!(pending.agent_id, "coder", "{}", backend.name);
        assert_eq!(pending.session_id.as_deref(), Some("s-1"));
        assert!(
            matches!(&pending.action, Payload::ShellCommand { command, .. } if command.starts_with("terraform apply"))
        );
        assert_eq!(pending.verdict.policies[0].policy_id, "infra-apply");
        assert_eq!(
            pending.verdict.policies[0].description.as_deref(),
            Some("Applying infrastructure changes needs an operator")
        );
        // Over a shared store the escalated step itself may be announced
        // after this subscription began: the approval follows it.
        let seen = loop {
            let item = live.message().await.unwrap().unwrap();
            if item.approval.is_some() {
                break item;
            }
        };
        assert_eq!(
            seen.approval.map(|a| a.id),
            Some(pending.id.clone()),
            "the stream carries the new approval"
        );

        // Neither the agent's own token nor another tenant's operator can decide it.
        let by_agent = connection(server.grpc, Some(ACME))
            .decide(&pending.id, Approval::Once, None)
            .await
            .unwrap_err();
        assert!(
            by_agent.to_string().contains("PermissionDenied"),
            "{by_agent}"
        );
        let globex = connection(server.grpc, Some(GLOBEX_OPS));
        assert!(list_pending(&globex).await.unwrap().is_empty());
        let by_globex = globex
            .decide(&pending.id, Approval::Always, None)
            .await
            .unwrap_err();
        assert!(by_globex.to_string().contains("NotFound"), "{by_globex}");

        let decided = operator
            .decide(&pending.id, Approval::Session, Some("plan reviewed".into()))
            .await
            .unwrap();
        let (mut agent, outcome) = waiting.await.unwrap();
        let outcome = outcome.unwrap();
        assert_eq!(outcome.state, decided.state);
        let ApprovalState::Decided {
            approval,
            decided_by,
            reason,
            ..
        } = &outcome.state
        else {
            panic!("{:?}", outcome.state);
        };
        assert_eq!(*approval, Approval::Session);
        assert_eq!(
            (decided_by.kind, decided_by.id.as_str()),
            (ActorKind::Human, "ana")
        );
        assert_eq!(reason.as_deref(), Some("plan reviewed"));

        let shape = pending.shape.clone().expect("terraform apply has a shape");
        let granted = agent.granted(&shape).await.unwrap();
        assert!(
            granted.is_some(),
            "a session approval is kept in the agent's scope"
        );

        let again = operator
            .decide(&pending.id, Approval::Deny, None)
            .await
            .unwrap_err();
        assert!(again.to_string().contains("already decided"), "{again}");
        let recorded = recorded_outcomes(&server, &pending).await;
        assert_eq!(
            recorded.len(),
            1,
            "one record of the decision in the trajectory"
        );
        assert_eq!(recorded[0].actor.id, "ana");
        let Payload::Adjudicated(verdict) = &recorded[0].payload else {
            unreachable!()
        };
        assert_eq!(verdict.decision, Decision::Allow);
        let reason = verdict.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("plan reviewed"), "{reason}");
        drop(agent.finalize(None).await);
        server.stop().await;
    }
}

/// A server whose approvals default to `timeout`.
async fn start_with_approval_timeout(
    store: Arc<dyn TrajectoryStore>,
    grpc: Option<std::net::SocketAddr>,
    timeout: Duration,
) -> Running {
    let limits = Limits {
        approval_timeout: timeout,
        ..Limits::default()
    };
    let mut server = builder(store, escalating())
        .access(two_tenants())
        .limits(limits);
    if let Some(addr) = grpc {
        server = server.grpc_addr(addr);
    }
    start(server).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_deciding_in_time_denies_the_step_for_good() {
    for backend in each_store().await {
        let server =
            start_with_approval_timeout(backend.store.clone(), None, Duration::from_secs(1)).await;
        let (mut agent, event_id) = escalated(&server, "terraform apply").await;
        let outcome = agent.ask_operator(&event_id, None).await.unwrap();
        assert!(
            matches!(outcome.state, ApprovalState::Expired { .. }),
            "{}: {:?}",
            backend.name,
            outcome.state
        );
        assert!(!outcome.approved());
        let operator = connection(server.grpc, Some(ACME_OPS));
        let late = operator
            .decide(&outcome.id, Approval::Once, None)
            .await
            .unwrap_err();
        assert!(late.to_string().contains("expired"), "{late}");
        let recorded = recorded_outcomes(&server, &outcome).await;
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].actor.kind, ActorKind::System);
        let Payload::Adjudicated(verdict) = &recorded[0].payload else {
            unreachable!()
        };
        assert_eq!(verdict.decision, Decision::Deny);
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_expires_an_approval_nobody_waits_for() {
    let store: Arc<dyn TrajectoryStore> = Arc::new(sondera_store::MemoryStore::new());
    let server = start_with_approval_timeout(store.clone(), None, Duration::from_secs(1)).await;
    let (agent, event_id) = escalated(&server, "terraform apply").await;
    let request = v1::RequestApprovalRequest {
        trajectory_id: agent.trajectory_id().unwrap().to_string(),
        event_id,
        timeout_seconds: 0,
    };
    let opened = connection(server.grpc, Some(ACME));
    let approval = opened
        .client()
        .request_approval(opened.request(request))
        .await
        .unwrap()
        .into_inner();
    drop(agent);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let tenant = sondera_store::TenantId::new("acme").unwrap();
    let stored = store
        .approval(&tenant, &approval.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.state.status(),
        ApprovalStatus::Expired,
        "the sweeper expired it"
    );
    assert_eq!(recorded_outcomes(&server, &stored).await.len(), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_approval_survives_a_restart_of_the_server() {
    for backend in each_store()
        .await
        .into_iter()
        .filter(|b| b.name != "memory")
    {
        let first = start_escalating(backend.store.clone()).await;
        let grpc = first.grpc;
        let (mut agent, event_id) = escalated(&first, "terraform apply").await;
        let waiting = tokio::spawn(async move {
            let outcome = agent
                .ask_operator(&event_id, Some(Duration::from_secs(60)))
                .await;
            (agent, outcome)
        });
        let pending = the_pending_one(&connection(grpc, Some(ACME_OPS))).await;
        first.stop().await;

        // The same port, a new process's worth of state: only the store remains.
        let second = start_with_approval_timeout(
            backend.store.clone(),
            Some(grpc),
            Duration::from_secs(300),
        )
        .await;
        let operator = connection(grpc, Some(ACME_OPS));
        assert_eq!(
            the_pending_one(&operator).await.id,
            pending.id,
            "{}",
            backend.name
        );
        // Over HTTP too: the new process answers from the store alone.
        let path = format!("/v1/approvals/{}", pending.id);
        let seen = http(second.http, "GET", &path, Some(ACME), None)
            .await
            .json();
        assert_eq!(seen["status"], "pending", "{}", backend.name);
        let decision = format!("{path}/decision");
        let once = r#"{"decision": "once"}"#;
        let decided = http(second.http, "POST", &decision, Some(ACME_OPS), Some(once)).await;
        assert_eq!(decided.status, 200, "{}", decided.body);
        let (_agent, outcome) = waiting.await.unwrap();
        let outcome =
            outcome.unwrap_or_else(|e| panic!("{}: the waiting agent: {e}", backend.name));
        assert!(outcome.approved(), "{}: {:?}", backend.name, outcome.state);
        second.stop().await;
    }
}

/// Decisions fired around the deadline: each approval ends exactly one way,
/// and what the operator was told is what the agent gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_racing_the_deadline_lands_once() {
    for backend in each_store().await {
        let server =
            start_with_approval_timeout(backend.store.clone(), None, Duration::from_secs(1)).await;
        let operator = connection(server.grpc, Some(ACME_OPS));
        let (mut won, mut lost) = (0, 0);
        for offset_ms in [-60i64, -20, -5, 0, 5, 20] {
            let (mut agent, event_id) = escalated(&server, "terraform apply").await;
            let waiting = tokio::spawn(async move { agent.ask_operator(&event_id, None).await });
            let pending = the_pending_one(&operator).await;
            let at = pending.expires_at + chrono::Duration::milliseconds(offset_ms);
            let until = (at - chrono::Utc::now()).to_std().unwrap_or_default();
            tokio::time::sleep(until).await;
            let decided = decide_by_turns(&server, &operator, &pending, offset_ms).await;
            let outcome = waiting.await.unwrap().unwrap();
            match decided {
                Ok(decided) => {
                    won += 1;
                    assert_eq!(outcome.state, decided.state, "{}", backend.name);
                    assert!(outcome.approved());
                }
                Err(e) => {
                    lost += 1;
                    assert!(e.contains("expired"), "{e}");
                    assert!(matches!(outcome.state, ApprovalState::Expired { .. }));
                }
            }
            assert_eq!(recorded_outcomes(&server, &outcome).await.len(), 1);
        }
        assert!(
            won >= 1 && lost >= 1,
            "{}: won {won}, lost {lost}",
            backend.name
        );
        server.stop().await;
    }
}

/// Decides `pending` once, over gRPC or HTTP by turns, with what the
/// operator was told.
async fn decide_by_turns(
    server: &Running,
    operator: &Connection,
    pending: &ApprovalRecord,
    turn: i64,
) -> Result<ApprovalRecord, String> {
    if turn % 2 == 0 {
        return operator
            .decide(&pending.id, Approval::Once, None)
            .await
            .map_err(|e| e.to_string());
    }
    let path = format!("/v1/approvals/{}/decision", pending.id);
    let body = r#"{"decision": "once"}"#;
    let answer = http(server.http, "POST", &path, Some(ACME_OPS), Some(body)).await;
    if answer.status == 200 {
        Ok(serde_json::from_str(&answer.body).unwrap())
    } else {
        Err(answer.body)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_over_http_with_roles_and_tenants() {
    for backend in each_store().await {
        let server = start_escalating(backend.store.clone()).await;
        let (agent, event_id) = escalated(&server, "terraform apply").await;
        let trajectory_id = agent.trajectory_id().unwrap().to_string();
        let ask = serde_json::json!({
            "trajectory_id": trajectory_id,
            "event_id": event_id,
            "timeout_seconds": 120,
        })
        .to_string();
        let opened = http(server.http, "POST", "/v1/approvals", Some(ACME), Some(&ask)).await;
        assert_eq!(opened.status, 200, "{}: {}", backend.name, opened.body);
        let opened = opened.json();
        let id = opened["id"].as_str().unwrap().to_string();
        assert_eq!(opened["status"], "pending");
        let again = http(server.http, "POST", "/v1/approvals", Some(ACME), Some(&ask)).await;
        assert_eq!(
            again.json()["id"],
            opened["id"],
            "asking twice opens one approval"
        );

        let pending = "/v1/approvals?status=pending";
        assert_eq!(
            http(server.http, "GET", pending, Some(ACME), None)
                .await
                .status,
            403
        );
        let listed = http(server.http, "GET", pending, Some(ACME_OPS), None)
            .await
            .json();
        assert_eq!(listed["items"][0]["id"], opened["id"]);
        let other = http(server.http, "GET", pending, Some(GLOBEX_OPS), None)
            .await
            .json();
        assert_eq!(
            other["items"],
            serde_json::json!([]),
            "another tenant sees nothing"
        );
        let path = format!("/v1/approvals/{id}");
        assert_eq!(
            http(server.http, "GET", &path, Some(GLOBEX), None)
                .await
                .status,
            404
        );

        let decision = format!("{path}/decision");
        let deny = r#"{"decision": "deny", "reason": "not during the freeze"}"#;
        let by_agent = http(server.http, "POST", &decision, Some(ACME), Some(deny)).await;
        assert_eq!(by_agent.status, 403);
        assert_eq!(by_agent.json()["error"]["code"], "PERMISSION_DENIED");
        let bad = http(
            server.http,
            "POST",
            &decision,
            Some(ACME_OPS),
            Some(r#"{"decision": "maybe"}"#),
        )
        .await;
        assert_eq!(bad.status, 400, "{}", bad.body);

        let wait = format!("{path}?wait=10");
        let waiter =
            tokio::spawn(async move { http(server.http, "GET", &wait, Some(ACME), None).await });
        tokio::time::sleep(Duration::from_millis(200)).await;
        let denied = http(server.http, "POST", &decision, Some(ACME_OPS), Some(deny)).await;
        assert_eq!(denied.status, 200, "{}", denied.body);
        let seen = waiter.await.unwrap().json();
        assert_eq!(seen["status"], "decided");
        assert_eq!(seen["approval"], "deny");
        assert_eq!(seen["decided_by"]["id"], "ana");
        assert_eq!(seen["reason"], "not during the freeze");
        server.stop().await;
    }
}

#[tokio::test]
async fn only_an_escalated_step_can_be_put_to_an_operator() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let mut agent = harness(server.grpc, Some(ACME));
    agent.initialize(None, None).await.unwrap();
    for (command, expected) in [("rm -rf /", Decision::Deny), ("ls -la", Decision::Allow)] {
        let event = agent.event(shell(command)).unwrap();
        let event_id = event.event_id.clone();
        assert_eq!(agent.adjudicate(event).await.unwrap().decision, expected);
        let refused = agent.ask_operator(&event_id, None).await.unwrap_err();
        assert!(
            refused.to_string().contains("only an escalated step"),
            "{command}: {refused}"
        );
    }
    let unknown = agent.ask_operator("no-such-event", None).await.unwrap_err();
    assert!(unknown.to_string().contains("NotFound"), "{unknown}");
    server.stop().await;
}

#[tokio::test]
async fn approving_always_keeps_a_standing_grant_for_the_agent() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let (mut agent, event_id) = escalated(&server, "terraform apply").await;
    let waiting = tokio::spawn(async move {
        let outcome = agent.ask_operator(&event_id, None).await;
        (agent, outcome)
    });
    let operator = connection(server.grpc, Some(ACME_OPS));
    let pending = the_pending_one(&operator).await;
    operator
        .decide(&pending.id, Approval::Always, None)
        .await
        .unwrap();
    let (_agent, outcome) = waiting.await.unwrap();
    assert!(outcome.unwrap().approved());
    let mut later = harness(server.grpc, Some(ACME));
    later.initialize(None, None).await.unwrap();
    let granted = later
        .granted(&pending.shape.unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(granted.granted_by.id, "ana");
    assert_eq!(granted.scope, sondera_model::GrantScope::Always);
    server.stop().await;
}

/// An operator takes a standing grant back by the id it is listed with:
/// a harness started afterwards no longer holds it, an agent's token cannot
/// revoke, and an id the agent has no grant of is named as not found.
#[tokio::test]
async fn a_revoked_standing_grant_no_longer_holds() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let (mut agent, event_id) = escalated(&server, "terraform apply").await;
    let waiting = tokio::spawn(async move { agent.ask_operator(&event_id, None).await });
    let operator = connection(server.grpc, Some(ACME_OPS));
    let pending = the_pending_one(&operator).await;
    let shape = pending.shape.clone().unwrap();
    operator
        .decide(&pending.id, Approval::Always, None)
        .await
        .unwrap();
    assert!(waiting.await.unwrap().unwrap().approved());

    let listed = http(
        server.http,
        "GET",
        "/v1/agents/coder/grants",
        Some(ACME_OPS),
        None,
    )
    .await;
    let listed: serde_json::Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(listed["grants"][0]["id"], shape.id().as_str());
    assert_eq!(listed["grants"][0]["granted_by"]["id"], "ana");
    let path = format!("/v1/agents/coder/grants/{}", shape.id());
    let refused = http(server.http, "DELETE", &path, Some(ACME), None).await;
    assert_eq!(refused.status, 403, "{}", refused.body);

    let revoked = operator.revoke_grant("coder", &shape.id()).await.unwrap();
    assert_eq!(revoked.shape, shape);
    let mut later = harness(server.grpc, Some(ACME));
    later.initialize(None, None).await.unwrap();
    assert_eq!(later.granted(&shape).await.unwrap(), None);
    let again = http(server.http, "DELETE", &path, Some(ACME_OPS), None).await;
    assert_eq!(again.status, 404, "{}", again.body);
    assert!(
        again.body.contains("sondera grants list coder"),
        "{}",
        again.body
    );
    server.stop().await;
}

#[tokio::test]
async fn agent_tokens_cannot_read_the_whole_tenant_or_keep_grants() {
    let server = start_default().await;
    let agent = connection(server.grpc, Some(ACME));
    let operator = connection(server.grpc, Some(ACME_OPS));
    let listing = v1::ListTrajectoriesRequest::default();
    let refused = agent
        .client()
        .list_trajectories(agent.request(listing.clone()))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert!(
        refused.message().contains("operator token"),
        "{}",
        refused.message()
    );
    operator
        .client()
        .list_trajectories(operator.request(listing))
        .await
        .unwrap();
    for path in [
        "/v1/trajectories",
        "/v1/adjudications",
        "/v1/analytics",
        "/v1/agents",
        "/v1/events/stream",
    ] {
        assert_eq!(
            http(server.http, "GET", path, Some(ACME), None)
                .await
                .status,
            403,
            "{path}"
        );
    }
    let grant = r#"{"shape": {"kind": "web", "host": "docs.rs"}, "scope": "always", "granted_by": {"kind": "human", "id": "x"}, "granted_at": "2026-12-01T00:00:00Z"}"#;
    let kept = http(
        server.http,
        "POST",
        "/v1/agents/coder/grants",
        Some(ACME),
        Some(grant),
    )
    .await;
    assert_eq!(kept.status, 403);
    let kept = http(
        server.http,
        "POST",
        "/v1/agents/coder/grants",
        Some(ACME_OPS),
        Some(grant),
    )
    .await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    server.stop().await;
}

/// A TCP relay to a server, for cutting an agent off from it.
struct Relay {
    addr: std::net::SocketAddr,
    /// Once set, what the agent sends still reaches the server but nothing
    /// comes back: an answer lost on the way.
    muted: Arc<std::sync::atomic::AtomicBool>,
    /// Aborting it ends every connection.
    task: tokio::task::JoinHandle<()>,
}

async fn relay(target: std::net::SocketAddr) -> Relay {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let muted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let muting = muted.clone();
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((inbound, _)) = listener.accept().await {
            let Ok(outbound) = tokio::net::TcpStream::connect(target).await else {
                continue;
            };
            let (mut from_agent, mut to_agent) = inbound.into_split();
            let (mut from_server, mut to_server) = outbound.into_split();
            connections.spawn(async move {
                let _ = tokio::io::copy(&mut from_agent, &mut to_server).await;
            });
            let muted = muting.clone();
            connections.spawn(async move {
                let mut buffer = vec![0; 16 * 1024];
                while let Ok(read @ 1..) = from_server.read(&mut buffer).await {
                    if !muted.load(std::sync::atomic::Ordering::SeqCst)
                        && to_agent.write_all(&buffer[..read]).await.is_err()
                    {
                        break;
                    }
                }
            });
        }
    });
    Relay { addr, muted, task }
}

/// A server the agent can no longer reach while it waits: past the
/// deadline (and a grace period), the wait fails, so the call is blocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_cannot_reach_its_server_stops_waiting_after_the_deadline() {
    let server = start_with_approval_timeout(
        Arc::new(sondera_store::MemoryStore::new()),
        None,
        Duration::from_secs(2),
    )
    .await;
    let relay = relay(server.grpc).await;
    let (mut agent, event_id) =
        escalated_through(harness(relay.addr, Some(ACME)), "terraform apply").await;
    let started = std::time::Instant::now();
    let waiting = tokio::spawn(async move { agent.ask_operator(&event_id, None).await });
    the_pending_one(&connection(server.grpc, Some(ACME_OPS))).await;
    relay.task.abort();
    // It gives up some 12 s from here (the 2 s deadline, then the grace);
    // the bound only keeps a hang from stalling the suite, with room for a
    // loaded machine.
    let failed = tokio::time::timeout(Duration::from_secs(90), waiting)
        .await
        .expect("the agent gave up waiting")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(
            failed,
            sondera_harness::HarnessError::Transport(_) | sondera_harness::HarnessError::Timeout(_)
        ),
        "{failed}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "it waited out the deadline first: {:?}",
        started.elapsed()
    );
    server.stop().await;
}

/// The server opens the approval but its answer never reaches the agent,
/// which cannot learn the server's deadline: it stops asking after a while
/// instead of for an hour, so the call is blocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_request_for_approval_goes_unanswered_stops_asking() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let relay = relay(server.grpc).await;
    let mut config = config(relay.addr, Some(ACME));
    config.timeout = Duration::from_secs(3);
    let agent = sondera_harness::RemoteHarness::new(
        &config,
        Some(sondera_model::Agent::new("coder", "google-adk")),
    )
    .unwrap();
    let (mut agent, event_id) = escalated_through(agent, "terraform apply").await;
    relay.muted.store(true, std::sync::atomic::Ordering::SeqCst);
    let started = std::time::Instant::now();
    let waiting = tokio::spawn(async move { agent.ask_operator(&event_id, None).await });
    the_pending_one(&connection(server.grpc, Some(ACME_OPS))).await;
    // About 30 s of asking; the bound only keeps a hang from stalling the
    // suite, with room for a loaded machine.
    let failed = tokio::time::timeout(Duration::from_secs(120), waiting)
        .await
        .expect("the agent gave up asking")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(failed, sondera_harness::HarnessError::Timeout(_)),
        "{failed}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(25),
        "it kept asking a while first: {:?}",
        started.elapsed()
    );
    relay.task.abort();
    server.stop().await;
}

/// Opens an approval for `event_id` over HTTP as the agent; the answer.
async fn ask_over_http(
    server: &Running,
    trajectory_id: &str,
    event_id: &str,
    timeout_seconds: u64,
) -> HttpResponse {
    let ask = serde_json::json!({
        "trajectory_id": trajectory_id,
        "event_id": event_id,
        "timeout_seconds": timeout_seconds,
    })
    .to_string();
    http(server.http, "POST", "/v1/approvals", Some(ACME), Some(&ask)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_approval_is_opened_for_a_step_of_an_ended_trajectory() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let (mut agent, event_id) = escalated(&server, "terraform apply").await;
    let trajectory_id = agent.trajectory_id().unwrap().to_string();
    agent.finalize(None).await.unwrap();
    let refused = ask_over_http(&server, &trajectory_id, &event_id, 60).await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(refused.body.contains("has ended"), "{}", refused.body);
    server.stop().await;
}

/// A decision (and an expiry) landing after the trajectory completed is
/// still recorded in it: no decision without a record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_or_expiry_after_completion_is_recorded() {
    for backend in each_store().await {
        let server =
            start_with_approval_timeout(backend.store.clone(), None, Duration::from_secs(2)).await;
        let operator = connection(server.grpc, Some(ACME_OPS));
        let (mut decided, decided_event) = escalated(&server, "terraform apply").await;
        let asked = ask_over_http(
            &server,
            decided.trajectory_id().unwrap(),
            &decided_event,
            60,
        )
        .await;
        assert_eq!(asked.status, 200, "{}: {}", backend.name, asked.body);
        let pending = the_pending_one(&operator).await;
        decided.finalize(None).await.unwrap();
        let outcome = operator
            .decide(&pending.id, Approval::Once, Some("after the run".into()))
            .await
            .unwrap();
        assert_eq!(
            recorded_outcomes(&server, &outcome).await.len(),
            1,
            "{}: the decision is in the trajectory",
            backend.name
        );

        let (mut expiring, expiring_event) = escalated(&server, "terraform apply").await;
        let asked = ask_over_http(
            &server,
            expiring.trajectory_id().unwrap(),
            &expiring_event,
            1,
        )
        .await;
        assert_eq!(asked.status, 200, "{}: {}", backend.name, asked.body);
        let approval: ApprovalRecord = serde_json::from_str(&asked.body).unwrap();
        expiring.finalize(None).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let expired = server
            .governance
            .current_approval(&approval.tenant, &approval.id)
            .await
            .unwrap();
        assert_eq!(expired.state.status(), ApprovalStatus::Expired);
        assert_eq!(
            recorded_outcomes(&server, &expired).await.len(),
            1,
            "{}: the expiry is in the trajectory",
            backend.name
        );
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reason_past_the_event_limit_is_refused_and_the_approval_stays_pending() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let (agent, event_id) = escalated(&server, "terraform apply").await;
    let asked = ask_over_http(&server, agent.trajectory_id().unwrap(), &event_id, 60).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    let id = asked.json()["id"].as_str().unwrap().to_string();
    let reason = "x".repeat(Limits::default().max_event_bytes);
    let body = serde_json::json!({ "decision": "once", "reason": reason }).to_string();
    let path = format!("/v1/approvals/{id}/decision");
    let refused = http(server.http, "POST", &path, Some(ACME_OPS), Some(&body)).await;
    assert_eq!(refused.status, 413, "{}", refused.body);
    assert!(refused.body.contains("`reason`"), "{}", refused.body);
    let operator = connection(server.grpc, Some(ACME_OPS));
    let refused = operator
        .decide(&id, Approval::Once, Some("y".repeat(2 << 20)))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("`reason`"), "{refused}");
    assert_eq!(the_pending_one(&operator).await.id, id);
    server.stop().await;
}

/// Zero asks for no particular deadline over HTTP as over gRPC, where an
/// unset field reads as zero: the server's default applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_timeout_means_the_default_deadline_everywhere() {
    let server = start_escalating(Arc::new(sondera_store::MemoryStore::new())).await;
    let (agent, event_id) = escalated(&server, "terraform apply").await;
    let asked = ask_over_http(&server, agent.trajectory_id().unwrap(), &event_id, 0).await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    let approval: ApprovalRecord = serde_json::from_str(&asked.body).unwrap();
    let deadline = (approval.expires_at - approval.created_at)
        .to_std()
        .unwrap();
    assert_eq!(deadline, Limits::default().approval_timeout);
    assert_eq!(approval.state.status(), ApprovalStatus::Pending);
    server.stop().await;
}
