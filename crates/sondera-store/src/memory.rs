use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::RwLock;
use sondera_model::{ActionShape, Adjudicated, Agent, Decision, Grant, Payload};

use crate::types::{cursor_parts, cursor_time};
use crate::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, ApprovalFilter, ApprovalRecord,
    ApprovalState, Approvals, EventLog, Grants, Page, PageRequest, PolicyCount, Records,
    StepRecord, StoreError, StoredEvent, TenantId, Tenants, TimeWindow, TrajectoryDetail,
    TrajectoryFilter, TrajectoryStatus, TrajectorySummary,
};

/// A store that keeps trajectories in process memory, for tests,
/// benchmarks and runs that need no record. Appends cost the same however
/// much is stored; queries scan, which suits the sizes such runs reach.
///
/// Memory is bounded: past an event budget ([`DEFAULT_EVENT_BUDGET`] unless
/// set with [`MemoryStore::with_event_budget`]) the trajectories that ended
/// longest ago are forgotten, with their events and verdicts, so a process
/// that runs for weeks stays flat. Trajectories still running are never
/// forgotten, and a forgotten one is unknown afterwards, as if never stored.
#[derive(Debug)]
pub struct MemoryStore {
    inner: RwLock<Inner>,
}

/// Events kept before ended trajectories are forgotten: a few hundred MB of
/// typical events.
pub const DEFAULT_EVENT_BUDGET: usize = 100_000;

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_event_budget(DEFAULT_EVENT_BUDGET)
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// Keyed by tenant and agent id.
    agents: BTreeMap<(TenantId, String), AgentRecord>,
    /// Keyed by tenant, then trajectory id: ids are unique per tenant.
    trajectories: HashMap<TenantId, HashMap<String, Trajectory>>,
    event_ids: HashMap<TenantId, HashSet<String>>,
    /// Where every verdict is, in the order recorded, for queries and analytics.
    verdicts: Vec<VerdictRef>,
    /// Keyed by tenant, agent id and shape.
    grants: BTreeMap<(TenantId, String, String), Grant>,
    /// Keyed by tenant and approval id; their trajectory forgets them.
    approvals: BTreeMap<(TenantId, String), ApprovalRecord>,
    /// Events stored, and how many may be before ended trajectories go.
    events: usize,
    budget: usize,
    /// Ended trajectories, in the order they ended.
    ended: VecDeque<(TenantId, String)>,
    /// Entries of `verdicts` whose trajectory was forgotten.
    dangling_verdicts: usize,
    /// Pushed policy sets, in the order first pushed, and the one in force.
    policy_revisions: Vec<(crate::PolicyRevision, crate::PolicySources)>,
    current_policies: Option<crate::CurrentPolicies>,
    /// Stored tokens by hash.
    tokens: BTreeMap<String, crate::StoredToken>,
}

#[derive(Debug)]
struct Trajectory {
    summary: TrajectorySummary,
    events: Vec<StoredEvent>,
}

/// A verdict stored with its event: the trajectory and the event's index.
#[derive(Debug)]
struct VerdictRef {
    tenant: TenantId,
    trajectory_id: String,
    index: usize,
}

impl MemoryStore {
    /// A store with the default event budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that keeps about `events` events (at least one trajectory's
    /// worth, and every running trajectory whole).
    pub fn with_event_budget(events: usize) -> Self {
        Self {
            inner: RwLock::new(Inner {
                budget: events,
                ..Inner::default()
            }),
        }
    }

    /// How many events are stored now.
    pub fn stored_events(&self) -> usize {
        self.inner.read().events
    }
}

