//! The coding agents, by the one name each has in every command and route.

use std::fmt;
use std::str::FromStr;

/// A coding agent whose hooks this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodingAgent {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// Google's Gemini CLI.
    GeminiCli,
    /// The Cursor editor's agent.
    Cursor,
    /// GitHub Copilot CLI.
    Copilot,
    /// OpenAI's Codex CLI.
    Codex,
}

impl CodingAgent {
    /// Every agent, in the order they are listed to people.
    pub const ALL: [CodingAgent; 5] = [
        Self::ClaudeCode,
        Self::GeminiCli,
        Self::Cursor,
        Self::Copilot,
        Self::Codex,
    ];

    /// The agent's name in commands (`sondera hook claude-code`), routes
    /// (`/v1/hooks/claude-code`) and recorded agent ids.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::GeminiCli => "gemini-cli",
            Self::Cursor => "cursor",
            Self::Copilot => "copilot",
            Self::Codex => "codex",
        }
    }

    /// Whether the agent's tool gate can hand a step to the person at the
    /// agent ("ask"). Elsewhere an escalation the operators do not take is a
    /// denial that says a person must approve.
    pub(crate) fn can_ask(self) -> bool {
        matches!(self, Self::ClaudeCode | Self::Cursor | Self::Copilot)
    }
}

impl fmt::Display for CodingAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not one of [`CodingAgent::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown coding agent `{0}`: expected one of claude-code, gemini-cli, cursor, copilot, codex"
)]
pub struct UnknownAgent(pub String);

impl FromStr for CodingAgent {
    type Err = UnknownAgent;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|agent| agent.name() == name)
            .ok_or_else(|| UnknownAgent(name.to_string()))
    }
}
