use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The root agent of a trajectory: the principal every policy is written for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Stable identifier of the agent (for ADK, the root agent's name).
    #[schemars(regex(pattern = crate::event::ID_PATTERN))]
    pub id: String,
    /// Who runs the agent, e.g. `google-adk`.
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// What the agent is made of; usually sent once, with `started`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<AgentCard>,
}

impl Agent {
    pub fn new(id: impl Into<String>, provider: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            provider: provider.into(),
            platform: None,
            card: None,
        }
    }

    #[must_use]
    pub fn with_platform(mut self, platform: impl Into<String>) -> Self {
        self.platform = Some(platform.into());
        self
    }

    #[must_use]
    pub fn with_card(mut self, card: AgentCard) -> Self {
        self.card = Some(card);
        self
    }

    /// The same agent without its card: what every event but `started` carries.
    pub fn without_card(&self) -> Self {
        // Field by field: cloning `self` first would copy the whole card
        // (tool schemas and all) only to drop it, on every event.
        Self {
            id: self.id.clone(),
            provider: self.provider.clone(),
            platform: self.platform.clone(),
            card: None,
        }
    }

    /// The card's declaration of `tool_name`, when the agent has a card listing it.
    pub fn tool(&self, tool_name: &str) -> Option<&Tool> {
        match self.card.as_ref()? {
            AgentCard::React { tools, .. } => tools.iter().find(|t| t.name == tool_name),
        }
    }
}

/// A description of the agent's make-up, tagged by agent architecture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentCard {
    /// A reason-act (tool-calling LLM) agent, possibly with sub-agents.
    React {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        system_instruction: String,
        /// Every tool in the agent tree, each listed once.
        #[serde(default)]
        tools: Vec<Tool>,
        #[serde(default)]
        sub_agents: Vec<SubAgent>,
    },
}

impl AgentCard {
    /// The free-form JSON of its tools' declarations.
    pub fn json_fields(&self) -> impl Iterator<Item = (&'static str, &serde_json::Value)> {
        let Self::React { tools, .. } = self;
        tools.iter().flat_map(|tool| {
            std::iter::once(&tool.parameters)
                .chain(&tool.parameters_json_schema)
                .chain(&tool.response)
                .chain(&tool.response_json_schema)
                .map(|value| ("agent.card.tools", value))
        })
    }
}

/// A tool the agent can call, as its declaration describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Parameters in the provider's own declaration format.
    #[serde(default)]
    pub parameters: serde_json::Value,
    /// Parameters as JSON Schema, when the declaration gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_json_schema: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_json_schema: Option<serde_json::Value>,
    /// Where the tool comes from (a toolset, an MCP server, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Hints about the tool's behaviour, as MCP tool annotations give them
    /// (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
    /// `openWorldHint`): a tool that says it only reads has no effect, and
    /// one that says it destroys has one whatever its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<serde_json::Value>,
}

/// A sub-agent in the tree below the root agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubAgent {
    pub name: String,
    /// Names from the root agent down to this agent's parent.
    pub parent_path: Vec<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub collaboration_mode: CollaborationMode,
    #[serde(default)]
    pub owned_tool_names: Vec<String>,
}

/// How a sub-agent receives control from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollaborationMode {
    /// An LLM parent transfers the conversation to it.
    Transfer,
    Sequential,
    Parallel,
    Loop,
    Custom,
}