impl Inner {
    fn start(&mut self, step: &StepRecord<'_>, agent: &Agent, session_id: Option<&str>) {
        let event = step.event;
        let at = event.timestamp;
        let key = (step.tenant.clone(), agent.id.clone());
        match self.agents.get_mut(&key) {
            Some(record) => {
                // A card is a tree of JSON schemas: compared, it is not
                // copied again when a new trajectory brings the same one.
                if record.agent != *agent {
                    record.agent = agent.clone();
                }
                record.last_seen = at;
                record.trajectory_count += 1;
            }
            None => {
                let record = AgentRecord {
                    agent: agent.clone(),
                    tenant: step.tenant.clone(),
                    first_seen: at,
                    last_seen: at,
                    trajectory_count: 1,
                    step_count: 0,
                    denial_count: 0,
                    escalation_count: 0,
                };
                self.agents.insert(key, record);
            }
        }
        self.trajectories
            .entry(step.tenant.clone())
            .or_default()
            .insert(
                event.trajectory_id.clone(),
                Trajectory {
                    summary: TrajectorySummary {
                        id: event.trajectory_id.clone(),
                        tenant: step.tenant.clone(),
                        agent_id: event.agent.id.clone(),
                        session_id: session_id.map(str::to_string),
                        status: TrajectoryStatus::Pending,
                        created_at: at,
                        updated_at: at,
                        event_count: 0,
                        state: Default::default(),
                    },
                    events: Vec::new(),
                },
            );
    }

    /// Everything that can refuse a step, checked before anything changes.
    fn check(&self, step: &StepRecord<'_>) -> Result<(), StoreError> {
        let event = step.event;
        if self
            .event_ids
            .get(step.tenant)
            .is_some_and(|ids| ids.contains(&event.event_id))
        {
            return Err(StoreError::DuplicateEvent(event.event_id.clone()));
        }
        let existing = self.trajectory(step.tenant, &event.trajectory_id);
        if let Payload::Started { .. } = event.payload {
            return match existing {
                Some(_) => Err(StoreError::DuplicateTrajectory(event.trajectory_id.clone())),
                None => Ok(()),
            };
        }
        let trajectory =
            existing.ok_or_else(|| StoreError::UnknownTrajectory(event.trajectory_id.clone()))?;
        if trajectory
            .events
            .last()
            .is_some_and(|last| last.seq >= step.seq)
        {
            return Err(StoreError::Conflict {
                trajectory_id: event.trajectory_id.clone(),
                seq: step.seq,
            });
        }
        Ok(())
    }

    fn append(&mut self, step: &StepRecord<'_>) -> Result<(), StoreError> {
        let event = step.event;
        self.check(step)?;
        if let Payload::Started {
            agent, session_id, ..
        } = &event.payload
        {
            self.start(step, agent, session_id.as_deref());
        }
        self.event_ids
            .entry(step.tenant.clone())
            .or_default()
            .insert(event.event_id.clone());
        let trajectory = self
            .trajectories
            .get_mut(step.tenant)
            .and_then(|t| t.get_mut(&event.trajectory_id))
            .expect("checked above");
        if step.adjudication.is_some() {
            self.verdicts.push(VerdictRef {
                tenant: step.tenant.clone(),
                trajectory_id: event.trajectory_id.clone(),
                index: trajectory.events.len(),
            });
        }
        trajectory.events.push(StoredEvent {
            seq: step.seq,
            event: event.clone(),
            adjudication: step.adjudication.cloned(),
        });
        let summary = &mut trajectory.summary;
        let ends = !summary.status.is_terminal() && step.status.is_terminal();
        summary.status = step.status;
        summary.updated_at = event.timestamp;
        summary.event_count = step.seq + 1;
        summary.state.clone_from(step.state);
        self.events += 1;
        if ends {
            self.ended
                .push_back((step.tenant.clone(), event.trajectory_id.clone()));
        }
        self.forget_beyond_budget();
        Ok(())
    }

    /// Forgets ended trajectories, longest ended first, until the events
    /// fit the budget or none has ended.
    fn forget_beyond_budget(&mut self) {
        while self.events > self.budget {
            let Some((tenant, id)) = self.ended.pop_front() else {
                return;
            };
            self.forget(&tenant, &id);
        }
        self.sweep_verdicts();
    }

    /// Forgets a trajectory with its events and approvals; how many
    /// events it held, if it was kept.
    fn forget(&mut self, tenant: &TenantId, id: &str) -> Option<usize> {
        let trajectory = self.trajectories.get_mut(tenant)?.remove(id)?;
        self.events -= trajectory.events.len();
        self.approvals
            .retain(|(t, _), a| !(t == tenant && a.trajectory_id == id));
        if let Some(ids) = self.event_ids.get_mut(tenant) {
            for stored in &trajectory.events {
                ids.remove(&stored.event.event_id);
            }
        }
        self.dangling_verdicts += trajectory
            .events
            .iter()
            .filter(|e| e.adjudication.is_some())
            .count();
        Some(trajectory.events.len())
    }

