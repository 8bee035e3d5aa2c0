use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sondera_model::{
    ActionShape, Actor, Adjudicated, Agent, Approval, Decision, Event, Payload, TrajectoryState,
};

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("store records serialize to JSON")
}

use crate::{StoreError, TenantId};

sondera_model::wire_enum! {
    /// Where a trajectory is in its life.
    pub enum TrajectoryStatus: "status" {
        /// Known but not started.
        Pending,
        /// Started, with steps being adjudicated.
        Running,
        /// Ended as it should.
        Completed,
        /// Ended with an error.
        Failed,
        /// Stopped by someone.
        Terminated,
        /// Paused; it may resume.
        Suspended,
    }
}

impl TrajectoryStatus {
    /// The status named `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        sondera_model::variant_named(s)
    }

    /// The status after `payload`, given the status before it.
    pub fn after(self, payload: &Payload) -> Self {
        match payload {
            Payload::Started { .. } | Payload::Resumed { .. } => Self::Running,
            Payload::Completed { .. } => Self::Completed,
            Payload::Failed { .. } => Self::Failed,
            Payload::Terminated { .. } => Self::Terminated,
            Payload::Suspended { .. } => Self::Suspended,
            _ => self,
        }
    }

    /// Whether the trajectory has ended (completed, failed or terminated).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Terminated)
    }
}

/// One step to append.
#[derive(Debug, Clone, Copy)]
pub struct StepRecord<'a> {
    /// Who owns the trajectory. Only a `started` step sets it; later steps
    /// must name the same tenant, which callers check before judging.
    pub tenant: &'a TenantId,
    /// The event.
    pub event: &'a Event,
    /// Position of the event in its trajectory, from 0 (the `started` event).
    pub seq: u64,
    /// Its verdict, when it was adjudicated.
    pub adjudication: Option<&'a Adjudicated>,
    /// The trajectory's status after this step.
    pub status: TrajectoryStatus,
    /// The trajectory's state after this step.
    pub state: &'a TrajectoryState,
}

/// A step ready to write, owning everything: serialised on the caller's
/// task, so a writer thread or task only runs SQL.
pub(crate) struct PreparedStep {
    pub(crate) tenant: TenantId,
    pub(crate) trajectory_id: String,
    pub(crate) seq: i64,
    pub(crate) event_id: String,
    pub(crate) agent_id: String,
    pub(crate) kind: &'static str,
    pub(crate) at: DateTime<Utc>,
    pub(crate) event: String,
    /// For `started`: the agent's record and the session.
    pub(crate) started: Option<(String, Option<String>)>,
    /// The verdict: decision, body, the policies that blocked (if it
    /// blocked) and the shadow-mode policies that matched.
    pub(crate) verdict: Option<(&'static str, String, Vec<String>, Vec<String>)>,
    pub(crate) status: &'static str,
    pub(crate) state: String,
}

impl PreparedStep {
    pub(crate) fn new(step: &StepRecord<'_>) -> Self {
        let event = step.event;
        let started = match &event.payload {
            Payload::Started {
                agent, session_id, ..
            } => Some((to_json(agent), session_id.clone())),
            _ => None,
        };
        let verdict = step.adjudication.map(|v| {
            let blocking = match v.effective_decision() {
                Decision::Allow => Vec::new(),
                _ => v.policies.iter().map(|p| p.policy_id.clone()).collect(),
            };
            let shadow = v
                .shadow_matches
                .iter()
                .map(|p| p.policy_id.clone())
                .collect();
            (v.decision.as_str(), to_json(v), blocking, shadow)
        });
        Self {
            tenant: step.tenant.clone(),
            trajectory_id: event.trajectory_id.clone(),
            seq: step.seq as i64,
            event_id: event.event_id.clone(),
            agent_id: event.agent.id.clone(),
            kind: event.payload.kind(),
            at: event.timestamp,
            event: to_json(event),
            started,
            verdict,
            status: step.status.as_str(),
            state: to_json(step.state),
        }
    }
}

/// A trajectory without its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectorySummary {
    /// The trajectory's id.
    pub id: String,
    /// Whose it is.
    #[serde(default, skip_serializing_if = "TenantId::is_default")]
    pub tenant: TenantId,
    /// The root agent's id.
    pub agent_id: String,
    /// The session (conversation) it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Where it is in its life.
    pub status: TrajectoryStatus,
    /// When its first event was recorded.
    pub created_at: DateTime<Utc>,
    /// When its last event was recorded.
    pub updated_at: DateTime<Utc>,
    /// Events recorded, so the next one goes at this position.
    pub event_count: u64,
    /// The facts it has accumulated, to resume from.
    pub state: TrajectoryState,
}

