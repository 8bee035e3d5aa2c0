//! The remote harness: the same scope lifecycle, judged by a Sondera
//! harness server over gRPC.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use sondera_model::{Adjudicated, Agent, Approval, Event, Grant};
use sondera_proto::v1;
use sondera_proto::v1::harness_service_client::HarnessServiceClient;
use sondera_store::{ApprovalRecord, ApprovalState, TenantId};
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use crate::HarnessError;
use crate::scope::{Backend, ScopedHarness};

/// The environment variable naming the server.
pub const ENDPOINT_VAR: &str = "SONDERA_HARNESS_ENDPOINT";
/// The environment variable holding the bearer token.
pub const TOKEN_VAR: &str = "SONDERA_API_TOKEN";

/// Where a remote harness connects and how it authenticates.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// `http://` or `https://` URL of the server's gRPC listener.
    pub endpoint: String,
    /// Servers sharing the first's store, tried in turn when the one in use
    /// cannot be reached (see [`Connection`]). Given after the first,
    /// comma-separated: `a:50051,b:50051`.
    pub failover: Vec<String>,
    /// The bearer token the server knows the caller by.
    pub token: Option<String>,
    /// How long one call may take before it fails with [`HarnessError::Timeout`].
    pub timeout: Duration,
    /// A PEM CA certificate to trust instead of the public roots.
    pub ca_certificate: Option<PathBuf>,
    /// How long an escalated step waits for an operator, unless the call
    /// asks for another deadline; `None` leaves it to the server.
    pub approval_timeout: Option<Duration>,
}

/// `~/.sondera/env`: the file consulted after the environment.
pub fn default_env_file() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".sondera/env"))
}

/// The value of `key` in a dotenv file (`KEY=VALUE` lines, `#` comments,
/// quotes, `export`), read without touching the process environment. A file
/// that is missing or does not parse gives nothing.
fn env_file_value(file: &Path, key: &str) -> Option<String> {
    dotenvy::from_path_iter(file)
        .ok()?
        .filter_map(Result::ok)
        .find_map(|(k, v)| (k == key).then_some(v))
}

/// Adds the scheme a bare `host:port` lacks: `http://` for localhost,
/// 127.0.0.1 and ::1 (bracketed or not), `https://` for anything else.
pub fn normalize_endpoint(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
    if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        return endpoint.to_string();
    }
    let host = if let Some(rest) = endpoint.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else if endpoint.matches(':').count() > 1 {
        endpoint // a bare IPv6 address without a port
    } else {
        endpoint.split(':').next().unwrap_or(endpoint)
    };
    let scheme = match host {
        "localhost" | "127.0.0.1" | "::1" => "http",
        _ => "https",
    };
    format!("{scheme}://{endpoint}")
}

impl RemoteConfig {
    /// Resolves the endpoint and token: explicit values first, then
    /// `SONDERA_HARNESS_ENDPOINT` / `SONDERA_API_TOKEN`, then `~/.sondera/env`.
    pub fn resolve(endpoint: Option<String>, token: Option<String>) -> Result<Self, HarnessError> {
        Self::resolve_from(
            endpoint,
            token,
            |key| std::env::var(key).ok(),
            default_env_file().as_deref(),
        )
    }

