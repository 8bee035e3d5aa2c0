//! The same operations as JSON over HTTP under `/v1`, a Server-Sent Events
//! stream, the OpenAPI document, `/healthz` and Prometheus `/metrics`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::rejection::StringRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::value::RawValue;
use sondera_model::{Approval, Decision, Event, Grant};
use sondera_store::{
    AdjudicationFilter, ApprovalFilter, ApprovalRecord, ApprovalStatus, TenantId, TimeWindow,
    TrajectoryFilter, TrajectoryStatus,
};

use crate::auth::{AccessControl, Caller};
use crate::error::ServiceError;
use crate::governance::{Governance, page_request};
use crate::live::{LiveCursor, LiveItem, Resume, StreamFilter};

#[derive(Clone)]
pub(crate) struct HttpState {
    pub(crate) governance: Arc<Governance>,
    pub(crate) access: Arc<AccessControl>,
    /// Whether the dashboard's cookies are marked `Secure` (served over TLS).
    pub(crate) secure_cookies: bool,
    /// The host names the server answers to besides addresses and `localhost`.
    pub(crate) public_hosts: Arc<crate::browser::PublicHosts>,
    /// Whether `/metrics` is served without a token on a server with tokens.
    pub(crate) public_metrics: bool,
    /// The dashboard's sign-in sessions.
    pub(crate) sessions: Arc<crate::sessions::Sessions>,
}

/// The OpenAPI document of the `/v1` routes.
pub const OPENAPI: &str = include_str!("openapi.json");

pub(crate) fn router(state: HttpState) -> axum::Router {
    let body_limit = state.governance.limits().max_request_bytes;
    let request_timeout = state.governance.limits().request_timeout;
    let public_hosts = state.public_hosts.clone();
    axum::Router::new()
        .route("/v1/adjudicate", post(adjudicate))
        .route("/v1/adjudicate/batch", post(adjudicate_batch))
        .route("/v1/hooks/{agent}", post(crate::hooks::hook))
        .route("/v1/agents", get(list_agents))
        .route("/v1/agents/{id}", get(get_agent))
        .route("/v1/agents/{id}/grants", get(list_grants).post(put_grant))
        .route(
            "/v1/agents/{id}/grants/{grant_id}",
            axum::routing::delete(revoke_grant),
        )
        .route("/v1/trajectories", get(list_trajectories))
        .route("/v1/trajectories/{id}", get(get_trajectory))
        .route("/v1/adjudications", get(list_adjudications))
        .route("/v1/analytics", get(analytics))
        .route("/v1/approvals", get(list_approvals).post(request_approval))
        .route("/v1/approvals/pending-count", get(pending_approvals))
        .route("/v1/approvals/{id}", get(get_approval))
        .route("/v1/approvals/{id}/analysis", get(approval_analysis))
        .route("/v1/approvals/{id}/waiting", get(agent_waiting))
        .route("/v1/approvals/{id}/decision", post(decide_approval))
        .route("/v1/events/stream", get(stream_events))
        .route("/v1/events/recent", get(recent_events))
        .route("/v1/policies", get(list_policies))
        .route("/v1/latency", get(latency))
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(openapi))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .merge(crate::dashboard::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::dashboard::session_credentials,
        ))
        .layer(axum::middleware::from_fn_with_state(
            public_hosts,
            crate::browser::same_origin_only,
        ))
        .layer(axum::middleware::from_fn(
            crate::dashboard::security_headers,
        ))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            request_timeout,
            within_request_timeout,
        ))
        .layer(crate::request_id::RequestIdLayer)
        .with_state(state)
}

/// Bounds the whole request, reading its body included, so a client that
/// stalls mid-body is answered and its connection closed. A stream's
/// response starts within it and then runs on.
async fn within_request_timeout(
    State(limit): State<std::time::Duration>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let deadline = RequestDeadline(std::time::Instant::now() + limit);
    request.extensions_mut().insert(deadline);
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ServiceError::Timeout(limit).into_response(),
    }
}

