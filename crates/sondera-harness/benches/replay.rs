//! Replay throughput over a large store: records N events (default 100,000,
//! in trajectories of 100) into an SQLite store, then re-judges them all
//! under the built-in packs and reports events per second.
//!
//! ```sh
//! cargo bench -p sondera-harness --bench replay -- 100000
//! ```
//!
//! The store lives under /dev/shm when it exists, so setting it up does not
//! wait for 100,000 disk flushes; replay only reads.

use std::time::Instant;

use serde_json::json;
use sondera_harness::classify_tool_call;
use sondera_harness::replay::{ReplayScope, replay};
use sondera_model::{Adjudicated, Agent, Event, Mode, Payload, TrajectoryState};
use sondera_policy::{PolicyEngine, Workspace};
use sondera_store::{EventLog, SqliteStore, StepRecord, TrajectoryStatus};

const PER_TRAJECTORY: usize = 100;
const COMMANDS: &[&str] = &[
    "cargo build --release",
    "git status && git diff --stat",
    "rm -rf ./target/debug/incremental",
    "curl -s https://api.github.com/repos/o/r | jq .stargazers_count",
    "grep -rn TODO src/ | head -20",
];

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let parent = if std::path::Path::new("/dev/shm").is_dir() {
        tempfile::tempdir_in("/dev/shm")
    } else {
        tempfile::tempdir()
    }
    .unwrap();
    let store = SqliteStore::open_dir(parent.path()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();

    let start = Instant::now();
    runtime.block_on(populate(&store, n));
    println!("recorded {n} events in {:.1?}", start.elapsed());

    let engine = PolicyEngine::builder()
        .builtin_packs()
        .workspace(Workspace::new("/workspace/project", "/home/dev"))
        .build()
        .unwrap();
    let start = Instant::now();
    let report = runtime
        .block_on(replay(&store, &engine, &ReplayScope::default(), |_| {}))
        .unwrap();
    let elapsed = start.elapsed();
    println!(
        "replayed {} trajectories, {} judged events in {elapsed:.2?}: {:.0} events/s, {:.1} µs per event; {} decisions change",
        report.trajectories,
        report.events,
        report.events as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / report.events as f64,
        report.changed.len()
    );
}

async fn populate(store: &SqliteStore, n: usize) {
    let agent = Agent::new("bench-agent", "google-adk");
    let verdict = Adjudicated::allow(Mode::Govern, "recorded");
    let state = TrajectoryState::default();
    for t in 0..n.div_ceil(PER_TRAJECTORY) {
        let id = format!("trajectory-{t:06}");
        for seq in 0..PER_TRAJECTORY {
            let payload = match seq {
                0 => Payload::Started {
                    agent: agent.clone(),
                    task: None,
                    session_id: None,
                },
                s if s == PER_TRAJECTORY - 1 => Payload::Completed { summary: None },
                s => classify_tool_call(
                    &format!("c{s}"),
                    "bash",
                    &json!({ "command": COMMANDS[s % COMMANDS.len()] }),
                ),
            };
            let governed = !matches!(payload, Payload::Started { .. } | Payload::Completed { .. });
            let event = Event::new(&id, &agent, payload);
            let status = if seq == PER_TRAJECTORY - 1 {
                TrajectoryStatus::Completed
            } else {
                TrajectoryStatus::Running
            };
            store
                .append(StepRecord {
                    tenant: &sondera_store::TenantId::default(),
                    event: &event,
                    seq: seq as u64,
                    adjudication: governed.then_some(&verdict),
                    status,
                    state: &state,
                })
                .await
                .unwrap();
        }
    }
}
