//! The adjudicator: adjudicates any event of any trajectory (classify,
//! compute the facts, let the engine decide, record the step) and keeps
//! each trajectory's state. Harnesses and the service adjudicate through it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use sondera_guard::content;
use sondera_guard::provenance::Read;
use sondera_model::{Adjudicated, Decision, DecisionIds, Event, Payload, TrajectoryState};
use sondera_policy::PolicyEngine;
use sondera_store::{
    EventLog, StepRecord, StoreError, TenantId, TrajectoryStatus, TrajectoryStore,
};
use tracing::Instrument as _;

use crate::HarnessError;

/// Where a trajectory stands: what the next event is judged with.
#[derive(Debug)]
struct Cursor {
    status: TrajectoryStatus,
    /// Position of the next event.
    next_seq: u64,
    state: TrajectoryState,
    /// Made at the trajectory's first step here.
    decision_ids: Option<DecisionIds>,
}

impl Cursor {
    fn unstarted() -> Self {
        Self {
            status: TrajectoryStatus::Pending,
            next_seq: 0,
            state: TrajectoryState::default(),
            decision_ids: None,
        }
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Cursor>>>;

/// How many idle trajectories keep their state in memory; beyond this, idle
/// ones are dropped and reloaded from the store when they next see an event.
const CACHED_TRAJECTORIES: usize = 4096;

/// A verdict as recorded: the event's position in its trajectory and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The event's position in its trajectory.
    pub seq: u64,
    /// The verdict.
    pub verdict: Adjudicated,
}

/// How often an event is judged again after another writer of the same
/// store appended to its trajectory first.
const CONFLICT_RETRIES: usize = 16;

/// Judges events against a policy engine and records them in a store.
///
/// Events of one trajectory are judged one at a time, in arrival order, each
/// against the state its predecessors left; events of different trajectories
/// proceed independently. A step is acknowledged only after the store has
/// durably recorded it together with its verdict and the trajectory's new
/// state, so a crash never leaves a verdict the store does not know about.
///
/// Failing closed: an event that policies cannot evaluate (say, tool arguments
/// that do not fit their declared types) is recorded with a deny naming the
/// cause; a store failure is returned as an error, which callers must treat
/// as a block.
#[derive(Debug)]
pub struct Adjudicator {
    engine: RwLock<Arc<PolicyEngine>>,
    store: Arc<dyn TrajectoryStore>,
    /// Where steps are appended: the store itself, or a decorator of its
    /// appends (see [`Adjudicator::appending_through`]).
    log: Arc<dyn EventLog>,
    /// Keyed by tenant, then trajectory id: ids are unique per tenant.
    trajectories: Mutex<HashMap<TenantId, HashMap<String, Slot>>>,
}

impl Adjudicator {
    /// An adjudicator deciding by `engine` and recording in `store`.
    pub fn new(engine: PolicyEngine, store: Arc<dyn TrajectoryStore>) -> Self {
        Self {
            engine: RwLock::new(Arc::new(engine)),
            log: store.clone(),
            store,
            trajectories: Mutex::new(HashMap::new()),
        }
    }

    /// The adjudicator, appending its steps through `log` (a decorator of
    /// the store's appends: instrumentation, injected failures) while it
    /// reads from the store. `log` must append to the same store.
    #[must_use]
    pub fn appending_through(mut self, log: Arc<dyn EventLog>) -> Self {
        self.log = log;
        self
    }

    /// The policies in force.
    pub fn engine(&self) -> Arc<PolicyEngine> {
        self.engine.read().clone()
    }

    /// Replaces the policies; events already being judged finish under the old set.
    pub fn replace_engine(&self, engine: PolicyEngine) {
        *self.engine.write() = Arc::new(engine);
    }

    /// The store it records in and reads from.
    pub fn store(&self) -> &Arc<dyn TrajectoryStore> {
        &self.store
    }

