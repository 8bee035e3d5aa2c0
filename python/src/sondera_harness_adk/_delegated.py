"""Questions from agents run as tools (``AgentTool``), asked on their
caller's function call.

ADK runs an ``AgentTool`` child in a nested runner whose events never reach
the person, and discards the child's session when the tool returns, so the
child cannot pause for a confirmation and resume by itself. The plugin
therefore asks on the outermost function call of the session's own agents
(the one the person sees), stops the child, and lets ADK run that call again
once the person has answered. The second attempt starts the child over; the
calls it already made are answered with their recorded results instead of
running again, so it goes on from the step that was asked about.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# A child that makes more calls than this before pausing has the rest run
# again on resumption rather than held in memory.
MAX_RECORDED_CALLS = 512

# Agent tool calls of one session whose question is still open; an older one
# answered after this many newer ones starts its child afresh.
MAX_OPEN_DELEGATIONS = 16


def call_signature(agent: str, tool: str, args: dict[str, Any]) -> str | None:
    """What identifies a call across attempts; ``None`` when its arguments
    cannot be written out, so it is never answered from a record."""
    try:
        return json.dumps([agent, tool, args], sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


@dataclass
class DelegatedRun:
    """The children's steps under one outermost function call."""

    action: Any = None
    """The outermost call as it was judged, for judging its result when it
    ends in a later attempt."""

    earlier: list[tuple[str, Any]] = field(default_factory=list)
    """What the previous attempt's calls were, as (signature, result)."""
    current: list[tuple[str, Any]] = field(default_factory=list)
    """This attempt's calls so far, replayed or run."""
    asked: str | None = None
    """The signature of the call the person is asked about."""
    paused: bool = False
    """The question was asked in this attempt: the children stop."""
    diverged: bool = False
    """This attempt made a call the earlier one did not: nothing more is replayed."""

    def resume(self) -> None:
        """Starts the attempt that follows the person's answer."""
        self.earlier, self.current = self.current, []
        self.paused = False
        self.diverged = False

    def replay(self, signature: str | None) -> tuple[bool, Any]:
        """The recorded result when ``signature`` is the next call the
        earlier attempt made."""
        at = len(self.current)
        if self.diverged or signature is None or at >= len(self.earlier):
            self.diverged = True
            return False, None
        recorded, result = self.earlier[at]
        if recorded != signature:
            self.diverged = True
            return False, None
        self.current.append((signature, result))
        return True, result

    def record(self, signature: str | None, result: Any) -> None:
        """A call of this attempt that ran; one that cannot be identified
        ends replaying, since later positions would no longer line up."""
        if signature is None or len(self.current) >= MAX_RECORDED_CALLS:
            self.diverged = True
            return
        self.current.append((signature, result))
