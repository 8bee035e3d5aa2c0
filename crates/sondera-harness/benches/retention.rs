//! Judging while retention prunes: records N events (default 1,000,000, in
//! trajectories of 100, half of them ended 60 days ago) into an SQLite
//! store on disk, then judges steps one after another, first alone and
//! then while `sondera_store::prune` removes everything older than 30
//! days, and reports both latency distributions and the pruning rate.
//!
//! ```sh
//! cargo bench -p sondera-harness --bench retention -- 1000000 [rest=N] [events=N]
//! ```
//!
//! `rest` and `events` override `PruneOptions::default()`'s, to compare;
//! `store=postgres://...` runs it on PostgreSQL (build with
//! `--features postgres`; the database should be empty).
//!
//! The store is filled by 100 trajectories at a time, so its writer commits
//! many steps per sync; judging runs on a two-thread runtime beside the
//! pruner, as in the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;
use sondera_harness::{Adjudicator, classify_tool_call};
use sondera_model::{Adjudicated, Agent, Event, Mode, Payload, TrajectoryState};
use sondera_policy::{PolicyEngine, Workspace};
use sondera_store::{
    PruneOptions, RetentionRules, SqliteStore, StepRecord, TenantId, TrajectoryStatus,
    TrajectoryStore,
};

const PER_TRAJECTORY: usize = 100;
const AT_ONCE: usize = 100;
const COMMANDS: &[&str] = &[
    "cargo build --release",
    "git status && git diff --stat",
    "rm -rf ./target/debug/incremental",
    "grep -rn TODO src/ | head -20",
];

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let mut options = PruneOptions::default();
    let mut location = None;
    for arg in std::env::args().skip(1) {
        if let Some(url) = arg.strip_prefix("store=") {
            location = Some(url.to_string());
        }
        if let Some(rest) = arg.strip_prefix("rest=") {
            options.rest = rest.parse().unwrap();
        } else if let Some(events) = arg.strip_prefix("events=") {
            options.batch_events = events.parse().unwrap();
        }
    }
    println!(
        "pruning {} events a transaction at most, resting {}x as long as each took",
        options.batch_events, options.rest
    );
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store: Arc<dyn TrajectoryStore> = match &location {
        Some(url) => runtime.block_on(sondera_store::connect(url)).unwrap(),
        None => Arc::new(SqliteStore::open_dir(dir.path()).unwrap()),
    };
    println!("store: {}", location.as_deref().unwrap_or("SQLite on disk"));
    let start = Instant::now();
    runtime.block_on(populate(store.clone(), n));
    println!("recorded {n} events in {:.1?}", start.elapsed());

    let engine = PolicyEngine::builder()
        .builtin_packs()
        .workspace(Workspace::new("/workspace/project", "/home/dev"))
        .build()
        .unwrap();
    let adjudicator = Arc::new(Adjudicator::new(engine, store.clone()));
    let alone = runtime.block_on(judge_for(
        &adjudicator,
        "alone",
        Duration::from_secs(20),
        None,
    ));
    report("judging alone", &alone);

    let pruning = Arc::new(AtomicBool::new(true));
    let pruner = {
        let (store, pruning) = (store.clone(), pruning.clone());
        runtime.spawn(async move {
            let mut rules = RetentionRules::default();
            rules.days(&"30".parse().unwrap()).unwrap();
            let start = Instant::now();
            let pruned =
                sondera_store::prune(store.as_ref(), &rules, Utc::now(), options, |_, _| {})
                    .await
                    .unwrap();
            pruning.store(false, Ordering::Release);
            (pruned, start.elapsed())
        })
    };
    let during = runtime.block_on(judge_for(
        &adjudicator,
        "during",
        Duration::from_secs(3600),
        Some(pruning),
    ));
    let (pruned, took) = runtime.block_on(pruner).unwrap();
    report("judging while pruning", &during);
    println!(
        "pruned {} trajectories ({} events) in {took:.1?}: {:.0} events/s",
        pruned.trajectories,
        pruned.events,
        pruned.events as f64 / took.as_secs_f64()
    );
    println!(
        "p99 while pruning / alone: {:.2}x",
        percentile(&during, 0.99).as_secs_f64() / percentile(&alone, 0.99).as_secs_f64()
    );
}

