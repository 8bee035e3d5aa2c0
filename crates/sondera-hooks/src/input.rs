//! One hook input of one agent, read into the steps it stands for.

use serde_json::{Map, Value};
use sondera_model::{Payload, PromptRole};

use crate::CodingAgent;
use crate::answer::Gate;
use crate::tools;

/// The largest hook input read (16 MiB): a tool's whole result arrives in
/// one, and anything longer is refused rather than judged in part.
pub const MAX_INPUT_BYTES: usize = 16 << 20;

/// Why a hook input cannot be judged. Each is answered as a block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HookInputError {
    /// The input is longer than [`MAX_INPUT_BYTES`].
    #[error("the hook input is {size} bytes, more than the {limit}-byte limit")]
    TooLarge {
        /// Its length.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The input is not JSON.
    #[error("the hook input is not JSON (line {line}, column {column}): {message}")]
    NotJson {
        /// Where, from 1.
        line: usize,
        /// Where in the line, from 1.
        column: usize,
        /// What the reader found.
        message: String,
    },
    /// The input is JSON but not an object.
    #[error("the hook input is not a JSON object")]
    NotObject,
    /// The input names no event and none was given.
    #[error(
        "the hook input has no `hook_event_name`; give the event after the agent (`sondera hook {agent} preToolUse`)"
    )]
    NoEvent {
        /// The agent.
        agent: CodingAgent,
    },
    /// The event is not one this crate knows for the agent.
    #[error("`{event}` is not a {agent} hook event sondera knows, so it cannot be judged")]
    UnknownEvent {
        /// The agent.
        agent: CodingAgent,
        /// The event as given.
        event: String,
    },
    /// A field the event needs is missing or not of its type.
    #[error("{agent} `{event}` input: `{field}` is missing or is not {expected}")]
    Field {
        /// The agent.
        agent: CodingAgent,
        /// The event.
        event: String,
        /// The field.
        field: &'static str,
        /// What it should be.
        expected: &'static str,
    },
}

/// One hook call: which session of which agent it belongs to and the step
/// it stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct HookCall {
    /// The agent that called.
    pub agent: CodingAgent,
    /// The event, as the agent names it.
    pub event: String,
    /// The agent's session (conversation) id, as given.
    pub session_id: String,
    /// The working directory, when the agent says.
    pub cwd: Option<String>,
    /// The person the agent runs for, when the agent says.
    pub user: Option<String>,
    /// The sub-agent that made the step, when it is not the session's own.
    pub subagent: Option<String>,
    /// The agent's own id of the tool call, when it has one.
    pub tool_use_id: Option<String>,
    /// What the call stands for.
    pub step: Step,
}

/// What a hook call stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The session starts, or starts again after a pause.
    SessionStart {
        /// The first prompt, when the agent gives it.
        task: Option<String>,
        /// The agent resumes an earlier session.
        resumed: bool,
    },
    /// The session ends (it can be resumed later).
    SessionEnd {
        /// Why, in the agent's words.
        reason: String,
    },
    /// Steps to judge in order; the first that is not allowed answers.
    Judge {
        /// The payloads, in order.
        payloads: Vec<Payload>,
        /// What the answer can do.
        gate: Gate,
    },
    /// An event that is only a notification: recorded nowhere, answered with
    /// no decision.
    Notice,
}

/// What an event of an agent stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Start,
    End,
    Prompt { gate: bool },
    ToolCall,
    ToolResult { gate: bool },
    ToolFailure,
    CursorShell,
    CursorMcp,
    CursorRead,
    CursorShellDone,
    CursorMcpDone,
    CursorEdited,
    Notice,
}

