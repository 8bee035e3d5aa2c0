//! Escalations that wait for a decision.
//!
//! An escalate verdict on a tool call pauses that call until an [`Approver`]
//! decides. adk-rust gives a plugin callback no way to raise its own
//! confirmation request for one call (confirmation is decided per tool name
//! before callbacks run), so the application supplies the approver;
//! [`ConfirmationApprover`] puts any adk-rust [`ToolConfirmationHandler`]
//! behind it, so the front end that already confirms tool calls confirms
//! escalations too.

use std::sync::Arc;

use adk_core::{ToolConfirmationDecision, ToolConfirmationHandler, ToolConfirmationRequest};
use async_trait::async_trait;
use serde_json::Value;
pub use sondera_model::Approval;
use sondera_model::{ActionShape, Actor, Adjudicated, Payload};

use crate::sessions::SessionKey;

/// What the plugin does with an escalate verdict on a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscalationMode {
    /// Ask the configured [`Approver`]; the default when one is configured.
    Ask,
    /// Treat the escalation as a deny: for unattended runs, and the default
    /// without an approver.
    Deny,
    /// Let the call run and record that nobody was asked.
    AllowAndLog,
    /// Ask the operators of the harness server (`sondera serve`) and wait
    /// for their decision, up to the deadline the remote harness or the
    /// server sets; an expired approval denies the call. Needs a harness
    /// with operators behind it: a [`sondera_harness::RemoteHarness`].
    Operator,
}

/// The decision and who made it; recorded in the trajectory with that actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalDecision {
    /// What the person decided.
    pub approval: Approval,
    /// Who decided.
    pub decided_by: Actor,
}

/// One tool call waiting for a decision.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The session the step belongs to.
    pub session: SessionKey,
    /// The agent that wants to make the call.
    pub agent: String,
    /// The tool the step calls.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The model's id for this call, when it gave one.
    pub function_call_id: Option<String>,
    /// The call as it was judged.
    pub action: Payload,
    /// The escalate verdict: why a person is asked.
    pub verdict: Adjudicated,
    /// The escalated event, as its trajectory recorded it.
    pub event_id: String,
    /// What a session or always approval would cover; `None` when the call
    /// has no shape that can be trusted again (an unparsable command), so it
    /// can be approved once only.
    pub shape: Option<ActionShape>,
}

impl ApprovalRequest {
    /// The question, in words, for a person.
    pub fn question(&self) -> String {
        let mut text = format!(
            "Agent `{}` wants to call `{}` with {}.\n{}",
            self.agent,
            self.tool,
            self.arguments,
            self.verdict.deny_message()
        );
        if let Some(shape) = &self.shape {
            text.push_str(&format!("\nA standing approval would cover: {shape}"));
        }
        text
    }
}

/// Why an approver could not decide. The call is blocked.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ApprovalError(pub String);

/// Decides escalated tool calls, typically by asking a person.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks for a decision on `request`; an error blocks the step.
    async fn decide(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, ApprovalError>;
}

#[async_trait]
impl<A: Approver + ?Sized> Approver for Arc<A> {
    async fn decide(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, ApprovalError> {
        (**self).decide(request).await
    }
}

/// An [`Approver`] backed by an adk-rust [`ToolConfirmationHandler`]: approve
/// means once, deny means deny. The handler speaks for the person `decided_by`.
#[derive(Debug, Clone)]
pub struct ConfirmationApprover {
    handler: Arc<dyn ToolConfirmationHandler>,
    decided_by: Actor,
}

impl ConfirmationApprover {
    /// An approver that asks through ADK's tool confirmation `handler`.
    pub fn new(handler: Arc<dyn ToolConfirmationHandler>) -> Self {
        Self {
            handler,
            decided_by: Actor::human("adk-tool-confirmation"),
        }
    }

    /// Who the handler's decisions are recorded as.
    #[must_use]
    pub fn decided_by(mut self, person: impl Into<String>) -> Self {
        self.decided_by = Actor::human(person);
        self
    }
}

#[async_trait]
impl Approver for ConfirmationApprover {
    async fn decide(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, ApprovalError> {
        let confirmation = ToolConfirmationRequest {
            tool_name: request.tool.clone(),
            function_call_id: request.function_call_id.clone(),
            args: request.arguments.clone(),
        };
        let decision = self
            .handler
            .decide(&confirmation)
            .await
            .map_err(|e| ApprovalError(e.to_string()))?;
        Ok(ApprovalDecision {
            approval: match decision {
                ToolConfirmationDecision::Approve => Approval::Once,
                ToolConfirmationDecision::Deny => Approval::Deny,
            },
            decided_by: self.decided_by.clone(),
        })
    }
}

/// Approves every escalation, once, without asking: YOLO mode. It only ever
/// sees escalations, so a deny stays a deny.
#[derive(Debug, Clone, Copy, Default)]
pub struct Yolo;

#[async_trait]
impl Approver for Yolo {
    async fn decide(&self, _request: &ApprovalRequest) -> Result<ApprovalDecision, ApprovalError> {
        Ok(ApprovalDecision {
            approval: Approval::Once,
            decided_by: Actor::system("sondera-yolo"),
        })
    }
}
