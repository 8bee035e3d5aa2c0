//! The agent tree a session is governed as: who is in it, where, with which
//! model and tools, and the agent card that describes it to policies.
//!
//! ADK's `Agent` trait exposes names, descriptions and sub-agents but not
//! models, tools or the kind of workflow an agent runs, so every agent of a
//! governed tree is registered with the plugin when it is built
//! ([`crate::SonderaHarnessPlugin::llm_agent`],
//! [`crate::SonderaHarnessPlugin::workflow`],
//! [`crate::SonderaHarnessPlugin::custom`]). An agent that was not registered
//! would run model and tool calls nobody judges, so a tree containing one is
//! refused.

use std::collections::HashMap;
use std::sync::Arc;

use adk_core::{Agent as AdkAgent, Tool as AdkTool};
use parking_lot::Mutex;
use serde_json::{Value, json};
use sondera_model::{Agent, AgentCard, CollaborationMode, SubAgent, Tool};

/// The name ADK gives the tool an LLM agent transfers control with.
pub const TRANSFER_TOOL: &str = "transfer_to_agent";

/// How a registered agent runs.
#[derive(Clone)]
pub(crate) enum AgentKind {
    Llm {
        model: String,
        instruction: String,
        tools: Vec<Arc<dyn AdkTool>>,
    },
    Workflow(Workflow),
    Custom,
}

/// The deterministic workflow agents of ADK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workflow {
    /// Runs its sub-agents one after another.
    Sequential,
    /// Runs its sub-agents side by side.
    Parallel,
    /// Runs its sub-agents again and again until told to stop.
    Loop,
}

impl Workflow {
    fn collaboration(self) -> CollaborationMode {
        match self {
            Self::Sequential => CollaborationMode::Sequential,
            Self::Parallel => CollaborationMode::Parallel,
            Self::Loop => CollaborationMode::Loop,
        }
    }
}

/// Why an agent tree cannot be governed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TreeError {
    /// Two agents share a name.
    #[error(
        "two agents are named `{name}`: at {first} and at {second}; agent names must be unique in a tree"
    )]
    DuplicateName {
        /// The name.
        name: String,
        /// Where the first is.
        first: String,
        /// Where the second is.
        second: String,
    },
    /// Two agents declare one tool differently.
    #[error(
        "tool `{tool}` is declared differently by `{first_owner}` and `{second_owner}`; give one of them another name"
    )]
    ConflictingTool {
        /// The tool.
        tool: String,
        /// One agent declaring it.
        first_owner: String,
        /// The other.
        second_owner: String,
    },
    /// An agent built outside the plugin.
    #[error(
        "agent `{name}` at {path} was not built through the Sondera plugin, so its model and tool calls would not be judged; build it with `llm_agent`, or register it with `workflow` or `custom`"
    )]
    Unregistered {
        /// The agent's name.
        name: String,
        /// Where it is in the tree.
        path: String,
    },
}

/// Agents registered with one plugin, keyed by the address of their `Arc`.
#[derive(Default)]
pub(crate) struct Catalog {
    kinds: Mutex<HashMap<usize, AgentKind>>,
}

pub(crate) fn address(agent: &Arc<dyn AdkAgent>) -> usize {
    Arc::as_ptr(agent) as *const () as usize
}

impl Catalog {
    pub(crate) fn register(&self, agent: &Arc<dyn AdkAgent>, kind: AgentKind) {
        self.kinds.lock().insert(address(agent), kind);
    }

    fn kind(&self, agent: &Arc<dyn AdkAgent>) -> Option<AgentKind> {
        self.kinds.lock().get(&address(agent)).cloned()
    }
}

/// One agent of a tree, in pre-order.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) name: String,
    address: usize,
    /// Names from the root to this agent, both included.
    pub(crate) path: Vec<String>,
}

/// An analysed agent tree.
#[derive(Debug)]
pub(crate) struct AgentTree {
    pub(crate) nodes: Vec<Node>,
    by_name: HashMap<String, usize>,
    /// The root agent with its card: the principal of every event.
    pub(crate) agent: Agent,
}

impl AgentTree {
    /// Analyses the tree under `root`.
    pub(crate) fn analyse(root: &Arc<dyn AdkAgent>, catalog: &Catalog) -> Result<Self, TreeError> {
        let mut walk = Walk::default();
        walk.visit(root, Vec::new(), None, catalog)?;
        let root_kind = catalog.kind(root).expect("the walk checked registration");
        let model = match &root_kind {
            AgentKind::Llm { model, .. } => Some(model.clone()),
            _ => None,
        };
        let instruction = match &root_kind {
            AgentKind::Llm { instruction, .. } => instruction.clone(),
            _ => root.description().to_string(),
        };
        if walk.can_transfer {
            walk.tools.push(transfer_tool());
        }
        let card = AgentCard::React {
            model,
            system_instruction: instruction,
            tools: walk.tools,
            sub_agents: walk.sub_agents,
        };
        let by_name = walk
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.name.clone(), i))
            .collect();
        Ok(Self {
            nodes: walk.nodes,
            by_name,
            agent: Agent::new(root.name(), "google-adk")
                .with_platform("adk-rust")
                .with_card(card),
        })
    }

    pub(crate) fn root_name(&self) -> &str {
        &self.nodes[0].name
    }

    /// Whether `agent` (the very instance, not just its name) is in this tree.
    pub(crate) fn contains(&self, agent: &Arc<dyn AdkAgent>) -> bool {
        let wanted = address(agent);
        self.nodes.iter().any(|n| n.address == wanted)
    }

    /// The agent named `name`, if it is in this tree.
    pub(crate) fn node(&self, name: &str) -> Option<&Node> {
        self.by_name.get(name).map(|&i| &self.nodes[i])
    }
}

