use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::de::DeserializeOwned;
use sondera_model::{Agent, Decision, Event, Grant};

use crate::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, Page, PageRequest, PolicyCount,
    StepRecord, StoreError, StoredEvent, TimeWindow, TrajectoryDetail, TrajectoryFilter,
    TrajectoryStatus, TrajectoryStore, TrajectorySummary,
};

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS agents (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS trajectories (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trajectories_by_created ON trajectories (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS trajectories_by_agent ON trajectories (agent_id, created_at DESC);
CREATE INDEX IF NOT EXISTS trajectories_by_session ON trajectories (session_id);
CREATE INDEX IF NOT EXISTS trajectories_by_tenant ON trajectories (tenant, created_at DESC);
CREATE TABLE IF NOT EXISTS events (
    trajectory_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (trajectory_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_by_time ON events (recorded_at);
CREATE TABLE IF NOT EXISTS adjudications (
    event_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    decision TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adjudications_by_decision ON adjudications (decision, recorded_at DESC, event_id DESC);
CREATE INDEX IF NOT EXISTS adjudications_by_time ON adjudications (recorded_at);
CREATE TABLE IF NOT EXISTS adjudication_policies (
    event_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adjudication_policies_by_time ON adjudication_policies (recorded_at);
CREATE TABLE IF NOT EXISTS grants (
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    shape TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, agent_id, shape)
);
"#;

/// The schema version `SCHEMA` creates, kept in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// Version 0 (before tenants): everything becomes the default tenant's, and
/// agents are keyed by tenant and id.
const MIGRATE_FROM_0: &str = r#"
ALTER TABLE trajectories ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE events ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE adjudications ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE adjudication_policies ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
CREATE TABLE agents_by_tenant (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
INSERT INTO agents_by_tenant SELECT 'default', id, body, first_seen, last_seen FROM agents;
DROP TABLE agents;
ALTER TABLE agents_by_tenant RENAME TO agents;
"#;

/// The embedded store: SQLite in one file (WAL journal, a commit is synced
/// before it is acknowledged) or entirely in memory.
///
/// Calls run on the caller's thread under one connection lock; each is a
/// short indexed transaction whose cost does not depend on how much is stored.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: Option<PathBuf>,
    writes: std::sync::mpsc::Sender<Pending>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("event_id", &self.step.event_id)
            .finish()
    }
}

/// The database file inside a data directory.
pub const DATABASE_FILE: &str = "sondera.db";

impl SqliteStore {
    /// Opens (creating if needed) the store in `data_dir`.
    pub fn open_dir(data_dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        let dir = data_dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        Self::open(dir.join(DATABASE_FILE))
    }

    /// Opens (creating if needed) the database file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let conn = Connection::open(path).map_err(open_error)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_error)?;
        Self::init(conn, Some(path.to_path_buf()))
    }

    /// A store that lives and dies with this value.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory()?, None)
    }

    fn init(conn: Connection, path: Option<PathBuf>) -> Result<Self, StoreError> {
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate(&conn)?;
        let conn = Arc::new(Mutex::new(conn));
        let (writes, queue) = std::sync::mpsc::channel();
        let writer = conn.clone();
        std::thread::Builder::new()
            .name("sondera-sqlite-writer".into())
            .spawn(move || write_loop(writer, queue))
            .map_err(|e| StoreError::Open {
                path: path
                    .as_ref()
                    .map_or(":memory:".into(), |p| p.display().to_string()),
                message: format!("cannot start the writer thread: {e}"),
            })?;
        Ok(Self { conn, path, writes })
    }

    /// The database file, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

use crate::types::{PreparedStep, cursor_parts, cursor_time as timestamp, paginate};

/// Brings the database to `SCHEMA_VERSION`, refusing one written by a newer
/// release rather than guessing at its layout.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::Open {
            path: conn.path().unwrap_or(":memory:").to_string(),
            message: format!(
                "schema version {version} is newer than this release understands ({SCHEMA_VERSION}); upgrade sondera"
            ),
        });
    }
    let tables: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'trajectories'",
        [],
        |r| r.get(0),
    )?;
    let batch = match (version, tables) {
        (0, 1) => format!(
            "BEGIN; {MIGRATE_FROM_0} {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ),
        (SCHEMA_VERSION, _) => SCHEMA.to_string(),
        _ => format!("BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"),
    };
    conn.execute_batch(&batch)?;
    Ok(())
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| corrupt("timestamp", e))
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        what: what.to_string(),
        message: e.to_string(),
    }
}