/// Claude Code's events; Codex speaks the same dialect.
const CLAUDE_EVENTS: &[(&str, Role)] = &[
    ("SessionStart", Role::Start),
    ("SessionEnd", Role::End),
    ("UserPromptSubmit", Role::Prompt { gate: true }),
    ("PreToolUse", Role::ToolCall),
    ("PostToolUse", Role::ToolResult { gate: true }),
    ("PostToolUseFailure", Role::ToolFailure),
    // Judged at PreToolUse already; answering none leaves the person's dialog.
    ("PermissionRequest", Role::Notice),
    ("PermissionDenied", Role::Notice),
    ("Notification", Role::Notice),
    ("Stop", Role::Notice),
    ("StopFailure", Role::Notice),
    ("SubagentStart", Role::Notice),
    ("SubagentStop", Role::Notice),
    ("PreCompact", Role::Notice),
    ("PostCompact", Role::Notice),
    ("TeammateIdle", Role::Notice),
    ("TaskCompleted", Role::Notice),
    ("InstructionsLoaded", Role::Notice),
];

const GEMINI_EVENTS: &[(&str, Role)] = &[
    ("SessionStart", Role::Start),
    ("SessionEnd", Role::End),
    ("BeforeAgent", Role::Prompt { gate: true }),
    ("BeforeTool", Role::ToolCall),
    ("AfterTool", Role::ToolResult { gate: true }),
    ("AfterAgent", Role::Notice),
    ("BeforeModel", Role::Notice),
    ("AfterModel", Role::Notice),
    ("BeforeToolSelection", Role::Notice),
    ("Notification", Role::Notice),
    ("PreCompress", Role::Notice),
];

const CURSOR_EVENTS: &[(&str, Role)] = &[
    ("sessionStart", Role::Start),
    ("sessionEnd", Role::End),
    ("beforeSubmitPrompt", Role::Prompt { gate: true }),
    ("beforeShellExecution", Role::CursorShell),
    ("beforeMCPExecution", Role::CursorMcp),
    ("beforeReadFile", Role::CursorRead),
    ("afterShellExecution", Role::CursorShellDone),
    ("afterMCPExecution", Role::CursorMcpDone),
    ("afterFileEdit", Role::CursorEdited),
    ("stop", Role::Notice),
    ("afterAgentResponse", Role::Notice),
    ("afterAgentThought", Role::Notice),
    ("preCompact", Role::Notice),
    ("subagentStart", Role::Notice),
    ("subagentStop", Role::Notice),
];

/// Copilot CLI's events under their camelCase names; the PascalCase ones of
/// its VS Code compatible format are read as these (see [`copilot_event`]).
const COPILOT_EVENTS: &[(&str, Role)] = &[
    ("sessionStart", Role::Start),
    ("sessionEnd", Role::End),
    // Copilot reads no answer to these two: they are recorded, so what
    // they bring in taints the session, but cannot be blocked.
    ("userPromptSubmitted", Role::Prompt { gate: false }),
    ("postToolUse", Role::ToolResult { gate: false }),
    ("preToolUse", Role::ToolCall),
    ("postToolUseFailure", Role::ToolFailure),
    ("permissionRequest", Role::Notice),
    ("agentStop", Role::Notice),
    ("subagentStart", Role::Notice),
    ("subagentStop", Role::Notice),
    ("errorOccurred", Role::Notice),
    ("notification", Role::Notice),
    ("preCompact", Role::Notice),
];

fn events_of(agent: CodingAgent) -> &'static [(&'static str, Role)] {
    match agent {
        CodingAgent::ClaudeCode | CodingAgent::Codex => CLAUDE_EVENTS,
        CodingAgent::GeminiCli => GEMINI_EVENTS,
        CodingAgent::Cursor => CURSOR_EVENTS,
        CodingAgent::Copilot => COPILOT_EVENTS,
    }
}

/// The camelCase name of a Copilot event given in either of its formats.
fn copilot_event(event: &str) -> String {
    match event {
        "UserPromptSubmit" => "userPromptSubmitted".into(),
        "Stop" => "agentStop".into(),
        other => {
            let mut chars = other.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_lowercase().to_string() + chars.as_str()
            })
        }
    }
}

/// The events of `agent` whose answer can stop something, and those that
/// are recorded: what `sondera hooks install` registers.
pub(crate) fn installed_events(agent: CodingAgent) -> Vec<&'static str> {
    events_of(agent)
        .iter()
        .filter(|(_, role)| *role != Role::Notice && *role != Role::ToolFailure)
        // Codex has no session-end event.
        .filter(|(name, _)| !(agent == CodingAgent::Codex && *name == "SessionEnd"))
        .map(|(name, _)| *name)
        .collect()
}

