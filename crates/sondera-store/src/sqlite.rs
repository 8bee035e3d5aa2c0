use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parking_lot::Mutex;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::de::DeserializeOwned;
use sondera_model::{ActionShape, Agent, Decision, Event, Grant};

use crate::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, ApprovalFilter, ApprovalRecord,
    Approvals, EventLog, Grants, Page, PageRequest, PolicyCount, Records, StepRecord, StoreError,
    StoredEvent, TenantId, Tenants, TimeWindow, TrajectoryDetail, TrajectoryFilter,
    TrajectoryStatus, TrajectorySummary,
};

/// The embedded store: SQLite in one file (WAL journal, a commit is synced
/// before it is acknowledged) or entirely in memory.
///
/// Writes go to one writer thread that commits waiting steps together. A
/// file store reads on a connection of its own, so a query never waits
/// behind a commit's sync; each read is a short indexed statement whose cost
/// does not depend on how much is stored.
#[derive(Debug)]
pub struct SqliteStore {
    reader: Arc<Mutex<Connection>>,
    /// The writer thread's connection, which pruning borrows between its
    /// batches: one writer, so nothing waits on SQLite's busy handler.
    writer: Arc<Mutex<Connection>>,
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

/// Each connection's page cache, in KiB (a negative `cache_size`): enough to
/// keep the indexes' recently written pages as the store grows, where
/// SQLite's default of 2 MiB sends most inserts to the operating system
/// for a page.
const CACHE_KIB: i64 = -32 * 1024;

/// The database file inside a data directory.
pub(crate) const DATABASE_FILE: &str = "sondera.db";

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
        let open = || -> rusqlite::Result<Connection> {
            let conn = Connection::open(path)?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "FULL")?;
            conn.pragma_update(None, "cache_size", CACHE_KIB)?;
            Ok(conn)
        };
        let writer = open().map_err(open_error)?;
        prepare(&writer)?;
        let reader = open().map_err(open_error)?;
        prepare(&reader)?;
        Self::start(
            writer,
            Arc::new(Mutex::new(reader)),
            Some(path.to_path_buf()),
        )
    }

    /// A store that lives and dies with this value. Its one connection both
    /// reads and writes, since an in-memory database is private to it.
    pub fn in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory()?;
        prepare(&conn)?;
        let shared = Arc::new(Mutex::new(conn));
        let (writes, queue) = std::sync::mpsc::channel();
        spawn_writer(shared.clone(), queue, None)?;
        Ok(Self {
            reader: shared.clone(),
            writer: shared,
            path: None,
            writes,
        })
    }

    fn start(
        writer: Connection,
        reader: Arc<Mutex<Connection>>,
        path: Option<PathBuf>,
    ) -> Result<Self, StoreError> {
        let (writes, queue) = std::sync::mpsc::channel();
        let writer = Arc::new(Mutex::new(writer));
        spawn_writer(writer.clone(), queue, path.as_deref())?;
        Ok(Self {
            reader,
            writer,
            path,
            writes,
        })
    }

    /// The database file, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

use crate::sql::{self, Dialect};
use crate::types::{PreparedStep, cursor_parts, cursor_time as timestamp, paginate};

fn spawn_writer(
    conn: Arc<Mutex<Connection>>,
    queue: std::sync::mpsc::Receiver<Pending>,
    path: Option<&Path>,
) -> Result<(), StoreError> {
    std::thread::Builder::new()
        .name("sondera-sqlite-writer".into())
        .spawn(move || write_loop(conn, queue))
        .map(|_| ())
        .map_err(|e| StoreError::Open {
            path: path.map_or(":memory:".into(), |p| p.display().to_string()),
            message: format!("cannot start the writer thread: {e}"),
        })
}

/// Settings every connection needs, then the schema brought up to date.
fn prepare(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    migrate(conn)
}

