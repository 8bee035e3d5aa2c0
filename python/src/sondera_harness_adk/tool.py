"""Tool classification: which action class a tool call is judged as.

The decision is the Rust classifier's (the one every Sondera integration
uses), never a Python copy: a call is a ``FileOperation``, ``ShellCommand``
or ``WebFetch`` only when its name *and* its identifying argument (a path or
patch, a command, a URL) say so; everything else is a generic ``ToolCall``.
"""

from __future__ import annotations

from typing import Any

from sondera_harness_adk._native import (
    FileOperation,
    ShellCommand,
    ToolCall,
    WebFetch,
    classify_tool_call,
    normalize_tool_name,
    observation_for,
)

ToolAction = FileOperation | ShellCommand | WebFetch | ToolCall

__all__ = [
    "ToolAction",
    "classify",
    "file_operation_for",
    "normalize_tool_name",
    "observation_for",
    "shell_command_for",
    "web_fetch_for",
]


def classify(tool_name: str, args: dict[str, Any], call_id: str | None = None) -> ToolAction:
    """The narrowest action ``tool_name(**args)`` fits."""
    action: ToolAction = classify_tool_call(tool_name, args, call_id)
    return action


def file_operation_for(
    tool_name: str, args: dict[str, Any], call_id: str | None
) -> FileOperation | None:
    """The call as a :class:`FileOperation`, or ``None`` if it is not a file call."""
    action = classify(tool_name, args, call_id)
    return action if isinstance(action, FileOperation) else None


def shell_command_for(
    tool_name: str, args: dict[str, Any], call_id: str | None
) -> ShellCommand | None:
    """The call as a :class:`ShellCommand`, or ``None`` if it is not a shell call."""
    action = classify(tool_name, args, call_id)
    return action if isinstance(action, ShellCommand) else None


def web_fetch_for(tool_name: str, args: dict[str, Any], call_id: str | None) -> WebFetch | None:
    """The call as a :class:`WebFetch`, or ``None`` if it is not a web call."""
    action = classify(tool_name, args, call_id)
    return action if isinstance(action, WebFetch) else None
