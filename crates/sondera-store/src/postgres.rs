//! PostgreSQL: the store for several server processes sharing one database.
//!
//! Writes go through group commit: appends queue to a few writer tasks,
//! each of which takes every step waiting, writes them in one transaction
//! (a savepoint per step, so a step that conflicts fails alone) and commits
//! once. Under concurrency many steps share one WAL flush; every step is
//! acknowledged only after the commit that made it durable.
//!
//! The event position `(trajectory_id, seq)` is the primary key of
//! `events`, so two processes appending to one trajectory cannot both
//! succeed at the same position: the loser gets [`StoreError::Conflict`]
//! and re-judges against what the winner recorded.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Pool};
use sondera_model::{ActionShape, Agent, Decision, Grant};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;

use crate::sql::{self, Dialect};
use crate::types::{PreparedStep, cursor_parts, paginate};
use crate::{
    AdjudicationFilter, AdjudicationRecord, AgentRecord, Analytics, ApprovalFilter, ApprovalRecord,
    Approvals, EventLog, Grants, Page, PageRequest, PolicyCount, Records, StepRecord, StoreError,
    StoredEvent, TenantId, Tenants, TimeWindow, TrajectoryDetail, TrajectoryFilter,
    TrajectoryStatus, TrajectorySummary,
};

/// Steps written in one transaction at most.
const MAX_BATCH: usize = 128;
/// Writer tasks (each with its own connection) per store.
const WRITERS: usize = 4;
/// Connections in the pool: writers plus readers.
const POOL_SIZE: usize = 16;

struct Pending {
    step: PreparedStep,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// Trajectories in PostgreSQL, shared by any number of processes.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    writes: mpsc::Sender<Pending>,
    /// Where it connects, password included, for the listening connection.
    url: Arc<str>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("url", &redact(&self.url))
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("event_id", &self.step.event_id)
            .finish()
    }
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        what: what.to_string(),
        message: e.to_string(),
    })
}

fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => StoreError::Unavailable(describe(&e)),
        e => StoreError::Unavailable(e.to_string()),
    }
}

