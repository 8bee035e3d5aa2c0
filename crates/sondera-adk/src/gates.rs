//! What is judged at each callback, and what a verdict does to the step.

use std::sync::Arc;

use adk_core::{
    Agent as AdkAgent, CallbackContext, Content, InvocationContext, LlmRequest, LlmResponse, Part,
    ReadonlyContext,
};
use parking_lot::RwLock;
use serde_json::{Value, json};
use sondera_guard::{ToolOutcome, action_shape, classify_tool_call, observation_for};
use sondera_model::{
    Actor, Adapter, Adjudicated, Decision, ExecutionAttribution, Grant, MAX_JSON_DEPTH, Payload,
    PromptRole, admit_provider_call_id, json_depth_exceeds,
};

use sondera_harness::ApprovalState;

use crate::bounded::bounded;
use crate::error::PluginError;
use crate::escalation::{Approval, ApprovalRequest, Approver, EscalationMode};
use crate::sessions::{PendingTool, SessionKey, SessionScope, Sessions, Taker, TreeChoice};
use crate::tree::{AgentTree, Catalog, TRANSFER_TOOL};

/// The plugin's state, shared by every callback.
pub(crate) struct Governor {
    pub(crate) sessions: Sessions,
    pub(crate) catalog: Catalog,
    pub(crate) trees: RwLock<Vec<Arc<AgentTree>>>,
    pub(crate) escalation: EscalationMode,
    pub(crate) approver: Option<Arc<dyn Approver>>,
}

/// Which view of a model response a gate sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResponseStage {
    Chunk,
    Whole,
}

/// What a before-tool gate decided.
pub(crate) enum ToolGate {
    Run,
    /// Do not run the tool; report this error object as its result.
    Blocked(Value),
}

fn session_key(ctx: &dyn ReadonlyContext) -> SessionKey {
    SessionKey {
        app: ctx.app_name().to_string(),
        user: ctx.user_id().to_string(),
        session: ctx.session_id().to_string(),
    }
}

/// The text a content carries: text parts, and the code and output of code
/// execution, one per line.
pub(crate) fn text_of(content: &Content) -> String {
    let mut text = String::new();
    for part in &content.parts {
        let piece = match part {
            Part::Text { text } => Some(text.as_str()),
            Part::ServerToolCall { server_tool_call } => code_field(server_tool_call, "code"),
            Part::ServerToolResponse {
                server_tool_response,
            } => code_field(server_tool_response, "output"),
            _ => None,
        };
        if let Some(piece) = piece.filter(|p| !p.is_empty()) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(piece);
        }
    }
    text
}

/// `field` of a code-execution part, at its top level or one object down
/// (`{"executable_code": {"code": ...}}`).
fn code_field<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str).or_else(|| {
        value
            .as_object()?
            .values()
            .find_map(|inner| inner.get(field).and_then(Value::as_str))
    })
}

/// The stand-in for a value nested too deep to judge or record.
fn too_deep(what: &str) -> Value {
    json!({ "error": format!(
        "Sondera Harness blocked this step: the {what} nested more than {MAX_JSON_DEPTH} levels deep, past what can be judged and recorded"
    ) })
}

fn blocked_result(verdict: &Adjudicated) -> Value {
    json!({ "error": verdict.deny_message() })
}

/// The action a call is judged as. Its call id is the model's when it gave
/// one, else a fresh one of the plugin's: never the tool name or anything
/// else a later call could repeat.
fn classify(tool: &str, args: &Value, provider_call_id: Option<&str>) -> Payload {
    let call_id = match provider_call_id {
        Some(id) => id.to_string(),
        None => format!("sondera-{}", uuid::Uuid::new_v4()),
    };
    classify_tool_call(&call_id, tool, args)
}

fn call_key(tool: &str, args: &Value) -> (String, String) {
    (tool.to_string(), args.to_string())
}

impl Governor {
    fn tree_with(&self, holds: impl Fn(&AgentTree) -> bool) -> Option<Arc<AgentTree>> {
        self.trees.read().iter().find(|t| holds(t)).cloned()
    }

