//! Durable trajectories for Sondera Harness.
//!
//! A store records agents (with their cards), trajectories (agent, session,
//! status, counts and the accumulated state policies read), every event in
//! order and every adjudication with the policies that decided it. Writes are
//! one [`StepRecord`] at a time, applied atomically: the event, its verdict
//! and the trajectory's new state land together or not at all, and a step is
//! acknowledged only once it is durable.
//!
//! Each event has a sequence number within its trajectory, and the store
//! refuses a second event at the same position ([`StoreError::Conflict`]), so
//! two writers racing on one trajectory cannot interleave silently.
//!
//! Every record belongs to a tenant ([`TenantId`]), and every id (agent,
//! trajectory, event) is unique only within its tenant: one tenant can
//! neither learn that another's id exists nor take an id another will use.
//! So every query that reads by id takes the tenant, and the few that span
//! tenants (an operator's local listing) say so with [`Tenants::All`].
//!
//! [`TrajectoryStore`] is the interface; [`SqliteStore`] is the embedded
//! default (one file under a data directory, WAL journal, synchronous
//! commits) and [`MemoryStore`] keeps trajectories in process memory, bounded by
//! an event budget past which ended trajectories are forgotten. The two SQL
//! stores share their statements and their migration runner (`sql`), so
//! they cannot drift apart.

mod hooked;
mod memory;
mod migrations;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_feed;
#[cfg(feature = "postgres")]
mod postgres_tls;
mod retention;
mod shared;
mod sql;
mod sqlite;
mod tenant;
mod types;

pub use hooked::{AppendHook, HookedLog};
pub use memory::{DEFAULT_EVENT_BUDGET, MemoryStore};
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
pub use retention::{
    Prunable, PruneOptions, Pruned, Retention, RetentionError, RetentionRule, RetentionRules,
    RetentionSetting, prune,
};
pub use shared::{Change, SharedChanges, SharedStep, StepKey};
pub use sqlite::SqliteStore;
pub use tenant::{DEFAULT_TENANT, InvalidTenant, MAX_TENANT_LEN, TenantId, Tenants};
pub use types::*;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sondera_model::{ActionShape, Agent, Grant};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite refused an operation.
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// PostgreSQL refused an operation.
    #[cfg(feature = "postgres")]
    #[error("database error: {}", postgres::describe(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// The database cannot be reached now; the operation may succeed later.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// The store could not be opened.
    #[error("cannot open the store at {path}: {message}")]
    Open {
        /// Where the store was looked for.
        path: String,
        /// Why it could not be opened, and what to do.
        message: String,
    },
    /// Another writer appended at the same position first.
    #[error(
        "trajectory {trajectory_id} already has an event at position {seq}: another writer appended first"
    )]
    Conflict {
        /// The trajectory written to.
        trajectory_id: String,
        /// The position taken.
        seq: u64,
    },
    /// An event with this id is already recorded.
    #[error("event {0} is already recorded")]
    DuplicateEvent(String),
    /// A trajectory with this id is already recorded.
    #[error("trajectory {0} is already recorded")]
    DuplicateTrajectory(String),
    /// No trajectory with this id is recorded.
    #[error("trajectory {0} is not recorded")]
    UnknownTrajectory(String),
    /// What was read back is not what could have been written.
    #[error("stored data is corrupt ({what}): {message}")]
    Corrupt {
        /// What was being read.
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// A page cursor this store did not issue.
    #[error("invalid page cursor `{0}`")]
    InvalidCursor(String),
    /// A remote store (a harness server's records) failed.
    #[error("the remote store failed: {0}")]
    Remote(String),
}

/// Opens the store `location` names: `postgres://...` (or `postgresql://`),
/// `memory`, `sqlite:PATH` (a database file) or a data directory path
/// (SQLite inside it).
pub async fn connect(location: &str) -> Result<std::sync::Arc<dyn TrajectoryStore>, StoreError> {
    if location.starts_with("postgres://") || location.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return Ok(std::sync::Arc::new(PostgresStore::connect(location).await?));
        #[cfg(not(feature = "postgres"))]
        return Err(StoreError::Open {
            path: location
                .split('@')
                .next_back()
                .unwrap_or_default()
                .to_string(),
            message:
                "this build has no PostgreSQL store: enable the `postgres` feature of sondera-store"
                    .into(),
        });
    }
    if location == "memory" {
        return Ok(std::sync::Arc::new(MemoryStore::new()));
    }
    if let Some(budget) = location.strip_prefix("memory:") {
        let events = budget.parse().map_err(|_| StoreError::Open {
            path: location.to_string(),
            message: "memory:EVENTS takes the number of events to keep, e.g. memory:500000".into(),
        })?;
        return Ok(std::sync::Arc::new(MemoryStore::with_event_budget(events)));
    }
    if let Some(file) = location.strip_prefix("sqlite:") {
        return Ok(std::sync::Arc::new(SqliteStore::open(file)?));
    }
    if location.contains("://") {
        return Err(StoreError::Open {
            path: location.to_string(),
            message: "unknown store scheme: use postgres://, memory, sqlite:FILE or a directory"
                .into(),
        });
    }
    Ok(std::sync::Arc::new(SqliteStore::open_dir(location)?))
}

/// The event log: where adjudication appends each step. A decorator of
/// appends (instrumentation, injected failures) implements this alone.
#[async_trait]
pub trait EventLog: Send + Sync + std::fmt::Debug {
    /// Appends one step atomically: the event, its verdict (if it was
    /// adjudicated) and the trajectory's new status and state. A `started`
    /// event creates the trajectory and records its agent.
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError>;
}

