//! Changes to a store that several processes share, announced to each of
//! them: what a server needs to show every server's records in its live
//! stream and to wake its waiters when another server settles an approval.
//!
//! Announcements name rows, they do not carry them: a listener reads what
//! it was told about. Delivery follows commit order, so the steps of one
//! trajectory are announced in position order. A listener whose connection
//! drops is told once it listens again ([`Change::Resumed`]) and reads what
//! it may have missed with [`SharedChanges::steps_since`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sondera_model::{Adjudicated, Event};
use tokio::sync::mpsc;

use crate::{ApprovalRecord, StoreError, TenantId};

/// One recorded step, by its place.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StepKey {
    /// Whose it is.
    pub tenant: TenantId,
    /// Its trajectory.
    pub trajectory_id: String,
    /// Its position in the trajectory.
    pub seq: u64,
}

/// What a process sharing the store committed.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A step was recorded.
    Recorded(StepKey),
    /// An approval was opened or settled.
    Approval {
        /// Whose it is.
        tenant: TenantId,
        /// The approval's id.
        id: String,
    },
    /// Another policy revision was made current.
    Policies {
        /// The revision now current.
        revision: String,
    },
    /// A stored token was added or revoked.
    Tokens,
    /// Listening stopped at `lost_at` and has started again: changes
    /// committed in between were not announced.
    Resumed {
        /// When the connection was found lost.
        lost_at: DateTime<Utc>,
    },
}

/// A recorded step as a listener reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedStep {
    /// Whose it is.
    pub tenant: TenantId,
    /// Its position in its trajectory.
    pub seq: u64,
    /// The event.
    pub event: Event,
    /// Its verdict; `None` for a step policies do not judge (a lifecycle
    /// event).
    pub verdict: Option<Adjudicated>,
}

/// A store whose changes are announced to every process sharing it.
#[async_trait]
pub trait SharedChanges: Send + Sync + std::fmt::Debug {
    /// Starts listening: every change committed after this returns is
    /// announced on the receiver, in commit order. The listener reconnects
    /// by itself after a lost connection and then sends
    /// [`Change::Resumed`]. Dropping the receiver stops it.
    async fn listen(&self) -> Result<mpsc::Receiver<Change>, StoreError>;

    /// The steps at `keys`, in the order asked; a key with no step is left
    /// out.
    async fn steps(&self, keys: &[StepKey]) -> Result<Vec<SharedStep>, StoreError>;

    /// Steps recorded at or after `since` (by the recording process's
    /// clock), each trajectory's in position order, at most `limit`.
    async fn steps_since(
        &self,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<SharedStep>, StoreError>;

    /// Approvals opened at or after `since`, whatever their state now,
    /// oldest first, at most `limit`.
    async fn approvals_since(
        &self,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError>;
}
