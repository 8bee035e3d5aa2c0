"""Session scopes: one trajectory scope per (app, user, session).

An invocation leases its session's scope while it runs. Idle scopes are
ended and evicted least-recently-used when the plugin is full; a scope
whose trajectory could not be started or ended is quarantined (it judges
nothing) until an eviction or ``close()`` ends it. Registry changes happen
between awaits, so they are atomic on the event loop; each scope's harness
calls are serialised by the scope's own lock, never by a lock other
sessions wait on.
"""

from __future__ import annotations

import asyncio
import enum
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sondera_harness_adk._delegated import MAX_OPEN_DELEGATIONS, DelegatedRun
from sondera_harness_adk._tree import AgentTree, describe_change
from sondera_harness_adk.abc import Harness
from sondera_harness_adk.errors import (
    AgentTreeError,
    CapacityError,
    ClosedError,
    CloseError,
    HarnessStartError,
    LeaseError,
    QuarantinedError,
)

SessionKey = tuple[str, str, str]


def describe(key: SessionKey) -> str:
    app, user, session = key
    return f"{app}/{user}/{session}"


class Phase(enum.Enum):
    FRESH = "fresh"
    OPEN = "open"
    ENDING = "ending"
    QUARANTINED = "quarantined"


@dataclass
class PendingTool:
    """A tool call between its before- and after-tool callbacks."""

    action: Any
    provider_call_id: str | None
    runs: bool
    signature: str | None = None
    """How a child of an agent tool's call is recognised when it is made again."""


@dataclass
class Invocation:
    """What one invocation has seen, for matching its steps to each other."""

    blocked: str | None = None
    """Why the run must not go on (its user message was blocked)."""
    last_user_prompt: str | None = None
    last_assistant_prompt: str | None = None
    pending: dict[str, list[PendingTool]] = field(default_factory=dict)


@dataclass(eq=False)
class Scope:
    key: SessionKey
    harness: Harness
    tree: AgentTree
    phase: Phase = Phase.FRESH
    quarantine_reason: str = ""
    leases: dict[str, Invocation] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    session_grants: list[dict[str, Any]] = field(default_factory=list)
    delegated: dict[str, DelegatedRun] = field(default_factory=dict)
    """Agents run as tools, by the function call of the session's own agents
    they serve (:mod:`sondera_harness_adk._delegated`)."""

    def start_delegated(self, call_id: str, action: Any) -> DelegatedRun:
        """A fresh record for an agent tool's call; questions left unanswered
        longest are forgotten beyond ``MAX_OPEN_DELEGATIONS``."""
        self.delegated.pop(call_id, None)
        while len(self.delegated) >= MAX_OPEN_DELEGATIONS:
            del self.delegated[next(iter(self.delegated))]
        run = self.delegated[call_id] = DelegatedRun(action=action)
        return run

    def check_usable(self) -> None:
        if self.phase is Phase.QUARANTINED:
            raise QuarantinedError(
                f"session {describe(self.key)} is quarantined ({self.quarantine_reason}); it "
                "judges nothing until an eviction or close() ends its trajectory"
            )

    def invocation(self, invocation_id: str) -> Invocation:
        state = self.leases.get(invocation_id)
        if state is None:
            raise LeaseError(
                f"invocation {invocation_id} of session {describe(self.key)} holds no lease: "
                "the run-start callback must complete before agent, model and tool steps "
                "are judged"
            )
        return state


