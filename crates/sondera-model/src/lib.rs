//! The trajectory event model of Sondera Harness and its JSON wire format.
//!
//! Every step an agent takes becomes an [`Event`]: an envelope (who, when, in
//! which trajectory, caused by what) around a [`Payload`]. Payloads fall into
//! four categories ([`PayloadCategory`]): *actions* the agent wants to take
//! (tool calls, shell commands, web fetches, file operations), *observations*
//! it receives (prompts, thoughts, tool outputs), *control* events of the
//! trajectory's lifecycle (started, completed, adjudicated, ...) and *state*
//! snapshots.
//!
//! The wire format is JSON with `snake_case` names. The payload is internally
//! tagged by `type` (`{"type": "shell_command", "call_id": ..., "command":
//! ...}`), so an event is readable and writable by hand and by any language.
//! [`event_json_schema`] generates the JSON Schema of the envelope from these
//! types; the checked-in copy under `schema/` is compared against it in CI so
//! the documented format cannot drift from the code.
//!
//! An adjudication verdict is an [`Adjudicated`] value: the decision, the mode
//! it was made in, and the policies that decided it.
//! [`Adjudicated::deny_message`] renders it for the agent to read.

mod adjudication;
mod agent;
mod call_id;
mod event;
mod grant;
mod names;
mod nesting;
mod payload;
pub mod provenance;
mod reuse;
mod state;
mod whole_number;

pub use names::{UnknownName, parse_name, variant_named, variant_names};

/// What the enum macros' expansions name, wherever they are used.
#[doc(hidden)]
pub mod __names {
    pub use {schemars, serde, strum};
}

// The enum macros name this crate by its name, which inside it needs this.
extern crate self as sondera_model;

pub use adjudication::{Adjudicated, Decision, DecisionIds, Mode, PolicyMetadata, decision_id};
pub use agent::{Agent, AgentCard, CollaborationMode, SubAgent, Tool};
pub use call_id::{
    Adapter, MAX_PROVIDER_CALL_ID_BYTES, ProviderCallIdRejection, admit_provider_call_id,
    rejected_provider_call_ids,
};
pub use event::{
    Actor, ActorKind, Causality, Event, EventDecodeError, ExecutionAttribution, ID_PATTERN,
    event_json_schema,
};
pub use grant::{ActionShape, Approval, CommandShape, Grant, GrantScope};
pub use nesting::{MAX_JSON_DEPTH, json_depth_exceeds};
pub use payload::{FileOperationKind, Payload, PayloadCategory, PromptRole};
pub use state::{
    MAX_PENDING_CALLS, MAX_TOOLS_USED, MAX_UNTRUSTED_COMMANDS, MAX_WRITTEN_SCRIPTS, PendingCall,
    ScriptRisk, TrajectoryState, WrittenScript,
};
