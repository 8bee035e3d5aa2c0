"""The errors the plugin raises when a session cannot be governed.

Nothing runs when one is raised. ADK runs plugin callbacks inside its own
error handling and re-raises what they raise as a ``RuntimeError`` with the
original chained, so ``runner.run_async`` raises ``RuntimeError`` whose
``__cause__`` is one of these; :func:`governance_error` finds it::

    try:
        async for event in runner.run_async(...):
            ...
    except RuntimeError as error:
        cause = governance_error(error)
        if isinstance(cause, CapacityError):
            ...  # retry later, answer 503

A step the harness could not judge (a timeout, a harness error, a result it
cannot read) is not raised: it is blocked like a denied step, and the model
or the tool's caller reads why, as the harness's own verdicts are.
"""

from __future__ import annotations

__all__ = [
    "AgentTreeError",
    "CapacityError",
    "CloseError",
    "ClosedError",
    "HarnessFactoryError",
    "HarnessStartError",
    "LeaseError",
    "QuarantinedError",
    "ScopeError",
    "SonderaError",
    "governance_error",
]


class SonderaError(Exception):
    """Sondera Harness refused or stopped work; nothing ran."""


class ScopeError(SonderaError):
    """A session cannot be governed now, so its invocation was stopped
    before anything ran."""


class QuarantinedError(ScopeError):
    """The session is quarantined: starting or ending its trajectory failed,
    and it judges nothing until an eviction or ``close()`` ends it."""


class CapacityError(ScopeError):
    """Every session scope is in use by a running invocation
    (``max_session_scopes``)."""


class ClosedError(ScopeError):
    """The plugin is closing or already closed and takes no new invocations."""


class LeaseError(ScopeError):
    """A callback ran for an invocation that holds no lease: the run-start
    callback must complete before agent, model and tool steps are judged."""


class HarnessFactoryError(ScopeError):
    """``harness_factory`` returned something other than a fresh harness: an
    object already issued, one that holds a trajectory, or no harness."""


class HarnessStartError(ScopeError):
    """The session's trajectory could not be started (the harness is
    unreachable or refused)."""


class AgentTreeError(ScopeError):
    """The agent tree of the invocation is not the one the session is
    governed as, or is not an agent tree at all."""


class CloseError(SonderaError):
    """``close()`` did not finish; the message says what is left."""


class StepError(SonderaError):
    """A step could not be judged, so it was blocked (not raised to the
    caller: the model or the tool's caller reads why)."""


def governance_error(error: BaseException) -> SonderaError | None:
    """The :class:`SonderaError` that ``error`` is or was raised from, if
    any (ADK raises plugin errors as a ``RuntimeError`` with them chained)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, SonderaError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None
