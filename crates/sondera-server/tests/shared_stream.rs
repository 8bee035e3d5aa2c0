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
use sondera_server::PolicyLoader;
use sondera_store::{ApprovalState, PostgresStore};

const RULES: &str = r#"
@id("infra-apply") @description("Applying infrastructure changes needs an operator") @escalate
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "terraform apply*" };
"#;

fn loader() -> PolicyLoader {
    Arc::new(|| {
        PolicyEngine::builder()
            .builtin_packs()
            .policy_source("ops.cedar", RULES)
            .build()
    })
}

async fn three_servers(url: &str) -> [Running; 3] {
    let mut servers = Vec::new();
    for _ in 0..3 {
        let store = Arc::new(PostgresStore::connect(url).await.unwrap());
        servers.push(start(builder(store, loader()).access(two_tenants())).await);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_streams_every_servers_records_once_in_order() {
    let url = sondera_testkit::postgres_database();
    let servers = three_servers(&url).await;
    let mut streams = Vec::new();
    for server in &servers {
        streams.push(follow(server).await);
    }
    let agents: Vec<Connection> = servers
        .iter()
        .map(|s| connection(s.grpc, Some(ACME)))
        .collect();
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
    let url = sondera_testkit::postgres_database();
    let servers = three_servers(&url).await;
    let mut streams = Vec::new();
    for server in &servers {
        streams.push(follow(server).await);
    }
    let agents: Vec<Connection> = servers
        .iter()
        .map(|s| connection(s.grpc, Some(ACME)))
        .collect();
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
