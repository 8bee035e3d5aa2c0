//! Harnesses: the interface an agent integration adjudicates through, and the
//! embedded implementation.
//!
//! A [`Harness`] is one *trajectory scope*: it owns at most one trajectory at
//! a time and walks it through its lifecycle (`initialize` sends `started`,
//! `finalize` sends `completed`, `fail` sends `failed`, `resume` reattaches to
//! a recorded trajectory), judging every step in between with `adjudicate`.
//! Integrations serving many sessions take one scope per session from
//! [`Harness::new_scope`]: scopes share configuration and the expensive
//! resources (policy engine, store, transport) but never trajectory state.
//!
//! The trajectory id is published *before* the `started` or `resumed` event
//! is sent and cleared only once a terminal event has been accepted, so a
//! failure at either end leaves the id visible for cleanup rather than
//! orphaning a trajectory that may exist.
//!
//! [`LocalHarness`] runs everything in process: an [`Adjudicator`] (policy
//! engine plus store plus per-trajectory state) that scopes share. The same
//! adjudicator backs the harness server, so an embedded agent and a remote one
//! are judged by identical code.

mod adjudicator;
pub mod corpus;
mod local;
#[cfg(feature = "remote")]
mod records;
#[cfg(feature = "remote")]
pub mod remote;
pub mod replay;
mod scope;

pub use adjudicator::{Adjudicator, Recorded};
pub use local::{LocalHarness, LocalHarnessBuilder, default_data_dir};
#[cfg(feature = "remote")]
pub use records::RemoteRecords;
#[cfg(feature = "remote")]
pub use remote::{RemoteConfig, RemoteHarness};
pub use scope::{Backend, ScopedHarness};
pub use sondera_guard::{ToolOutcome, classify_tool_call, observation_for};
/// What [`Harness::ask_operator`] answers with.
pub use sondera_store::{ApprovalRecord, ApprovalState};

use async_trait::async_trait;
use sondera_model::{ActionShape, Adjudicated, Agent, Event, EventDecodeError, Grant, Payload};
use sondera_store::{StoreError, TrajectoryStatus};

/// Why a harness call failed. Every error from a gate must block the step it
/// was judging: nothing is ever allowed because the harness failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The scope already holds a trajectory.
    #[error(
        "this scope already has trajectory {trajectory_id}; take a new scope for another trajectory"
    )]
    AlreadyInitialized {
        /// The trajectory it holds.
        trajectory_id: String,
    },
    /// A step came before `initialize` or `resume`.
    #[error("no trajectory: call initialize or resume before adjudicating")]
    NotInitialized,
    /// No agent was given or configured.
    #[error("no agent: pass one to initialize or configure the harness with one")]
    NoAgent,
    /// An event of another trajectory was sent to this scope.
    #[error("event belongs to trajectory {found}, but this scope holds {expected}")]
    TrajectoryMismatch {
        /// The scope's trajectory.
        expected: String,
        /// The event's.
        found: String,
    },
    /// No trajectory with this id is recorded.
    #[error("trajectory {0} is not recorded")]
    UnknownTrajectory(String),
    /// A second `started` event for a trajectory.
    #[error("trajectory {0} has already started")]
    AlreadyStarted(String),
    /// A step of a trajectory that has ended.
    #[error("trajectory {trajectory_id} has ended ({status}); it accepts no more events")]
    TrajectoryEnded {
        /// The trajectory.
        trajectory_id: String,
        /// How it ended.
        status: TrajectoryStatus,
    },
    /// The event is not valid.
    #[error("invalid event: {0}")]
    InvalidEvent(#[from] EventDecodeError),
    /// The store failed; the step was not recorded.
    #[error("the trajectory store failed: {0}")]
    Store(#[from] StoreError),
    /// The harness is configured wrongly.
    #[error("harness configuration: {0}")]
    Config(String),
    /// The server could not be reached.
    #[error("cannot reach the harness server: {0}")]
    Transport(String),
    /// The server did not answer in time.
    #[error("the harness server did not answer within {0:?}; the step may have been recorded")]
    Timeout(std::time::Duration),
    /// Approvals need a server, and this harness has none.
    #[error(
        "this harness has no operators to ask: escalations reach operators through `sondera serve` and a remote harness"
    )]
    NoOperators,
    /// Adjudication took past the request's deadline.
    #[error(
        "judging the step took past its deadline ({0:?}); it was not recorded and may be sent again"
    )]
    DeadlineExceeded(std::time::Duration),
    /// Adjudication panicked; the step was not recorded.
    #[error("the harness panicked: {0}")]
    Panicked(String),
    /// The server refused the request.
    #[error("the harness server refused the request ({code}): {message}")]
    Remote {
        /// The gRPC status code.
        code: String,
        /// The server's reason.
        message: String,
    },
}