    /// Leases the invocation from a runner hook, which knows the agent to run.
    pub(crate) async fn lease_for_run(
        &self,
        ctx: &Arc<dyn InvocationContext>,
    ) -> Result<Arc<SessionScope>, PluginError> {
        let agent = ctx.agent();
        let fits = |tree: &AgentTree| tree.contains(&agent);
        let choose = || {
            self.tree_with(|t| t.contains(&agent))
                .ok_or_else(|| PluginError::UnknownAgent {
                    agent: agent.name().to_string(),
                })
        };
        let trees = TreeChoice {
            agent: agent.name(),
            fits: &fits,
            choose: &choose,
        };
        self.sessions
            .acquire(
                &session_key(ctx.as_ref()),
                ctx.invocation_id(),
                Taker::Runner,
                &trees,
            )
            .await
    }

    /// Leases the invocation from the before-agent callback of LLM agent
    /// `name`, for agents run by a runner that does not carry the plugin.
    pub(crate) async fn lease_for_agent(
        &self,
        ctx: &dyn CallbackContext,
        name: &str,
    ) -> Result<Arc<SessionScope>, PluginError> {
        let fits = |tree: &AgentTree| tree.node(name).is_some();
        let choose = || {
            self.tree_with(|t| t.root_name() == name)
                .or_else(|| self.tree_with(|t| t.node(name).is_some()))
                .ok_or_else(|| PluginError::UnknownAgent {
                    agent: name.to_string(),
                })
        };
        let trees = TreeChoice {
            agent: name,
            fits: &fits,
            choose: &choose,
        };
        self.sessions
            .acquire(
                &session_key(ctx),
                ctx.invocation_id(),
                Taker::Agent(name),
                &trees,
            )
            .await
    }

    pub(crate) fn release_run(&self, ctx: &dyn ReadonlyContext) {
        self.sessions
            .release(&session_key(ctx), ctx.invocation_id(), Taker::Runner);
    }

    pub(crate) fn release_agent(&self, ctx: &dyn ReadonlyContext, name: &str) {
        let taker = Taker::Agent(name);
        self.sessions
            .release(&session_key(ctx), ctx.invocation_id(), taker);
    }

    /// The scope of a leased invocation.
    fn leased(&self, ctx: &dyn ReadonlyContext) -> Result<Arc<SessionScope>, PluginError> {
        let key = session_key(ctx);
        let no_lease = || PluginError::NoLease {
            session: key.clone(),
            invocation: ctx.invocation_id().to_string(),
        };
        let scope = self.sessions.scope(&key).ok_or_else(no_lease)?;
        scope.with_invocation(ctx.invocation_id(), |_| ())?;
        Ok(scope)
    }

    /// Adjudicates `payload` as a step of `agent_name` in `scope`'s trajectory.
    async fn adjudicate_step(
        &self,
        scope: &SessionScope,
        agent_name: &str,
        step: &'static str,
        payload: Payload,
        actor: Option<Actor>,
        provider_call_id: Option<String>,
    ) -> Result<Adjudicated, PluginError> {
        let (verdict, _) = self
            .judge_recorded(scope, agent_name, step, payload, actor, provider_call_id)
            .await?;
        Ok(verdict)
    }

    /// [`Self::judge`], with the id of the event it recorded.
    async fn judge_recorded(
        &self,
        scope: &SessionScope,
        agent_name: &str,
        step: &'static str,
        payload: Payload,
        actor: Option<Actor>,
        provider_call_id: Option<String>,
    ) -> Result<(Adjudicated, String), PluginError> {
        scope.check_usable()?;
        let node = scope
            .tree
            .node(agent_name)
            .ok_or_else(|| PluginError::UnknownAgent {
                agent: agent_name.to_string(),
            })?;
        let attribution = ExecutionAttribution {
            agent_name: node.name.clone(),
            agent_path: node.path.clone(),
        };
        let harness_error = |source| PluginError::harness(step, source);
        let mut harness = scope.harness.lock().await;
        let mut event = harness
            .event(payload)
            .map_err(harness_error)?
            .with_execution(attribution)
            .with_provider_call_id(provider_call_id);
        if let Some(actor) = actor {
            event = event.with_actor(actor);
        }
        let event_id = event.event_id.clone();
        let verdict = bounded(self.sessions.harness_timeout, harness.adjudicate(event))
            .await
            .map_err(harness_error)?;
        Ok((verdict, event_id))
    }

