//! `sondera serve`: the harness service, and `sondera token`: making the
//! tokens it accepts.

use std::io::Read as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};

use sondera_server::{Access, Limits, PolicyLoader, Server, TlsFiles, TokenLoader, Tokens};

use crate::PolicyArgs;
use crate::config::{self, Layered};

mod reload;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// A TOML file of settings: each key is one of these flags without its dashes
    /// (`grpc-addr = "0.0.0.0:50051"`, `token = ["acme=sha256:..."]`, `public-metrics = true`).
    /// A flag or its environment variable wins over the file; SIGHUP reads it again.
    #[arg(long, value_name = "FILE", env = "SONDERA_CONFIG")]
    config: Option<PathBuf>,
    /// Print the configuration in force, with where each value came from (secrets
    /// redacted), as a file --config reads, and exit.
    #[arg(long)]
    print_config: bool,
    /// How log lines are written to standard error: `text`, or `json` (one object per
    /// line). SONDERA_LOG sets what is logged (default `info` for the server).
    #[arg(long, value_enum, default_value = "text", env = "SONDERA_LOG_FORMAT")]
    pub(crate) log_format: crate::logs::LogFormat,
    /// Where gRPC listens.
    #[arg(long, default_value = "127.0.0.1:50051", env = "SONDERA_GRPC_ADDR")]
    grpc_addr: SocketAddr,
    /// Where HTTP (JSON under /v1, SSE, /healthz, /metrics) listens.
    #[arg(long, default_value = "127.0.0.1:8080", env = "SONDERA_HTTP_ADDR")]
    http_addr: SocketAddr,
    /// Where trajectories are recorded: a directory (SQLite inside), sqlite:FILE,
    /// postgres://..., memory, or memory:EVENTS (how many events to keep
    /// before ended trajectories are forgotten; memory keeps 100000).
    /// Default: ~/.sondera/data.
    #[arg(long, value_name = "LOCATION", env = "SONDERA_STORE")]
    store: Option<String>,
    #[command(flatten)]
    policies: PolicyArgs,
    /// Where the policies come from: `files` (--policies, or the built-in packs), `store`
    /// (the store's current pushed revision, `sondera policy push`; the built-in packs
    /// until one is pushed) or `auto`: files when --policies is given, else the store.
    /// `auto` refuses to start with --policies when the store holds a pushed revision.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        env = "SONDERA_POLICY_SOURCE"
    )]
    policy_source: PolicySource,
    /// Accept the tokens kept in the store too (`sondera token new --server`), read every
    /// second and when a shared store announces a change; every request then needs a
    /// token, even on loopback.
    #[arg(long, env = "SONDERA_TOKENS_FROM_STORE")]
    tokens_from_store: bool,
    /// Do not reload when files under --policies change (SIGHUP still reloads).
    #[arg(long)]
    no_watch: bool,
    /// A token hash and what it grants, `TENANT=sha256:HEX [role=agent|operator|admin]
    /// [name=NAME]` (see `sondera token`); an agent's unless the role says otherwise;
    /// repeatable or comma-separated. Without any, only loopback addresses are served.
    #[arg(
        long = "token",
        value_name = "TENANT=sha256:HEX",
        env = "SONDERA_TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    tokens: Vec<String>,
    /// A file of token entries, one `TENANT=sha256:HEX [role=..] [name=..]` per
    /// line (`#` comments); read again on SIGHUP.
    #[arg(long, value_name = "FILE")]
    tokens_file: Option<PathBuf>,
    /// PEM certificate chain: serve both listeners over TLS (with --tls-key).
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_key",
        env = "SONDERA_TLS_CERT"
    )]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(
        long,
        value_name = "FILE",
        requires = "tls_cert",
        env = "SONDERA_TLS_KEY"
    )]
    tls_key: Option<PathBuf>,
    /// Largest event accepted, in bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    max_event_bytes: usize,
    /// Most events in one batch.
    #[arg(long, default_value_t = 256, value_name = "N")]
    max_batch_events: usize,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = 16 << 20, value_name = "BYTES")]
    max_request_bytes: usize,
    /// Seconds a request may take, reading its body included.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    request_timeout: u64,
    /// Seconds an HTTP/1 client may take to send a request's headers.
    #[arg(long, default_value_t = Limits::default().header_read_timeout.as_secs(), value_name = "SECONDS")]
    header_timeout: u64,
    /// Seconds a connection may pass with no traffic before it is closed.
    #[arg(long, default_value_t = Limits::default().idle_timeout.as_secs(), value_name = "SECONDS")]
    idle_timeout: u64,
    /// Seconds a client may take to finish the TLS handshake.
    #[arg(long, default_value_t = Limits::default().tls_handshake_timeout.as_secs(), value_name = "SECONDS")]
    tls_handshake_timeout: u64,
    /// Connections open at once on each listener; more wait to be accepted.
    /// Keep it below the process's file descriptor limit.
    #[arg(long, default_value_t = Limits::default().max_connections, value_name = "N")]
    max_connections: usize,
    /// Connections one client address may hold open on each listener; past
    /// it, its new connections are closed at once, so one client cannot
    /// keep others out.
    #[arg(long, default_value_t = Limits::default().max_connections_per_peer, value_name = "N")]
    max_connections_per_peer: usize,
    /// A host name clients reach the HTTP listener by, besides IP addresses
    /// and `localhost` (repeatable or comma-separated). Requests naming any
    /// other host are refused, so a web page whose DNS name is pointed at
    /// this server reaches nothing.
    #[arg(
        long = "public-host",
        value_name = "NAME",
        env = "SONDERA_PUBLIC_HOSTS",
        value_delimiter = ','
    )]
    public_hosts: Vec<String>,
    /// Serve /metrics without a token on a server with tokens. Its
    /// counters sum every tenant's steps.
    #[arg(long)]
    public_metrics: bool,
    /// Live events a stream subscriber may fall behind before it is dropped.
    #[arg(long, default_value_t = 1024, value_name = "EVENTS")]
    stream_buffer: usize,
    /// Seconds an escalated step waits for an operator when its agent asks
    /// for no other deadline; then it is denied.
    #[arg(long, default_value_t = Limits::default().approval_timeout.as_secs(), value_name = "SECONDS")]
    approval_timeout: u64,
    /// The longest deadline an agent may ask an operator for.
    #[arg(long, default_value_t = Limits::default().max_approval_timeout.as_secs(), value_name = "SECONDS")]
    max_approval_timeout: u64,
    /// Notify a webhook when an approval opens, is decided or expires: `https://...`
    /// (Sondera's JSON, signed) or `slack=https://...` (a Slack incoming webhook);
    /// repeatable or comma-separated. A webhook's URL is a credential: it is never
    /// printed or logged past its host.
    #[arg(
        long = "webhook",
        value_name = "[slack=]URL",
        env = "SONDERA_WEBHOOKS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    webhooks: Vec<sondera_server::WebhookTarget>,
    /// The shared secret notifications are signed with (HMAC-SHA256 of `TIMESTAMP.BODY`
    /// in `x-sondera-signature`); at least 16 bytes. Prefer the environment variable.
    #[arg(
        long,
        value_name = "SECRET",
        env = "SONDERA_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    webhook_secret: Option<String>,
    /// A file holding the webhook secret (trailing whitespace ignored), e.g. a
    /// systemd credential; instead of --webhook-secret.
    #[arg(
        long,
        value_name = "FILE",
        env = "SONDERA_WEBHOOK_SECRET_FILE",
        conflicts_with = "webhook_secret"
    )]
    webhook_secret_file: Option<PathBuf>,
    /// Put the step itself (its command or arguments, which may hold secrets) and the
    /// reasons in notifications; without it they name the step's kind, agent and policies.
    #[arg(long)]
    webhook_include_step: bool,
    /// The dashboard's address as operators reach it, for the links in notifications.
    /// Default: this server's HTTP address.
    #[arg(long, value_name = "URL", env = "SONDERA_DASHBOARD_URL")]
    dashboard_url: Option<String>,
    #[command(flatten)]
    retention: crate::RetentionArgs,
    /// Seconds between retention passes (with --retain-days or --retain-trajectories).
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    prune_every: u64,
    /// Seconds a dashboard session may go unused before it ends.
    #[arg(long, default_value_t = Limits::default().session_idle.as_secs(), value_name = "SECONDS")]
    session_idle: u64,
    /// Seconds a dashboard session lasts after signing in, however used.
    #[arg(long, default_value_t = Limits::default().session_lifetime.as_secs(), value_name = "SECONDS")]
    session_lifetime: u64,
}