/// An event as stored, with its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Its position in the trajectory, from 0.
    pub seq: u64,
    /// The event.
    pub event: Event,
    /// Its verdict, when it was adjudicated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjudication: Option<Adjudicated>,
}

/// A trajectory with its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryDetail {
    /// The trajectory.
    pub summary: TrajectorySummary,
    /// Its events, in order.
    pub events: Vec<StoredEvent>,
}

/// An agent and what is recorded of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// The agent as last recorded.
    pub agent: Agent,
    /// Whose it is.
    #[serde(default, skip_serializing_if = "TenantId::is_default")]
    pub tenant: TenantId,
    /// When it was first recorded.
    pub first_seen: DateTime<Utc>,
    /// When it was last recorded.
    pub last_seen: DateTime<Utc>,
    /// How many trajectories it has.
    pub trajectory_count: u64,
    /// Steps judged over all its trajectories.
    #[serde(default)]
    pub step_count: u64,
    /// Of them, how many were denied.
    #[serde(default)]
    pub denial_count: u64,
    /// Of them, how many were escalated.
    #[serde(default)]
    pub escalation_count: u64,
}

/// A deny or escalate verdict with where it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdjudicationRecord {
    /// The event judged.
    pub event_id: String,
    /// Its trajectory.
    pub trajectory_id: String,
    /// The root agent's id.
    pub agent_id: String,
    /// Its position in the trajectory.
    pub seq: u64,
    /// When it happened.
    pub timestamp: DateTime<Utc>,
    /// The payload kind that was judged (`shell_command`, ...).
    pub kind: String,
    /// The verdict.
    pub adjudication: Adjudicated,
}

/// An escalated step waiting for a person, or what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The approval's id.
    pub id: String,
    /// Whose it is.
    #[serde(default, skip_serializing_if = "TenantId::is_default")]
    pub tenant: TenantId,
    /// The escalated step: its event, trajectory, position and agent.
    pub event_id: String,
    /// The trajectory of the escalated step.
    pub trajectory_id: String,
    /// The step's position in it.
    pub seq: u64,
    /// The root agent's id.
    pub agent_id: String,
    /// The session the trajectory belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The step as it was judged.
    pub action: Payload,
    /// What a session or always approval would cover; `None` when the step
    /// has no shape that can be trusted again, so it is approvable once only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<ActionShape>,
    /// The escalate verdict: the policies that asked for a person, and why.
    pub verdict: Adjudicated,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// After this the step is denied, whatever is decided later.
    pub expires_at: DateTime<Utc>,
    /// Where it is: pending, decided or expired.
    #[serde(flatten)]
    pub state: ApprovalState,
}

/// Where an approval is: it leaves `pending` once, for good.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum ApprovalState {
    /// Waiting for a person.
    Pending,
    /// A person decided.
    Decided {
        /// What they decided.
        approval: Approval,
        /// Who decided.
        decided_by: Actor,
        /// Why, in their words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// When.
        decided_at: DateTime<Utc>,
    },
    /// Nobody decided in time: the step was denied.
    Expired {
        /// When it expired.
        expired_at: DateTime<Utc>,
    },
}