    /// The user's message: judged as a user prompt; a blocked message is
    /// replaced by the reason.
    pub(crate) async fn user_message(
        &self,
        ctx: &Arc<dyn InvocationContext>,
        content: &Content,
    ) -> Result<Option<Content>, PluginError> {
        let scope = self.lease_for_run(ctx).await?;
        let text = text_of(content);
        if text.is_empty() {
            return Ok(None);
        }
        let prompt = Payload::Prompt {
            role: PromptRole::User,
            content: text.clone(),
        };
        let actor = Actor::human(ctx.user_id());
        let verdict = self
            .adjudicate_step(
                &scope,
                ctx.agent_name(),
                "the user message",
                prompt,
                Some(actor),
                None,
            )
            .await?;
        let (seen, replacement) = if verdict.is_allowed() {
            (text, None)
        } else {
            let reason = verdict.deny_message();
            (reason.clone(), Some(Content::new("user").with_text(reason)))
        };
        scope.with_invocation(ctx.invocation_id(), |s| s.last_user_prompt = Some(seen))?;
        Ok(replacement)
    }

    /// The newest text the model is about to read, unless this invocation
    /// already judged it; `Some` is the response to give instead of calling
    /// the model.
    pub(crate) async fn before_model(
        &self,
        ctx: &dyn CallbackContext,
        agent: &str,
        request: &LlmRequest,
    ) -> Result<Option<LlmResponse>, PluginError> {
        let scope = self.leased(ctx)?;
        let newest = request.contents.iter().rev().find_map(|content| {
            let text = text_of(content);
            let role = match content.role.as_str() {
                "model" | "assistant" => PromptRole::Assistant,
                _ => PromptRole::User,
            };
            (!text.is_empty()).then_some((role, text))
        });
        let Some((role, text)) = newest else {
            return Ok(None);
        };
        let invocation = ctx.invocation_id();
        let seen = scope.with_invocation(invocation, |s| {
            s.last_prompt(role).as_deref() == Some(text.as_str())
        })?;
        if seen {
            return Ok(None);
        }
        let prompt = Payload::Prompt {
            role,
            content: text.clone(),
        };
        let verdict = self
            .adjudicate_step(&scope, agent, "the model input", prompt, None, None)
            .await?;
        scope.with_invocation(invocation, |s| *s.last_prompt(role) = Some(text))?;
        if verdict.is_allowed() {
            return Ok(None);
        }
        Ok(Some(LlmResponse {
            content: Some(Content::new("model").with_text(verdict.deny_message())),
            turn_complete: true,
            ..Default::default()
        }))
    }

    /// The model's response: its text is judged as an assistant prompt and
    /// replaced, calls and all, when blocked (the flag says so). Runs twice per response: on
    /// each complete chunk as ADK streams it (`Chunk`), so a blocked answer
    /// never reaches the client, and on the whole response before ADK acts
    /// on it (`Whole`), which also remembers its function-call ids for the
    /// tool gates. Text judged on the chunk is not judged again.
    pub(crate) async fn after_model(
        &self,
        ctx: &dyn CallbackContext,
        agent: &str,
        mut response: LlmResponse,
        stage: ResponseStage,
    ) -> Result<(LlmResponse, bool), PluginError> {
        if stage == ResponseStage::Chunk && response.partial {
            return Ok((response, false));
        }
        let scope = self.leased(ctx)?;
        let Some(content) = response.content.as_ref() else {
            return Ok((response, false));
        };
        let mut replaced = false;
        let text = text_of(content);
        let invocation = ctx.invocation_id();
        let judged = scope.with_invocation(invocation, |s| {
            s.last_assistant_prompt.as_deref() == Some(text.as_str())
        })?;
        if !text.is_empty() && !judged {
            let prompt = Payload::Prompt {
                role: PromptRole::Assistant,
                content: text.clone(),
            };
            let verdict = self
                .adjudicate_step(&scope, agent, "the model response", prompt, None, None)
                .await?;
            let seen = if verdict.is_allowed() {
                text
            } else {
                let reason = verdict.deny_message();
                response.content = Some(Content::new("model").with_text(reason.clone()));
                replaced = true;
                reason
            };
            scope.with_invocation(invocation, |s| s.last_assistant_prompt = Some(seen))?;
        }
        if stage == ResponseStage::Whole && !replaced {
            if let Some(blocked) = self
                .hand_offs(&scope, agent, response.content.as_ref())
                .await?
            {
                response.content = Some(Content::new("model").with_text(blocked.deny_message()));
                return Ok((response, true));
            }
            remember_calls(&scope, invocation, response.content.as_ref())?;
        }
        Ok((response, replaced))
    }

