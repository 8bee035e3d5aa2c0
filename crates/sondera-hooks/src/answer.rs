//! Outcomes in each agent's dialect.

use serde_json::{Value, json};

use crate::CodingAgent;

/// What the answer to an event can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Stop a tool call before it runs (and, where the agent can, ask).
    Tool,
    /// Stop a file read before it runs; no agent asks about reads.
    Read,
    /// Keep a tool's result from the model, or tell it the result is blocked.
    Result,
    /// Stop a submitted prompt.
    Prompt,
    /// Nothing: the step has happened, or the agent reads no answer.
    None,
}

/// What the answer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to stop: the agent goes on under its own rules.
    Proceed,
    /// The step is refused, for this reason (the model reads it).
    Deny(String),
    /// A person at the agent must decide, for this reason.
    Ask(String),
    /// The step could not be judged; it is refused, for this reason.
    Fail(String),
}

/// A command hook's answer: what it prints and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandAnswer {
    /// The exit status.
    pub exit_code: u8,
    /// What goes to standard output (JSON, or nothing).
    pub stdout: String,
    /// What goes to standard error.
    pub stderr: String,
}

/// The status every agent but Copilot CLI reads as "blocked, stderr says why".
const BLOCK: u8 = 2;

/// A command hook's answer for `outcome` of `event`.
pub(crate) fn command(
    agent: CodingAgent,
    event: &str,
    gate: Gate,
    outcome: &Outcome,
) -> CommandAnswer {
    let failed = matches!(outcome, Outcome::Fail(_));
    let refused = refusal(agent, gate, outcome);
    // Codex documents exit status 2 as its one sure way to block a step;
    // every other agent but Copilot CLI blocks on it when judging failed.
    // Copilot CLI skips a hook that exits with any status but 0, so its
    // refusals are always the JSON it reads.
    let by_status = agent != CodingAgent::Copilot && (failed || agent == CodingAgent::Codex);
    if let Some((_, reason)) = refused.as_ref().filter(|_| by_status) {
        return CommandAnswer {
            exit_code: BLOCK,
            stdout: String::new(),
            stderr: format!("sondera: {reason}\n"),
        };
    }
    if let (true, None, Outcome::Fail(reason)) = (by_status, &refused, outcome) {
        // A failure where the answer stops nothing still says why.
        return CommandAnswer {
            exit_code: BLOCK,
            stdout: String::new(),
            stderr: format!("sondera: {reason}\n"),
        };
    }
    let body = http(agent, event, gate, outcome);
    let stdout = if body.as_object().is_some_and(|o| o.is_empty()) {
        String::new()
    } else {
        format!("{body}\n")
    };
    CommandAnswer {
        exit_code: 0,
        stdout,
        stderr: String::new(),
    }
}

/// The JSON answer for `outcome` of `event`: an HTTP hook's body, and a
/// command hook's output where it answers in JSON. `{}` decides nothing.
pub(crate) fn http(agent: CodingAgent, event: &str, gate: Gate, outcome: &Outcome) -> Value {
    match refusal(agent, gate, outcome) {
        Some((ask, reason)) => refuse(agent, event, gate, ask, &reason),
        None => proceed(agent, gate),
    }
}

/// Whether the answer refuses, and if so whether it asks and why. Only a
/// tool gate of an agent that asks can ask; elsewhere a step that needs a
/// person is refused with that said.
fn refusal(agent: CodingAgent, gate: Gate, outcome: &Outcome) -> Option<(bool, String)> {
    if gate == Gate::None {
        return None;
    }
    match outcome {
        Outcome::Proceed => None,
        Outcome::Deny(reason) | Outcome::Fail(reason) => Some((false, reason.clone())),
        Outcome::Ask(reason) if gate == Gate::Tool && agent.can_ask() => {
            Some((true, reason.clone()))
        }
        Outcome::Ask(reason) => Some((
            false,
            format!("a person must approve this step, and {agent} cannot ask here: {reason}"),
        )),
    }
}

fn proceed(agent: CodingAgent, gate: Gate) -> Value {
    match (agent, gate) {
        (CodingAgent::Cursor, Gate::Tool | Gate::Read) => json!({ "permission": "allow" }),
        (CodingAgent::Cursor, Gate::Prompt) => json!({ "continue": true }),
        _ => json!({}),
    }
}

fn refuse(agent: CodingAgent, event: &str, gate: Gate, ask: bool, reason: &str) -> Value {
    let decision = if ask { "ask" } else { "deny" };
    match (agent, gate) {
        // An input too broken to name its event gets the answer every
        // event of the dialect reads as a block.
        (CodingAgent::ClaudeCode | CodingAgent::Codex, Gate::Tool | Gate::Read)
            if !event.is_empty() =>
        {
            json!({
                "hookSpecificOutput": {
                    "hookEventName": event,
                    "permissionDecision": decision,
                    "permissionDecisionReason": reason,
                }
            })
        }
        (CodingAgent::ClaudeCode | CodingAgent::Codex, _) => {
            json!({ "decision": "block", "reason": reason })
        }
        (CodingAgent::GeminiCli, _) => json!({ "decision": "deny", "reason": reason }),
        (CodingAgent::Cursor, Gate::Prompt) => json!({ "continue": false, "user_message": reason }),
        (CodingAgent::Cursor, _) => json!({
            "permission": decision,
            "user_message": reason,
            "agent_message": reason,
        }),
        (CodingAgent::Copilot, _) => json!({
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }),
    }
}
