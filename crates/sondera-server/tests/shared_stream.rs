//! Three servers over one PostgreSQL database act as one: each server's
//! live stream carries every server's records exactly once, in order per
//! trajectory; an approval decided on one server wakes the agent waiting on
//! another at once; a lost listening connection loses nothing.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use sondera_harness::Harness;
use sondera_harness::remote::Connection;
use sondera_model::{Agent, Approval, Decision, Event, Payload};
use sondera_policy::PolicyEngine;
use sondera_proto::v1;
use sondera_store::{ApprovalState, PostgresStore};

async fn three_servers(url: &str) -> [Running; 3] {
    let mut servers = Vec::new();
    for _ in 0..3 {
        let store = Arc::new(PostgresStore::connect(url).await.unwrap());
        servers.push(start(builder(store, escalating()).access(two_tenants())).await);
    }
    servers.try_into().ok().unwrap()
}

async fn judge(connection: &Connection, event: Event) -> v1::Adjudicated {
    connection
        .client()
        .adjudicate(connection.request(v1::Event::from(event)))
        .await
        .unwrap()
        .into_inner()
}

type Stream = tonic::Streaming<v1::RecordedEvent>;

async fn follow(server: &Running) -> Stream {
    let operator = connection(server.grpc, Some(ACME_OPS));
    operator
        .client()
        .stream_events(operator.request(v1::StreamEventsRequest::default()))
        .await
        .unwrap()
        .into_inner()
}

/// Reads `stream` until it has shown `expected` steps, returning each
/// trajectory's positions in the order seen.
async fn positions(stream: &mut Stream, expected: usize) -> BTreeMap<String, Vec<u64>> {
    let mut seen: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut count = 0;
    while count < expected {
        let item = tokio::time::timeout(Duration::from_secs(20), stream.message())
            .await
            .unwrap_or_else(|_| panic!("the stream stopped after {count} of {expected} steps"))
            .unwrap()
            .unwrap();
        if let Some(event) = item.event {
            seen.entry(event.trajectory_id).or_default().push(item.seq);
            count += 1;
        }
    }
    seen
}

