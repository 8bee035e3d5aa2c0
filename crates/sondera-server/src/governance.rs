//! What the service does, independent of the protocol that asked: judge
//! events for a tenant, answer queries about that tenant's records, and fan
//! recorded events out to live subscribers.

use std::sync::Arc;
use std::time::Instant;

use chrono::{SubsecRound, Utc};
use sondera_harness::{Adjudicator, HarnessError};
use sondera_model::{Actor, Adjudicated, Agent, Event, Grant, GrantScope};
use sondera_policy::PolicyEngine;
use sondera_store::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, Page, PageRequest, StoreError,
    TenantId, TimeWindow, TrajectoryDetail, TrajectoryFilter, TrajectoryStore, TrajectorySummary,
};
use tokio::sync::{Notify, watch};

use crate::auth::Caller;
use crate::error::ServiceError;
use tracing::Instrument as _;

use crate::limits::Limits;
use crate::live::{Backlog, Live, LiveCursor, LiveItem, Resume, StreamFilter, Subscription};
use crate::metrics::{LatencySummary, Metrics, TenantLatency};

/// The service's state: one adjudicator, its store, the live stream and the metrics.
pub struct Governance {
    adjudicator: Arc<Adjudicator>,
    live: Live,
    closing: watch::Sender<bool>,
    metrics: Arc<Metrics>,
    /// Replaced whole when a reload changes what can change while running.
    limits: parking_lot::RwLock<Arc<Limits>>,
    /// Notified whenever this process settles an approval.
    pub(crate) settled: Notify,
    /// Held for writing while this process settles an approval and records
    /// its outcome, and for reading while an approval is read: nobody here
    /// sees an approval settled before its trajectory holds the outcome.
    pub(crate) settling: tokio::sync::RwLock<()>,
    latency: TenantLatency,
    /// Agents waiting on approvals here.
    pub(crate) waiters: crate::approvals::Waiters,
    /// The live stream is fed by a shared store's announcements (see
    /// `shared`), so nothing is published as it happens here.
    shared_stream: std::sync::atomic::AtomicBool,
    /// Set when the policies in force are the store's current revision.
    pub(crate) store_policies: Option<crate::policies::StorePolicies>,
    /// Woken when the store's tokens may have changed.
    pub(crate) tokens_changed: Notify,
    /// Tells webhooks of approvals, when any are configured.
    notifier: Option<crate::webhooks::Notifier>,
}

impl Governance {
    /// The service over `adjudicator`, counting in `metrics`, bounded by `limits`.
    pub fn new(adjudicator: Arc<Adjudicator>, metrics: Arc<Metrics>, limits: Limits) -> Self {
        let live = Live::new(limits.stream_buffer, Default::default());
        Self {
            adjudicator,
            live,
            closing: watch::Sender::new(false),
            metrics,
            limits: parking_lot::RwLock::new(Arc::new(limits)),
            settled: Notify::new(),
            settling: tokio::sync::RwLock::new(()),
            latency: TenantLatency::default(),
            waiters: Default::default(),
            shared_stream: Default::default(),
            store_policies: None,
            tokens_changed: Notify::new(),
            notifier: None,
        }
    }

    /// Judges by the store's current policy revision, loaded with `builder`.
    pub(crate) fn take_policies_from_store(&mut self, builder: crate::policies::PolicyBuilder) {
        self.store_policies = Some(crate::policies::StorePolicies::new(builder));
    }

    /// Notifies webhooks of the approvals this server opens and settles.
    pub(crate) fn notify_through(&mut self, notifier: crate::webhooks::Notifier) {
        self.notifier = Some(notifier);
    }

    /// Hands news of `approval` to the webhooks; returns at once.
    pub(crate) fn notify(
        &self,
        approval: &sondera_store::ApprovalRecord,
        news: crate::webhooks::ApprovalNews,
    ) {
        if let Some(notifier) = &self.notifier {
            notifier.approval(approval, news);
        }
    }

    /// Whether the policies in force are the store's current revision.
    pub fn follows_store_policies(&self) -> bool {
        self.store_policies.is_some()
    }

