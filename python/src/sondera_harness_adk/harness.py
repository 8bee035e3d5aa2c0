"""Harnesses on the Rust core: the client of ``sondera serve`` and the
embedded harness.

Both are scopes of the Rust harnesses: :class:`SonderaRemoteHarness` speaks
gRPC to a harness server (no grpcio), :class:`LocalHarness` runs the Cedar
engine and the store in this process. Their work runs on a Tokio runtime
without holding the GIL.
"""

from __future__ import annotations

import copy
from os import PathLike
from typing import Any, Literal

from opentelemetry import propagate

from sondera_harness_adk._native import HarnessError, NativeHarness
from sondera_harness_adk.abc import Harness
from sondera_harness_adk.model import Actor, Adjudicated, Agent, Event

__all__ = ["HarnessError", "LocalHarness", "SonderaRemoteHarness"]


def _traceparent() -> str | None:
    """The current OpenTelemetry context (ADK's ``invoke_agent`` and
    ``execute_tool`` spans) as a W3C ``traceparent``, for the server's spans
    to join the agent's trace; ``None`` without a recording span."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier.get("traceparent")


class _NativeScope(Harness):
    """A :class:`Harness` over one native scope."""

    _native: NativeHarness
    # Whether steps carry the caller's trace context (to a server).
    _traced: bool = False

    @property
    def trajectory_id(self) -> str | None:
        return self._native.trajectory_id

    @property
    def agent(self) -> Agent | None:
        return self._native.agent

    def new_scope(self) -> _NativeScope:
        """A shallow copy with a fresh native scope: subclass behaviour and
        configuration carry over, the trajectory does not."""
        scope = copy.copy(self)
        scope._native = self._native.new_scope()
        return scope

    async def initialize(
        self, *, agent: Agent | None = None, session_id: str | None = None
    ) -> None:
        await self._native.initialize(agent=agent, session_id=session_id)

    async def resume(self, trajectory_id: str, *, agent: Agent | None = None) -> None:
        await self._native.resume(trajectory_id, agent=agent)

    async def finalize(self, *, summary: str | None = None) -> None:
        await self._native.finalize(summary=summary)

    async def fail(self, *, reason: str) -> None:
        await self._native.fail(reason=reason)

    async def adjudicate(self, event: Event) -> Adjudicated:
        traceparent = _traceparent() if self._traced else None
        return await self._native.adjudicate(event, traceparent=traceparent)

    async def adjudicates(self, events: list[Event]) -> list[Adjudicated]:
        traceparent = _traceparent() if self._traced else None
        return await self._native.adjudicates(events, traceparent=traceparent)

    async def grant(
        self, shape: dict[str, Any], scope: Literal["session", "always"], granted_by: Actor
    ) -> None:
        """Keep a standing approval of ``shape`` for this scope's agent."""
        await self._native.grant(shape, scope, granted_by)

    async def granted(self, shape: dict[str, Any]) -> dict[str, Any] | None:
        """The standing approval covering ``shape``, if any."""
        return await self._native.granted(shape)

    async def ask_operator(self, event_id: str, *, deadline: float | None = None) -> dict[str, Any]:
        """Ask the server's operators to decide escalated event ``event_id``
        of this trajectory and wait until they do or the deadline passes.

        Returns the approval (``status`` ``decided`` with ``approval`` and
        ``decided_by``, or ``expired``). A session approval is kept in this
        scope and an always approval by the server. Only a remote harness
        has operators; a local one raises :class:`HarnessError`.
        """
        return await self._native.ask_operator(event_id, deadline=deadline)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(trajectory_id={self.trajectory_id!r})"


class SonderaRemoteHarness(_NativeScope):
    """A harness whose events are judged and recorded by ``sondera serve``.

    The endpoint and token are taken from the arguments, else from
    ``SONDERA_HARNESS_ENDPOINT`` / ``SONDERA_API_TOKEN``, else from
    ``~/.sondera/env``. A bare ``host:port`` means ``http://`` on loopback and
    ``https://`` elsewhere. Several servers sharing one store may be listed,
    comma-separated: the first is used, and a call goes to the next when the
    one in use cannot be reached (a step sent again gets the verdict recorded
    for it). The connection is made on first use and shared by
    every scope from :meth:`new_scope`. ``approval_timeout`` is how long an
    escalated call waits for an operator (``EscalationMode.OPERATOR``) before
    it is denied; the server's default when not given.

    Each step carries the current OpenTelemetry context (a W3C
    ``traceparent``), so the server's spans join the agent's trace.
    """

    _traced = True

    def __init__(
        self,
        *,
        agent: Agent | None = None,
        sondera_harness_endpoint: str | None = None,
        sondera_api_key: str | None = None,
        timeout: float | None = None,
        ca_certificate: str | PathLike[str] | None = None,
        approval_timeout: float | None = None,
    ) -> None:
        self._native = NativeHarness.remote(
            endpoint=sondera_harness_endpoint,
            token=sondera_api_key,
            agent=agent,
            timeout=timeout,
            ca_certificate=None if ca_certificate is None else str(ca_certificate),
            approval_timeout=approval_timeout,
        )


class LocalHarness(_NativeScope):
    """A harness that judges and records in this process: no server.

    With no arguments it uses the built-in policy packs and the SQLite store
    in ``~/.sondera/data``, as ``sondera adjudicate`` does. ``policy_dirs``
    loads Cedar policies from directories instead; ``data_dir`` chooses the
    store's directory, ``memory=True`` keeps trajectories in memory only;
    ``mode`` is ``"govern"``, ``"monitor"`` or ``"steer"``; ``workspace`` and
    ``home`` say where the agent works (paths outside are reported);
    ``allowed_hosts`` are the hosts (``example.com``, ``*.example.com``) web
    egress may reach.
    """

    def __init__(
        self,
        *,
        policy_dirs: list[str | PathLike[str]] | None = None,
        data_dir: str | PathLike[str] | None = None,
        memory: bool = False,
        mode: Literal["govern", "monitor", "steer"] = "govern",
        workspace: str | PathLike[str] | None = None,
        home: str | PathLike[str] | None = None,
        allowed_hosts: list[str] | None = None,
        agent: Agent | None = None,
    ) -> None:
        self._native = NativeHarness.local(
            policy_dirs=None if policy_dirs is None else [str(d) for d in policy_dirs],
            data_dir=None if data_dir is None else str(data_dir),
            memory=memory,
            mode=mode,
            workspace=None if workspace is None else str(workspace),
            home=None if home is None else str(home),
            allowed_hosts=allowed_hosts,
            agent=agent,
        )