fn from_json<T: DeserializeOwned>(what: &str, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(what, e))
}

/// Writes one prepared step inside `tx`.
fn write_step(tx: &Connection, s: &PreparedStep) -> Result<(), StoreError> {
    let at = timestamp(&s.at);
    if let Some((agent, session_id)) = &s.started {
        tx.prepare_cached(
            "INSERT INTO agents (tenant, id, body, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?4)
             ON CONFLICT (tenant, id) DO UPDATE SET body = excluded.body, last_seen = excluded.last_seen",
        )?
        .execute(params![s.tenant, s.agent_id, agent, at])?;
        let created = tx
            .prepare_cached(
                "INSERT INTO trajectories (id, tenant, agent_id, session_id, status, created_at, updated_at, event_count, state)
                 VALUES (?1, ?2, ?3, ?4, 'pending', ?5, ?5, 0, '{}') ON CONFLICT (id) DO NOTHING",
            )?
            .execute(params![s.trajectory_id, s.tenant, s.agent_id, session_id, at])?;
        if created == 0 {
            return Err(StoreError::DuplicateTrajectory(s.trajectory_id.clone()));
        }
    }
    insert_event(tx, s, &at)?;
    if let Some((decision, body, blocking)) = &s.verdict {
        tx.prepare_cached(
            "INSERT INTO adjudications (event_id, tenant, trajectory_id, agent_id, seq, kind, decision, recorded_at, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![s.event_id, s.tenant, s.trajectory_id, s.agent_id, s.seq, s.kind, decision, at, body])?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO adjudication_policies (event_id, tenant, policy_id, recorded_at) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for policy in blocking {
            insert.execute(params![s.event_id, s.tenant, policy, at])?;
        }
    }
    let updated = tx
        .prepare_cached(
            "UPDATE trajectories SET status = ?2, updated_at = ?3, event_count = ?4, state = ?5 WHERE id = ?1",
        )?
        .execute(params![s.trajectory_id, s.status, at, s.seq + 1, s.state])?;
    if updated == 0 {
        return Err(StoreError::UnknownTrajectory(s.trajectory_id.clone()));
    }
    Ok(())
}

fn insert_event(tx: &Connection, s: &PreparedStep, at: &str) -> Result<(), StoreError> {
    let result = tx
        .prepare_cached("INSERT INTO events (trajectory_id, seq, event_id, tenant, recorded_at, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
        .execute(params![s.trajectory_id, s.seq, s.event_id, s.tenant, at, s.event]);
    match result {
        Err(rusqlite::Error::SqliteFailure(e, Some(message)))
            if e.code == rusqlite::ErrorCode::ConstraintViolation
                && message.contains("events.event_id") =>
        {
            Err(StoreError::DuplicateEvent(s.event_id.clone()))
        }
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Err(StoreError::Conflict {
                trajectory_id: s.trajectory_id.clone(),
                seq: s.seq as u64,
            })
        }
        other => other.map(|_| ()).map_err(StoreError::from),
    }
}

/// A step waiting for the writer, and where to acknowledge it.
struct Pending {
    step: PreparedStep,
    done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

/// Steps written in one transaction at most.
const MAX_BATCH: usize = 256;

/// The writer thread: takes every step waiting, writes them in one
/// transaction (a savepoint each, so one failing step fails alone), commits
/// once, then acknowledges each. Ends when the store is dropped.
fn write_loop(conn: Arc<Mutex<Connection>>, queue: std::sync::mpsc::Receiver<Pending>) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let results = write_batch(&mut conn.lock(), &batch);
        for (pending, result) in batch.into_iter().zip(results) {
            let _ = pending.done.send(result);
        }
    }
}