/// Applies what [`sql::pending`] says the database needs, each migration in
/// a transaction with its version, so a crash leaves a known version.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let location = conn.path().unwrap_or(":memory:").to_string();
    let mut version: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'trajectories'",
        [],
        |r| r.get(0),
    )?;
    if version == 0 && tables == 1 {
        conn.execute_batch(&format!(
            "BEGIN; {} PRAGMA user_version = 1; COMMIT;",
            crate::migrations::SQLITE_BEFORE_VERSIONS
        ))?;
        version = 1;
    }
    for (next, statements) in sql::pending(version, Dialect::Sqlite, &location)? {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let applied = (|| -> rusqlite::Result<()> {
            // Another process opening the same file may have migrated first.
            let now: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if now < next {
                conn.execute_batch(&format!("{statements} PRAGMA user_version = {next};"))?;
            }
            conn.execute_batch("COMMIT")
        })();
        if let Err(e) = applied {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e.into());
        }
    }
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
    let tenant = s.tenant.as_str();
    if let Some((agent, session_id)) = &s.started {
        tx.prepare_cached(sql::UPSERT_AGENT)?
            .execute(params![tenant, s.agent_id, agent, at])?;
        let created = tx.prepare_cached(sql::CREATE_TRAJECTORY)?.execute(params![
            tenant,
            s.trajectory_id,
            s.agent_id,
            session_id,
            at
        ])?;
        if created == 0 {
            return Err(StoreError::DuplicateTrajectory(s.trajectory_id.clone()));
        }
    }
    insert_event(tx, s, &at)?;
    if let Some((decision, body, blocking, shadow)) = &s.verdict {
        tx.prepare_cached(sql::INSERT_ADJUDICATION)?
            .execute(params![
                tenant,
                s.event_id,
                s.trajectory_id,
                s.agent_id,
                s.seq,
                s.kind,
                decision,
                at,
                body
            ])?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO adjudication_policies (event_id, tenant, policy_id, recorded_at, shadow) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let counted = blocking
            .iter()
            .map(|p| (p, 0))
            .chain(shadow.iter().map(|p| (p, 1)));
        for (policy, is_shadow) in counted {
            insert.execute(params![s.event_id, tenant, policy, at, is_shadow])?;
        }
    }
    let updated = tx.prepare_cached(sql::UPDATE_TRAJECTORY)?.execute(params![
        s.status,
        at,
        s.seq + 1,
        s.state,
        tenant,
        s.trajectory_id
    ])?;
    if updated == 0 {
        return Err(StoreError::UnknownTrajectory(s.trajectory_id.clone()));
    }
    Ok(())
}

fn insert_event(tx: &Connection, s: &PreparedStep, at: &str) -> Result<(), StoreError> {
    let result = tx.prepare_cached(sql::INSERT_EVENT)?.execute(params![
        s.tenant.as_str(),
        s.trajectory_id,
        s.seq,
        s.event_id,
        at,
        s.event
    ]);
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
            tenant: tenant_of(&self.tenant)?,
            agent_id: self.agent_id,
            session_id: self.session_id,
            event_count: self.event_count as u64,
        })
    }
}

fn tenant_of(text: &str) -> Result<TenantId, StoreError> {
    TenantId::new(text).map_err(|e| corrupt("tenant", e))
}

fn trajectory_row(
    conn: &Connection,
    tenant: &TenantId,
    id: &str,
) -> Result<Option<TrajectorySummary>, StoreError> {
    conn.prepare_cached(sql::SELECT_TRAJECTORY)?
        .query_row([tenant.as_str(), id], SummaryRow::read)
        .optional()?
        .map(SummaryRow::decode)
        .transpose()
}