impl ServeArgs {
    fn access(&self) -> anyhow::Result<Access> {
        let tokens = load_tokens(&self.tokens, self.tokens_file.as_deref())?;
        Ok(if tokens.is_empty() {
            Access::LoopbackOnly
        } else {
            Access::Tokens(tokens)
        })
    }

    /// Reads `--token` and `--tokens-file` again, for reloads on SIGHUP.
    fn token_loader(&self) -> TokenLoader {
        let (entries, file) = (self.tokens.clone(), self.tokens_file.clone());
        Arc::new(move || load_tokens(&entries, file.as_deref()).map_err(|e| format!("{e:#}")))
    }

    fn store_location(&self) -> anyhow::Result<String> {
        match &self.store {
            Some(location) => Ok(location.clone()),
            None => Ok(crate::data_dir_or_default(None)?.display().to_string()),
        }
    }

    /// The approval notifications, when any webhook is given.
    fn webhooks(&self, scheme: &str) -> anyhow::Result<Option<sondera_server::Webhooks>> {
        if self.webhooks.is_empty() {
            return Ok(None);
        }
        let from_file = match &self.webhook_secret_file {
            Some(file) => Some(
                std::fs::read_to_string(file)
                    .map(|s| s.trim_end().to_string())
                    .map_err(|e| {
                        anyhow::anyhow!("--webhook-secret-file {}: {e}", file.display())
                    })?,
            ),
            None => None,
        };
        let secret = from_file
            .as_deref()
            .or(self.webhook_secret.as_deref())
            .map(sondera_server::WebhookSecret::new)
            .transpose()?;
        let dashboard = self
            .dashboard_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://{}", self.http_addr));
        Ok(Some(
            sondera_server::Webhooks::new(self.webhooks.clone(), secret)?
                .dashboard(dashboard)
                .include_step(self.webhook_include_step),
        ))
    }