/// Field names, in every spelling the agents use.
mod keys {
    pub(super) const EVENT: &[&str] = &["hook_event_name", "hookEventName"];
    pub(super) const SESSION: &[&str] = &["session_id", "sessionId", "conversation_id"];
    pub(super) const CWD: &[&str] = &["cwd"];
    pub(super) const TOOL: &[&str] = &["tool_name", "toolName"];
    pub(super) const TOOL_INPUT: &[&str] = &["tool_input", "toolArgs", "toolInput"];
    pub(super) const TOOL_RESPONSE: &[&str] = &[
        "tool_response",
        "tool_output",
        "toolResult",
        "tool_result",
        "result_json",
    ];
    pub(super) const TOOL_USE_ID: &[&str] = &["tool_use_id", "toolUseId"];
    pub(super) const PROMPT: &[&str] = &["prompt"];
    pub(super) const SUBAGENT: &[&str] = &["agent_type", "agent_id"];
    pub(super) const ERROR: &[&str] = &["error"];
    pub(super) const START_PROMPT: &[&str] = &["initialPrompt", "initial_prompt"];
    pub(super) const END_REASON: &[&str] = &["reason", "status"];
}

impl HookCall {
    /// Reads one hook input of `agent`. `event` names the event when the
    /// input does not (Copilot CLI's camelCase inputs carry no name).
    pub fn parse(
        agent: CodingAgent,
        event: Option<&str>,
        input: &[u8],
    ) -> Result<Self, HookInputError> {
        if input.len() > MAX_INPUT_BYTES {
            return Err(HookInputError::TooLarge {
                size: input.len(),
                limit: MAX_INPUT_BYTES,
            });
        }
        let value: Value = serde_json::from_slice(input).map_err(|e| HookInputError::NotJson {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let Value::Object(fields) = value else {
            return Err(HookInputError::NotObject);
        };
        let named = string(&fields, keys::EVENT).or(event.map(str::to_string));
        let mut event = named.ok_or(HookInputError::NoEvent { agent })?;
        if agent == CodingAgent::Copilot {
            event = copilot_event(&event);
        }
        let role = events_of(agent)
            .iter()
            .find(|(name, _)| *name == event)
            .map(|(_, role)| *role)
            .ok_or_else(|| HookInputError::UnknownEvent {
                agent,
                event: event.clone(),
            })?;
        let reader = Reader {
            agent,
            event: &event,
            fields: &fields,
        };
        let session_id = reader.required(keys::SESSION, "a session id")?;
        let step = reader.step(role)?;
        Ok(Self {
            agent,
            session_id,
            cwd: string(&fields, keys::CWD).or_else(|| first_workspace_root(&fields)),
            user: string(&fields, &["user_email"]),
            subagent: string(&fields, keys::SUBAGENT),
            tool_use_id: string(&fields, keys::TOOL_USE_ID),
            event,
            step,
        })
    }
}

/// Reads the fields of one event.
struct Reader<'a> {
    agent: CodingAgent,
    event: &'a str,
    fields: &'a Map<String, Value>,
}

impl Reader<'_> {
    fn missing(&self, field: &'static str, expected: &'static str) -> HookInputError {
        HookInputError::Field {
            agent: self.agent,
            event: self.event.to_string(),
            field,
            expected,
        }
    }

    fn required(
        &self,
        keys: &[&'static str],
        expected: &'static str,
    ) -> Result<String, HookInputError> {
        string(self.fields, keys).ok_or_else(|| self.missing(keys[0], expected))
    }

    /// The tool's arguments: an object, or a JSON text of one.
    fn tool_input(&self) -> Value {
        match keys::TOOL_INPUT.iter().find_map(|k| self.fields.get(*k)) {
            Some(Value::String(text)) => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| serde_json::json!({ "input": text })),
            Some(Value::Null) | None => Value::Object(Map::new()),
            Some(other) => other.clone(),
        }
    }

