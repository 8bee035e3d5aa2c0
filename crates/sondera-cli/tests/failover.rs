//! Three servers on one PostgreSQL database; one is killed (-9) under load.
//! Agents given all three carry on through the others: every verdict they
//! were given is the one recorded, nothing acknowledged is lost, and no
//! step is recorded twice.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use sondera_harness::{Harness, RemoteConfig, RemoteHarness, RemoteRecords};
use sondera_model::{Agent, Decision, Payload};
use sondera_store::Records;

const AGENTS: usize = 6;
const STEPS: usize = 60;

/// Allowed and denied steps, so a step judged twice could disagree.
const COMMANDS: &[&str] = &[
    "cargo test --package p",
    "rm -rf ~",
    "git status",
    "cat ~/.aws/credentials",
];

type Verdicts = Arc<Mutex<HashMap<String, Decision>>>;

/// One agent: a trajectory of `STEPS` steps through `endpoints` (the first
/// in use, the rest its failover), every verdict remembered by event id.
async fn drive(endpoints: String, verdicts: Verdicts) -> String {
    let config = RemoteConfig::resolve_from(Some(endpoints), None, |_| None, None).unwrap();
    let mut agent = RemoteHarness::new(&config, Some(Agent::new("coder", "google-adk"))).unwrap();
    let id = agent.initialize(None, None).await.unwrap();
    for step in 0..STEPS {
        let command = format!("{}{step}", COMMANDS[step % COMMANDS.len()]);
        let event = agent
            .event(Payload::ShellCommand {
                call_id: format!("c{step}"),
                command,
                working_dir: None,
            })
            .unwrap();
        let event_id = event.event_id.clone();
        let verdict = agent
            .adjudicate(event)
            .await
            .unwrap_or_else(|e| panic!("step {step} of {id} failed: {e}"));
        verdicts.lock().unwrap().insert(event_id, verdict.decision);
    }
    agent.finalize(None).await.unwrap();
    id
}

#[test]
fn agents_carry_on_through_the_other_servers_when_one_is_killed() {
    let store = sondera_testkit::postgres_database();
    let servers: Vec<ServerProcess> = (0..3)
        .map(|_| ServerProcess::start(&["--store", &store]))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let verdicts: Verdicts = Arc::default();
    // Each agent starts on another server; every one has all three.
    let agents: Vec<_> = (0..AGENTS)
        .map(|a| {
            let endpoints: Vec<&str> = (0..3).map(|s| servers[(a + s) % 3].grpc.as_str()).collect();
            runtime.spawn(drive(endpoints.join(","), verdicts.clone()))
        })
        .collect();
    while verdicts.lock().unwrap().len() < AGENTS * STEPS / 4 {
        std::thread::sleep(Duration::from_millis(10));
    }
    servers[0].signal("KILL");
    let ids: Vec<String> = agents
        .into_iter()
        .map(|a| runtime.block_on(a).expect("the agent carried on"))
        .collect();
    let verdicts = verdicts.lock().unwrap().clone();
    assert_eq!(verdicts.len(), AGENTS * STEPS, "every step was answered");

    runtime.block_on(async {
        let config =
            RemoteConfig::resolve_from(Some(servers[1].grpc.clone()), None, |_| None, None)
                .unwrap();
        let records =
            RemoteRecords::new(sondera_harness::remote::Connection::lazy(&config).unwrap());
        let mut recorded = 0;
        for id in &ids {
            let detail = records
                .trajectory_with_events(&sondera_store::TenantId::default(), id)
                .await
                .unwrap()
                .unwrap();
            // started, the steps, completed: each once, in order.
            let seqs: Vec<u64> = detail.events.iter().map(|e| e.seq).collect();
            assert_eq!(seqs, (0..STEPS as u64 + 2).collect::<Vec<_>>(), "{id}");
            for stored in &detail.events[1..=STEPS] {
                let given = verdicts[&stored.event.event_id];
                let kept = stored.adjudication.as_ref().unwrap().decision;
                assert_eq!(given, kept, "{id}: the verdict given is the one recorded");
                recorded += 1;
            }
        }
        assert_eq!(recorded, AGENTS * STEPS);
    });
    drop(runtime);
}
