//! Two server processes' worth of servers over one PostgreSQL database
//! behave as one: consecutive events of a trajectory may land on either.

mod common;

fn tenant(name: &str) -> sondera_store::TenantId {
    sondera_store::TenantId::new(name).unwrap()
}

use std::sync::Arc;

use common::*;
use sondera_model::{Agent, Event, Payload};
use sondera_policy::PolicyEngine;
use sondera_proto::v1;
use sondera_server::PolicyLoader;
use sondera_store::PostgresStore;

const RULES: &str = r#"
@id("no-rm") @description("no rm") @severity("high")
forbid (principal, action == Sondera::Action::"ShellCommand", resource) when { context.command like "rm *" };
@id("denial-budget") @description("too many denials") @severity("high")
forbid (principal, action in Sondera::Action::"ToolUse", resource) when { context.trajectory.denial_count >= 2 };
"#;

fn loader() -> PolicyLoader {
    Arc::new(|| {
        PolicyEngine::builder()
            .builtin_packs()
            .policy_source("scale.cedar", RULES)
            .build()
    })
}

async fn server_on(url: &str) -> Running {
    let store = Arc::new(PostgresStore::connect(url).await.unwrap());
    start(builder(store, loader()).access(two_tenants())).await
}

async fn judge(connection: &sondera_harness::remote::Connection, event: Event) -> v1::Adjudicated {
    connection
        .client()
        .adjudicate(connection.request(v1::Event::from(event)))
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alternating_servers_keep_one_order_and_one_state() {
    let url = sondera_testkit::postgres_database();
    let (a, b) = (server_on(&url).await, server_on(&url).await);
    let servers = [
        connection(a.grpc, Some(ACME)),
        connection(b.grpc, Some(ACME)),
    ];
    let agent = Agent::new("coder", "google-adk");
    let id = "shared-trajectory";
    let started = Payload::Started {
        agent: agent.clone(),
        task: None,
        session_id: None,
    };
    judge(&servers[0], Event::new(id, &agent, started)).await;

    let mut decisions = Vec::new();
    let mut judgements = Vec::new();
    for (i, command) in ["rm -rf x", "ls", "rm -rf y", "ls", "cargo build"]
        .iter()
        .enumerate()
    {
        let event = Event::new(id, &agent, shell(command));
        let verdict = judge(&servers[(i + 1) % 2], event).await;
        decisions.push(verdict.decision);
        judgements.push((verdict.decision_id, verdict.policy_revision));
    }
    let deny = v1::Decision::Deny as i32;
    let allow = v1::Decision::Allow as i32;
    // `b` denied both rm; `a` and `b` then deny everything, because each sees
    // the denial count the other recorded.
    assert_eq!(decisions, [deny, allow, deny, deny, deny]);

    let detail = a
        .governance
        .trajectory(&tenant("acme"), id, false)
        .await
        .unwrap();
    assert_eq!(detail.summary.event_count, 6);
    assert_eq!(detail.summary.state.denial_count, 4);
    let seqs: Vec<u64> = detail.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4, 5]);
    // Each caller's decision id is the one recorded; both servers judged by
    // one policy revision.
    let recorded: Vec<_> = detail.events[1..]
        .iter()
        .map(|e| {
            let verdict = e.adjudication.as_ref().unwrap();
            (verdict.decision_id.clone(), verdict.policy_revision.clone())
        })
        .collect();
    assert_eq!(judgements, recorded);
    let revision = loader()().unwrap().revision().to_owned();
    assert!(
        recorded
            .iter()
            .all(|(id, rev)| id.is_some() && rev.as_deref() == Some(&revision))
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_trajectories_spread_over_two_servers_lose_nothing() {
    let url = sondera_testkit::postgres_database();
    let (a, b) = (server_on(&url).await, server_on(&url).await);
    let servers = Arc::new([
        connection(a.grpc, Some(ACME)),
        connection(b.grpc, Some(ACME)),
    ]);
    let agent = Agent::new("coder", "google-adk");
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..8 {
        let (servers, agent) = (servers.clone(), agent.clone());
        tasks.spawn(async move {
            let id = format!("t{t}");
            let started = Payload::Started {
                agent: agent.clone(),
                task: None,
                session_id: None,
            };
            judge(&servers[t % 2], Event::new(&id, &agent, started)).await;
            for step in 0..10 {
                let event = Event::new(
                    &id,
                    &agent,
                    Payload::Thought {
                        content: format!("{step}"),
                    },
                );
                assert_eq!(
                    judge(&servers[(t + step) % 2], event).await.decision,
                    v1::Decision::Allow as i32
                );
            }
            id
        });
    }
    let ids = tasks.join_all().await;
    for id in ids {
        let detail = b
            .governance
            .trajectory(&tenant("acme"), &id, false)
            .await
            .unwrap();
        assert_eq!(detail.summary.event_count, 11, "{id}");
        assert_eq!(detail.summary.state.step_count, 10, "{id}");
        let thoughts: Vec<String> = detail
            .events
            .iter()
            .filter_map(|e| match &e.event.payload {
                Payload::Thought { content } => Some(content.clone()),
                _ => None,
            })
            .collect();
        let expected: Vec<String> = (0..10).map(|s| s.to_string()).collect();
        assert_eq!(
            thoughts, expected,
            "{id}: events in the order they were sent"
        );
    }
    a.stop().await;
    b.stop().await;
}