/// When the request's time runs out, counted from its arrival: judging
/// that ends later records nothing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestDeadline(pub(crate) std::time::Instant);

/// The credentials a request carries: an `authorization` header, and the
/// dashboard's session when its cookie named an open one (see
/// [`crate::dashboard::session_credentials`]).
pub(crate) struct Who {
    authorization: Option<String>,
    session: Option<crate::sessions::Session>,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Who {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self {
            authorization: parts
                .headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
            session: parts.extensions.get::<crate::sessions::Session>().cloned(),
        })
    }
}

impl Who {
    /// The dashboard's session the request was made with, if any.
    pub(crate) fn session(&self) -> Option<&crate::sessions::Session> {
        self.session.as_ref()
    }
}

type Reply<T> = Result<Json<T>, ServiceError>;

impl HttpState {
    /// Who `who` is: the `authorization` header's token when there is one,
    /// else the dashboard's session, else no one (everyone, on a
    /// loopback-only server).
    pub(crate) fn caller(&self, who: &Who) -> Result<Caller, ServiceError> {
        match (&who.authorization, &who.session) {
            (Some(header), _) => self.access.caller(Some(header)),
            (None, Some(session)) => Ok(session.caller.clone()),
            (None, None) => self.access.caller(None),
        }
    }

    fn tenant(&self, who: &Who) -> Result<TenantId, ServiceError> {
        Ok(self.caller(who)?.tenant)
    }

    /// The tenant, when the caller is one of its operators.
    fn operator(&self, who: &Who, doing: &str) -> Result<TenantId, ServiceError> {
        Ok(self.caller(who)?.operator(doing)?.clone())
    }

    /// Returns when the credentials `who` follows a stream with stop being
    /// good: the session ends, or the token is taken out of the configuration.
    async fn credentials_end(&self, who: &Who) {
        match (&who.authorization, &who.session) {
            (Some(header), _) => match crate::auth::bearer_digest(Some(header)) {
                Some(digest) => self.access.until_revoked(digest).await,
                None => std::future::pending().await,
            },
            (None, Some(session)) => session.ended(&self.access).await,
            (None, None) => std::future::pending().await,
        }
    }

    /// A JSON body of type `T`, or an error naming what is wrong with it.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(
        &self,
        body: Result<String, StringRejection>,
        what: &str,
    ) -> Result<T, ServiceError> {
        let body = self.body(body)?;
        serde_json::from_str(&body)
            .map_err(|e| ServiceError::InvalidArgument(format!("not a valid {what}: {e}")))
    }

    /// The request body, or an error in the service's own format.
    fn body(&self, body: Result<String, StringRejection>) -> Result<String, ServiceError> {
        body.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ServiceError::TooLarge(format!(
                    "the request body is larger than the {}-byte limit (--max-request-bytes)",
                    self.governance.limits().max_request_bytes
                ))
            } else {
                ServiceError::InvalidArgument(rejection.body_text())
            }
        })
    }

    fn event(&self, text: &str) -> Result<Event, ServiceError> {
        let limit = self.governance.limits().max_event_bytes;
        Event::from_json(text, limit).map_err(|e| match e {
            sondera_model::EventDecodeError::TooLarge { .. } => {
                ServiceError::TooLarge(format!("{e} (--max-event-bytes)"))
            }
            other => ServiceError::InvalidArgument(other.to_string()),
        })
    }
}

async fn adjudicate(
    State(state): State<HttpState>,
    Extension(RequestDeadline(deadline)): Extension<RequestDeadline>,
    who: Who,
    body: Result<String, StringRejection>,
) -> Reply<sondera_model::Adjudicated> {
    let tenant = state.tenant(&who)?;
    let body = state.body(body)?;
    let event = state.event(&body)?;
    let governance = &state.governance;
    let verdict = governance
        .limits()
        .timed(governance.adjudicate_until(&tenant, event, deadline))
        .await?;
    Ok(Json(verdict))
}

