//! kill -9 the server under sustained load: after a restart every verdict a
//! client saw acknowledged is in the store, and every trajectory resumes.

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use sondera_harness::{Harness, RemoteConfig, RemoteHarness, RemoteRecords};
use sondera_model::{Agent, Payload};
use sondera_store::Records;

const CLIENTS: usize = 8;

fn harness(grpc: &str) -> RemoteHarness {
    let config = RemoteConfig::resolve_from(Some(grpc.to_string()), None, |_| None, None).unwrap();
    RemoteHarness::new(&config, Some(Agent::new("coder", "google-adk"))).unwrap()
}

/// One client: a trajectory, then steps until the server goes away. Every
/// acknowledged event id is remembered.
async fn drive(grpc: String, acknowledged: Arc<Mutex<HashSet<String>>>) -> String {
    let mut h = harness(&grpc);
    let id = h.initialize(None, None).await.unwrap();
    for step in 0.. {
        let event = h
            .event(Payload::ShellCommand {
                call_id: format!("c{step}"),
                command: format!("cargo test --package p{step}"),
                working_dir: None,
            })
            .unwrap();
        let event_id = event.event_id.clone();
        match h.adjudicate(event).await {
            Ok(_) => {
                acknowledged.lock().unwrap().insert(event_id);
            }
            Err(_) => break,
        }
    }
    id
}

fn crash_and_recover(store: &str) {
    let server = ServerProcess::start(&["--store", store]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let acknowledged = Arc::new(Mutex::new(HashSet::new()));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| runtime.spawn(drive(server.grpc.clone(), acknowledged.clone())))
        .collect();
    // Let load build up, then kill without warning.
    while acknowledged.lock().unwrap().len() < 200 {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.signal("KILL");
    let ids: Vec<String> = clients
        .into_iter()
        .map(|c| runtime.block_on(c).unwrap())
        .collect();
    let acknowledged = acknowledged.lock().unwrap().clone();

    let restarted = ServerProcess::start(&["--store", store]);
    runtime.block_on(async {
        let config =
            RemoteConfig::resolve_from(Some(restarted.grpc.clone()), None, |_| None, None).unwrap();
        let records =
            RemoteRecords::new(sondera_harness::remote::Connection::lazy(&config).unwrap());
        let mut stored = HashSet::new();
        for id in &ids {
            let detail = records
                .trajectory_with_events(&sondera_store::TenantId::default(), id)
                .await
                .unwrap()
                .unwrap();
            let seqs: Vec<u64> = detail.events.iter().map(|e| e.seq).collect();
            assert_eq!(
                seqs,
                (0..seqs.len() as u64).collect::<Vec<_>>(),
                "{id}: no gaps"
            );
            stored.extend(detail.events.into_iter().map(|e| e.event.event_id));
        }
        let lost: Vec<_> = acknowledged.difference(&stored).collect();
        assert!(
            lost.is_empty(),
            "{} acknowledged verdicts lost: {lost:?}",
            lost.len()
        );
        assert!(acknowledged.len() >= 200);

        for id in &ids {
            let mut h = harness(&restarted.grpc);
            h.resume(id, None).await.unwrap();
            let event = h
                .event(Payload::Thought {
                    content: "after the crash".into(),
                })
                .unwrap();
            assert!(h.adjudicate(event).await.unwrap().is_allowed());
            h.finalize(None).await.unwrap();
        }
    });
    drop(runtime);
    drop(restarted);
}

#[test]
fn sqlite_loses_no_acknowledged_verdict_to_a_crash() {
    let data = tempfile::tempdir().unwrap();
    crash_and_recover(&data.path().display().to_string());
}

#[test]
fn postgres_loses_no_acknowledged_verdict_to_a_crash() {
    crash_and_recover(&sondera_testkit::postgres_database());
}
