//! `SonderaHarnessPlugin`: Sondera Harness governance for agents built with
//! adk-rust.
//!
//! Every step an ADK agent takes passes a gate that turns it into a
//! trajectory event and has a [`Harness`] judge it: the user's message, what
//! the model is about to read, what it answered, each tool call before it
//! runs and each result before the model sees it. A denied step does not
//! happen; the agent reads why instead. An escalated tool call waits for a
//! person ([`Approver`]) and the decision is recorded with who made it. A
//! harness that cannot judge a step blocks it: nothing is ever allowed
//! because the harness failed.
//!
//! adk-rust calls plugins at two levels, so the plugin is wired at both:
//! the runner's plugin manager carries the run hooks ([`SonderaHarnessPlugin::plugin`]:
//! before-run, user message, after-run, model errors, close) and every LLM
//! agent carries the agent, model and tool gates, installed when it is built
//! through [`SonderaHarnessPlugin::llm_agent`]. Workflow and custom agents
//! are registered with [`SonderaHarnessPlugin::workflow`] and
//! [`SonderaHarnessPlugin::custom`], and the root of the tree with
//! [`SonderaHarnessPlugin::root`], which analyses the whole tree into the
//! agent card policies see. The runner's per-event hook is left alone: an
//! event only carries content these gates have already judged.
//!
//! Each (app, user, session) gets its own trajectory scope of the harness.
//! An invocation leases its session's scope for as long as it runs; idle
//! scopes are ended and evicted least-recently-used when
//! [`SonderaHarnessPluginBuilder::max_session_scopes`] are open, and a scope
//! whose trajectory could not be started or ended is quarantined until an
//! eviction or [`SonderaHarnessPlugin::close`] succeeds.
//!
//! ```no_run
//! # async fn demo(model: std::sync::Arc<dyn adk_core::Llm>, shell: std::sync::Arc<dyn adk_core::Tool>) -> Result<(), Box<dyn std::error::Error>> {
//! use sondera_adk::SonderaHarnessPlugin;
//! use sondera_harness::LocalHarness;
//!
//! let harness = LocalHarness::builder().data_dir(".sondera").build()?;
//! let sondera = SonderaHarnessPlugin::builder(harness).build()?;
//! let agent = sondera
//!     .llm_agent("coder")
//!     .instruction("You fix failing tests.")
//!     .model(model)
//!     .tool(shell)
//!     .build()?;
//! let agent = sondera.root(agent)?;
//! // Runner::builder()...agent(agent).plugin_manager(sondera.plugin_manager())
//! # Ok(()) }
//! ```

mod agents;
mod bounded;
mod error;
mod escalation;
mod gates;
mod sessions;
mod tree;

use std::sync::Arc;

use adk_core::Agent as AdkAgent;
use adk_plugin::{Plugin, PluginManager};
use parking_lot::{Mutex, RwLock};

pub use agents::GovernedLlmAgentBuilder;
pub use bounded::DEFAULT_HARNESS_TIMEOUT;
pub use error::{CloseError, LeaseList, PluginError};
pub use escalation::{
    Approval, ApprovalDecision, ApprovalError, ApprovalRequest, Approver, ConfirmationApprover,
    EscalationMode, Yolo,
};
pub use sessions::{ActiveLease, SessionKey, SharedHarness};
#[cfg(feature = "remote")]
pub use sondera_harness::RemoteHarness;
pub use sondera_harness::{Harness, HarnessError, LocalHarness};
pub use sondera_model::{Agent, AgentCard, CollaborationMode, Grant, GrantScope};
pub use tree::{TRANSFER_TOOL, TreeError, Workflow};

use gates::Governor;
use sessions::{HarnessSource, Sessions};
use tree::{AgentKind, Catalog};

/// How many session scopes a plugin keeps open by default.
pub const DEFAULT_MAX_SESSION_SCOPES: usize = 256;

/// Governs adk-rust agents through a Sondera [`Harness`]. Cheap to clone;
/// clones share everything.
#[derive(Clone)]
pub struct SonderaHarnessPlugin {
    governor: Arc<Governor>,
}

/// Configures a [`SonderaHarnessPlugin`].
pub struct SonderaHarnessPluginBuilder {
    source: Result<HarnessSource, PluginError>,
    max_session_scopes: usize,
    escalation: Option<EscalationMode>,
    approver: Option<Arc<dyn Approver>>,
    harness_timeout: std::time::Duration,
}

impl SonderaHarnessPlugin {
    /// A plugin whose sessions are scopes of `harness`: the first session
    /// uses `harness` itself, later ones [`Harness::new_scope`] of it.
    pub fn builder(harness: impl Harness + 'static) -> SonderaHarnessPluginBuilder {
        let source = match harness.trajectory_id() {
            Some(id) => Err(PluginError::HarnessStarted {
                trajectory_id: id.to_string(),
            }),
            None => Ok(HarnessSource::Scopes {
                template: harness.new_scope(),
                first: Mutex::new(Some(Box::new(harness))),
            }),
        };
        SonderaHarnessPluginBuilder::with_source(source)
    }

    /// A plugin whose sessions each get a harness from `factory`, for
    /// harnesses that build their isolated scopes themselves. Every call
    /// must return a new, uninitialised harness.
    pub fn with_factory(
        factory: impl Fn() -> Result<SharedHarness, HarnessError> + Send + Sync + 'static,
    ) -> SonderaHarnessPluginBuilder {
        SonderaHarnessPluginBuilder::with_source(Ok(HarnessSource::Factory(Box::new(factory))))
    }

