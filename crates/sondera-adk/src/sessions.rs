//! Session scopes: one trajectory per (app, user, session), leased by the
//! invocations that run in it, evicted least-recently-used when the registry
//! is full, quarantined when the harness may hold a trajectory the plugin
//! could not start or end.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use sondera_harness::{Harness, HarnessError};
use sondera_model::{Payload, PromptRole};
use tokio::sync::Notify;

use crate::bounded::bounded;
use crate::error::{CloseError, LeaseList, PluginError};
use crate::tree::AgentTree;

/// A harness scope as the plugin holds it. Factories hand these out, so the
/// plugin can tell when one is handed out twice.
pub type SharedHarness = Arc<tokio::sync::Mutex<Box<dyn Harness>>>;

/// Where session scopes get their harness.
pub(crate) enum HarnessSource {
    /// Scopes of one harness: the first session uses it, later sessions get
    /// `new_scope()` of it.
    Scopes {
        first: Mutex<Option<Box<dyn Harness>>>,
        template: Box<dyn Harness>,
    },
    Factory(Box<dyn Fn() -> Result<SharedHarness, HarnessError> + Send + Sync>),
}

/// The identity of a session scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// The ADK application's name.
    pub app: String,
    /// The user's id.
    pub user: String,
    /// The session's id.
    pub session: String,
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.app, self.user, self.session)
    }
}

/// Where a scope's trajectory stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// No trajectory yet: the first lease initializes one.
    Fresh,
    Open,
    /// Being finalized for eviction or shutdown; waiters wait for it to settle.
    Ending,
    /// The harness may hold a trajectory the plugin could not start or end.
    Quarantined(String),
}

/// What one invocation has seen, for matching its steps to each other.
#[derive(Debug, Default)]
pub(crate) struct InvocationState {
    pub(crate) last_user_prompt: Option<String>,
    pub(crate) last_assistant_prompt: Option<String>,
    /// Upstream function-call ids from model responses, by tool name and
    /// arguments, oldest first.
    pub(crate) call_ids: HashMap<(String, String), VecDeque<Option<String>>>,
    /// Actions judged before their tool ran, by tool name and arguments.
    pub(crate) pending: HashMap<(String, String), VecDeque<PendingTool>>,
}

impl InvocationState {
    pub(crate) fn last_prompt(&mut self, role: PromptRole) -> &mut Option<String> {
        match role {
            PromptRole::Assistant => &mut self.last_assistant_prompt,
            _ => &mut self.last_user_prompt,
        }
    }
}

/// A tool call between its before- and after-tool callbacks.
#[derive(Debug)]
pub(crate) enum PendingTool {
    /// Judged and allowed: its result is judged as this action's observation.
    Running {
        action: Box<Payload>,
        provider_call_id: Option<String>,
    },
    /// Blocked before it ran: the result ADK reports is the plugin's own
    /// error object, which is not judged again.
    Blocked,
}

#[derive(Debug)]
struct Lease {
    /// The agent whose before-agent callback took the lease, when no runner
    /// hook did (agents served without the plugin on their runner).
    taken_by_agent: Option<String>,
    state: InvocationState,
}

struct ScopeState {
    phase: Phase,
    leases: HashMap<String, Lease>,
    last_used: u64,
}

/// One session's trajectory scope.
pub(crate) struct SessionScope {
    pub(crate) key: SessionKey,
    pub(crate) tree: Arc<AgentTree>,
    pub(crate) harness: SharedHarness,
    state: Mutex<ScopeState>,
}

impl SessionScope {
    /// Runs `f` on the state of `invocation`, which must hold a lease.
    pub(crate) fn with_invocation<T>(
        &self,
        invocation: &str,
        f: impl FnOnce(&mut InvocationState) -> T,
    ) -> Result<T, PluginError> {
        let mut state = self.state.lock();
        if let Phase::Quarantined(reason) = &state.phase {
            return Err(PluginError::Quarantined {
                session: self.key.clone(),
                reason: reason.clone(),
            });
        }
        match state.leases.get_mut(invocation) {
            Some(lease) => Ok(f(&mut lease.state)),
            None => Err(PluginError::NoLease {
                session: self.key.clone(),
                invocation: invocation.to_string(),
            }),
        }
    }

    /// Refuses when the scope is quarantined: a scope whose trajectory is in
    /// doubt judges nothing more.
    pub(crate) fn check_usable(&self) -> Result<(), PluginError> {
        match &self.state.lock().phase {
            Phase::Quarantined(reason) => Err(PluginError::Quarantined {
                session: self.key.clone(),
                reason: reason.clone(),
            }),
            _ => Ok(()),
        }
    }
}

