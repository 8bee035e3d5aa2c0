"""``SonderaHarnessPlugin``: every ADK callback point, judged by a harness.

What each gate judges, and what a verdict does to the step:

- the user's message (a user prompt, by the person): blocked, it is replaced
  by the reason and the run stops before the model is called;
- what the model is about to read (its newest text not judged yet in this
  invocation) and what it answered: blocked, the model is not called or its
  answer (calls and all) is replaced by the reason;
- each tool call before it runs, classified as the narrowest action it fits:
  denied, the tool does not run and the model reads the reason; escalated,
  a standing approval, ADK's tool confirmation, the ``approver`` or the
  escalation mode settles it (:mod:`sondera_harness_adk.escalation`);
- each result or tool error, as the observation of the call it answers.

Nothing is allowed because the harness failed: an error or a timeout blocks
the step with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types as genai_types

from sondera_harness_adk import _native
from sondera_harness_adk._delegated import DelegatedRun, call_signature
from sondera_harness_adk._sessions import (
    Invocation,
    PendingTool,
    Scope,
    SessionKey,
    Sessions,
)
from sondera_harness_adk._tree import AgentTree, analyse, signature
from sondera_harness_adk.abc import Harness
from sondera_harness_adk.errors import (
    AgentTreeError,
    HarnessFactoryError,
    LeaseError,
    SonderaError,
    StepError,
)
from sondera_harness_adk.escalation import (
    Approval,
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    EscalationMode,
)
from sondera_harness_adk.model import (
    Actor,
    Adjudicated,
    Agent,
    Decision,
    Event,
    EventPayload,
    Prompt,
    admit_provider_call_id,
)

logger = logging.getLogger(__name__)

__all__ = ["SonderaHarnessPlugin"]


@dataclass(frozen=True)
class _Caller:
    """The tool call an agent run as a tool (``AgentTool``) serves."""

    key: SessionKey
    agent: str
    chain: tuple[str, ...]
    outer: ToolContext
    """The outermost such call: the one of the session's own agents, which
    the person sees and a question about a child's step is asked on."""


# Set for the duration of an allowed AgentTool call: the child runner ADK
# starts inside it runs in the same task, so its steps join the caller's
# trajectory instead of starting one of their own.
_CALLER: contextvars.ContextVar[_Caller | None] = contextvars.ContextVar(
    "sondera_agent_tool_caller", default=None
)


def _text_of(content: genai_types.Content | None) -> str:
    """The text a content carries: text parts, and code and its output."""
    if content is None or not content.parts:
        return ""
    pieces: list[str] = []
    for part in content.parts:
        if part.text and not part.thought:
            pieces.append(part.text)
        elif part.executable_code is not None and part.executable_code.code:
            pieces.append(part.executable_code.code)
        elif part.code_execution_result is not None and part.code_execution_result.output:
            pieces.append(part.code_execution_result.output)
    return "\n".join(pieces)


def _agent_of(ic: InvocationContext) -> BaseAgent:
    agent = ic.agent
    if not isinstance(agent, BaseAgent):
        raise AgentTreeError(f"cannot govern {type(agent).__name__}: not an ADK agent")
    return agent


def _blocked(message: str) -> dict[str, Any]:
    return {"error": message}


def _confirmation_payload() -> dict[str, Any]:
    """What the person's answer to a confirmation may carry: the grant's scope."""
    return {"grant": "once", "choices": ["once", "session", "always"]}


def _confirmed(confirmation: Any, user: str) -> tuple[Approval, Actor, str]:
    """The person's answer to ADK's tool confirmation: refused, or approved
    for the scope its payload names (once unless it says otherwise)."""
    person = Actor.human(user)
    if not confirmation.confirmed:
        return Approval.DENY, person, f"denied by {user}"
    payload = confirmation.payload if isinstance(confirmation.payload, dict) else {}
    try:
        approval = Approval(str(payload.get("grant", "once")))
    except ValueError:
        approval = Approval.ONCE
    if approval is Approval.DENY:
        approval = Approval.ONCE
    return approval, person, f"{approval.phrase} by {user}"