class Sessions:
    """All session scopes of one plugin."""

    def __init__(
        self, capacity: int, issue: Callable[[], Harness], timeout: float | None = None
    ) -> None:
        self.capacity = capacity
        self._issue = issue
        self._timeout = timeout
        # Least recently used first: an eviction takes the first idle scope.
        self._scopes: OrderedDict[SessionKey, Scope] = OrderedDict()
        self._closing = False
        self._settled: asyncio.Event | None = None

    def scope(self, key: SessionKey) -> Scope | None:
        return self._scopes.get(key)

    def holding(self, harness: Harness) -> bool:
        """Whether a scope already holds ``harness``."""
        return any(s.harness is harness for s in self._scopes.values())

    async def _bounded(self, work: Awaitable[None]) -> None:
        if self._timeout is None:
            await work
            return
        try:
            await asyncio.wait_for(work, self._timeout)
        except TimeoutError:
            raise TimeoutError(
                f"the harness did not answer within {self._timeout}s; the trajectory may "
                "have changed"
            ) from None

    def __len__(self) -> int:
        return len(self._scopes)

    def active_leases(self) -> list[tuple[SessionKey, str]]:
        return sorted((s.key, inv) for s in self._scopes.values() for inv in s.leases)

    def _leases_text(self) -> str:
        return ", ".join(f"{describe(k)} invocation {i}" for k, i in self.active_leases())

    async def _wait_settled(self) -> None:
        if self._settled is None:
            self._settled = asyncio.Event()
        await self._settled.wait()

    def _notify_settled(self) -> None:
        if self._settled is not None:
            self._settled.set()
            self._settled = None

    async def acquire(self, key: SessionKey, invocation_id: str, tree: AgentTree) -> Scope:
        """Takes (or confirms) ``invocation_id``'s lease on ``key``'s scope,
        creating the scope and starting its trajectory when needed."""
        while True:
            if self._closing:
                raise ClosedError(
                    "the Sondera plugin is closing or already closed and accepts no new invocations"
                )
            scope = self._scopes.get(key)
            if scope is not None:
                if scope.tree.principal != tree.principal:
                    change = describe_change(scope.tree.principal, tree.principal)
                    raise AgentTreeError(
                        f"session {describe(key)} is governed as the agent tree rooted at "
                        f"`{scope.tree.root_name}`, but this invocation's tree differs "
                        f"({change}); a session keeps its agent tree: start a new session "
                        "for a changed tree"
                    )
                if scope.phase is Phase.ENDING:
                    await self._wait_settled()
                    continue
                scope.check_usable()
                self._scopes.move_to_end(key)
                scope.leases.setdefault(invocation_id, Invocation())
                await self._start(scope, invocation_id)
                return scope
            if len(self._scopes) >= self.capacity:
                await self._make_room()
                continue
            scope = Scope(key, self._issue(), tree)
            scope.leases[invocation_id] = Invocation()
            self._scopes[key] = scope
            await self._start(scope, invocation_id)
            return scope

    async def _make_room(self) -> None:
        ending = False
        for victim in self._scopes.values():
            if victim.phase is Phase.ENDING:
                ending = True
            elif not victim.leases:
                victim.phase = Phase.ENDING
                error = await self._end(victim)
                if error is not None:
                    raise CapacityError(
                        "at capacity: could not end the trajectory of idle session "
                        f"{describe(victim.key)} to make room: {error}"
                    ) from error
                return
        if ending:
            await self._wait_settled()
            return
        raise CapacityError(
            f"at capacity: all {self.capacity} session scopes are in use by running invocations "
            f"({self._leases_text()}); raise max_session_scopes or let a run finish"
        )

    async def _start(self, scope: Scope, invocation_id: str) -> None:
        if scope.phase is not Phase.FRESH:
            return
        async with scope.lock:
            if scope.phase is not Phase.FRESH:
                return
            try:
                await scope.harness.initialize(agent=scope.tree.principal, session_id=scope.key[2])
            except BaseException as error:
                # A cancelled turn (not an ``Exception``) leaves the scope as a
                # failed start does: no lease held, and a trajectory that may
                # have started quarantined until it is ended.
                scope.leases.pop(invocation_id, None)
                trajectory = scope.harness.trajectory_id
                if trajectory is not None:
                    scope.phase = Phase.QUARANTINED
                    scope.quarantine_reason = f"starting trajectory {trajectory} failed: {error!r}"
                elif not scope.leases:
                    del self._scopes[scope.key]
                if not isinstance(error, Exception):
                    raise
                raise HarnessStartError(
                    f"could not start the trajectory of session {describe(scope.key)}: {error}"
                ) from error
            scope.phase = Phase.OPEN

    async def _end(self, scope: Scope) -> Exception | None:
        """Ends ``scope``'s trajectory (it is marked ending) and removes it; on
        failure it stays, quarantined, for a later eviction or close."""
        error: Exception | None = None
        async with scope.lock:
            if scope.harness.trajectory_id is not None:
                try:
                    await self._bounded(scope.harness.finalize())
                except Exception as failure:
                    error = failure
        if error is None:
            self._scopes.pop(scope.key, None)
        else:
            scope.phase = Phase.QUARANTINED
            scope.quarantine_reason = f"ending its trajectory failed: {error}"
        self._notify_settled()
        return error

    def release(self, key: SessionKey, invocation_id: str) -> None:
        scope = self._scopes.get(key)
        if scope is not None:
            scope.leases.pop(invocation_id, None)

    async def close(self) -> None:
        """Finalizes every idle scope and stops taking work. Refused, changing
        nothing, while invocations hold leases."""
        if self.active_leases():
            raise CloseError(
                f"cannot close while invocations hold leases: {self._leases_text()}; "
                "let them finish, then close again"
            )
        self._closing = True
        idle = [s for s in self._scopes.values() if s.phase is not Phase.ENDING]
        for scope in idle:
            scope.phase = Phase.ENDING
        results = await asyncio.gather(*(self._end(s) for s in idle))
        failures = sorted(
            (describe(s.key), e) for s, e in zip(idle, results, strict=True) if e is not None
        )
        if failures:
            lines = "".join(f"\n- {key}: {error}" for key, error in failures)
            raise CloseError(
                f"{len(failures)} session trajectories could not be ended and stay "
                f"quarantined for a retry:{lines}"
            )