#[derive(Deserialize)]
struct BatchBody<'a> {
    #[serde(borrow)]
    events: Vec<&'a RawValue>,
}

async fn adjudicate_batch(
    State(state): State<HttpState>,
    Extension(RequestDeadline(deadline)): Extension<RequestDeadline>,
    who: Who,
    body: Result<String, StringRejection>,
) -> Reply<serde_json::Value> {
    let tenant = state.tenant(&who)?;
    let body = state.body(body)?;
    let batch: BatchBody = serde_json::from_str(&body).map_err(|e| {
        ServiceError::InvalidArgument(format!("expected {{\"events\": [...]}}: {e}"))
    })?;
    state.governance.limits().check_batch(batch.events.len())?;
    let events = batch
        .events
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            state.event(raw.get()).map_err(|e| match e {
                ServiceError::TooLarge(m) => ServiceError::TooLarge(format!("events[{i}]: {m}")),
                other => ServiceError::InvalidArgument(format!("events[{i}]: {other}")),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let governance = &state.governance;
    let results = governance
        .limits()
        .timed(governance.adjudicate_batch_until(&tenant, events, deadline))
        .await?;
    let results: Vec<serde_json::Value> = results
        .into_iter()
        .map(|r| match r {
            Ok(verdict) => serde_json::json!({ "adjudicated": verdict }),
            Err(e) => {
                serde_json::json!({ "error": { "code": e.code_name(), "message": e.to_string() } })
            }
        })
        .collect();
    Ok(Json(serde_json::json!({ "results": results })))
}

/// An optional query value read as a `T`, or an error naming what it may be.
fn parsed<T>(value: Option<&str>) -> Result<Option<T>, ServiceError>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    value
        .map(|v| {
            v.parse::<T>()
                .map_err(|e| ServiceError::InvalidArgument(e.to_string()))
        })
        .transpose()
}

/// Query parameters, refused with a JSON error naming the bad one.
struct Params<T>(T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S>
    for Params<T>
{
    type Rejection = ServiceError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Query::try_from_uri(&parts.uri)
            .map(|Query(q)| Params(q))
            .map_err(|e| ServiceError::InvalidArgument(e.body_text()))
    }
}

#[derive(Deserialize, Default)]
struct PageQuery {
    page_size: Option<usize>,
    page_token: Option<String>,
}

async fn list_agents(
    State(state): State<HttpState>,
    who: Who,
    Params(q): Params<PageQuery>,
) -> Reply<sondera_store::Page<sondera_store::AgentRecord>> {
    let tenant = state.operator(&who, "listing agents")?;
    let page = page_request(q.page_size, q.page_token)?;
    Ok(Json(state.governance.list_agents(&tenant, &page).await?))
}

async fn get_agent(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
) -> Reply<sondera_model::Agent> {
    let tenant = state.tenant(&who)?;
    Ok(Json(state.governance.agent(&tenant, &id).await?))
}

async fn put_grant(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
    body: Result<String, StringRejection>,
) -> Reply<serde_json::Value> {
    let caller = state.caller(&who)?;
    let grant: Grant = state.json(body, "grant")?;
    state.governance.put_grant(&caller, &id, grant).await?;
    Ok(Json(serde_json::json!({})))
}

/// A standing grant as listed: with the id an operator names to revoke it.
#[derive(serde::Serialize)]
struct ListedGrant {
    id: String,
    #[serde(flatten)]
    grant: Grant,
}

impl From<Grant> for ListedGrant {
    fn from(grant: Grant) -> Self {
        Self {
            id: grant.shape.id(),
            grant,
        }
    }
}

#[derive(serde::Serialize)]
struct GrantList {
    grants: Vec<ListedGrant>,
}

async fn revoke_grant(
    State(state): State<HttpState>,
    who: Who,
    Path((id, grant_id)): Path<(String, String)>,
) -> Reply<ListedGrant> {
    let caller = state.caller(&who)?;
    let revoked = state
        .governance
        .revoke_grant(&caller, &id, &grant_id)
        .await?;
    Ok(Json(revoked.into()))
}

async fn list_grants(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
) -> Reply<GrantList> {
    let tenant = state.tenant(&who)?;
    let grants = state.governance.grants(&tenant, &id).await?;
    Ok(Json(GrantList {
        grants: grants.into_iter().map(Into::into).collect(),
    }))
}

#[derive(Deserialize)]
struct TrajectoryQuery {
    agent_id: Option<String>,
    status: Option<String>,
    session_id: Option<String>,
    decision: Option<String>,
    policy_id: Option<String>,
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
    text: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
}

async fn list_trajectories(
    State(state): State<HttpState>,
    who: Who,
    Params(q): Params<TrajectoryQuery>,
) -> Reply<sondera_store::Page<sondera_store::TrajectorySummary>> {
    let tenant = state.operator(&who, "listing trajectories")?;
    let status = parsed::<TrajectoryStatus>(q.status.as_deref())?;
    let decision = parsed::<Decision>(q.decision.as_deref())?;
    let non_empty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
    let filter = TrajectoryFilter {
        agent_id: non_empty(q.agent_id),
        status,
        session_id: non_empty(q.session_id),
        decision,
        policy_id: non_empty(q.policy_id),
        active: TimeWindow {
            since: q.since,
            until: q.until,
        },
        text: non_empty(q.text),
    };
    let page = page_request(q.page_size, q.page_token)?;
    Ok(Json(
        state
            .governance
            .list_trajectories(&tenant, filter, &page)
            .await?,
    ))
}

#[derive(Deserialize)]
struct DetailQuery {
    #[serde(default)]
    summary_only: bool,
}

async fn get_trajectory(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
    Params(q): Params<DetailQuery>,
) -> Reply<sondera_store::TrajectoryDetail> {
    let tenant = state.tenant(&who)?;
    Ok(Json(
        state
            .governance
            .trajectory(&tenant, &id, q.summary_only)
            .await?,
    ))
}

#[derive(Deserialize)]
struct AdjudicationQuery {
    agent_id: Option<String>,
    trajectory_id: Option<String>,
    decision: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
}

async fn list_adjudications(
    State(state): State<HttpState>,
    who: Who,
    Params(q): Params<AdjudicationQuery>,
) -> Reply<sondera_store::Page<sondera_store::AdjudicationRecord>> {
    let tenant = state.operator(&who, "listing adjudications")?;
    let decision = match q.decision.as_deref() {
        None => None,
        Some("deny") => Some(Decision::Deny),
        Some("escalate") => Some(Decision::Escalate),
        Some(other) => {
            return Err(ServiceError::InvalidArgument(format!(
                "unknown decision `{other}`: expected deny or escalate"
            )));
        }
    };
    let filter = AdjudicationFilter {
        agent_id: q.agent_id,
        trajectory_id: q.trajectory_id,
        decision,
    };
    let page = page_request(q.page_size, q.page_token)?;
    Ok(Json(
        state
            .governance
            .list_adjudications(&tenant, filter, &page)
            .await?,
    ))
}

#[derive(Deserialize)]
struct WindowQuery {
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
}

async fn analytics(
    State(state): State<HttpState>,
    who: Who,
    Params(q): Params<WindowQuery>,
) -> Reply<sondera_store::Analytics> {
    let tenant = state.operator(&who, "reading analytics")?;
    let window = TimeWindow {
        since: q.since,
        until: q.until,
    };
    Ok(Json(state.governance.analytics(&tenant, &window).await?))
}

#[derive(Deserialize)]
struct StreamQuery {
    agent_id: Option<String>,
    trajectory_id: Option<String>,
    /// Start with the last this many items the history kept.
    recent: Option<usize>,
    /// Start right after this place (as `Last-Event-ID` does).
    after: Option<String>,
}

/// The most items a page asks the live history for.
const MAX_RECENT: usize = 1000;

impl StreamQuery {
    fn filter(&self) -> StreamFilter {
        StreamFilter {
            agent_id: self.agent_id.clone(),
            trajectory_id: self.trajectory_id.clone(),
        }
    }

    /// Where to start: after `Last-Event-ID` or `after`, else with the
    /// `recent` items, else now.
    fn resume(&self, last_event_id: Option<&str>) -> Result<Resume, ServiceError> {
        if let Some(after) = last_event_id.or(self.after.as_deref()) {
            return Ok(Resume::After(after.parse::<LiveCursor>()?));
        }
        Ok(match self.recent {
            Some(n) if n > MAX_RECENT => {
                return Err(ServiceError::InvalidArgument(format!(
                    "`recent` is at most {MAX_RECENT}, not {n}"
                )));
            }
            Some(n) => Resume::Recent(n),
            None => Resume::Now,
        })
    }
}

/// A live item as the stream and the history send it: its kind (the SSE
/// event name) and its JSON.
fn live_json(item: &LiveItem) -> (&'static str, serde_json::Value) {
    match item {
        LiveItem::Recorded {
            seq,
            event,
            verdict,
        } => (
            "event",
            serde_json::json!({ "seq": seq, "event": event, "adjudication": verdict }),
        ),
        LiveItem::Approval(approval) => (
            "approval",
            serde_json::to_value(approval).unwrap_or_default(),
        ),
    }
}

/// What the live stream's history kept, as JSON: for a page that shares
/// another tab's stream, or opens after things happened.
async fn recent_events(
    State(state): State<HttpState>,
    who: Who,
    Params(q): Params<StreamQuery>,
) -> Reply<serde_json::Value> {
    let tenant = state.operator(&who, "reading the live stream")?;
    let resume = match q.resume(None)? {
        Resume::Now => Resume::Recent(100),
        other => other,
    };
    let (backlog, now) = state.governance.live_history(&tenant, &q.filter(), resume);
    let items: Vec<serde_json::Value> = backlog
        .items
        .iter()
        .map(|live| {
            let (kind, data) = live_json(&live.item);
            let id = state.governance.live_cursor(live.id).to_string();
            serde_json::json!({ "id": id, "kind": kind, "data": data })
        })
        .collect();
    Ok(Json(serde_json::json!({
        "items": items,
        "gap": backlog.gap,
        "cursor": now.to_string(),
    })))
}

async fn stream_events(
    State(state): State<HttpState>,
    who: Who,
    headers: axum::http::HeaderMap,
    Params(q): Params<StreamQuery>,
) -> Result<impl IntoResponse, ServiceError> {
    let tenant = state.operator(&who, "following the live stream")?;
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty());
    let resume = q.resume(last_event_id)?;
    let (subscription, gap) = state.governance.resume(&tenant, q.filter(), resume);
    // A reconnect that asked for more than the history kept is told so
    // first, and then gets all that was kept.
    let gap = futures_util::stream::iter(gap.then(|| {
        Ok::<_, Infallible>(
            SseEvent::default()
                .event("gap")
                .data("some events of this stream were published while this page was away and are no longer kept: reload to see them"),
        )
    }));
    // A slow subscriber gets one `error` event naming why, then the stream
    // and its connection end. One that reads nothing at all is closed when
    // its connection has been stuck for the idle timeout.
    let governance = state.governance.clone();
    let stream = futures_util::StreamExt::map(subscription.into_stream(), move |next| {
        Ok::<_, Infallible>(match next {
            Ok(live) => {
                let (kind, data) = live_json(&live.item);
                SseEvent::default()
                    .event(kind)
                    .id(governance.live_cursor(live.id).to_string())
                    .data(data.to_string())
            }
            Err(e) => SseEvent::default().event("error").data(e.to_string()),
        })
    });
    let stream = futures_util::StreamExt::chain(gap, stream);
    // Signing out, the session's expiry or the token's removal ends it.
    let ends = {
        let state = state.clone();
        async move { state.credentials_end(&who).await }
    };
    let stream = futures_util::StreamExt::take_until(stream, ends);
    let events: Sse<_> = Sse::new(stream).keep_alive(KeepAlive::default());
    Ok(([(header::CONNECTION, "close")], events))
}

