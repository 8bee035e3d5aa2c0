"""Escalations inside delegated agents reach the person through ADK's own
confirmation: a transfer, a sequential workflow, and agents run as tools
(``AgentTool``) one and two levels deep."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import Recording, Run, turn
from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.agents.base_agent import BaseAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import InMemoryRunner
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from sondera_harness_adk import SonderaHarnessPlugin
from sondera_harness_adk.model import Actor, Decision
from sondera_harness_adk.testing import ScriptedLlm, Turn

PUSH = "git push --force origin main"


class Shell:
    """A ``bash`` tool that remembers every command it really ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        def bash(command: str) -> dict[str, Any]:
            """Run a shell command in the workspace."""
            self.ran.append(command)
            return {"stdout": f"ran: {command}", "exit_code": 0}

        self.tool = bash


def answered(request: LlmRequest) -> int:
    """How many function responses the model has been shown so far."""
    return sum(
        1
        for content in request.contents
        for part in content.parts or []
        if part.function_response is not None
    )


def in_order(calls: list[tuple[str, dict[str, Any]]], final: str) -> Callable[[LlmRequest], Turn]:
    """A script that makes the next call once the previous one is answered,
    so a run started again from the same request makes the same calls."""

    def script(request: LlmRequest) -> Turn:
        done = answered(request)
        return calls[done] if done < len(calls) else final

    return script


def on_each_message(call: tuple[str, dict[str, Any]], final: str) -> Callable[[LlmRequest], Turn]:
    """A script that makes ``call`` for each new user message."""

    def script(request: LlmRequest) -> Turn:
        last = request.contents[-1] if request.contents else None
        fresh = last is not None and last.role == "user" and any(p.text for p in last.parts or [])
        return call if fresh else final

    return script


def worker(name: str, shell: Shell, commands: list[str]) -> LlmAgent:
    return LlmAgent(
        name=name,
        description=f"{name} runs commands.",
        model=ScriptedLlm(
            script=in_order([("bash", {"command": c}) for c in commands], f"{name} done")
        ),
        instruction="Run what you are asked to.",
        tools=[shell.tool],
    )


def caller(name: str, child: BaseAgent) -> LlmAgent:
    return LlmAgent(
        name=name,
        model=ScriptedLlm(script=in_order([(child.name, {"request": "do it"})], f"{name} done")),
        instruction="Delegate.",
        tools=[AgentTool(child)],
    )


def governed(root: BaseAgent, **options: Any) -> tuple[InMemoryRunner, SonderaHarnessPlugin]:
    plugin = SonderaHarnessPlugin(Recording(), **options)
    return InMemoryRunner(agent=root, app_name="app", plugins=[plugin]), plugin


async def session_of(runner: InMemoryRunner) -> str:
    return (await runner.session_service.create_session(app_name="app", user_id="alice")).id


async def answer(
    runner: InMemoryRunner, session: str, call: Any, confirmed: bool, grant: str = "once"
) -> Run:
    response = types.FunctionResponse(
        id=call.id,
        name="adk_request_confirmation",
        response={"confirmed": confirmed, "payload": {"grant": grant}},
    )
    message = types.Content(role="user", parts=[types.Part(function_response=response)])
    return await turn(runner, session, message=message)


def decisions(plugin: SonderaHarnessPlugin, session: str) -> list[Any]:
    scope = plugin._sessions.scope(("app", "alice", session))
    assert scope is not None
    events: list[Any] = scope.harness.events  # type: ignore[attr-defined]
    return [e for e in events if e.event_type == "adjudicated"]