sondera_model::wire_enum! {
    /// The three states an approval can be in, for filtering.
    pub enum ApprovalStatus: "approval status" {
        /// Waiting for a person.
        Pending,
        /// A person decided.
        Decided,
        /// Nobody decided in time.
        Expired,
    }
}

impl ApprovalState {
    /// Which of the three states it is in.
    pub fn status(&self) -> ApprovalStatus {
        match self {
            Self::Pending => ApprovalStatus::Pending,
            Self::Decided { .. } => ApprovalStatus::Decided,
            Self::Expired { .. } => ApprovalStatus::Expired,
        }
    }

    /// Whether this settlement may happen for an approval that expires at
    /// `expires_at`: a decision strictly before, an expiry from then on.
    pub fn in_time(&self, expires_at: DateTime<Utc>) -> bool {
        match self {
            Self::Pending => false,
            Self::Decided { decided_at, .. } => *decided_at < expires_at,
            Self::Expired { expired_at } => *expired_at >= expires_at,
        }
    }

    /// When it left `pending`.
    pub fn settled_at(&self) -> Option<DateTime<Utc>> {
        match self {
            Self::Pending => None,
            Self::Decided { decided_at, .. } => Some(*decided_at),
            Self::Expired { expired_at } => Some(*expired_at),
        }
    }
}

impl ApprovalRecord {
    /// Whether the step may run: approved in time.
    pub fn approved(&self) -> bool {
        matches!(&self.state, ApprovalState::Decided { approval, .. } if approval.is_approved())
    }

    pub(crate) fn body(&self) -> String {
        to_json(self)
    }
}

/// Which approvals a listing returns; each set field narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalFilter {
    /// Only approvals in this state.
    pub status: Option<ApprovalStatus>,
    /// Only this agent's.
    pub agent_id: Option<String>,
    /// Only this trajectory's.
    pub trajectory_id: Option<String>,
}

/// Which trajectories a listing returns; each set field narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrajectoryFilter {
    /// Only this agent's.
    pub agent_id: Option<String>,
    /// Only trajectories in this state.
    pub status: Option<TrajectoryStatus>,
    /// Only this session's.
    pub session_id: Option<String>,
    /// Only trajectories with a step of this decision (`deny`, `escalate`),
    /// or, for `allow`, only those with every step allowed.
    pub decision: Option<Decision>,
    /// Only trajectories where this policy denied or escalated a step (or,
    /// in shadow mode, would have).
    pub policy_id: Option<String>,
    /// Only trajectories active in this window: created before its end and
    /// last recorded to at or after its start.
    pub active: TimeWindow,
    /// Only trajectories whose id, agent, session, any event or any verdict
    /// (its decision id, its policy revision) contains this text, ignoring
    /// ASCII case.
    pub text: Option<String>,
}

/// Which verdicts a listing returns; each set field narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AdjudicationFilter {
    /// Only this agent's.
    pub agent_id: Option<String>,
    /// Only this trajectory's.
    pub trajectory_id: Option<String>,
    /// Only this decision; by default both deny and escalate.
    pub decision: Option<Decision>,
}

/// Keyset pagination: pass the previous page's `next` cursor to continue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// The most items a page holds (at most [`PageRequest::MAX_LIMIT`]).
    pub limit: usize,
    /// Where the previous page ended; `None` for the first page.
    pub cursor: Option<String>,
}

impl PageRequest {
    /// The most items any page holds.
    pub const MAX_LIMIT: usize = 1000;

    /// The first page of at most `limit` items.
    pub fn first(limit: usize) -> Self {
        Self {
            limit,
            cursor: None,
        }
    }

    /// The page after `cursor`, of at most `limit` items.
    pub fn after(limit: usize, cursor: impl Into<String>) -> Self {
        Self {
            limit,
            cursor: Some(cursor.into()),
        }
    }