/// What an agent sends to ask an operator about one of its escalated steps.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalRequestBody {
    trajectory_id: String,
    event_id: String,
    #[serde(default)]
    timeout_seconds: Option<u64>,
}

async fn request_approval(
    State(state): State<HttpState>,
    who: Who,
    body: Result<String, StringRejection>,
) -> Reply<ApprovalRecord> {
    let tenant = state.tenant(&who)?;
    let asked: ApprovalRequestBody = state.json(body, "approval request")?;
    let timeout = asked.timeout_seconds.map(std::time::Duration::from_secs);
    let approval = state
        .governance
        .request_approval(&tenant, &asked.trajectory_id, &asked.event_id, timeout)
        .await?;
    Ok(Json(approval))
}

#[derive(Deserialize)]
struct WaitQuery {
    #[serde(default)]
    wait: u64,
}

async fn get_approval(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
    Params(q): Params<WaitQuery>,
) -> Reply<ApprovalRecord> {
    let tenant = state.tenant(&who)?;
    let wait = std::time::Duration::from_secs(q.wait);
    Ok(Json(
        state.governance.wait_approval(&tenant, &id, wait).await?,
    ))
}

/// What the shell analysis finds in an escalated command, for the person
/// deciding: the programs it runs, the hosts it reaches, the paths outside
/// the workspace it deletes, the risks with the words that show them.
/// Empty for an action that is not a shell command.
async fn approval_analysis(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
) -> Reply<serde_json::Value> {
    let tenant = state.operator(&who, "reading an approval's analysis")?;
    let approval = state.governance.current_approval(&tenant, &id).await?;
    let sondera_model::Payload::ShellCommand {
        command,
        working_dir,
        ..
    } = &approval.action
    else {
        return Ok(Json(serde_json::json!({})));
    };
    let engine = state.governance.engine();
    let workspace = engine.workspace();
    let context = sondera_guard::shell::ShellContext {
        working_dir: working_dir.as_deref().unwrap_or(&workspace.root),
        workspace_root: &workspace.root,
        home: &workspace.home,
    };
    let analysis = sondera_guard::shell::analyze(command, &context);
    let risks: Vec<serde_json::Value> = analysis
        .risks
        .iter()
        .map(|r| serde_json::json!({"kind": r.kind.as_str(), "evidence": r.evidence}))
        .collect();
    Ok(Json(serde_json::json!({
        "programs": analysis.programs(),
        "hosts": analysis.hosts,
        "paths_outside_workspace": analysis.paths_outside_workspace,
        "risks": risks,
        "privileged": analysis.privileged(),
        "unparsable": analysis.unparsable,
    })))
}

