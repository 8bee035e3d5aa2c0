//! The live stream: every recorded event and approval change, fanned out to
//! subscribers through a bounded broadcast buffer, with a short history so a
//! page that opens sees what just happened and one that reconnects resumes
//! where it left off.
//!
//! Each item gets an id, counted up in publishing order within this process;
//! a [`LiveCursor`] pairs it with the process's epoch (random at start), so a
//! cursor from before a restart is told apart rather than misread. The
//! history is bounded in items and in bytes; it costs each step one
//! serialisation to weigh it, a fraction of what recording it costs.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use sondera_model::{Adjudicated, Event};
use sondera_store::{ApprovalRecord, TenantId};
use tokio::sync::{broadcast, watch};

use crate::error::ServiceError;

/// What live subscribers see, with the tenant it belongs to.
#[derive(Debug, Clone)]
pub struct LiveEvent {
    /// Its place in this process's stream, counted up from 1.
    pub id: u64,
    /// Whose it is.
    pub tenant: TenantId,
    /// What happened.
    pub item: LiveItem,
}

/// What a live subscriber is told.
#[derive(Debug, Clone)]
pub enum LiveItem {
    /// An event recorded with its verdict.
    Recorded {
        /// The event's position in its trajectory.
        seq: u64,
        /// The event.
        event: Event,
        /// Its verdict.
        verdict: Adjudicated,
    },
    /// An approval opened or settled.
    Approval(ApprovalRecord),
}

impl LiveItem {
    fn agent_id(&self) -> &str {
        match self {
            Self::Recorded { event, .. } => &event.agent.id,
            Self::Approval(approval) => &approval.agent_id,
        }
    }

    fn trajectory_id(&self) -> &str {
        match self {
            Self::Recorded { event, .. } => &event.trajectory_id,
            Self::Approval(approval) => &approval.trajectory_id,
        }
    }

    /// About how many bytes it holds, for the history's budget: its JSON's
    /// length, counted without keeping the JSON.
    fn weight(&self) -> usize {
        let mut counted = Counted(256);
        let _ = match self {
            Self::Recorded { event, verdict, .. } => serde_json::to_writer(&mut counted, event)
                .and_then(|()| serde_json::to_writer(&mut counted, verdict)),
            Self::Approval(approval) => serde_json::to_writer(&mut counted, approval),
        };
        counted.0
    }
}

/// A sink that counts the bytes written to it.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Which live events a subscriber wants, within its tenant.
#[derive(Debug, Clone, Default)]
pub struct StreamFilter {
    /// Only this agent's.
    pub agent_id: Option<String>,
    /// Only this trajectory's.
    pub trajectory_id: Option<String>,
}

impl StreamFilter {
    fn admits(&self, tenant: &TenantId, live: &LiveEvent) -> bool {
        live.tenant == *tenant
            && self
                .agent_id
                .as_ref()
                .is_none_or(|a| a == live.item.agent_id())
            && self
                .trajectory_id
                .as_ref()
                .is_none_or(|t| t == live.item.trajectory_id())
    }
}

/// A place in the live stream: `<epoch>-<id>`, as SSE sends it in `id:` and
/// a browser returns it in `Last-Event-ID`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveCursor {
    epoch: u64,
    id: u64,
}

impl std::fmt::Display for LiveCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:x}-{}", self.epoch, self.id)
    }
}

impl std::str::FromStr for LiveCursor {
    type Err = ServiceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || {
            ServiceError::InvalidArgument(format!(
                "`{text}` is not a place in the live stream: expected EPOCH-ID as the stream's `id:` fields give it"
            ))
        };
        let (epoch, id) = text.split_once('-').ok_or_else(bad)?;
        Ok(Self {
            epoch: u64::from_str_radix(epoch, 16).map_err(|_| bad())?,
            id: id.parse().map_err(|_| bad())?,
        })
    }
}

/// Where a subscription starts.
#[derive(Debug, Clone, Copy)]
pub enum Resume {
    /// With what is published from now on.
    Now,
    /// With the last `n` items kept that the subscriber wants, then on.
    Recent(usize),
    /// Right after this place: whatever was kept since, then on.
    After(LiveCursor),
}

/// Items from the history, and whether some the subscriber asked for were
/// no longer kept (or were published by another run of the server).
#[derive(Debug, Default)]
pub struct Backlog {
    /// In publishing order.
    pub items: Vec<Arc<LiveEvent>>,
    /// Something between the cursor and the first item is missing.
    pub gap: bool,
}

/// Bounds of the history.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HistoryBounds {
    pub(crate) items: usize,
    pub(crate) bytes: usize,
}

impl Default for HistoryBounds {
    fn default() -> Self {
        Self {
            items: 1000,
            bytes: 16 * 1024 * 1024,
        }
    }
}

