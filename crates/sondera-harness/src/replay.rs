//! Replaying recorded trajectories under a candidate policy set: which
//! decisions would change, without running the agent again and without
//! writing anything.
//!
//! Each trajectory is re-judged from its first event, in order, with a fresh
//! state that evolves under the candidate's own decisions (so a step budget
//! or a taint in the candidate set plays out as it would have). The events
//! themselves are what the agent did under the policies in force at the time:
//! a replay answers "what would these policies have said about this
//! history", not "what would the agent have done".

use chrono::{DateTime, Utc};
use serde::Serialize;
use sondera_model::{Decision, TrajectoryState};
use sondera_policy::PolicyEngine;
use sondera_store::{
    PageRequest, Records, StoreError, Tenants, TrajectoryDetail, TrajectoryFilter,
};

use crate::adjudicator::{adjudicate_step, as_judged};

/// Which recorded trajectories to replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayScope {
    /// Which trajectories, by agent, status or session.
    pub filter: TrajectoryFilter,
    /// Only trajectories updated at or after this time.
    pub since: Option<DateTime<Utc>>,
}

/// One event whose decision the candidate policies change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedDecision {
    /// The trajectory.
    pub trajectory_id: String,
    /// The event's position in it.
    pub seq: u64,
    /// The event.
    pub event_id: String,
    /// The payload kind (`shell_command`, ...).
    pub kind: String,
    /// The decision recorded.
    pub before: Decision,
    /// The candidate policies' decision.
    pub after: Decision,
    /// Policies that decided, recorded and under the candidate set.
    pub before_policies: Vec<String>,
    /// Policies that decided under the candidate set.
    pub after_policies: Vec<String>,
}

/// What a replay found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayReport {
    /// Trajectories replayed.
    pub trajectories: u64,
    /// Events the policies judge (lifecycle events are not counted).
    pub events: u64,
    /// Each event whose decision changed.
    pub changed: Vec<ChangedDecision>,
}

impl ReplayReport {
    /// How many changes go from `before` to `after`.
    pub fn count(&self, before: Decision, after: Decision) -> usize {
        self.changed
            .iter()
            .filter(|c| c.before == before && c.after == after)
            .count()
    }
}

/// Re-judges the trajectories of `store` in `scope` under `candidate`.
/// `progress` is told the number of events re-judged so far after each
/// trajectory.
pub async fn replay(
    store: &dyn Records,
    candidate: &PolicyEngine,
    scope: &ReplayScope,
    mut progress: impl FnMut(u64),
) -> Result<ReplayReport, StoreError> {
    let mut report = ReplayReport::default();
    let mut page = PageRequest::first(PageRequest::MAX_LIMIT);
    loop {
        let trajectories = store
            .list_trajectories(Tenants::All, &scope.filter, &page)
            .await?;
        for summary in &trajectories.items {
            if scope.since.is_some_and(|since| summary.updated_at < since) {
                continue;
            }
            // A trajectory removed since it was listed is simply skipped.
            if let Some(detail) = store
                .trajectory_with_events(&summary.tenant, &summary.id)
                .await?
            {
                replay_one(candidate, &detail, &mut report);
                progress(report.events);
            }
        }
        match trajectories.next {
            Some(cursor) => page = PageRequest::after(PageRequest::MAX_LIMIT, cursor),
            None => return Ok(report),
        }
    }
}

fn replay_one(candidate: &PolicyEngine, detail: &TrajectoryDetail, report: &mut ReplayReport) {
    report.trajectories += 1;
    let mut state = TrajectoryState::default();
    for stored in &detail.events {
        let event = as_judged(&stored.event, &state);
        let (verdict, governed) = adjudicate_step(candidate, &mut state, &event);
        if !governed {
            continue;
        }
        report.events += 1;
        let Some(recorded) = &stored.adjudication else {
            continue;
        };
        let (before, after) = (recorded.effective_decision(), verdict.effective_decision());
        if before != after {
            report.changed.push(ChangedDecision {
                trajectory_id: detail.summary.id.clone(),
                seq: stored.seq,
                event_id: stored.event.event_id.clone(),
                kind: stored.event.payload.kind().to_string(),
                before,
                after,
                before_policies: recorded.policy_ids().map(str::to_string).collect(),
                after_policies: verdict.policy_ids().map(str::to_string).collect(),
            });
        }
    }
}
