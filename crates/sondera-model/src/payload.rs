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
        /// The id that ties the call to its output.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The arguments, as the agent gave them.
        #[serde(default)]
        arguments: serde_json::Value,
    },
    /// A shell command the agent wants to run.
    ShellCommand {
        /// The id that ties the call to its output.
        call_id: String,
        /// The command line.
        command: String,
        /// The directory it runs in; the workspace root when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        working_dir: Option<String>,
    },
    /// A web page the agent wants to fetch.
    WebFetch {
        /// The id that ties the call to its output.
        call_id: String,
        /// The URL.
        url: String,
        /// What the agent wants from the page.
        #[serde(default)]
        prompt: String,
        /// The HTTP method, when the tool lets the agent choose it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        method: Option<String>,
        /// The request body the agent sends, as text (JSON bodies serialised).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// A file the agent wants to read, write, edit or delete.
    FileOperation {
        /// The id that ties the call to its output.
        call_id: String,
        /// What the operation does.
        operation: FileOperationKind,
        /// The file's path.
        path: String,
        /// What is written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// What an edit replaces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        old_content: Option<String>,
    },

    // Observations: what the agent receives.
    /// A prompt the agent receives.
    Prompt {
        /// Who it speaks as.
        role: PromptRole,
        /// Its text.
        content: String,
    },
    /// The agent's own reasoning.
    Thought {
        /// Its text.
        content: String,
    },
    /// What a tool call returned.
    ToolOutput {
        /// The call it answers.
        call_id: String,
        /// The tool returned rather than raised.
        success: bool,
        /// What it returned.
        #[serde(default)]
        output: serde_json::Value,
        /// The error it raised.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// What a shell command printed.
    ShellCommandOutput {
        /// The call it answers.
        call_id: String,
        /// The command's exit status.
        #[serde(deserialize_with = "crate::whole_number::i64")]
        exit_code: i64,
        /// What it printed on standard output.
        #[serde(default)]
        stdout: String,
        /// What it printed on standard error.
        #[serde(default)]
        stderr: String,
    },
    /// What a web fetch returned.
    WebFetchOutput {
        /// The call it answers.
        call_id: String,
        /// The URL fetched, after redirects.
        url: String,
        /// HTTP status; 0 when the fetch itself failed.
        #[serde(deserialize_with = "crate::whole_number::u16")]
        code: u16,
        /// The page's text.
        #[serde(default)]
        result: String,
    },
    /// What a file operation returned.
    FileOperationResult {
        /// The call it answers.
        call_id: String,
        /// The operation succeeded.
        success: bool,
        /// What a read returned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The error it failed with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },

    // Control: the trajectory's lifecycle.
    /// The trajectory starts.
    Started {
        /// The agent, with its card.
        agent: Agent,
        /// What the user asked for, if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
        /// The session (conversation) the trajectory belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
    },
    /// The trajectory ended as it should.
    Completed {
        /// What it achieved.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
    /// The trajectory ended with an error.
    Failed {
        /// What went wrong.
        reason: String,
    },
    /// Someone stopped the trajectory.
    Terminated {
        /// Why.
        reason: String,
        /// Who stopped it.
        terminated_by: Actor,
    },
    /// The trajectory paused.
    Suspended {
        /// Why.
        reason: String,
    },
    /// The trajectory goes on after a pause.
    Resumed {
        /// Who resumed it.
        resumed_by: Actor,
    },
    /// A verdict recorded as a step of its own (for instance a human's
    /// decision on an escalation).
    Adjudicated(Adjudicated),

    // State.
    /// What the agent's surroundings looked like.
    Snapshot {
        /// The working directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        working_dir: Option<String>,
        /// The files open in the agent's editor.
        #[serde(default)]
        open_files: Vec<String>,
        /// The git branch checked out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        git_branch: Option<String>,
        /// Anything else the integration records.
        #[serde(default)]
        variables: BTreeMap<String, serde_json::Value>,
    },
}

crate::wire_enum! {
    /// The four kinds of payload.
    pub enum PayloadCategory: "payload category" {
        /// What the agent wants to do.
        Action,
        /// What the agent receives.
        Observation,
        /// The trajectory's lifecycle.
        Control,
        /// A snapshot of the agent's surroundings.
        State,
    }
}

crate::wire_enum! {
    /// Who a prompt speaks as.
    pub enum PromptRole: "prompt role" {
        /// The person the agent works for.
        User,
        /// The agent's instructions.
        System,
        /// The agent itself, earlier in the conversation.
        Assistant,
    }
}

crate::wire_enum! {
    /// What a file operation does to its path.
    pub enum FileOperationKind: "file operation" {
        /// Reads the file.
        Read,
        /// Writes the whole file.
        Write,
        /// Replaces part of the file.
        Edit,
        /// Deletes the file.
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
                    .as_deref()
                    .into_iter()
                    .flat_map(AgentCard::json_fields)
                    .map(|(_, v)| ("payload.agent.card", v)),
            ),
            _ => Box::new(std::iter::empty()),
        }
    }

    /// Which of the four kinds the payload is.
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