    /// [`Self::resolve`] with the environment and env file given.
    pub fn resolve_from(
        endpoint: Option<String>,
        token: Option<String>,
        env: impl Fn(&str) -> Option<String>,
        env_file: Option<&Path>,
    ) -> Result<Self, HarnessError> {
        let lookup = |explicit: Option<String>, key: &str| {
            explicit
                .or_else(|| env(key))
                .or_else(|| env_file.and_then(|f| env_file_value(f, key)))
                .filter(|v| !v.trim().is_empty())
        };
        let endpoints = lookup(endpoint, ENDPOINT_VAR).ok_or_else(|| HarnessError::Config(format!(
            "no harness endpoint: pass one, set {ENDPOINT_VAR}, or put {ENDPOINT_VAR}=host:port in ~/.sondera/env"
        )))?;
        let listed: Vec<&str> = endpoints.split(',').map(str::trim).collect();
        if listed.iter().any(|e| e.is_empty()) {
            return Err(HarnessError::Config(format!(
                "an empty endpoint in `{endpoints}`: list servers as host:port,host:port"
            )));
        }
        Ok(Self {
            endpoint: normalize_endpoint(listed[0]),
            failover: listed[1..].iter().map(|e| normalize_endpoint(e)).collect(),
            token: lookup(token, TOKEN_VAR),
            timeout: Duration::from_secs(30),
            ca_certificate: None,
            approval_timeout: None,
        })
    }
}

/// A gRPC connection to a harness server, shared by every scope made from it.
///
/// With failover endpoints, the calls an agent's steps make (judging,
/// grants, approvals) move to the next server in turn when the one in use
/// cannot be reached or drops the call, and stay there. Servers behind one
/// store make that safe: a step that the lost server had recorded is
/// answered by the next with the verdict recorded for it, never judged
/// again. A call that times out is not moved: it fails closed.
#[derive(Debug, Clone)]
pub struct Connection {
    clients: Arc<[(String, HarnessServiceClient<Channel>)]>,
    /// The index in `clients` of the server in use.
    active: Arc<AtomicUsize>,
    authorization: Option<AsciiMetadataValue>,
    timeout: Duration,
    approval_timeout: Option<Duration>,
}

/// A lazily dialled client of the server at `url`.
fn client_of(
    url: &str,
    config: &RemoteConfig,
) -> Result<HarnessServiceClient<Channel>, HarnessError> {
    let bad = |message: String| HarnessError::Config(format!("endpoint `{url}`: {message}"));
    let mut endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|e| bad(e.to_string()))?
        .connect_timeout(config.timeout.min(Duration::from_secs(10)))
        .tcp_nodelay(true);
    if url.starts_with("https://") {
        let tls = match &config.ca_certificate {
            Some(path) => {
                let pem =
                    std::fs::read(path).map_err(|e| bad(format!("{}: {e}", path.display())))?;
                ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
            }
            None => ClientTlsConfig::new().with_webpki_roots(),
        };
        endpoint = endpoint.tls_config(tls).map_err(|e| bad(e.to_string()))?;
    }
    Ok(HarnessServiceClient::new(endpoint.connect_lazy()).max_decoding_message_size(usize::MAX))
}

impl Connection {
    /// A connection that dials on first use (and again after failures).
    /// Call it within the Tokio runtime that will drive the connection.
    pub fn lazy(config: &RemoteConfig) -> Result<Self, HarnessError> {
        let clients = std::iter::once(&config.endpoint)
            .chain(&config.failover)
            .map(|url| Ok((url.clone(), client_of(url, config)?)))
            .collect::<Result<Arc<[_]>, HarnessError>>()?;
        let authorization = config
            .token
            .as_ref()
            .map(|t| {
                format!("Bearer {t}")
                    .parse::<AsciiMetadataValue>()
                    .map_err(|_| {
                        HarnessError::Config(
                            "the API token has characters a header cannot carry".into(),
                        )
                    })
            })
            .transpose()?;
        Ok(Self {
            clients,
            active: Arc::default(),
            authorization,
            timeout: config.timeout,
            approval_timeout: config.approval_timeout,
        })
    }

    /// The generated client of the server in use, for calls this crate
    /// does not wrap.
    pub fn client(&self) -> HarnessServiceClient<Channel> {
        self.clients[self.active.load(Ordering::Relaxed)].1.clone()
    }

    /// The URL of the server in use.
    pub fn endpoint(&self) -> &str {
        &self.clients[self.active.load(Ordering::Relaxed)].0
    }