    /// A plugin with the defaults over scopes of `harness`.
    pub fn new(harness: impl Harness + 'static) -> Result<Self, PluginError> {
        Self::builder(harness).build()
    }

    /// Starts an LLM agent whose agent, model and tool steps this plugin judges.
    pub fn llm_agent(&self, name: impl Into<String>) -> GovernedLlmAgentBuilder {
        GovernedLlmAgentBuilder::new(self.clone(), name.into())
    }

    /// Registers a workflow agent (sequential, parallel or loop) of a
    /// governed tree; its sub-agents must be governed too.
    pub fn workflow(&self, agent: Arc<dyn AdkAgent>, workflow: Workflow) -> Arc<dyn AdkAgent> {
        self.register(&agent, AgentKind::Workflow(workflow));
        agent
    }

    /// Registers a custom agent of a governed tree. It makes no model or
    /// tool calls of its own through ADK's callbacks; its sub-agents must
    /// be governed.
    pub fn custom(&self, agent: Arc<dyn AdkAgent>) -> Arc<dyn AdkAgent> {
        self.register(&agent, AgentKind::Custom);
        agent
    }

    pub(crate) fn register(&self, agent: &Arc<dyn AdkAgent>, kind: AgentKind) {
        self.governor.catalog.register(agent, kind);
    }

    /// Registers `root` as the root of a governed tree and analyses the
    /// tree: unique names, one definition per tool, every agent governed.
    /// Register the agent the runner runs, after its sub-agents are built.
    pub fn root(&self, root: Arc<dyn AdkAgent>) -> Result<Arc<dyn AdkAgent>, PluginError> {
        gates::analyse(&self.governor, &root)?;
        Ok(root)
    }

    /// The agent card `root`'s tree is governed with (its principal agent).
    pub fn agent_card(&self, root: &Arc<dyn AdkAgent>) -> Result<Agent, PluginError> {
        Ok(tree::AgentTree::analyse(root, &self.governor.catalog)?.agent)
    }

    /// The run hooks, to register on a runner's plugin manager.
    pub fn plugin(&self) -> Plugin {
        agents::runner_plugin(self.governor.clone())
    }

    /// A plugin manager holding only [`Self::plugin`].
    pub fn plugin_manager(&self) -> Arc<PluginManager> {
        Arc::new(PluginManager::new(vec![self.plugin()]))
    }

    /// Stops taking new invocations and ends every idle session's
    /// trajectory. Refuses while invocations hold leases (listing them);
    /// otherwise tries every session, removes those that ended and reports
    /// the rest, which stay quarantined for another try.
    pub async fn close(&self) -> Result<(), CloseError> {
        self.governor.sessions.close().await
    }

    /// Invocations that hold a lease right now, such as a served stream its
    /// client abandoned before the run finished.
    pub fn active_leases(&self) -> Vec<ActiveLease> {
        self.governor.sessions.active_leases()
    }

    /// How many session scopes are open.
    pub fn session_scopes(&self) -> usize {
        self.governor.sessions.len()
    }

    /// The trajectory the session `key` is recorded in, if it has a scope.
    pub async fn trajectory_id(&self, key: &SessionKey) -> Option<String> {
        let scope = self.governor.sessions.scope(key)?;
        let harness = scope.harness.lock().await;
        harness.trajectory_id().map(str::to_string)
    }
}

impl SonderaHarnessPluginBuilder {
    fn with_source(source: Result<HarnessSource, PluginError>) -> Self {
        Self {
            source,
            max_session_scopes: DEFAULT_MAX_SESSION_SCOPES,
            escalation: None,
            approver: None,
            harness_timeout: DEFAULT_HARNESS_TIMEOUT,
        }
    }

    /// How long one harness call (a judgement, a start, an end, a standing
    /// approval) may take before the step it was for is blocked; 30 s by
    /// default.
    #[must_use]
    pub fn harness_timeout(mut self, limit: std::time::Duration) -> Self {
        self.harness_timeout = limit;
        self
    }

    /// How many sessions keep an open trajectory scope (at least 1).
    #[must_use]
    pub fn max_session_scopes(mut self, scopes: usize) -> Self {
        self.max_session_scopes = scopes;
        self
    }

    /// What an escalate verdict on a tool call does; [`EscalationMode::Ask`]
    /// when an approver is configured, [`EscalationMode::Deny`] otherwise.
    #[must_use]
    pub fn escalation(mut self, mode: EscalationMode) -> Self {
        self.escalation = Some(mode);
        self
    }

    /// Who decides escalated tool calls.
    #[must_use]
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// The plugin, or why it cannot be configured.
    pub fn build(self) -> Result<SonderaHarnessPlugin, PluginError> {
        let source = self.source?;
        if self.max_session_scopes == 0 {
            return Err(PluginError::NoCapacity);
        }
        let escalation = match (self.escalation, &self.approver) {
            (Some(EscalationMode::Ask), None) => return Err(PluginError::NoApprover),
            (Some(mode), _) => mode,
            (None, Some(_)) => EscalationMode::Ask,
            (None, None) => EscalationMode::Deny,
        };
        Ok(SonderaHarnessPlugin {
            governor: Arc::new(Governor {
                sessions: Sessions::new(self.max_session_scopes, source, self.harness_timeout),
                catalog: Catalog::default(),
                trees: RwLock::new(Vec::new()),
                escalation,
                approver: self.approver,
            }),
        })
    }
}