    /// Drops the verdicts of forgotten trajectories once they are half.
    fn sweep_verdicts(&mut self) {
        if self.dangling_verdicts * 2 > self.verdicts.len() {
            let trajectories = &self.trajectories;
            self.verdicts.retain(|v| {
                trajectories
                    .get(&v.tenant)
                    .is_some_and(|t| t.contains_key(&v.trajectory_id))
            });
            self.dangling_verdicts = 0;
        }
    }
}

impl Inner {
    fn trajectory(&self, tenant: &TenantId, id: &str) -> Option<&Trajectory> {
        self.trajectories.get(tenant)?.get(id)
    }

    /// The trajectories of the tenants in scope.
    fn trajectories_of<'a>(
        &'a self,
        tenants: Tenants<'a>,
    ) -> impl Iterator<Item = &'a Trajectory> + 'a {
        self.trajectories
            .iter()
            .filter(move |(tenant, _)| tenants.includes(tenant))
            .flat_map(|(_, trajectories)| trajectories.values())
    }

    /// Every stored verdict of the tenants in scope with its event, in the
    /// order recorded.
    fn verdicts<'a>(
        &'a self,
        tenants: Tenants<'a>,
    ) -> impl Iterator<Item = (&'a StoredEvent, &'a Adjudicated)> + 'a {
        self.verdicts
            .iter()
            .filter(move |v| tenants.includes(&v.tenant))
            .filter_map(|v| {
                let stored = self
                    .trajectory(&v.tenant, &v.trajectory_id)?
                    .events
                    .get(v.index)?;
                Some((stored, stored.adjudication.as_ref()?))
            })
    }
}

fn record(stored: &StoredEvent, verdict: &Adjudicated) -> AdjudicationRecord {
    let event = &stored.event;
    AdjudicationRecord {
        event_id: event.event_id.clone(),
        trajectory_id: event.trajectory_id.clone(),
        agent_id: event.agent.id.clone(),
        seq: stored.seq,
        timestamp: event.timestamp,
        kind: event.payload.kind().to_string(),
        adjudication: verdict.clone(),
    }
}

fn in_window(window: &TimeWindow, t: &DateTime<Utc>) -> bool {
    window.since.is_none_or(|since| *t >= since) && window.until.is_none_or(|until| *t < until)
}

/// One page of `ordered`, starting after the page's cursor.
fn page_of<'a, T: Clone + 'a>(
    ordered: impl IntoIterator<Item = &'a T>,
    page: &PageRequest,
    key: impl Fn(&T) -> String,
    after: impl Fn(&T, &str) -> bool,
) -> Page<T> {
    let limit = page.bounded_limit();
    let mut items: Vec<T> = ordered
        .into_iter()
        .filter(|item: &&T| page.cursor.as_deref().is_none_or(|c| after(*item, c)))
        .take(limit + 1)
        .cloned()
        .collect();
    let more = items.len() > limit;
    items.truncate(limit);
    let next = if more { items.last().map(&key) } else { None };
    Page { items, next }
}

/// Whether (time, id) comes after the `time|id` cursor in newest-first order.
fn older_than(time: &DateTime<Utc>, id: &str, cursor: &str) -> bool {
    cursor
        .split_once('|')
        .is_some_and(|(t, i)| (cursor_time(time).as_str(), id) < (t, i))
}

#[async_trait]
impl EventLog for MemoryStore {
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError> {
        self.inner.write().append(&step)
    }
}

