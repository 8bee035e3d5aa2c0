"""The ADK agent tree, analysed into the card policies see.

The root is the policy principal; its card lists every tool of the tree
(the canonical inventory) and every other agent as a flat sub-agent
descriptor: its parent path, how it collaborates with its parent
(``transfer`` for an LLM agent's sub-agents, ``sequential`` / ``parallel`` /
``loop`` inside workflow agents, ``custom`` for agents run as tools or by
custom agents) and the tools it owns.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.loop_agent import LoopAgent
from google.adk.agents.parallel_agent import ParallelAgent
from google.adk.agents.sequential_agent import SequentialAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

from sondera_harness_adk.model import (
    Agent,
    ExecutionAttribution,
    ReActAgentCard,
    ReActSubAgentDescriptor,
    Tool,
)

logger = logging.getLogger(__name__)

PROVIDER = "google-adk"
PLATFORM = "adk-python"
TRANSFER_TOOL = "transfer_to_agent"


@dataclass(frozen=True)
class Node:
    """One agent of the tree: its name and the names from the root to it."""

    name: str
    path: tuple[str, ...]
    agent_tool_parent: str | None = None
    """For an agent run as a tool, the agent whose tool it is."""

    @functools.cached_property
    def attribution(self) -> ExecutionAttribution:
        """What the events this agent executes record about it."""
        return ExecutionAttribution(agent_name=self.name, agent_path=list(self.path))


@dataclass(frozen=True)
class AgentTree:
    root_name: str
    principal: Agent
    """The root agent with its card: what the trajectory starts with."""
    identity: Agent
    """The root agent without its card: what every event names."""
    nodes: dict[str, Node]

    def node(self, name: str) -> Node | None:
        return self.nodes.get(name)


def _collaboration(parent: BaseAgent) -> str:
    if isinstance(parent, SequentialAgent):
        return "sequential"
    if isinstance(parent, ParallelAgent):
        return "parallel"
    if isinstance(parent, LoopAgent):
        return "loop"
    if isinstance(parent, LlmAgent):
        return "transfer"
    return "custom"


def _as_tool(tool: Any) -> BaseTool | None:
    if isinstance(tool, BaseTool):
        return tool
    if callable(tool):
        return FunctionTool(tool)
    return None


def _declaration(tool: BaseTool) -> Tool:
    declaration = None
    try:
        declaration = tool._get_declaration()
    except Exception as error:  # a tool whose declaration cannot be built is still listed
        logger.warning("tool %s has no readable declaration: %s", tool.name, error)
    annotations = _annotations(tool)
    if declaration is None:
        return Tool(tool.name, tool.description or "", annotations=annotations)
    dumped = declaration.model_dump(mode="json", exclude_none=True)
    return Tool(
        tool.name,
        dumped.get("description") or tool.description or "",
        dumped.get("parameters"),
        parameters_json_schema=dumped.get("parameters_json_schema"),
        response=dumped.get("response"),
        response_json_schema=dumped.get("response_json_schema"),
        annotations=annotations,
    )


def _annotations(tool: BaseTool) -> dict[str, Any] | None:
    """An MCP tool's behaviour hints (readOnlyHint, destructiveHint, ...)."""
    annotations = getattr(getattr(tool, "_mcp_tool", None), "annotations", None)
    if annotations is None:
        return None
    if isinstance(annotations, dict):
        return annotations
    dump = getattr(annotations, "model_dump", None)
    return dump(mode="json", exclude_none=True) if callable(dump) else None


def _children(agent: BaseAgent) -> Iterator[tuple[BaseAgent, str, bool]]:
    """Each child agent, how it collaborates, and whether it runs as a tool."""
    for child in agent.sub_agents:
        yield child, _collaboration(agent), False
    if isinstance(agent, LlmAgent):
        for tool in agent.tools:
            if isinstance(tool, AgentTool):
                yield tool.agent, "custom", True


def _instruction(agent: BaseAgent) -> str:
    instruction = getattr(agent, "instruction", "")
    return instruction if isinstance(instruction, str) else ""


def _model_name(agent: BaseAgent) -> str | None:
    model = getattr(agent, "model", None)
    if isinstance(model, str):
        return model or None
    return getattr(model, "model", None) if model is not None else None


def analyse(root: BaseAgent) -> AgentTree:
    """The card and node index of the tree rooted at ``root``."""
    tools: dict[str, Tool] = {}
    descriptors: list[ReActSubAgentDescriptor] = []
    nodes: dict[str, Node] = {}
    has_sub_agents = False
    stack: list[tuple[BaseAgent, tuple[str, ...], str, str | None]] = [
        (root, (root.name,), "custom", None)
    ]
    while stack:
        agent, path, mode, tool_parent = stack.pop()
        if agent.name in nodes:
            continue
        nodes[agent.name] = Node(agent.name, path, tool_parent)
        owned: list[str] = []
        if isinstance(agent, LlmAgent):
            for raw in agent.tools:
                tool = _as_tool(raw)
                if tool is None:
                    continue
                owned.append(tool.name)
                tools.setdefault(tool.name, _declaration(tool))
        if agent.sub_agents:
            has_sub_agents = True
        if agent is not root:
            descriptors.append(
                ReActSubAgentDescriptor(
                    name=agent.name,
                    parent_path=list(path[:-1]),
                    description=agent.description or "",
                    model=_model_name(agent),
                    collaboration_mode=mode,
                    owned_tool_names=owned,
                )
            )
        for child, child_mode, as_tool in reversed(list(_children(agent))):
            stack.append((child, (*path, child.name), child_mode, agent.name if as_tool else None))
    if has_sub_agents and TRANSFER_TOOL not in tools:
        tools[TRANSFER_TOOL] = Tool(
            TRANSFER_TOOL,
            "Hand the conversation to another agent of the tree.",
            parameters_json_schema={
                "type": "object",
                "properties": {"agent_name": {"type": "string"}},
                "required": ["agent_name"],
            },
        )
    card = ReActAgentCard(
        model=_model_name(root),
        system_instruction=_instruction(root),
        tools=list(tools.values()),
        sub_agents=descriptors,
    )
    principal = Agent(root.name, PROVIDER, platform=PLATFORM, card=card)
    return AgentTree(root.name, principal, Agent(root.name, PROVIDER, platform=PLATFORM), nodes)