    fn slot(&self, tenant: &TenantId, trajectory_id: &str) -> Slot {
        let mut map = self.trajectories.lock();
        if let Some(slot) = map.get(tenant).and_then(|t| t.get(trajectory_id)) {
            return slot.clone();
        }
        if map.values().map(HashMap::len).sum::<usize>() >= CACHED_TRAJECTORIES {
            for slots in map.values_mut() {
                slots.retain(|_, slot| Arc::strong_count(slot) > 1);
            }
            map.retain(|_, slots| !slots.is_empty());
        }
        map.entry(tenant.clone())
            .or_default()
            .entry(trajectory_id.to_string())
            .or_default()
            .clone()
    }

    fn forget(&self, tenant: &TenantId, trajectory_id: &str) {
        if let Some(slots) = self.trajectories.lock().get_mut(tenant) {
            slots.remove(trajectory_id);
        }
    }

    /// Judges and records one event of the default tenant, returning its verdict.
    pub async fn adjudicate(&self, event: &Event) -> Result<Adjudicated, HarnessError> {
        Ok(self
            .adjudicate_as(&TenantId::default(), event)
            .await?
            .verdict)
    }

    /// Judges and records one event on behalf of `tenant`. Trajectory and
    /// event ids are `tenant`'s own: another tenant's records are never read.
    pub async fn adjudicate_as(
        &self,
        tenant: &TenantId,
        event: &Event,
    ) -> Result<Recorded, HarnessError> {
        self.adjudicate_by(tenant, event, None).await
    }

    /// Like [`Adjudicator::adjudicate_as`], but a step whose judging ends
    /// after `deadline` is not recorded: it fails with
    /// [`HarnessError::DeadlineExceeded`], leaving its event id free, so a
    /// caller that gave up waiting can send it again. On a multi-threaded
    /// Tokio runtime judging runs where it cannot hold up the runtime's
    /// other tasks (`block_in_place`).
    pub async fn adjudicate_before(
        &self,
        tenant: &TenantId,
        event: &Event,
        deadline: std::time::Instant,
    ) -> Result<Recorded, HarnessError> {
        self.adjudicate_by(tenant, event, Some(deadline)).await
    }

    async fn adjudicate_by(
        &self,
        tenant: &TenantId,
        event: &Event,
        deadline: Option<std::time::Instant>,
    ) -> Result<Recorded, HarnessError> {
        event.check()?;
        let slot = self.slot(tenant, &event.trajectory_id);
        let mut guard = slot.lock().await;
        let mut attempts = 0;
        let result = loop {
            if guard.is_none() {
                *guard = self.load(tenant, event).await?;
            }
            if guard.is_none() && matches!(event.payload, Payload::Started { .. }) {
                *guard = Some(Cursor::unstarted());
            }
            let result = match guard.as_mut() {
                Some(cursor) => self.step(tenant, cursor, event, deadline).await,
                None => Err(HarnessError::UnknownTrajectory(event.trajectory_id.clone())),
            };
            // Another process sharing the store appended first: judge again
            // against what it recorded.
            if let Err(HarnessError::Store(StoreError::Conflict { .. })) = result
                && attempts < CONFLICT_RETRIES
            {
                attempts += 1;
                *guard = None;
                continue;
            }
            break result;
        };
        let result = match result {
            Err(
                refused @ (HarnessError::Store(StoreError::DuplicateEvent(_))
                | HarnessError::AlreadyStarted(_)
                | HarnessError::TrajectoryEnded { .. }),
            ) => {
                // The cursor may have taken a step the store refused.
                *guard = None;
                match self.recorded_before(tenant, event).await? {
                    Some(recorded) => Ok(recorded),
                    None => Err(refused),
                }
            }
            other => other,
        };
        let ended = guard.as_ref().is_some_and(|c| c.status.is_terminal());
        if result.is_err() || ended {
            // On error the store may know more than this cache; reload next time.
            *guard = None;
            drop(guard);
            self.forget(tenant, &event.trajectory_id);
        }
        result
    }