    /// Judges the transfers a response asks for. ADK acts on a transfer
    /// before any tool callback could see it, so it is judged here, as a
    /// tool call of the agent handing off; the first blocked one is returned.
    async fn hand_offs(
        &self,
        scope: &SessionScope,
        agent: &str,
        content: Option<&Content>,
    ) -> Result<Option<Adjudicated>, PluginError> {
        let transfers = content
            .into_iter()
            .flat_map(|c| &c.parts)
            .filter_map(|part| match part {
                Part::FunctionCall { name, args, id, .. } if name == TRANSFER_TOOL => {
                    Some((args, admit_provider_call_id(Adapter::Adk, id.clone())))
                }
                _ => None,
            });
        for (args, provider_call_id) in transfers {
            if json_depth_exceeds(args, MAX_JSON_DEPTH) {
                let mut blocked = Adjudicated::deny(
                    sondera_model::Mode::Govern,
                    format!("the hand-off's arguments nest more than {MAX_JSON_DEPTH} levels deep"),
                );
                blocked.policies.clear();
                return Ok(Some(blocked));
            }
            let action = classify(TRANSFER_TOOL, args, provider_call_id.as_deref());
            let verdict = self
                .adjudicate_step(scope, agent, "the hand-off", action, None, provider_call_id)
                .await?;
            if !verdict.is_allowed() {
                return Ok(Some(verdict));
            }
        }
        Ok(None)
    }

    /// A tool call, before it runs.
    pub(crate) async fn before_tool(
        &self,
        ctx: &dyn CallbackContext,
        agent: &str,
        tool: &str,
        args: &Value,
    ) -> Result<ToolGate, PluginError> {
        let scope = self.leased(ctx)?;
        if json_depth_exceeds(args, MAX_JSON_DEPTH) {
            return Ok(ToolGate::Blocked(too_deep("tool call's arguments")));
        }
        let invocation = ctx.invocation_id();
        let key = call_key(tool, args);
        let provider_call_id = scope.with_invocation(invocation, |s| {
            s.call_ids
                .get_mut(&key)
                .and_then(|ids| ids.pop_front())
                .flatten()
        })?;
        let action = classify(tool, args, provider_call_id.as_deref());
        let (verdict, event_id) = self
            .judge_recorded(
                &scope,
                agent,
                "the tool call",
                action.clone(),
                None,
                provider_call_id.clone(),
            )
            .await?;
        let (runs, verdict) = match verdict.decision {
            Decision::Allow => (true, verdict),
            Decision::Deny => (false, verdict),
            Decision::Escalate => {
                let request = ApprovalRequest {
                    session: scope.key.clone(),
                    agent: agent.to_string(),
                    tool: tool.to_string(),
                    arguments: args.clone(),
                    function_call_id: provider_call_id.clone(),
                    shape: action_shape(&action),
                    action: action.clone(),
                    verdict,
                    event_id,
                };
                let decision = self.escalate(&scope, request).await?;
                (decision.is_allowed(), decision)
            }
        };
        let pending = if runs {
            PendingTool::Running {
                action: Box::new(action),
                provider_call_id,
            }
        } else {
            PendingTool::Blocked
        };
        scope.with_invocation(invocation, |s| {
            s.pending.entry(key).or_default().push_back(pending)
        })?;
        Ok(if runs {
            ToolGate::Run
        } else {
            ToolGate::Blocked(blocked_result(&verdict))
        })
    }