/// What the server or the connection said: tokio-postgres' own message is
/// only "db error" or "error connecting", with the cause behind it.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} (SQLSTATE {})", db.message(), db.code().code());
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`,
    /// with `sslmode` and `sslrootcert` as libpq reads them: see
    /// `postgres_tls`), applies pending migrations and starts the writers. Call it within a
    /// Tokio runtime, which then drives the writers.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let open = |message: String| StoreError::Open {
            path: redact(url),
            message,
        };
        let target = crate::postgres_tls::target(url).map_err(open)?;
        let manager = deadpool_postgres::Manager::from_config(
            target.config,
            target.tls,
            deadpool_postgres::ManagerConfig {
                recycling_method: deadpool_postgres::RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|e| open(e.to_string()))?;
        migrate(&pool, &redact(url)).await.map_err(|e| match e {
            StoreError::Open { .. } => e,
            e => open(e.to_string()),
        })?;
        let (writes, queue) = mpsc::channel(MAX_BATCH * WRITERS * 4);
        let queue = Arc::new(Mutex::new(queue));
        for _ in 0..WRITERS {
            tokio::spawn(write_loop(pool.clone(), queue.clone()));
        }
        Ok(Self {
            pool,
            writes,
            url: url.into(),
        })
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// Applies the migrations not yet applied, one process at a time.
async fn migrate(pool: &Pool, location: &str) -> Result<(), StoreError> {
    let mut client = pool.get().await.map_err(pool_error)?;
    let tx = client.transaction().await?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7315100001);
         CREATE TABLE IF NOT EXISTS sondera_schema (version INTEGER NOT NULL)",
    )
    .await?;
    let applied: i32 = tx
        .query_one("SELECT COALESCE(MAX(version), 0) FROM sondera_schema", &[])
        .await?
        .get(0);
    for (version, statements) in sql::pending(applied as u32, Dialect::Postgres, location)? {
        tx.batch_execute(statements).await?;
        tx.execute(
            "INSERT INTO sondera_schema (version) VALUES ($1)",
            &[&(version as i32)],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// One writer: takes every step waiting (up to a batch), writes them in one
/// transaction, and acknowledges each after the commit.
async fn write_loop(pool: Pool, queue: Arc<Mutex<mpsc::Receiver<Pending>>>) {
    loop {
        let batch = {
            let mut queue = queue.lock().await;
            let Some(first) = queue.recv().await else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            batch
        };
        let results = write_batch(&pool, &batch).await;
        for (pending, result) in batch.into_iter().zip(results) {
            let _ = pending.done.send(result);
        }
    }
}

async fn write_batch(pool: &Pool, batch: &[Pending]) -> Vec<Result<(), StoreError>> {
    let failed = |e: StoreError| batch.iter().map(|_| Err(clone_error(&e))).collect();
    let mut client = match pool.get().await {
        Ok(client) => client,
        Err(e) => return failed(pool_error(e)),
    };
    let tx = match client.transaction().await {
        Ok(tx) => tx,
        Err(e) => return failed(e.into()),
    };
    let alone = batch.len() == 1;
    let mut results = Vec::with_capacity(batch.len());
    for pending in batch {
        let result = if alone {
            write_step(&tx, &pending.step).await
        } else {
            write_isolated(&tx, &pending.step).await
        };
        results.push(result);
    }
    if alone && results[0].is_err() {
        return results;
    }
    match tx.commit().await {
        Ok(()) => results,
        Err(e) => {
            let e = StoreError::from(e);
            results
                .into_iter()
                .map(|r| r.and(Err(clone_error(&e))))
                .collect()
        }
    }
}

/// A step inside a savepoint, so its failure leaves the others standing.
async fn write_isolated(
    tx: &deadpool_postgres::Transaction<'_>,
    step: &PreparedStep,
) -> Result<(), StoreError> {
    tx.batch_execute("SAVEPOINT step").await?;
    match write_step(tx, step).await {
        Ok(()) => {
            tx.batch_execute("RELEASE SAVEPOINT step").await?;
            Ok(())
        }
        Err(e) => {
            tx.batch_execute("ROLLBACK TO SAVEPOINT step").await?;
            Err(e)
        }
    }
}

fn clone_error(e: &StoreError) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

async fn write_step(
    tx: &deadpool_postgres::Transaction<'_>,
    s: &PreparedStep,
) -> Result<(), StoreError> {
    let tenant = s.tenant.as_str();
    if let Some((agent, session_id)) = &s.started {
        let upsert = tx.prepare_cached(sql::UPSERT_AGENT).await?;
        tx.execute(&upsert, &[&tenant, &s.agent_id, agent, &s.at])
            .await?;
        let create = tx.prepare_cached(sql::CREATE_TRAJECTORY).await?;
        let created = tx
            .execute(
                &create,
                &[&tenant, &s.trajectory_id, &s.agent_id, session_id, &s.at],
            )
            .await?;
        if created == 0 {
            return Err(StoreError::DuplicateTrajectory(s.trajectory_id.clone()));
        }
    }
    let insert_event = tx.prepare_cached(sql::INSERT_EVENT).await?;
    tx.execute(
        &insert_event,
        &[
            &tenant,
            &s.trajectory_id,
            &s.seq,
            &s.event_id,
            &s.at,
            &s.event,
        ],
    )
    .await
    .map_err(|e| match e.as_db_error() {
        Some(db) if *db.code() == SqlState::UNIQUE_VIOLATION => {
            if db.constraint() == Some(sql::EVENT_ID_CONSTRAINT) {
                StoreError::DuplicateEvent(s.event_id.clone())
            } else {
                StoreError::Conflict {
                    trajectory_id: s.trajectory_id.clone(),
                    seq: s.seq as u64,
                }
            }
        }
        _ => e.into(),
    })?;
    if let Some((decision, body, blocking, shadow)) = &s.verdict {
        let insert = tx.prepare_cached(sql::INSERT_ADJUDICATION).await?;
        tx.execute(
            &insert,
            &[
                &tenant,
                &s.event_id,
                &s.trajectory_id,
                &s.agent_id,
                &s.seq,
                &s.kind,
                decision,
                &s.at,
                body,
            ],
        )
        .await?;
        for (policies, is_shadow) in [(blocking, 0i32), (shadow, 1)] {
            if policies.is_empty() {
                continue;
            }
            let insert = tx
                .prepare_cached(
                    "INSERT INTO adjudication_policies (event_id, tenant, policy_id, recorded_at, shadow)
                     SELECT $1, $2, unnest($3::text[]), $4, $5",
                )
                .await?;
            tx.execute(
                &insert,
                &[&s.event_id, &tenant, policies, &s.at, &is_shadow],
            )
            .await?;
        }
    }
    let update = tx.prepare_cached(sql::UPDATE_TRAJECTORY).await?;
    let updated = tx
        .execute(
            &update,
            &[
                &s.status,
                &s.at,
                &(s.seq + 1),
                &s.state,
                &tenant,
                &s.trajectory_id,
            ],
        )
        .await?;
    if updated == 0 {
        return Err(StoreError::UnknownTrajectory(s.trajectory_id.clone()));
    }
    Ok(())
}

fn summary(row: &Row) -> Result<TrajectorySummary, StoreError> {
    let status: String = row.get(4);
    Ok(TrajectorySummary {
        id: row.get(0),
        tenant: tenant_of(row.get(1))?,
        agent_id: row.get(2),
        session_id: row.get(3),
        status: TrajectoryStatus::parse(&status).ok_or_else(|| StoreError::Corrupt {
            what: "trajectory status".into(),
            message: status.clone(),
        })?,
        created_at: row.get(5),
        updated_at: row.get(6),
        event_count: row.get::<_, i64>(7) as u64,
        state: from_json("trajectory state", row.get(8))?,
    })
}

pub(crate) fn tenant_of(text: &str) -> Result<TenantId, StoreError> {
    TenantId::new(text).map_err(|e| StoreError::Corrupt {
        what: "tenant".into(),
        message: e.to_string(),
    })
}

/// A `time|id` cursor as a typed position.
fn position(page: &PageRequest) -> Result<(Option<DateTime<Utc>>, Option<String>), StoreError> {
    match cursor_parts(page)? {
        None => Ok((None, None)),
        Some((time, id)) => {
            let time = DateTime::parse_from_rfc3339(time)
                .map_err(|_| StoreError::InvalidCursor(page.cursor.clone().unwrap_or_default()))?;
            Ok((Some(time.with_timezone(&Utc)), Some(id.to_string())))
        }
    }
}

#[async_trait]
impl EventLog for PostgresStore {
    async fn append(&self, step: StepRecord<'_>) -> Result<(), StoreError> {
        let (done, acknowledged) = oneshot::channel();
        let pending = Pending {
            step: PreparedStep::new(&step),
            done,
        };
        self.writes
            .send(pending)
            .await
            .map_err(|_| StoreError::Unavailable("the store's writers have stopped".into()))?;
        acknowledged.await.map_err(|_| {
            StoreError::Unavailable("the store's writer stopped before committing".into())
        })?
    }
}

#[async_trait]
impl Records for PostgresStore {
    async fn trajectory(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectorySummary>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_TRAJECTORY).await?;
        client
            .query_opt(&statement, &[&tenant.as_str(), &id])
            .await?
            .map(|row| summary(&row))
            .transpose()
    }

    async fn trajectory_with_events(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<TrajectoryDetail>, StoreError> {
        let mut client = self.client().await?;
        // One snapshot, so the summary and the events agree.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let statement = tx.prepare_cached(sql::SELECT_TRAJECTORY).await?;
        let Some(row) = tx.query_opt(&statement, &[&tenant.as_str(), &id]).await? else {
            return Ok(None);
        };
        let summary = summary(&row)?;
        let statement = tx.prepare_cached(sql::SELECT_EVENTS).await?;
        let events = tx
            .query(&statement, &[&tenant.as_str(), &id])
            .await?
            .iter()
            .map(|row| {
                let verdict: Option<&str> = row.get(2);
                Ok(StoredEvent {
                    seq: row.get::<_, i64>(0) as u64,
                    event: from_json("event", row.get(1))?,
                    adjudication: verdict.map(|v| from_json("adjudication", v)).transpose()?,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        tx.commit().await?;
        Ok(Some(TrajectoryDetail { summary, events }))
    }

    async fn agent(&self, tenant: &TenantId, id: &str) -> Result<Option<Agent>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_AGENT).await?;
        client
            .query_opt(&statement, &[&tenant.as_str(), &id])
            .await?
            .map(|row| from_json("agent", row.get(0)))
            .transpose()
    }

    async fn list_agents(
        &self,
        tenants: Tenants<'_>,
        page: &PageRequest,
    ) -> Result<Page<AgentRecord>, StoreError> {
        let tenant = tenants.only().map(TenantId::as_str);
        let after = cursor_parts(page)?;
        let limit = page.bounded_limit();
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT a.tenant, a.body, a.first_seen, a.last_seen, COUNT(t.id),
                        COALESCE(SUM((t.state::jsonb ->> 'step_count')::bigint), 0)::bigint,
                        COALESCE(SUM((t.state::jsonb ->> 'denial_count')::bigint), 0)::bigint,
                        COALESCE(SUM((t.state::jsonb ->> 'escalation_count')::bigint), 0)::bigint
                 FROM agents a LEFT JOIN trajectories t ON t.tenant = a.tenant AND t.agent_id = a.id
                 WHERE ($1::text IS NULL OR a.tenant = $1)
                   AND ($2::text IS NULL OR (a.tenant, a.id) > ($2, $3::text))
                 GROUP BY a.tenant, a.id ORDER BY a.tenant, a.id LIMIT $4",
            )
            .await?;
        let rows = client
            .query(
                &statement,
                &[
                    &tenant,
                    &after.map(|a| a.0),
                    &after.map(|a| a.1),
                    &((limit + 1) as i64),
                ],
            )
            .await?;
        let items = rows
            .iter()
            .map(|row| {
                Ok(AgentRecord {
                    tenant: tenant_of(row.get(0))?,
                    agent: from_json("agent", row.get(1))?,
                    first_seen: row.get(2),
                    last_seen: row.get(3),
                    trajectory_count: row.get::<_, i64>(4) as u64,
                    step_count: row.get::<_, i64>(5) as u64,
                    denial_count: row.get::<_, i64>(6) as u64,
                    escalation_count: row.get::<_, i64>(7) as u64,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", a.tenant, a.agent.id)
        }))
    }

    async fn list_trajectories(
        &self,
        tenants: Tenants<'_>,
        filter: &TrajectoryFilter,
        page: &PageRequest,
    ) -> Result<Page<TrajectorySummary>, StoreError> {
        let tenant = tenants.only().map(TenantId::as_str);
        let (after_time, after_id) = position(page)?;
        let limit = page.bounded_limit();
        let client = self.client().await?;
        let sql = concat!(
            "SELECT ",
            sql::summary_columns!(),
            " FROM trajectories t
             WHERE ($1::text IS NULL OR agent_id = $1) AND ($2::text IS NULL OR status = $2)
               AND ($3::text IS NULL OR session_id = $3) AND ($4::text IS NULL OR tenant = $4)
               AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6::text))
               AND ($8::text IS NULL
                    OR ($8 = 'deny' AND coalesce((state::jsonb ->> 'denial_count')::bigint, 0) > 0)
                    OR ($8 = 'escalate' AND coalesce((state::jsonb ->> 'escalation_count')::bigint, 0) > 0)
                    OR ($8 = 'allow' AND coalesce((state::jsonb ->> 'denial_count')::bigint, 0) = 0
                        AND coalesce((state::jsonb ->> 'escalation_count')::bigint, 0) = 0))
               AND ($9::timestamptz IS NULL OR updated_at >= $9) AND ($10::timestamptz IS NULL OR created_at < $10)
               AND ($11::text IS NULL OR (tenant, id) IN (
                    SELECT a.tenant, a.trajectory_id FROM adjudication_policies p
                    JOIN adjudications a ON a.tenant = p.tenant AND a.event_id = p.event_id
                    WHERE p.policy_id = $11))
               AND ($12::text IS NULL OR strpos(lower(id), lower($12)) > 0 OR strpos(lower(agent_id), lower($12)) > 0
                    OR strpos(lower(coalesce(session_id, '')), lower($12)) > 0
                    OR EXISTS (SELECT 1 FROM events e WHERE e.tenant = t.tenant AND e.trajectory_id = t.id
                               AND strpos(lower(e.body), lower($12)) > 0)
                    OR EXISTS (SELECT 1 FROM adjudications a WHERE a.tenant = t.tenant AND a.trajectory_id = t.id
                               AND strpos(lower(a.body), lower($12)) > 0))
             ORDER BY created_at DESC, id DESC LIMIT $7"
        );
        let statement = client.prepare_cached(sql).await?;
        let rows = client
            .query(
                &statement,
                &[
                    &filter.agent_id,
                    &filter.status.map(TrajectoryStatus::as_str),
                    &filter.session_id,
                    &tenant,
                    &after_time,
                    &after_id,
                    &((limit + 1) as i64),
                    &filter.decision.map(Decision::as_str),
                    &filter.active.since,
                    &filter.active.until,
                    &filter.policy_id,
                    &filter.text,
                ],
            )
            .await?;
        let items = rows.iter().map(summary).collect::<Result<Vec<_>, _>>()?;
        Ok(paginate(items, limit, |t| {
            format!("{}|{}", crate::types::cursor_time(&t.created_at), t.id)
        }))
    }

    async fn list_adjudications(
        &self,
        tenants: Tenants<'_>,
        filter: &AdjudicationFilter,
        page: &PageRequest,
    ) -> Result<Page<AdjudicationRecord>, StoreError> {
        let tenant = tenants.only().map(TenantId::as_str);
        let (after_time, after_id) = position(page)?;
        let limit = page.bounded_limit();
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT event_id, trajectory_id, agent_id, seq, recorded_at, kind, body FROM adjudications
                 WHERE decision IN ('deny', 'escalate') AND ($1::text IS NULL OR decision = $1)
                   AND ($2::text IS NULL OR agent_id = $2) AND ($3::text IS NULL OR trajectory_id = $3)
                   AND ($4::text IS NULL OR tenant = $4)
                   AND ($5::timestamptz IS NULL OR (recorded_at, event_id) < ($5, $6::text))
                 ORDER BY recorded_at DESC, event_id DESC LIMIT $7",
            )
            .await?;
        let rows = client
            .query(
                &statement,
                &[
                    &filter.decision.map(Decision::as_str),
                    &filter.agent_id,
                    &filter.trajectory_id,
                    &tenant,
                    &after_time,
                    &after_id,
                    &((limit + 1) as i64),
                ],
            )
            .await?;
        let items = rows
            .iter()
            .map(|row| {
                Ok(AdjudicationRecord {
                    event_id: row.get(0),
                    trajectory_id: row.get(1),
                    agent_id: row.get(2),
                    seq: row.get::<_, i64>(3) as u64,
                    timestamp: row.get(4),
                    kind: row.get(5),
                    adjudication: from_json("adjudication", row.get(6))?,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", crate::types::cursor_time(&a.timestamp), a.event_id)
        }))
    }

    async fn analytics(
        &self,
        tenants: Tenants<'_>,
        window: &TimeWindow,
    ) -> Result<Analytics, StoreError> {
        let tenant = tenants.only().map(TenantId::as_str);
        let client = self.client().await?;
        let in_window = |column: &str| {
            format!(
                "($1::timestamptz IS NULL OR {column} >= $1) AND ($2::timestamptz IS NULL OR {column} < $2)
                 AND ($3::text IS NULL OR tenant = $3)"
            )
        };
        let counts = format!(
            "SELECT (SELECT COUNT(*) FROM trajectories WHERE {}),
                    (SELECT COUNT(*) FROM events WHERE {}),
                    COUNT(*) FILTER (WHERE decision = 'allow'),
                    COUNT(*) FILTER (WHERE decision = 'deny'),
                    COUNT(*) FILTER (WHERE decision = 'escalate')
             FROM adjudications WHERE {}",
            in_window("created_at"),
            in_window("recorded_at"),
            in_window("recorded_at"),
        );
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&window.since, &window.until, &tenant];
        let statement = client.prepare_cached(&counts).await?;
        let row = client.query_one(&statement, &params).await?;
        let count = |i: usize| row.get::<_, i64>(i) as u64;
        let policy_counts = format!(
            "SELECT policy_id, COUNT(*) AS n FROM adjudication_policies WHERE {} AND shadow = $4
             GROUP BY policy_id ORDER BY n DESC, policy_id LIMIT {}",
            in_window("recorded_at"),
            crate::POLICY_COUNTS
        );
        let statement = client.prepare_cached(&policy_counts).await?;
        let mut counted = Vec::with_capacity(2);
        for shadow in [0i32, 1] {
            let rows = client
                .query(
                    &statement,
                    &[&window.since, &window.until, &tenant, &shadow],
                )
                .await?;
            let counts: Vec<PolicyCount> = rows
                .iter()
                .map(|r| PolicyCount {
                    policy_id: r.get(0),
                    count: r.get::<_, i64>(1) as u64,
                })
                .collect();
            counted.push(counts);
        }
        let shadow_matches = counted.pop().unwrap_or_default();
        let top_denying_policies = counted.pop().unwrap_or_default();
        Ok(Analytics {
            trajectories: count(0),
            events: count(1),
            allowed: count(2),
            denied: count(3),
            escalated: count(4),
            top_denying_policies,
            shadow_matches,
        })
    }

    async fn approval(
        &self,
        tenant: &TenantId,
        id: &str,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_APPROVAL).await?;
        client
            .query_opt(&statement, &[&tenant.as_str(), &id])
            .await?
            .map(|row| from_json("approval", row.get(0)))
            .transpose()
    }

    async fn list_approvals(
        &self,
        tenants: Tenants<'_>,
        filter: &ApprovalFilter,
        page: &PageRequest,
    ) -> Result<Page<ApprovalRecord>, StoreError> {
        let (after_time, after_id) = position(page)?;
        let limit = page.bounded_limit();
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT body FROM approvals
                 WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR status = $2)
                   AND ($3::text IS NULL OR agent_id = $3) AND ($4::text IS NULL OR trajectory_id = $4)
                   AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6::text))
                 ORDER BY created_at DESC, id DESC LIMIT $7",
            )
            .await?;
        let rows = client
            .query(
                &statement,
                &[
                    &tenants.only().map(TenantId::as_str),
                    &filter.status.map(|s| s.as_str()),
                    &filter.agent_id,
                    &filter.trajectory_id,
                    &after_time,
                    &after_id,
                    &((limit + 1) as i64),
                ],
            )
            .await?;
        let items = rows
            .iter()
            .map(|row| from_json("approval", row.get(0)))
            .collect::<Result<Vec<ApprovalRecord>, StoreError>>()?;
        Ok(paginate(items, limit, |a| {
            format!("{}|{}", crate::types::cursor_time(&a.created_at), a.id)
        }))
    }

    fn shared(&self) -> Option<Arc<dyn crate::SharedChanges>> {
        Some(Arc::new(self.clone()))
    }
}

#[async_trait]
impl crate::Retention for PostgresStore {
    async fn tenants(&self) -> Result<Vec<TenantId>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_TENANTS).await?;
        client
            .query(&statement, &[])
            .await?
            .iter()
            .map(|row| tenant_of(row.get(0)))
            .collect()
    }

    async fn nth_newest_ended(
        &self,
        tenant: &TenantId,
        n: u64,
    ) -> Result<Option<DateTime<Utc>>, StoreError> {
        let offset = i64::try_from(n.saturating_sub(1)).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_NTH_NEWEST_ENDED).await?;
        let row = client
            .query_opt(&statement, &[&tenant.as_str(), &offset])
            .await?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn prunable(
        &self,
        tenant: &TenantId,
        cutoff: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::Prunable>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_PRUNABLE).await?;
        let rows = client
            .query(&statement, &[&tenant.as_str(), &cutoff, &limit])
            .await?;
        Ok(rows
            .iter()
            .map(|r| crate::Prunable {
                id: r.get(0),
                events: r.get::<_, i64>(1).max(0) as u64,
            })
            .collect())
    }

    async fn prune(&self, tenant: &TenantId, ids: &[String]) -> Result<crate::Pruned, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let trajectory = tx.prepare_cached(sql::DELETE_PRUNED_TRAJECTORY).await?;
        let mut rest = Vec::with_capacity(sql::DELETE_PRUNED.len());
        for statement in sql::DELETE_PRUNED {
            rest.push(tx.prepare_cached(statement).await?);
        }
        let mut pruned = crate::Pruned::default();
        for id in ids {
            let Some(row) = tx.query_opt(&trajectory, &[&tenant.as_str(), id]).await? else {
                continue;
            };
            for statement in &rest {
                tx.execute(statement, &[&tenant.as_str(), id]).await?;
            }
            pruned.trajectories += 1;
            pruned.events += row.get::<_, i64>(0).max(0) as u64;
        }
        tx.commit().await?;
        Ok(pruned)
    }
}

#[async_trait]
impl crate::TokenRecords for PostgresStore {
    async fn put_token(&self, token: &crate::StoredToken) -> Result<bool, StoreError> {
        let body = serde_json::to_string(token).map_err(|e| StoreError::Corrupt {
            what: "token".into(),
            message: e.to_string(),
        })?;
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::INSERT_TOKEN).await?;
        Ok(client.execute(&statement, &[&token.hash, &body]).await? > 0)
    }

    async fn tokens(&self) -> Result<Vec<crate::StoredToken>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_TOKENS).await?;
        client
            .query(&statement, &[])
            .await?
            .iter()
            .map(|row| from_json("token", row.get(0)))
            .collect()
    }

    async fn revoke_token(&self, hash: &str) -> Result<Option<crate::StoredToken>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::DELETE_TOKEN).await?;
        client
            .query_opt(&statement, &[&hash])
            .await?
            .map(|row| from_json("token", row.get(0)))
            .transpose()
    }
}

#[async_trait]
impl crate::PolicyRevisions for PostgresStore {
    async fn push_policies(
        &self,
        revision: &crate::PolicyRevision,
        sources: &crate::PolicySources,
        current: &crate::CurrentPolicies,
    ) -> Result<(), StoreError> {
        let json = |what: &str, value: Result<String, serde_json::Error>| {
            value.map_err(|e| StoreError::Corrupt {
                what: what.into(),
                message: e.to_string(),
            })
        };
        let body = json("policy revision", serde_json::to_string(revision))?;
        let sources = json("policy sources", serde_json::to_string(sources))?;
        let current_body = json("current policies", serde_json::to_string(current))?;
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let insert = tx.prepare_cached(sql::INSERT_POLICY_REVISION).await?;
        tx.execute(
            &insert,
            &[&revision.revision, &revision.pushed_at, &body, &sources],
        )
        .await?;
        let set = tx.prepare_cached(sql::SET_CURRENT_POLICIES).await?;
        tx.execute(&set, &[&current.revision, &current_body])
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn policy_revisions(
        &self,
        limit: usize,
    ) -> Result<Vec<crate::PolicyRevision>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_POLICY_REVISIONS).await?;
        client
            .query(&statement, &[&(limit as i64)])
            .await?
            .iter()
            .map(|row| from_json("policy revision", row.get(0)))
            .collect()
    }

    async fn policy_revision(
        &self,
        revision: &str,
    ) -> Result<Option<(crate::PolicyRevision, crate::PolicySources)>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_POLICY_REVISION).await?;
        client
            .query_opt(&statement, &[&revision])
            .await?
            .map(|row| {
                Ok((
                    from_json("policy revision", row.get(0))?,
                    from_json("policy sources", row.get(1))?,
                ))
            })
            .transpose()
    }

    async fn set_current_policies(
        &self,
        current: &crate::CurrentPolicies,
    ) -> Result<bool, StoreError> {
        let body = serde_json::to_string(current).map_err(|e| StoreError::Corrupt {
            what: "current policies".into(),
            message: e.to_string(),
        })?;
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SET_CURRENT_POLICIES).await?;
        Ok(client
            .execute(&statement, &[&current.revision, &body])
            .await?
            > 0)
    }

    async fn current_policies(&self) -> Result<Option<crate::CurrentPolicies>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_CURRENT_POLICIES).await?;
        client
            .query_opt(&statement, &[])
            .await?
            .map(|row| from_json("current policies", row.get(0)))
            .transpose()
    }
}

#[async_trait]
impl Grants for PostgresStore {
    async fn put_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        grant: &Grant,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(grant).map_err(|e| StoreError::Corrupt {
            what: "grant".into(),
            message: e.to_string(),
        })?;
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::UPSERT_GRANT).await?;
        client
            .execute(
                &statement,
                &[
                    &tenant.as_str(),
                    &agent_id,
                    &grant.shape.key(),
                    &grant.granted_at,
                    &body,
                ],
            )
            .await?;
        Ok(())
    }

    async fn grants(&self, tenant: &TenantId, agent_id: &str) -> Result<Vec<Grant>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_GRANTS).await?;
        client
            .query(&statement, &[&tenant.as_str(), &agent_id])
            .await?
            .iter()
            .map(|row| from_json("grant", row.get(0)))
            .collect()
    }

    async fn revoke_grant(
        &self,
        tenant: &TenantId,
        agent_id: &str,
        shape: &ActionShape,
    ) -> Result<Option<Grant>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::DELETE_GRANT).await?;
        client
            .query_opt(&statement, &[&tenant.as_str(), &agent_id, &shape.key()])
            .await?
            .map(|row| from_json("grant", row.get(0)))
            .transpose()
    }
}

#[async_trait]
impl Approvals for PostgresStore {
    async fn open_approval(&self, approval: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
        let tenant = approval.tenant.as_str();
        let client = self.client().await?;
        let insert = client.prepare_cached(sql::INSERT_APPROVAL).await?;
        client
            .execute(
                &insert,
                &[
                    &tenant,
                    &approval.id,
                    &approval.event_id,
                    &approval.agent_id,
                    &approval.trajectory_id,
                    &approval.created_at,
                    &approval.expires_at,
                    &approval.body(),
                ],
            )
            .await?;
        let select = client
            .prepare_cached(sql::SELECT_APPROVAL_FOR_EVENT)
            .await?;
        let row = client
            .query_one(&select, &[&tenant, &approval.event_id])
            .await?;
        from_json("approval", row.get(0))
    }

    async fn settle_approval(&self, settled: &ApprovalRecord) -> Result<bool, StoreError> {
        let Some(at) = settled.state.settled_at() else {
            return Ok(false);
        };
        let deciding = settled.state.status() == crate::ApprovalStatus::Decided;
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SETTLE_APPROVAL).await?;
        let changed = client
            .execute(
                &statement,
                &[
                    &settled.state.status().as_str(),
                    &settled.body(),
                    &settled.tenant.as_str(),
                    &settled.id,
                    &at,
                    &deciding,
                ],
            )
            .await?;
        Ok(changed == 1)
    }

    async fn overdue_approvals(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::SELECT_OVERDUE_APPROVALS).await?;
        client
            .query(&statement, &[&now, &(limit as i64)])
            .await?
            .iter()
            .map(|row| from_json("approval", row.get(0)))
            .collect()
    }

    async fn pending_approvals(&self, tenant: &TenantId) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql::COUNT_PENDING_APPROVALS).await?;
        let row = client.query_one(&statement, &[&tenant.as_str()]).await?;
        Ok(row.get::<_, i64>(0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use crate::Records;
    use crate::TenantId;

    /// A database at version 2 (ids unique across tenants) keeps its records
    /// when the keys gain the tenant.
    #[tokio::test]
    async fn a_database_before_tenant_scoped_ids_is_migrated() {
        let url = sondera_testkit::postgres_database();
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .batch_execute("CREATE TABLE sondera_schema (version INTEGER NOT NULL)")
            .await
            .unwrap();
        for m in &crate::migrations::MIGRATIONS[..2] {
            client.batch_execute(m.postgres).await.unwrap();
            client
                .execute(
                    "INSERT INTO sondera_schema (version) VALUES ($1)",
                    &[&(m.version as i32)],
                )
                .await
                .unwrap();
        }
        client
            .batch_execute(
                "INSERT INTO trajectories VALUES ('old', 'acme', 'bot', NULL, 'running', now(), now(), 1, '{}')",
            )
            .await
            .unwrap();
        let store = super::PostgresStore::connect(&url).await.unwrap();
        let acme = TenantId::new("acme").unwrap();
        let old = store.trajectory(&acme, "old").await.unwrap().unwrap();
        assert_eq!((old.tenant, old.event_count), (acme, 1));
        let keys: String = client
            .query_one(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'trajectories_pkey'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(keys, "PRIMARY KEY (tenant, id)");
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            super::redact("postgres://sondera:s3cret@db:5432/x"),
            "postgres://sondera:***@db:5432/x"
        );
        assert_eq!(super::redact("postgres://db/x"), "postgres://db/x");
    }
}
