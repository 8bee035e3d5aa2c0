"""Escalations: tool calls the policies want a person to decide.

An escalated call is settled, in this order, by a standing approval that
covers its shape, then by the plugin's :class:`EscalationMode`:

- ``CONFIRM`` asks through ADK's tool confirmation: the call answers with
  ``adk_request_confirmation`` and runs only when the user's confirmation
  comes back with ``confirmed: true`` (its payload may carry
  ``{"grant": "session"}`` or ``{"grant": "always"}``);
- ``ASK`` calls the configured ``approver`` with an :class:`ApprovalRequest`;
- ``OPERATOR`` asks the operators of ``sondera serve`` through a
  :class:`~sondera_harness_adk.harness.SonderaRemoteHarness`: the call waits
  for their decision and is denied when the deadline passes;
- ``DENY`` is for unattended runs: nobody is asked, the call is denied;
- ``YOLO`` approves without asking, and records that nobody was asked.

A hard deny is never escalated, so nothing here can override one.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sondera_harness_adk.model import Actor, Adjudicated, EventPayload

__all__ = ["Approval", "ApprovalDecision", "ApprovalRequest", "Approver", "EscalationMode"]


class EscalationMode(enum.Enum):
    """What the plugin does with an escalate verdict on a tool call."""

    CONFIRM = "confirm"
    ASK = "ask"
    OPERATOR = "operator"
    DENY = "deny"
    YOLO = "yolo"


class Approval(enum.Enum):
    """A person's answer to an escalation."""

    DENY = "deny"
    ONCE = "once"
    """This call only."""
    SESSION = "session"
    """This call and later ones of the same shape in this session."""
    ALWAYS = "always"
    """This call and later ones of the same shape by this agent, from now on."""

    @property
    def grant_scope(self) -> str | None:
        return {Approval.SESSION: "session", Approval.ALWAYS: "always"}.get(self)

    @property
    def phrase(self) -> str:
        return {
            Approval.DENY: "denied",
            Approval.ONCE: "approved once",
            Approval.SESSION: "approved for this session",
            Approval.ALWAYS: "approved always",
        }[self]


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call waiting for a decision."""

    session: tuple[str, str, str]
    """(app, user, session) of the call."""
    agent: str
    """The agent that wants to make the call."""
    tool: str
    arguments: dict[str, Any]
    function_call_id: str | None
    action: EventPayload
    """The call as it was judged."""
    verdict: Adjudicated
    """The escalate verdict: why a person is asked."""
    shape: dict[str, Any] | None
    """What a session or always approval would cover; ``None`` when the call
    has no shape that can be trusted again, so it can be approved once only."""
    shape_text: str | None = None
    parent_agents: tuple[str, ...] = field(default=())
    """The agents whose tool calls this one runs inside (agents run as tools)."""

    def question(self) -> str:
        """The question, in words, for a person."""
        who = f"Agent `{self.agent}`"
        if self.parent_agents:
            who += f" (run as a tool: {' > '.join((*self.parent_agents, self.agent))})"
        text = (
            f"{who} wants to call `{self.tool}` with {self.arguments}.\n"
            f"{self.verdict.deny_message()}"
        )
        if self.shape_text:
            text += f"\nA standing approval would cover: {self.shape_text}"
        return text


@dataclass(frozen=True)
class ApprovalDecision:
    """The decision and who made it; recorded in the trajectory with that actor."""

    approval: Approval
    decided_by: Actor


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision] | ApprovalDecision]
"""Decides escalated tool calls, typically by asking a person."""