    fn limits(&self) -> Limits {
        Limits {
            max_event_bytes: self.max_event_bytes,
            max_batch_events: self.max_batch_events,
            max_request_bytes: self.max_request_bytes,
            request_timeout: Duration::from_secs(self.request_timeout),
            header_read_timeout: Duration::from_secs(self.header_timeout),
            idle_timeout: Duration::from_secs(self.idle_timeout),
            tls_handshake_timeout: Duration::from_secs(self.tls_handshake_timeout),
            max_connections: self.max_connections,
            max_connections_per_peer: self.max_connections_per_peer,
            stream_buffer: self.stream_buffer,
            approval_timeout: Duration::from_secs(self.approval_timeout),
            max_approval_timeout: Duration::from_secs(self.max_approval_timeout),
            session_idle: Duration::from_secs(self.session_idle),
            session_lifetime: Duration::from_secs(self.session_lifetime),
        }
    }
}

/// The tokens of `--token` entries and of a tokens file (one
/// `TENANT=sha256:HEX` a line; blank lines and `#` comments skipped).
fn load_tokens(entries: &[String], file: Option<&std::path::Path>) -> anyhow::Result<Tokens> {
    let mut tokens = Tokens::default();
    for entry in entries {
        tokens.add(entry)?;
    }
    if let Some(file) = file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            tokens
                .add(line)
                .map_err(|e| anyhow::anyhow!("{}:{}: {e}", file.display(), n + 1))?;
        }
    }
    Ok(tokens)
}

pub(crate) fn run(args: ServeArgs, layered: Layered) -> anyhow::Result<ExitCode> {
    let settings = settings(&layered)?;
    if args.print_config {
        // Printed before anything loads, so a broken policy set or token
        // file does not hide what is configured.
        print!("{}", config::print(&settings));
        return Ok(ExitCode::SUCCESS);
    }
    let running = Arc::new(reload::Running {
        layered,
        settings: parking_lot::Mutex::new(settings),
        limits: parking_lot::Mutex::new(args.limits()),
        policies: reload::Swappable::new(args.policies.loader()?),
        store_policies: reload::Swappable::new(args.policies.builder()?),
        tokens: reload::Swappable::new(args.token_loader()),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(args, running))
}

/// Every setting in force, with where its value came from.
fn settings(layered: &Layered) -> anyhow::Result<Vec<config::Effective>> {
    use clap::CommandFactory as _;
    let command = crate::Cli::command();
    let parsed = layered
        .reparse(&command)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let serve = parsed
        .matches
        .subcommand_matches("serve")
        .ok_or_else(|| anyhow::anyhow!("not a serve command line"))?;
    Ok(config::effective(&command, serve, &parsed.layered))
}

/// Where `sondera serve` takes its policies from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PolicySource {
    Auto,
    Files,
    Store,
}

