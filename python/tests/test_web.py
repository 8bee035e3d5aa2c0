"""The plugin exported in an ADK ``App`` and served by ADK's FastAPI app."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from google.adk.cli.fast_api import get_fast_api_app

TESTS = Path(__file__).resolve().parent

AGENT_PY = textwrap.dedent(
    f"""
    import sys
    sys.path.insert(0, {str(TESTS)!r})
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from conftest import bash
    from sondera_harness_adk.testing import ScriptedLlm
    from sondera_harness_adk import SonderaHarnessPlugin
    from sondera_harness_adk.harness import LocalHarness

    def script(request):
        answered = any(
            p.function_response for c in request.contents for p in (c.parts or [])
        )
        return "all done" if answered else ("bash", {{"command": "rm -rf ~"}})

    plugin = SonderaHarnessPlugin(harness=LocalHarness(memory=True, home="/home/alice"))
    root_agent = LlmAgent(
        name="triage", model=ScriptedLlm(script=script), instruction="Triage.", tools=[bash]
    )
    app = App(name="support_triage", root_agent=root_agent, plugins=[plugin])
    """
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, Any]]:
    agent_dir = tmp_path / "support_triage"
    agent_dir.mkdir()
    (agent_dir / "__init__.py").write_text("from . import agent\n")
    (agent_dir / "agent.py").write_text(AGENT_PY)
    api = get_fast_api_app(agents_dir=str(tmp_path), web=False, use_local_storage=False)
    with TestClient(api) as client:
        yield client, lambda: sys.modules["support_triage.agent"].plugin
    sys.modules.pop("support_triage.agent", None)
    sys.modules.pop("support_triage", None)


def _session(client: TestClient) -> str:
    response = client.post("/apps/support_triage/users/alice/sessions", json={})
    assert response.status_code == 200, response.text
    session_id: str = response.json()["id"]
    return session_id


def _request(session_id: str) -> dict[str, Any]:
    return {
        "app_name": "support_triage",
        "user_id": "alice",
        "session_id": session_id,
        "new_message": {"role": "user", "parts": [{"text": "clean my home directory"}]},
    }


def test_run_is_governed_and_releases_its_lease(served: tuple[TestClient, Any]) -> None:
    client, plugin = served
    response = client.post("/run", json=_request(_session(client)))
    assert response.status_code == 200, response.text
    responses = [
        part["functionResponse"]["response"]
        for event in response.json()
        for part in event.get("content", {}).get("parts", [])
        if "functionResponse" in part
    ]
    assert "Sondera Harness blocked this step" in responses[0]["error"]
    assert plugin().active_leases() == []
    assert plugin().session_scopes == 1


def test_run_sse_releases_its_lease_and_shutdown_finalizes(
    served: tuple[TestClient, Any],
) -> None:
    client, plugin = served
    with client.stream("POST", "/run_sse", json=_request(_session(client))) as stream:
        body = "".join(stream.iter_text())
    assert "Sondera Harness blocked this step" in body
    assert plugin().active_leases() == []
    governed = plugin()
    client.__exit__(None, None, None)
    assert governed.session_scopes == 0