/// One trajectory scope of a governance harness.
#[async_trait]
pub trait Harness: Send + Sync {
    /// Starts a new trajectory for `agent` (or the harness's configured
    /// agent) and returns its id; sends `started`.
    async fn initialize(
        &mut self,
        agent: Option<Agent>,
        session_id: Option<String>,
    ) -> Result<String, HarnessError>;

    /// Reattaches to a recorded trajectory; sends `resumed`.
    async fn resume(
        &mut self,
        trajectory_id: &str,
        agent: Option<Agent>,
    ) -> Result<(), HarnessError>;

    /// Ends the trajectory successfully; sends `completed`.
    async fn finalize(&mut self, summary: Option<String>) -> Result<(), HarnessError>;

    /// Ends the trajectory as failed; sends `failed`.
    async fn fail(&mut self, reason: &str) -> Result<(), HarnessError>;

    /// Judges one event of this scope's trajectory.
    async fn adjudicate(&mut self, event: Event) -> Result<Adjudicated, HarnessError>;

    /// Judges events in order, one verdict each. Stops at the first error;
    /// the events before it stay recorded.
    async fn adjudicates(&mut self, events: Vec<Event>) -> Result<Vec<Adjudicated>, HarnessError> {
        let mut verdicts = Vec::with_capacity(events.len());
        for event in events {
            verdicts.push(self.adjudicate(event).await?);
        }
        Ok(verdicts)
    }

    /// Records a standing approval for this scope's agent: a
    /// [`sondera_model::GrantScope::Session`] grant holds as long as this scope, a
    /// [`sondera_model::GrantScope::Always`] grant is kept durably by the harness.
    async fn grant(&mut self, grant: Grant) -> Result<(), HarnessError>;

    /// The grant that covers an action of `shape` by this scope's agent, if
    /// any. Consult it for escalations only: nothing covers a deny.
    async fn granted(&mut self, shape: &ActionShape) -> Result<Option<Grant>, HarnessError>;

    /// Asks an operator to decide this trajectory's escalated event
    /// `event_id` and waits until it is decided or expires (after
    /// `deadline`, when given). A session approval is kept in this scope;
    /// an "always" approval the server keeps. Only a harness with operators
    /// behind it (a remote harness) can; others return an error.
    async fn ask_operator(
        &mut self,
        event_id: &str,
        deadline: Option<std::time::Duration>,
    ) -> Result<ApprovalRecord, HarnessError> {
        let _ = (event_id, deadline);
        Err(HarnessError::NoOperators)
    }

    /// The trajectory this scope holds, if any.
    fn trajectory_id(&self) -> Option<&str>;

    /// The agent this scope's trajectory belongs to.
    fn agent(&self) -> Option<&Agent>;

    /// A fresh, uninitialised scope sharing this one's configuration and
    /// resources but no trajectory state.
    fn new_scope(&self) -> Box<dyn Harness>;

    /// An event of this scope's trajectory carrying `payload`, produced by the agent.
    fn event(&self, payload: Payload) -> Result<Event, HarnessError> {
        let trajectory_id = self.trajectory_id().ok_or(HarnessError::NotInitialized)?;
        let agent = self.agent().ok_or(HarnessError::NoAgent)?;
        Ok(Event::new(trajectory_id, agent, payload))
    }
}
