//! Escalated steps decided by an operator: an agent asks for a decision on
//! a step the server escalated, waits for it with long polls, and an
//! operator approves or denies it before its deadline.
//!
//! The store is the truth. An approval leaves `pending` once, by one
//! conditional write, so a decision racing the deadline either lands before
//! it or is refused, and a restart or a dropped poll loses nothing: the
//! agent polls again. Waiters here are woken as soon as this process settles
//! an approval, and re-read the store every [`POLL`] for settlements made by
//! another server sharing the database. This process records an outcome in
//! the step's trajectory before anyone here can read the approval settled;
//! a server sharing the database may read it settled a moment before that.

use std::time::Duration;

use chrono::{DateTime, SubsecRound, Utc};
use sondera_model::{Actor, Adjudicated, Approval, Decision, Event, Grant, GrantScope, Payload};
use sondera_store::{
    ApprovalFilter, ApprovalRecord, ApprovalState, Page, PageRequest, StoredEvent, TenantId,
};

use crate::auth::Caller;
use crate::error::ServiceError;
use crate::governance::Governance;
use crate::live::LiveItem;
use crate::webhooks::ApprovalNews;

/// How often a waiter re-reads an approval another process may settle.
const POLL: Duration = Duration::from_secs(1);

/// Overdue approvals expired per sweep.
const SWEEP_BATCH: usize = 256;

/// Room for what a recorded decision carries besides its verdict (ids,
/// the agent, the actor, times).
const RECORD_ENVELOPE: usize = 1024;

/// Who settles an approval nobody decided in time.
const EXPIRY_ACTOR: &str = "sondera-approvals";

/// Who is waiting on which approval in this process: how many long polls
/// are open on it and when the last one was asked. An agent polls again
/// as soon as a poll ends, so one that has not asked for a few seconds
/// has stopped waiting (it gave up, timed out, or went away).
#[derive(Default)]
pub(crate) struct Waiters {
    open: parking_lot::Mutex<std::collections::HashMap<(TenantId, String), Waiting>>,
}

#[derive(Clone, Copy)]
struct Waiting {
    polls: usize,
    last_asked: std::time::Instant,
}

/// Whether an agent is waiting on an approval, as this server sees it.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct AgentWaiting {
    /// A long poll for it is open now.
    pub waiting: bool,
    /// Seconds since the agent last asked; absent when it never asked here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_asked_seconds_ago: Option<u64>,
}

/// One open long poll, counted while it lives.
struct Poll<'a> {
    waiters: &'a Waiters,
    key: (TenantId, String),
}

impl Waiters {
    fn poll(&self, tenant: &TenantId, id: &str) -> Poll<'_> {
        let key = (tenant.clone(), id.to_string());
        let mut open = self.open.lock();
        let waiting = open.entry(key.clone()).or_insert(Waiting {
            polls: 0,
            last_asked: std::time::Instant::now(),
        });
        waiting.polls += 1;
        waiting.last_asked = std::time::Instant::now();
        Poll { waiters: self, key }
    }

    fn of(&self, tenant: &TenantId, id: &str) -> AgentWaiting {
        let open = self.open.lock();
        let waiting = open.get(&(tenant.clone(), id.to_string()));
        AgentWaiting {
            waiting: waiting.is_some_and(|w| w.polls > 0),
            last_asked_seconds_ago: waiting.map(|w| w.last_asked.elapsed().as_secs()),
        }
    }

    fn forget(&self, tenant: &TenantId, id: &str) {
        self.open.lock().remove(&(tenant.clone(), id.to_string()));
    }
}

impl Drop for Poll<'_> {
    fn drop(&mut self) {
        let mut open = self.waiters.open.lock();
        if let Some(waiting) = open.get_mut(&self.key) {
            waiting.polls = waiting.polls.saturating_sub(1);
            waiting.last_asked = std::time::Instant::now();
        }
    }
}