#[async_trait]
impl Records for MemoryStore {
    async fn trajectory(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError> {
        Ok(self
            .inner
            .read()
            .trajectory(tenant, id)
            .map(|t| t.summary.clone()))
    }

    async fn trajectory_with_events(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        Ok(self
            .inner
            .read()
            .trajectory(tenant, id)
            .map(|t| TrajectoryDetail {
                summary: t.summary.clone(),
                events: t.events.clone(),
            }))
    }

    async fn agent(&self, tenant: &TenantId, id: &str) -> Result<Option<Agent>, StoreError> {
        Ok(self
            .inner
            .read()
            .agents
            .get(&(tenant.clone(), id.to_string()))
            .map(|a| a.agent.clone()))
    }

    async fn list_agents(
        &self,
        tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        let inner = self.inner.read();
        let after = cursor_parts(page)?;
        let mut counts: HashMap<(&TenantId, &str), [u64; 3]> = HashMap::new();
        for t in inner.trajectories_of(tenants).map(|t| &t.summary) {
            let sums = counts.entry((&t.tenant, t.agent_id.as_str())).or_default();
            sums[0] += t.state.step_count;
            sums[1] += t.state.denial_count;
            sums[2] += t.state.escalation_count;
        }
        let listed = inner
            .agents
            .values()
            .filter(|a| tenants.includes(&a.tenant))
            .filter(|a| {
                after.is_none_or(|(t, id)| (a.tenant.as_str(), a.agent.id.as_str()) > (t, id))
            })
            .map(|a| {
                let [steps, denied, escalated] = counts
                    .get(&(&a.tenant, a.agent.id.as_str()))
                    .copied()
                    .unwrap_or_default();
                AgentRecord {
                    step_count: steps,
                    denial_count: denied,
                    escalation_count: escalated,
                    ..a.clone()
                }
            })
            .collect::<Vec<_>>();
        Ok(page_of(
            &listed,
            &PageRequest::first(page.limit),
            |a| format!("{}|{}", a.tenant, a.agent.id),
            |_, _| true,
        ))
    }

    async fn list_trajectories(
        &self,
        tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        let inner = self.inner.read();
        let mut matching: Vec<&TrajectorySummary> = inner
            .trajectories_of(tenants)
            .filter(|t| listed_by(filter, t))
            .map(|t| &t.summary)
            .collect();
        matching.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        cursor_parts(page)?;
        Ok(page_of(
            matching,
            page,
            |t| format!("{}|{}", cursor_time(&t.created_at), t.id),
            |t, c| older_than(&t.created_at, &t.id, c),
        ))
    }

    async fn list_adjudications(
        &self,
        tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        let inner = self.inner.read();
        let mut matching: Vec<AdjudicationRecord> = inner
            .verdicts(tenants)
            .filter(|(_, v)| v.decision != Decision::Allow)
            .filter(|(_, v)| filter.decision.is_none_or(|d| d == v.decision))
            .filter(|(e, _)| {
                filter
                    .agent_id
                    .as_ref()
                    .is_none_or(|a| *a == e.event.agent.id)
            })
            .filter(|(e, _)| {
                filter
                    .trajectory_id
                    .as_ref()
                    .is_none_or(|t| *t == e.event.trajectory_id)
            })
            .map(|(e, v)| record(e, v))
            .collect();
        matching.sort_by(|a, b| (b.timestamp, &b.event_id).cmp(&(a.timestamp, &a.event_id)));
        cursor_parts(page)?;
        Ok(page_of(
            &matching,
            page,
            |r| format!("{}|{}", cursor_time(&r.timestamp), r.event_id),
            |r, c| older_than(&r.timestamp, &r.event_id, c),
        ))
    }

    async fn analytics(
        &self,
        tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        let inner = self.inner.read();
        let owned = || inner.trajectories_of(tenants);
        let mut analytics = Analytics {
            trajectories: owned()
                .filter(|t| in_window(window, &t.summary.created_at))
                .count() as u64,
            events: owned()
                .flat_map(|t| &t.events)
                .filter(|e| in_window(window, &e.event.timestamp))
                .count() as u64,
            ..Analytics::default()
        };
        let mut by_policy: BTreeMap<&str, u64> = BTreeMap::new();
        let mut by_shadow: BTreeMap<&str, u64> = BTreeMap::new();
        for (_, verdict) in inner
            .verdicts(tenants)
            .filter(|(e, _)| in_window(window, &e.event.timestamp))
        {
            match verdict.decision {
                Decision::Allow => analytics.allowed += 1,
                Decision::Deny => analytics.denied += 1,
                Decision::Escalate => analytics.escalated += 1,
            }
            // What the policies decided, even when monitor mode allowed the step.
            if verdict.effective_decision() != Decision::Allow {
                for policy in &verdict.policies {
                    *by_policy.entry(policy.policy_id.as_str()).or_default() += 1;
                }
            }
            for policy in &verdict.shadow_matches {
                *by_shadow.entry(policy.policy_id.as_str()).or_default() += 1;
            }
        }
        analytics.top_denying_policies = most_first(by_policy);
        analytics.shadow_matches = most_first(by_shadow);
        Ok(analytics)
    }

    async fn approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let key = (tenant.clone(), id.to_string());
        Ok(self.inner.read().approvals.get(&key).cloned())
    }

