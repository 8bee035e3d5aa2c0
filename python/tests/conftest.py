from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from google.adk.agents import LlmAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

sys.path.insert(0, str(Path(__file__).parent))

from sondera_harness_adk import SonderaHarnessPlugin
from sondera_harness_adk.abc import Harness
from sondera_harness_adk.errors import SonderaError, governance_error
from sondera_harness_adk.harness import LocalHarness
from sondera_harness_adk.model import Adjudicated, Agent, Event
from sondera_harness_adk.testing import ScriptedLlm, Turn

E = TypeVar("E", bound=SonderaError)


class Recording(Harness):
    """A custom harness over a LocalHarness that records every event and can fail."""

    def __init__(self, inner: LocalHarness | None = None) -> None:
        self.inner = inner or LocalHarness(memory=True, workspace="/w", home="/home/a")
        self.events: list[Event] = []
        self.fail_initialize_after_publish = False
        self.fail_adjudicate: Exception | None = None
        self.stall = 0.0
        self.finalized = 0

    def new_scope(self) -> Recording:
        scope = Recording(self.inner.new_scope())
        scope.fail_adjudicate = self.fail_adjudicate
        scope.stall = self.stall
        scope.fail_initialize_after_publish = self.fail_initialize_after_publish
        return scope

    @property
    def trajectory_id(self) -> str | None:
        return self._trajectory_id or self.inner.trajectory_id

    async def initialize(
        self, *, agent: Agent | None = None, session_id: str | None = None
    ) -> None:
        if self.fail_initialize_after_publish:
            self._trajectory_id = "maybe-started"
            raise ConnectionError("connection reset while sending started")
        await self.inner.initialize(agent=agent, session_id=session_id)

    async def resume(self, trajectory_id: str, *, agent: Agent | None = None) -> None:
        await self.inner.resume(trajectory_id, agent=agent)

    async def finalize(self, *, summary: str | None = None) -> None:
        self.finalized += 1
        await self.inner.finalize(summary=summary)

    async def fail(self, *, reason: str) -> None:
        await self.inner.fail(reason=reason)

    async def adjudicate(self, event: Event) -> Adjudicated:
        if self.stall:
            await asyncio.sleep(self.stall)
        if self.fail_adjudicate is not None:
            raise self.fail_adjudicate
        self.events.append(event)
        return await self.inner.adjudicate(event)

    async def adjudicates(self, events: list[Event]) -> list[Adjudicated]:
        return [await self.adjudicate(e) for e in events]


def bash(command: str) -> dict[str, Any]:
    """Run a shell command in the workspace."""
    return {"stdout": f"ran: {command}", "exit_code": 0}


def read_file(path: str) -> dict[str, Any]:
    """Read a file."""
    return {"content": f"contents of {path}"}


def coder(script: list[Turn], **kwargs: Any) -> LlmAgent:
    return LlmAgent(
        name=kwargs.pop("name", "coder"),
        model=ScriptedLlm(script=script),
        instruction="You fix failing tests.",
        tools=kwargs.pop("tools", [bash, read_file]),
        **kwargs,
    )


class Run:
    """One ADK turn's events, with helpers to read them."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    def responses(self, tool: str | None = None) -> list[dict[str, Any]]:
        return [
            p.function_response.response
            for e in self.events
            for p in (e.content.parts if e.content and e.content.parts else [])
            if p.function_response and (tool is None or p.function_response.name == tool)
        ]

    def texts(self) -> list[str]:
        return [
            p.text
            for e in self.events
            for p in (e.content.parts if e.content and e.content.parts else [])
            if p.text
        ]

    def confirmation_calls(self) -> list[Any]:
        return [
            p.function_call
            for e in self.events
            for p in (e.content.parts if e.content and e.content.parts else [])
            if p.function_call and p.function_call.name == "adk_request_confirmation"
        ]


async def turn(
    runner: InMemoryRunner,
    session_id: str,
    text: str | None = None,
    *,
    user: str = "alice",
    message: types.Content | None = None,
) -> Run:
    content = message or types.Content(role="user", parts=[types.Part(text=text or "")])
    events = [
        e async for e in runner.run_async(user_id=user, session_id=session_id, new_message=content)
    ]
    return Run(events)


@pytest.fixture
def local() -> LocalHarness:
    return LocalHarness(memory=True, workspace="/work/project", home="/home/alice")


@pytest.fixture
def governed(local: LocalHarness) -> Callable[..., Any]:
    """``governed(agent, **plugin_options)`` -> (runner, plugin, new_session)."""

    def build(agent: LlmAgent, **options: Any) -> tuple[InMemoryRunner, SonderaHarnessPlugin, Any]:
        if "harness_factory" not in options:
            options.setdefault("harness", local)
        plugin = SonderaHarnessPlugin(**options)
        runner = InMemoryRunner(agent=agent, app_name="app", plugins=[plugin])

        async def new_session(user: str = "alice") -> str:
            session = await runner.session_service.create_session(app_name="app", user_id=user)
            return session.id

        return runner, plugin, new_session

    return build


@pytest.fixture
async def closing() -> AsyncIterator[list[InMemoryRunner]]:
    runners: list[InMemoryRunner] = []
    yield runners
    for runner in runners:
        await runner.close()


async def refused(
    runner: InMemoryRunner, session_id: str, text: str, kind: type[E], *, user: str = "alice"
) -> E:
    """The governance error of ``kind`` a turn raises (ADK chains it under a
    ``RuntimeError``); fails when the turn runs or raises something else."""
    with pytest.raises(RuntimeError) as raised:
        await turn(runner, session_id, text, user=user)
    cause = governance_error(raised.value)
    assert isinstance(cause, kind), raised.value
    return cause
