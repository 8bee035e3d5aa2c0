"""Sondera Harness governance for Google ADK agents.

Every step an ADK agent takes (the user's message, what the model reads and
answers, each tool call and its result) is judged by Cedar policies over
facts computed by the Rust detectors, and allowed, denied or escalated to a
person, with a durable record. The public surface is the plugin; harnesses
live in :mod:`sondera_harness_adk.harness`, the harness interface in
:mod:`sondera_harness_adk.abc`, the event model in
:mod:`sondera_harness_adk.model`, and the errors raised when a session cannot
be governed in :mod:`sondera_harness_adk.errors`.
"""

from sondera_harness_adk.plugin import SonderaHarnessPlugin

__all__ = ["SonderaHarnessPlugin"]


def __dir__() -> list[str]:
    # The submodules are reached by name; the package itself shows only the plugin.
    return list(__all__)