/// A lease as reported by [`crate::SonderaHarnessPlugin::active_leases`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ActiveLease {
    /// The session.
    pub session: SessionKey,
    /// The invocation.
    pub invocation: String,
}

impl fmt::Display for ActiveLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (invocation {})", self.session, self.invocation)
    }
}

struct Registry {
    scopes: HashMap<SessionKey, Arc<SessionScope>>,
    clock: u64,
    closing: bool,
}

/// How an invocation finds its agent tree: `fits` says whether a scope's
/// tree is the one `agent` runs in, `choose` picks one for a new scope.
pub(crate) struct TreeChoice<'a> {
    pub(crate) agent: &'a str,
    pub(crate) fits: &'a (dyn Fn(&AgentTree) -> bool + Sync),
    pub(crate) choose: &'a (dyn Fn() -> Result<Arc<AgentTree>, PluginError> + Sync),
}

/// Who asks for a lease.
pub(crate) enum Taker<'a> {
    /// A runner hook (user message, before run).
    Runner,
    /// The before-agent callback of this agent.
    Agent(&'a str),
}

/// All session scopes of one plugin.
pub(crate) struct Sessions {
    registry: Mutex<Registry>,
    settled: Notify,
    capacity: usize,
    source: HarnessSource,
    /// How long one harness call may take.
    pub(crate) harness_timeout: std::time::Duration,
}

enum Step {
    Leased(Arc<SessionScope>),
    Wait,
    Evict(Arc<SessionScope>),
}

impl Sessions {
    pub(crate) fn new(
        capacity: usize,
        source: HarnessSource,
        harness_timeout: std::time::Duration,
    ) -> Self {
        Self {
            registry: Mutex::new(Registry {
                scopes: HashMap::new(),
                clock: 0,
                closing: false,
            }),
            settled: Notify::new(),
            capacity,
            source,
            harness_timeout,
        }
    }

    /// The scope of `key`, if one exists.
    pub(crate) fn scope(&self, key: &SessionKey) -> Option<Arc<SessionScope>> {
        self.registry.lock().scopes.get(key).cloned()
    }

