use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Actor, Adjudicated, Agent, AgentCard};

/// What happened in one step of a trajectory, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
// Deliberately exhaustive: the wire conversion, the store and the policy
// engine match every payload, so a new kind fails to compile wherever it is
// not yet handled instead of falling into a default arm.
pub enum Payload {
    // Actions: what the agent wants to do.
    /// A call of a tool that is not classified as a narrower action.
    ToolCall {
        call_id: String,
        tool: String,
        #[serde(default)]
        arguments: serde_json::Value,
    },
    ShellCommand {
        call_id: String,
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        working_dir: Option<String>,
    },
    WebFetch {
        call_id: String,
        url: String,
        #[serde(default)]
        prompt: String,
        /// The HTTP method, when the tool lets the agent choose it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        method: Option<String>,
        /// The request body the agent sends, as text (JSON bodies serialised).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    FileOperation {
        call_id: String,
        operation: FileOperationKind,
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        old_content: Option<String>,
    },

    // Observations: what the agent receives.
    Prompt {
        role: PromptRole,
        content: String,
    },
    Thought {
        content: String,
    },
    ToolOutput {
        call_id: String,
        success: bool,
        #[serde(default)]
        output: serde_json::Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    ShellCommandOutput {
        call_id: String,
        #[serde(deserialize_with = "crate::whole_number::i64")]
        exit_code: i64,
        #[serde(default)]
        stdout: String,
        #[serde(default)]
        stderr: String,
    },
    WebFetchOutput {
        call_id: String,
        url: String,
        /// HTTP status; 0 when the fetch itself failed.
        #[serde(deserialize_with = "crate::whole_number::u16")]
        code: u16,
        #[serde(default)]
        result: String,
    },
    FileOperationResult {
        call_id: String,
        success: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },

    // Control: the trajectory's lifecycle.
    Started {
        agent: Agent,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
        /// The session (conversation) the trajectory belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
    },
    Completed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    Failed {
        reason: String,
    },
    Terminated {
        reason: String,
        terminated_by: Actor,
    },
    Suspended {
        reason: String,
    },
    Resumed {
        resumed_by: Actor,
    },
    /// A verdict recorded as a step of its own (for instance a human's
    /// decision on an escalation).
    Adjudicated(Adjudicated),

    // State.
    Snapshot {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        working_dir: Option<String>,
        #[serde(default)]
        open_files: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        git_branch: Option<String>,
        #[serde(default)]
        variables: BTreeMap<String, serde_json::Value>,
    },
}

crate::wire_enum! {
    /// The four kinds of payload.
    pub enum PayloadCategory: "payload category" {
        Action,
        Observation,
        Control,
        State,
    }
}

crate::wire_enum! {
    /// Who a prompt speaks as.
    pub enum PromptRole: "prompt role" {
        User,
        System,
        Assistant,
    }
}

crate::wire_enum! {
    /// What a file operation does to its path.
    pub enum FileOperationKind: "file operation" {
        Read,
        Write,
        Edit,
        Delete,
    }
}

impl Payload {
    /// Its free-form JSON values, each with the name of its field.
    pub fn json_fields(&self) -> Box<dyn Iterator<Item = (&'static str, &serde_json::Value)> + '_> {
        match self {
            Self::ToolCall { arguments, .. } => {
                Box::new(std::iter::once(("payload.arguments", arguments)))
            }
            Self::ToolOutput { output, .. } => {
                Box::new(std::iter::once(("payload.output", output)))
            }
            Self::Snapshot { variables, .. } => {
                Box::new(variables.values().map(|v| ("payload.variables", v)))
            }
            Self::Adjudicated(verdict) => {
                Box::new(verdict.guardrails.iter().map(|g| ("payload.guardrails", g)))
            }
            Self::Started { agent, .. } => Box::new(
                agent
                    .card
                    .iter()
                    .flat_map(AgentCard::json_fields)
                    .map(|(_, v)| ("payload.agent.card", v)),
            ),
            _ => Box::new(std::iter::empty()),
        }
    }

    pub fn category(&self) -> PayloadCategory {
        match self {
            Self::ToolCall { .. }
            | Self::ShellCommand { .. }
            | Self::WebFetch { .. }
            | Self::FileOperation { .. } => PayloadCategory::Action,
            Self::Prompt { .. }
            | Self::Thought { .. }
            | Self::ToolOutput { .. }
            | Self::ShellCommandOutput { .. }
            | Self::WebFetchOutput { .. }
            | Self::FileOperationResult { .. } => PayloadCategory::Observation,
            Self::Started { .. }
            | Self::Completed { .. }
            | Self::Failed { .. }
            | Self::Terminated { .. }
            | Self::Suspended { .. }
            | Self::Resumed { .. }
            | Self::Adjudicated(_) => PayloadCategory::Control,
            Self::Snapshot { .. } => PayloadCategory::State,
        }
    }

    /// The wire tag of this payload (`shell_command`, `started`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ToolCall { .. } => "tool_call",
            Self::ShellCommand { .. } => "shell_command",
            Self::WebFetch { .. } => "web_fetch",
            Self::FileOperation { .. } => "file_operation",
            Self::Prompt { .. } => "prompt",
            Self::Thought { .. } => "thought",
            Self::ToolOutput { .. } => "tool_output",
            Self::ShellCommandOutput { .. } => "shell_command_output",
            Self::WebFetchOutput { .. } => "web_fetch_output",
            Self::FileOperationResult { .. } => "file_operation_result",
            Self::Started { .. } => "started",
            Self::Completed { .. } => "completed",
            Self::Failed { .. } => "failed",
            Self::Terminated { .. } => "terminated",
            Self::Suspended { .. } => "suspended",
            Self::Resumed { .. } => "resumed",
            Self::Adjudicated(_) => "adjudicated",
            Self::Snapshot { .. } => "snapshot",
        }
    }

    /// The tool-call id that ties an action to its observation, if any.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Self::ToolCall { call_id, .. }
            | Self::ShellCommand { call_id, .. }
            | Self::WebFetch { call_id, .. }
            | Self::FileOperation { call_id, .. }
            | Self::ToolOutput { call_id, .. }
            | Self::ShellCommandOutput { call_id, .. }
            | Self::WebFetchOutput { call_id, .. }
            | Self::FileOperationResult { call_id, .. } => Some(call_id),
            _ => None,
        }
    }

    /// Whether the trajectory ends with this event.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            Self::Completed { .. } | Self::Failed { .. } | Self::Terminated { .. }
        )
    }
}