/// What was recorded, for reading: trajectories and their events, agents,
/// verdicts, counts and approvals. A remote reader implements this alone.
#[async_trait]
pub trait Records: Send + Sync + std::fmt::Debug {
    /// A trajectory's summary, including the state needed to resume it.
    async fn trajectory(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError>;
    /// A trajectory with its events in order.
    async fn trajectory_with_events(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError>;
    /// The agent `id` as `tenant` last recorded it.
    async fn agent(&self, tenant: &TenantId, id: &str) -> Result<Option<Agent>, StoreError>;
    /// Agents in (tenant, id) order.
    async fn list_agents(
        &self,
        tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError>;
    /// Trajectories, newest first.
    async fn list_trajectories(
        &self,
        tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError>;
    /// Adjudications that denied or escalated, newest first.
    async fn list_adjudications(
        &self,
        tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError>;
    /// Counts over `window`.
    async fn analytics(
        &self,
        tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError>;
    /// One approval by id.
    async fn approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError>;
    /// Approvals, newest first.
    async fn list_approvals(
        &self,
        tenants: Tenants<'_>,
        filter: &ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, StoreError>;
    /// The announcements of what every process sharing this store records,
    /// for a store several processes share (PostgreSQL); `None` for one
    /// that only this process writes.
    fn shared(&self) -> Option<std::sync::Arc<dyn SharedChanges>> {
        None
    }
}

/// Standing approvals ("always" grants) per agent.
#[async_trait]
pub trait Grants: Send + Sync + std::fmt::Debug {
    /// Records a standing approval for `agent_id`, replacing any earlier one
    /// of the same shape.
    async fn put_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError>;
    /// The standing approvals recorded for `agent_id`, oldest first.
    async fn grants(&self, tenant: &TenantId, agent_id: &str) -> Result<Vec<Grant>, StoreError>;
    /// Removes the standing approval of `shape` for `agent_id`; the grant
    /// removed, or `None` when there was none.
    async fn revoke_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        shape: &ActionShape,
    ) -> Result<Option<Grant>, StoreError>;
}

/// The approval queue: escalations waiting for a person, settled once.
#[async_trait]
pub trait Approvals: Send + Sync + std::fmt::Debug {
    /// Keeps `approval` (pending) unless its tenant already has one for the
    /// same event; returns the one kept, so asking twice opens one approval.
    async fn open_approval(&self, approval: &ApprovalRecord) -> Result<ApprovalRecord, StoreError>;
    /// Moves a pending approval to `settled.state`, atomically: a decision
    /// only before `expires_at` (by its `decided_at`), an expiry only from
    /// then on. `false` when the approval had already left `pending` or
    /// the time was wrong for it; the first of two racing settlements wins.
    async fn settle_approval(&self, settled: &ApprovalRecord) -> Result<bool, StoreError>;
    /// Pending approvals of every tenant whose deadline is at or before
    /// `now`, soonest first, at most `limit`.
    async fn overdue_approvals(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError>;
    /// How many approvals of `tenant` are waiting for a person.
    async fn pending_approvals(&self, tenant: &TenantId) -> Result<u64, StoreError>;
}

/// Policy sets pushed to the servers that share this store, each kept by
/// its revision, one of them current. Server-wide: not a tenant's.
#[async_trait]
pub trait PolicyRevisions: Send + Sync + std::fmt::Debug {
    /// Keeps `revision` with its `sources` (a revision pushed again keeps
    /// its first record) and makes it current as `current` says.
    async fn push_policies(
        &self,
        revision: &PolicyRevision,
        sources: &PolicySources,
        current: &CurrentPolicies,
    ) -> Result<(), StoreError>;
    /// Kept revisions, newest first, at most `limit`.
    async fn policy_revisions(&self, limit: usize) -> Result<Vec<PolicyRevision>, StoreError>;
    /// A kept revision with its sources.
    async fn policy_revision(
        &self,
        revision: &str,
    ) -> Result<Option<(PolicyRevision, PolicySources)>, StoreError>;
    /// Makes the kept revision `current.revision` current; `false` when no
    /// such revision is kept.
    async fn set_current_policies(&self, current: &CurrentPolicies) -> Result<bool, StoreError>;
    /// The revision in force; `None` before anything was pushed.
    async fn current_policies(&self) -> Result<Option<CurrentPolicies>, StoreError>;
}

/// Bearer tokens kept for every server sharing this store, by hash.
#[async_trait]
pub trait TokenRecords: Send + Sync + std::fmt::Debug {
    /// Keeps `token`; `false` when a token of the same hash is kept already.
    async fn put_token(&self, token: &StoredToken) -> Result<bool, StoreError>;
    /// Every kept token, by hash.
    async fn tokens(&self) -> Result<Vec<StoredToken>, StoreError>;
    /// Removes the token of `hash`; the token removed, if one was kept.
    async fn revoke_token(&self, hash: &str) -> Result<Option<StoredToken>, StoreError>;
}

/// A whole store: every role. Each store (memory, SQLite, PostgreSQL)
/// implements the seven roles, and this follows; callers that need only one
/// role take that role.
pub trait TrajectoryStore:
    EventLog + Records + Grants + Approvals + PolicyRevisions + TokenRecords + Retention
{
}

impl<
    T: EventLog + Records + Grants + Approvals + PolicyRevisions + TokenRecords + Retention + ?Sized,
> TrajectoryStore for T
{
}
