use std::fmt;

use sondera_harness::HarnessError;

use crate::sessions::{ActiveLease, SessionKey};
use crate::tree::TreeError;

/// Leases, listed for an error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseList(pub Vec<ActiveLease>);

impl fmt::Display for LeaseList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, lease) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{lease}")?;
        }
        Ok(())
    }
}

/// Why the plugin refused or stopped a step. Every one of these blocks the
/// step it was raised for: the plugin never lets a step through because it
/// could not judge it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The plugin is closing.
    #[error("the Sondera plugin is closing and accepts no new invocations")]
    Closed,
    /// Every session scope is held by a running invocation.
    #[error(
        "all {capacity} session scopes are in use by running invocations ({leases}); raise max_session_scopes or let a run finish"
    )]
    Full {
        /// How many scopes there are.
        capacity: usize,
        /// Who holds them.
        leases: LeaseList,
    },
    /// The session judges nothing until its trajectory is ended.
    #[error(
        "session {session} is quarantined ({reason}); it judges nothing until an eviction or close() ends its trajectory"
    )]
    Quarantined {
        /// The session.
        session: SessionKey,
        /// Why it was quarantined.
        reason: String,
    },
    /// A step outside a running invocation.
    #[error(
        "invocation {invocation} of session {session} holds no lease: agent, model and tool steps are judged only inside a running invocation"
    )]
    NoLease {
        /// The session.
        session: SessionKey,
        /// The invocation.
        invocation: String,
    },
    /// The session's trajectory could not start.
    #[error("could not start the trajectory of session {session}: {source}")]
    Initialize {
        /// The session.
        session: SessionKey,
        /// Why.
        source: Box<HarnessError>,
    },
    /// An idle session could not be ended to make room.
    #[error("could not end the trajectory of idle session {session} to make room: {source}")]
    Evict {
        /// The session.
        session: SessionKey,
        /// Why.
        source: Box<HarnessError>,
    },
    /// The harness factory failed.
    #[error("the harness factory failed: {0}")]
    Factory(Box<HarnessError>),
    /// The factory returned a harness it had already issued.
    #[error(
        "the harness factory returned a harness already issued to session {session}; return a new scope for every call"
    )]
    HarnessReused {
        /// The session it was issued to.
        session: SessionKey,
    },
    /// The factory returned a harness that holds a trajectory.
    #[error(
        "the harness factory returned a harness that already holds trajectory {trajectory_id}; return an uninitialised scope"
    )]
    HarnessInUse {
        /// The trajectory it holds.
        trajectory_id: String,
    },
    /// The harness given holds a trajectory.
    #[error(
        "the given harness already holds trajectory {trajectory_id}; pass an uninitialised one"
    )]
    HarnessStarted {
        /// The trajectory it holds.
        trajectory_id: String,
    },
    /// Escalations are to be asked and nobody is configured to ask.
    #[error("escalation mode Ask needs an approver: configure one with `approver(..)`")]
    NoApprover,
    /// No session scope is allowed at all.
    #[error("max_session_scopes must be at least 1")]
    NoCapacity,
    /// The agent tree is not one the plugin can govern.
    #[error("{0}")]
    Tree(#[from] TreeError),
    /// An agent of no governed tree.
    #[error(
        "agent `{agent}` is not part of a tree this plugin governs; register the root of its tree with `SonderaHarnessPlugin::root`"
    )]
    UnknownAgent {
        /// The agent's name.
        agent: String,
    },
    /// A session ran a different agent tree.
    #[error(
        "session {session} is governed as the agent tree rooted at `{expected}`, but this invocation runs `{found}`; a session keeps its agent tree"
    )]
    TreeChanged {
        /// The session.
        session: SessionKey,
        /// The root it is governed as.
        expected: String,
        /// The root this invocation runs.
        found: String,
    },
    /// The harness could not judge a step, so it was blocked.
    #[error("Sondera Harness could not judge {step}, so it was blocked: {source}")]
    Harness {
        /// The kind of step.
        step: &'static str,
        /// Why it could not be judged.
        source: Box<HarnessError>,
    },
    /// Asking for approval failed, so the step was blocked.
    #[error("asking for approval failed, so the step was blocked: {0}")]
    Approval(String),
    /// A tool result with no call judged before it.
    #[error(
        "after-tool for `{tool}` does not match any call judged before it ran; its result was withheld"
    )]
    UnmatchedResult {
        /// The tool.
        tool: String,
    },
}

impl PluginError {
    pub(crate) fn harness(step: &'static str, source: HarnessError) -> Self {
        Self::Harness {
            step,
            source: Box::new(source),
        }
    }
}

impl From<PluginError> for adk_core::AdkError {
    fn from(error: PluginError) -> Self {
        adk_core::AdkError::agent(error.to_string())
    }
}

/// Why [`crate::SonderaHarnessPlugin::close`] did not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CloseError {
    /// Invocations still run.
    #[error("cannot close while invocations hold leases: {0}; let them finish, then close again")]
    LeasesActive(LeaseList),
    /// Some trajectories could not be ended; each with why.
    #[error("{}", finalize_message(.0))]
    Finalize(Vec<(SessionKey, HarnessError)>),
}

fn finalize_message(failures: &[(SessionKey, HarnessError)]) -> String {
    let mut message = format!(
        "{} session trajectories could not be ended and stay quarantined for a retry:",
        failures.len()
    );
    for (session, error) in failures {
        message.push_str(&format!("\n- {session}: {error}"));
    }
    message
}