def _waiting() -> str:
    return (
        "Paused: a call of this run waits for the user's confirmation; the run goes on "
        "once it is answered."
    )


def _reply(result: Any) -> dict[str, Any]:
    """The function response ADK gives the model for a call that returned."""
    return result if isinstance(result, dict) else {"result": result}


def _pending_key(tool: str, call_id: str | None, args: dict[str, Any]) -> str:
    # ADK hands the before- and after-tool callbacks the same arguments
    # object, so without a call id its identity pairs them (never its
    # contents, which may be too deep to serialise).
    return call_id or f"{tool}:{id(args)}"


class SonderaHarnessPlugin(BasePlugin):
    """Sondera Harness governance for ADK agents, through any :class:`Harness`.

    Give exactly one of ``harness`` (each session gets ``harness.new_scope()``)
    and ``harness_factory`` (called once per session for a fresh harness).
    ``max_session_scopes`` bounds the sessions kept open; idle ones are ended
    least-recently-used. ``escalation`` chooses how escalated tool calls are
    settled (ADK tool confirmation by default, ``ASK`` when an ``approver``
    is given); ``timeout`` bounds every harness call, in seconds.
    """

    def __init__(
        self,
        harness: Harness | None = None,
        *,
        harness_factory: Callable[[], Harness] | None = None,
        max_session_scopes: int = 256,
        logger_instance: logging.Logger | None = None,
        approver: Approver | None = None,
        escalation: EscalationMode | None = None,
        timeout: float | None = None,
        name: str = "sondera_harness",
    ) -> None:
        super().__init__(name=name)
        if (harness is None) == (harness_factory is None):
            raise TypeError("give exactly one of harness= and harness_factory=")
        if max_session_scopes < 1:
            raise ValueError("max_session_scopes must be at least 1")
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if escalation is EscalationMode.ASK and approver is None:
            raise ValueError("escalation=EscalationMode.ASK needs an approver=")
        self._logger = logger_instance or logger
        self._seed = harness
        self._factory = harness_factory
        self._approver = approver
        self._escalation = escalation or (
            EscalationMode.ASK if approver is not None else EscalationMode.CONFIRM
        )
        self._timeout = timeout
        self._trees: dict[int, tuple[BaseAgent, tuple[tuple[int, ...], ...], AgentTree]] = {}
        self._linked: dict[SessionKey, SessionKey] = {}
        self._refused: dict[str, str] = {}
        self._issued: weakref.WeakSet[Harness] = weakref.WeakSet()
        self._standing: dict[str, list[dict[str, Any]]] = {}
        self._first: Harness | None = None
        self._last: Scope | None = None
        if harness is not None:
            if harness.trajectory_id is not None:
                raise ValueError(
                    f"the given harness already holds trajectory {harness.trajectory_id}; "
                    "pass an uninitialised one"
                )
            self._spare: Harness | None = harness.new_scope()
        else:
            self._spare = None
        self._sessions = Sessions(max_session_scopes, self._issue, timeout)

    # -- diagnostics -------------------------------------------------------

    @property
    def harness(self) -> Harness:
        """The harness given at construction; with a factory, the harness it
        made for the first session."""
        if self._seed is not None:
            return self._seed
        if self._first is None:
            self._first = self._spare = self._issue_from_factory()
        return self._first

    @property
    def trajectory_id(self) -> str | None:
        """The trajectory of the most recently used session."""
        return self._last.harness.trajectory_id if self._last else None

    @property
    def agent(self) -> Agent | None:
        """The principal of the most recently used session."""
        return self._last.tree.principal if self._last else None

    @property
    def session_scopes(self) -> int:
        """How many session scopes are open."""
        return len(self._sessions)

    def active_leases(self) -> list[tuple[SessionKey, str]]:
        """The (session, invocation) leases held by running invocations."""
        return self._sessions.active_leases()

    # -- scopes --------------------------------------------------------------

    def _issue(self) -> Harness:
        if self._spare is not None:
            harness, self._spare = self._spare, None
            return harness
        if self._seed is not None:
            return self._seed.new_scope()
        return self._issue_from_factory()

    def _issue_from_factory(self) -> Harness:
        assert self._factory is not None
        harness = self._factory()
        if not isinstance(harness, Harness):
            raise HarnessFactoryError(
                f"the harness factory returned {type(harness).__name__}, not a Harness"
            )
        if self._sessions.holding(harness) or harness is self._spare or self._was_issued(harness):
            raise HarnessFactoryError(
                "the harness factory returned a harness already issued to a session (one "
                "ended or evicted is not reused either); return a new scope for every call"
            )
        if harness.trajectory_id is not None:
            raise HarnessFactoryError(
                "the harness factory returned a harness that already holds trajectory "
                f"{harness.trajectory_id}; return an uninitialised scope"
            )
        self._remember_issued(harness)
        return harness

    def _was_issued(self, harness: Harness) -> bool:
        try:
            return harness in self._issued
        except TypeError:  # not weakly referenceable: only held ones are known
            return False

    def _remember_issued(self, harness: Harness) -> None:
        # Weakly, so a plugin that serves many sessions keeps no harness alive.
        with contextlib.suppress(TypeError):
            self._issued.add(harness)

    def _tree(self, root: BaseAgent) -> AgentTree:
        # A tree changed in place (a tool added to the same root) is
        # analysed again, so the session's check sees the change.
        shape = signature(root)
        known = self._trees.get(id(root))
        if known is not None and known[0] is root and known[1] == shape:
            return known[2]
        tree = analyse(root)
        self._trees[id(root)] = (root, shape, tree)
        return tree

    @staticmethod
    def _own_key(ic: InvocationContext) -> SessionKey:
        return (ic.app_name, ic.user_id, ic.session.id)

    def _key(self, ctx: CallbackContext) -> SessionKey:
        own = (ctx.session.app_name, ctx.user_id, ctx.session.id)
        return self._linked.get(own, own)

    async def _lease(self, ic: InvocationContext) -> Scope:
        own = self._own_key(ic)
        held = self._sessions.scope(self._linked.get(own, own))
        if held is not None and ic.invocation_id in held.leases:
            # The run's first callback leased it and checked its tree.
            held.check_usable()
            return held
        caller = _CALLER.get()
        agent = _agent_of(ic)
        if caller is not None and own not in self._linked:
            parent = self._sessions.scope(caller.key)
            node = parent.tree.node(agent.name) if parent else None
            if node is not None and node.agent_tool_parent is not None:
                self._linked[own] = caller.key
        key = self._linked.get(own, own)
        if key != own:
            parent = self._sessions.scope(key)
            if parent is None:
                raise LeaseError(f"the caller's session {key} is no longer open")
            return await self._sessions.acquire(key, ic.invocation_id, parent.tree)
        # A run resumed after a transfer, or inside a workflow, starts at the
        # agent that was active, not at the runner's root: the tree is the root's.
        scope = await self._sessions.acquire(key, ic.invocation_id, self._tree(agent.root_agent))
        self._last = scope
        return scope

    def _leased(self, ctx: CallbackContext) -> tuple[Scope, Invocation]:
        key = self._key(ctx)
        scope = self._sessions.scope(key)
        if scope is None:
            raise LeaseError(
                f"invocation {ctx.invocation_id} of session {'/'.join(key)} holds no lease: "
                "the run-start callback must complete before agent, model and tool steps "
                "are judged"
            )
        return scope, scope.invocation(ctx.invocation_id)

    # -- judging -------------------------------------------------------------

    async def _call(self, step: str, work: Awaitable[Any]) -> Any:
        try:
            if self._timeout is None:
                return await work
            return await asyncio.wait_for(work, self._timeout)
        except TimeoutError:
            raise StepError(
                f"Sondera Harness could not judge {step}, so it was blocked: the harness did "
                f"not answer within {self._timeout}s; the step may have been recorded"
            ) from None
        except SonderaError:
            raise
        except Exception as error:
            raise StepError(
                f"Sondera Harness could not judge {step}, so it was blocked: {error}"
            ) from error

    async def _judge(
        self,
        scope: Scope,
        agent_name: str,
        step: str,
        payload: EventPayload,
        *,
        actor: Actor | None = None,
        provider_call_id: str | None = None,
    ) -> Adjudicated:
        verdict, _ = await self._judge_recorded(
            scope, agent_name, step, payload, actor=actor, provider_call_id=provider_call_id
        )
        return verdict

    async def _judge_recorded(
        self,
        scope: Scope,
        agent_name: str,
        step: str,
        payload: EventPayload,
        *,
        actor: Actor | None = None,
        provider_call_id: str | None = None,
    ) -> tuple[Adjudicated, str]:
        """:meth:`_judge`, with the id of the event it recorded."""
        scope.check_usable()
        node = scope.tree.node(agent_name)
        if node is None:
            raise AgentTreeError(
                f"agent `{agent_name}` is not part of the agent tree rooted at "
                f"`{scope.tree.root_name}` that this session is governed as"
            )
        async with scope.lock:
            trajectory_id = scope.harness.trajectory_id
            if trajectory_id is None:
                raise StepError(
                    f"Sondera Harness could not judge {step}, so it was blocked: the session "
                    "has no trajectory"
                )
            event = Event(
                scope.tree.identity,
                trajectory_id,
                payload,
                actor=actor,
                execution=node.attribution,
                provider_call_id=provider_call_id,
            )
            verdict: Adjudicated = await self._call(step, scope.harness.adjudicate(event))
            return verdict, event.event_id

    # -- run hooks -----------------------------------------------------------

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: genai_types.Content
    ) -> genai_types.Content | None:
        """The user's message, judged as the person's prompt."""
        ic = invocation_context
        try:
            scope = await self._lease(ic)
            state = scope.invocation(ic.invocation_id)
            text = _text_of(user_message)
            if not text:
                return None
            caller = _CALLER.get() if self._own_key(ic) in self._linked else None
            actor = Actor.agent(caller.chain[-1]) if caller else Actor.human(ic.user_id)
            verdict = await self._judge(
                scope, _agent_of(ic).name, "the user message", Prompt.user(text), actor=actor
            )
        except StepError as error:
            return self._refuse(ic, str(error))
        if verdict.is_allowed:
            state.last_user_prompt = text
            return None
        message = verdict.deny_message()
        state.blocked = message
        state.last_user_prompt = message
        return genai_types.Content(role="user", parts=[genai_types.Part(text=message)])

    def _refuse(self, ic: InvocationContext, message: str) -> genai_types.Content:
        self._logger.warning("%s", message)
        self._refused[ic.invocation_id] = message
        return genai_types.Content(role="user", parts=[genai_types.Part(text=message)])

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> genai_types.Content | None:
        """Leases the session's scope; halts a run whose message was blocked."""
        ic = invocation_context
        refused = self._refused.pop(ic.invocation_id, None)
        if refused is None:
            try:
                scope = await self._lease(ic)
                refused = scope.invocation(ic.invocation_id).blocked
            except StepError as error:
                refused = str(error)
        if refused is None:
            return None
        return genai_types.Content(role="model", parts=[genai_types.Part(text=refused)])

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Releases the invocation's lease."""
        self._end_run(invocation_context)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        """A run that failed is over too: its lease is released."""
        self._end_run(invocation_context)

    def _end_run(self, ic: InvocationContext) -> None:
        own = self._own_key(ic)
        key = self._linked.pop(own, own)
        self._refused.pop(ic.invocation_id, None)
        self._sessions.release(key, ic.invocation_id)

    async def close(self) -> None:
        """Ends every idle session's trajectory. Refused, changing nothing,
        while invocations hold leases; scopes that cannot be ended stay
        quarantined and are retried by the next ``close()``."""
        await self._sessions.close()

    # -- model gates ---------------------------------------------------------

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """The newest text the model is about to read, unless already judged."""
        try:
            scope, state = self._leased(callback_context)
            delegated = self._delegated_run(scope, self._caller_of(callback_context))
            if delegated is not None and delegated.paused:
                return self._model_says(_waiting())
            newest = next(
                (
                    (content.role, text)
                    for content in reversed(llm_request.contents or [])
                    if (text := _text_of(content))
                ),
                None,
            )
            if newest is None:
                return None
            role, text = newest
            assistant = role in ("model", "assistant")
            seen = state.last_assistant_prompt if assistant else state.last_user_prompt
            if seen == text:
                return None
            prompt = Prompt.assistant(text) if assistant else Prompt.user(text)
            verdict = await self._judge(
                scope, callback_context.agent_name, "the model input", prompt
            )
        except StepError as error:
            return self._model_says(str(error))
        if assistant:
            state.last_assistant_prompt = text
        else:
            state.last_user_prompt = text
        return None if verdict.is_allowed else self._model_says(verdict.deny_message())

    @staticmethod
    def _model_says(message: str, *, partial: bool | None = None) -> LlmResponse:
        return LlmResponse(
            content=genai_types.Content(role="model", parts=[genai_types.Part(text=message)]),
            partial=partial,
            turn_complete=None if partial else True,
        )

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """The model's answer, judged as an assistant prompt; replaced, calls
        and all, when blocked. A streamed answer is judged chunk by chunk as
        ADK streams it, so a blocked chunk never reaches the client, and then
        whole."""
        try:
            scope, state = self._leased(callback_context)
            text = _text_of(llm_response.content)
            if not text or text == state.last_assistant_prompt:
                return None
            step = "the streamed model response" if llm_response.partial else "the model response"
            verdict = await self._judge(
                scope, callback_context.agent_name, step, Prompt.assistant(text)
            )
        except StepError as error:
            return self._model_says(str(error), partial=llm_response.partial)
        if verdict.is_allowed:
            if not llm_response.partial:
                state.last_assistant_prompt = text
            return None
        message = verdict.deny_message()
        if not llm_response.partial:
            state.last_assistant_prompt = message
        return self._model_says(message, partial=llm_response.partial)

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """A failed model call produced nothing to judge; ADK handles the error."""
        self._logger.warning(
            "model call of agent %s failed; ADK handles the error: %s",
            callback_context.agent_name,
            error,
        )
        return None

    # -- tool gates ----------------------------------------------------------

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """A tool call, before it runs: allowed, denied or escalated."""
        call_id = admit_provider_call_id("adk", tool_context.function_call_id)
        key = _pending_key(tool.name, call_id, tool_args)
        try:
            scope, state = self._leased(tool_context)
        except StepError as error:
            return _blocked(str(error))
        caller = self._caller_of(tool_context)
        delegated = self._delegated_run(scope, caller)
        resumed = self._resumed_run(scope, tool, tool_context, caller)
        if resumed is not None and isinstance(tool, AgentTool):
            state.pending.setdefault(key, []).append(PendingTool(resumed.action, call_id, True))
            self._enter_agent_tool(scope, tool, tool_context, caller)
            return None
        if delegated is not None and delegated.paused:
            return _blocked(_waiting())
        signature = None
        if delegated is not None and not isinstance(tool, AgentTool):
            signature = call_signature(tool_context.agent_name, tool.name, tool_args)
            replayed, result = delegated.replay(signature)
            if replayed:
                state.pending.setdefault(key, []).append(PendingTool(None, call_id, False))
                return dict(result)
        try:
            action = self._classify(tool.name, tool_args, call_id)
            verdict, event_id = await self._judge_recorded(
                scope, tool_context.agent_name, "the tool call", action, provider_call_id=call_id
            )
            if verdict.decision == Decision.ESCALATE:
                runs, message = await self._escalate(
                    scope, tool, tool_args, tool_context, action, verdict, call_id, event_id
                )
            else:
                runs = verdict.is_allowed
                message = "" if runs else verdict.deny_message()
        except StepError as error:
            runs, message, action = False, str(error), None
        state.pending.setdefault(key, []).append(
            PendingTool(action, call_id, runs, signature=signature)
        )
        if not runs:
            blocked = _blocked(message)
            if delegated is not None and not delegated.paused:
                delegated.record(signature, blocked)
            return blocked
        if isinstance(tool, AgentTool):
            if caller is None:
                scope.start_delegated(tool_context.function_call_id or key, action)
            self._enter_agent_tool(scope, tool, tool_context, caller)
        return None

    def _caller_of(self, ctx: CallbackContext) -> _Caller | None:
        """The call an agent run as a tool serves, when ``ctx`` is one of its steps."""
        caller = _CALLER.get()
        if caller is None or not self._linked:
            return None
        own = (ctx.session.app_name, ctx.user_id, ctx.session.id)
        return caller if own in self._linked else None

    @staticmethod
    def _delegated_run(scope: Scope, caller: _Caller | None) -> DelegatedRun | None:
        if caller is None:
            return None
        return scope.delegated.get(caller.outer.function_call_id or "")

    @staticmethod
    def _resumed_run(
        scope: Scope, tool: BaseTool, ctx: ToolContext, caller: _Caller | None
    ) -> DelegatedRun | None:
        """The run of an agent tool that asked the person and is called again
        with the answer: it goes on, judged once already."""
        if caller is not None or not isinstance(tool, AgentTool) or ctx.tool_confirmation is None:
            return None
        run = scope.delegated.get(ctx.function_call_id or "")
        if run is None or run.asked is None:
            return None
        run.resume()
        return run

    @staticmethod
    def _enter_agent_tool(
        scope: Scope, tool: AgentTool, ctx: ToolContext, caller: _Caller | None
    ) -> None:
        chain = (*caller.chain, ctx.agent_name) if caller else (ctx.agent_name,)
        outer = caller.outer if caller else ctx
        _CALLER.set(_Caller(scope.key, tool.agent.name, chain, outer))

    @staticmethod
    def _classify(tool: str, args: dict[str, Any], call_id: str | None) -> EventPayload:
        try:
            action: EventPayload = _native.classify_tool_call(tool, args, call_id)
        except ValueError as error:
            raise StepError(
                f"Sondera Harness could not judge the tool call, so it was blocked: {error}"
            ) from error
        return action

    def _take_pending(self, tool: BaseTool, args: dict[str, Any], ctx: ToolContext) -> PendingTool:
        call_id = admit_provider_call_id("adk", ctx.function_call_id)
        _, state = self._leased(ctx)
        calls = state.pending.get(_pending_key(tool.name, call_id, args))
        if not calls:
            raise StepError(
                f"after-tool for `{tool.name}` does not match any call judged before it ran; "
                "its result was withheld"
            )
        return calls.pop(0)

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """A tool's result, judged as the observation of its call."""
        return await self._observe(tool, tool_args, tool_context, result=result, error=None)

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """A tool that raised: its error is judged as the call's observation."""
        return await self._observe(tool, tool_args, tool_context, result=None, error=str(error))

    async def _observe(
        self,
        tool: BaseTool,
        args: dict[str, Any],
        ctx: ToolContext,
        *,
        result: Any,
        error: str | None,
    ) -> dict[str, Any] | None:
        try:
            pending = self._take_pending(tool, args, ctx)
            if not pending.runs:
                return None
            scope, _ = self._leased(ctx)
            try:
                if error is not None:
                    observation = _native.observation_for(pending.action, error=error)
                else:
                    observation = _native.observation_for(pending.action, result=result)
            except ValueError as unreadable:
                raise StepError(
                    "Sondera Harness could not judge the tool result, so it was withheld: "
                    f"{unreadable}"
                ) from unreadable
            verdict = await self._judge(
                scope,
                ctx.agent_name,
                "the tool result",
                observation,
                provider_call_id=pending.provider_call_id,
            )
        except StepError as failure:
            return _blocked(str(failure))
        answer = None if verdict.is_allowed else _blocked(verdict.deny_message())
        if error is None:
            # A call that raised is never answered from a record: raising is
            # not something a callback can repeat.
            self._remember_delegated(scope, tool, ctx, pending, answer or _reply(result))
        return answer

    def _remember_delegated(
        self, scope: Scope, tool: BaseTool, ctx: ToolContext, pending: PendingTool, reply: Any
    ) -> None:
        """Keeps what a child's call answered for a later attempt; forgets an
        outermost agent tool's run once it ends without a question open."""
        caller = self._caller_of(ctx)
        if caller is None:
            run_key = ctx.function_call_id or ""
            run = scope.delegated.get(run_key)
            if isinstance(tool, AgentTool) and run is not None and not run.paused:
                del scope.delegated[run_key]
            return
        delegated = self._delegated_run(scope, caller)
        # What ran while a question was open answers a child that was cut short.
        if delegated is not None and not delegated.paused and not isinstance(tool, AgentTool):
            delegated.record(pending.signature, reply)

    # -- escalation ----------------------------------------------------------

    async def _escalate(
        self,
        scope: Scope,
        tool: BaseTool,
        args: dict[str, Any],
        ctx: ToolContext,
        action: EventPayload,
        verdict: Adjudicated,
        call_id: str | None,
        event_id: str,
    ) -> tuple[bool, str]:
        shape = _native.action_shape(action)
        caller = self._caller_of(ctx)
        request = ApprovalRequest(
            session=scope.key,
            agent=ctx.agent_name,
            tool=tool.name,
            arguments=args,
            function_call_id=call_id,
            action=action,
            verdict=verdict,
            shape=shape,
            shape_text=_native.describe_shape(shape) if shape is not None else None,
            parent_agents=caller.chain if caller else (),
        )
        if shape is not None:
            grant = await self._granted(scope, shape)
            if grant is not None:
                reason = (
                    f"covered by a standing approval ({grant['scope']}) for "
                    f"{_native.describe_shape(grant['shape'])}"
                )
                by = grant.get("granted_by") or {"kind": "system", "id": "sondera-adk"}
                await self._record(scope, request, True, reason, Actor.from_dict(by))
                return True, ""
        if self._escalation is EscalationMode.OPERATOR:
            return await self._ask_operator(scope, verdict, event_id)
        answer = await self._decide(scope, request, ctx, caller)
        if answer is None:
            return False, (
                f"{verdict.deny_message()}\nWaiting for the user's confirmation: the call runs "
                "once it is approved."
            )
        approval, by, reason = answer
        if approval.grant_scope is not None:
            if shape is None:
                reason += (
                    "; kept for this call only, since it has no shape that can be trusted again"
                )
            else:
                await self._grant(scope, shape, approval.grant_scope, by)
                reason += f"; covers {_native.describe_shape(shape)}"
        approved = approval is not Approval.DENY
        recorded = await self._record(scope, request, approved, reason, by)
        return approved, "" if approved else recorded.deny_message()

    async def _ask_operator(
        self, scope: Scope, verdict: Adjudicated, event_id: str
    ) -> tuple[bool, str]:
        """Puts the escalated call to the server's operators and waits for
        them; the server records the decision (or the expiry) in the
        trajectory. The wait is bounded by the approval's deadline, not the
        harness timeout: operators take longer than a call."""
        ask = getattr(scope.harness, "ask_operator", None)
        if not callable(ask):
            raise StepError(
                "escalation=EscalationMode.OPERATOR needs a harness with operators behind it "
                "(SonderaRemoteHarness); the call was blocked"
            )
        try:
            async with scope.lock:
                settled: dict[str, Any] = await ask(event_id)
        except Exception as error:
            raise StepError(
                f"asking the operators failed, so the call was blocked: {error}"
            ) from error
        if settled.get("status") != "decided":
            return False, (
                f"{verdict.deny_message()}\nNo operator decided before the deadline; "
                "the call is denied."
            )
        approval = Approval(settled["approval"])
        by = settled.get("decided_by", {}).get("id", "an operator")
        reason = settled.get("reason")
        text = f"{approval.phrase} by operator {by}" + (f": {reason}" if reason else "")
        if approval is Approval.DENY:
            return False, f"{verdict.deny_message()}\n{text}"
        return True, ""

    async def _decide(
        self, scope: Scope, request: ApprovalRequest, ctx: ToolContext, caller: _Caller | None
    ) -> tuple[Approval, Actor, str] | None:
        """Who settles the escalation and how; ``None`` while ADK's tool
        confirmation is pending."""
        system = Actor.system("sondera-adk")
        mode = self._escalation
        if mode is EscalationMode.YOLO:
            return Approval.ONCE, system, "escalation allowed without asking (YOLO)"
        if mode is EscalationMode.DENY:
            return Approval.DENY, system, "escalation denied: nobody is asked in this run"
        if mode is EscalationMode.ASK:
            assert self._approver is not None
            try:
                answer = self._approver(request)
                decided: ApprovalDecision = await answer if inspect.isawaitable(answer) else answer
            except Exception as error:
                raise StepError(
                    f"asking for approval failed, so the step was blocked: {error}"
                ) from error
            phrase = f"{decided.approval.phrase} by {decided.decided_by.id}"
            return decided.approval, decided.decided_by, phrase
        if caller is not None:
            return self._confirm_through_caller(scope, request, caller)
        if ctx.tool_confirmation is None:
            ctx.request_confirmation(hint=request.question(), payload=_confirmation_payload())
            return None
        return _confirmed(ctx.tool_confirmation, ctx.user_id)

    def _confirm_through_caller(
        self, scope: Scope, request: ApprovalRequest, caller: _Caller
    ) -> tuple[Approval, Actor, str] | None:
        """A child's escalation, asked on the outermost call the person sees
        (:mod:`sondera_harness_adk._delegated`)."""
        outer = caller.outer
        run = self._delegated_run(scope, caller)
        signature = call_signature(request.agent, request.tool, request.arguments)
        if run is None or signature is None:
            return (
                Approval.DENY,
                Actor.system("sondera-adk"),
                f"escalation denied: `{request.agent}` runs as a tool of `{caller.chain[-1]}` "
                "and its call cannot be recognised when it is made again",
            )
        if outer.tool_confirmation is not None:
            if run.asked == signature:
                run.asked = None
                return _confirmed(outer.tool_confirmation, outer.user_id)
            # ADK emits no confirmation request for a call it is resuming, so
            # this run cannot ask again; the answer it has is for another call.
            return (
                Approval.DENY,
                Actor.system("sondera-adk"),
                f"escalation denied: `{request.agent}` runs as a tool of `{caller.chain[-1]}`, "
                "whose call already had its one question answered; ask for this step in a "
                "new request",
            )
        if not run.paused:
            outer.request_confirmation(hint=request.question(), payload=_confirmation_payload())
            run.asked = signature
            run.paused = True
        return None

    async def _granted(self, scope: Scope, shape: dict[str, Any]) -> dict[str, Any] | None:
        granted = getattr(scope.harness, "granted", None)
        if callable(granted):
            async with scope.lock:
                found: dict[str, Any] | None = await self._call(
                    "standing approvals", granted(shape)
                )
                return found
        agent_grants = self._standing.get(scope.tree.principal.id, [])
        for grant in [*scope.session_grants, *agent_grants]:
            if _native.shape_covers(grant["shape"], shape):
                return grant
        return None

    async def _grant(
        self, scope: Scope, shape: dict[str, Any], grant_scope: str, by: Actor
    ) -> None:
        grant_fn = getattr(scope.harness, "grant", None)
        if callable(grant_fn):
            async with scope.lock:
                await self._call("the standing approval", grant_fn(shape, grant_scope, by))
            return
        grant = {"shape": shape, "scope": grant_scope, "granted_by": by.to_dict()}
        if grant_scope == "session":
            scope.session_grants.append(grant)
        else:
            self._standing.setdefault(scope.tree.principal.id, []).append(grant)

    async def _record(
        self, scope: Scope, request: ApprovalRequest, approved: bool, reason: str, by: Actor
    ) -> Adjudicated:
        """Records the decision on an escalation, with who made it."""
        decision = Adjudicated(
            Decision.ALLOW if approved else Decision.DENY,
            mode=request.verdict.mode,
            reason=reason,
            metadata=request.verdict.metadata,
        )
        await self._judge(
            scope,
            request.agent,
            "the escalation decision",
            decision,
            actor=by,
            provider_call_id=request.function_call_id,
        )
        return decision