    /// Takes (or confirms) `invocation`'s lease on the scope of `key`,
    /// creating the scope and starting its trajectory when needed.
    pub(crate) async fn acquire(
        &self,
        key: &SessionKey,
        invocation: &str,
        taker: Taker<'_>,
        trees: &TreeChoice<'_>,
    ) -> Result<Arc<SessionScope>, PluginError> {
        loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            match self.step(key, invocation, &taker, trees)? {
                Step::Leased(scope) => {
                    self.start(&scope, invocation).await?;
                    return Ok(scope);
                }
                Step::Wait => settled.await,
                Step::Evict(victim) => self.evict(victim).await?,
            }
        }
    }

    /// One pass over the registry under its lock.
    fn step(
        &self,
        key: &SessionKey,
        invocation: &str,
        taker: &Taker<'_>,
        trees: &TreeChoice<'_>,
    ) -> Result<Step, PluginError> {
        let mut registry = self.registry.lock();
        if registry.closing {
            return Err(PluginError::Closed);
        }
        registry.clock += 1;
        let now = registry.clock;
        if let Some(scope) = registry.scopes.get(key).cloned() {
            if !(trees.fits)(&scope.tree) {
                return Err(PluginError::TreeChanged {
                    session: key.clone(),
                    expected: scope.tree.root_name().to_string(),
                    found: trees.agent.to_string(),
                });
            }
            let mut state = scope.state.lock();
            match &state.phase {
                Phase::Ending => return Ok(Step::Wait),
                Phase::Quarantined(reason) => {
                    return Err(PluginError::Quarantined {
                        session: key.clone(),
                        reason: reason.clone(),
                    });
                }
                Phase::Fresh | Phase::Open => {}
            }
            state.last_used = now;
            state
                .leases
                .entry(invocation.to_string())
                .or_insert_with(|| Lease {
                    taken_by_agent: agent_taker(taker),
                    state: InvocationState::default(),
                });
            drop(state);
            return Ok(Step::Leased(scope));
        }
        if registry.scopes.len() >= self.capacity {
            return self.make_room(&registry);
        }
        let harness = self.issue(&registry)?;
        let mut leases = HashMap::new();
        leases.insert(
            invocation.to_string(),
            Lease {
                taken_by_agent: agent_taker(taker),
                state: InvocationState::default(),
            },
        );
        let scope = Arc::new(SessionScope {
            key: key.clone(),
            tree: (trees.choose)()?,
            harness,
            state: Mutex::new(ScopeState {
                phase: Phase::Fresh,
                leases,
                last_used: now,
            }),
        });
        registry.scopes.insert(key.clone(), scope.clone());
        Ok(Step::Leased(scope))
    }

    /// Picks the least-recently-used scope without leases for eviction.
    fn make_room(&self, registry: &Registry) -> Result<Step, PluginError> {
        let mut ending = false;
        let mut victim: Option<(&Arc<SessionScope>, u64)> = None;
        for scope in registry.scopes.values() {
            let state = scope.state.lock();
            if state.phase == Phase::Ending {
                ending = true;
            } else if state.leases.is_empty() && victim.is_none_or(|(_, t)| state.last_used < t) {
                victim = Some((scope, state.last_used));
            }
        }
        if let Some((scope, _)) = victim {
            scope.state.lock().phase = Phase::Ending;
            return Ok(Step::Evict(scope.clone()));
        }
        if ending {
            return Ok(Step::Wait);
        }
        Err(PluginError::Full {
            capacity: self.capacity,
            leases: LeaseList(active(registry)),
        })
    }

    /// A harness for a new scope.
    fn issue(&self, registry: &Registry) -> Result<SharedHarness, PluginError> {
        match &self.source {
            HarnessSource::Scopes { first, template } => {
                let harness = first.lock().take().unwrap_or_else(|| template.new_scope());
                Ok(Arc::new(tokio::sync::Mutex::new(harness)))
            }
            HarnessSource::Factory(factory) => {
                let harness = factory().map_err(|e| PluginError::Factory(Box::new(e)))?;
                if let Some(owner) = registry
                    .scopes
                    .values()
                    .find(|s| Arc::ptr_eq(&s.harness, &harness))
                {
                    return Err(PluginError::HarnessReused {
                        session: owner.key.clone(),
                    });
                }
                let trajectory = match harness.try_lock() {
                    Ok(h) => h.trajectory_id().map(str::to_string),
                    Err(_) => Some("(held elsewhere)".to_string()),
                };
                if let Some(trajectory_id) = trajectory {
                    return Err(PluginError::HarnessInUse { trajectory_id });
                }
                Ok(harness)
            }
        }
    }

    /// Starts the scope's trajectory if no lease has yet.
    async fn start(&self, scope: &Arc<SessionScope>, invocation: &str) -> Result<(), PluginError> {
        if scope.state.lock().phase != Phase::Fresh {
            return Ok(());
        }
        let mut harness = scope.harness.lock().await;
        if scope.state.lock().phase != Phase::Fresh {
            return Ok(());
        }
        let agent = scope.tree.agent.clone();
        let session = Some(scope.key.session.clone());
        match bounded(
            self.harness_timeout,
            harness.initialize(Some(agent), session),
        )
        .await
        {
            Ok(_) => {
                scope.state.lock().phase = Phase::Open;
                Ok(())
            }
            Err(source) => {
                let published = harness.trajectory_id().map(str::to_string);
                drop(harness);
                self.abandon_start(scope, invocation, published, &source);
                Err(PluginError::Initialize {
                    session: scope.key.clone(),
                    source: Box::new(source),
                })
            }
        }
    }

    /// After a failed start: a scope whose harness may hold a trajectory is
    /// quarantined; one that provably holds none is removed once no other
    /// invocation leases it, so it does not keep capacity.
    fn abandon_start(
        &self,
        scope: &Arc<SessionScope>,
        invocation: &str,
        published: Option<String>,
        source: &HarnessError,
    ) {
        let mut registry = self.registry.lock();
        let mut state = scope.state.lock();
        state.leases.remove(invocation);
        match published {
            Some(id) => {
                state.phase =
                    Phase::Quarantined(format!("starting trajectory {id} failed: {source}"));
            }
            None if state.leases.is_empty() && state.phase == Phase::Fresh => {
                drop(state);
                if registry
                    .scopes
                    .get(&scope.key)
                    .is_some_and(|s| Arc::ptr_eq(s, scope))
                {
                    registry.scopes.remove(&scope.key);
                }
            }
            None => {}
        }
    }

    /// Finalizes `victim` (already marked ending) and removes it; on failure
    /// it stays, quarantined, until an eviction or shutdown succeeds.
    async fn evict(&self, victim: Arc<SessionScope>) -> Result<(), PluginError> {
        let result = end(&victim, self.harness_timeout).await;
        self.settle(&victim, &result);
        result.map_err(|source| PluginError::Evict {
            session: victim.key.clone(),
            source: Box::new(source),
        })
    }

    fn settle(&self, scope: &Arc<SessionScope>, result: &Result<(), HarnessError>) {
        let mut registry = self.registry.lock();
        match result {
            Ok(()) => {
                registry.scopes.remove(&scope.key);
            }
            Err(source) => {
                scope.state.lock().phase =
                    Phase::Quarantined(format!("ending its trajectory failed: {source}"));
            }
        }
        drop(registry);
        self.settled.notify_waiters();
    }

    /// Ends `invocation`'s lease: always for a runner hook, and for an
    /// agent only when that agent took it.
    pub(crate) fn release(&self, key: &SessionKey, invocation: &str, taker: Taker<'_>) {
        let Some(scope) = self.scope(key) else { return };
        let mut state = scope.state.lock();
        let owned = match (&taker, state.leases.get(invocation)) {
            (_, None) => false,
            (Taker::Runner, Some(_)) => true,
            (Taker::Agent(name), Some(lease)) => lease.taken_by_agent.as_deref() == Some(*name),
        };
        if owned {
            state.leases.remove(invocation);
        }
    }

    pub(crate) fn active_leases(&self) -> Vec<ActiveLease> {
        active(&self.registry.lock())
    }

    /// Stops taking new work and finalizes every idle scope, waiting for
    /// scopes an eviction is ending. Refused, changing nothing, while
    /// invocations hold leases.
    pub(crate) async fn close(&self) -> Result<(), CloseError> {
        let mut tried = std::collections::HashSet::new();
        let mut failures = Vec::new();
        loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            let (idle, ending) = self.begin_closing(&mut tried)?;
            for scope in idle {
                let result = end(&scope, self.harness_timeout).await;
                self.settle(&scope, &result);
                if let Err(source) = result {
                    failures.push((scope.key.clone(), source));
                }
            }
            if !ending {
                break;
            }
            settled.await;
        }
        failures.sort_by(|a, b| a.0.cmp(&b.0));
        if failures.is_empty() {
            Ok(())
        } else {
            Err(CloseError::Finalize(failures))
        }
    }

    /// Marks the registry closing unless leases are held, and takes the
    /// idle scopes not yet tried; says whether an eviction is still ending one.
    fn begin_closing(
        &self,
        tried: &mut std::collections::HashSet<SessionKey>,
    ) -> Result<(Vec<Arc<SessionScope>>, bool), CloseError> {
        let mut registry = self.registry.lock();
        let leases = active(&registry);
        if !leases.is_empty() {
            return Err(CloseError::LeasesActive(LeaseList(leases)));
        }
        registry.closing = true;
        let mut ending = false;
        let mut idle = Vec::new();
        for scope in registry.scopes.values() {
            let mut state = scope.state.lock();
            if state.phase == Phase::Ending {
                ending = true;
            } else if tried.insert(scope.key.clone()) {
                state.phase = Phase::Ending;
                idle.push(scope.clone());
            }
        }
        Ok((idle, ending))
    }

    /// How many scopes exist, for tests and diagnostics.
    pub(crate) fn len(&self) -> usize {
        self.registry.lock().scopes.len()
    }
}

fn agent_taker(taker: &Taker<'_>) -> Option<String> {
    match taker {
        Taker::Runner => None,
        Taker::Agent(name) => Some(name.to_string()),
    }
}

fn active(registry: &Registry) -> Vec<ActiveLease> {
    let mut leases: Vec<ActiveLease> = registry
        .scopes
        .values()
        .flat_map(|scope| {
            let invocations: Vec<String> = scope.state.lock().leases.keys().cloned().collect();
            invocations.into_iter().map(|invocation| ActiveLease {
                session: scope.key.clone(),
                invocation,
            })
        })
        .collect();
    leases.sort();
    leases
}

/// Ends the scope's trajectory, if it has one.
async fn end(scope: &SessionScope, limit: std::time::Duration) -> Result<(), HarnessError> {
    let mut harness = scope.harness.lock().await;
    if harness.trajectory_id().is_none() {
        return Ok(());
    }
    bounded(limit, harness.finalize(None)).await
}
