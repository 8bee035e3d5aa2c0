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
    #[error("the Sondera plugin is closing and accepts no new invocations")]
    Closed,
    #[error(
        "all {capacity} session scopes are in use by running invocations ({leases}); raise max_session_scopes or let a run finish"
    )]
    Full { capacity: usize, leases: LeaseList },
    #[error(
        "session {session} is quarantined ({reason}); it judges nothing until an eviction or close() ends its trajectory"
    )]
    Quarantined { session: SessionKey, reason: String },
    #[error(
        "invocation {invocation} of session {session} holds no lease: agent, model and tool steps are judged only inside a running invocation"
    )]
    NoLease {
        session: SessionKey,
        invocation: String,
    },
    #[error("could not start the trajectory of session {session}: {source}")]
    Initialize {
        session: SessionKey,
        source: Box<HarnessError>,
    },
    #[error("could not end the trajectory of idle session {session} to make room: {source}")]
    Evict {
        session: SessionKey,
        source: Box<HarnessError>,
    },
    #[error("the harness factory failed: {0}")]
    Factory(Box<HarnessError>),
    #[error(
        "the harness factory returned a harness already issued to session {session}; return a new scope for every call"
    )]
    HarnessReused { session: SessionKey },
    #[error(
        "the harness factory returned a harness that already holds trajectory {trajectory_id}; return an uninitialised scope"
    )]
    HarnessInUse { trajectory_id: String },
    #[error(
        "the given harness already holds trajectory {trajectory_id}; pass an uninitialised one"
    )]
    HarnessStarted { trajectory_id: String },
    #[error("escalation mode Ask needs an approver: configure one with `approver(..)`")]
    NoApprover,
    #[error("max_session_scopes must be at least 1")]
    NoCapacity,
    #[error("{0}")]
    Tree(#[from] TreeError),
    #[error(
        "agent `{agent}` is not part of a tree this plugin governs; register the root of its tree with `SonderaHarnessPlugin::root`"
    )]
    UnknownAgent { agent: String },
    #[error(
        "session {session} is governed as the agent tree rooted at `{expected}`, but this invocation runs `{found}`; a session keeps its agent tree"
    )]
    TreeChanged {
        session: SessionKey,
        expected: String,
        found: String,
    },
    #[error("Sondera Harness could not judge {step}, so it was blocked: {source}")]
    Harness {
        step: &'static str,
        source: Box<HarnessError>,
    },
    #[error("asking for approval failed, so the step was blocked: {0}")]
    Approval(String),
    #[error(
        "after-tool for `{tool}` does not match any call judged before it ran; its result was withheld"
    )]
    UnmatchedResult { tool: String },
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
    #[error("cannot close while invocations hold leases: {0}; let them finish, then close again")]
    LeasesActive(LeaseList),
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
