//! `sondera`: the command line of Sondera Harness. This crate only wires the
//! library crates together; the work happens in them.

mod adjudicate;
mod approvals;
mod bench;
mod config;
mod explain;
mod grants;
mod health;
mod history;
mod hook;
mod import;
mod inert;
mod logs;
mod policy_check;
mod policy_fmt;
mod policy_revisions;
mod policy_test;
mod prune;
mod replay;
mod serve;
mod tail;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use sondera_model::{Decision, Mode};

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
    /// Work with policies.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Re-judge recorded trajectories under candidate policies and report every decision that
    /// would change (before -> after, with the deciding policies), with totals. Nothing is written.
    ///
    /// Each trajectory is re-judged in order from its start, with state evolving under the
    /// candidate's own decisions. Exit status: 0 when no decision changes, 1 when some do,
    /// 2 on errors.
    Replay(ReplayArgs),
    /// Convert another agent's permission rules into Cedar policies (printed, or written
    /// with --output), matched per simple command over the shell analysis.
    ///
    /// Deny becomes a forbid, ask an escalating forbid, allow a permit; Gemini CLI priorities
    /// are kept. Rules that cannot be expressed are listed on standard error. Exit status: 0
    /// when every rule was imported, 1 when some were not, 2 on errors.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Recorded trajectories, in a local data directory or on a server (--server).
    #[command(subcommand)]
    Trajectories(TrajectoriesCommand),
    /// Recorded denials and escalations, in a local data directory or on a server, newest first.
    #[command(subcommand)]
    Adjudications(AdjudicationsCommand),
    /// Escalated steps waiting for an operator on a server: list, show, approve, deny.
    /// Needs an operator token (`sondera token new --tenant T --role operator`).
    #[command(subcommand)]
    Approvals(approvals::ApprovalsCommand),
    /// Standing ("always") approvals kept for an agent on a server: list them, revoke one.
    #[command(subcommand)]
    Grants(grants::GrantsCommand),
    /// Run the harness service: gRPC and HTTP over one adjudicator, recording to a store.
    ///
    /// Defaults work with no configuration: 127.0.0.1:50051 (gRPC) and 127.0.0.1:8080 (HTTP),
    /// SQLite under ~/.sondera/data, the built-in policy packs. Policies reload on SIGHUP and
    /// when files under --policies change; an invalid set is refused and the running one stays.
    /// SIGINT or SIGTERM stops accepting, lets in-flight requests finish and exits 0.
    Serve(Box<serve::ServeArgs>),
    /// Remove ended trajectories past retention (--retain-days, --retain-trajectories)
    /// from a store, in batches; running trajectories, pending approvals and grants stay.
    /// `sondera serve` does the same in the background with the same flags.
    Prune(prune::PruneArgs),
    /// Whether a server answers its health check (`/healthz`): exit status 0 when it
    /// does, 1 when it answers otherwise, 2 when it cannot be reached.
    Health(health::HealthArgs),
    /// Make bearer tokens for `sondera serve --token`.
    #[command(subcommand)]
    Token(serve::TokenCommand),
    /// Follow a server's live event stream, one line per event, decisions highlighted.
    Tail(tail::TailArgs),
    /// Answer one coding agent's hook call (its JSON on standard input): judge the step in
    /// process (the policies, the embedded store) or on a server (--server,
    /// SONDERA_HARNESS_ENDPOINT), and answer in the agent's dialect.
    ///
    /// Every failure (bad input, an unknown event, an unreachable server, a step not judged
    /// within --timeout) is answered so that the step does not run: exit status 2 with the
    /// reason on standard error, or for Copilot CLI, which runs the tool on any other failed
    /// exit, a refusal it reads. Set up with `sondera hooks install <agent>`.
    Hook(Box<hook::HookArgs>),
    /// Put `sondera hook` in a coding agent's hook configuration, take it out, or show where
    /// it is.
    #[command(subcommand)]
    Hooks(hook::HooksCommand),
    /// Load-test a harness server (an embedded one unless --server is given): concurrent
    /// trajectories over gRPC, with throughput and latency percentiles, and the ratio of an
    /// adjudication's round trip to an empty Health round trip on the same connection.
    Bench(bench::BenchArgs),
    /// Print a completion script for a shell, e.g. `sondera completions bash > /etc/bash_completion.d/sondera`.
    Completions { shell: clap_complete::Shell },
    /// Print the version.
    Version,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Load and validate policies against the schema, and report every problem with its
    /// file:line:col, policy id and the source line it points at.
    ///
    /// Errors stop the set from loading (bad syntax, type errors, unknown attributes,
    /// duplicate ids). Warnings are policies that load but are probably wrong: ones Cedar's
    /// validator finds can never apply, ones repeating another's scope and conditions, and
    /// missing @description or @severity.
    ///
    /// Exit status: 0 when the set is valid, 1 with --deny-warnings and any warning,
    /// 2 when it does not load.
    Check {
        /// Policy directories; the built-in packs when none is given.
        #[arg(value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Exit 1 when there are warnings.
        #[arg(long)]
        deny_warnings: bool,
        /// One JSON report instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Format Cedar policy files (`.cedar`, directories searched recursively).
    ///
    /// Exit status: 0 when done (or, with --check, when everything is formatted), 1 with
    /// --check when some file is not, 2 when a file cannot be parsed.
    Fmt {
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Change nothing; list the files that are not formatted.
        #[arg(long)]
        check: bool,
    },
    /// Push a policy directory to a server as a new revision of the policies every server
    /// sharing its store judges by (needs an admin token; the server must take its
    /// policies from the store). The set is validated here and again on the server.
    Push {
        #[command(flatten)]
        server: ServerArgs,
        /// The directory of `.cedar` files (and `.cedarschema` fragments): the whole set,
        /// which replaces the built-in packs as a policy directory does.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// What the revision changes, kept with it.
        #[arg(long, short)]
        message: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The policy revisions a server's store keeps, newest first; `*` marks the current one.
    Revisions {
        #[command(flatten)]
        server: ServerArgs,
        #[arg(long)]
        json: bool,
    },
    /// Make an older revision current again (an admin token), by its id or a prefix of at
    /// least 6 hex digits.
    Rollback {
        #[command(flatten)]
        server: ServerArgs,
        revision: String,
        #[arg(long)]
        json: bool,
    },
    /// Show how one step is judged: the action it is classified as, the context the
    /// detectors computed for it, and the policies that decided.
    ///
    /// Give the step as an event (JSON, from a file or standard input) or as a shorthand:
    /// --shell "rm -rf /", --tool read_file --args '{"path": "~/.ssh/id_rsa"}', or
    /// --prompt "text". The step is judged as the first of a fresh trajectory.
    Explain(Box<ExplainArgs>),
    /// Run policy test cases (JSON lines, see tests/corpus/FORMAT.md) and report each failure,
    /// block recall and false-positive rate per category, and `N passed, M failed`.
    ///
    /// Each case runs as its own trajectory through a local harness; tool steps are classified
    /// exactly as live tool calls are. Exit status: 0 when every case passes, 1 when any fails,
    /// 2 when the policies or cases cannot be loaded.
    Test {
        /// Case files.
        #[arg(required = true, value_name = "CASES.jsonl")]
        files: Vec<PathBuf>,
        /// Test the policies in DIR instead of the built-in packs; repeatable.
        #[arg(long = "policies", value_name = "DIR")]
        policies: Vec<PathBuf>,
        /// One JSON object per case instead of the report.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("step").args(["event", "shell", "tool", "prompt", "case"]).required(true)))]
struct ExplainArgs {
    /// An event in the wire format; `-` reads standard input.
    #[arg(value_name = "EVENT.json|-")]
    event: Option<String>,
    /// A shell command, as a `bash` tool call.
    #[arg(long, value_name = "COMMAND")]
    shell: Option<String>,
    /// The working directory of --shell.
    #[arg(long, value_name = "DIR", requires = "shell")]
    cwd: Option<String>,
    /// A tool call by name, classified as live calls are.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// The arguments of --tool, a JSON object.
    #[arg(long, value_name = "JSON", requires = "tool")]
    args: Option<String>,
    /// A user prompt.
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,
    /// A policy test case (tests/corpus/FORMAT.md): its steps are judged in
    /// order and the last one is explained with the state they left, with
    /// where each value it acts on came from.
    #[arg(long, value_name = "CASES.jsonl")]
    case: Option<String>,
    /// Which case of --case to explain, when the file holds several.
    #[arg(long, value_name = "ID", requires = "case")]
    id: Option<String>,
    #[command(flatten)]
    policies: PolicyArgs,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Largest event accepted, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    max_event_bytes: usize,
}

#[derive(Debug, Subcommand)]
enum ImportCommand {
    /// Claude Code settings (`permissions.allow|ask|deny`, `Bash(cmd:*)`, `Read(./.env)`, ...).
    ClaudeCode {
        #[arg(value_name = "SETTINGS.json")]
        file: PathBuf,
        /// Write the policies here instead of standard output.
        #[arg(long, short, value_name = "FILE.cedar")]
        output: Option<PathBuf>,
    },
    /// A Gemini CLI policy file (`[[rule]]` with toolName, commandPrefix, commandRegex,
    /// argsPattern, decision, priority).
    GeminiCli {
        #[arg(value_name = "POLICY.toml")]
        file: PathBuf,
        /// Write the policies here instead of standard output.
        #[arg(long, short, value_name = "FILE.cedar")]
        output: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
enum TrajectoriesCommand {
    /// List trajectories, most recently updated first.
    List {
        #[command(flatten)]
        store: RecordsArgs,
        #[arg(long, value_name = "AGENT_ID")]
        agent: Option<String>,
        /// pending, running, completed, failed, terminated or suspended.
        #[arg(long)]
        status: Option<String>,
        #[arg(long, value_name = "SESSION_ID")]
        session: Option<String>,
        /// Only trajectories with a denied (deny) or escalated (escalate) step, or with every
        /// step allowed (allow).
        #[arg(long)]
        decision: Option<Decision>,
        /// Only trajectories where this policy denied or escalated a step (or, in shadow
        /// mode, would have).
        #[arg(long, value_name = "POLICY_ID")]
        policy: Option<String>,
        /// Only trajectories recorded to at or after this time (RFC 3339).
        #[arg(long, value_name = "TIME")]
        since: Option<chrono::DateTime<chrono::Utc>>,
        /// Only trajectories created before this time (RFC 3339).
        #[arg(long, value_name = "TIME")]
        until: Option<chrono::DateTime<chrono::Utc>>,
        /// Only trajectories whose id, agent, session or any event contains this text,
        /// ignoring case.
        #[arg(long)]
        text: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per trajectory.
        #[arg(long)]
        json: bool,
    },
    /// One trajectory with its events and verdicts. Exit status 1 when it is not recorded.
    Show {
        #[command(flatten)]
        store: RecordsArgs,
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum AdjudicationsCommand {
    /// List denials and escalations, newest first.
    List {
        #[command(flatten)]
        store: RecordsArgs,
        #[arg(long, value_name = "AGENT_ID")]
        agent: Option<String>,
        #[arg(long, value_name = "TRAJECTORY_ID")]
        trajectory: Option<String>,
        /// Only `deny` or only `escalate`.
        #[arg(long)]
        decision: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per adjudication.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The candidate policies (`--policies DIR`, repeatable; the built-in packs when none).
    #[command(flatten)]
    policies: PolicyArgs,
    #[command(flatten)]
    store: RecordsArgs,
    /// Only trajectories updated since this time (RFC 3339, e.g. 2026-11-30T00:00:00Z).
    #[arg(long, value_name = "TIME")]
    since: Option<chrono::DateTime<chrono::Utc>>,
    /// Only trajectories of this agent.
    #[arg(long, value_name = "AGENT_ID")]
    agent: Option<String>,
    /// Judge by a policy revision the server's store keeps (its id or a prefix of 6+
    /// digits, from `sondera policy revisions`) instead of --policies; needs --server.
    #[arg(
        long,
        value_name = "REVISION",
        requires = "server",
        conflicts_with = "dirs"
    )]
    revision: Option<String>,
    /// One JSON object per changed decision, then one with the totals.
    #[arg(long)]
    json: bool,
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

/// Which harness server to talk to.
#[derive(Debug, Args)]
struct ServerArgs {
    /// The server's gRPC address (host:port or URL). Default: SONDERA_HARNESS_ENDPOINT,
    /// else ~/.sondera/env.
    #[arg(long, value_name = "ENDPOINT")]
    server: Option<String>,
    /// Bearer token. Default: SONDERA_API_TOKEN, else ~/.sondera/env.
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// A PEM CA certificate to trust for an https:// server.
    #[arg(long, value_name = "FILE")]
    ca_cert: Option<PathBuf>,
}

impl ServerArgs {
    /// A connection driven by the commands' shared runtime.
    fn connection(&self) -> anyhow::Result<sondera_harness::remote::Connection> {
        // The connection's background task belongs to the runtime that drives it.
        let _runtime = runtime().enter();
        self.connection_here()
    }

    /// Where the server is and how to reach it.
    fn config(&self) -> anyhow::Result<sondera_harness::RemoteConfig> {
        let mut config =
            sondera_harness::RemoteConfig::resolve(self.server.clone(), self.token.clone())?;
        config.ca_certificate = self.ca_cert.clone();
        Ok(config)
    }

    /// A connection driven by the runtime this is called in.
    fn connection_here(&self) -> anyhow::Result<sondera_harness::remote::Connection> {
        let config = self.config()?;
        Ok(sondera_harness::remote::Connection::lazy(&config)?)
    }
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
    /// The agent's workspace root: shell paths outside it are reported. Default: the current directory.
    #[arg(long, value_name = "DIR", env = "SONDERA_WORKSPACE")]
    workspace: Option<String>,
    /// What `~` and `$HOME` stand for in commands. Default: $HOME.
    #[arg(long, value_name = "DIR", env = "SONDERA_HOME")]
    home: Option<String>,
    /// A host the agent may reach (`github.com`, `*.pypi.org`, an IP address);
    /// repeatable. With any given, the packs escalate reaching other hosts and
    /// deny sending data to them. Default: no allowlist.
    #[arg(
        long = "allow-host",
        value_name = "HOST",
        env = "SONDERA_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    allowed_hosts: Vec<String>,
}

impl PolicyArgs {
    /// Builds the policy set these arguments name, for a server that loads it
    /// again on every reload. Warnings of the first load go to standard error.
    fn loader(&self) -> anyhow::Result<sondera_server::PolicyLoader> {
        let (dirs, mode, workspace) = (self.dirs.clone(), self.mode, self.workspace());
        let hosts = self.allowed_hosts()?;
        let loader: sondera_server::PolicyLoader = std::sync::Arc::new(move || {
            sondera_policy::PolicyEngine::builder()
                .builtin_or_directories(dirs.iter().cloned())
                .mode(mode)
                .workspace(workspace.clone())
                .allowed_hosts(hosts.clone())
                .build()
        });
        for warning in loader()?.warnings() {
            eprintln!("warning: {warning}");
        }
        Ok(loader)
    }

    /// A builder with these arguments' mode, workspace and hosts but no
    /// policies, for sets pushed to the store.
    fn builder(&self) -> anyhow::Result<sondera_server::PolicyBuilder> {
        let (mode, workspace, hosts) = (self.mode, self.workspace(), self.allowed_hosts()?);
        Ok(std::sync::Arc::new(move || {
            sondera_policy::PolicyEngine::builder()
                .mode(mode)
                .workspace(workspace.clone())
                .allowed_hosts(hosts.clone())
        }))
    }

    /// Loads the policy set these arguments name; warnings go to standard error.
    fn engine(&self) -> anyhow::Result<sondera_policy::PolicyEngine> {
        self.engine_in(None)
    }

    /// The engine, with `root` as the workspace when --workspace is not given.
    fn engine_in(&self, root: Option<String>) -> anyhow::Result<sondera_policy::PolicyEngine> {
        let mut workspace = self.workspace();
        if let Some(root) = root.filter(|_| self.workspace.is_none()) {
            workspace = sondera_policy::Workspace::new(root, workspace.home);
        }
        let engine = sondera_policy::PolicyEngine::builder()
            .builtin_or_directories(self.dirs.iter().cloned())
            .mode(self.mode)
            .workspace(workspace)
            .allowed_hosts(self.allowed_hosts()?)
            .build()?;
        for warning in engine.warnings() {
            eprintln!("warning: {warning}");
        }
        Ok(engine)
    }

    fn allowed_hosts(&self) -> anyhow::Result<sondera_policy::HostAllowlist> {
        Ok(sondera_policy::HostAllowlist::new(&self.allowed_hosts)?)
    }

    fn workspace(&self) -> sondera_policy::Workspace {
        let process = sondera_policy::Workspace::from_process();
        sondera_policy::Workspace::new(
            self.workspace.clone().unwrap_or(process.root),
            self.home.clone().unwrap_or(process.home),
        )
    }
}

/// How long ended trajectories are kept.
#[derive(Debug, Clone, Args)]
struct RetentionArgs {
    /// Keep ended trajectories this many days after their last step: `DAYS` for every
    /// tenant, `TENANT=DAYS` for one; repeatable or comma-separated. Running
    /// trajectories, pending approvals and grants are always kept.
    #[arg(
        long,
        value_name = "[TENANT=]DAYS",
        env = "SONDERA_RETAIN_DAYS",
        value_delimiter = ','
    )]
    retain_days: Vec<sondera_store::RetentionSetting>,
    /// Keep at most this many ended trajectories, the most recently ended: `N` for every
    /// tenant, `TENANT=N` for one; repeatable or comma-separated.
    #[arg(
        long,
        value_name = "[TENANT=]N",
        env = "SONDERA_RETAIN_TRAJECTORIES",
        value_delimiter = ','
    )]
    retain_trajectories: Vec<sondera_store::RetentionSetting>,
}

impl RetentionArgs {
    fn rules(&self) -> anyhow::Result<sondera_store::RetentionRules> {
        let mut rules = sondera_store::RetentionRules::default();
        for days in &self.retain_days {
            rules.days(days)?;
        }
        for count in &self.retain_trajectories {
            rules.trajectories(count);
        }
        Ok(rules)
    }
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
        data_dir_or_default(self.data_dir.as_ref()).map(Some)
    }
}

/// `dir`, or `~/.sondera/data`.
fn data_dir_or_default(dir: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = dir {
        return Ok(dir.clone());
    }
    sondera_harness::default_data_dir()
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: give the data directory or store"))
}

/// Where recorded trajectories are read from: a local data directory, or a
/// harness server when --server is given.
#[derive(Debug, Args)]
struct RecordsArgs {
    /// The local data directory (SQLite). Default: ~/.sondera/data.
    #[arg(long, value_name = "DIR", env = "SONDERA_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Only this tenant's records, in a data directory a server wrote. Lists
    /// show every tenant's without it; `show` looks among the default
    /// tenant's. A server decides the tenant from the token instead.
    #[arg(long, value_name = "TENANT", conflicts_with = "server")]
    tenant: Option<sondera_store::TenantId>,
    #[command(flatten)]
    remote: ServerArgs,
}

impl RecordsArgs {
    /// Whose records a listing covers.
    fn tenants(&self) -> sondera_store::Tenants<'_> {
        self.tenant
            .as_ref()
            .map_or(sondera_store::Tenants::All, sondera_store::Tenants::Only)
    }

    /// The tenant whose trajectory `show` reads.
    fn tenant(&self) -> sondera_store::TenantId {
        self.tenant.clone().unwrap_or_default()
    }

    /// The store of recorded trajectories, for commands that read them.
    fn open_recorded(&self) -> anyhow::Result<std::sync::Arc<dyn sondera_store::Records>> {
        if self.remote.server.is_some() {
            let connection = self.remote.connection()?;
            return Ok(std::sync::Arc::new(sondera_harness::RemoteRecords::new(
                connection,
            )));
        }
        let dir = data_dir_or_default(self.data_dir.as_ref())?;
        Ok(std::sync::Arc::new(sondera_store::SqliteStore::open_dir(
            &dir,
        )?))
    }
}

/// The single-threaded runtime every command but `serve` runs on. One for
/// the whole process, so a server connection made in one call serves the next.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a Tokio runtime starts")
    })
}