    /// The verdict already recorded for `event`, when this very event (its
    /// id, trajectory and time) is recorded: a client that lost its answer
    /// (a dropped connection, a server that failed over) sends the step
    /// again, to this server or another, and gets the verdict that holds,
    /// never a second judgement of it.
    async fn recorded_before(
        &self,
        tenant: &TenantId,
        event: &Event,
    ) -> Result<Option<Recorded>, HarnessError> {
        let Some(detail) = self
            .store
            .trajectory_with_events(tenant, &event.trajectory_id)
            .await?
        else {
            return Ok(None);
        };
        let same = |recorded: &Event| {
            recorded.event_id == event.event_id && recorded.timestamp == event.timestamp
        };
        Ok(detail
            .events
            .into_iter()
            .find(|stored| same(&stored.event))
            .map(|stored| Recorded {
                seq: stored.seq,
                verdict: stored.adjudication.unwrap_or_else(|| {
                    Adjudicated::unjudged(self.engine().mode(), stored.event.payload.kind())
                }),
            }))
    }

    /// Reads a trajectory's cursor from the store; `None` when it is not recorded.
    async fn load(&self, tenant: &TenantId, event: &Event) -> Result<Option<Cursor>, HarnessError> {
        Ok(self
            .store
            .trajectory(tenant, &event.trajectory_id)
            .await?
            .map(|summary| Cursor {
                status: summary.status,
                next_seq: summary.event_count,
                state: summary.state,
                decision_ids: None,
            }))
    }

    async fn step(
        &self,
        tenant: &TenantId,
        cursor: &mut Cursor,
        event: &Event,
        deadline: Option<std::time::Instant>,
    ) -> Result<Recorded, HarnessError> {
        let id = &event.trajectory_id;
        if let Payload::Started { .. } = event.payload
            && cursor.next_seq > 0
        {
            return Err(HarnessError::AlreadyStarted(id.clone()));
        }
        // A verdict given on an earlier step (an operator's decision, an
        // approval's expiry) is recorded even when it lands after the
        // trajectory ended: nothing decided goes unrecorded.
        if cursor.status.is_terminal() && !matches!(event.payload, Payload::Adjudicated(_)) {
            return Err(HarnessError::TrajectoryEnded {
                trajectory_id: id.clone(),
                status: cursor.status,
            });
        }
        let engine = self.engine();
        let event = as_judged(event, &cursor.state);
        let event = event.as_ref();
        let (mut verdict, governed) = match deadline {
            None => adjudicate_step(&engine, &mut cursor.state, event),
            Some(deadline) => {
                let started = std::time::Instant::now();
                let judged = off_the_runtime(|| adjudicate_step(&engine, &mut cursor.state, event));
                if std::time::Instant::now() > deadline {
                    // The cursor's state took the step: the caller drops it
                    // (on error) and the next event reloads the store's.
                    return Err(HarnessError::DeadlineExceeded(started.elapsed()));
                }
                judged
            }
        };
        let decision_ids = cursor
            .decision_ids
            .get_or_insert_with(|| DecisionIds::new(tenant.as_str(), id));
        verdict.decision_id =
            Some(decision_ids.id(cursor.next_seq, &event.event_id, engine.revision()));
        let status = cursor.status.after(&event.payload);
        self.log
            .append(StepRecord {
                tenant,
                event,
                seq: cursor.next_seq,
                adjudication: governed.then_some(&verdict),
                status,
                state: &cursor.state,
            })
            .instrument(tracing::debug_span!("sondera.record"))
            .await?;
        let recorded = Recorded {
            seq: cursor.next_seq,
            verdict,
        };
        cursor.status = status;
        cursor.next_seq += 1;
        Ok(recorded)
    }
}

/// Runs CPU-bound `work` so that a multi-threaded Tokio runtime hands this
/// worker's other tasks to another thread meanwhile; elsewhere, in place.
fn off_the_runtime<T>(work: impl FnOnce() -> T) -> T {
    let multi_threaded = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_threaded {
        tokio::task::block_in_place(work)
    } else {
        work()
    }
}

/// `event` as it is judged and recorded: with a generic tool call (or its
/// output) in the class the detectors give it, whoever sent it (see
/// [`sondera_guard::reclassify`]).
pub(crate) fn as_judged<'e>(event: &'e Event, state: &TrajectoryState) -> Cow<'e, Event> {
    let pending = event.payload.call_id().and_then(|id| state.pending(id));
    match sondera_guard::reclassify(&event.payload, pending) {
        Some(payload) => Cow::Owned(Event {
            event_id: event.event_id.clone(),
            trajectory_id: event.trajectory_id.clone(),
            agent: event.agent.clone(),
            timestamp: event.timestamp,
            payload,
            actor: event.actor.clone(),
            causality: event.causality.clone(),
            execution: event.execution.clone(),
            provider_call_id: event.provider_call_id.clone(),
        }),
        None => Cow::Borrowed(event),
    }
}

