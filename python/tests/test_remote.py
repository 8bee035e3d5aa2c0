"""SonderaRemoteHarness against a real ``sondera serve`` started by the test."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import coder, refused, turn
from google.adk.runners import InMemoryRunner

from sondera_harness_adk import SonderaHarnessPlugin
from sondera_harness_adk.errors import HarnessStartError
from sondera_harness_adk.escalation import EscalationMode
from sondera_harness_adk.harness import HarnessError, LocalHarness, SonderaRemoteHarness
from sondera_harness_adk.model import Agent, Decision, Event, ShellCommand

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _sondera_binary() -> Path:
    """``SONDERA_BIN``, or the workspace's debug build of ``sondera``, built
    here when it is missing; the remote tests are skipped, saying why, only
    when there is no cargo to build it with."""
    explicit = os.environ.get("SONDERA_BIN")
    if explicit:
        if not Path(explicit).exists():
            pytest.fail(f"SONDERA_BIN={explicit} does not exist")
        return Path(explicit)
    binary = REPO / "target" / "debug" / "sondera"
    if binary.exists():
        return binary
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip(f"{binary} is missing and cargo is not installed to build it")
    built = subprocess.run(
        [cargo, "build", "-q", "-p", "sondera-cli"], cwd=REPO, capture_output=True, text=True
    )
    if built.returncode != 0 or not binary.exists():
        pytest.fail(f"`cargo build -p sondera-cli` failed:\n{built.stderr}")
    return binary


def _serve(workdir: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """A ``sondera serve`` on free loopback ports, once its gRPC port is
    open: the process and its gRPC address."""
    grpc, http = _free_port(), _free_port()
    process = subprocess.Popen(
        [
            str(_sondera_binary()),
            "serve",
            "--grpc-addr",
            f"127.0.0.1:{grpc}",
            "--http-addr",
            f"127.0.0.1:{http}",
            "--store",
            "memory",
            "--workspace",
            "/work/project",
            "--home",
            "/home/alice",
        ],
        cwd=workdir,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", grpc), timeout=0.2):
                break
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(
                    process.stderr.read().decode() if process.stderr else ""
                ) from None
            time.sleep(0.05)
    return process, f"127.0.0.1:{grpc}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    process, endpoint = _serve(tmp_path_factory.mktemp("serve"))
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


async def test_remote_harness_lifecycle(server: str) -> None:
    harness = SonderaRemoteHarness(sondera_harness_endpoint=server)
    agent = Agent("remote-agent", "google-adk")
    await harness.initialize(agent=agent, session_id="s1")
    assert harness.trajectory_id is not None
    event = Event(agent, harness.trajectory_id, ShellCommand("rm -rf ~", call_id="c1"))
    verdict = await harness.adjudicate(event)
    assert verdict.decision == Decision.DENY
    assert "destructive-delete-outside-workspace" in verdict.policy_ids
    ok = Event(agent, harness.trajectory_id, ShellCommand("ls", call_id="c2"))
    [allowed] = await harness.adjudicates([ok])
    assert allowed.is_allowed
    await harness.finalize(summary="done")
    assert harness.trajectory_id is None
    with pytest.raises(HarnessError, match="initialize or resume"):
        await harness.adjudicate(ok)


async def test_endpoint_from_the_environment(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SONDERA_HARNESS_ENDPOINT", server)
    harness = SonderaRemoteHarness()
    await harness.initialize(agent=Agent("env-agent", "google-adk"))
    await harness.finalize()


def test_no_endpoint_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SONDERA_HARNESS_ENDPOINT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(HarnessError, match="SONDERA_HARNESS_ENDPOINT"):
        SonderaRemoteHarness()


async def test_unreachable_server_blocks_the_step() -> None:
    harness = SonderaRemoteHarness(sondera_harness_endpoint=f"127.0.0.1:{_free_port()}", timeout=2)
    agent = coder([("bash", {"command": "ls"})])
    plugin = SonderaHarnessPlugin(harness=harness)
    runner = InMemoryRunner(agent=agent, app_name="app", plugins=[plugin])
    session = (await runner.session_service.create_session(app_name="app", user_id="alice")).id
    unreachable = await refused(runner, session, "list", HarnessStartError)
    assert "could not start the trajectory" in str(unreachable)
    assert agent.model.calls == 0  # type: ignore[union-attr]


async def test_quick_start_runs_unchanged(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SONDERA_HARNESS_ENDPOINT", server)
    # The quick start of the package, as written.
    from sondera_harness_adk import SonderaHarnessPlugin
    from sondera_harness_adk.harness import SonderaRemoteHarness

    agent = coder([("bash", {"command": "cat ~/.ssh/id_rsa"}), "ok"])
    runner = InMemoryRunner(
        agent=agent,
        app_name="my-app",
        plugins=[SonderaHarnessPlugin(harness=SonderaRemoteHarness())],
    )
    session = (await runner.session_service.create_session(app_name="my-app", user_id="u")).id
    run = await turn(runner, session, "show me the key", user="u")
    [result] = run.responses("bash")
    assert "Sondera Harness blocked this step" in result["error"]
    await runner.close()


def _approvals(server: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`sondera approvals ARGS` against the test server, as an operator
    (a loopback server without tokens lets its caller decide)."""
    return subprocess.run(
        [str(_sondera_binary()), "approvals", *args, "--server", server],
        capture_output=True,
        text=True,
        check=False,
    )


