use std::sync::Arc;

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
    /// Where the agent runs (a product or deployment name), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// What the agent is made of; usually sent once, with `started`.
    // Shared: a card (tool schemas and all) travels with a trajectory's
    // start through the harness, the store and the record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<Arc<AgentCard>>,
}

impl Agent {
    /// An agent with no platform and no card.
    pub fn new(id: impl Into<String>, provider: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            provider: provider.into(),
            platform: None,
            card: None,
        }
    }

    /// The agent, running on `platform`.
    #[must_use]
    pub fn with_platform(mut self, platform: impl Into<String>) -> Self {
        self.platform = Some(platform.into());
        self
    }

    /// The agent, made of `card`.
    #[must_use]
    pub fn with_card(mut self, card: AgentCard) -> Self {
        self.card = Some(Arc::new(card));
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
        match self.card.as_deref()? {
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
        /// The model the agent calls, if known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// The root agent's instruction to its model.
        system_instruction: String,
        /// Every tool in the agent tree, each listed once.
        #[serde(default)]
        tools: Vec<Tool>,
        /// The sub-agents below the root, in tree order.
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
    /// The tool's name, as the agent calls it.
    pub name: String,
    /// What the tool does, as its declaration says.
    #[serde(default)]
    pub description: String,
    /// Parameters in the provider's own declaration format.
    #[serde(default)]
    pub parameters: serde_json::Value,
    /// Parameters as JSON Schema, when the declaration gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters_json_schema: Option<serde_json::Value>,
    /// What the tool returns, in the provider's declaration format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<serde_json::Value>,
    /// What the tool returns, as JSON Schema.
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
    /// The sub-agent's name.
    pub name: String,
    /// Names from the root agent down to this agent's parent.
    pub parent_path: Vec<String>,
    /// What it does, as its declaration says.
    #[serde(default)]
    pub description: String,
    /// The model it calls, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How it receives control from its parent.
    pub collaboration_mode: CollaborationMode,
    /// The tools that only it calls.
    #[serde(default)]
    pub owned_tool_names: Vec<String>,
}

/// How a sub-agent receives control from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollaborationMode {
    /// An LLM parent transfers the conversation to it.
    Transfer,
    /// A workflow parent runs it after the previous one.
    Sequential,
    /// A workflow parent runs it beside its siblings.
    Parallel,
    /// A workflow parent runs it again and again until told to stop.
    Loop,
    /// Its parent hands it control in its own way.
    Custom,
}