#[derive(Deserialize)]
struct ApprovalQuery {
    status: Option<String>,
    agent_id: Option<String>,
    trajectory_id: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
}

async fn list_approvals(
    State(state): State<HttpState>,
    who: Who,
    Params(q): Params<ApprovalQuery>,
) -> Reply<sondera_store::Page<ApprovalRecord>> {
    let caller = state.caller(&who)?;
    let status = parsed::<ApprovalStatus>(q.status.as_deref())?;
    let filter = ApprovalFilter {
        status,
        agent_id: q.agent_id,
        trajectory_id: q.trajectory_id,
    };
    let page = page_request(q.page_size, q.page_token)?;
    Ok(Json(
        state
            .governance
            .list_approvals(&caller, filter, &page)
            .await?,
    ))
}

async fn agent_waiting(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
) -> Reply<crate::approvals::AgentWaiting> {
    let caller = state.caller(&who)?;
    Ok(Json(state.governance.agent_waiting(&caller, &id).await?))
}

async fn pending_approvals(State(state): State<HttpState>, who: Who) -> Reply<serde_json::Value> {
    let caller = state.caller(&who)?;
    let pending = state.governance.pending_approvals(&caller).await?;
    Ok(Json(serde_json::json!({ "pending": pending })))
}

/// An operator's decision.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: Approval,
    #[serde(default)]
    reason: Option<String>,
}