/// `trajectories` trajectories of `steps` steps each (after `started`),
/// every step sent to the next of `servers` in turn, all at once.
async fn drive(servers: &[Connection], prefix: &str, trajectories: usize, steps: usize) {
    let servers = Arc::new(servers.to_vec());
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..trajectories {
        let servers = servers.clone();
        let id = format!("{prefix}-{t}");
        tasks.spawn(async move {
            let agent = Agent::new("coder", "google-adk");
            let started = Payload::Started {
                agent: agent.clone(),
                task: None,
                session_id: None,
            };
            judge(&servers[t % 3], Event::new(&id, &agent, started)).await;
            for s in 0..steps {
                let event = Event::new(&id, &agent, shell(&format!("echo {s}")));
                judge(&servers[(t + s + 1) % 3], event).await;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}

fn assert_each_once_in_order(
    seen: &BTreeMap<String, Vec<u64>>,
    prefix: &str,
    trajectories: usize,
    steps: usize,
) {
    let expected: BTreeSet<String> = (0..trajectories).map(|t| format!("{prefix}-{t}")).collect();
    assert_eq!(seen.keys().cloned().collect::<BTreeSet<_>>(), expected);
    let in_order: Vec<u64> = (0..=steps as u64).collect();
    for (id, seqs) in seen {
        assert_eq!(seqs, &in_order, "{id}: every step once, in order");
    }
}

/// Three servers on a fresh database, an operator following each one's
/// stream, and an agent's connection to each.
struct Followed {
    url: String,
    servers: Vec<Running>,
    streams: Vec<Stream>,
    agents: Vec<Connection>,
}

async fn followed() -> Followed {
    let url = sondera_testkit::postgres_database();
    let servers: Vec<Running> = three_servers(&url).await.into();
    let mut streams = Vec::new();
    for server in &servers {
        streams.push(follow(server).await);
    }
    let agents = servers
        .iter()
        .map(|s| connection(s.grpc, Some(ACME)))
        .collect();
    Followed {
        url,
        servers,
        streams,
        agents,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_streams_every_servers_records_once_in_order() {
    let Followed {
        url: _,
        servers,
        mut streams,
        agents,
    } = followed().await;
    let (trajectories, steps) = (12, 10);
    drive(&agents, "t", trajectories, steps).await;
    for stream in &mut streams {
        let seen = positions(stream, trajectories * (steps + 1)).await;
        assert_each_once_in_order(&seen, "t", trajectories, steps);
    }
    // Nothing more: no step twice.
    for stream in &mut streams {
        let extra = tokio::time::timeout(Duration::from_millis(300), stream.message()).await;
        assert!(extra.is_err(), "an item after all were seen: {extra:?}");
    }
    for server in servers {
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_decided_on_one_server_wakes_the_agent_waiting_on_another() {
    let url = sondera_testkit::postgres_database();
    let [a, b, c] = three_servers(&url).await;
    let on_a = connection(a.grpc, Some(ACME));
    let operator_on_b = connection(b.grpc, Some(ACME_OPS));
    let mut stream_on_c = follow(&c).await;
    let mut woken_after = Vec::new();
    for round in 0..5 {
        let mut agent = harness(a.grpc, Some(ACME));
        agent.initialize(None, None).await.unwrap();
        let trajectory = agent.trajectory_id().unwrap().to_owned();
        let event = agent.event(shell("terraform apply -auto-approve")).unwrap();
        let event_id = event.event_id.clone();
        assert_eq!(
            agent.adjudicate(event).await.unwrap().decision,
            Decision::Escalate
        );
        let request = v1::RequestApprovalRequest {
            event_id,
            trajectory_id: trajectory.clone(),
            timeout_seconds: 60,
        };
        let opened = on_a
            .client()
            .request_approval(on_a.request(request))
            .await
            .unwrap()
            .into_inner();
        let id = opened.id;
        let waiting = tokio::spawn({
            let (on_a, id) = (on_a.clone(), id.clone());
            async move {
                let answered = on_a.approval(&id, Duration::from_secs(30)).await;
                (Instant::now(), answered)
            }
        });
        // The long poll is open on A before B decides.
        tokio::time::sleep(Duration::from_millis(200)).await;
        operator_on_b
            .decide(&id, Approval::Once, Some(format!("round {round}")))
            .await
            .unwrap();
        let decided = Instant::now();
        let (answered_at, answered) = waiting.await.unwrap();
        assert!(matches!(
            answered.unwrap().state,
            ApprovalState::Decided { .. }
        ));
        woken_after.push(answered_at.saturating_duration_since(decided));

        // C's stream shows the approval opened, then decided.
        let mut states = Vec::new();
        while states.len() < 2 {
            let item = tokio::time::timeout(Duration::from_secs(10), stream_on_c.message())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if let Some(approval) = item.approval.filter(|a| a.id == id) {
                states.push(approval.status);
            }
        }
        assert_ne!(states[0], states[1], "opened, then settled: {states:?}");
        drop(agent);
    }
    woken_after.sort();
    let median = woken_after[woken_after.len() / 2];
    assert!(
        median <= Duration::from_millis(100),
        "the waiter on A learned of B's decision after {woken_after:?}"
    );
    for server in [a, b, c] {
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_listening_connection_loses_nothing() {
    let Followed {
        url,
        servers,
        mut streams,
        agents,
    } = followed().await;
    let (trajectories, steps) = (6, 30);
    let driving = tokio::spawn({
        let agents = agents.clone();
        async move { drive(&agents, "k", trajectories, steps).await }
    });
    // Every server's listening connection, ended by the database while
    // steps are being recorded, more than once.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        sondera_testkit::execute(
            &url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE application_name = 'sondera-listen' AND datname = current_database()",
        );
    }
    driving.await.unwrap();
    for stream in &mut streams {
        let seen = positions(stream, trajectories * (steps + 1)).await;
        assert_each_once_in_order(&seen, "k", trajectories, steps);
    }
    for server in servers {
        server.stop().await;
    }
}

const NO_ECHO: &str = r#"
@id("no-echo") @description("echo is refused") @severity("low")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "echo *" };
@id("rest") permit (principal, action, resource);
"#;

async fn servers_following_the_store(url: &str, count: usize) -> Vec<Running> {
    let mut servers = Vec::new();
    for _ in 0..count {
        let store = Arc::new(PostgresStore::connect(url).await.unwrap());
        let builder: sondera_server::PolicyBuilder = Arc::new(PolicyEngine::builder);
        let server = builder_of(store)
            .policies_from_store(builder)
            .access(two_tenants());
        servers.push(start(server).await);
    }
    servers
}

fn builder_of(store: Arc<PostgresStore>) -> sondera_server::ServerBuilder {
    builder(store, Arc::new(PolicyEngine::builtin))
}

fn push_request(text: &str, message: &str) -> v1::PushPoliciesRequest {
    v1::PushPoliciesRequest {
        policies: vec![v1::PolicyFile {
            name: "team.cedar".into(),
            text: text.into(),
        }],
        schemas: vec![],
        message: Some(message.into()),
    }
}

/// Judges `echo hi` on `server` in a new trajectory until it is judged by
/// `revision`, for at most a second (the servers check by themselves only
/// every five): the verdict then.
async fn judged_by(server: &Running, revision: &str) -> v1::Adjudicated {
    let agent = connection(server.grpc, Some(ACME));
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        let id = format!("p-{}", uuid_like());
        let who = Agent::new("coder", "google-adk");
        let started = Payload::Started {
            agent: who.clone(),
            task: None,
            session_id: None,
        };
        judge(&agent, Event::new(&id, &who, started)).await;
        let verdict = judge(&agent, Event::new(&id, &who, shell("echo hi"))).await;
        if verdict.policy_revision.as_deref() == Some(revision) || Instant::now() > deadline {
            return verdict;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_set_pushed_through_one_server_judges_on_all() {
    let url = sondera_testkit::postgres_database();
    let servers = servers_following_the_store(&url, 3).await;
    let (a, b, c) = (&servers[0], &servers[1], &servers[2]);
    let builtin = PolicyEngine::builtin().unwrap().revision().to_owned();
    assert_eq!(
        judged_by(a, &builtin).await.decision,
        v1::Decision::Allow as i32
    );

    // Only an admin pushes, and only a set that loads.
    let admin_on_c = connection(c.grpc, Some(ADMIN));
    let operator_on_c = connection(c.grpc, Some(ACME_OPS));
    let refused = operator_on_c
        .client()
        .push_policies(operator_on_c.request(push_request(NO_ECHO, "x")))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    let broken = admin_on_c
        .client()
        .push_policies(admin_on_c.request(push_request(
            "forbid (principal, action, resource) when { nope };",
            "x",
        )))
        .await
        .unwrap_err();
    assert_eq!(broken.code(), tonic::Code::InvalidArgument);
    assert!(
        broken.message().contains("team.cedar"),
        "{}",
        broken.message()
    );

    let pushed = admin_on_c
        .client()
        .push_policies(admin_on_c.request(push_request(NO_ECHO, "no echo")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((pushed.pushed_by.as_str(), pushed.policies), ("root", 2));
    for server in [a, b, c] {
        let verdict = judged_by(server, &pushed.revision).await;
        assert_eq!(
            verdict.policy_revision.as_deref(),
            Some(pushed.revision.as_str())
        );
        assert_eq!(verdict.decision, v1::Decision::Deny as i32, "no-echo holds");
    }

    // Listed, then rolled back through another server by a prefix.
    let operator_on_b = connection(b.grpc, Some(ACME_OPS));
    let listed = operator_on_b
        .client()
        .list_policy_revisions(operator_on_b.request(v1::ListPolicyRevisionsRequest::default()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.current.as_deref(), Some(pushed.revision.as_str()));
    assert_eq!(
        (listed.source.as_str(), listed.in_force.as_str()),
        ("store", pushed.revision.as_str())
    );
    assert_eq!(listed.revisions.len(), 1);
    let second = admin_on_c
        .client()
        .push_policies(admin_on_c.request(push_request(
            &NO_ECHO.replace("echo *", "printf *"),
            "printf instead",
        )))
        .await
        .unwrap()
        .into_inner();
    for server in [a, b] {
        assert_eq!(
            judged_by(server, &second.revision).await.decision,
            v1::Decision::Allow as i32
        );
    }
    let admin_on_b = connection(b.grpc, Some(ADMIN));
    let rolled = admin_on_b
        .client()
        .rollback_policies(admin_on_b.request(v1::RollbackPoliciesRequest {
            revision: pushed.revision[..8].to_owned(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rolled.revision, pushed.revision);
    for server in [a, b, c] {
        assert_eq!(
            judged_by(server, &pushed.revision).await.decision,
            v1::Decision::Deny as i32
        );
    }
    let files = admin_on_b
        .client()
        .get_policy_revision(admin_on_b.request(v1::GetPolicyRevisionRequest {
            revision: second.revision.clone(),
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(files.policies[0].text.contains("printf *"));

    // A server started later judges by the current revision from the start.
    let late = servers_following_the_store(&url, 1).await.remove(0);
    assert_eq!(late.governance.engine().revision(), pushed.revision);
    // One that reads its own files refuses pushes.
    let store = Arc::new(PostgresStore::connect(&url).await.unwrap());
    let by_files = start(builder_of(store).access(two_tenants())).await;
    let admin = connection(by_files.grpc, Some(ADMIN));
    let refused = admin
        .client()
        .push_policies(admin.request(push_request(NO_ECHO, "x")))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(
        refused.message().contains("--policy-source store"),
        "{}",
        refused.message()
    );
    for server in servers.into_iter().chain([late, by_files]) {
        server.stop().await;
    }
}

/// How long until `call` on `server` with `token` gets `wanted` (OK, or
/// an error code), for at most three seconds.
async fn until_answered(server: &Running, token: &str, wanted: tonic::Code) -> Duration {
    let started = Instant::now();
    let agent = connection(server.grpc, Some(token));
    loop {
        let answer = agent
            .client()
            .health(agent.request(v1::HealthRequest {}))
            .await;
        let code = answer.err().map_or(tonic::Code::Ok, |status| status.code());
        if code == wanted || started.elapsed() > Duration::from_secs(3) {
            assert_eq!(code, wanted);
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_stored_through_one_server_works_and_is_revoked_on_all() {
    let url = sondera_testkit::postgres_database();
    let mut servers = Vec::new();
    for _ in 0..2 {
        let store = Arc::new(PostgresStore::connect(&url).await.unwrap());
        let server = builder_of(store).access(two_tenants()).stored_tokens();
        servers.push(start(server).await);
    }
    let (a, b) = (&servers[0], &servers[1]);
    let token = "sk_stored_for_acme";
    let request = v1::PutTokenRequest {
        tenant: "acme".into(),
        role: "agent".into(),
        name: "ci-runner".into(),
        hash: sondera_server::hash_token(token),
    };
    // An operator may not store tokens; an admin may.
    let operator = connection(a.grpc, Some(ACME_OPS));
    let refused = operator
        .client()
        .put_token(operator.request(request.clone()))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert_eq!(
        until_answered(b, token, tonic::Code::Unauthenticated)
            .await
            .as_secs(),
        0
    );
    let admin_on_a = connection(a.grpc, Some(ADMIN));
    let stored = admin_on_a
        .client()
        .put_token(admin_on_a.request(request.clone()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (stored.created_by.as_str(), stored.role.as_str()),
        ("root", "agent")
    );
    let again = admin_on_a
        .client()
        .put_token(admin_on_a.request(request))
        .await
        .unwrap_err();
    assert_eq!(again.code(), tonic::Code::AlreadyExists);
    let accepted_after = until_answered(b, token, tonic::Code::Ok).await;
    assert!(
        accepted_after < Duration::from_secs(1),
        "{accepted_after:?}"
    );

    let admin_on_b = connection(b.grpc, Some(ADMIN));
    admin_on_b
        .client()
        .revoke_token(admin_on_b.request(v1::RevokeTokenRequest {
            token: "ci-runner".into(),
        }))
        .await
        .unwrap();
    let refused_after = until_answered(a, token, tonic::Code::Unauthenticated).await;
    assert!(refused_after < Duration::from_secs(1), "{refused_after:?}");
    let listed = admin_on_a
        .client()
        .list_tokens(admin_on_a.request(v1::ListTokensRequest {}))
        .await
        .unwrap()
        .into_inner();
    assert!(listed.tokens.is_empty());
    for server in servers {
        server.stop().await;
    }
}