    async fn list_approvals(
        &self,
        tenants: Tenants<'_>,
        filter: &ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, StoreError> {
        let inner = self.inner.read();
        let mut matching: Vec<&ApprovalRecord> = inner
            .approvals
            .values()
            .filter(|a| tenants.includes(&a.tenant))
            .filter(|a| filter.status.is_none_or(|s| s == a.state.status()))
            .filter(|a| filter.agent_id.as_ref().is_none_or(|id| *id == a.agent_id))
            .filter(|a| {
                filter
                    .trajectory_id
                    .as_ref()
                    .is_none_or(|id| *id == a.trajectory_id)
            })
            .collect();
        matching.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        cursor_parts(page)?;
        Ok(page_of(
            matching,
            page,
            |a| format!("{}|{}", cursor_time(&a.created_at), a.id),
            |a, c| older_than(&a.created_at, &a.id, c),
        ))
    }
}

impl Inner {
    /// Whether `tenant`'s trajectory `id` may be pruned: ended, with no
    /// approval pending.
    fn prunable(&self, tenant: &TenantId, trajectory: &Trajectory) -> bool {
        let id = &trajectory.summary.id;
        trajectory.summary.status.is_terminal()
            && !self.approvals.iter().any(|((t, _), a)| {
                t == tenant && a.trajectory_id == *id && a.state == crate::ApprovalState::Pending
            })
    }

    /// `tenant`'s ended trajectories, most recently changed first.
    fn ended_newest_first(&self, tenant: &TenantId) -> Vec<&Trajectory> {
        let mut ended: Vec<&Trajectory> = self
            .trajectories
            .get(tenant)
            .into_iter()
            .flat_map(|t| t.values())
            .filter(|t| t.summary.status.is_terminal())
            .collect();
        ended.sort_by(|a, b| {
            (b.summary.updated_at, &b.summary.id).cmp(&(a.summary.updated_at, &a.summary.id))
        });
        ended
    }
}

#[async_trait]
impl crate::Retention for MemoryStore {
    async fn tenants(&self) -> Result<Vec<TenantId>, StoreError> {
        let inner = self.inner.read();
        let mut tenants: Vec<TenantId> = inner
            .trajectories
            .iter()
            .filter(|(_, trajectories)| !trajectories.is_empty())
            .map(|(tenant, _)| tenant.clone())
            .collect();
        tenants.sort();
        Ok(tenants)
    }

    async fn nth_newest_ended(
        &self,
        tenant: &TenantId,
        n: u64,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let inner = self.inner.read();
        let ended = inner.ended_newest_first(tenant);
        let index = usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX);
        Ok(ended.get(index).map(|t| t.summary.updated_at))
    }

