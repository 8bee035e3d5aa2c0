"""The harness interface the plugin adjudicates through.

A :class:`Harness` is one *trajectory scope*: it holds at most one
trajectory, walks it through its lifecycle and judges each of its events.
The plugin keeps one scope per ADK session, taken from :meth:`Harness.new_scope`
of the harness it was given, or from the ``harness_factory`` it was given.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from sondera_harness_adk.model import Adjudicated, Agent, Event


class ScopeNotSupportedError(TypeError):
    """A harness cannot make fresh scopes of itself."""


class Harness(ABC):
    """Abstract base of Sondera harness implementations."""

    _trajectory_id: str | None = None
    _agent: Agent | None = None

    @property
    def trajectory_id(self) -> str | None:
        """The trajectory this scope holds, if any."""
        return self._trajectory_id

    @property
    def agent(self) -> Agent | None:
        """The agent this scope's trajectory belongs to."""
        return self._agent

    def new_scope(self) -> Harness:
        """A fresh, uninitialized scope sharing this harness's configuration and
        transport but no trajectory state.

        Concurrent sessions must never share one scope, so a harness that
        cannot make one must be given to the plugin as ``harness_factory=``.
        """
        raise ScopeNotSupportedError(
            f"{type(self).__name__} does not implement new_scope(): override it to return a "
            "fresh, uninitialized scope, or pass SonderaHarnessPlugin(harness_factory=...) "
            "so every session gets its own harness"
        )

    @abstractmethod
    async def resume(self, trajectory_id: str, *, agent: Agent | None = None) -> None:
        """Reattach to a recorded trajectory."""

    @abstractmethod
    async def initialize(
        self, *, agent: Agent | None = None, session_id: str | None = None
    ) -> None:
        """Start a new trajectory."""

    @abstractmethod
    async def finalize(self, *, summary: str | None = None) -> None:
        """End the trajectory successfully."""

    @abstractmethod
    async def fail(self, *, reason: str) -> None:
        """End the trajectory as failed."""

    @abstractmethod
    async def adjudicate(self, event: Event) -> Adjudicated:
        """Judge one event of this scope's trajectory."""

    @abstractmethod
    async def adjudicates(self, events: list[Event]) -> list[Adjudicated]:
        """Judge events in order, one verdict each."""
