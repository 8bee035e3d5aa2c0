"""LocalHarness options, and a custom harness written against the published interface."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import coder, turn
from google.adk.runners import InMemoryRunner

from sondera_harness_adk import SonderaHarnessPlugin
from sondera_harness_adk.abc import Harness
from sondera_harness_adk.harness import HarnessError, LocalHarness
from sondera_harness_adk.model import (
    Adjudicated,
    Agent,
    Decision,
    Event,
    FileOperation,
    ShellCommand,
)

AGENT = Agent("a", "google-adk")


async def test_default_local_harness_records_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    harness = LocalHarness()
    await harness.initialize(agent=AGENT)
    await harness.finalize()
    assert (tmp_path / ".sondera" / "data").is_dir()


async def test_policy_directory_and_located_errors(tmp_path: Path) -> None:
    (tmp_path / "only.cedar").write_text(
        '@id("no-reads")\nforbid (principal, action == Sondera::Action::"FileRead", resource);\n'
        '@id("rest")\npermit (principal, action, resource);\n'
    )
    harness = LocalHarness(policy_dirs=[tmp_path], memory=True)
    await harness.initialize(agent=AGENT)
    assert harness.trajectory_id is not None
    verdict = await harness.adjudicate(
        Event(AGENT, harness.trajectory_id, FileOperation.read("README.md"))
    )
    assert verdict.decision == Decision.DENY and verdict.policy_ids == ["no-reads"]
    # The judgement is traceable: its id and the policy set's revision.
    assert verdict.decision_id is not None and len(verdict.decision_id) == 32
    assert verdict.decision_id in verdict.deny_message()
    assert verdict.policy_revision is not None and len(verdict.policy_revision) == 64
    (tmp_path / "broken.cedar").write_text("forbid (principal, action, resource) when { nope };")
    with pytest.raises(ValueError, match=r"broken\.cedar"):
        LocalHarness(policy_dirs=[tmp_path], memory=True)


async def test_monitor_mode_allows_and_reports(tmp_path: Path) -> None:
    harness = LocalHarness(memory=True, mode="monitor", home="/home/a")
    await harness.initialize(agent=AGENT)
    assert harness.trajectory_id is not None
    verdict = await harness.adjudicate(
        Event(AGENT, harness.trajectory_id, ShellCommand("rm -rf ~"))
    )
    assert verdict.is_allowed and verdict.would_be == Decision.DENY


def test_bad_options_are_errors() -> None:
    with pytest.raises(ValueError, match="not both"):
        LocalHarness(memory=True, data_dir="/tmp/x")
    with pytest.raises(ValueError, match="unknown mode"):
        LocalHarness(memory=True, mode="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LocalHarness(memory=True, allowed_hosts=["exa mple.com"])


async def test_lifecycle_errors_are_harness_errors() -> None:
    harness = LocalHarness(memory=True)
    with pytest.raises(HarnessError, match="initialize or resume"):
        await harness.adjudicate(Event(AGENT, "t", ShellCommand("ls")))
    await harness.initialize(agent=AGENT)
    with pytest.raises(HarnessError, match="already has trajectory"):
        await harness.initialize(agent=AGENT)


class NoRm(Harness):
    """A custom local policy engine, written as for the published package."""

    def __init__(self) -> None:
        self._trajectory_id = None
        self._agent = None
        self.seen: list[str] = []

    def new_scope(self) -> NoRm:
        return NoRm()

    async def initialize(
        self, *, agent: Agent | None = None, session_id: str | None = None
    ) -> None:
        self._trajectory_id, self._agent = f"no-rm-{session_id}", agent

    async def resume(self, trajectory_id: str, *, agent: Agent | None = None) -> None:
        self._trajectory_id, self._agent = trajectory_id, agent

    async def finalize(self, *, summary: str | None = None) -> None:
        self._trajectory_id = None

    async def fail(self, *, reason: str) -> None:
        self._trajectory_id = None

    async def adjudicate(self, event: Event) -> Adjudicated:
        self.seen.append(event.event_type)
        payload = event.event
        if isinstance(payload, ShellCommand) and "rm" in payload.command.split():
            return Adjudicated(Decision.DENY, reason="no rm here")
        return Adjudicated.allow()

    async def adjudicates(self, events: list[Event]) -> list[Adjudicated]:
        return [await self.adjudicate(e) for e in events]


async def test_a_custom_harness_governs_an_agent() -> None:
    agent = coder([("bash", {"command": "rm -r build"}), ("bash", {"command": "ls"}), "done"])
    plugin = SonderaHarnessPlugin(NoRm())
    runner = InMemoryRunner(agent=agent, app_name="app", plugins=[plugin])
    session = (await runner.session_service.create_session(app_name="app", user_id="u")).id
    run = await turn(runner, session, "tidy up", user="u")
    denied, allowed = run.responses("bash")
    assert denied == {"error": "Sondera Harness blocked this step: no rm here"}
    assert allowed == {"stdout": "ran: ls", "exit_code": 0}
    await runner.close()
    assert plugin.session_scopes == 0