    async fn prunable(
        &self,
        tenant: &TenantId,
        cutoff: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::Prunable>, StoreError> {
        let inner = self.inner.read();
        let mut ended = inner.ended_newest_first(tenant);
        ended.reverse();
        Ok(ended
            .into_iter()
            .filter(|t| t.summary.updated_at < cutoff && inner.prunable(tenant, t))
            .take(limit)
            .map(|t| crate::Prunable {
                id: t.summary.id.clone(),
                events: t.events.len() as u64,
            })
            .collect())
    }

    async fn prune(&self, tenant: &TenantId, ids: &[String]) -> Result<crate::Pruned, StoreError> {
        let mut inner = self.inner.write();
        let mut pruned = crate::Pruned::default();
        for id in ids {
            let may = inner
                .trajectory(tenant, id)
                .is_some_and(|t| inner.prunable(tenant, t));
            if let Some(events) = may.then(|| inner.forget(tenant, id)).flatten() {
                pruned.trajectories += 1;
                pruned.events += events as u64;
            }
        }
        inner.sweep_verdicts();
        Ok(pruned)
    }
}

#[async_trait]
impl crate::TokenRecords for MemoryStore {
    async fn put_token(&self, token: &crate::StoredToken) -> Result<bool, StoreError> {
        let mut inner = self.inner.write();
        if inner.tokens.contains_key(&token.hash) {
            return Ok(false);
        }
        inner.tokens.insert(token.hash.clone(), token.clone());
        Ok(true)
    }

    async fn tokens(&self) -> Result<Vec<crate::StoredToken>, StoreError> {
        Ok(self.inner.read().tokens.values().cloned().collect())
    }

    async fn revoke_token(&self, hash: &str) -> Result<Option<crate::StoredToken>, StoreError> {
        Ok(self.inner.write().tokens.remove(hash))
    }
}

#[async_trait]
impl crate::PolicyRevisions for MemoryStore {
    async fn push_policies(
        &self,
        revision: &crate::PolicyRevision,
        sources: &crate::PolicySources,
        current: &crate::CurrentPolicies,
    ) -> Result<(), StoreError> {
        let mut inner = self.inner.write();
        let kept = inner
            .policy_revisions
            .iter()
            .any(|(r, _)| r.revision == revision.revision);
        if !kept {
            inner
                .policy_revisions
                .push((revision.clone(), sources.clone()));
        }
        inner.current_policies = Some(current.clone());
        Ok(())
    }

    async fn policy_revisions(
        &self,
        limit: usize,
    ) -> Result<Vec<crate::PolicyRevision>, StoreError> {
        let inner = self.inner.read();
        let mut listed: Vec<_> = inner
            .policy_revisions
            .iter()
            .map(|(r, _)| r.clone())
            .collect();
        listed.sort_by(|a, b| (b.pushed_at, &b.revision).cmp(&(a.pushed_at, &a.revision)));
        listed.truncate(limit);
        Ok(listed)
    }

    async fn policy_revision(
        &self,
        revision: &str,
    ) -> Result<Option<(crate::PolicyRevision, crate::PolicySources)>, StoreError> {
        let inner = self.inner.read();
        Ok(inner
            .policy_revisions
            .iter()
            .find(|(r, _)| r.revision == revision)
            .cloned())
    }

    async fn set_current_policies(
        &self,
        current: &crate::CurrentPolicies,
    ) -> Result<bool, StoreError> {
        let mut inner = self.inner.write();
        let kept = inner
            .policy_revisions
            .iter()
            .any(|(r, _)| r.revision == current.revision);
        if kept {
            inner.current_policies = Some(current.clone());
        }
        Ok(kept)
    }

    async fn current_policies(&self) -> Result<Option<crate::CurrentPolicies>, StoreError> {
        Ok(self.inner.read().current_policies.clone())
    }
}

#[async_trait]
impl Grants for MemoryStore {
    async fn put_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError> {
        let key = (tenant.clone(), agent_id.to_string(), grant.shape.key());
        self.inner.write().grants.insert(key, grant.clone());
        Ok(())
    }

    async fn grants(&self, tenant: &TenantId, agent_id: &str) -> Result<Vec<Grant>, StoreError> {
        let inner = self.inner.read();
        let mut grants: Vec<Grant> = inner
            .grants
            .iter()
            .filter(|((t, a, _), _)| t == tenant && a == agent_id)
            .map(|(_, grant)| grant.clone())
            .collect();
        grants.sort_by_key(|g| g.granted_at);
        Ok(grants)
    }

    async fn revoke_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        shape: &ActionShape,
    ) -> Result<Option<Grant>, StoreError> {
        let key = (tenant.clone(), agent_id.to_string(), shape.key());
        Ok(self.inner.write().grants.remove(&key))
    }
}

