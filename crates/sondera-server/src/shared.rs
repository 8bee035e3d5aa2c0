//! Several servers over one shared store act as one: each server's live
//! stream carries what every server records, and an approval settled on
//! any of them wakes the agents waiting on this one.
//!
//! With a shared store ([`sondera_store::Records::shared`]) a server
//! publishes nothing itself: everything, its own steps included, reaches
//! its stream through the store's announcements, so every server's stream
//! has the same items in the same order per trajectory. Announcements name
//! rows; the follower reads them in batches. A step is published once: the
//! follower remembers the last position it published of each recent
//! trajectory, and a catch-up after a lost connection (which reads from a
//! little before the loss) skips what was already published.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sondera_model::Adjudicated;
use sondera_store::{ApprovalState, Change, SharedChanges, SharedStep, StepKey, TenantId};
use tokio::sync::mpsc;

use crate::governance::Governance;
use crate::live::LiveItem;

/// Announcements read in one go, at most.
const BATCH: usize = 512;
/// How far before a lost connection a catch-up reads: steps carry the
/// recording server's clock, and commits land a little after it.
const CATCH_UP_MARGIN: Duration = Duration::from_secs(30);
/// Steps and approvals read by one catch-up, at most.
const CATCH_UP_LIMIT: usize = 100_000;
/// Trajectories (and approvals) whose last published place is remembered.
const REMEMBERED: usize = 100_000;

/// What was last published of each recent trajectory and approval.
#[derive(Default)]
struct Published {
    steps: HashMap<(TenantId, String), u64>,
    approvals: HashMap<(TenantId, String), std::mem::Discriminant<ApprovalState>>,
    /// Keys in the order first remembered, to forget the oldest.
    order: VecDeque<Remembered>,
}

enum Remembered {
    Step(TenantId, String),
    Approval(TenantId, String),
}

impl Published {
    /// Whether `step` is after everything published of its trajectory; if
    /// so it is now the last.
    fn step_is_new(&mut self, tenant: &TenantId, trajectory_id: &str, seq: u64) -> bool {
        let key = (tenant.clone(), trajectory_id.to_owned());
        match self.steps.get_mut(&key) {
            Some(last) if *last >= seq => false,
            Some(last) => {
                *last = seq;
                true
            }
            None => {
                self.steps.insert(key, seq);
                self.remember(Remembered::Step(tenant.clone(), trajectory_id.to_owned()));
                true
            }
        }
    }

    /// Whether the approval's state differs from the one last published.
    fn approval_is_new(
        &mut self,
        tenant: &TenantId,
        id: &str,
        state: std::mem::Discriminant<ApprovalState>,
    ) -> bool {
        let key = (tenant.clone(), id.to_owned());
        match self.approvals.insert(key, state) {
            Some(previous) => previous != state,
            None => {
                self.remember(Remembered::Approval(tenant.clone(), id.to_owned()));
                true
            }
        }
    }

    fn remember(&mut self, key: Remembered) {
        self.order.push_back(key);
        while self.order.len() > REMEMBERED {
            match self.order.pop_front() {
                Some(Remembered::Step(t, id)) => self.steps.remove(&(t, id)),
                Some(Remembered::Approval(t, id)) => self.approvals.remove(&(t, id)).map(|_| 0),
                None => None,
            };
        }
    }
}

/// Follows `changes` until the service closes, publishing each to the live
/// stream and waking approval waiters.
pub(crate) async fn follow(
    governance: Arc<Governance>,
    shared: Arc<dyn SharedChanges>,
    mut changes: mpsc::Receiver<Change>,
) {
    let mut follower = Follower {
        governance,
        shared,
        published: Published::default(),
        started: Utc::now(),
    };
    let mut closing = follower.governance.closing();
    loop {
        let first = tokio::select! {
            change = changes.recv() => change,
            _ = closing.wait_for(|closing| *closing) => return,
        };
        let Some(first) = first else { return };
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match changes.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        follower.take(batch).await;
    }
}

struct Follower {
    governance: Arc<Governance>,
    shared: Arc<dyn SharedChanges>,
    published: Published,
    started: DateTime<Utc>,
}

