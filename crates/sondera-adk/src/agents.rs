//! Wiring into adk-rust: the runner's plugin, and the gates every governed
//! LLM agent carries.

use std::sync::Arc;

use adk_agent::LlmAgentBuilder;
use adk_core::{
    AdkError, Agent as AdkAgent, CallbackContext, Content, InvocationContext, Llm, LlmRequest,
    LlmResponse, Tool,
};
use adk_plugin::{
    AfterModelCallResult, AfterToolCallResult, BeforeModelCallResult, BeforeToolCallResult,
    EnhancedPlugin, Plugin, PluginConfig, PluginContext,
};
use async_trait::async_trait;
use serde_json::Value;

use crate::SonderaHarnessPlugin;
use crate::gates::{Governor, ResponseStage, ToolGate};
use crate::tree::AgentKind;

/// Builds an adk-rust `LlmAgent` with the plugin's gates installed, and
/// remembers its model and tools for the agent card. Anything not offered
/// here is set on the underlying builder with [`Self::configure`]; add tools
/// with [`Self::tool`] so the card lists them.
pub struct GovernedLlmAgentBuilder {
    plugin: SonderaHarnessPlugin,
    name: String,
    description: String,
    instruction: String,
    model: Option<Arc<dyn Llm>>,
    tools: Vec<Arc<dyn Tool>>,
    sub_agents: Vec<Arc<dyn AdkAgent>>,
    configure: Vec<Box<dyn FnOnce(LlmAgentBuilder) -> LlmAgentBuilder>>,
}

impl GovernedLlmAgentBuilder {
    pub(crate) fn new(plugin: SonderaHarnessPlugin, name: String) -> Self {
        Self {
            plugin,
            name,
            description: String::new(),
            instruction: String::new(),
            model: None,
            tools: Vec::new(),
            sub_agents: Vec::new(),
            configure: Vec::new(),
        }
    }

    /// What the agent does, for the model that may transfer to it.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The agent's instruction to its model.
    #[must_use]
    pub fn instruction(mut self, instruction: impl Into<String>) -> Self {
        self.instruction = instruction.into();
        self
    }

    /// The model the agent calls.
    #[must_use]
    pub fn model(mut self, model: Arc<dyn Llm>) -> Self {
        self.model = Some(model);
        self
    }

    /// A tool the agent may call.
    #[must_use]
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        self.tools.push(tool);
        self
    }

    /// A sub-agent it can transfer to; it must be governed by this plugin too.
    #[must_use]
    pub fn sub_agent(mut self, agent: Arc<dyn AdkAgent>) -> Self {
        self.sub_agents.push(agent);
        self
    }

    /// Further settings of the underlying `LlmAgentBuilder`.
    #[must_use]
    pub fn configure(
        mut self,
        configure: impl FnOnce(LlmAgentBuilder) -> LlmAgentBuilder + 'static,
    ) -> Self {
        self.configure.push(Box::new(configure));
        self
    }

    /// The agent, registered with the plugin, or why it cannot be.
    pub fn build(self) -> Result<Arc<dyn AdkAgent>, AdkError> {
        let model = self
            .model
            .ok_or_else(|| AdkError::config(format!("agent `{}` needs a model", self.name)))?;
        let governor = self.plugin.governor.clone();
        let mut builder = LlmAgentBuilder::new(&self.name)
            .description(&self.description)
            .instruction(&self.instruction)
            .model(model.clone())
            .before_callback(before_agent(governor.clone(), self.name.clone()))
            .after_model_callback(response_chunk(governor.clone(), self.name.clone()))
            .after_callback(after_agent(governor.clone(), self.name.clone()))
            .on_tool_error(Box::new(|ctx, tool, _args, error| {
                tracing::warn!(agent = ctx.agent_name(), tool = tool.name(), %error, "tool failed; ADK handles the error");
                Box::pin(async { Ok(None) })
            }))
            .enhanced_plugin(Arc::new(AgentGate {
                governor,
                agent: self.name.clone(),
            }));
        for tool in &self.tools {
            builder = builder.tool(tool.clone());
        }
        for agent in self.sub_agents {
            builder = builder.sub_agent(agent);
        }
        for configure in self.configure {
            builder = configure(builder);
        }
        let agent: Arc<dyn AdkAgent> = Arc::new(builder.build()?);
        self.plugin.register(
            &agent,
            AgentKind::Llm {
                model: model.name().to_string(),
                instruction: self.instruction,
                tools: self.tools,
            },
        );
        Ok(agent)
    }
}

// adk-rust reports the workflow agent as the context's agent inside
// sequential, parallel and loop agents, so every gate is told the name of
// the LLM agent it was installed on.