#[async_trait]
impl Approvals for MemoryStore {
    async fn open_approval(&self, approval: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
        let mut inner = self.inner.write();
        let tenant = &approval.tenant;
        if let Some(kept) = inner
            .approvals
            .values()
            .find(|a| a.tenant == *tenant && a.event_id == approval.event_id)
        {
            return Ok(kept.clone());
        }
        let key = (tenant.clone(), approval.id.clone());
        inner.approvals.insert(key, approval.clone());
        Ok(approval.clone())
    }

    async fn settle_approval(&self, settled: &ApprovalRecord) -> Result<bool, StoreError> {
        let mut inner = self.inner.write();
        let key = (settled.tenant.clone(), settled.id.clone());
        let Some(current) = inner.approvals.get_mut(&key) else {
            return Ok(false);
        };
        if current.state != ApprovalState::Pending || !settled.state.in_time(current.expires_at) {
            return Ok(false);
        }
        current.state = settled.state.clone();
        Ok(true)
    }

    async fn overdue_approvals(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let inner = self.inner.read();
        let mut overdue: Vec<ApprovalRecord> = inner
            .approvals
            .values()
            .filter(|a| a.state == ApprovalState::Pending && a.expires_at <= now)
            .cloned()
            .collect();
        overdue.sort_by_key(|a| a.expires_at);
        overdue.truncate(limit);
        Ok(overdue)
    }

    async fn pending_approvals(&self, tenant: &TenantId) -> Result<u64, StoreError> {
        let inner = self.inner.read();
        let pending = inner
            .approvals
            .values()
            .filter(|a| a.tenant == *tenant && a.state == ApprovalState::Pending)
            .count();
        Ok(pending as u64)
    }
}

/// Whether `filter` lists `trajectory`.
fn listed_by(filter: &TrajectoryFilter, trajectory: &Trajectory) -> bool {
    let t = &trajectory.summary;
    let state = &t.state;
    let has_decision = |d: Decision| match d {
        Decision::Deny => state.denial_count > 0,
        Decision::Escalate => state.escalation_count > 0,
        Decision::Allow => state.denial_count == 0 && state.escalation_count == 0,
    };
    let verdicts = || {
        trajectory
            .events
            .iter()
            .filter_map(|e| e.adjudication.as_ref())
    };
    let policy_decided = |policy: &String| {
        verdicts().any(|v| {
            let blocked = v.effective_decision() != Decision::Allow
                && v.policies.iter().any(|p| p.policy_id == *policy);
            blocked || v.shadow_matches.iter().any(|p| p.policy_id == *policy)
        })
    };
    let contains_text = |text: &String| {
        let needle = text.to_ascii_lowercase();
        let has = |s: &str| s.to_ascii_lowercase().contains(&needle);
        has(&t.id)
            || has(&t.agent_id)
            || t.session_id.as_deref().is_some_and(has)
            || trajectory
                .events
                .iter()
                .any(|e| serde_json::to_string(&e.event).is_ok_and(|json| has(&json)))
            || verdicts().any(|v| serde_json::to_string(v).is_ok_and(|json| has(&json)))
    };
    filter.agent_id.as_ref().is_none_or(|a| *a == t.agent_id)
        && filter.status.is_none_or(|s| s == t.status)
        && (filter.session_id.is_none() || filter.session_id == t.session_id)
        && filter.decision.is_none_or(has_decision)
        && filter
            .active
            .since
            .is_none_or(|since| t.updated_at >= since)
        && filter.active.until.is_none_or(|until| t.created_at < until)
        && filter.policy_id.as_ref().is_none_or(policy_decided)
        && filter.text.as_ref().is_none_or(contains_text)
}

/// Counts, most first then by policy id, at most [`crate::POLICY_COUNTS`].
fn most_first(counts: BTreeMap<&str, u64>) -> Vec<PolicyCount> {
    let mut listed: Vec<PolicyCount> = counts
        .into_iter()
        .map(|(policy_id, count)| PolicyCount {
            policy_id: policy_id.to_string(),
            count,
        })
        .collect();
    listed.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.policy_id.cmp(&b.policy_id))
    });
    listed.truncate(crate::POLICY_COUNTS);
    listed
}
