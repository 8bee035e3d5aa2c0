"""Offline testing of governed agents: a scripted model.

:class:`ScriptedLlm` is a ``BaseLlm`` that answers from a script instead of
a model service, so an agent and its policies can be exercised with no
network and no keys::

    model = ScriptedLlm(script=[("bash", {"command": "ls"}), "done"])
    agent = LlmAgent(name="coder", model=model, tools=[bash])
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

__all__ = ["ScriptedLlm", "Turn"]

Turn = str | tuple[str, dict[str, Any]] | list[tuple[str, dict[str, Any]]]


def _content(turn: Turn, index: int) -> types.Content:
    if isinstance(turn, str):
        return types.Content(role="model", parts=[types.Part(text=turn)])
    calls = [turn] if isinstance(turn, tuple) else turn
    return types.Content(
        role="model",
        parts=[
            types.Part(
                function_call=types.FunctionCall(name=name, args=args, id=f"call-{index}-{i}")
            )
            for i, (name, args) in enumerate(calls)
        ],
    )


class ScriptedLlm(BaseLlm):
    """Each model call takes the next turn: text, or function calls.

    ``script`` may also be a callable that picks the turn from the request.
    When ADK streams (``StreamingMode.SSE``), a text turn arrives as one
    partial chunk per line, then the whole text.
    """

    model: str = "scripted"
    script: list[Turn] | Callable[[LlmRequest], Turn] = Field(default_factory=list)
    calls: int = 0
    requests: list[LlmRequest] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        if callable(self.script):
            turn = self.script(llm_request)
        elif self.calls < len(self.script):
            turn = self.script[self.calls]
        else:
            turn = "done"
        self.calls += 1
        if stream and isinstance(turn, str):
            for line in turn.splitlines(keepends=True):
                yield LlmResponse(content=_content(line, self.calls), partial=True)
        yield LlmResponse(content=_content(turn, self.calls), turn_complete=True)