/// Whether the server follows the store's policies, from what was asked
/// and what the store holds; an error when the two would be mixed.
async fn follows_store(
    args: &ServeArgs,
    store: &dyn sondera_store::TrajectoryStore,
) -> anyhow::Result<bool> {
    let files = !args.policies.dirs.is_empty();
    let current = store.current_policies().await?;
    let follows = match (args.policy_source, files, &current) {
        (PolicySource::Files, _, Some(current)) => {
            eprintln!(
                "warning: the store's pushed policy revision {} is ignored: --policy-source files",
                current.revision
            );
            false
        }
        (PolicySource::Files, ..) => false,
        (PolicySource::Store, true, _) => anyhow::bail!(
            "--policy-source store judges by the store's pushed policies: drop --policies, or push the directory with `sondera policy push`"
        ),
        (PolicySource::Auto, true, Some(current)) => anyhow::bail!(
            "the store holds pushed policy revision {} (made current by {} at {}) and --policies names files: choose one with --policy-source files or --policy-source store",
            current.revision,
            current.set_by,
            current.since.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        (PolicySource::Auto, true, None) => false,
        (PolicySource::Store | PolicySource::Auto, false, _) => true,
    };
    if follows {
        eprintln!(
            "policies: the store's current pushed revision (`sondera policy push`), the built-in packs until one is pushed"
        );
    } else if files {
        eprintln!("policies: files under --policies; pushes are refused");
    } else {
        eprintln!("policies: the built-in packs; pushes are refused");
    }
    Ok(follows)
}

async fn serve(args: ServeArgs, running: Arc<reload::Running>) -> anyhow::Result<ExitCode> {
    let access = args.access()?;
    let location = args.store_location()?;
    let store = sondera_store::connect(&location).await?;
    let follows_store = follows_store(&args, store.as_ref()).await?;
    let loader: PolicyLoader = running.policies.handle();
    let mut builder = Server::builder(store, loader)
        .grpc_addr(args.grpc_addr)
        .http_addr(args.http_addr)
        .access(access.clone())
        .token_loader(running.tokens.handle())
        .reconfigure(running.reconfigure())
        .limits(args.limits())
        .public_hosts(args.public_hosts.iter().cloned())
        .public_metrics(args.public_metrics);
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        builder = builder.tls(TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        });
    }
    let scheme = if args.tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    let retention = args.retention.rules()?;
    if !retention.keeps_all() {
        builder = builder.retention(retention, Duration::from_secs(args.prune_every.max(1)));
    }
    if let Some(webhooks) = args.webhooks(scheme)? {
        builder = builder.webhooks(webhooks);
    }
    if follows_store {
        builder = builder.policies_from_store(running.store_policies.handle());
    }
    if args.tokens_from_store {
        builder = builder.stored_tokens();
    }
    if !args.no_watch {
        for dir in &args.policies.dirs {
            builder = builder.watch(dir);
        }
    }
    let server = builder.bind().await?;
    eprintln!(
        "sondera {} serving gRPC on {} and HTTP on {scheme}://{} (store: {location}, {})",
        env!("CARGO_PKG_VERSION"),
        server.grpc_addr(),
        server.http_addr(),
        crate::count(
            server.governance().engine().policy_ids().count(),
            "policy",
            "policies"
        ),
    );
    match &access {
        _ if args.tokens_from_store => eprintln!(
            "{} accepted, and those the store keeps",
            crate::count(
                match &access {
                    Access::Tokens(tokens) => tokens.len(),
                    Access::LoopbackOnly => 0,
                },
                "configured token",
                "configured tokens"
            )
        ),
        Access::LoopbackOnly => eprintln!(
            "authentication is off: no tokens are configured, so only loopback addresses are served"
        ),
        Access::Tokens(tokens) => {
            eprintln!("{} accepted", crate::count(tokens.len(), "token", "tokens"))
        }
    }
    server.serve(shutdown_signal()).await?;
    eprintln!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM can be handled");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a new random token: prints the token on standard output and the
    /// server entry (TENANT=sha256:HEX ...) on standard error. With --server,
    /// keeps its hash in that server's store instead (an admin token), for
    /// every server sharing it that runs with --tokens-from-store.
    New {
        #[command(flatten)]
        whom: TokenFor,
        #[command(flatten)]
        server: crate::ServerArgs,
    },
    /// Print the server entry for a token read from standard input.
    Hash(TokenFor),
    /// The tokens a server's store keeps (an admin token): hash, tenant, role, name.
    List {
        #[command(flatten)]
        server: crate::ServerArgs,
    },
    /// Remove a token from a server's store, by its hash (8 or more hex digits) or its
    /// name; every server refuses it within a second (an admin token).
    Revoke {
        #[command(flatten)]
        server: crate::ServerArgs,
        #[arg(value_name = "HASH|NAME")]
        stored: String,
    },
}