fn write_batch(conn: &mut Connection, batch: &[Pending]) -> Vec<Result<(), StoreError>> {
    let failed = |e: &StoreError| -> Vec<Result<(), StoreError>> {
        batch
            .iter()
            .map(|_| Err(StoreError::Unavailable(e.to_string())))
            .collect()
    };
    let mut tx = match conn.transaction() {
        Ok(tx) => tx,
        Err(e) => return failed(&e.into()),
    };
    let mut results = Vec::with_capacity(batch.len());
    for pending in batch {
        let result = tx
            .savepoint()
            .map_err(StoreError::from)
            .and_then(|mut savepoint| {
                let written = write_step(&savepoint, &pending.step);
                match written {
                    Ok(()) => savepoint.commit().map_err(StoreError::from),
                    Err(e) => {
                        savepoint.rollback()?;
                        Err(e)
                    }
                }
            });
        results.push(result);
    }
    match tx.commit() {
        Ok(()) => results,
        Err(e) => {
            let e = StoreError::from(e);
            results
                .into_iter()
                .map(|r| r.and(Err(StoreError::Unavailable(e.to_string()))))
                .collect()
        }
    }
}

const SUMMARY_COLUMNS: &str =
    "id, tenant, agent_id, session_id, status, created_at, updated_at, event_count, state";

/// A `trajectories` row as read, decoded in a second step so that SQL errors
/// and corrupt contents stay distinct.
struct SummaryRow {
    id: String,
    tenant: String,
    agent_id: String,
    session_id: Option<String>,
    status: String,
    created_at: String,
    updated_at: String,
    event_count: i64,
    state: String,
}

impl SummaryRow {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get(0)?,
            tenant: row.get(1)?,
            agent_id: row.get(2)?,
            session_id: row.get(3)?,
            status: row.get(4)?,
            created_at: row.get(5)?,
            updated_at: row.get(6)?,
            event_count: row.get(7)?,
            state: row.get(8)?,
        })
    }

    fn decode(self) -> Result<TrajectorySummary, StoreError> {
        Ok(TrajectorySummary {
            status: TrajectoryStatus::parse(&self.status)
                .ok_or_else(|| corrupt("trajectory status", &self.status))?,
            created_at: parse_time(&self.created_at)?,
            updated_at: parse_time(&self.updated_at)?,
            state: from_json("trajectory state", &self.state)?,
            id: self.id,
            tenant: self.tenant,
            agent_id: self.agent_id,
            session_id: self.session_id,
            event_count: self.event_count as u64,
        })
    }
}

