"""The event model and classification, from Python, as the Rust model has them."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sondera_harness_adk import _native
from sondera_harness_adk.model import (
    Actor,
    ActorType,
    Adjudicated,
    Agent,
    Decision,
    Event,
    FileOperation,
    FileOpType,
    Mode,
    Prompt,
    ShellCommand,
    ToolCall,
    ToolOutput,
    admit_provider_call_id,
)
from sondera_harness_adk.tool import (
    classify,
    file_operation_for,
    normalize_tool_name,
    shell_command_for,
    web_fetch_for,
)


def test_event_round_trips_through_dict_and_json() -> None:
    agent = Agent("claude-1", "anthropic", platform="cli")
    event = Event(agent, "traj-1", ShellCommand("ls -la", working_dir="/w", call_id="c1"))
    assert event.category == "action"
    assert event.event_type == "shell_command"
    assert event.actor == Actor("claude-1", ActorType.AGENT)
    assert isinstance(event.event, ShellCommand)
    assert event.event.command == "ls -la"
    assert Event.from_dict(event.to_dict()) == event
    assert Event.from_json(event.to_json()) == event
    assert json.loads(event.to_json())["payload"] == {
        "type": "shell_command",
        "call_id": "c1",
        "command": "ls -la",
        "working_dir": "/w",
    }


def test_bad_input_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="line 1, column"):
        Event.from_json('{"event_id": 3}')
    with pytest.raises(ValueError, match="trajectory_id"):
        Event(Agent("a", "p"), " ", Prompt.user("hi"))
    with pytest.raises(ValueError, match="unknown Decision `maybe`"):
        Decision("maybe")
    with pytest.raises(ValueError, match="FileOperation payload has type `file_operation`"):
        FileOperation.from_dict({"type": "prompt", "role": "user", "content": "x"})
    with pytest.raises(TypeError, match="expected an event payload"):
        Event(Agent("a", "p"), "t", 42)  # type: ignore[arg-type]


def test_enums_compare_with_their_strings() -> None:
    assert Decision("allow") == Decision.ALLOW == "allow"
    assert Decision.DENY != Decision.ALLOW
    assert {Decision.ESCALATE: 1}[Decision("escalate")] == 1
    assert str(Mode.MONITOR) == "monitor"
    assert repr(FileOpType.EDIT) == "FileOpType.EDIT"


def test_payload_constructors_follow_the_client() -> None:
    edit = FileOperation.edit("a.txt", "old", "new")
    assert edit.operation == FileOpType.EDIT and edit.old_content == "old" and edit.content == "new"
    assert ToolOutput.from_error("c", "boom").success is False
    assert Prompt.user("hi").role == "user"
    verdict = Adjudicated(Decision.DENY, reason="no")
    assert verdict.deny_message() == "Sondera Harness blocked this step: no"
    assert Adjudicated.deny().deny_message("fallback").endswith("fallback")
    assert ToolCall("send_email", {"to": "x"}).call_id.startswith("sondera-")


def test_classification_is_the_rust_classifier() -> None:
    assert isinstance(classify("bash", {"command": "ls"}), ShellCommand)
    assert isinstance(classify("\uff42\uff41\uff53\uff48", {"command": "ls"}), ShellCommand)
    assert file_operation_for("read_file", {"path": "a.txt"}, None) is not None
    # The name alone is not enough: an issue tracker's `create` stays a tool call.
    assert file_operation_for("create", {"title": "bug", "body": "text"}, None) is None
    assert shell_command_for("create", {"title": "x"}, None) is None
    assert web_fetch_for("fetch", {"url": "https://example.com"}, "c9") is not None
    assert normalize_tool_name("Read-File") == "readfile"


def test_results_and_errors_become_observations() -> None:
    action = classify("bash", {"command": "ls"}, "c1")
    output = _native.observation_for(action, result={"stdout": "a\nb", "exit_code": 0})
    assert output.event_type == "shell_command_output" and output.stdout == "a\nb"
    failed = _native.observation_for(action, error="permission denied")
    assert failed.exit_code != 0 and "permission denied" in failed.stderr


def test_tool_data_is_read_as_json_reads_it() -> None:
    plain = {
        "flag": True,
        "count": 3,
        "largest": 2**64 - 1,
        "smallest": -(2**63),
        "ratio": 1.5,
        "text": "caf\u00e9",
        "nothing": None,
        "nested": [1, [2, {"k": "v"}], ()],
        "pair": (1, "x"),
    }
    arguments = classify("create_issue", plain, "c1").to_dict()["arguments"]
    assert arguments == json.loads(json.dumps(plain))
    assert arguments["flag"] is True and list(arguments) == list(plain)

    @dataclasses.dataclass
    class Ticket:
        id: int
        title: str

    # Data JSON has no form for is read as before: dataclasses and sets as
    # objects and lists, numbers JSON cannot hold as null or refused.
    unusual = {"ticket": Ticket(1, "x"), "tags": {"a"}, "nan": float("nan")}
    assert classify("create_issue", unusual, "c2").to_dict()["arguments"] == {
        "ticket": {"id": 1, "title": "x"},
        "tags": ["a"],
        "nan": None,
    }
    for refused, why in [
        ({"huge": 2**70}, "out of range"),
        ({1: "a"}, "not an instance of 'str'"),
        ({"raw": b"x"}, "byte array"),
    ]:
        with pytest.raises(ValueError, match=f"invalid tool arguments: .*{why}"):
            classify("create_issue", refused, "c3")


def test_admit_provider_call_id() -> None:
    assert admit_provider_call_id("adk", "call-1") == "call-1"
    assert admit_provider_call_id("adk", "  ") is None
    assert admit_provider_call_id("adk", None) is None
    with pytest.raises(ValueError, match="unknown adapter"):
        admit_provider_call_id("grpcio", "x")
    # The published package's bound: 256 bytes.
    assert admit_provider_call_id("adk", "x" * 256) == "x" * 256
    assert admit_provider_call_id("adk", "x" * 257) is None
    assert admit_provider_call_id("adk", "call\x00id") is None


def test_shapes_and_coverage() -> None:
    shape = _native.action_shape(classify("bash", {"command": "git push origin main"}))
    assert shape is not None
    assert _native.describe_shape(shape) == "shell: git push"
    assert _native.shape_covers(shape, shape)
    other = _native.action_shape(classify("bash", {"command": "rm -r build"}))
    assert not _native.shape_covers(shape, other)