/// Keeps the policy engine of a one-shot command's `adjudicator` alive
/// until the process exits: the operating system takes its memory back
/// then, where freeing its many small allocations one by one would cost
/// more than judging a step (1.5 million instructions; see BENCHMARKS.md).
/// The store is closed as usual.
fn keep_policies_until_exit(adjudicator: &sondera_harness::Adjudicator) {
    std::mem::forget(adjudicator.engine());
}

/// Runs `future` to completion on [`runtime`].
fn block_on<F: std::future::Future>(future: F) -> anyhow::Result<F::Output> {
    Ok(runtime().block_on(future))
}

/// A progress bar on standard error, drawn only when it is a terminal: a
/// bar out of `total`, or a spinner when the total is unknown.
fn progress(total: Option<u64>, unit: &str) -> indicatif::ProgressBar {
    let (bar, template) = match total {
        Some(total) => (
            indicatif::ProgressBar::new(total),
            format!("{{bar:40}} {{pos}}/{{len}} {unit} ({{eta}} left)"),
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            format!("{{spinner}} {{pos}} {unit} ({{per_sec}})"),
        ),
    };
    bar.with_style(indicatif::ProgressStyle::with_template(&template).expect("valid template"))
}

/// The command line, with `serve --config`'s file merged in; on an error,
/// the exit code once it is printed.
fn parse_command_line() -> Result<(Cli, config::Layered), ExitCode> {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let command = Cli::command();
    let parsed = match config::parse(&command, std::env::args_os().collect()) {
        Ok(parsed) => parsed,
        Err(config::ParseError::Clap(e)) => e.exit(),
        Err(config::ParseError::Config(e)) => {
            anstream::eprintln!("error: {e}");
            return Err(ExitCode::from(2));
        }
        Err(config::ParseError::Merged(file, e)) => {
            eprintln!("with the settings of {}:", file.display());
            e.exit()
        }
    };
    let cli = Cli::from_arg_matches(&parsed.matches).unwrap_or_else(|e| e.exit());
    Ok((cli, parsed.layered))
}

