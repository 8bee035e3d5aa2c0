"""The trajectory event model: events, agents, payloads and verdicts.

The classes are the Rust model's, so a value built here is validated exactly
as the wire format is, and ``to_dict`` / ``from_dict`` / ``Event.to_json``
read and write that format.
"""

from sondera_harness_adk._native import (
    Actor,
    ActorType,
    Adjudicated,
    Agent,
    AgentCard,
    Causality,
    Completed,
    Decision,
    Event,
    ExecutionAttribution,
    Failed,
    FileOperation,
    FileOperationResult,
    FileOpType,
    Mode,
    PolicyMetadata,
    Prompt,
    PromptRole,
    ReActAgentCard,
    ReActSubAgentDescriptor,
    Resumed,
    ShellCommand,
    ShellCommandOutput,
    Snapshot,
    Started,
    Suspended,
    Terminated,
    Thought,
    Tool,
    ToolCall,
    ToolOutput,
    WebFetch,
    WebFetchOutput,
    admit_provider_call_id,
)

EventPayload = (
    ToolCall
    | ShellCommand
    | WebFetch
    | FileOperation
    | Prompt
    | Thought
    | ToolOutput
    | ShellCommandOutput
    | WebFetchOutput
    | FileOperationResult
    | Started
    | Completed
    | Failed
    | Terminated
    | Suspended
    | Resumed
    | Adjudicated
    | Snapshot
)

__all__ = [
    "Actor",
    "ActorType",
    "Adjudicated",
    "Agent",
    "AgentCard",
    "Causality",
    "Completed",
    "Decision",
    "Event",
    "EventPayload",
    "ExecutionAttribution",
    "Failed",
    "FileOpType",
    "FileOperation",
    "FileOperationResult",
    "Mode",
    "PolicyMetadata",
    "Prompt",
    "PromptRole",
    "ReActAgentCard",
    "ReActSubAgentDescriptor",
    "Resumed",
    "ShellCommand",
    "ShellCommandOutput",
    "Snapshot",
    "Started",
    "Suspended",
    "Terminated",
    "Thought",
    "Tool",
    "ToolCall",
    "ToolOutput",
    "WebFetch",
    "WebFetchOutput",
    "admit_provider_call_id",
]
