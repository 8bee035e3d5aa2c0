//! `sondera`: the command line of Sondera Harness. This crate only wires the
//! library crates together; the work happens in them.

mod adjudicate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use sondera_model::Mode;

#[derive(Debug, Parser)]
#[command(
    name = "sondera",
    version,
    about = "Deterministic runtime governance for AI agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Judge trajectory events (JSON lines) against the policies and print one verdict per event.
    ///
    /// Each input line is one event in the wire format (see schema/event.schema.json).
    /// A trajectory starts with a `started` event; later events of it are judged
    /// with the state the earlier ones left. Events are recorded in the data
    /// directory unless --ephemeral is given.
    ///
    /// Exit status: 0 when every event was allowed, 1 when any was denied or
    /// escalated, 2 when any line could not be judged (bad input, store failure).
    Adjudicate(AdjudicateArgs),
    /// Print the version.
    Version,
}

#[derive(Debug, Args)]
struct AdjudicateArgs {
    /// File of JSON-lines events; `-` or nothing reads standard input.
    #[arg(value_name = "FILE|-")]
    input: Option<PathBuf>,
    #[command(flatten)]
    policies: PolicyArgs,
    #[command(flatten)]
    store: StoreArgs,
    /// Print one JSON object per event instead of text.
    #[arg(long)]
    json: bool,
    /// Largest event accepted, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    max_event_bytes: usize,
}

#[derive(Debug, Args)]
struct PolicyArgs {
    /// Load policies (`.cedar`) and schema fragments (`.cedarschema`) from DIR
    /// instead of the built-in packs; repeatable.
    #[arg(
        long = "policies",
        value_name = "DIR",
        env = "SONDERA_POLICIES",
        value_delimiter = ','
    )]
    dirs: Vec<PathBuf>,
    /// govern enforces; monitor records but always allows; steer adds correction text.
    #[arg(long, default_value = "govern", env = "SONDERA_MODE")]
    mode: Mode,
}

#[derive(Debug, Args)]
struct StoreArgs {
    /// Where trajectories are recorded (SQLite). Default: ~/.sondera/data.
    #[arg(
        long,
        value_name = "DIR",
        env = "SONDERA_DATA_DIR",
        conflicts_with = "ephemeral"
    )]
    data_dir: Option<PathBuf>,
    /// Keep nothing: record trajectories in memory only.
    #[arg(long)]
    ephemeral: bool,
}

impl StoreArgs {
    fn data_dir(&self) -> anyhow::Result<Option<PathBuf>> {
        if self.ephemeral {
            return Ok(None);
        }
        if let Some(dir) = &self.data_dir {
            return Ok(Some(dir.clone()));
        }
        let home = std::env::var_os("HOME")
            .ok_or_else(|| anyhow::anyhow!("HOME is not set: pass --data-dir or --ephemeral"))?;
        Ok(Some(PathBuf::from(home).join(".sondera").join("data")))
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SONDERA_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Adjudicate(args) => adjudicate::run(args),
        Command::Version => {
            println!("sondera {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::from(2)
    })
}