/// `n` with the noun that goes with it: `1 policy`, `3 policies`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn main() -> ExitCode {
    // A coding agent starts `sondera hook` for every tool call: its
    // arguments are read alone, without building every other command's.
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") {
        logs::init_command();
        let words = std::env::args_os()
            .take(1)
            .chain(std::env::args_os().skip(2));
        return hook::run(hook::HookCommandLine::parse_from(words).args).unwrap_or_else(|e| {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        });
    }
    let (cli, layered) = match parse_command_line() {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    match &cli.command {
        Command::Serve(args) => logs::init_server(args.log_format, "info"),
        _ => logs::init_command(),
    }
    let result = match cli.command {
        Command::Adjudicate(args) => adjudicate::run(args),
        Command::Policy(PolicyCommand::Test {
            files,
            policies,
            json,
        }) => policy_test::run(&files, &policies, json),
        Command::Policy(PolicyCommand::Check {
            dirs,
            deny_warnings,
            json,
        }) => policy_check::run(&dirs, deny_warnings, json),
        Command::Policy(PolicyCommand::Fmt { paths, check }) => policy_fmt::run(&paths, check),
        Command::Policy(PolicyCommand::Explain(args)) => explain::run(*args),
        Command::Policy(PolicyCommand::Push {
            server,
            dir,
            message,
            json,
        }) => policy_revisions::push(&server, &dir, message, json),
        Command::Policy(PolicyCommand::Revisions { server, json }) => {
            policy_revisions::revisions(&server, json)
        }
        Command::Policy(PolicyCommand::Rollback {
            server,
            revision,
            json,
        }) => policy_revisions::rollback(&server, revision, json),
        Command::Replay(args) => replay::run(args),
        Command::Import(command) => import::run(command),
        Command::Trajectories(command) => history::trajectories(command),
        Command::Adjudications(command) => history::adjudications(command),
        Command::Approvals(command) => approvals::run(command),
        Command::Grants(command) => grants::run(command),
        Command::Serve(args) => serve::run(*args, layered),
        Command::Token(command) => serve::token(command),
        Command::Prune(args) => prune::run(args),
        Command::Health(args) => health::run(args),
        Command::Tail(args) => tail::run(args),
        Command::Hook(args) => hook::run(*args),
        Command::Hooks(command) => hook::hooks(command),
        Command::Bench(args) => bench::run(args),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "sondera",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Version => {
            println!("sondera {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
    };
    logs::flush();
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::from(2)
    })
}