/// Whom a token is for.
#[derive(Debug, Args)]
pub(crate) struct TokenFor {
    #[arg(long)]
    tenant: String,
    /// `agent` (adjudicate, read records by id, wait for approvals),
    /// `operator` (also read the tenant's records, decide approvals, keep
    /// grants) or `admin` (an operator who also pushes and rolls back the
    /// server's policies, which judge every tenant).
    #[arg(long, default_value = "agent")]
    role: sondera_server::Role,
    /// Who decisions made with the token are recorded as (operators).
    #[arg(long)]
    name: Option<String>,
}

impl TokenFor {
    /// The server entry of `token`, checked as the server will read it.
    fn entry(&self, token: &str) -> anyhow::Result<String> {
        let tenant = sondera_store::TenantId::new(&self.tenant)?;
        let mut entry = format!("{tenant}={}", sondera_server::hash_token(token));
        if self.role != sondera_server::Role::Agent {
            entry.push_str(&format!(" role={}", self.role.as_str()));
        }
        if let Some(name) = &self.name {
            entry.push_str(&format!(" name={name}"));
        }
        Tokens::default().add(&entry)?;
        Ok(entry)
    }
}

/// One stored token as `token list` shows it.
fn print_stored(token: &sondera_proto::v1::StoredToken) {
    println!(
        "{}  {}  {}  {}",
        token.hash,
        token.tenant,
        token.role,
        crate::inert::inert(&token.name)
    );
}

/// Keeps `token`'s hash in the store of the server `server` names.
fn store_token(server: &crate::ServerArgs, whom: &TokenFor, token: &str) -> anyhow::Result<()> {
    let request = sondera_proto::v1::PutTokenRequest {
        tenant: whom.tenant.clone(),
        role: whom.role.as_str().to_owned(),
        name: whom.name.clone().unwrap_or_else(|| {
            let hash = sondera_server::hash_token(token);
            format!("token-{}", &hash["sha256:".len().."sha256:".len() + 8])
        }),
        hash: sondera_server::hash_token(token),
    };
    let connection = server.connection()?;
    let stored = crate::block_on(
        connection.call_any(request, |mut c, r| async move { c.put_token(r).await }),
    )??;
    eprintln!("stored on the server as `{}`", stored.name);
    Ok(())
}

pub(crate) fn token(command: TokenCommand) -> anyhow::Result<ExitCode> {
    let (whom, token, fresh) = match command {
        TokenCommand::New { whom, server } => {
            let token = format!(
                "sk_{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            );
            if server.server.is_some() {
                whom.entry(&token)?;
                store_token(&server, &whom, &token)?;
                println!("{token}");
                return Ok(ExitCode::SUCCESS);
            }
            (whom, token, true)
        }
        TokenCommand::List { server } => {
            let connection = server.connection()?;
            let listed = crate::block_on(connection.call_any(
                sondera_proto::v1::ListTokensRequest {},
                |mut c, r| async move { c.list_tokens(r).await },
            ))??;
            listed.tokens.iter().for_each(print_stored);
            return Ok(ExitCode::SUCCESS);
        }
        TokenCommand::Revoke { server, stored } => {
            let connection = server.connection()?;
            let request = sondera_proto::v1::RevokeTokenRequest { token: stored };
            let revoked = crate::block_on(
                connection.call_any(request, |mut c, r| async move { c.revoke_token(r).await }),
            )??;
            print_stored(&revoked);
            return Ok(ExitCode::SUCCESS);
        }
        TokenCommand::Hash(whom) => {
            let mut token = String::new();
            std::io::stdin().read_to_string(&mut token)?;
            (whom, token.trim().to_string(), false)
        }
    };
    anyhow::ensure!(!token.is_empty(), "no token on standard input");
    let entry = whom.entry(&token)?;
    if fresh {
        println!("{token}");
        eprintln!("server entry (give it to `sondera serve --token`): {entry}");
    } else {
        println!("{entry}");
    }
    Ok(ExitCode::SUCCESS)
}
