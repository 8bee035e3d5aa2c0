//! How the SQLite store holds up as it grows: fills a fresh store to each of
//! a series of sizes and, at each, appends a measured window of steps from 32
//! concurrent trajectories (as a busy server does), reporting throughput,
//! bytes written and pages read per step.
//!
//! ```sh
//! cargo bench -p sondera-store --bench scale -- [--sizes 1000,100000,1000000] [--dir DIR]
//! cargo bench -p sondera-store --bench scale -- --sizes ... --postgres postgres://...
//! ```
//!
//! For SQLite, bytes written and pages read come from the process's
//! `/proc/self/io` (`wchar`, and `rchar` over the 4 KiB page size):
//! everything SQLite hands the operating system, the write-ahead log and its
//! checkpoints into the database file included, whether or not the disk is
//! touched. For PostgreSQL, which writes in its own processes, they are the
//! server's own counts: the WAL bytes between two `pg_current_wal_lsn()`,
//! and the database's `blks_read` (8 KiB blocks read from outside its
//! buffer cache). Each step is a shell command or its output (about 1.5 KiB
//! of JSON with its verdict), in trajectories of 200 steps.

use std::sync::Arc;
use std::time::Instant;

use sondera_model::{
    Adjudicated, Agent, Decision, Event, Mode, Payload, PolicyMetadata, TrajectoryState,
};
use sondera_store::{SqliteStore, StepRecord, TenantId, TrajectoryStatus, TrajectoryStore};

const CONCURRENCY: usize = 32;
const STEPS_PER_TRAJECTORY: u64 = 200;
const WINDOW: usize = CONCURRENCY * STEPS_PER_TRAJECTORY as usize;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut sizes = vec![1_000usize, 100_000, 1_000_000];
    let mut dir = None;
    let mut postgres: Option<String> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                sizes = args
                    .next()
                    .expect("--sizes takes a comma-separated list")
                    .split(',')
                    .map(|n| n.parse().expect("sizes are whole numbers"))
                    .collect()
            }
            "--dir" => dir = args.next(),
            "--postgres" => postgres = args.next(),
            other => panic!("unknown argument {other}"),
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let temp = tempfile::tempdir().unwrap();
    let (store, meter): (Arc<dyn TrajectoryStore>, Meter) = match postgres {
        Some(url) => rt.block_on(async {
            let store = sondera_store::connect(&url).await.unwrap();
            (store, Meter::postgres(&url).await)
        }),
        None => {
            let dir = dir.map_or_else(|| temp.path().to_path_buf(), Into::into);
            (
                Arc::new(SqliteStore::open_dir(&dir).unwrap()),
                Meter::Process,
            )
        }
    };
    println!("| stored steps | steps/s | bytes written per step | pages read per step |");
    println!("|---|---|---|---|");
    let mut stored = 0;
    for size in sizes {
        let size = size.saturating_sub(WINDOW);
        while stored + WINDOW <= size {
            rt.block_on(window(&store));
            stored += WINDOW;
        }
        let at = stored;
        let before = rt.block_on(meter.read());
        let start = Instant::now();
        rt.block_on(window(&store));
        let elapsed = start.elapsed().as_secs_f64();
        let after = rt.block_on(meter.read());
        stored += WINDOW;
        println!(
            "| {at} | {:.0} | {:.0} | {:.2} |",
            WINDOW as f64 / elapsed,
            (after.written - before.written) as f64 / WINDOW as f64,
            (after.pages_read - before.pages_read) / WINDOW as f64,
        );
    }
}