impl Governance {
    /// Opens a pending approval for escalated event `event_id` of
    /// `trajectory_id`, or returns the one already open for it. Only a step
    /// the policies escalated can be approved; a hard deny never can.
    pub async fn request_approval(
        &self,
        tenant: &TenantId,
        trajectory_id: &str,
        event_id: &str,
        timeout: Option<Duration>,
    ) -> Result<ApprovalRecord, ServiceError> {
        let detail = self.trajectory(tenant, trajectory_id, false).await?;
        if detail.summary.status.is_terminal() {
            return Err(ServiceError::FailedPrecondition(format!(
                "trajectory {trajectory_id} has ended ({}): its steps can no longer be approved",
                detail.summary.status
            )));
        }
        let stored = detail
            .events
            .iter()
            .find(|e| e.event.event_id == event_id)
            .ok_or_else(|| {
                ServiceError::NotFound(format!(
                    "event {event_id} is not recorded in trajectory {trajectory_id}"
                ))
            })?;
        let verdict = escalated(stored)?;
        let now = Utc::now().round_subsecs(6);
        // Zero asks for no particular deadline, as an unset proto3 field does.
        let deadline = self
            .limits()
            .approval_deadline(timeout.filter(|t| !t.is_zero()));
        let opened = ApprovalRecord {
            id: uuid::Uuid::new_v4().to_string(),
            tenant: tenant.clone(),
            event_id: event_id.to_string(),
            trajectory_id: trajectory_id.to_string(),
            seq: stored.seq,
            agent_id: stored.event.agent.id.clone(),
            session_id: detail.summary.session_id.clone(),
            action: stored.event.payload.clone(),
            shape: sondera_guard::action_shape(&stored.event.payload),
            verdict: verdict.clone(),
            created_at: now,
            expires_at: now + deadline,
            state: ApprovalState::Pending,
        };
        let kept = self.store().open_approval(&opened).await?;
        if kept.id == opened.id {
            self.publish(tenant, LiveItem::Approval(kept.clone()));
            self.notify(&kept, ApprovalNews::Opened);
        }
        Ok(kept)
    }