    /// Makes `message` into a request and runs `call` with it on the
    /// server in use; when that server cannot be reached or drops the call,
    /// on each of the others in turn, keeping the first that answers.
    pub async fn call_any<M, T, F, Fut>(&self, message: M, call: F) -> Result<T, HarnessError>
    where
        M: Clone,
        F: Fn(HarnessServiceClient<Channel>, tonic::Request<M>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let first = self.active.load(Ordering::Relaxed);
        let count = self.clients.len();
        let mut unreachable = Vec::new();
        for turn in 0..count {
            let index = (first + turn) % count;
            let (url, client) = &self.clients[index];
            match self
                .call(call(client.clone(), self.request(message.clone())))
                .await
            {
                Err(HarnessError::Transport(why)) => unreachable.push(format!("{url}: {why}")),
                answered => {
                    if turn > 0
                        && self
                            .active
                            .compare_exchange(first, index, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                    {
                        tracing::warn!(from = %self.clients[first].0, to = %url, "failed over to another harness server");
                    }
                    return answered;
                }
            }
        }
        Err(HarnessError::Transport(unreachable.join("; ")))
    }

    /// `message` as a request carrying the token and the call timeout.
    pub fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(self.timeout);
        if let Some(authorization) = &self.authorization {
            request
                .metadata_mut()
                .insert("authorization", authorization.clone());
        }
        match TRACE_PARENT.try_with(|t| t.clone()).ok().flatten() {
            Some(traceparent) => {
                request.metadata_mut().insert("traceparent", traceparent);
            }
            #[cfg(feature = "otel")]
            None => send_trace_context(request.metadata_mut()),
            #[cfg(not(feature = "otel"))]
            None => {}
        }
        request
    }

    /// Runs one call under the timeout, turning failures into typed errors.
    pub async fn call<T>(
        &self,
        call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, HarnessError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => Err(status_error(status, self.timeout)),
            Err(_) => Err(HarnessError::Timeout(self.timeout)),
        }
    }
}

/// A typed error for a failed call. Nothing here is ever read as an allow.
pub fn status_error(status: tonic::Status, timeout: Duration) -> HarnessError {
    use tonic::Code;
    match status.code() {
        Code::DeadlineExceeded => HarnessError::Timeout(timeout),
        Code::Cancelled if status.message().contains("Timeout") => HarnessError::Timeout(timeout),
        // Any other cancellation reaching the client is the connection closing
        // under the call (a server shutting down or restarting): a transport
        // failure, which an approval's long poll survives by reconnecting.
        Code::Cancelled => HarnessError::Transport(status.message().to_string()),
        // Unknown with an underlying error is a connection that broke mid-call.
        Code::Unavailable => HarnessError::Transport(status.message().to_string()),
        Code::Unknown if std::error::Error::source(&status).is_some() => {
            HarnessError::Transport(status.message().to_string())
        }
        code => HarnessError::Remote {
            code: format!("{code:?}"),
            message: status.message().to_string(),
        },
    }
}

/// A harness whose events are judged and recorded by a Sondera harness server.
///
/// Scopes from [`Harness::new_scope`] share the connection. A transport error
/// or timeout leaves the trajectory id published, since the server may have
/// recorded the event; the id is cleared only once a terminal event is
/// acknowledged. Batches go through one `AdjudicateBatch` call.
///
/// [`Harness::new_scope`]: crate::Harness::new_scope
pub type RemoteHarness = ScopedHarness<Connection>;

impl RemoteHarness {
    /// Connects lazily with `config`; `agent` is used when `initialize` is
    /// given none. Call it within the Tokio runtime that will drive it.
    pub fn new(config: &RemoteConfig, agent: Option<Agent>) -> Result<Self, HarnessError> {
        Ok(Self::over(Connection::lazy(config)?, agent))
    }

    /// A scope over an existing connection.
    pub fn with_connection(connection: Connection, agent: Option<Agent>) -> Self {
        Self::over(connection, agent)
    }