impl SqliteStore {
    fn trajectory_sync(
        &self,
        conn: &Connection,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError> {
        conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS} FROM trajectories WHERE id = ?1"
        ))?
        .query_row([id], SummaryRow::read)
        .optional()?
        .map(SummaryRow::decode)
        .transpose()
    }

    fn events_sync(&self, conn: &Connection, id: &str) -> Result<Vec<StoredEvent>, StoreError> {
        let mut stmt = conn.prepare_cached(
            "SELECT e.seq, e.body, a.body FROM events e LEFT JOIN adjudications a ON a.event_id = e.event_id
             WHERE e.trajectory_id = ?1 ORDER BY e.seq",
        )?;
        let rows = stmt.query_map([id], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
            ))
        })?;
        rows.map(|row| {
            let (seq, event, verdict) = row?;
            Ok(StoredEvent {
                seq: seq as u64,
                event: from_json::<Event>("event", &event)?,
                adjudication: verdict.map(|v| from_json("adjudication", &v)).transpose()?,
            })
        })
        .collect()
    }

    fn list_trajectories_sync(
        &self,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        let after = cursor_parts(page)?;
        let (after_time, after_id) = (after.map(|a| a.0), after.map(|a| a.1));
        let limit = page.bounded_limit();
        let conn = self.conn.lock();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {SUMMARY_COLUMNS} FROM trajectories
             WHERE (?1 IS NULL OR agent_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR session_id = ?3)
               AND (?4 IS NULL OR (created_at, id) < (?4, ?5)) AND (?7 IS NULL OR tenant = ?7)
             ORDER BY created_at DESC, id DESC LIMIT ?6"
        ))?;
        let rows = stmt.query_map(
            params![
                filter.agent_id,
                filter.status.map(TrajectoryStatus::as_str),
                filter.session_id,
                after_time,
                after_id,
                (limit + 1) as i64,
                filter.tenant,
            ],
            SummaryRow::read,
        )?;
        let items = rows
            .map(|row| row?.decode())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(paginate(items, limit, |t| {
            format!("{}|{}", timestamp(&t.created_at), t.id)
        }))
    }

    fn list_adjudications_sync(
        &self,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        let after = cursor_parts(page)?;
        let (after_time, after_id) = (after.map(|a| a.0), after.map(|a| a.1));
        let limit = page.bounded_limit();
        let conn = self.conn.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT event_id, trajectory_id, agent_id, seq, recorded_at, kind, body FROM adjudications
             WHERE decision IN ('deny', 'escalate') AND (?1 IS NULL OR decision = ?1)
               AND (?2 IS NULL OR agent_id = ?2) AND (?3 IS NULL OR trajectory_id = ?3)
               AND (?4 IS NULL OR (recorded_at, event_id) < (?4, ?5)) AND (?7 IS NULL OR tenant = ?7)
             ORDER BY recorded_at DESC, event_id DESC LIMIT ?6",
        )?;
        let rows = stmt.query_map(
            params![
                filter.decision.map(Decision::as_str),
                filter.agent_id,
                filter.trajectory_id,
                after_time,
                after_id,
                (limit + 1) as i64,
                filter.tenant,
            ],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, String>(5)?,
                    row.get::<_, String>(6)?,
                ))
            },
        )?;
        let items = rows
            .map(|row| {
                let (event_id, trajectory_id, agent_id, seq, at, kind, body) = row?;
                Ok(AdjudicationRecord {
                    timestamp: parse_time(&at)?,
                    adjudication: from_json("adjudication", &body)?,
                    event_id,
                    trajectory_id,
                    agent_id,
                    seq: seq as u64,
                    kind,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", timestamp(&a.timestamp), a.event_id)
        }))
    }

    fn list_agents_sync(
        &self,
        tenant: Option<&str>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        let after = cursor_parts(page)?;
        let limit = page.bounded_limit();
        let conn = self.conn.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT a.tenant, a.body, a.first_seen, a.last_seen,
                    (SELECT COUNT(*) FROM trajectories t WHERE t.tenant = a.tenant AND t.agent_id = a.id)
             FROM agents a WHERE (?1 IS NULL OR a.tenant = ?1) AND (?2 IS NULL OR (a.tenant, a.id) > (?2, ?3))
             ORDER BY a.tenant, a.id LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            params![
                tenant,
                after.map(|a| a.0),
                after.map(|a| a.1),
                (limit + 1) as i64
            ],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                ))
            },
        )?;
        let items = rows
            .map(|row| {
                let (tenant, body, first, last, count) = row?;
                Ok(AgentRecord {
                    agent: from_json("agent", &body)?,
                    tenant,
                    first_seen: parse_time(&first)?,
                    last_seen: parse_time(&last)?,
                    trajectory_count: count as u64,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", a.tenant, a.agent.id)
        }))
    }

    fn analytics_sync(
        &self,
        tenant: Option<&str>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        let since = window.since.as_ref().map(timestamp);
        let until = window.until.as_ref().map(timestamp);
        let conn = self.conn.lock();
        let in_window = "(?1 IS NULL OR {col} >= ?1) AND (?2 IS NULL OR {col} < ?2) AND (?3 IS NULL OR tenant = ?3)";
        let count = |table: &str, col: &str, extra: &str| -> Result<u64, StoreError> {
            let sql = format!(
                "SELECT COUNT(*) FROM {table} WHERE {} {extra}",
                in_window.replace("{col}", col)
            );
            Ok(conn
                .prepare_cached(&sql)?
                .query_row(params![since, until, tenant], |r| r.get::<_, i64>(0))?
                as u64)
        };
        let mut analytics = Analytics {
            trajectories: count("trajectories", "created_at", "")?,
            events: count("events", "recorded_at", "")?,
            allowed: count("adjudications", "recorded_at", "AND decision = 'allow'")?,
            denied: count("adjudications", "recorded_at", "AND decision = 'deny'")?,
            escalated: count("adjudications", "recorded_at", "AND decision = 'escalate'")?,
            top_denying_policies: Vec::new(),
        };
        let sql = format!(
            "SELECT policy_id, COUNT(*) AS n FROM adjudication_policies WHERE {} GROUP BY policy_id ORDER BY n DESC, policy_id LIMIT 10",
            in_window.replace("{col}", "recorded_at")
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![since, until, tenant], |r| {
            Ok(PolicyCount {
                policy_id: r.get(0)?,
                count: r.get::<_, i64>(1)? as u64,
            })
        })?;
        analytics.top_denying_policies = rows.collect::<Result<_, _>>()?;
        Ok(analytics)
    }
}