    /// Feeds the live stream from a shared store's announcements, which
    /// `changes` receives, from now until the service closes.
    pub(crate) fn follow_shared(
        self: &Arc<Self>,
        shared: Arc<dyn sondera_store::SharedChanges>,
        changes: tokio::sync::mpsc::Receiver<sondera_store::Change>,
    ) {
        self.shared_stream
            .store(true, std::sync::atomic::Ordering::Release);
        tokio::spawn(crate::shared::follow(self.clone(), shared, changes));
    }

    /// Tells the receiver when the service closes.
    pub(crate) fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Ends every live subscription, so shutdown need not wait for them.
    pub fn close_streams(&self) {
        self.closing.send_replace(true);
    }

    /// The limits requests are held to.
    pub fn limits(&self) -> Arc<Limits> {
        self.limits.read().clone()
    }

    /// Holds the requests that start from now to `limits`.
    pub fn set_limits(&self, limits: Limits) {
        *self.limits.write() = Arc::new(limits);
    }

    /// The service's counters.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    pub(crate) fn store(&self) -> &Arc<dyn TrajectoryStore> {
        self.adjudicator.store()
    }

    /// The policies in force.
    pub fn engine(&self) -> Arc<PolicyEngine> {
        self.adjudicator.engine()
    }

    /// Puts `engine` in force; events being judged finish under the old set.
    pub fn replace_engine(&self, engine: PolicyEngine) {
        self.adjudicator.replace_engine(engine);
    }

    /// Judges and records one event; the verdict is returned only once it is durable.
    pub async fn adjudicate(
        &self,
        tenant: &TenantId,
        event: Event,
    ) -> Result<Adjudicated, ServiceError> {
        let deadline = Instant::now() + self.limits().request_timeout;
        self.adjudicate_until(tenant, event, deadline).await
    }

    /// Judges and records one event if judging ends by `deadline` (the
    /// request's); otherwise answers [`ServiceError::Timeout`] at the
    /// deadline and records nothing, so the event may be sent again.
    pub async fn adjudicate_until(
        &self,
        tenant: &TenantId,
        event: Event,
        deadline: Instant,
    ) -> Result<Adjudicated, ServiceError> {
        let started = Instant::now();
        let limit = self.limits().request_timeout;
        let span = tracing::Span::current();
        span.record("tenant", tenant.as_str());
        span.record("agent", event.agent.id.as_str());
        span.record("trajectory", event.trajectory_id.as_str());
        // Judged in a task of its own, so the caller is answered at the
        // deadline even while judging runs on; what ends past it is not
        // recorded (see `Adjudicator::adjudicate_before`).
        let guardrail = guardrail_span(tenant, &event);
        let judging = tokio::spawn({
            let (adjudicator, tenant) = (self.adjudicator.clone(), tenant.clone());
            async move {
                let recorded = adjudicator
                    .adjudicate_before(&tenant, &event, deadline)
                    .await;
                (recorded, event)
            }
            .instrument(guardrail.clone())
        });
        let (recorded, event) = match tokio::time::timeout_at(deadline.into(), judging).await {
            Ok(Ok(judged)) => judged,
            Ok(Err(failed)) => {
                return Err(ServiceError::Internal(format!("judging failed: {failed}")));
            }
            Err(_) => return Err(ServiceError::Timeout(limit)),
        };
        let recorded = recorded.map_err(|e| match e {
            HarnessError::DeadlineExceeded(_) => ServiceError::Timeout(limit),
            other => other.into(),
        })?;
        let elapsed = started.elapsed();
        log_verdict(&span, &recorded.verdict);
        record_guardrail(&guardrail, &recorded.verdict);
        self.metrics
            .adjudicated(recorded.verdict.decision, event.payload.kind(), elapsed);
        self.latency.record(tenant, elapsed);
        if !self.has_shared_stream() {
            let item = LiveItem::Recorded {
                seq: recorded.seq,
                event,
                verdict: recorded.verdict.clone(),
            };
            self.live.publish(tenant, item);
        }
        Ok(recorded.verdict)
    }

    fn has_shared_stream(&self) -> bool {
        self.shared_stream
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Tells live subscribers of something that happened here, and keeps it
    /// in the stream's history; with a shared stream the store's
    /// announcement of it does.
    pub(crate) fn publish(&self, tenant: &TenantId, item: LiveItem) {
        if !self.has_shared_stream() {
            self.live.publish(tenant, item);
        }
    }

    /// Publishes what a shared store announced.
    pub(crate) fn publish_shared(&self, tenant: &TenantId, item: LiveItem) {
        self.live.publish(tenant, item);
    }

    /// Judges events in order, stopping after the first that fails (its
    /// error is the last result).
    pub async fn adjudicate_batch(
        &self,
        tenant: &TenantId,
        events: Vec<Event>,
    ) -> Result<Vec<Result<Adjudicated, ServiceError>>, ServiceError> {
        let deadline = Instant::now() + self.limits().request_timeout;
        self.adjudicate_batch_until(tenant, events, deadline).await
    }

    /// [`Governance::adjudicate_batch`] within one deadline for the batch.
    pub async fn adjudicate_batch_until(
        &self,
        tenant: &TenantId,
        events: Vec<Event>,
        deadline: Instant,
    ) -> Result<Vec<Result<Adjudicated, ServiceError>>, ServiceError> {
        self.limits().check_batch(events.len())?;
        let mut results = Vec::with_capacity(events.len());
        for event in events {
            let result = self.adjudicate_until(tenant, event, deadline).await;
            let failed = result.is_err();
            results.push(result);
            if failed {
                break;
            }
        }
        Ok(results)
    }

    /// The tenant's agents.
    pub async fn list_agents(
        &self,
        tenant: &TenantId,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, ServiceError> {
        Ok(self.store().list_agents(tenant.into(), page).await?)
    }

    /// One of the tenant's agents.
    pub async fn agent(&self, tenant: &TenantId, id: &str) -> Result<Agent, ServiceError> {
        self.store()
            .agent(tenant, id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("agent {id} is not recorded")))
    }

    /// Keeps a standing approval for `agent_id`, granted by `caller` (an
    /// operator) now, whoever the body names. Only "always" approvals are
    /// kept here; session approvals live in the harness scope.
    pub async fn put_grant(
        &self,
        caller: &Caller,
        agent_id: &str,
        grant: Grant,
    ) -> Result<(), ServiceError> {
        let tenant = caller.operator("keeping a standing grant")?;
        if agent_id.is_empty() {
            return Err(ServiceError::InvalidArgument(
                "`agent_id` must not be empty".into(),
            ));
        }
        self.limits().check_field("agent_id", agent_id.len())?;
        let grant = Grant {
            granted_by: Actor::human(caller.name.clone()),
            granted_at: Utc::now().round_subsecs(6),
            ..grant
        };
        let size = serde_json::to_vec(&grant).map_or(usize::MAX, |json| json.len());
        self.limits().check_field("grant", size)?;
        if grant.scope != GrantScope::Always {
            return Err(ServiceError::InvalidArgument(
                "the server keeps standing (`always`) approvals only; session approvals live in the harness scope".into(),
            ));
        }
        Ok(self.store().put_grant(tenant, agent_id, &grant).await?)
    }

    /// The standing approvals of one of the tenant's agents.
    pub async fn grants(
        &self,
        tenant: &TenantId,
        agent_id: &str,
    ) -> Result<Vec<Grant>, ServiceError> {
        Ok(self.store().grants(tenant, agent_id).await?)
    }

    /// Revokes the standing approval with id `grant_id` (see
    /// [`sondera_model::ActionShape::id`]) of one of the caller's tenant's
    /// agents, and returns it. Steps judged from then on ask again; a
    /// harness scope already running keeps the grants it started with.
    pub async fn revoke_grant(
        &self,
        caller: &Caller,
        agent_id: &str,
        grant_id: &str,
    ) -> Result<Grant, ServiceError> {
        let tenant = caller.operator("revoking a standing grant")?;
        let not_found = || {
            ServiceError::NotFound(format!(
                "agent {agent_id} has no standing grant {grant_id}: `sondera grants list {agent_id}` lists them"
            ))
        };
        let kept = self.store().grants(tenant, agent_id).await?;
        let grant = kept
            .into_iter()
            .find(|g| g.shape.id() == grant_id)
            .ok_or_else(not_found)?;
        let revoked = self
            .store()
            .revoke_grant(tenant, agent_id, &grant.shape)
            .await?
            .ok_or_else(not_found)?;
        tracing::info!(
            tenant = tenant.as_str(),
            agent = agent_id,
            grant = grant_id,
            shape = %revoked.shape,
            revoked_by = caller.name.as_str(),
            "standing grant revoked"
        );
        Ok(revoked)
    }

    /// The tenant's trajectories, newest first.
    pub async fn list_trajectories(
        &self,
        tenant: &TenantId,
        filter: TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, ServiceError> {
        Ok(self
            .store()
            .list_trajectories(tenant.into(), &filter, page)
            .await?)
    }

    /// A trajectory of `tenant`, with its events unless `summary_only`.
    pub async fn trajectory(
        &self,
        tenant: &TenantId,
        id: &str,
        summary_only: bool,
    ) -> Result<TrajectoryDetail, ServiceError> {
        let not_found = || ServiceError::NotFound(format!("trajectory {id} is not recorded"));
        let detail = if summary_only {
            self.store()
                .trajectory(tenant, id)
                .await?
                .map(|summary| TrajectoryDetail {
                    summary,
                    events: Vec::new(),
                })
        } else {
            self.store().trajectory_with_events(tenant, id).await?
        };
        detail.ok_or_else(not_found)
    }

    /// The tenant's deny and escalate verdicts, newest first.
    pub async fn list_adjudications(
        &self,
        tenant: &TenantId,
        filter: AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, ServiceError> {
        Ok(self
            .store()
            .list_adjudications(tenant.into(), &filter, page)
            .await?)
    }

    /// Counts over the tenant's records in a time window.
    pub async fn analytics(
        &self,
        tenant: &TenantId,
        window: &TimeWindow,
    ) -> Result<Analytics, ServiceError> {
        Ok(self.store().analytics(tenant.into(), window).await?)
    }

    /// Latency percentiles of the tenant's adjudications since the server started.
    pub fn latency(&self, tenant: &TenantId) -> LatencySummary {
        self.latency.summary(tenant)
    }

    /// Follows events recorded from now on.
    pub fn subscribe(&self, tenant: &TenantId, filter: StreamFilter) -> Subscription {
        self.resume(tenant, filter, Resume::Now).0
    }

    /// Follows the live stream from `resume`: first what the history kept
    /// since then, then everything recorded from now on. The flag is set
    /// when some of what was asked for is no longer kept.
    pub fn resume(
        &self,
        tenant: &TenantId,
        filter: StreamFilter,
        resume: Resume,
    ) -> (Subscription, bool) {
        let (Backlog { items, gap }, receiver, _) = self.live.subscribe(tenant, &filter, resume);
        let subscription = Subscription {
            tenant: tenant.clone(),
            filter,
            backlog: items.into_iter(),
            receiver,
            closing: self.closing.subscribe(),
            _active: self.metrics.stream_opened(),
        };
        (subscription, gap)
    }

    /// What the live stream's history kept for `tenant` from `resume`, and
    /// the place in the stream it reaches.
    pub fn live_history(
        &self,
        tenant: &TenantId,
        filter: &StreamFilter,
        resume: Resume,
    ) -> (Backlog, LiveCursor) {
        let (backlog, _, now) = self.live.subscribe(tenant, filter, resume);
        (backlog, now)
    }

    /// The place in the live stream of the item numbered `id`.
    pub fn live_cursor(&self, id: u64) -> LiveCursor {
        self.live.cursor(id)
    }

    /// Whether the store answers.
    pub async fn healthy(&self) -> Result<(), StoreError> {
        self.store()
            .trajectory(&TenantId::default(), "")
            .await
            .map(|_| ())
    }
}

impl From<HarnessError> for ServiceError {
    fn from(e: HarnessError) -> Self {
        match e {
            HarnessError::UnknownTrajectory(_) => Self::NotFound(e.to_string()),
            HarnessError::AlreadyStarted(_) | HarnessError::TrajectoryEnded { .. } => {
                Self::FailedPrecondition(e.to_string())
            }
            HarnessError::InvalidEvent(_) => Self::InvalidArgument(e.to_string()),
            HarnessError::Store(store) => store.into(),
            other => Self::Internal(other.to_string()),
        }
    }
}

/// The page a listing asks for: `size` items (100 when not given) after
/// `token`. A size outside 1 to [`PageRequest::MAX_LIMIT`] is refused, not
/// quietly clamped.
pub(crate) fn page_request(
    size: Option<usize>,
    token: Option<String>,
) -> Result<PageRequest, ServiceError> {
    let limit = size.unwrap_or(100);
    if !(1..=PageRequest::MAX_LIMIT).contains(&limit) {
        return Err(ServiceError::InvalidArgument(format!(
            "page_size {limit} is outside 1 to {}",
            PageRequest::MAX_LIMIT
        )));
    }
    Ok(PageRequest {
        limit,
        cursor: token.filter(|t| !t.is_empty()),
    })
}

/// Puts the verdict in the request's span and logs the steps that were not
/// simply allowed (allowed ones at debug level).
fn log_verdict(span: &tracing::Span, verdict: &Adjudicated) {
    let decision = verdict.decision.as_str();
    span.record("decision", decision);
    if let Some(id) = &verdict.decision_id {
        span.record("decision_id", id.as_str());
    }
    match verdict.decision {
        sondera_model::Decision::Allow => tracing::debug!(decision, "step judged"),
        _ => {
            let policies: Vec<&str> = verdict
                .policies
                .iter()
                .map(|p| p.policy_id.as_str())
                .collect();
            tracing::info!(decision, policies = ?policies, "step judged")
        }
    }
}

/// The span of one judged step, named and attributed as OpenTelemetry's
/// GenAI conventions name a guardrail's: the result, the policies and the
/// reason are filled in once judged. The step's arguments and outputs are
/// never put in it (they may hold secrets). At `debug`, so that it costs
/// nothing unless traces are exported (their layer admits it).
fn guardrail_span(tenant: &TenantId, event: &Event) -> tracing::Span {
    let tool = match &event.payload {
        sondera_model::Payload::ToolCall { tool, .. } => Some(tool.as_str()),
        _ => None,
    };
    tracing::debug_span!(
        "apply_guardrail",
        otel.name = "apply_guardrail sondera",
        gen_ai.operation.name = "apply_guardrail",
        gen_ai.guardrail.name = "sondera",
        gen_ai.agent.name = event.agent.id.as_str(),
        gen_ai.conversation.id = event.trajectory_id.as_str(),
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = event.payload.call_id(),
        sondera.tenant = tenant.as_str(),
        sondera.step = event.payload.kind(),
        gen_ai.guardrail.result = tracing::field::Empty,
        gen_ai.guardrail.policy.ids = tracing::field::Empty,
        gen_ai.guardrail.reason = tracing::field::Empty,
        sondera.decision_id = tracing::field::Empty,
        sondera.policy_revision = tracing::field::Empty,
    )
}

fn record_guardrail(span: &tracing::Span, verdict: &Adjudicated) {
    span.record("gen_ai.guardrail.result", verdict.decision.as_str());
    let policies: Vec<&str> = verdict
        .policies
        .iter()
        .map(|p| p.policy_id.as_str())
        .collect();
    span.record("gen_ai.guardrail.policy.ids", policies.join(",").as_str());
    if let Some(reason) = &verdict.reason {
        span.record("gen_ai.guardrail.reason", reason.as_str());
    }
    if let Some(id) = &verdict.decision_id {
        span.record("sondera.decision_id", id.as_str());
    }
    if let Some(revision) = &verdict.policy_revision {
        span.record("sondera.policy_revision", revision.as_str());
    }
}
