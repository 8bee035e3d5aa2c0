//! What the two SQL stores share: the statements that read the same in both
//! dialects, and the migration runner.
//!
//! Statements use `$N` placeholders. PostgreSQL numbers them; SQLite reads
//! them as named parameters, indexed in order of first appearance, so every
//! statement here introduces `$1`, `$2`, ... in order (a test checks it) and
//! both stores bind the same values positionally.
//!
//! Every id is unique within its tenant only, so every statement that reads
//! or writes by id names the tenant first.

use crate::StoreError;

pub(crate) const UPSERT_AGENT: &str =
    "INSERT INTO agents (tenant, id, body, first_seen, last_seen) VALUES ($1, $2, $3, $4, $4)
     ON CONFLICT (tenant, id) DO UPDATE SET body = excluded.body, last_seen = excluded.last_seen";

pub(crate) const CREATE_TRAJECTORY: &str = "INSERT INTO trajectories (tenant, id, agent_id, session_id, status, created_at, updated_at, event_count, state)
     VALUES ($1, $2, $3, $4, 'pending', $5, $5, 0, '{}') ON CONFLICT (tenant, id) DO NOTHING";

pub(crate) const INSERT_EVENT: &str = "INSERT INTO events (tenant, trajectory_id, seq, event_id, recorded_at, body) VALUES ($1, $2, $3, $4, $5, $6)";

pub(crate) const INSERT_ADJUDICATION: &str = "INSERT INTO adjudications (tenant, event_id, trajectory_id, agent_id, seq, kind, decision, recorded_at, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";

pub(crate) const UPDATE_TRAJECTORY: &str = "UPDATE trajectories SET status = $1, updated_at = $2, event_count = $3, state = $4 WHERE tenant = $5 AND id = $6";

/// The columns of a trajectory summary, in the order both stores decode them.
macro_rules! summary_columns {
    () => {
        "id, tenant, agent_id, session_id, status, created_at, updated_at, event_count, state"
    };
}
pub(crate) use summary_columns;

pub(crate) const SELECT_TRAJECTORY: &str = concat!(
    "SELECT ",
    summary_columns!(),
    " FROM trajectories WHERE tenant = $1 AND id = $2"
);

pub(crate) const SELECT_EVENTS: &str = "SELECT e.seq, e.body, a.body FROM events e
     LEFT JOIN adjudications a ON a.tenant = e.tenant AND a.event_id = e.event_id
     WHERE e.tenant = $1 AND e.trajectory_id = $2 ORDER BY e.seq";

pub(crate) const UPSERT_GRANT: &str = "INSERT INTO grants (tenant, agent_id, shape, granted_at, body) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant, agent_id, shape) DO UPDATE SET granted_at = excluded.granted_at, body = excluded.body";

pub(crate) const SELECT_GRANTS: &str =
    "SELECT body FROM grants WHERE tenant = $1 AND agent_id = $2 ORDER BY granted_at, shape";

pub(crate) const DELETE_GRANT: &str =
    "DELETE FROM grants WHERE tenant = $1 AND agent_id = $2 AND shape = $3 RETURNING body";

pub(crate) const SELECT_AGENT: &str = "SELECT body FROM agents WHERE tenant = $1 AND id = $2";

pub(crate) const INSERT_APPROVAL: &str = "INSERT INTO approvals (tenant, id, event_id, agent_id, trajectory_id, status, created_at, expires_at, body)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8) ON CONFLICT (tenant, event_id) DO NOTHING";

pub(crate) const SELECT_APPROVAL_FOR_EVENT: &str =
    "SELECT body FROM approvals WHERE tenant = $1 AND event_id = $2";

pub(crate) const SELECT_APPROVAL: &str = "SELECT body FROM approvals WHERE tenant = $1 AND id = $2";

/// Leaves `pending` once: a decision (`$6` true) only while
/// `expires_at > $5`, an expiry only once it is not.
pub(crate) const SETTLE_APPROVAL: &str = "UPDATE approvals SET status = $1, body = $2
     WHERE tenant = $3 AND id = $4 AND status = 'pending' AND (expires_at > $5) = $6";

pub(crate) const SELECT_OVERDUE_APPROVALS: &str =
    "SELECT body FROM approvals WHERE status = 'pending' AND expires_at <= $1
     ORDER BY expires_at LIMIT $2";

pub(crate) const COUNT_PENDING_APPROVALS: &str =
    "SELECT COUNT(*) FROM approvals WHERE tenant = $1 AND status = 'pending'";

pub(crate) const INSERT_POLICY_REVISION: &str =
    "INSERT INTO policy_revisions (revision, pushed_at, body, sources)
     VALUES ($1, $2, $3, $4) ON CONFLICT (revision) DO NOTHING";

/// Points `policy_current` at a kept revision; nothing when it is not kept.
pub(crate) const SET_CURRENT_POLICIES: &str = "INSERT INTO policy_current (id, revision, body)
     SELECT 1, $1, $2 WHERE EXISTS (SELECT 1 FROM policy_revisions WHERE revision = $1)
     ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, body = excluded.body";

pub(crate) const SELECT_POLICY_REVISIONS: &str =
    "SELECT body FROM policy_revisions ORDER BY pushed_at DESC, revision DESC LIMIT $1";

pub(crate) const SELECT_POLICY_REVISION: &str =
    "SELECT body, sources FROM policy_revisions WHERE revision = $1";

pub(crate) const SELECT_CURRENT_POLICIES: &str = "SELECT body FROM policy_current WHERE id = 1";

pub(crate) const INSERT_TOKEN: &str =
    "INSERT INTO tokens (hash, body) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING";

pub(crate) const SELECT_TOKENS: &str = "SELECT body FROM tokens ORDER BY hash";