/// Judges `event` against `engine` with its trajectory's `state`, and folds
/// the step into the state (counters, taints, calls awaiting results,
/// commands untrusted content suggested). Returns the verdict and whether
/// policies govern the payload; lifecycle events are allowed and leave the
/// state alone. An event the policies cannot evaluate is denied, naming why.
pub(crate) fn adjudicate_step(
    engine: &PolicyEngine,
    state: &mut TrajectoryState,
    event: &Event,
) -> (Adjudicated, bool) {
    let mut signals = None;
    // Spans of the two halves of judging, under the caller's (a server's
    // `apply_guardrail`): computing the facts, then the policies' decision.
    let facts = tracing::debug_span!("sondera.detect").in_scope(|| engine.request(event, state));
    let (mut verdict, governed) = match facts {
        Ok(Some(request)) => {
            let verdict =
                tracing::debug_span!("sondera.evaluate").in_scope(|| engine.decide(&request));
            signals = request.signals;
            (verdict, true)
        }
        Ok(None) => {
            // The card's tools, for judging what the agent does with them.
            sondera_guard::provenance::fold(
                &mut state.provenance,
                &event.payload,
                None,
                Read::default(),
            );
            (
                Adjudicated::unjudged(engine.mode(), event.payload.kind()),
                false,
            )
        }
        Err(e) => (
            Adjudicated::deny(
                engine.mode(),
                format!("cannot adjudicate this step, failing closed: {e}"),
            ),
            true,
        ),
    };
    if governed {
        let call = event.payload.call_id().and_then(|id| state.pending(id));
        let taints = content::taints(&event.payload, call, signals.as_ref(), |path| {
            engine.workspace().is_sensitive(path)
        });
        let read = Read {
            flagged: signals.as_ref().is_some_and(|s| s.injected),
            assigns_credentials: (signals.as_ref())
                .is_some_and(|s| s.secrets.contains(&content::ASSIGNED_CREDENTIAL)),
            requests: signals.as_ref().map_or(&[], |s| &s.requests),
        };
        let answered = call.map(|c| (c.call_id.clone(), c.target.clone()));
        sondera_guard::provenance::fold(
            &mut state.provenance,
            &event.payload,
            answered
                .as_ref()
                .map(|(id, tool)| (id.as_str(), tool.as_str())),
            read,
        );
        state.secrets_seen |= taints.secrets;
        state.untrusted_seen |= taints.untrusted;
        state.remember_untrusted_commands(taints.suggested_commands);
        if verdict.effective_decision() != Decision::Deny {
            let workspace = engine.workspace();
            let context = sondera_guard::shell::ShellContext {
                working_dir: &workspace.root,
                workspace_root: &workspace.root,
                home: &workspace.home,
            };
            sondera_guard::scripts::fold(state, &event.payload, &context);
        }
        state.record(&event.payload, verdict.effective_decision());
    }
    verdict.policy_revision = Some(engine.revision().to_owned());
    (verdict, governed)
}