fn event_rows(
    conn: &Connection,
    tenant: &TenantId,
    id: &str,
) -> Result<Vec<StoredEvent>, StoreError> {
    let mut stmt = conn.prepare_cached(sql::SELECT_EVENTS)?;
    let rows = stmt.query_map([tenant.as_str(), id], |row| {
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

impl SqliteStore {
    fn list_trajectories_sync(
        &self,
        tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        let after = cursor_parts(page)?;
        let (after_time, after_id) = (after.map(|a| a.0), after.map(|a| a.1));
        let limit = page.bounded_limit();
        let conn = self.reader.lock();
        let mut stmt = conn.prepare_cached(concat!(
            "SELECT ",
            sql::summary_columns!(),
            " FROM trajectories t
             WHERE (?1 IS NULL OR agent_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR session_id = ?3)
               AND (?4 IS NULL OR (created_at, id) < (?4, ?5)) AND (?7 IS NULL OR tenant = ?7)
               AND (?8 IS NULL
                    OR (?8 = 'deny' AND coalesce(json_extract(state, '$.denial_count'), 0) > 0)
                    OR (?8 = 'escalate' AND coalesce(json_extract(state, '$.escalation_count'), 0) > 0)
                    OR (?8 = 'allow' AND coalesce(json_extract(state, '$.denial_count'), 0) = 0
                        AND coalesce(json_extract(state, '$.escalation_count'), 0) = 0))
               AND (?9 IS NULL OR updated_at >= ?9) AND (?10 IS NULL OR created_at < ?10)
               AND (?11 IS NULL OR (tenant, id) IN (
                    SELECT a.tenant, a.trajectory_id FROM adjudication_policies p
                    JOIN adjudications a ON a.tenant = p.tenant AND a.event_id = p.event_id
                    WHERE p.policy_id = ?11))
               AND (?12 IS NULL OR instr(lower(id), lower(?12)) > 0 OR instr(lower(agent_id), lower(?12)) > 0
                    OR instr(lower(coalesce(session_id, '')), lower(?12)) > 0
                    OR EXISTS (SELECT 1 FROM events e WHERE e.tenant = t.tenant AND e.trajectory_id = t.id
                               AND instr(lower(e.body), lower(?12)) > 0)
                    OR EXISTS (SELECT 1 FROM adjudications a WHERE a.tenant = t.tenant AND a.trajectory_id = t.id
                               AND instr(lower(a.body), lower(?12)) > 0))
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
                tenants.only().map(TenantId::as_str),
                filter.decision.map(Decision::as_str),
                filter.active.since.as_ref().map(timestamp),
                filter.active.until.as_ref().map(timestamp),
                filter.policy_id,
                filter.text,
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
        tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        let after = cursor_parts(page)?;
        let (after_time, after_id) = (after.map(|a| a.0), after.map(|a| a.1));
        let limit = page.bounded_limit();
        let conn = self.reader.lock();
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
                tenants.only().map(TenantId::as_str),
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
        tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        let after = cursor_parts(page)?;
        let limit = page.bounded_limit();
        let conn = self.reader.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT a.tenant, a.body, a.first_seen, a.last_seen, COUNT(t.id),
                    COALESCE(SUM(json_extract(t.state, '$.step_count')), 0),
                    COALESCE(SUM(json_extract(t.state, '$.denial_count')), 0),
                    COALESCE(SUM(json_extract(t.state, '$.escalation_count')), 0)
             FROM agents a LEFT JOIN trajectories t ON t.tenant = a.tenant AND t.agent_id = a.id
             WHERE (?1 IS NULL OR a.tenant = ?1) AND (?2 IS NULL OR (a.tenant, a.id) > (?2, ?3))
             GROUP BY a.tenant, a.id ORDER BY a.tenant, a.id LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            params![
                tenants.only().map(TenantId::as_str),
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
                    [4, 5, 6, 7].map(|i| row.get::<_, i64>(i)),
                ))
            },
        )?;
        let items = rows
            .map(|row| {
                let (tenant, body, first, last, counts) = row?;
                let [count, steps, denied, escalated] = counts.map(|c| c.map_or(0, |c| c as u64));
                Ok(AgentRecord {
                    agent: from_json("agent", &body)?,
                    tenant: tenant_of(&tenant)?,
                    first_seen: parse_time(&first)?,
                    last_seen: parse_time(&last)?,
                    trajectory_count: count,
                    step_count: steps,
                    denial_count: denied,
                    escalation_count: escalated,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", a.tenant, a.agent.id)
        }))
    }

    fn analytics_sync(
        &self,
        tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        let since = window.since.as_ref().map(timestamp);
        let until = window.until.as_ref().map(timestamp);
        let tenant = tenants.only().map(TenantId::as_str);
        let conn = self.reader.lock();
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
            ..Analytics::default()
        };
        let policy_counts = |shadow: i64| -> Result<Vec<PolicyCount>, StoreError> {
            let sql = format!(
                "SELECT policy_id, COUNT(*) AS n FROM adjudication_policies WHERE {} AND shadow = ?4
                 GROUP BY policy_id ORDER BY n DESC, policy_id LIMIT {}",
                in_window.replace("{col}", "recorded_at"),
                crate::POLICY_COUNTS
            );
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params![since, until, tenant, shadow], |r| {
                Ok(PolicyCount {
                    policy_id: r.get(0)?,
                    count: r.get::<_, i64>(1)? as u64,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        };
        analytics.top_denying_policies = policy_counts(0)?;
        analytics.shadow_matches = policy_counts(1)?;
        Ok(analytics)
    }
}

#[async_trait]
impl EventLog for SqliteStore {
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
}

#[async_trait]
impl Records for SqliteStore {
    async fn trajectory(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError> {
        trajectory_row(&self.reader.lock(), tenant, id)
    }

    async fn trajectory_with_events(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        let mut conn = self.reader.lock();
        // One read transaction, so the summary and the events agree.
        let tx = conn.transaction()?;
        let Some(summary) = trajectory_row(&tx, tenant, id)? else {
            return Ok(None);
        };
        let events = event_rows(&tx, tenant, id)?;
        Ok(Some(TrajectoryDetail { summary, events }))
    }

    async fn agent(&self, tenant: &TenantId, id: &str) -> Result<Option<Agent>, StoreError> {
        let conn = self.reader.lock();
        let body: Option<String> = conn
            .prepare_cached(sql::SELECT_AGENT)?
            .query_row([tenant.as_str(), id], |r| r.get(0))
            .optional()?;
        body.map(|b| from_json("agent", &b)).transpose()
    }

    async fn list_agents(
        &self,
        tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        self.list_agents_sync(tenants, page)
    }

    async fn list_trajectories(
        &self,
        tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        self.list_trajectories_sync(tenants, filter, page)
    }

    async fn list_adjudications(
        &self,
        tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        self.list_adjudications_sync(tenants, filter, page)
    }

    async fn analytics(
        &self,
        tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        self.analytics_sync(tenants, window)
    }

    async fn approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let conn = self.reader.lock();
        let body: Option<String> = conn
            .prepare_cached(sql::SELECT_APPROVAL)?
            .query_row([tenant.as_str(), id], |r| r.get(0))
            .optional()?;
        body.map(|b| from_json("approval", &b)).transpose()
    }

    async fn list_approvals(
        &self,
        tenants: Tenants<'_>,
        filter: &ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, StoreError> {
        let after = cursor_parts(page)?;
        let limit = page.bounded_limit();
        let conn = self.reader.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT body FROM approvals
             WHERE (?1 IS NULL OR tenant = ?1) AND (?2 IS NULL OR status = ?2)
               AND (?3 IS NULL OR agent_id = ?3) AND (?4 IS NULL OR trajectory_id = ?4)
               AND (?5 IS NULL OR (created_at, id) < (?5, ?6))
             ORDER BY created_at DESC, id DESC LIMIT ?7",
        )?;
        let bodies = stmt
            .query_map(
                params![
                    tenants.only().map(TenantId::as_str),
                    filter.status.map(|s| s.as_str()),
                    filter.agent_id,
                    filter.trajectory_id,
                    after.map(|a| a.0),
                    after.map(|a| a.1),
                    (limit + 1) as i64,
                ],
                |row| row.get::<_, String>(0),
            )?
            .collect::<Result<Vec<_>, _>>()?;
        let items = bodies
            .iter()
            .map(|b| from_json("approval", b))
            .collect::<Result<Vec<ApprovalRecord>, _>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", timestamp(&a.created_at), a.id)
        }))
    }
}

#[async_trait]
impl crate::Retention for SqliteStore {
    async fn tenants(&self) -> Result<Vec<TenantId>, StoreError> {
        let conn = self.reader.lock();
        let mut statement = conn.prepare_cached(sql::SELECT_TENANTS)?;
        let names = statement
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        names
            .iter()
            .map(|n| TenantId::new(n).map_err(|e| corrupt("tenant", e)))
            .collect()
    }

    async fn nth_newest_ended(
        &self,
        tenant: &TenantId,
        n: u64,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let offset = i64::try_from(n.saturating_sub(1)).unwrap_or(i64::MAX);
        let conn = self.reader.lock();
        let at: Option<String> = conn
            .prepare_cached(sql::SELECT_NTH_NEWEST_ENDED)?
            .query_row(params![tenant.as_str(), offset], |r| r.get(0))
            .optional()?;
        at.as_deref().map(parse_time).transpose()
    }

    async fn prunable(
        &self,
        tenant: &TenantId,
        cutoff: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::Prunable>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let conn = self.reader.lock();
        let mut statement = conn.prepare_cached(sql::SELECT_PRUNABLE)?;
        let rows = statement
            .query_map(params![tenant.as_str(), timestamp(&cutoff), limit], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })?;
        rows.map(|row| {
            let (id, events) = row?;
            Ok(crate::Prunable {
                id,
                events: events.max(0) as u64,
            })
        })
        .collect()
    }

    async fn prune(&self, tenant: &TenantId, ids: &[String]) -> Result<crate::Pruned, StoreError> {
        let mut conn = self.writer.lock();
        let tx = conn.transaction()?;
        let mut pruned = crate::Pruned::default();
        for id in ids {
            let events: Option<i64> = tx
                .prepare_cached(sql::DELETE_PRUNED_TRAJECTORY)?
                .query_row(params![tenant.as_str(), id], |r| r.get(0))
                .optional()?;
            let Some(events) = events else { continue };
            for statement in sql::DELETE_PRUNED {
                tx.prepare_cached(statement)?
                    .execute(params![tenant.as_str(), id])?;
            }
            pruned.trajectories += 1;
            pruned.events += events.max(0) as u64;
        }
        tx.commit()?;
        Ok(pruned)
    }
}

#[async_trait]
impl crate::TokenRecords for SqliteStore {
    async fn put_token(&self, token: &crate::StoredToken) -> Result<bool, StoreError> {
        let body = serde_json::to_string(token).map_err(|e| corrupt("token", e))?;
        let conn = self.reader.lock();
        let inserted = conn
            .prepare_cached(sql::INSERT_TOKEN)?
            .execute(params![token.hash, body])?;
        Ok(inserted > 0)
    }

    async fn tokens(&self) -> Result<Vec<crate::StoredToken>, StoreError> {
        let conn = self.reader.lock();
        let mut statement = conn.prepare_cached(sql::SELECT_TOKENS)?;
        let bodies = statement
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        bodies.iter().map(|b| from_json("token", b)).collect()
    }

    async fn revoke_token(&self, hash: &str) -> Result<Option<crate::StoredToken>, StoreError> {
        let conn = self.reader.lock();
        let body: Option<String> = conn
            .prepare_cached(sql::DELETE_TOKEN)?
            .query_row([hash], |r| r.get(0))
            .optional()?;
        body.map(|b| from_json("token", &b)).transpose()
    }
}

#[async_trait]
impl crate::PolicyRevisions for SqliteStore {
    async fn push_policies(
        &self,
        revision: &crate::PolicyRevision,
        sources: &crate::PolicySources,
        current: &crate::CurrentPolicies,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(revision).map_err(|e| corrupt("policy revision", e))?;
        let sources = serde_json::to_string(sources).map_err(|e| corrupt("policy sources", e))?;
        let current_body =
            serde_json::to_string(current).map_err(|e| corrupt("current policies", e))?;
        let mut conn = self.reader.lock();
        let tx = conn.transaction()?;
        tx.prepare_cached(sql::INSERT_POLICY_REVISION)?
            .execute(params![
                revision.revision,
                timestamp(&revision.pushed_at),
                body,
                sources
            ])?;
        tx.prepare_cached(sql::SET_CURRENT_POLICIES)?
            .execute(params![current.revision, current_body])?;
        tx.commit()?;
        Ok(())
    }

    async fn policy_revisions(
        &self,
        limit: usize,
    ) -> Result<Vec<crate::PolicyRevision>, StoreError> {
        let conn = self.reader.lock();
        let mut statement = conn.prepare_cached(sql::SELECT_POLICY_REVISIONS)?;
        let bodies = statement
            .query_map([limit as i64], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        bodies
            .iter()
            .map(|b| from_json("policy revision", b))
            .collect()
    }

    async fn policy_revision(
        &self,
        revision: &str,
    ) -> Result<Option<(crate::PolicyRevision, crate::PolicySources)>, StoreError> {
        let conn = self.reader.lock();
        let row: Option<(String, String)> = conn
            .prepare_cached(sql::SELECT_POLICY_REVISION)?
            .query_row([revision], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        row.map(|(body, sources)| {
            Ok((
                from_json("policy revision", &body)?,
                from_json("policy sources", &sources)?,
            ))
        })
        .transpose()
    }

    async fn set_current_policies(
        &self,
        current: &crate::CurrentPolicies,
    ) -> Result<bool, StoreError> {
        let body = serde_json::to_string(current).map_err(|e| corrupt("current policies", e))?;
        let conn = self.reader.lock();
        let changed = conn
            .prepare_cached(sql::SET_CURRENT_POLICIES)?
            .execute(params![current.revision, body])?;
        Ok(changed > 0)
    }

    async fn current_policies(&self) -> Result<Option<crate::CurrentPolicies>, StoreError> {
        let conn = self.reader.lock();
        let body: Option<String> = conn
            .prepare_cached(sql::SELECT_CURRENT_POLICIES)?
            .query_row([], |r| r.get(0))
            .optional()?;
        body.map(|b| from_json("current policies", &b)).transpose()
    }
}

#[async_trait]
impl Grants for SqliteStore {
    async fn put_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(grant).map_err(|e| corrupt("grant", e))?;
        // A grant is rare and small: written on the reading connection, which
        // waits for the writer's lock like any other writer.
        let conn = self.reader.lock();
        conn.prepare_cached(sql::UPSERT_GRANT)?.execute(params![
            tenant.as_str(),
            agent_id,
            grant.shape.key(),
            timestamp(&grant.granted_at),
            body
        ])?;
        Ok(())
    }

    async fn grants(&self, tenant: &TenantId, agent_id: &str) -> Result<Vec<Grant>, StoreError> {
        let conn = self.reader.lock();
        let mut statement = conn.prepare_cached(sql::SELECT_GRANTS)?;
        let bodies = statement
            .query_map([tenant.as_str(), agent_id], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        bodies.iter().map(|b| from_json("grant", b)).collect()
    }

    async fn revoke_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        shape: &ActionShape,
    ) -> Result<Option<Grant>, StoreError> {
        let conn = self.reader.lock();
        let body: Option<String> = conn
            .prepare_cached(sql::DELETE_GRANT)?
            .query_row(params![tenant.as_str(), agent_id, shape.key()], |r| {
                r.get(0)
            })
            .optional()?;
        body.map(|b| from_json("grant", &b)).transpose()
    }
}

#[async_trait]
impl Approvals for SqliteStore {
    async fn open_approval(&self, approval: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
        let tenant = approval.tenant.as_str();
        // Approvals are rare and small: written on the reading connection,
        // like grants.
        let conn = self.reader.lock();
        conn.prepare_cached(sql::INSERT_APPROVAL)?.execute(params![
            tenant,
            approval.id,
            approval.event_id,
            approval.agent_id,
            approval.trajectory_id,
            timestamp(&approval.created_at),
            timestamp(&approval.expires_at),
            approval.body(),
        ])?;
        let body: String = conn
            .prepare_cached(sql::SELECT_APPROVAL_FOR_EVENT)?
            .query_row([tenant, approval.event_id.as_str()], |r| r.get(0))?;
        from_json("approval", &body)
    }

    async fn settle_approval(&self, settled: &ApprovalRecord) -> Result<bool, StoreError> {
        let Some(at) = settled.state.settled_at() else {
            return Ok(false);
        };
        let deciding = settled.state.status() == crate::ApprovalStatus::Decided;
        let conn = self.reader.lock();
        let changed = conn.prepare_cached(sql::SETTLE_APPROVAL)?.execute(params![
            settled.state.status().as_str(),
            settled.body(),
            settled.tenant.as_str(),
            settled.id,
            timestamp(&at),
            deciding,
        ])?;
        Ok(changed == 1)
    }

    async fn overdue_approvals(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let conn = self.reader.lock();
        let mut stmt = conn.prepare_cached(sql::SELECT_OVERDUE_APPROVALS)?;
        let bodies = stmt
            .query_map(params![timestamp(&now), limit as i64], |r| {
                r.get::<_, String>(0)
            })?
            .collect::<Result<Vec<_>, _>>()?;
        bodies.iter().map(|b| from_json("approval", b)).collect()
    }

    async fn pending_approvals(&self, tenant: &TenantId) -> Result<u64, StoreError> {
        let conn = self.reader.lock();
        let count: i64 = conn
            .prepare_cached(sql::COUNT_PENDING_APPROVALS)?
            .query_row([tenant.as_str()], |r| r.get(0))?;
        Ok(count as u64)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use crate::sql;

    /// SQLite numbers `$N` by first appearance; the shared statements rely on
    /// that numbering matching PostgreSQL's.
    #[test]
    fn shared_statements_number_their_parameters_in_order() {
        let conn = Connection::open_in_memory().unwrap();
        super::prepare(&conn).unwrap();
        for statement in sql::SHARED {
            let prepared = conn.prepare(statement).unwrap();
            for i in 1..=prepared.parameter_count() {
                assert_eq!(
                    prepared.parameter_name(i),
                    Some(format!("${i}").as_str()),
                    "{statement}"
                );
            }
        }
    }
}