    fn tool_response(&self) -> Value {
        match keys::TOOL_RESPONSE.iter().find_map(|k| self.fields.get(*k)) {
            // Cursor sends MCP results as JSON text.
            Some(Value::String(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
            Some(value) => value.clone(),
            None => Value::Null,
        }
    }

    fn tool_action(&self) -> Result<Payload, HookInputError> {
        let tool = self.required(keys::TOOL, "a tool name")?;
        // An id no event could carry is replaced by one derived from the call.
        let id = string(self.fields, keys::TOOL_USE_ID).filter(|id| {
            id.len() <= sondera_model::MAX_PROVIDER_CALL_ID_BYTES && !id.contains('\0')
        });
        Ok(tools::action(
            self.agent,
            id.as_deref(),
            &tool,
            &self.tool_input(),
        ))
    }

    fn step(&self, role: Role) -> Result<Step, HookInputError> {
        let judge = |payloads: Vec<Payload>, gate: Gate| Ok(Step::Judge { payloads, gate });
        match role {
            Role::Start => Ok(Step::SessionStart {
                task: string(self.fields, keys::START_PROMPT),
                resumed: string(self.fields, &["source", "trigger"]).as_deref() == Some("resume"),
            }),
            Role::End => Ok(Step::SessionEnd {
                reason: string(self.fields, keys::END_REASON).unwrap_or_else(|| "ended".into()),
            }),
            Role::Notice => Ok(Step::Notice),
            Role::Prompt { gate } => {
                let text = self.required(keys::PROMPT, "the prompt's text")?;
                let prompt = Payload::Prompt {
                    role: PromptRole::User,
                    content: text,
                };
                judge(vec![prompt], if gate { Gate::Prompt } else { Gate::None })
            }
            Role::ToolCall => judge(vec![self.tool_action()?], Gate::Tool),
            Role::ToolResult { gate } => {
                let action = self.tool_action()?;
                let observation = tools::observation(&action, &self.tool_response());
                judge(
                    vec![observation],
                    if gate { Gate::Result } else { Gate::None },
                )
            }
            Role::ToolFailure => {
                let action = self.tool_action()?;
                let error = string(self.fields, keys::ERROR).unwrap_or_else(|| "failed".into());
                judge(vec![tools::failure(&action, &error)], Gate::None)
            }
            Role::CursorShell => judge(vec![self.cursor_shell()?], Gate::Tool),
            Role::CursorMcp => judge(vec![self.tool_action()?], Gate::Tool),
            Role::CursorRead => {
                let path = self.required(&["file_path"], "a path")?;
                let (read, content) = tools::cursor_read(&path, string(self.fields, &["content"]));
                judge(std::iter::once(read).chain(content).collect(), Gate::Read)
            }
            Role::CursorShellDone => {
                let action = self.cursor_shell()?;
                let output = serde_json::json!({ "output": string(self.fields, &["output"]).unwrap_or_default() });
                judge(vec![tools::observation(&action, &output)], Gate::None)
            }
            Role::CursorMcpDone => {
                let action = self.tool_action()?;
                judge(
                    vec![tools::observation(&action, &self.tool_response())],
                    Gate::None,
                )
            }
            Role::CursorEdited => {
                let path = self.required(&["file_path"], "a path")?;
                let edits = self.fields.get("edits").cloned().unwrap_or(Value::Null);
                judge(vec![tools::cursor_edit(&path, &edits)], Gate::None)
            }
        }
    }

    fn cursor_shell(&self) -> Result<Payload, HookInputError> {
        let command = self.required(&["command"], "a command line")?;
        Ok(tools::shell(None, &command, string(self.fields, keys::CWD)))
    }
}

/// The first non-blank string among `keys`.
fn string(fields: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| {
        fields
            .get(*key)?
            .as_str()
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    })
}

fn first_workspace_root(fields: &Map<String, Value>) -> Option<String> {
    fields
        .get("workspace_roots")?
        .as_array()?
        .iter()
        .find_map(|v| v.as_str().map(str::to_string))
}