async fn decide_approval(
    State(state): State<HttpState>,
    who: Who,
    Path(id): Path<String>,
    body: Result<String, StringRejection>,
) -> Reply<ApprovalRecord> {
    let caller = state.caller(&who)?;
    let decided: DecisionBody = state.json(body, "decision")?;
    let approval = state
        .governance
        .decide_approval(&caller, &id, decided.decision, decided.reason)
        .await?;
    Ok(Json(approval))
}

/// One loaded policy as the dashboard lists it.
#[derive(serde::Serialize)]
struct LoadedPolicy<'a> {
    #[serde(flatten)]
    metadata: &'a sondera_model::PolicyMetadata,
    /// `permit` or `forbid`.
    effect: &'static str,
    /// `@mode("monitor")`: evaluated and reported, never enforced.
    shadow: bool,
}

async fn list_policies(State(state): State<HttpState>, who: Who) -> Reply<serde_json::Value> {
    state.operator(&who, "listing the policies")?;
    let engine = state.governance.engine();
    let policies: Vec<LoadedPolicy<'_>> = engine
        .policy_ids()
        .filter_map(|id| engine.policy(id))
        .map(|metadata| LoadedPolicy {
            effect: match engine.forbids(&metadata.policy_id) {
                Some(true) => "forbid",
                _ => "permit",
            },
            shadow: metadata
                .annotations
                .get("mode")
                .is_some_and(|m| m == "monitor"),
            metadata,
        })
        .collect();
    Ok(Json(serde_json::json!({
        "mode": engine.mode(),
        "policies": policies,
    })))
}