struct History {
    next_id: u64,
    /// Every item from `first_kept` on that is still kept, oldest first.
    kept: VecDeque<(Arc<LiveEvent>, usize)>,
    bytes: usize,
    /// The id the history is complete from: items before it were dropped.
    complete_from: u64,
}

/// The stream's sender and its history.
pub(crate) struct Live {
    sender: broadcast::Sender<Arc<LiveEvent>>,
    history: Mutex<History>,
    epoch: u64,
    bounds: HistoryBounds,
}

impl Live {
    pub(crate) fn new(buffer: usize, bounds: HistoryBounds) -> Self {
        let (sender, _) = broadcast::channel(buffer.max(1));
        Self {
            sender,
            history: Mutex::new(History {
                next_id: 1,
                kept: VecDeque::new(),
                bytes: 0,
                complete_from: 1,
            }),
            // Random per run; small enough to read as hex in a cursor.
            epoch: uuid::Uuid::new_v4().as_u64_pair().0 >> 12,
            bounds,
        }
    }

    /// Numbers `item`, keeps it in the history, and sends it to the
    /// subscribers; all under one lock, so ids are in sending order and a
    /// new subscriber sees each item exactly once.
    pub(crate) fn publish(&self, tenant: &TenantId, item: LiveItem) {
        let weight = item.weight();
        let mut history = self.history.lock();
        let id = history.next_id;
        history.next_id += 1;
        let live = Arc::new(LiveEvent {
            id,
            tenant: tenant.clone(),
            item,
        });
        history.kept.push_back((live.clone(), weight));
        history.bytes += weight;
        while history.kept.len() > self.bounds.items || history.bytes > self.bounds.bytes {
            let Some((dropped, weight)) = history.kept.pop_front() else {
                break;
            };
            history.bytes -= weight;
            history.complete_from = dropped.id + 1;
        }
        if self.sender.receiver_count() > 0 {
            // A subscriber leaving between the count and the send is not an error.
            let _ = self.sender.send(live);
        }
    }

    /// What `filter` admits of the history from `resume`, and a receiver of
    /// everything published after it.
    pub(crate) fn subscribe(
        &self,
        tenant: &TenantId,
        filter: &StreamFilter,
        resume: Resume,
    ) -> (Backlog, broadcast::Receiver<Arc<LiveEvent>>, LiveCursor) {
        let history = self.history.lock();
        let receiver = self.sender.subscribe();
        let backlog = self.backlog(&history, tenant, filter, resume);
        let now = LiveCursor {
            epoch: self.epoch,
            id: history.next_id - 1,
        };
        (backlog, receiver, now)
    }

    fn backlog(
        &self,
        history: &History,
        tenant: &TenantId,
        filter: &StreamFilter,
        resume: Resume,
    ) -> Backlog {
        let admitted = |after: u64| {
            history
                .kept
                .iter()
                .map(|(live, _)| live)
                .filter(move |live| live.id > after && filter.admits(tenant, live))
                .cloned()
        };
        match resume {
            Resume::Now => Backlog::default(),
            Resume::Recent(n) => {
                let mut items: Vec<_> = admitted(0).collect();
                let skip = items.len().saturating_sub(n);
                items.drain(..skip);
                Backlog { items, gap: false }
            }
            Resume::After(cursor) => {
                let same_run = cursor.epoch == self.epoch && cursor.id < history.next_id;
                let complete = same_run && cursor.id + 1 >= history.complete_from;
                let after = if same_run { cursor.id } else { 0 };
                Backlog {
                    items: admitted(after).collect(),
                    gap: !complete,
                }
            }
        }
    }

    /// A place in the stream.
    pub(crate) fn cursor(&self, id: u64) -> LiveCursor {
        LiveCursor {
            epoch: self.epoch,
            id,
        }
    }
}

/// A live subscription: first the history it asked for, then every item
/// published after it. Adjudication never waits for it: a subscriber that
/// falls more than the stream buffer behind is ended with an error.
pub struct Subscription {
    pub(crate) tenant: TenantId,
    pub(crate) filter: StreamFilter,
    pub(crate) backlog: std::vec::IntoIter<Arc<LiveEvent>>,
    pub(crate) receiver: broadcast::Receiver<Arc<LiveEvent>>,
    pub(crate) closing: watch::Receiver<bool>,
    pub(crate) _active: crate::metrics::ActiveStream,
}