    /// A tool's result: judged as the observation of the call it answers;
    /// replaced by an error object when blocked.
    pub(crate) async fn after_tool(
        &self,
        ctx: &dyn CallbackContext,
        agent: &str,
        tool: &str,
        args: &Value,
        result: Value,
    ) -> Result<Value, PluginError> {
        let scope = self.leased(ctx)?;
        if json_depth_exceeds(args, MAX_JSON_DEPTH) {
            // The before-tool gate blocked this call, so the result is its
            // own stand-in, never the tool's.
            return Ok(result);
        }
        if json_depth_exceeds(&result, MAX_JSON_DEPTH) {
            return Ok(too_deep("tool result, which was withheld,"));
        }
        let key = call_key(tool, args);
        let pending = scope.with_invocation(ctx.invocation_id(), |s| {
            s.pending.get_mut(&key).and_then(|calls| calls.pop_front())
        })?;
        let (action, provider_call_id) = match pending {
            Some(PendingTool::Running {
                action,
                provider_call_id,
            }) => (action, provider_call_id),
            Some(PendingTool::Blocked) => return Ok(result),
            None => {
                return Err(PluginError::UnmatchedResult {
                    tool: tool.to_string(),
                });
            }
        };
        let observation = observation_for(&action, ToolOutcome::Returned(&result));
        let verdict = self
            .adjudicate_step(
                &scope,
                agent,
                "the tool result",
                observation,
                None,
                provider_call_id,
            )
            .await?;
        Ok(if verdict.is_allowed() {
            result
        } else {
            blocked_result(&verdict)
        })
    }

    /// Settles an escalated tool call: a standing grant, the configured
    /// mode, or a person's decision; records the outcome with who made it
    /// and returns it, so a declined call tells the model who declined it.
    async fn escalate(
        &self,
        scope: &SessionScope,
        request: ApprovalRequest,
    ) -> Result<Adjudicated, PluginError> {
        if let Some(shape) = &request.shape {
            let granted = {
                let mut harness = scope.harness.lock().await;
                bounded(self.sessions.harness_timeout, harness.granted(shape)).await
            };
            let granted =
                granted.map_err(|source| PluginError::harness("standing approvals", source))?;
            if let Some(grant) = granted {
                let reason = format!(
                    "covered by a standing approval ({}) for {}",
                    grant.scope.as_str(),
                    grant.shape
                );
                return self
                    .record(scope, &request, true, reason, grant.granted_by)
                    .await;
            }
        }
        let system = Actor::system("sondera-adk");
        match (self.escalation, &self.approver) {
            (EscalationMode::Deny, _) | (EscalationMode::Ask, None) => {
                let reason = "escalation denied: nobody is asked in this run".to_string();
                self.record(scope, &request, false, reason, system).await
            }
            (EscalationMode::AllowAndLog, _) => {
                let reason = "escalation allowed without asking (allow-and-log)".to_string();
                self.record(scope, &request, true, reason, system).await
            }
            (EscalationMode::Operator, _) => self.ask_operator(scope, &request).await,
            (EscalationMode::Ask, Some(approver)) => {
                let decision = approver
                    .decide(&request)
                    .await
                    .map_err(|e| PluginError::Approval(e.to_string()))?;
                self.apply(scope, &request, decision.approval, decision.decided_by)
                    .await
            }
        }
    }

