use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use sondera_model::{Adjudicated, Agent, Event, Grant, Mode};
use sondera_policy::{PolicyEngine, PolicyLoadErrors, Workspace};
use sondera_store::{EventLog, MemoryStore, SqliteStore, StoreError, TenantId, TrajectoryStore};

use crate::scope::{Backend, ScopedHarness};
use crate::{Adjudicator, HarnessError};

/// A harness that judges and records everything in process.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use sondera_harness::{Harness, LocalHarness};
/// use sondera_model::{Agent, Payload};
///
/// let mut harness = LocalHarness::builder()
///     .agent(Agent::new("my-agent", "google-adk"))
///     .in_memory()
///     .build()
///     .unwrap();
/// harness.initialize(None, Some("session-1".into())).await.unwrap();
/// let call = harness.event(Payload::ShellCommand {
///     call_id: "c1".into(),
///     command: "cargo test".into(),
///     working_dir: None,
/// }).unwrap();
/// assert!(harness.adjudicate(call).await.unwrap().is_allowed());
/// harness.finalize(None).await.unwrap();
/// # });
/// ```
pub type LocalHarness = ScopedHarness<Arc<Adjudicator>>;

/// The data directory used when none is given: `~/.sondera/data`, or
/// `None` when `HOME` is not set.
pub fn default_data_dir() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".sondera").join("data"))
}

/// Where a [`LocalHarness`] keeps trajectories.
#[derive(Debug)]
enum StoreChoice {
    Memory,
    DataDir(PathBuf),
    Store(Arc<dyn TrajectoryStore>),
}

/// Configures a [`LocalHarness`]: the built-in policy packs and an in-memory
/// store unless told otherwise.
#[derive(Debug)]
pub struct LocalHarnessBuilder {
    engine: Option<PolicyEngine>,
    policy_dirs: Vec<PathBuf>,
    mode: Mode,
    workspace: Option<Workspace>,
    store: StoreChoice,
    log: Option<Arc<dyn EventLog>>,
    agent: Option<Agent>,
}

/// Why a [`LocalHarness`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalHarnessError {
    #[error(transparent)]
    Policies(#[from] PolicyLoadErrors),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl LocalHarnessBuilder {
    /// Judges with this engine instead of loading one.
    #[must_use]
    pub fn engine(mut self, engine: PolicyEngine) -> Self {
        self.engine = Some(engine);
        self
    }

    /// Loads policies from `dir` instead of the built-in packs (repeatable).
    #[must_use]
    pub fn policy_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.policy_dirs.push(dir.into());
        self
    }

    /// The mode verdicts are applied in (govern by default).
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Where the agent works (shell paths outside it are reported); by
    /// default the current directory and `$HOME`. Ignored with [`Self::engine`].
    #[must_use]
    pub fn workspace(mut self, workspace: Workspace) -> Self {
        self.workspace = Some(workspace);
        self
    }

    /// Keeps trajectories in memory only (the default).
    #[must_use]
    pub fn in_memory(mut self) -> Self {
        self.store = StoreChoice::Memory;
        self
    }

    /// Keeps trajectories durably in SQLite under `dir`.
    #[must_use]
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.store = StoreChoice::DataDir(dir.into());
        self
    }

    /// Keeps trajectories in `store`.
    #[must_use]
    pub fn store(mut self, store: Arc<dyn TrajectoryStore>) -> Self {
        self.store = StoreChoice::Store(store);
        self
    }

    /// Appends steps through `log`, a decorator of the store's appends
    /// (see [`Adjudicator::appending_through`]).
    #[must_use]
    pub fn appending_through(mut self, log: Arc<dyn EventLog>) -> Self {
        self.log = Some(log);
        self
    }

    /// The agent `initialize` uses when it is given none.
    #[must_use]
    pub fn agent(mut self, agent: Agent) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The harness, or why it could not be configured.
    pub fn build(self) -> Result<LocalHarness, LocalHarnessError> {
        // An embedded harness judges for as long as its agent runs.
        sondera_guard::content::prepare_all_in_background();
        let engine = match self.engine {
            Some(engine) => engine.with_mode(self.mode),
            None => {
                let workspace = self.workspace.unwrap_or_else(Workspace::from_process);
                PolicyEngine::builder()
                    .builtin_or_directories(self.policy_dirs)
                    .mode(self.mode)
                    .workspace(workspace)
                    .build()?
            }
        };
        let store: Arc<dyn TrajectoryStore> = match self.store {
            StoreChoice::Memory => Arc::new(MemoryStore::new()),
            StoreChoice::DataDir(dir) => Arc::new(SqliteStore::open_dir(dir)?),
            StoreChoice::Store(store) => store,
        };
        let mut adjudicator = Adjudicator::new(engine, store);
        if let Some(log) = self.log {
            adjudicator = adjudicator.appending_through(log);
        }
        Ok(LocalHarness::with_adjudicator(
            Arc::new(adjudicator),
            self.agent,
        ))
    }
}

impl LocalHarness {
    /// A builder: built-in packs, an in-memory store, govern mode.
    pub fn builder() -> LocalHarnessBuilder {
        LocalHarnessBuilder {
            engine: None,
            policy_dirs: Vec::new(),
            mode: Mode::Govern,
            workspace: None,
            store: StoreChoice::Memory,
            log: None,
            agent: None,
        }
    }

    /// A scope over a shared adjudicator.
    pub fn with_adjudicator(adjudicator: Arc<Adjudicator>, default_agent: Option<Agent>) -> Self {
        Self::over(adjudicator, default_agent)
    }

    /// The adjudicator its scopes share.
    pub fn adjudicator(&self) -> &Arc<Adjudicator> {
        self.backend()
    }
}

#[async_trait]
impl Backend for Arc<Adjudicator> {
    async fn adjudicate_one(&self, event: Event) -> Result<Adjudicated, HarnessError> {
        self.adjudicate(&event).await
    }

    async fn recorded_agent(&self, trajectory_id: &str) -> Result<Option<Agent>, HarnessError> {
        let store = self.store();
        let recorded = store
            .trajectory(&TenantId::default(), trajectory_id)
            .await?
            .ok_or_else(|| HarnessError::UnknownTrajectory(trajectory_id.to_string()))?;
        Ok(store.agent(&recorded.tenant, &recorded.agent_id).await?)
    }

    async fn put_grant(&self, agent_id: &str, grant: &Grant) -> Result<(), HarnessError> {
        Ok(self
            .store()
            .put_grant(&TenantId::default(), agent_id, grant)
            .await?)
    }

    async fn grants(&self, agent_id: &str) -> Result<Vec<Grant>, HarnessError> {
        Ok(self.store().grants(&TenantId::default(), agent_id).await?)
    }
}