    pub(crate) fn bounded_limit(&self) -> usize {
        self.limit.clamp(1, Self::MAX_LIMIT)
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        Self::first(100)
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// Its items, in the listing's order.
    pub items: Vec<T>,
    /// The cursor of the next page; `None` on the last page.
    pub next: Option<String>,
}

/// A half-open time window `[since, until)`; an open end is unbounded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// The window's start, inclusive.
    pub since: Option<DateTime<Utc>>,
    /// The window's end, exclusive.
    pub until: Option<DateTime<Utc>>,
}

/// Counts over a time window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Analytics {
    /// Trajectories created in the window.
    pub trajectories: u64,
    /// Events recorded in the window.
    pub events: u64,
    /// Verdicts that allowed.
    pub allowed: u64,
    /// Verdicts that denied.
    pub denied: u64,
    /// Verdicts that escalated.
    pub escalated: u64,
    /// Policies that denied or escalated, most often first (at most
    /// [`POLICY_COUNTS`]).
    pub top_denying_policies: Vec<PolicyCount>,
    /// Shadow-mode (`@mode("monitor")`) policies that matched: what they
    /// would have denied, most often first (at most [`POLICY_COUNTS`]).
    #[serde(default)]
    pub shadow_matches: Vec<PolicyCount>,
}

/// How often a policy decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyCount {
    /// The policy's `@id`.
    pub policy_id: String,
    /// How many verdicts it decided.
    pub count: u64,
}

/// The most policies an analytics count lists.
pub const POLICY_COUNTS: usize = 1000;

/// A timestamp as fixed-width RFC 3339 text, so text order is time order.
pub(crate) fn cursor_time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// The two parts of a page cursor (`time|id`, or `tenant|id` for agents):
/// the position a page continues after, if any.
pub(crate) fn cursor_parts(page: &PageRequest) -> Result<Option<(&str, &str)>, StoreError> {
    page.cursor
        .as_deref()
        .map(|c| {
            c.split_once('|')
                .ok_or_else(|| StoreError::InvalidCursor(c.to_string()))
        })
        .transpose()
}

/// Trims the look-ahead row and turns the last item into the next cursor.
pub(crate) fn paginate<T>(
    mut items: Vec<T>,
    limit: usize,
    cursor: impl Fn(&T) -> String,
) -> Page<T> {
    let more = items.len() > limit;
    items.truncate(limit);
    let next = if more {
        items.last().map(&cursor)
    } else {
        None
    };
    Page { items, next }
}

/// One file of a pushed policy set: its name (where errors point) and text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyFile {
    /// The file's name, as the pusher's directory had it.
    pub name: String,
    /// Its Cedar text (policies) or Cedar schema text (fragments).
    pub text: String,
}

/// A policy set as pushed: every file, whole, so any server can load it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicySources {
    /// `.cedar` files.
    pub policies: Vec<PolicyFile>,
    /// `.cedarschema` fragments extending the base schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schemas: Vec<PolicyFile>,
}

/// A policy set kept in the store, by its revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRevision {
    /// The content hash every verdict it gives records
    /// (`PolicyEngine::revision`).
    pub revision: String,
    /// When it was first pushed.
    pub pushed_at: DateTime<Utc>,
    /// Who pushed it: the name of the token.
    pub pushed_by: String,
    /// What the pusher said of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How many policies it holds.
    pub policies: u64,
}

/// Which kept revision is in force, since when and by whom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentPolicies {
    /// The revision in force.
    pub revision: String,
    /// When it was made current (pushed, or rolled back to).
    pub since: DateTime<Utc>,
    /// Who made it current.
    pub set_by: String,
}

/// A bearer token kept in the store for every server sharing it: its hash
/// and what it grants, never the token itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    /// `sha256:HEX` of the token.
    pub hash: String,
    /// Whose records it reaches.
    pub tenant: TenantId,
    /// What it may do: `agent`, `operator` or `admin`.
    pub role: String,
    /// Who its decisions are recorded as.
    pub name: String,
    /// When it was stored, and by whom.
    pub created_at: DateTime<Utc>,
    /// The name of the admin who stored it.
    pub created_by: String,
}