async fn latency(
    State(state): State<HttpState>,
    who: Who,
) -> Reply<crate::metrics::LatencySummary> {
    let tenant = state.operator(&who, "reading latency")?;
    Ok(Json(state.governance.latency(&tenant)))
}

async fn health(State(state): State<HttpState>, who: Who) -> Reply<serde_json::Value> {
    state.tenant(&who)?;
    state.governance.healthy().await?;
    Ok(Json(serde_json::json!({
        "status": "serving",
        "version": env!("CARGO_PKG_VERSION"),
        "policies": state.governance.engine().policy_ids().count(),
    })))
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// Liveness and readiness without credentials: whether the store answers.
async fn healthz(State(state): State<HttpState>) -> Response {
    match state.governance.healthy().await {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("store unavailable: {e}\n"),
        )
            .into_response(),
    }
}

/// The process's counters, summed over every tenant: served by a server
/// without tokens (one tenant, loopback) and, on a server with tokens, only
/// when started with `--public-metrics`; a tenant's operators read their
/// own numbers at `/v1/latency` and `/v1/analytics`.
async fn metrics(State(state): State<HttpState>) -> Response {
    if !state.public_metrics && !state.access.is_loopback_only() {
        return ServiceError::PermissionDenied(
            "/metrics sums every tenant's steps, so a server with tokens serves it only when started with --public-metrics".into(),
        )
        .into_response();
    }
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        state.governance.metrics().render(),
    )
        .into_response()
}