    /// The connection to the server.
    pub fn connection(&self) -> &Connection {
        self.backend()
    }
}

impl Connection {
    /// Judges events in order in one call; the first refusal is returned as
    /// the error, the events before it stay recorded.
    pub async fn adjudicate_batch(
        &self,
        events: Vec<Event>,
    ) -> Result<Vec<Adjudicated>, HarnessError> {
        let request = v1::AdjudicateBatchRequest {
            events: events.into_iter().map(Into::into).collect(),
        };
        let response = self
            .call_any(
                request,
                |mut c, r| async move { c.adjudicate_batch(r).await },
            )
            .await?;
        let mut verdicts = Vec::with_capacity(response.results.len());
        for result in response.results {
            match result.result {
                Some(v1::batch_result::Result::Adjudicated(wire)) => {
                    verdicts.push(invalid_response(wire.try_into())?)
                }
                Some(v1::batch_result::Result::Error(e)) => {
                    return Err(HarnessError::Remote {
                        code: e.code,
                        message: e.message,
                    });
                }
                None => {
                    return Err(HarnessError::Remote {
                        code: "INVALID_RESPONSE".into(),
                        message: "an empty batch result".into(),
                    });
                }
            }
        }
        Ok(verdicts)
    }
}

/// How long to wait before polling again after the server could not be reached.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);

/// How long past an approval's deadline a client keeps trying to learn its
/// outcome from a server it cannot reach, before failing closed.
const DEADLINE_GRACE: Duration = Duration::from_secs(10);

/// How long a client keeps asking a server it cannot reach to open an
/// approval when neither it nor the caller set a deadline, before failing
/// closed.
const OPENING_WINDOW: Duration = Duration::from_secs(30);

impl Connection {
    /// Asks an operator to decide escalated event `event_id` of
    /// `trajectory_id` and waits for the outcome: decided, or expired at the
    /// deadline (`deadline`, else this connection's approval timeout, else
    /// the server's). Survives dropped connections and server restarts by
    /// asking again; the approval is kept by the server meanwhile.
    pub async fn ask_operator(
        &self,
        trajectory_id: &str,
        event_id: &str,
        deadline: Option<Duration>,
    ) -> Result<ApprovalRecord, HarnessError> {
        let deadline = deadline.or(self.approval_timeout);
        // Until the server answers, its deadline is unknown without ours: the
        // approval may already be open there, so keep asking only a while.
        let opening_until =
            tokio::time::Instant::now() + deadline.map_or(OPENING_WINDOW, |d| d + DEADLINE_GRACE);
        let request = v1::RequestApprovalRequest {
            event_id: event_id.to_string(),
            trajectory_id: trajectory_id.to_string(),
            timeout_seconds: deadline.map_or(0, |d| d.as_secs().clamp(1, u32::MAX as u64) as u32),
        };
        let mut approval = self
            .retrying(opening_until, || async {
                let wire = self
                    .call_any(request.clone(), |mut c, r| async move {
                        c.request_approval(r).await
                    })
                    .await?;
                approval_answer(wire)
            })
            .await?;
        // The server's deadline is the one that counts, once it is known.
        let left = (approval.expires_at - chrono::Utc::now())
            .to_std()
            .unwrap_or_default();
        let give_up = tokio::time::Instant::now() + left + DEADLINE_GRACE;
        let poll = self.timeout.saturating_sub(Duration::from_secs(2));
        while approval.state == ApprovalState::Pending {
            let id = approval.id.clone();
            approval = self.retrying(give_up, || self.approval(&id, poll)).await?;
        }
        Ok(approval)
    }

    /// Approval `id`; with `wait`, once it is settled or after that long.
    pub async fn approval(&self, id: &str, wait: Duration) -> Result<ApprovalRecord, HarnessError> {
        let request = v1::GetApprovalRequest {
            approval_id: id.to_string(),
            wait_seconds: wait.as_secs().min(u32::MAX as u64) as u32,
        };
        let wire = self
            .call_any(request, |mut c, r| async move { c.get_approval(r).await })
            .await?;
        approval_answer(wire)
    }

