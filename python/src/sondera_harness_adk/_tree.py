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

from sondera_harness_adk.errors import AgentTreeError
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


def signature(root: BaseAgent) -> tuple[tuple[int, ...], ...]:
    """What the tree is made of, by object: each agent with its tools and
    sub-agents. Cheap to take on every run; when it changes, the tree is
    analysed again."""
    parts: list[tuple[int, ...]] = []
    stack = [root]
    seen: set[int] = set()
    while stack:
        agent = stack.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        tools = agent.tools if isinstance(agent, LlmAgent) else []
        parts.append((id(agent), *(id(t) for t in tools), -1, *(id(a) for a in agent.sub_agents)))
        stack.extend(child for child, _, _ in _children(agent))
    return tuple(parts)


def describe_change(before: Agent, after: Agent) -> str:
    """What differs between two principals' cards, for an error message."""
    if before.id != after.id:
        return f"its root agent is `{after.id}`, not `{before.id}`"

    def names(agent: Agent) -> tuple[set[str], set[str]]:
        card = agent.card.react_card if agent.card else None
        if card is None:
            return set(), set()
        return {t.name for t in card.tools}, {a.name for a in card.sub_agents}

    (tools_before, agents_before), (tools_after, agents_after) = names(before), names(after)
    changes = [
        *(f"tool `{t}` added" for t in sorted(tools_after - tools_before)),
        *(f"tool `{t}` removed" for t in sorted(tools_before - tools_after)),
        *(f"agent `{a}` added" for a in sorted(agents_after - agents_before)),
        *(f"agent `{a}` removed" for a in sorted(agents_before - agents_after)),
    ]
    return ", ".join(changes) or "a tool's or an agent's definition changed"


def analyse(root: BaseAgent) -> AgentTree:
    """The card and node index of the tree rooted at ``root``. Two agents
    with one name, or two different tools with one name, are errors: steps
    and policies tell them apart by name."""
    tools: dict[str, Tool] = {}
    owners: dict[str, str] = {}
    agents: dict[str, BaseAgent] = {}
    descriptors: list[ReActSubAgentDescriptor] = []
    nodes: dict[str, Node] = {}
    has_sub_agents = False
    stack: list[tuple[BaseAgent, tuple[str, ...], str, str | None]] = [
        (root, (root.name,), "custom", None)
    ]
    while stack:
        agent, path, mode, tool_parent = stack.pop()
        if agent.name in nodes:
            if agents[agent.name] is agent:
                continue
            raise AgentTreeError(
                f"two agents of the tree are named `{agent.name}`: at "
                f"{'/'.join(nodes[agent.name].path)} and at {'/'.join(path)}; "
                "agent names must be unique in a tree"
            )
        agents[agent.name] = agent
        nodes[agent.name] = Node(agent.name, path, tool_parent)
        owned: list[str] = []
        if isinstance(agent, LlmAgent):
            for raw in agent.tools:
                tool = _as_tool(raw)
                if tool is None:
                    continue
                owned.append(tool.name)
                declared = _declaration(tool)
                known = tools.setdefault(tool.name, declared)
                if known != declared:
                    raise AgentTreeError(
                        f"two different tools are named `{tool.name}`: one of agent "
                        f"`{owners[tool.name]}` and one of agent `{agent.name}`; tool names "
                        "must be unique in a tree"
                    )
                owners.setdefault(tool.name, agent.name)
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