/// 32 new trajectories of 200 steps each, appended concurrently, with ids
/// made as the harness makes them.
async fn window(store: &Arc<dyn TrajectoryStore>) {
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(
                async move { trajectory(&*store, &uuid::Uuid::now_v7().to_string()).await },
            )
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

async fn trajectory(store: &dyn TrajectoryStore, id: &str) {
    let tenant = TenantId::default();
    let agent = Agent::new("scale-agent", "google-adk");
    let mut state = TrajectoryState::default();
    let started = Event::new(
        id,
        &agent,
        Payload::Started {
            agent: agent.clone(),
            task: None,
            session_id: Some(format!("session-{id}")),
        },
    );
    append(store, &tenant, &started, 0, None, &state).await;
    let verdict = allowed();
    for seq in 1..STEPS_PER_TRAJECTORY {
        let payload = step(seq);
        state.record(&payload, Decision::Allow);
        let event = Event::new(id, &agent, payload);
        append(store, &tenant, &event, seq, Some(&verdict), &state).await;
    }
}

async fn append(
    store: &dyn TrajectoryStore,
    tenant: &TenantId,
    event: &Event,
    seq: u64,
    adjudication: Option<&Adjudicated>,
    state: &TrajectoryState,
) {
    store
        .append(StepRecord {
            tenant,
            event,
            seq,
            adjudication,
            status: TrajectoryStatus::Running,
            state,
        })
        .await
        .unwrap();
}

fn step(seq: u64) -> Payload {
    let call_id = format!("call-{}", seq.div_ceil(2));
    if seq % 2 == 1 {
        Payload::ShellCommand {
            call_id,
            command: format!("cargo test -p crate-{seq} -- --nocapture && git status --short"),
            working_dir: Some("/workspace/project".into()),
        }
    } else {
        let line = "test module::case_name ... ok (0.01s) with some more output\n";
        Payload::ShellCommandOutput {
            call_id,
            exit_code: 0,
            stdout: line.repeat(16),
            stderr: String::new(),
        }
    }
}

fn allowed() -> Adjudicated {
    let mut verdict = Adjudicated::allow(Mode::Govern, "permitted by base-default-permit");
    let description = "Everything not forbidden is permitted";
    verdict.policies = vec![PolicyMetadata {
        policy_id: "base-default-permit".into(),
        description: Some(description.into()),
        escalate: false,
        escalate_arg: None,
        annotations: [
            ("id", "base-default-permit"),
            ("description", description),
            ("severity", "low"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
    }];
    verdict
}

/// Bytes written and pages read so far.
struct Io {
    pages_read: f64,
    written: u64,
}

/// Where the counts of what a store writes and reads come from.
enum Meter {
    /// This process's `/proc/self/io`: SQLite writes in process.
    Process,
    /// The PostgreSQL server's WAL position and block reads.
    #[cfg(feature = "postgres")]
    Postgres(tokio_postgres::Client),
}

impl Meter {
    #[cfg(feature = "postgres")]
    async fn postgres(url: &str) -> Self {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("the PostgreSQL server is reachable without TLS");
        tokio::spawn(connection);
        Self::Postgres(client)
    }

    #[cfg(not(feature = "postgres"))]
    async fn postgres(_: &str) -> Self {
        panic!("this build has no PostgreSQL store: enable the `postgres` feature")
    }

    async fn read(&self) -> Io {
        match self {
            Self::Process => process_io(),
            #[cfg(feature = "postgres")]
            Self::Postgres(client) => {
                let row = client
                    .query_one(
                        "SELECT pg_current_wal_lsn()::text, blks_read \
                         FROM pg_stat_database WHERE datname = current_database()",
                        &[],
                    )
                    .await
                    .unwrap();
                let lsn: String = row.get(0);
                let (high, low) = lsn.split_once('/').expect("an LSN is HIGH/LOW");
                let parse = |hex: &str| u64::from_str_radix(hex, 16).unwrap();
                let blocks: i64 = row.get(1);
                Io {
                    written: (parse(high) << 32) + parse(low),
                    pages_read: blocks as f64,
                }
            }
        }
    }
}

fn process_io() -> Io {
    let text = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io is readable");
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    Io {
        pages_read: field("rchar:") as f64 / 4096.0,
        written: field("wchar:"),
    }
}
