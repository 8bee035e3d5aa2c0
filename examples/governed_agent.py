"""A governed ADK agent, offline: one allowed, one denied and one escalated
tool call, judged by the built-in policy packs in this process.

    pip install ./python && python examples/governed_agent.py

The model is scripted (no network, no keys); the escalated call is settled
by an approver standing in for the person who would be asked.
"""

from __future__ import annotations

import asyncio

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import InMemoryRunner
from google.genai import types

from sondera_harness_adk import SonderaHarnessPlugin
from sondera_harness_adk.escalation import Approval, ApprovalDecision, ApprovalRequest
from sondera_harness_adk.harness import LocalHarness
from sondera_harness_adk.model import Actor
from sondera_harness_adk.testing import ScriptedLlm


def bash(command: str) -> dict[str, object]:
    """Run a shell command. A dry run: it reports what it was allowed to run."""
    return {"stdout": f"(dry run) {command}"}


def approve_once(request: ApprovalRequest) -> ApprovalDecision:
    print(f"\n[approval asked]\n{request.question()}\n[approved once by ops@example.com]\n")
    return ApprovalDecision(Approval.ONCE, Actor.human("ops@example.com"))


async def main() -> None:
    model = ScriptedLlm(
        script=[
            ("bash", {"command": "npm test"}),  # allowed
            ("bash", {"command": "rm -rf ~"}),  # denied: deletes outside the workspace
            ("bash", {"command": "git push --force origin main"}),  # escalated
            "Tests pass; I did not delete your home directory; the force push was approved.",
        ]
    )
    agent = LlmAgent(name="coder", model=model, instruction="You fix failing tests.", tools=[bash])
    plugin = SonderaHarnessPlugin(harness=LocalHarness(memory=True), approver=approve_once)
    runner = InMemoryRunner(app=App(name="example", root_agent=agent, plugins=[plugin]))
    session = await runner.session_service.create_session(app_name="example", user_id="alice")
    message = types.Content(role="user", parts=[types.Part(text="Fix the tests and push.")])
    async for event in runner.run_async(
        user_id="alice", session_id=session.id, new_message=message
    ):
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.function_call:
                print(f"-> {part.function_call.name}({part.function_call.args})")
            elif part.function_response:
                print(f"<- {part.function_response.response}")
            elif part.text:
                print(f"{event.author}: {part.text}")
    await runner.close()


if __name__ == "__main__":
    asyncio.run(main())