async def _approve_the_next(server: str) -> dict[str, object]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        listed = await asyncio.to_thread(_approvals, server, "list", "--json")
        assert listed.returncode == 0, listed.stderr
        if listed.stdout.strip():
            pending: dict[str, object] = json.loads(listed.stdout.splitlines()[0])
            approved = await asyncio.to_thread(
                _approvals, server, "approve", str(pending["id"]), "--reason", "release window"
            )
            assert approved.returncode == 0, approved.stderr
            return pending
        await asyncio.sleep(0.1)
    raise AssertionError("no approval was asked for")


async def test_an_escalated_call_waits_for_an_operator(server: str) -> None:
    harness = SonderaRemoteHarness(sondera_harness_endpoint=server, approval_timeout=30)
    agent = coder([("bash", {"command": "git push --force origin main"}), "pushed"])
    plugin = SonderaHarnessPlugin(harness=harness, escalation=EscalationMode.OPERATOR)
    runner = InMemoryRunner(agent=agent, app_name="app", plugins=[plugin])
    session = (await runner.session_service.create_session(app_name="app", user_id="alice")).id
    run, pending = await asyncio.gather(turn(runner, session, "push"), _approve_the_next(server))
    [result] = run.responses("bash")
    assert result == {"stdout": "ran: git push --force origin main", "exit_code": 0}
    assert pending["agent_id"] == "coder"
    shown = await asyncio.to_thread(_approvals, server, "show", str(pending["id"]))
    assert "approved once by loopback (release window)" in shown.stdout, shown.stdout
    await runner.close()


async def test_an_escalated_call_nobody_decides_is_denied_at_the_deadline(server: str) -> None:
    harness = SonderaRemoteHarness(sondera_harness_endpoint=server, approval_timeout=1)
    agent = coder([("bash", {"command": "git push --force origin release"}), "done"])
    plugin = SonderaHarnessPlugin(harness=harness, escalation=EscalationMode.OPERATOR)
    runner = InMemoryRunner(agent=agent, app_name="app", plugins=[plugin])
    session = (await runner.session_service.create_session(app_name="app", user_id="alice")).id
    run = await turn(runner, session, "push")
    [result] = run.responses("bash")
    assert "No operator decided before the deadline" in result["error"], result
    await runner.close()


async def test_a_local_harness_has_no_operators_to_ask() -> None:
    harness = LocalHarness(memory=True)
    agent = coder([("bash", {"command": "git push --force origin main"}), "done"])
    plugin = SonderaHarnessPlugin(harness=harness, escalation=EscalationMode.OPERATOR)
    runner = InMemoryRunner(agent=agent, app_name="app", plugins=[plugin])
    session = (await runner.session_service.create_session(app_name="app", user_id="alice")).id
    run = await turn(runner, session, "push")
    [result] = run.responses("bash")
    assert "no operators to ask" in result["error"], result
    await runner.close()


async def test_the_servers_spans_join_the_agents_trace(tmp_path: Path) -> None:
    """The plugin sends the current OpenTelemetry span's context (ADK's own
    spans, in a real agent) with each step; the server's ``apply_guardrail``
    span, exported over OTLP, is in that trace."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from opentelemetry.sdk.trace import TracerProvider

    exported: list[bytes] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            exported.append(self.rfile.read(int(self.headers["content-length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    collector = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    Thread(target=collector.serve_forever, daemon=True).start()
    process, endpoint = _serve(
        tmp_path,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server_address[1]}",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
        },
    )
    try:
        tracer = TracerProvider().get_tracer("agent")
        harness = SonderaRemoteHarness(sondera_harness_endpoint=endpoint)
        agent = Agent("traced-agent", "google-adk")
        with tracer.start_as_current_span("invoke_agent traced-agent") as span:
            await harness.initialize(agent=agent)
            assert harness.trajectory_id is not None
            event = Event(agent, harness.trajectory_id, ShellCommand("ls", call_id="c1"))
            assert (await harness.adjudicate(event)).is_allowed
        trace_id = span.get_span_context().trace_id.to_bytes(16, "big")
        deadline = time.monotonic() + 20
        while not any(trace_id in body and b"apply_guardrail sondera" in body for body in exported):
            assert time.monotonic() < deadline, "no guardrail span in the agent's trace"
            await asyncio.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=10)
        collector.shutdown()