    /// Decides approval `id`; needs an operator token.
    pub async fn decide(
        &self,
        id: &str,
        approval: Approval,
        reason: Option<String>,
    ) -> Result<ApprovalRecord, HarnessError> {
        let request = v1::DecideApprovalRequest {
            approval_id: id.to_string(),
            decision: v1::ApprovalDecision::from(approval) as i32,
            reason,
        };
        let wire = self
            .call_any(
                request,
                |mut c, r| async move { c.decide_approval(r).await },
            )
            .await?;
        approval_answer(wire)
    }

    /// Runs `call` until it answers, retrying while the server cannot be
    /// reached, until `give_up`.
    async fn retrying<T, F: Future<Output = Result<T, HarnessError>>>(
        &self,
        give_up: tokio::time::Instant,
        call: impl Fn() -> F,
    ) -> Result<T, HarnessError> {
        loop {
            match call().await {
                Err(HarnessError::Transport(_) | HarnessError::Timeout(_))
                    if tokio::time::Instant::now() + RECONNECT_PAUSE < give_up =>
                {
                    tokio::time::sleep(RECONNECT_PAUSE).await;
                }
                other => return other,
            }
        }
    }
}

/// An approval the server answered with, decoded.
fn approval_answer(wire: v1::Approval) -> Result<ApprovalRecord, HarnessError> {
    invalid_response(sondera_proto::approval_from_wire(
        wire,
        &TenantId::default(),
    ))
}

/// A response the client cannot decode is an error, never a verdict.
fn invalid_response<T>(decoded: Result<T, impl std::fmt::Display>) -> Result<T, HarnessError> {
    decoded.map_err(|e| HarnessError::Remote {
        code: "INVALID_RESPONSE".into(),
        message: e.to_string(),
    })
}

impl Connection {
    /// Revokes the standing approval `grant_id` of `agent_id` (an operator's
    /// token); the grant revoked.
    pub async fn revoke_grant(
        &self,
        agent_id: &str,
        grant_id: &str,
    ) -> Result<Grant, HarnessError> {
        let request = v1::RevokeGrantRequest {
            agent_id: agent_id.to_string(),
            grant_id: grant_id.to_string(),
        };
        let revoked = self
            .call_any(request, |mut c, r| async move { c.revoke_grant(r).await })
            .await?;
        invalid_response(Grant::try_from(revoked))
    }
}

#[async_trait]
impl Backend for Connection {
    async fn put_grant(&self, agent_id: &str, grant: &Grant) -> Result<(), HarnessError> {
        let request = v1::PutGrantRequest {
            agent_id: agent_id.to_string(),
            grant: Some(grant.clone().into()),
        };
        self.call_any(request, |mut c, r| async move { c.put_grant(r).await })
            .await?;
        Ok(())
    }

    async fn grants(&self, agent_id: &str) -> Result<Vec<Grant>, HarnessError> {
        let request = v1::ListGrantsRequest {
            agent_id: agent_id.to_string(),
        };
        let listed = self
            .call_any(request, |mut c, r| async move { c.list_grants(r).await })
            .await?;
        listed
            .grants
            .into_iter()
            .map(|grant| {
                Grant::try_from(grant).map_err(|e| HarnessError::Remote {
                    code: "INVALID_RESPONSE".into(),
                    message: e.to_string(),
                })
            })
            .collect()
    }

    async fn session_grants(&self, trajectory_id: &str) -> Result<Vec<Grant>, HarnessError> {
        let request = v1::ListSessionGrantsRequest {
            trajectory_id: trajectory_id.to_string(),
        };
        let listed = self
            .call_any(
                request,
                |mut c, r| async move { c.list_session_grants(r).await },
            )
            .await?;
        listed
            .grants
            .into_iter()
            .map(|grant| invalid_response(Grant::try_from(grant)))
            .collect()
    }

