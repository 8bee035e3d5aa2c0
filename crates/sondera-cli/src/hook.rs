//! `sondera hook <agent>`: one coding-agent hook call, judged in process or
//! on a server; and `sondera hooks install|uninstall|status`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use sondera_harness::{Adjudicator, RemoteConfig};
use sondera_hooks::install::{self, Scope};
use sondera_hooks::{CodingAgent, Escalation, HookCall, HookJudge, Judged, MAX_INPUT_BYTES};
use sondera_store::{MemoryStore, SqliteStore, TrajectoryStore};

use crate::{PolicyArgs, StoreArgs};

// `sondera hook ...` parsed on its own (see `main`).
#[derive(Debug, clap::Parser)]
#[command(
    name = "sondera hook",
    bin_name = "sondera hook",
    version,
    about = "Answer one coding agent's hook call (its JSON on standard input) in the agent's dialect"
)]
pub(crate) struct HookCommandLine {
    #[command(flatten)]
    pub(crate) args: HookArgs,
}

#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The agent calling: claude-code, gemini-cli, cursor, copilot or codex.
    #[arg(value_parser = parse_agent)]
    agent: CodingAgent,
    /// The event, for inputs that do not name it (Copilot CLI's).
    event: Option<String>,
    #[command(flatten)]
    policies: PolicyArgs,
    #[command(flatten)]
    store: StoreArgs,
    /// Judge on this harness server (its gRPC address) instead of in process.
    /// Default: SONDERA_HARNESS_ENDPOINT, then ~/.sondera/env; in process when neither is set.
    #[arg(long, value_name = "ENDPOINT")]
    server: Option<String>,
    /// Who decides an escalated step: `agent` (the person at the agent, through its own
    /// prompt where it has one) or `operators` (the server's, waited for up to --wait).
    #[arg(
        long,
        value_name = "WHO",
        env = "SONDERA_HOOK_ESCALATE",
        default_value = "agent"
    )]
    escalate: String,
    /// Seconds to wait for an operator before refusing the step.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "SONDERA_HOOK_WAIT",
        default_value = "90"
    )]
    wait: String,
    /// Seconds judging may take before the step is refused.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "SONDERA_HOOK_TIMEOUT",
        default_value = "10"
    )]
    timeout: String,
}

fn parse_agent(name: &str) -> Result<CodingAgent, String> {
    name.parse()
        .map_err(|e: sondera_hooks::UnknownAgent| e.to_string())
}

/// Answers one hook call. Every way this can fail (bad settings, input,
/// an unreachable server, a panic) is answered as a refusal the agent
/// cannot read as "go ahead".
pub(crate) fn run(args: HookArgs) -> anyhow::Result<ExitCode> {
    let agent = args.agent;
    let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| judge(&args)))
        .unwrap_or_else(|_| Err(anyhow::anyhow!("the hook panicked")))
        .unwrap_or_else(|e| Judged::failed(agent, args.event.as_deref(), format!("{e:#}")));
    let answer = judged.command();
    std::io::stdout().write_all(answer.stdout.as_bytes())?;
    std::io::stderr().write_all(answer.stderr.as_bytes())?;
    Ok(ExitCode::from(answer.exit_code))
}

fn judge(args: &HookArgs) -> anyhow::Result<Judged> {
    let escalation = match args.escalate.as_str() {
        "agent" => Escalation::Agent,
        "operators" => Escalation::Operators(seconds(&args.wait, "--wait")?),
        other => {
            anyhow::bail!("--escalate (SONDERA_HOOK_ESCALATE) is `{other}`: use agent or operators")
        }
    };
    let bound = seconds(&args.timeout, "--timeout")?
        + match escalation {
            Escalation::Operators(wait) => wait,
            Escalation::Agent => Duration::ZERO,
        };
    let input = read_input(seconds(&args.timeout, "--timeout")?)?;
    let user = std::env::var("USER").ok();
    let event = args.event.as_deref();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // The connection's background tasks start on this runtime.
    let _entered = runtime.enter();
    let judged = match remote_config(args)? {
        Some(mut config) => {
            config.timeout = seconds(&args.timeout, "--timeout")?;
            let judge = HookJudge::new(sondera_harness::remote::Connection::lazy(&config)?)
                .escalation(escalation)
                .user(user);
            runtime.block_on(within(bound, judge.judge(args.agent, event, &input)))
        }
        None => {
            let adjudicator = Arc::new(local_adjudicator(args, &input)?);
            crate::keep_policies_until_exit(&adjudicator);
            let judge = HookJudge::new(adjudicator)
                .escalation(escalation)
                .user(user);
            runtime.block_on(within(bound, judge.judge(args.agent, event, &input)))
        }
    };
    judged.with_context(|| format!("the step was not judged within {}s", bound.as_secs()))
}

async fn within<T>(bound: Duration, work: impl Future<Output = T>) -> anyhow::Result<T> {
    Ok(tokio::time::timeout(bound, work).await?)
}

fn seconds(value: &str, flag: &str) -> anyhow::Result<Duration> {
    let seconds: u64 = value
        .trim()
        .parse()
        .ok()
        .filter(|s| *s > 0)
        .with_context(|| format!("{flag} is `{value}`: give a whole number of seconds above 0"))?;
    Ok(Duration::from_secs(seconds))
}