#[derive(Default)]
struct Walk {
    nodes: Vec<Node>,
    tools: Vec<Tool>,
    /// Which agent declared each tool, by index into `tools`.
    tool_owners: HashMap<String, (usize, String)>,
    sub_agents: Vec<SubAgent>,
    can_transfer: bool,
}

impl Walk {
    fn visit(
        &mut self,
        agent: &Arc<dyn AdkAgent>,
        parent_path: Vec<String>,
        parent_kind: Option<&AgentKind>,
        catalog: &Catalog,
    ) -> Result<(), TreeError> {
        let name = agent.name().to_string();
        let mut path = parent_path.clone();
        path.push(name.clone());
        if let Some(first) = self.nodes.iter().find(|n| n.name == name) {
            return Err(TreeError::DuplicateName {
                name,
                first: first.path.join("/"),
                second: path.join("/"),
            });
        }
        let kind = catalog.kind(agent).ok_or_else(|| TreeError::Unregistered {
            name: name.clone(),
            path: path.join("/"),
        })?;
        let owned = self.declare_tools(&name, &kind)?;
        if let Some(parent_kind) = parent_kind {
            self.sub_agents.push(SubAgent {
                name: name.clone(),
                parent_path: parent_path.clone(),
                description: agent.description().to_string(),
                model: match &kind {
                    AgentKind::Llm { model, .. } => Some(model.clone()),
                    _ => None,
                },
                collaboration_mode: match parent_kind {
                    AgentKind::Llm { .. } => CollaborationMode::Transfer,
                    AgentKind::Workflow(workflow) => workflow.collaboration(),
                    AgentKind::Custom => CollaborationMode::Custom,
                },
                owned_tool_names: owned,
            });
        }
        if matches!(kind, AgentKind::Llm { .. }) && !agent.sub_agents().is_empty() {
            self.can_transfer = true;
        }
        self.nodes.push(Node {
            name,
            address: address(agent),
            path: path.clone(),
        });
        for child in agent.sub_agents() {
            self.visit(child, path.clone(), Some(&kind), catalog)?;
        }
        Ok(())
    }

    /// Adds `owner`'s tools to the card once each; returns their names.
    fn declare_tools(&mut self, owner: &str, kind: &AgentKind) -> Result<Vec<String>, TreeError> {
        let AgentKind::Llm { tools, .. } = kind else {
            return Ok(Vec::new());
        };
        let mut names = Vec::with_capacity(tools.len());
        for tool in tools {
            let declared = declaration(tool.as_ref());
            match self.tool_owners.get(&declared.name) {
                Some((index, first_owner)) if self.tools[*index] != declared => {
                    return Err(TreeError::ConflictingTool {
                        tool: declared.name,
                        first_owner: first_owner.clone(),
                        second_owner: owner.to_string(),
                    });
                }
                Some(_) => {}
                None => {
                    self.tool_owners
                        .insert(declared.name.clone(), (self.tools.len(), owner.to_string()));
                    self.tools.push(declared.clone());
                }
            }
            names.push(declared.name);
        }
        Ok(names)
    }
}

/// A tool as the card describes it, from its ADK declaration.
fn declaration(tool: &dyn AdkTool) -> Tool {
    let parameters = tool.parameters_schema();
    let response = tool.response_schema();
    Tool {
        name: tool.name().to_string(),
        description: tool.description().to_string(),
        parameters: parameters.clone().unwrap_or(Value::Null),
        parameters_json_schema: parameters,
        response: None,
        response_json_schema: response,
        source: Some("adk-rust".into()),
        annotations: None,
    }
}

fn transfer_tool() -> Tool {
    let parameters = json!({
        "type": "object",
        "properties": {"agent_name": {"type": "string"}},
        "required": ["agent_name"],
    });
    Tool {
        name: TRANSFER_TOOL.into(),
        description: "Transfers control of the conversation to another agent of the tree".into(),
        parameters: parameters.clone(),
        parameters_json_schema: Some(parameters),
        response: None,
        response_json_schema: None,
        source: Some("adk-rust".into()),
        annotations: None,
    }
}