    async fn adjudicate_all(&self, events: Vec<Event>) -> Result<Vec<Adjudicated>, HarnessError> {
        self.adjudicate_batch(events).await
    }

    async fn adjudicate_one(&self, event: Event) -> Result<Adjudicated, HarnessError> {
        let wire = self
            .call_any(v1::Event::from(event), |mut c, r| async move {
                c.adjudicate(r).await
            })
            .await?;
        Adjudicated::try_from(wire).map_err(|e| HarnessError::Remote {
            code: "INVALID_RESPONSE".into(),
            message: e.to_string(),
        })
    }

    async fn ask_operator(
        &self,
        trajectory_id: &str,
        event_id: &str,
        deadline: Option<Duration>,
    ) -> Result<ApprovalRecord, HarnessError> {
        Connection::ask_operator(self, trajectory_id, event_id, deadline).await
    }

    async fn recorded_agent(&self, trajectory_id: &str) -> Result<Option<Agent>, HarnessError> {
        let request = v1::GetTrajectoryRequest {
            trajectory_id: trajectory_id.to_string(),
            summary_only: true,
            from_seq: 0,
        };
        let detail = match self
            .call_any(request, |mut c, r| async move { c.get_trajectory(r).await })
            .await
        {
            Err(HarnessError::Remote { code, .. }) if code == "NotFound" => {
                return Err(HarnessError::UnknownTrajectory(trajectory_id.to_string()));
            }
            other => other?,
        };
        let agent_id = detail.summary.map(|s| s.agent_id).unwrap_or_default();
        let request = v1::GetAgentRequest { agent_id };
        match self
            .call_any(request, |mut c, r| async move { c.get_agent(r).await })
            .await
        {
            Ok(agent) => Ok(Agent::try_from(agent).ok()),
            Err(HarnessError::Remote { code, .. }) if code == "NotFound" => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_cut_by_the_server_going_away_is_a_transport_failure() {
        let timeout = Duration::from_secs(5);
        let cut = tonic::Status::cancelled("operation was canceled");
        assert!(matches!(
            status_error(cut, timeout),
            HarnessError::Transport(_)
        ));
        let timed_out = tonic::Status::cancelled("Timeout expired");
        assert!(matches!(
            status_error(timed_out, timeout),
            HarnessError::Timeout(_)
        ));
        let refused = tonic::Status::permission_denied("no");
        assert!(matches!(
            status_error(refused, timeout),
            HarnessError::Remote { .. }
        ));
    }

    #[test]
    fn bare_endpoints_get_http_only_on_loopback() {
        for (given, expected) in [
            ("localhost:50051", "http://localhost:50051"),
            ("127.0.0.1:50051", "http://127.0.0.1:50051"),
            ("[::1]:8080", "http://[::1]:8080"),
            ("::1", "http://::1"),
            ("harness.example.com:443", "https://harness.example.com:443"),
            ("10.0.0.5:50051", "https://10.0.0.5:50051"),
            ("[2001:db8::1]:50051", "https://[2001:db8::1]:50051"),
            ("localhost.evil.com:80", "https://localhost.evil.com:80"),
            ("http://harness:50051", "http://harness:50051"),
            ("https://localhost:50051", "https://localhost:50051"),
        ] {
            assert_eq!(normalize_endpoint(given), expected, "{given}");
        }
    }

    #[test]
    fn explicit_values_win_then_the_environment_then_the_env_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("env");
        std::fs::write(
            &file,
            "# harness\nexport SONDERA_HARNESS_ENDPOINT=\"file-host:1\"\nSONDERA_API_TOKEN='file-token'\n",
        )
        .unwrap();
        let env = |key: &str| (key == ENDPOINT_VAR).then(|| "env-host:2".to_string());
        let none = |_: &str| None;

        let from_file = RemoteConfig::resolve_from(None, None, none, Some(&file)).unwrap();
        assert_eq!(from_file.endpoint, "https://file-host:1");
        assert_eq!(from_file.token.as_deref(), Some("file-token"));

        let from_env = RemoteConfig::resolve_from(None, None, env, Some(&file)).unwrap();
        assert_eq!(from_env.endpoint, "https://env-host:2");
        assert_eq!(from_env.token.as_deref(), Some("file-token"));

        let explicit = RemoteConfig::resolve_from(
            Some("localhost:3".into()),
            Some("t".into()),
            env,
            Some(&file),
        )
        .unwrap();
        assert_eq!(
            (explicit.endpoint.as_str(), explicit.token.as_deref()),
            ("http://localhost:3", Some("t"))
        );

        let err = RemoteConfig::resolve_from(None, None, none, None).unwrap_err();
        assert!(err.to_string().contains(ENDPOINT_VAR), "{err}");
    }

    #[test]
    fn servers_after_the_first_are_failover_in_order() {
        let none = |_: &str| None;
        let listed = "localhost:1, b.example:2,localhost:3";
        let config = RemoteConfig::resolve_from(Some(listed.into()), None, none, None).unwrap();
        assert_eq!(config.endpoint, "http://localhost:1");
        assert_eq!(
            config.failover,
            ["https://b.example:2", "http://localhost:3"]
        );
        for bad in ["a:1,,b:2", "a:1,", ",a:1"] {
            let err = RemoteConfig::resolve_from(Some(bad.into()), None, none, None).unwrap_err();
            assert!(err.to_string().contains("empty endpoint"), "{bad}: {err}");
        }
    }
}

tokio::task_local! {
    /// The W3C `traceparent` this task's remote calls carry, when its
    /// caller's trace is not a tracing span (the Python plugin's).
    static TRACE_PARENT: Option<AsciiMetadataValue>;
}

/// Runs `calls` with `traceparent` (`00-TRACE-SPAN-FLAGS`, as W3C Trace
/// Context writes it) sent with every remote call they make, so the
/// server's spans join that trace; one that is not well formed is not sent.
pub async fn with_trace_parent<F: Future>(traceparent: Option<&str>, calls: F) -> F::Output {
    let value = traceparent
        .filter(|t| is_traceparent(t))
        .and_then(|t| AsciiMetadataValue::try_from(t).ok());
    TRACE_PARENT.scope(value, calls).await
}

/// `00-` then 32, 16 and 2 lowercase hex digits, dash-separated.
fn is_traceparent(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let hex = |p: &str, n: usize| {
        p.len() == n && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    parts.len() == 4
        && parts[0] == "00"
        && hex(parts[1], 32)
        && hex(parts[2], 16)
        && hex(parts[3], 2)
}

/// Puts the current span's OpenTelemetry context in `metadata` as the
/// installed propagator writes it (W3C `traceparent`), so the server's
/// spans of this call join the caller's trace.
#[cfg(feature = "otel")]
fn send_trace_context(metadata: &mut tonic::metadata::MetadataMap) {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    struct Metadata<'a>(&'a mut tonic::metadata::MetadataMap);
    impl opentelemetry::propagation::Injector for Metadata<'_> {
        fn set(&mut self, key: &str, value: String) {
            if let (Ok(key), Ok(value)) = (
                tonic::metadata::AsciiMetadataKey::from_bytes(key.as_bytes()),
                AsciiMetadataValue::try_from(value),
            ) {
                self.0.insert(key, value);
            }
        }
    }
    let context = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&context, &mut Metadata(metadata));
    });
}

#[cfg(test)]
mod trace_parent_tests {
    use super::is_traceparent;

    #[test]
    fn only_w3c_traceparents_are_sent() {
        assert!(is_traceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ));
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nx",
        ] {
            assert!(!is_traceparent(bad), "{bad:?}");
        }
    }
}