pub(crate) const DELETE_TOKEN: &str = "DELETE FROM tokens WHERE hash = $1 RETURNING body";

/// Statuses of ended trajectories, as the partial index
/// `trajectories_ended` names them (a query must repeat them exactly).
macro_rules! ended {
    () => {
        "status IN ('completed', 'failed', 'terminated')"
    };
}

pub(crate) const SELECT_TENANTS: &str = "SELECT DISTINCT tenant FROM trajectories ORDER BY tenant";

pub(crate) const SELECT_NTH_NEWEST_ENDED: &str = concat!(
    "SELECT updated_at FROM trajectories WHERE tenant = $1 AND ",
    ended!(),
    " ORDER BY updated_at DESC LIMIT 1 OFFSET $2"
);

pub(crate) const SELECT_PRUNABLE: &str = concat!(
    "SELECT id, event_count FROM trajectories t WHERE tenant = $1 AND ",
    ended!(),
    " AND updated_at < $2 AND NOT EXISTS (SELECT 1 FROM approvals a
       WHERE a.tenant = t.tenant AND a.trajectory_id = t.id AND a.status = 'pending')
     ORDER BY updated_at, id LIMIT $3"
);

/// Removes the trajectory row first, if it may go: the rest of it goes
/// only when this returned its event count.
pub(crate) const DELETE_PRUNED_TRAJECTORY: &str = concat!(
    "DELETE FROM trajectories AS t WHERE tenant = $1 AND id = $2 AND ",
    ended!(),
    " AND NOT EXISTS (SELECT 1 FROM approvals a
       WHERE a.tenant = t.tenant AND a.trajectory_id = t.id AND a.status = 'pending')
     RETURNING event_count"
);

pub(crate) const DELETE_PRUNED_POLICIES: &str =
    "DELETE FROM adjudication_policies WHERE tenant = $1
    AND event_id IN (SELECT event_id FROM events WHERE tenant = $1 AND trajectory_id = $2)";

pub(crate) const DELETE_PRUNED_ADJUDICATIONS: &str = "DELETE FROM adjudications WHERE tenant = $1
    AND event_id IN (SELECT event_id FROM events WHERE tenant = $1 AND trajectory_id = $2)";

pub(crate) const DELETE_PRUNED_APPROVALS: &str =
    "DELETE FROM approvals WHERE tenant = $1 AND trajectory_id = $2 AND status <> 'pending'";

pub(crate) const DELETE_PRUNED_EVENTS: &str =
    "DELETE FROM events WHERE tenant = $1 AND trajectory_id = $2";

/// What goes with a pruned trajectory, in order: what is found through
/// its events before the events themselves.
pub(crate) const DELETE_PRUNED: [&str; 4] = [
    DELETE_PRUNED_POLICIES,
    DELETE_PRUNED_ADJUDICATIONS,
    DELETE_PRUNED_APPROVALS,
    DELETE_PRUNED_EVENTS,
];

/// The unique constraint on event ids, so a repeated id is told apart from
/// a lost race for a position.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) const EVENT_ID_CONSTRAINT: &str = "events_event_id_unique";

#[cfg(test)]
pub(crate) const SHARED: &[&str] = &[
    UPSERT_AGENT,
    CREATE_TRAJECTORY,
    INSERT_EVENT,
    INSERT_ADJUDICATION,
    UPDATE_TRAJECTORY,
    SELECT_TRAJECTORY,
    SELECT_EVENTS,
    UPSERT_GRANT,
    SELECT_GRANTS,
    DELETE_GRANT,
    SELECT_AGENT,
    INSERT_APPROVAL,
    SELECT_APPROVAL_FOR_EVENT,
    SELECT_APPROVAL,
    SETTLE_APPROVAL,
    SELECT_OVERDUE_APPROVALS,
    COUNT_PENDING_APPROVALS,
    INSERT_POLICY_REVISION,
    SET_CURRENT_POLICIES,
    SELECT_POLICY_REVISIONS,
    SELECT_POLICY_REVISION,
    SELECT_CURRENT_POLICIES,
    INSERT_TOKEN,
    SELECT_TOKENS,
    DELETE_TOKEN,
    SELECT_TENANTS,
    SELECT_NTH_NEWEST_ENDED,
    SELECT_PRUNABLE,
    DELETE_PRUNED_TRAJECTORY,
    DELETE_PRUNED_POLICIES,
    DELETE_PRUNED_ADJUDICATIONS,
    DELETE_PRUNED_APPROVALS,
    DELETE_PRUNED_EVENTS,
];

/// One schema change, in each dialect. Versions count from 1.
pub(crate) struct Migration {
    pub(crate) version: u32,
    pub(crate) sqlite: &'static str,
    pub(crate) postgres: &'static str,
}

#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// The migrations a database at schema `applied` still needs, in order, as
/// `(version, statements)`; a database written by a newer release is
/// refused rather than guessed at.
pub(crate) fn pending(
    applied: u32,
    dialect: Dialect,
    location: &str,
) -> Result<Vec<(u32, &'static str)>, StoreError> {
    let latest = crate::migrations::MIGRATIONS
        .last()
        .map_or(0, |m| m.version);
    if applied > latest {
        return Err(StoreError::Open {
            path: location.to_string(),
            message: format!(
                "schema version {applied} is newer than this release understands ({latest}); upgrade sondera"
            ),
        });
    }
    Ok(crate::migrations::MIGRATIONS
        .iter()
        .filter(|m| m.version > applied)
        .map(|m| {
            let sql = match dialect {
                Dialect::Sqlite => m.sqlite,
                Dialect::Postgres => m.postgres,
            };
            (m.version, sql)
        })
        .collect())
}