async def test_an_agent_tool_child_asks_through_its_callers_call_and_resumes() -> None:
    shell = Shell()
    root = caller("lead", worker("pusher", shell, ["git status", PUSH]))
    runner, plugin = governed(root)
    session = await session_of(runner)
    first = await turn(runner, session, "ship it")
    [question] = first.confirmation_calls()
    original = question.args["originalFunctionCall"]
    assert original["name"] == "pusher"
    hint = question.args["toolConfirmation"]["hint"]
    assert "pusher" in hint and PUSH in hint and "lead" in hint
    assert shell.ran == ["git status"]
    assert plugin.active_leases() == []

    second = await answer(runner, session, question, confirmed=True)
    # The child picked up where it stopped: what it had already run is
    # answered from the first attempt, not run again.
    assert shell.ran == ["git status", PUSH]
    assert second.responses("pusher") == [{"result": "pusher done"}]
    assert "lead done" in second.texts()
    [decision] = decisions(plugin, session)
    assert decision.event.decision == Decision.ALLOW
    assert decision.actor == Actor.human("alice")
    assert plugin.active_leases() == []
    await runner.close()


async def test_a_child_call_the_person_refuses_is_denied_and_recorded() -> None:
    shell = Shell()
    runner, plugin = governed(caller("lead", worker("pusher", shell, [PUSH])))
    session = await session_of(runner)
    [question] = (await turn(runner, session, "ship it")).confirmation_calls()
    second = await answer(runner, session, question, confirmed=False)
    assert shell.ran == []
    [decision] = decisions(plugin, session)
    assert decision.event.decision == Decision.DENY
    assert "denied by alice" in decision.event.reason
    assert second.confirmation_calls() == []
    await runner.close()


async def test_a_session_grant_from_a_child_covers_the_next_turn() -> None:
    shell = Shell()
    root = LlmAgent(
        name="lead",
        model=ScriptedLlm(script=on_each_message(("pusher", {"request": "do it"}), "delegated")),
        instruction="Delegate.",
        tools=[AgentTool(worker("pusher", shell, [PUSH]))],
    )
    runner, _ = governed(root)
    session = await session_of(runner)
    [question] = (await turn(runner, session, "ship it")).confirmation_calls()
    await answer(runner, session, question, confirmed=True, grant="session")
    again = await turn(runner, session, "ship it again")
    assert again.confirmation_calls() == []
    assert shell.ran == [PUSH, PUSH]
    await runner.close()


async def test_an_agent_tool_two_levels_down_asks_the_person_at_the_top() -> None:
    shell = Shell()
    leaf = worker("pusher", shell, ["ls", PUSH])
    root = caller("lead", caller("manager", leaf))
    runner, plugin = governed(root)
    session = await session_of(runner)
    first = await turn(runner, session, "ship it")
    [question] = first.confirmation_calls()
    assert question.args["originalFunctionCall"]["name"] == "manager"
    assert "lead > manager > pusher" in question.args["toolConfirmation"]["hint"]
    assert shell.ran == ["ls"]
    second = await answer(runner, session, question, confirmed=True)
    assert shell.ran == ["ls", PUSH]
    assert "lead done" in second.texts()
    assert plugin.active_leases() == []
    await runner.close()


async def test_an_escalation_after_a_transfer_asks_and_resumes() -> None:
    shell = Shell()
    helper = worker("release", shell, [PUSH])
    root = LlmAgent(
        name="frontdesk",
        model=ScriptedLlm(script=[("transfer_to_agent", {"agent_name": "release"})]),
        instruction="Route requests.",
        sub_agents=[helper],
    )
    runner, plugin = governed(root)
    session = await session_of(runner)
    [question] = (await turn(runner, session, "ship it")).confirmation_calls()
    assert question.args["originalFunctionCall"]["name"] == "bash"
    second = await answer(runner, session, question, confirmed=True)
    assert shell.ran == [PUSH]
    assert "release done" in second.texts()
    [decision] = decisions(plugin, session)
    assert decision.event.decision == Decision.ALLOW
    await runner.close()


async def test_an_escalation_in_a_sequential_workflow_asks_and_resumes() -> None:
    shell = Shell()
    pipeline = SequentialAgent(
        name="pipeline",
        sub_agents=[
            worker("build", shell, ["cargo build"]),
            worker("publish", shell, [PUSH]),
        ],
    )
    runner, _ = governed(pipeline)
    session = await session_of(runner)
    [question] = (await turn(runner, session, "release")).confirmation_calls()
    assert shell.ran == ["cargo build"]
    second = await answer(runner, session, question, confirmed=True)
    assert shell.ran == ["cargo build", PUSH]
    assert "publish done" in second.texts()
    await runner.close()