    /// Puts the call to the server's operators and waits for them; the
    /// server records their decision (or the expiry) in the trajectory.
    /// The wait is bounded by the approval's deadline, not the harness
    /// timeout: operators take longer than a call.
    async fn ask_operator(
        &self,
        scope: &SessionScope,
        request: &ApprovalRequest,
    ) -> Result<Adjudicated, PluginError> {
        let settled = {
            let mut harness = scope.harness.lock().await;
            harness.ask_operator(&request.event_id, None).await
        };
        let settled = settled.map_err(|source| PluginError::harness("the operator", source))?;
        let mode = request.verdict.mode;
        let mut outcome = match &settled.state {
            ApprovalState::Decided {
                approval,
                decided_by,
                reason,
                ..
            } => {
                let mut text = format!("{} by operator {}", approval.phrase(), decided_by.id);
                if let Some(reason) = reason {
                    text.push_str(&format!(": {reason}"));
                }
                if approval.is_approved() {
                    Adjudicated::allow(mode, text)
                } else {
                    Adjudicated::deny(mode, text)
                }
            }
            ApprovalState::Expired { .. } | ApprovalState::Pending => Adjudicated::deny(
                mode,
                "no operator decided before the deadline; the call is denied",
            ),
        };
        outcome.policies = request.verdict.policies.clone();
        Ok(outcome)
    }

    /// Records a person's decision, keeping a standing approval when one was given.
    async fn apply(
        &self,
        scope: &SessionScope,
        request: &ApprovalRequest,
        approval: Approval,
        by: Actor,
    ) -> Result<Adjudicated, PluginError> {
        let mut reason = format!("{} by {}", approval.phrase(), by.id);
        if let Some(grant_scope) = approval.grant_scope() {
            match &request.shape {
                Some(shape) => {
                    let grant = Grant::new(shape.clone(), grant_scope, by.clone());
                    let mut harness = scope.harness.lock().await;
                    let kept = bounded(self.sessions.harness_timeout, harness.grant(grant)).await;
                    drop(harness);
                    kept.map_err(|source| PluginError::harness("the standing approval", source))?;
                    reason.push_str(&format!("; covers {shape}"));
                }
                None => reason.push_str(
                    "; kept for this call only, since it has no shape that can be trusted again",
                ),
            }
        }
        let approved = approval != Approval::Deny;
        self.record(scope, request, approved, reason, by).await
    }

    async fn record(
        &self,
        scope: &SessionScope,
        request: &ApprovalRequest,
        approved: bool,
        reason: String,
        by: Actor,
    ) -> Result<Adjudicated, PluginError> {
        let mut decision = if approved {
            Adjudicated::allow(request.verdict.mode, reason)
        } else {
            Adjudicated::deny(request.verdict.mode, reason)
        };
        decision.policies = request.verdict.policies.clone();
        self.adjudicate_step(
            scope,
            &request.agent,
            "the escalation decision",
            Payload::Adjudicated(decision.clone()),
            Some(by),
            request.function_call_id.clone(),
        )
        .await?;
        Ok(decision)
    }
}

/// Remembers the upstream ids of `content`'s function calls, in order.
fn remember_calls(
    scope: &SessionScope,
    invocation: &str,
    content: Option<&Content>,
) -> Result<(), PluginError> {
    let calls = content
        .into_iter()
        .flat_map(|c| &c.parts)
        .filter_map(|part| match part {
            // Arguments too deep to serialise get no key: the tool gate blocks them.
            Part::FunctionCall { name, args, id, .. }
                if !json_depth_exceeds(args, MAX_JSON_DEPTH) =>
            {
                Some((
                    call_key(name, args),
                    admit_provider_call_id(Adapter::Adk, id.clone()),
                ))
            }
            _ => None,
        });
    let calls: Vec<_> = calls.collect();
    if calls.is_empty() {
        return Ok(());
    }
    scope.with_invocation(invocation, |s| {
        for (key, id) in calls {
            s.call_ids.entry(key).or_default().push_back(id);
        }
    })
}

/// The root agent of a tree, analysed.
pub(crate) fn analyse(
    governor: &Governor,
    root: &Arc<dyn AdkAgent>,
) -> Result<Arc<AgentTree>, PluginError> {
    let tree = Arc::new(AgentTree::analyse(root, &governor.catalog)?);
    governor.trees.write().push(tree.clone());
    Ok(tree)
}