    /// Approval `id`, once it is settled or after `wait`, whichever is
    /// first; an approval past its deadline is expired on the way.
    pub async fn wait_approval(
        &self,
        tenant: &TenantId,
        id: &str,
        wait: Duration,
    ) -> Result<ApprovalRecord, ServiceError> {
        let until = tokio::time::Instant::now() + self.limits().long_poll(wait);
        let poll = (!wait.is_zero()).then(|| self.waiters.poll(tenant, id));
        loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            let approval = self.current_approval(tenant, id).await?;
            let now = tokio::time::Instant::now();
            if approval.state != ApprovalState::Pending {
                drop(poll);
                self.waiters.forget(tenant, id);
                return Ok(approval);
            }
            if now >= until {
                return Ok(approval);
            }
            let to_deadline = (approval.expires_at - Utc::now())
                .to_std()
                .unwrap_or_default();
            let nap = POLL.min(until - now).min(to_deadline);
            tokio::select! {
                _ = settled => {}
                _ = tokio::time::sleep(nap) => {}
            }
        }
    }

    /// Approval `id` as it stands now: expired first if its deadline passed.
    pub async fn current_approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<ApprovalRecord, ServiceError> {
        let approval = self
            .read_approval(tenant, id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("approval {id} is not recorded")))?;
        if approval.state == ApprovalState::Pending && approval.expires_at <= Utc::now() {
            self.expire(&approval).await?;
            return self
                .read_approval(tenant, id)
                .await?
                .ok_or_else(|| ServiceError::Internal(format!("approval {id} vanished")));
        }
        Ok(approval)
    }

    /// Approval `id` from the store, never between this process settling it
    /// and recording its outcome.
    async fn read_approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, ServiceError> {
        let _settled_or_pending = self.settling.read().await;
        Ok(self.store().approval(tenant, id).await?)
    }

    /// Approvals of the caller's tenant, newest first. Operators only.
    pub async fn list_approvals(
        &self,
        caller: &Caller,
        filter: ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, ServiceError> {
        let tenant = caller.operator("listing approvals")?;
        Ok(self
            .store()
            .list_approvals(tenant.into(), &filter, page)
            .await?)
    }

    /// The approvals "for this session" operators gave in one of the
    /// tenant's trajectories, as grants of their shapes: what a caller that
    /// keeps no scope of its own (a coding agent's hook, a process per
    /// call) needs to honour them.
    pub async fn session_grants(
        &self,
        tenant: &TenantId,
        trajectory_id: &str,
    ) -> Result<Vec<Grant>, ServiceError> {
        let filter = ApprovalFilter {
            status: Some(sondera_store::ApprovalStatus::Decided),
            agent_id: None,
            trajectory_id: Some(trajectory_id.to_string()),
        };
        let mut grants = Vec::new();
        let mut page = PageRequest::first(PageRequest::MAX_LIMIT);
        loop {
            let listed = self
                .store()
                .list_approvals(tenant.into(), &filter, &page)
                .await?;
            grants.extend(listed.items.into_iter().filter_map(session_grant));
            match listed.next {
                Some(next) => page = PageRequest::after(PageRequest::MAX_LIMIT, next),
                None => return Ok(grants),
            }
        }
    }

    /// Whether the agent that asked for approval `id` is still waiting for
    /// the answer.
    pub async fn agent_waiting(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<AgentWaiting, ServiceError> {
        let tenant = caller.operator("reading an approval")?;
        let approval = self.current_approval(tenant, id).await?;
        if approval.state != ApprovalState::Pending {
            self.waiters.forget(tenant, id);
        }
        Ok(self.waiters.of(tenant, id))
    }

    /// How many of the caller's tenant's approvals wait for a person.
    pub async fn pending_approvals(&self, caller: &Caller) -> Result<u64, ServiceError> {
        let tenant = caller.operator("counting approvals")?;
        Ok(self.store().pending_approvals(tenant).await?)
    }

    /// Decides a pending approval as `caller`, an operator. "Always" also
    /// keeps a standing grant for the agent. The decision is recorded in the
    /// step's trajectory with the operator as its actor.
    pub async fn decide_approval(
        &self,
        caller: &Caller,
        id: &str,
        approval: Approval,
        reason: Option<String>,
    ) -> Result<ApprovalRecord, ServiceError> {
        let tenant = caller.operator("deciding an approval")?;
        let current = self.current_approval(tenant, id).await?;
        refuse_unless_pending(&current)?;
        let shape = match (approval.grant_scope(), &current.shape) {
            (Some(_), None) => {
                return Err(ServiceError::InvalidArgument(format!(
                    "approval {id} can be approved once only: its step has no shape that can be trusted again"
                )));
            }
            (_, shape) => shape.clone(),
        };
        let decided_by = Actor::human(caller.name.clone());
        let decided = ApprovalRecord {
            state: ApprovalState::Decided {
                approval,
                decided_by: decided_by.clone(),
                reason: reason.filter(|r| !r.trim().is_empty()),
                decided_at: Utc::now().round_subsecs(6),
            },
            ..current
        };
        // The record of the decision is an event like any other: the reason
        // must leave it within the event limit, checked before it settles.
        let record = serde_json::to_vec(&outcome(&decided).0).map_or(usize::MAX, |j| j.len());
        self.limits()
            .check_field("reason", record.saturating_add(RECORD_ENVELOPE))?;
        if !self.settle(&decided).await? {
            let now = self.current_approval(tenant, id).await?;
            refuse_unless_pending(&now)?;
            return Err(ServiceError::Aborted(format!(
                "approval {id} changed while it was being decided; try again"
            )));
        }
        if let (Some(GrantScope::Always), Some(shape)) = (approval.grant_scope(), shape) {
            let grant = Grant::new(shape, GrantScope::Always, decided_by);
            self.store()
                .put_grant(tenant, &decided.agent_id, &grant)
                .await
                .map_err(|e| {
                    ServiceError::Unavailable(format!(
                        "approval {id} was approved, but its standing grant could not be kept: {e}"
                    ))
                })?;
        }
        Ok(decided)
    }

    /// Expires every pending approval whose deadline has passed; returns
    /// how many this call expired. The server runs it on a timer, so an
    /// expiry is recorded even when nobody is waiting.
    pub async fn expire_overdue(&self) -> Result<usize, ServiceError> {
        let overdue = self
            .store()
            .overdue_approvals(Utc::now(), SWEEP_BATCH)
            .await?;
        let mut expired = 0;
        for approval in &overdue {
            expired += usize::from(self.expire(approval).await?);
        }
        Ok(expired)
    }

    /// Settles `approval` as expired, if nothing settled it first.
    async fn expire(&self, approval: &ApprovalRecord) -> Result<bool, ServiceError> {
        let expired = ApprovalRecord {
            state: ApprovalState::Expired {
                expired_at: Utc::now().round_subsecs(6).max(approval.expires_at),
            },
            ..approval.clone()
        };
        self.settle(&expired).await
    }

    /// Settles `approval` unless something settled it first; if this call
    /// did, records the outcome in the step's trajectory, then wakes
    /// waiters and tells subscribers. Returns whether it settled it.
    async fn settle(&self, approval: &ApprovalRecord) -> Result<bool, ServiceError> {
        let settling = self.settling.write().await;
        if !self.store().settle_approval(approval).await? {
            return Ok(false);
        }
        if let Err(e) = self.record_outcome(approval).await {
            tracing::warn!(
                approval = %approval.id,
                trajectory = %approval.trajectory_id,
                "the approval is settled, but its trajectory did not take the record of it: {e}"
            );
        }
        drop(settling);
        self.settled.notify_waiters();
        self.publish(&approval.tenant, LiveItem::Approval(approval.clone()));
        self.notify(approval, ApprovalNews::Settled);
        self.waiters.forget(&approval.tenant, &approval.id);
        Ok(true)
    }

    async fn record_outcome(&self, approval: &ApprovalRecord) -> Result<(), ServiceError> {
        let (verdict, actor) = outcome(approval);
        let agent = self.agent(&approval.tenant, &approval.agent_id).await?;
        let mut event = Event::new(
            &approval.trajectory_id,
            &agent,
            Payload::Adjudicated(verdict),
        )
        .with_actor(actor);
        event.causality.causation_id = Some(approval.event_id.clone());
        self.adjudicate(&approval.tenant, event).await.map(|_| ())
    }
}

/// A decided approval "for this session" as the grant of its shape.
fn session_grant(approval: ApprovalRecord) -> Option<Grant> {
    let ApprovalState::Decided {
        approval: Approval::Session,
        decided_by,
        decided_at,
        ..
    } = approval.state
    else {
        return None;
    };
    Some(Grant {
        shape: approval.shape?,
        scope: GrantScope::Session,
        granted_by: decided_by,
        granted_at: decided_at,
    })
}

/// The escalate verdict of a recorded step; anything else is not approvable.
fn escalated(stored: &StoredEvent) -> Result<&Adjudicated, ServiceError> {
    let id = &stored.event.event_id;
    match &stored.adjudication {
        Some(verdict) if verdict.decision == Decision::Escalate => Ok(verdict),
        Some(verdict) => Err(ServiceError::FailedPrecondition(format!(
            "event {id} was judged `{}`, not escalated: only an escalated step can be approved",
            verdict.decision
        ))),
        None => Err(ServiceError::FailedPrecondition(format!(
            "event {id} was not judged by policy, so there is nothing to approve"
        ))),
    }
}

fn refuse_unless_pending(approval: &ApprovalRecord) -> Result<(), ServiceError> {
    let id = &approval.id;
    match &approval.state {
        ApprovalState::Pending => Ok(()),
        ApprovalState::Decided {
            approval: decision,
            decided_by,
            ..
        } => Err(ServiceError::FailedPrecondition(format!(
            "approval {id} was already decided: {} by {}",
            decision.phrase(),
            decided_by.id
        ))),
        ApprovalState::Expired { expired_at } => Err(ServiceError::FailedPrecondition(format!(
            "approval {id} expired at {}; its step was denied",
            stamp(expired_at)
        ))),
    }
}

/// The verdict a settled approval puts on its step, and who gave it.
fn outcome(approval: &ApprovalRecord) -> (Adjudicated, Actor) {
    let mode = approval.verdict.mode;
    let (mut verdict, actor) = match &approval.state {
        ApprovalState::Decided {
            approval: decision,
            decided_by,
            reason,
            ..
        } => {
            let mut text = format!("{} by operator {}", decision.phrase(), decided_by.id);
            if let Some(reason) = reason {
                text.push_str(&format!(": {reason}"));
            }
            if let (Some(_), Some(shape)) = (decision.grant_scope(), &approval.shape) {
                text.push_str(&format!("; covers {shape}"));
            }
            let verdict = if decision.is_approved() {
                Adjudicated::allow(mode, text)
            } else {
                Adjudicated::deny(mode, text)
            };
            (verdict, decided_by.clone())
        }
        ApprovalState::Expired { .. } | ApprovalState::Pending => (
            Adjudicated::deny(
                mode,
                format!(
                    "no operator decided before the deadline ({}); the step is denied",
                    stamp(&approval.expires_at)
                ),
            ),
            Actor::system(EXPIRY_ACTOR),
        ),
    };
    verdict.policies = approval.verdict.policies.clone();
    (verdict, actor)
}

fn stamp(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
