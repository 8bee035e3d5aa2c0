//! Binding the listeners and running both front ends until shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use sondera_harness::Adjudicator;
use sondera_policy::PolicyLoadErrors;
use sondera_proto::v1::harness_service_server::HarnessServiceServer;
use sondera_store::{HookedLog, RetentionRules, TrajectoryStore};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::auth::{Access, AccessControl, TokenLoader};
use crate::browser::PublicHosts;
use crate::governance::Governance;
use crate::grpc::GrpcService;
use crate::http::{HttpState, router};
use crate::limits::Limits;
use crate::listener;
use crate::metrics::{Metrics, WriteTimer};
use crate::policies::PolicyBuilder;
use crate::reload::{self, PolicyLoader, Reconfigure};
use crate::sessions::Sessions;

/// A certificate chain and its private key, PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The policies do not load.
    #[error("the policies do not load:\n{0}")]
    Policies(#[from] PolicyLoadErrors),
    /// A listener could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A listener off loopback with no tokens configured.
    #[error(
        "refusing to listen on {addr} without authentication: configure tokens (--token TENANT=sha256:HEX) or listen on a loopback address"
    )]
    Unauthenticated {
        /// The address.
        addr: SocketAddr,
    },
    /// A webhook cannot be used.
    #[error(transparent)]
    Webhooks(#[from] crate::webhooks::WebhookError),
    /// A certificate or key could not be read.
    #[error("TLS: {path}: {message}")]
    Tls {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// The store's current policies cannot be read or do not load.
    #[error("the store's policies: {0}")]
    StorePolicies(String),
    /// The shared store cannot be listened to.
    #[error("cannot listen to the shared store's announcements: {0}")]
    SharedStore(sondera_store::StoreError),
    /// The gRPC server failed.
    #[error("the gRPC server failed: {0}")]
    Grpc(#[from] tonic::transport::Error),
}

/// Configures a [`Server`]; every setting has a default that works on one machine.
pub struct ServerBuilder {
    store: Arc<dyn TrajectoryStore>,
    loader: PolicyLoader,
    grpc_addr: SocketAddr,
    http_addr: SocketAddr,
    access: Access,
    token_loader: Option<TokenLoader>,
    limits: Limits,
    tls: Option<TlsFiles>,
    watch: Vec<PathBuf>,
    poll: Duration,
    public_hosts: Vec<String>,
    public_metrics: bool,
    store_policies: Option<PolicyBuilder>,
    stored_tokens: bool,
    reconfigure: Option<Reconfigure>,
    webhooks: Option<crate::webhooks::Webhooks>,
    retention: Option<(RetentionRules, Duration)>,
}

impl ServerBuilder {
    /// Judges by the policy set the store holds as current (pushed with
    /// `PushPolicies`, by this server or any other sharing the store),
    /// loaded with `builder`; by the loader's set until one is pushed.
    /// Such a server accepts pushes and rollbacks; without this it judges
    /// by its loader's set alone and refuses them.
    #[must_use]
    pub fn policies_from_store(mut self, builder: PolicyBuilder) -> Self {
        self.store_policies = Some(builder);
        self
    }

    /// Host names HTTP clients may reach the server by, besides IP
    /// addresses and `localhost`; requests naming any other host are
    /// refused (a page whose DNS name was rebound to this address).
    #[must_use]
    pub fn public_hosts<I: IntoIterator<Item = String>>(mut self, names: I) -> Self {
        self.public_hosts.extend(names);
        self
    }

    /// Serves `/metrics` without a token on a server with tokens. Its
    /// counters sum every tenant, so by default only a server without
    /// tokens (one tenant, loopback) serves them.
    #[must_use]
    pub fn public_metrics(mut self, open: bool) -> Self {
        self.public_metrics = open;
        self
    }

    /// Where gRPC listens (default 127.0.0.1:50051; port 0 picks one).
    #[must_use]
    pub fn grpc_addr(mut self, addr: SocketAddr) -> Self {
        self.grpc_addr = addr;
        self
    }

    /// Where HTTP listens (default 127.0.0.1:8080; port 0 picks one).
    #[must_use]
    pub fn http_addr(mut self, addr: SocketAddr) -> Self {
        self.http_addr = addr;
        self
    }

    /// Who may call (default: loopback only, no tokens).
    #[must_use]
    pub fn access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// Accepts the tokens kept in the store too (stored by admins with
    /// `PutToken`), read every second and when the store announces a
    /// change; every request then needs a token, even on loopback.
    #[must_use]
    pub fn stored_tokens(mut self) -> Self {
        self.stored_tokens = true;
        self
    }

    /// Loads the tokens again on SIGHUP (a server with tokens only); a
    /// reload that fails or yields none keeps the running tokens.
    #[must_use]
    pub fn token_loader(mut self, loader: TokenLoader) -> Self {
        self.token_loader = Some(loader);
        self
    }

    /// Called first on SIGHUP, before policies and tokens reload: reads the
    /// configuration again, and answers the limits to hold requests to from
    /// then on (`None` keeps the running ones).
    #[must_use]
    pub fn reconfigure(mut self, reconfigure: Reconfigure) -> Self {
        self.reconfigure = Some(reconfigure);
        self
    }

    /// Notifies these webhooks when an approval opens, is decided or expires.
    #[must_use]
    pub fn webhooks(mut self, webhooks: crate::webhooks::Webhooks) -> Self {
        self.webhooks = Some(webhooks);
        self
    }

    /// Removes ended trajectories past `rules` from the store, checking
    /// every `every` (see `sondera_store::prune`).
    #[must_use]
    pub fn retention(mut self, rules: RetentionRules, every: Duration) -> Self {
        self.retention = (!rules.keeps_all()).then_some((rules, every));
        self
    }

    /// The limits requests are held to.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Serves both listeners over TLS with this certificate and key.
    #[must_use]
    pub fn tls(mut self, files: TlsFiles) -> Self {
        self.tls = Some(files);
        self
    }

    /// Reloads the policies when a file under `dir` changes.
    #[must_use]
    pub fn watch(mut self, dir: impl Into<PathBuf>) -> Self {
        self.watch.push(dir.into());
        self
    }

    /// How long changes under watched directories must settle before the
    /// policies reload, and how often they are polled where the system's
    /// file notifications cannot be had (default 500 ms).
    #[must_use]
    pub fn watch_interval(mut self, every: Duration) -> Self {
        self.poll = every;
        self
    }

    /// Loads the policies and binds both listeners.
    pub async fn bind(self) -> Result<Server, ServerError> {
        if matches!(self.access, Access::LoopbackOnly) && !self.stored_tokens {
            for addr in [self.grpc_addr, self.http_addr] {
                if !addr.ip().is_loopback() {
                    return Err(ServerError::Unauthenticated { addr });
                }
            }
        }
        let tls = self.tls.as_ref().map(tls_config).transpose()?;
        // A server scans for as long as it runs.
        sondera_guard::content::prepare_all_in_background();
        let engine = (self.loader)()?;
        let metrics = Arc::new(Metrics::default());
        let timed = Arc::new(HookedLog::new(
            self.store.clone(),
            WriteTimer(metrics.clone()),
        ));
        let shared = self.store.shared();
        let adjudicator = Arc::new(Adjudicator::new(engine, self.store).appending_through(timed));
        let mut governance = Governance::new(adjudicator, metrics, self.limits.clone());
        if let Some(builder) = self.store_policies {
            governance.take_policies_from_store(builder);
        }
        if let Some(webhooks) = self.webhooks.filter(|w| !w.is_empty()) {
            let notifier = crate::webhooks::Notifier::new(webhooks, governance.metrics().clone())?;
            governance.notify_through(notifier);
        }
        let governance = Arc::new(governance);
        if governance.follows_store_policies() {
            governance
                .load_current_policies()
                .await
                .map_err(|e| ServerError::StorePolicies(e.to_string()))?;
            tracing::info!(revision = %governance.engine().revision(), "policies: the store's current revision (until one is pushed, the built-in set)");
        }
        if let Some(shared) = shared {
            // Listening before serving: nothing recorded from now on is missed.
            let changes = shared.listen().await.map_err(ServerError::SharedStore)?;
            tracing::info!("the live stream and approvals follow the shared store");
            governance.follow_shared(shared, changes);
        }
        let bind = |addr: SocketAddr| async move {
            TcpListener::bind(addr)
                .await
                .map_err(|source| ServerError::Bind { addr, source })
        };
        let sessions = Arc::new(Sessions::new(
            self.limits.session_idle,
            self.limits.session_lifetime,
        ));
        Ok(Server {
            grpc: bind(self.grpc_addr).await?,
            http: bind(self.http_addr).await?,
            governance,
            access: Arc::new({
                let access = AccessControl::new(self.access, self.token_loader);
                if self.stored_tokens {
                    access.with_stored_tokens()
                } else {
                    access
                }
            }),
            limits: self.limits,
            tls,
            loader: self.loader,
            reconfigure: self.reconfigure,
            retention: self.retention,
            watch: self.watch,
            poll: self.poll,
            public_hosts: Arc::new(PublicHosts::new(self.public_hosts)),
            public_metrics: self.public_metrics,
            sessions,
        })
    }
}

/// A bound, not yet serving, harness service.
pub struct Server {
    grpc: TcpListener,
    http: TcpListener,
    governance: Arc<Governance>,
    access: Arc<AccessControl>,
    limits: Limits,
    tls: Option<Tls>,
    loader: PolicyLoader,
    reconfigure: Option<Reconfigure>,
    retention: Option<(RetentionRules, Duration)>,
    watch: Vec<PathBuf>,
    poll: Duration,
    public_hosts: Arc<PublicHosts>,
    public_metrics: bool,
    sessions: Arc<Sessions>,
}

struct Tls {
    acceptor: TlsAcceptor,
}

fn tls_config(files: &TlsFiles) -> Result<Tls, ServerError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let read = |path: &PathBuf| {
        std::fs::read(path).map_err(|e| ServerError::Tls {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    };
    let (cert_pem, key_pem) = (read(&files.cert)?, read(&files.key)?);
    let invalid = |path: &PathBuf, message: String| ServerError::Tls {
        path: path.display().to_string(),
        message,
    };
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(&files.cert, format!("not a PEM certificate chain: {e}")))?;
    if certs.is_empty() {
        return Err(invalid(&files.cert, "no certificate in the file".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| invalid(&files.key, format!("not a PEM private key: {e}")))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| {
            invalid(
                &files.key,
                format!("the key does not fit the certificate: {e}"),
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

impl Server {
    /// Starts with `store` and the policies `loader` builds.
    pub fn builder(store: Arc<dyn TrajectoryStore>, loader: PolicyLoader) -> ServerBuilder {
        ServerBuilder {
            store,
            loader,
            grpc_addr: SocketAddr::from(([127, 0, 0, 1], 50051)),
            http_addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            access: Access::LoopbackOnly,
            token_loader: None,
            limits: Limits::default(),
            tls: None,
            watch: Vec::new(),
            public_hosts: Vec::new(),
            public_metrics: false,
            poll: Duration::from_millis(500),
            store_policies: None,
            stored_tokens: false,
            reconfigure: None,
            webhooks: None,
            retention: None,
        }
    }

    /// Where the gRPC listener is bound.
    pub fn grpc_addr(&self) -> SocketAddr {
        self.grpc
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Where the HTTP listener is bound.
    pub fn http_addr(&self) -> SocketAddr {
        self.http
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The service both listeners share.
    pub fn governance(&self) -> &Arc<Governance> {
        &self.governance
    }

    /// Who may call; [`AccessControl::reload`] is what SIGHUP does to tokens.
    pub fn access(&self) -> &Arc<AccessControl> {
        &self.access
    }

    /// Serves until `shutdown` completes, then stops accepting, ends live
    /// streams and lets in-flight requests finish, waiting at most the
    /// request timeout for connections that stay open.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let reloader = tokio::spawn(reload::watch(
            self.governance.clone(),
            self.access.clone(),
            self.loader.clone(),
            self.reconfigure.clone(),
            self.watch.clone(),
            self.poll,
        ));
        let sweeper = tokio::spawn(expire_approvals(self.governance.clone()));
        let pruner = self.retention.clone().map(|(rules, every)| {
            tokio::spawn(crate::retention::run(self.governance.clone(), rules, every))
        });
        tokio::spawn(crate::policies::follow(self.governance.clone()));
        tokio::spawn(crate::stored_tokens::follow(
            self.access.clone(),
            self.governance.clone(),
        ));
        let governance = self.governance.clone();
        tokio::spawn(async move {
            shutdown.await;
            tracing::info!("shutting down: draining in-flight requests");
            governance.close_streams();
            let _ = stop.send(true);
        });
        let tls = self.tls.map(|tls| tls.acceptor);
        let grpc = serve_grpc(
            self.grpc,
            GrpcService {
                governance: self.governance.clone(),
                access: self.access.clone(),
            },
            &self.limits,
            tls.clone(),
            stopped.clone(),
        );
        let app = router(HttpState {
            governance: self.governance.clone(),
            access: self.access.clone(),
            secure_cookies: tls.is_some(),
            public_hosts: self.public_hosts.clone(),
            public_metrics: self.public_metrics,
            sessions: self.sessions.clone(),
        });
        let http = serve_http(self.http, app, &self.limits, tls, stopped.clone());
        let servers = async { tokio::join!(grpc, http).0 };
        // Connections idle past the request timeout are not waited for.
        let drain = self.limits.request_timeout;
        let deadline = async move {
            wait_for(stopped).await;
            tokio::time::sleep(drain).await;
        };
        let result = tokio::select! {
            result = servers => result,
            () = deadline => {
                tracing::warn!("connections still open {drain:?} after shutdown began; closing them");
                Ok(())
            }
        };
        reloader.abort();
        sweeper.abort();
        if let Some(pruner) = pruner {
            pruner.abort();
        }
        result
    }
}

/// Expires approvals nobody decided in time, so each expiry is recorded in
/// its trajectory even when no agent is waiting any more.
async fn expire_approvals(governance: Arc<Governance>) {
    let mut every = tokio::time::interval(Duration::from_secs(1));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        if let Err(e) = governance.expire_overdue().await {
            tracing::warn!("expiring overdue approvals failed; trying again: {e}");
        }
    }
}

async fn wait_for(mut stopped: tokio::sync::watch::Receiver<bool>) {
    let _ = stopped.wait_for(|s| *s).await;
}

async fn serve_grpc(
    listener: TcpListener,
    service: GrpcService,
    limits: &Limits,
    tls: Option<TlsAcceptor>,
    stopped: tokio::sync::watch::Receiver<bool>,
) -> Result<(), ServerError> {
    let incoming = tokio_stream::wrappers::ReceiverStream::new(listener::accept(
        listener,
        limits,
        tls,
        stopped.clone(),
    ));
    let service = HarnessServiceServer::new(service)
        .max_decoding_message_size(limits.max_request_bytes)
        .max_encoding_message_size(usize::MAX);
    // Pings keep a quiet live stream from counting as idle, and find peers
    // that vanished.
    tonic::transport::Server::builder()
        .timeout(limits.request_timeout)
        .http2_keepalive_interval(Some(limits.idle_timeout / 3))
        .http2_keepalive_timeout(Some(limits.idle_timeout / 3))
        .layer(crate::request_id::RequestIdLayer)
        .add_service(service)
        .serve_with_incoming_shutdown(incoming, wait_for(stopped))
        .await?;
    Ok(())
}

/// Serves HTTP/1 and HTTP/2 connections until stopped; then waits for open
/// connections to finish.
async fn serve_http(
    listener: TcpListener,
    app: axum::Router,
    limits: &Limits,
    tls: Option<TlsAcceptor>,
    stopped: tokio::sync::watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.idle_timeout / 3)
        .keep_alive_timeout(limits.idle_timeout / 3);
    let mut incoming = listener::accept(listener, limits, tls, stopped);
    while let Some(connection) = incoming.recv().await {
        let Ok(connection) = connection else { continue };
        // The client's address goes with each request, for what is limited per client.
        let peer = crate::listener::PeerAddr(connection.peer());
        let service = TowerToHyperService::new(app.clone().layer(axum::Extension(peer)));
        let conn = builder.serve_connection_with_upgrades(TokioIo::new(connection), service);
        let watched = graceful.watch(conn.into_owned());
        tokio::spawn(async move {
            if let Err(e) = watched.await {
                tracing::debug!("HTTP connection ended: {e}");
            }
        });
    }
    graceful.shutdown().await;
}