impl Subscription {
    /// The next event the subscriber wants; `None` once the service stops.
    pub async fn next(&mut self) -> Option<Result<Arc<LiveEvent>, ServiceError>> {
        if let Some(kept) = self.backlog.next() {
            return Some(Ok(kept));
        }
        loop {
            let received = tokio::select! {
                received = self.receiver.recv() => received,
                _ = self.closing.wait_for(|closing| *closing) => return None,
            };
            match received {
                Ok(live) if self.filter.admits(&self.tenant, &live) => return Some(Ok(live)),
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    return Some(Err(ServiceError::SlowSubscriber { missed }));
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The subscription as a stream that ends after its first error (a
    /// subscriber that fell behind learns why, then is let go). Dropping the
    /// stream ends the subscription.
    pub fn into_stream(
        self,
    ) -> impl futures_util::Stream<Item = Result<Arc<LiveEvent>, ServiceError>> + Send {
        futures_util::stream::unfold(Some(self), |subscription| async move {
            let mut subscription = subscription?;
            let next = subscription.next().await?;
            let more = next.is_ok().then_some(subscription);
            Some((next, more))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sondera_model::{Agent, Payload};

    fn item(trajectory: &str) -> LiveItem {
        let agent = Agent::new("bot", "test");
        let event = Event::new(
            trajectory,
            &agent,
            Payload::Thought {
                content: "x".repeat(100),
            },
        );
        LiveItem::Recorded {
            seq: 1,
            event,
            verdict: Adjudicated::allow(sondera_model::Mode::Govern, "ok"),
        }
    }

    fn live(items: usize) -> Live {
        Live::new(
            16,
            HistoryBounds {
                items,
                bytes: usize::MAX,
            },
        )
    }

    fn ids(backlog: &Backlog) -> Vec<u64> {
        backlog.items.iter().map(|l| l.id).collect()
    }

    #[test]
    fn the_history_is_bounded_in_bytes() {
        let live = Live::new(
            16,
            HistoryBounds {
                items: 100,
                bytes: 3 * item("a").weight(),
            },
        );
        let t = TenantId::default();
        for _ in 0..10 {
            live.publish(&t, item("a"));
        }
        let (backlog, _rx, now) = live.subscribe(&t, &StreamFilter::default(), Resume::Recent(50));
        assert_eq!(ids(&backlog), vec![8, 9, 10]);
        assert_eq!(now.id, 10);
        let (resumed, _rx, _) =
            live.subscribe(&t, &StreamFilter::default(), Resume::After(live.cursor(0)));
        assert!(resumed.gap, "items 1 to 7 were dropped");
    }

    #[test]
    fn a_reconnect_gets_what_it_missed_and_a_gap_when_it_was_dropped() {
        let live = live(3);
        let t = TenantId::default();
        let filter = StreamFilter::default();
        let (_, rx, start) = live.subscribe(&t, &filter, Resume::Now);
        drop(rx);
        live.publish(&t, item("a"));
        live.publish(&t, item("b"));
        let (backlog, _rx, _) = live.subscribe(&t, &filter, Resume::After(start));
        assert_eq!((ids(&backlog), backlog.gap), (vec![1, 2], false));
        for _ in 0..3 {
            live.publish(&t, item("c"));
        }
        let (backlog, _rx, _) = live.subscribe(&t, &filter, Resume::After(start));
        assert_eq!((ids(&backlog), backlog.gap), (vec![3, 4, 5], true));
        let (recent, _rx, _) = live.subscribe(&t, &filter, Resume::Recent(2));
        assert_eq!(ids(&recent), vec![4, 5]);
        let other_run = LiveCursor {
            epoch: live.epoch ^ 1,
            id: 4,
        };
        let (backlog, _rx, _) = live.subscribe(&t, &filter, Resume::After(other_run));
        assert_eq!((ids(&backlog), backlog.gap), (vec![3, 4, 5], true));
    }

    #[test]
    fn the_history_is_per_tenant_and_filtered() {
        let live = live(10);
        let (acme, other) = (TenantId::new("acme").unwrap(), TenantId::default());
        let (_b, _rx, _) = live.subscribe(&acme, &StreamFilter::default(), Resume::Now);
        live.publish(&acme, item("a"));
        live.publish(&other, item("a"));
        live.publish(&acme, item("b"));
        let only_b = StreamFilter {
            trajectory_id: Some("b".into()),
            ..Default::default()
        };
        let (backlog, _rx, _) = live.subscribe(&acme, &StreamFilter::default(), Resume::Recent(10));
        assert_eq!(ids(&backlog), vec![1, 3]);
        let (backlog, _rx, _) = live.subscribe(&acme, &only_b, Resume::Recent(10));
        assert_eq!(ids(&backlog), vec![3]);
    }

    #[test]
    fn cursors_read_back_and_bad_ones_are_named() {
        let live = live(1);
        let cursor = live.cursor(42);
        assert_eq!(cursor.to_string().parse::<LiveCursor>().unwrap(), cursor);
        let err = "42".parse::<LiveCursor>().unwrap_err();
        assert!(err.to_string().contains("EPOCH-ID"), "{err}");
    }
}