impl Follower {
    /// Publishes a batch of changes in order: runs of recorded steps are
    /// read together.
    async fn take(&mut self, batch: Vec<Change>) {
        let mut steps = Vec::new();
        for change in batch {
            match change {
                Change::Recorded(key) => steps.push(key),
                Change::Approval { tenant, id } => {
                    self.read_steps(std::mem::take(&mut steps)).await;
                    self.approval(&tenant, &id).await;
                }
                Change::Policies { .. } => self.governance.policies_may_have_changed(),
                Change::Tokens => self.governance.tokens_changed.notify_one(),
                Change::Resumed { lost_at } => {
                    self.read_steps(std::mem::take(&mut steps)).await;
                    self.governance.policies_may_have_changed();
                    self.governance.tokens_changed.notify_one();
                    self.catch_up(lost_at).await;
                }
            }
        }
        self.read_steps(steps).await;
    }

    async fn read_steps(&mut self, keys: Vec<StepKey>) {
        if keys.is_empty() {
            return;
        }
        match self.shared.steps(&keys).await {
            Ok(steps) => steps.into_iter().for_each(|step| self.publish_step(step)),
            Err(e) => {
                self.governance.metrics().shared_stream_lost(keys.len());
                tracing::warn!(
                    steps = keys.len(),
                    "steps announced by the shared store could not be read; the live stream misses them: {e}"
                );
            }
        }
    }

    fn publish_step(&mut self, step: SharedStep) {
        let SharedStep {
            tenant,
            seq,
            event,
            verdict,
        } = step;
        if !self
            .published
            .step_is_new(&tenant, &event.trajectory_id, seq)
        {
            return;
        }
        let verdict = verdict.unwrap_or_else(|| {
            Adjudicated::unjudged(self.governance.engine().mode(), event.payload.kind())
        });
        let item = LiveItem::Recorded {
            seq,
            event,
            verdict,
        };
        self.governance.publish_shared(&tenant, item);
    }

    async fn approval(&mut self, tenant: &TenantId, id: &str) {
        // Whatever happens to it, waiters here read the store again.
        self.governance.settled.notify_waiters();
        match self.governance.store().approval(tenant, id).await {
            Ok(Some(approval)) => self.publish_approval(approval),
            Ok(None) => {}
            Err(e) => {
                self.governance.metrics().shared_stream_lost(1);
                tracing::warn!(
                    approval = id,
                    "an announced approval could not be read: {e}"
                );
            }
        }
    }

    fn publish_approval(&mut self, approval: sondera_store::ApprovalRecord) {
        let state = std::mem::discriminant(&approval.state);
        if self
            .published
            .approval_is_new(&approval.tenant, &approval.id, state)
        {
            let tenant = approval.tenant.clone();
            self.governance
                .publish_shared(&tenant, LiveItem::Approval(approval));
        }
    }

    /// Reads what was recorded since a little before `lost_at` and
    /// publishes what was not yet; wakes every waiter.
    async fn catch_up(&mut self, lost_at: DateTime<Utc>) {
        self.governance.settled.notify_waiters();
        let margin = chrono::Duration::from_std(CATCH_UP_MARGIN).unwrap_or_default();
        // What was recorded before this server started is not its stream's.
        let since = (lost_at - margin).max(self.started);
        match self.shared.steps_since(since, CATCH_UP_LIMIT).await {
            Ok(steps) => {
                if steps.len() == CATCH_UP_LIMIT {
                    tracing::warn!(
                        "more than {CATCH_UP_LIMIT} steps were recorded while the shared store was not listened to; the live stream shows the first"
                    );
                }
                steps.into_iter().for_each(|step| self.publish_step(step));
            }
            Err(e) => {
                self.governance.metrics().shared_stream_lost(1);
                tracing::warn!("cannot catch up with the shared store: {e}");
            }
        }
        match self.shared.approvals_since(since, CATCH_UP_LIMIT).await {
            Ok(approvals) => approvals
                .into_iter()
                .for_each(|approval| self.publish_approval(approval)),
            Err(e) => tracing::warn!("cannot catch up with the shared store's approvals: {e}"),
        }
        tracing::info!(%lost_at, "listening to the shared store again; caught up");
    }
}