async def test_a_second_escalation_in_the_resumed_child_is_denied_and_nothing_runs_twice() -> None:
    shell = Shell()
    runner, plugin = governed(
        caller("lead", worker("pusher", shell, ["git status", PUSH, "make", "git push -f"]))
    )
    session = await session_of(runner)
    [first] = (await turn(runner, session, "ship it")).confirmation_calls()
    last = await answer(runner, session, first, confirmed=True)
    # ADK asks nothing for a call it is resuming: the second question cannot
    # reach the person, so that step is denied, saying why.
    assert last.confirmation_calls() == []
    assert shell.ran == ["git status", PUSH, "make"]
    assert "lead done" in last.texts()
    allowed, denied = decisions(plugin, session)
    assert allowed.event.decision == Decision.ALLOW
    assert denied.event.decision == Decision.DENY
    assert "one question answered" in denied.event.reason
    scope = plugin._sessions.scope(("app", "alice", session))
    assert scope is not None and scope.delegated == {}
    await runner.close()


async def test_a_paused_child_runs_nothing_else_in_the_same_answer() -> None:
    shell = Shell()
    child = LlmAgent(
        name="pusher",
        model=ScriptedLlm(
            script=in_order(
                [[("bash", {"command": PUSH}), ("bash", {"command": "touch marker"})]], "finished"
            )
        ),
        instruction="Push.",
        tools=[shell.tool],
    )
    runner, _ = governed(caller("lead", child))
    session = await session_of(runner)
    first = await turn(runner, session, "ship it")
    [question] = first.confirmation_calls()
    assert shell.ran == []
    await answer(runner, session, question, confirmed=True)
    assert sorted(shell.ran) == sorted([PUSH, "touch marker"])
    await runner.close()


async def test_an_always_grant_from_a_child_covers_a_new_session() -> None:
    shell = Shell()
    runner, _ = governed(caller("lead", worker("pusher", shell, [PUSH])))
    session = await session_of(runner)
    [question] = (await turn(runner, session, "ship it")).confirmation_calls()
    await answer(runner, session, question, confirmed=True, grant="always")
    later = await turn(runner, await session_of(runner), "ship it again")
    assert later.confirmation_calls() == []
    assert shell.ran == [PUSH, PUSH]
    await runner.close()


async def test_a_confirmation_for_one_child_call_approves_no_other() -> None:
    shell = Shell()
    runner, plugin = governed(caller("lead", worker("pusher", shell, [PUSH])))
    session = await session_of(runner)
    [question] = (await turn(runner, session, "ship it")).confirmation_calls()
    scope = plugin._sessions.scope(("app", "alice", session))
    assert scope is not None
    [run] = scope.delegated.values()
    # The child is made to ask for something else the second time.
    run.asked = '["pusher","bash",{"command":"git push --force origin dev"}]'
    await answer(runner, session, question, confirmed=True)
    assert shell.ran == []
    [denied] = decisions(plugin, session)
    assert denied.event.decision == Decision.DENY
    await runner.close()


async def test_a_session_keeps_its_tree_after_a_transfer() -> None:
    shell = Shell()
    helper = LlmAgent(
        name="release",
        description="Releases.",
        model=ScriptedLlm(script=on_each_message(("bash", {"command": "git status"}), "clean")),
        instruction="Release.",
        tools=[shell.tool],
    )
    root = LlmAgent(
        name="frontdesk",
        model=ScriptedLlm(script=[("transfer_to_agent", {"agent_name": "release"})]),
        instruction="Route requests.",
        sub_agents=[helper],
    )
    runner, _ = governed(root)
    session = await session_of(runner)
    await turn(runner, session, "status please")
    # ADK sends the next message to the agent transferred to; it is still
    # the same tree.
    await turn(runner, session, "and again")
    assert shell.ran == ["git status", "git status"]
    await runner.close()