fn before_agent(governor: Arc<Governor>, agent: String) -> adk_core::BeforeAgentCallback {
    Box::new(move |ctx| {
        let governor = governor.clone();
        let agent = agent.clone();
        Box::pin(async move {
            governor.lease_for_agent(ctx.as_ref(), &agent).await?;
            Ok(None)
        })
    })
}

fn response_chunk(governor: Arc<Governor>, agent: String) -> adk_core::AfterModelCallback {
    Box::new(move |ctx, chunk| {
        let governor = governor.clone();
        let agent = agent.clone();
        Box::pin(async move {
            let (chunk, replaced) = governor
                .after_model(ctx.as_ref(), &agent, chunk, ResponseStage::Chunk)
                .await?;
            Ok(replaced.then_some(chunk))
        })
    })
}

fn after_agent(governor: Arc<Governor>, agent: String) -> adk_core::AfterAgentCallback {
    Box::new(move |ctx| {
        governor.release_agent(ctx.as_ref(), &agent);
        Box::pin(async { Ok(None) })
    })
}

/// The model and tool gates of one LLM agent. It runs after every other
/// plugin of the agent, so it judges the request, arguments and results as
/// they will actually be used.
struct AgentGate {
    governor: Arc<Governor>,
    agent: String,
}

#[async_trait]
impl EnhancedPlugin for AgentGate {
    fn name(&self) -> &str {
        "sondera-harness"
    }

    fn priority(&self) -> i32 {
        i32::MAX
    }

    async fn before_model_call(
        &self,
        request: LlmRequest,
        ctx: Arc<dyn CallbackContext>,
        _plugin_ctx: &PluginContext,
    ) -> adk_core::Result<BeforeModelCallResult> {
        Ok(
            match self
                .governor
                .before_model(ctx.as_ref(), &self.agent, &request)
                .await?
            {
                Some(response) => BeforeModelCallResult::ShortCircuit(response),
                None => BeforeModelCallResult::Continue(request),
            },
        )
    }

    async fn after_model_call(
        &self,
        response: LlmResponse,
        ctx: Arc<dyn CallbackContext>,
        _plugin_ctx: &PluginContext,
    ) -> adk_core::Result<AfterModelCallResult> {
        let (response, _) = self
            .governor
            .after_model(ctx.as_ref(), &self.agent, response, ResponseStage::Whole)
            .await?;
        Ok(AfterModelCallResult::Continue(response))
    }

    async fn before_tool_call(
        &self,
        tool: Arc<dyn Tool>,
        args: Value,
        ctx: Arc<dyn CallbackContext>,
        _plugin_ctx: &PluginContext,
    ) -> adk_core::Result<BeforeToolCallResult> {
        Ok(
            match self
                .governor
                .before_tool(ctx.as_ref(), &self.agent, tool.name(), &args)
                .await?
            {
                ToolGate::Run => BeforeToolCallResult::Continue(args),
                ToolGate::Blocked(error) => BeforeToolCallResult::ShortCircuit(error),
            },
        )
    }

    async fn after_tool_call(
        &self,
        tool: Arc<dyn Tool>,
        args: &Value,
        result: Value,
        ctx: Arc<dyn CallbackContext>,
        _plugin_ctx: &PluginContext,
    ) -> adk_core::Result<AfterToolCallResult> {
        let result = self
            .governor
            .after_tool(ctx.as_ref(), &self.agent, tool.name(), args, result)
            .await?;
        Ok(AfterToolCallResult::Continue(result))
    }
}

/// The run hooks for a runner's plugin manager.
pub(crate) fn runner_plugin(governor: Arc<Governor>) -> Plugin {
    let before_run = governor.clone();
    let user_message = governor.clone();
    let after_run = governor.clone();
    let close = governor;
    Plugin::new(PluginConfig {
        name: "sondera-harness".to_string(),
        before_run: Some(Box::new(move |ctx: Arc<dyn InvocationContext>| {
            let governor = before_run.clone();
            Box::pin(async move {
                governor.lease_for_run(&ctx).await?;
                Ok(None)
            })
        })),
        on_user_message: Some(Box::new(move |ctx, content: Content| {
            let governor = user_message.clone();
            Box::pin(async move { Ok(governor.user_message(&ctx, &content).await?) })
        })),
        after_run: Some(Box::new(move |ctx| {
            after_run.release_run(ctx.as_ref());
            Box::pin(async {})
        })),
        on_model_error: Some(Box::new(|ctx, _request, error| {
            tracing::warn!(agent = ctx.agent_name(), %error, "model call failed; ADK handles the error");
            Box::pin(async { Ok(None) })
        })),
        close_fn: Some(Box::new(move || {
            let governor = close.clone();
            Box::pin(async move {
                if let Err(error) = governor.sessions.close().await {
                    tracing::error!(%error, "closing the Sondera plugin left work undone");
                }
            })
        })),
        ..Default::default()
    })
}