#[async_trait]
impl TrajectoryStore for SqliteStore {
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError> {
        let (done, acknowledged) = tokio::sync::oneshot::channel();
        let pending = Pending {
            step: PreparedStep::new(&step),
            done,
        };
        self.writes
            .send(pending)
            .map_err(|_| StoreError::Unavailable("the store's writer has stopped".into()))?;
        acknowledged.await.map_err(|_| {
            StoreError::Unavailable("the store's writer stopped before committing".into())
        })?
    }

    async fn trajectory(&self, id: &str) -> Result<Option<TrajectorySummary>, StoreError> {
        let conn = self.conn.lock();
        self.trajectory_sync(&conn, id)
    }

    async fn trajectory_with_events(
        &self,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        let conn = self.conn.lock();
        let Some(summary) = self.trajectory_sync(&conn, id)? else {
            return Ok(None);
        };
        let events = self.events_sync(&conn, id)?;
        Ok(Some(TrajectoryDetail { summary, events }))
    }

    async fn put_grant(
        &self,
        tenant: &str,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(grant).map_err(|e| corrupt("grant", e))?;
        let conn = self.conn.lock();
        conn.prepare_cached(
            "INSERT INTO grants (tenant, agent_id, shape, granted_at, body) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (tenant, agent_id, shape) DO UPDATE SET granted_at = excluded.granted_at, body = excluded.body",
        )?
        .execute(params![
            tenant,
            agent_id,
            grant.shape.key(),
            timestamp(&grant.granted_at),
            body
        ])?;
        Ok(())
    }

    async fn grants(&self, tenant: &str, agent_id: &str) -> Result<Vec<Grant>, StoreError> {
        let conn = self.conn.lock();
        let mut statement = conn.prepare_cached(
            "SELECT body FROM grants WHERE tenant = ?1 AND agent_id = ?2 ORDER BY granted_at, shape",
        )?;
        let bodies = statement
            .query_map([tenant, agent_id], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        bodies.iter().map(|b| from_json("grant", b)).collect()
    }

    async fn agent(&self, tenant: &str, id: &str) -> Result<Option<Agent>, StoreError> {
        let conn = self.conn.lock();
        let body: Option<String> = conn
            .prepare_cached("SELECT body FROM agents WHERE tenant = ?1 AND id = ?2")?
            .query_row([tenant, id], |r| r.get(0))
            .optional()?;
        body.map(|b| from_json("agent", &b)).transpose()
    }

    async fn list_agents(
        &self,
        tenant: Option<&str>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        self.list_agents_sync(tenant, page)
    }

    async fn list_trajectories(
        &self,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        self.list_trajectories_sync(filter, page)
    }

    async fn list_adjudications(
        &self,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        self.list_adjudications_sync(filter, page)
    }

    async fn analytics(
        &self,
        tenant: Option<&str>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        self.analytics_sync(tenant, window)
    }
}