/// Writes `n` events: trajectories of 100 steps, the first half ended 60
/// days ago, the rest ended now.
async fn populate(store: Arc<dyn TrajectoryStore>, n: usize) {
    let trajectories = n.div_ceil(PER_TRAJECTORY);
    let old = Utc::now() - chrono::Duration::days(60);
    for first in (0..trajectories).step_by(AT_ONCE) {
        let writers = (first..(first + AT_ONCE).min(trajectories)).map(|t| {
            let store = store.clone();
            let at = if t < trajectories / 2 {
                old
            } else {
                Utc::now()
            };
            tokio::spawn(async move { write_trajectory(store.as_ref(), t, at).await })
        });
        for writer in writers.collect::<Vec<_>>() {
            writer.await.unwrap();
        }
    }
}

async fn write_trajectory(store: &dyn TrajectoryStore, t: usize, at: chrono::DateTime<Utc>) {
    let agent = Agent::new("bench-agent", "google-adk");
    let verdict = Adjudicated::allow(Mode::Govern, "recorded");
    let state = TrajectoryState::default();
    let id = format!("trajectory-{t:07}");
    for seq in 0..PER_TRAJECTORY {
        let last = seq == PER_TRAJECTORY - 1;
        let payload = match seq {
            0 => Payload::Started {
                agent: agent.clone(),
                task: None,
                session_id: None,
            },
            _ if last => Payload::Completed { summary: None },
            s => classify_tool_call(
                &format!("c{s}"),
                "bash",
                &json!({ "command": COMMANDS[s % COMMANDS.len()] }),
            ),
        };
        let governed = !matches!(payload, Payload::Started { .. } | Payload::Completed { .. });
        let mut event = Event::new(&id, &agent, payload);
        event.timestamp = at;
        store
            .append(StepRecord {
                tenant: &TenantId::default(),
                event: &event,
                seq: seq as u64,
                adjudication: governed.then_some(&verdict),
                status: if last {
                    TrajectoryStatus::Completed
                } else {
                    TrajectoryStatus::Running
                },
                state: &state,
            })
            .await
            .unwrap();
    }
}

/// Judges steps one at a time, for `limit` or while `running` holds; the
/// latency of each.
async fn judge_for(
    adjudicator: &Adjudicator,
    name: &str,
    limit: Duration,
    running: Option<Arc<AtomicBool>>,
) -> Vec<Duration> {
    let agent = Agent::new("judged-agent", "google-adk");
    let mut latencies = Vec::new();
    let start = Instant::now();
    let mut trajectory = 0;
    loop {
        let id = format!("{name}-{trajectory}");
        trajectory += 1;
        let started = Event::new(
            &id,
            &agent,
            Payload::Started {
                agent: agent.clone(),
                task: None,
                session_id: None,
            },
        );
        adjudicator.adjudicate(&started).await.unwrap();
        for s in 0..50 {
            let payload = classify_tool_call(
                &format!("c{s}"),
                "bash",
                &json!({ "command": COMMANDS[s % COMMANDS.len()] }),
            );
            let event = Event::new(&id, &agent, payload);
            let began = Instant::now();
            adjudicator.adjudicate(&event).await.unwrap();
            latencies.push(began.elapsed());
        }
        let done = match &running {
            Some(flag) => !flag.load(Ordering::Acquire) || start.elapsed() > limit,
            None => start.elapsed() > limit,
        };
        if done {
            return latencies;
        }
    }
}

fn percentile(latencies: &[Duration], p: f64) -> Duration {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn report(what: &str, latencies: &[Duration]) {
    println!(
        "{what}: {} steps, p50 {:.2?}, p99 {:.2?}, max {:.2?}",
        latencies.len(),
        percentile(latencies, 0.5),
        percentile(latencies, 0.99),
        latencies.iter().max().unwrap()
    );
}