/// The hook input, read to its end within `bound`: an agent that never
/// closes standard input gets a refusal in time, not its own timeout (which
/// most agents read as "go ahead").
fn read_input(bound: Duration) -> anyhow::Result<Vec<u8>> {
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut input = Vec::new();
        let read = std::io::stdin()
            .take(MAX_INPUT_BYTES as u64 + 1)
            .read_to_end(&mut input)
            .map(|_| input);
        let _ = sender.send(read);
    });
    match received.recv_timeout(bound) {
        Ok(read) => Ok(read.context("reading the hook input")?),
        Err(_) => anyhow::bail!(
            "the hook input did not end within {}s (standard input was not closed)",
            bound.as_secs()
        ),
    }
}

fn remote_config(args: &HookArgs) -> anyhow::Result<Option<RemoteConfig>> {
    let named =
        args.server.is_some() || std::env::var_os(sondera_harness::remote::ENDPOINT_VAR).is_some();
    match RemoteConfig::resolve(args.server.clone(), None) {
        Ok(config) => Ok(Some(config)),
        // Named but unusable is a failure, never a quiet fall back to in process.
        Err(e) if named => Err(e.into()),
        Err(_) => Ok(None),
    }
}

/// The adjudicator in process: the policies (built-in packs or the given
/// directories) with the session's working directory as the workspace
/// unless one is given, and the embedded store.
fn local_adjudicator(args: &HookArgs, input: &[u8]) -> anyhow::Result<Adjudicator> {
    let cwd = HookCall::parse(args.agent, args.event.as_deref(), input)
        .ok()
        .and_then(|call| call.cwd);
    let engine = args.policies.engine_in(cwd)?;
    let store: Arc<dyn TrajectoryStore> = match args.store.data_dir()? {
        Some(dir) => Arc::new(
            SqliteStore::open_dir(&dir)
                .with_context(|| format!("opening the store in {}", dir.display()))?,
        ),
        None => Arc::new(MemoryStore::new()),
    };
    Ok(Adjudicator::new(engine, store))
}

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Add `sondera hook <agent>` to the agent's hook configuration for every event it is
    /// judged at (tool calls of every tool, MCP and sub-agents' included, their results,
    /// prompts, the session's start and end). Merges with what is there, changes nothing
    /// when it is installed already, and keeps the previous file as <file>.sondera-backup.
    Install(ScopeArgs),
    /// Remove exactly the handlers `install` added.
    Uninstall(ScopeArgs),
    /// Show, for every agent, where our handlers are installed.
    Status {
        /// The project to look in. Default: the current directory.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ScopeArgs {
    /// The agent: claude-code, gemini-cli, cursor, copilot or codex.
    #[arg(value_parser = parse_agent)]
    agent: CodingAgent,
    /// In this project's configuration (the default, with the current directory).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with = "user")]
    project: Option<PathBuf>,
    /// In the user's configuration, under $HOME.
    #[arg(long)]
    user: bool,
    /// The `sondera` binary the hook runs. Default: this one.
    #[arg(long, value_name = "PATH")]
    program: Option<PathBuf>,
}

impl ScopeArgs {
    fn scope(&self) -> anyhow::Result<Scope> {
        if self.user {
            return Ok(Scope::User(home()?));
        }
        let dir = self.project.clone().unwrap_or_else(|| PathBuf::from("."));
        Ok(Scope::Project(std::path::absolute(&dir)?))
    }

    fn program(&self) -> anyhow::Result<String> {
        let path = match &self.program {
            Some(path) => std::path::absolute(path)?,
            None => std::env::current_exe().context("finding this sondera binary")?,
        };
        path.to_str()
            .map(str::to_string)
            .context("the sondera binary's path is not UTF-8; give --program")
    }
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set: give --project instead")
}

pub(crate) fn hooks(command: HooksCommand) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match command {
        HooksCommand::Install(args) => {
            let path = install::config_path(args.agent, &args.scope()?);
            let report = install::install(args.agent, &path, &args.program()?)?;
            print_report(&mut out, args.agent, &report, "installed already")?;
        }
        HooksCommand::Uninstall(args) => {
            let path = install::config_path(args.agent, &args.scope()?);
            let report = install::uninstall(args.agent, &path)?;
            print_report(&mut out, args.agent, &report, "not installed")?;
        }
        HooksCommand::Status { project } => {
            let project = std::path::absolute(project.unwrap_or_else(|| PathBuf::from(".")))?;
            let mut scopes = vec![Scope::Project(project)];
            scopes.extend(home().ok().map(Scope::User));
            for agent in CodingAgent::ALL {
                for scope in &scopes {
                    let path = install::config_path(agent, scope);
                    let events = install::installed(agent, &path)?;
                    let state = if events.is_empty() {
                        "not installed".to_string()
                    } else {
                        events.join(", ")
                    };
                    writeln!(out, "{agent:<12} {}: {state}", path.display())?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(
    out: &mut impl Write,
    agent: CodingAgent,
    report: &install::Report,
    unchanged: &str,
) -> anyhow::Result<()> {
    writeln!(out, "{agent}: {}", report.path.display())?;
    if report.changes.is_empty() {
        writeln!(out, "  {unchanged}; nothing changed")?;
    }
    for change in &report.changes {
        writeln!(out, "  {change}")?;
    }
    if let Some(backup) = &report.backup {
        writeln!(out, "  the previous file is kept as {}", backup.display())?;
    }
    Ok(())
}
