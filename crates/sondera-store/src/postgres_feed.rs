//! [`SharedChanges`] over PostgreSQL `LISTEN`/`NOTIFY`.
//!
//! Triggers (migration 7) announce each inserted event as
//! `[tenant, trajectory_id, seq]` on `sondera_recorded` and each approval
//! inserted or updated as `[tenant, id]` on `sondera_approvals`, and each change of the current
//! policy revision as the revision on `sondera_policies`, and each token stored
//! or revoked on `sondera_tokens`; PostgreSQL
//! delivers notifications at commit, in commit order. One connection of its
//! own, outside the pool, listens; when it is lost the listener connects
//! again with back-off, listens, and only then announces
//! [`Change::Resumed`], so a reader that catches up after it misses nothing.

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Notification};

use crate::postgres::{PostgresStore, from_json, tenant_of};
use crate::shared::{Change, SharedChanges, SharedStep, StepKey};
use crate::{ApprovalRecord, StoreError};

/// Announcements waiting for the reader, at most; a reader that falls this
/// far behind holds up the listener (PostgreSQL queues the rest).
const BACKLOG: usize = 16 * 1024;
/// The longest wait between attempts to listen again.
const MAX_BACK_OFF: Duration = Duration::from_secs(5);
/// Names the connection in `pg_stat_activity`.
pub(crate) const APPLICATION_NAME: &str = "sondera-listen";

/// A connection listening: its client (the connection closes when the
/// client goes) and the notifications it receives.
struct Listening {
    _client: tokio_postgres::Client,
    notifications: mpsc::UnboundedReceiver<Notification>,
}

impl PostgresStore {
    /// A connection of its own that has sent `LISTEN`, so every change
    /// committed from the return on is announced on it.
    async fn listening(&self) -> Result<Listening, StoreError> {
        let target = crate::postgres_tls::target(self.url()).map_err(StoreError::Unavailable)?;
        let mut config = target.config;
        config.application_name(APPLICATION_NAME);
        let (client, connection) = config.connect(target.tls).await?;
        let (sender, notifications) = mpsc::unbounded_channel();
        tokio::spawn(drive(connection, sender));
        client
            .batch_execute(
                "LISTEN sondera_recorded; LISTEN sondera_approvals; LISTEN sondera_policies; LISTEN sondera_tokens",
            )
            .await?;
        Ok(Listening {
            _client: client,
            notifications,
        })
    }
}

/// Drives `connection`, forwarding its notifications until it ends or
/// nobody reads them.
async fn drive<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
    sender: mpsc::UnboundedSender<Notification>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    loop {
        match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            Some(Ok(AsyncMessage::Notification(notification))) => {
                if sender.send(notification).is_err() {
                    return;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                tracing::warn!("the connection listening to the shared store ended: {e}");
                return;
            }
            None => return,
        }
    }
}

/// Reads a notification; `None` for one this release does not know.
fn change_of(notification: &Notification) -> Option<Change> {
    if notification.channel() == "sondera_tokens" {
        return Some(Change::Tokens);
    }
    if notification.channel() == "sondera_policies" {
        return Some(Change::Policies {
            revision: notification.payload().to_owned(),
        });
    }
    let parts: serde_json::Value = serde_json::from_str(notification.payload()).ok()?;
    let tenant = tenant_of(parts.get(0)?.as_str()?).ok()?;
    let id = parts.get(1)?.as_str()?.to_owned();
    match notification.channel() {
        "sondera_recorded" => Some(Change::Recorded(StepKey {
            tenant,
            trajectory_id: id,
            seq: parts.get(2)?.as_u64()?,
        })),
        "sondera_approvals" => Some(Change::Approval { tenant, id }),
        _ => None,
    }
}

/// Forwards every change from `current`, and from each connection made
/// after it is lost, to `changes`, until nobody reads them.
async fn relay(store: PostgresStore, mut current: Listening, changes: mpsc::Sender<Change>) {
    loop {
        while let Some(notification) = current.notifications.recv().await {
            match change_of(&notification) {
                Some(change) => {
                    if changes.send(change).await.is_err() {
                        return;
                    }
                }
                None => tracing::warn!(
                    channel = notification.channel(),
                    "an announcement from the shared store could not be read; ignored"
                ),
            }
        }
        let lost_at = Utc::now();
        let mut wait = Duration::from_millis(50);
        current = loop {
            if changes.is_closed() {
                return;
            }
            match store.listening().await {
                Ok(received) => break received,
                Err(e) => {
                    tracing::warn!("cannot listen to the shared store again yet: {e}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(MAX_BACK_OFF);
                }
            }
        };
        if changes.send(Change::Resumed { lost_at }).await.is_err() {
            return;
        }
    }
}

/// A step row: tenant, seq, event body, verdict body.
fn shared_step(row: &tokio_postgres::Row) -> Result<SharedStep, StoreError> {
    let verdict: Option<&str> = row.get(3);
    Ok(SharedStep {
        tenant: tenant_of(row.get(0))?,
        seq: row.get::<_, i64>(1) as u64,
        event: from_json("event", row.get(2))?,
        verdict: verdict.map(|v| from_json("adjudication", v)).transpose()?,
    })
}

#[async_trait]
impl SharedChanges for PostgresStore {
    async fn listen(&self) -> Result<mpsc::Receiver<Change>, StoreError> {
        let first = self.listening().await?;
        let (changes, received) = mpsc::channel(BACKLOG);
        tokio::spawn(relay(self.clone(), first, changes));
        Ok(received)
    }

    async fn steps(&self, keys: &[StepKey]) -> Result<Vec<SharedStep>, StoreError> {
        let tenants: Vec<&str> = keys.iter().map(|k| k.tenant.as_str()).collect();
        let trajectories: Vec<&str> = keys.iter().map(|k| k.trajectory_id.as_str()).collect();
        let seqs: Vec<i64> = keys.iter().map(|k| k.seq as i64).collect();
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT e.tenant, e.seq, e.body, a.body
                 FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS k(tenant, trajectory_id, seq, n)
                 JOIN events e ON e.tenant = k.tenant AND e.trajectory_id = k.trajectory_id AND e.seq = k.seq
                 LEFT JOIN adjudications a ON a.tenant = e.tenant AND a.event_id = e.event_id
                 ORDER BY k.n",
            )
            .await?;
        client
            .query(&statement, &[&tenants, &trajectories, &seqs])
            .await?
            .iter()
            .map(shared_step)
            .collect()
    }

    async fn steps_since(
        &self,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<SharedStep>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT e.tenant, e.seq, e.body, a.body FROM events e
                 LEFT JOIN adjudications a ON a.tenant = e.tenant AND a.event_id = e.event_id
                 WHERE e.recorded_at >= $1
                 ORDER BY e.tenant, e.trajectory_id, e.seq LIMIT $2",
            )
            .await?;
        client
            .query(&statement, &[&since, &(limit as i64)])
            .await?
            .iter()
            .map(shared_step)
            .collect()
    }

    async fn approvals_since(
        &self,
        since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT body FROM approvals WHERE created_at >= $1 ORDER BY created_at, id LIMIT $2",
            )
            .await?;
        client
            .query(&statement, &[&since, &(limit as i64)])
            .await?
            .iter()
            .map(|row| from_json("approval", row.get(0)))
            .collect()
    }
}
