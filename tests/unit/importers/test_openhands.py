"""OpenHands event trajectories (`replaylab.importers.openhands`): events written by hand in the
shapes OpenHands' own serializer gives them (All-Hands-AI/OpenHands
`openhands/events/serialization/event.py` `event_to_dict`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaylab.cassette import TOOL_ERROR_HEADER
from replaylab.diagnostics import InputError
from replaylab.importers import import_sessions
from replaylab.safety.classify import ToolClassifier


def _message(event_id: int, source: str, text: str) -> dict:
    return {
        "id": event_id,
        "timestamp": "2025-02-01T00:14:10.787622",
        "source": source,
        "message": text,
        "action": "message",
        "args": {"content": text, "image_urls": None, "wait_for_response": False},
    }


def _metadata(function: str, call_id: str, arguments: dict) -> dict:
    call = {"id": call_id, "type": "function", "function": {"name": function, "arguments": json.dumps(arguments)}}
    response = {
        "id": "chatcmpl-1",
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
    }
    return {
        "function_name": function,
        "tool_call_id": call_id,
        "model_response": response,
        "total_calls_in_response": 1,
    }


def _action(event_id: int, action: str, args: dict, metadata: dict | None = None, source: str = "agent") -> dict:
    event = {
        "id": event_id,
        "timestamp": "2025-02-01T00:15:00",
        "source": source,
        "message": "",
        "action": action,
        "args": args,
    }
    if metadata:
        event["tool_call_metadata"] = metadata
    return event


def _observation(event_id: int, cause: int, observation: str, content: str, extras: dict | None = None) -> dict:
    return {
        "id": event_id,
        "timestamp": "2025-02-01T00:15:01",
        "source": "agent",
        "message": "",
        "cause": cause,
        "observation": observation,
        "content": content,
        "extras": extras or {},
    }


def _file(tmp_path: Path, events, name: str = "trajectory.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(events))
    return path


def _import(path: Path):
    (session,) = list(import_sessions("openhands", path))
    return session


def _messages(session) -> list[dict]:
    return [e["message"] for e in session.entries if e["type"] == "message"]


def test_a_call_keeps_the_tool_and_arguments_the_model_sent_and_its_observation_answers_it(tmp_path):
    view = {"command": "view", "path": "/workspace/app.py"}
    events = [
        _message(0, "user", "Fix app.py"),
        # older OpenHands ran str_replace_editor as an IPython cell: the call is still the editor's
        _action(
            3,
            "run_ipython",
            {"code": f"print(file_editor(**{view}))", "thought": "Let me look."},
            _metadata("str_replace_editor", "call_view", view),
        ),
        _observation(4, 3, "run_ipython", "1|print('hi')", {"code": "..."}),
        _action(5, "finish", {"outputs": {}, "thought": ""}, _metadata("finish", "call_fin", {})),
    ]
    events[3]["message"] = "All done!"
    session = _import(_file(tmp_path, events))
    user, call, result, final = _messages(session)
    assert user["content"] == [{"type": "text", "text": "Fix app.py"}]
    assert call["content"][0] == {"type": "text", "text": "Let me look."}
    assert call["content"][1] == {
        "type": "toolCall",
        "id": "call_view",
        "name": "str_replace_editor",
        "arguments": view,
    }
    assert call["model"] == "gpt-4o-2024-08-06" and call["provider"] == "openai"
    assert (result["toolCallId"], result["toolName"], result["isError"]) == ("call_view", "str_replace_editor", False)
    assert final["role"] == "assistant" and final["content"][0]["text"] == "All done!"
    assert final["stopReason"] == "stop"
    assert ToolClassifier(session.tool_classes).explain("str_replace_editor", view).tool_class == "read"
    assert len(session.interactions) == 1 and session.notes == []


def test_actions_no_model_call_names_become_openhands_tools_the_classifier_judges(tmp_path):
    events = [
        _message(0, "user", "go"),
        _action(1, "run", {"command": "ls -la", "is_input": False, "thought": ""}),
        _observation(2, 1, "run", "a.py", {"command": "ls -la", "metadata": {"exit_code": 0}}),
        _action(3, "run", {"command": "rm -rf build", "is_input": False}),
        _observation(4, 3, "run", ""),
        _action(5, "read", {"path": "/w/a.py"}),
        _observation(6, 5, "read", "x"),
        _action(7, "write", {"path": "/w/b.py", "content": "y"}),
        _observation(8, 7, "write", ""),
        _action(9, "edit", {"path": "/w/a.py", "command": "str_replace", "old_str": "x", "new_str": "z"}),
        _observation(10, 9, "edit", "ok"),
        _action(11, "browse", {"url": "https://example.com"}),
        _observation(12, 11, "browse", "<html>"),
        _action(13, "think", {"thought": "plan"}),
        _observation(14, 13, "think", "Your thought has been logged."),
    ]
    session = _import(_file(tmp_path, events))
    classifier = ToolClassifier(session.tool_classes)
    calls = [b for m in _messages(session) for b in m["content"] if b.get("type") == "toolCall"]
    judged = [(c["name"], classifier.explain(c["name"], c["arguments"]).mutating) for c in calls]
    assert judged == [
        ("execute_bash", False),
        ("execute_bash", True),
        ("str_replace_editor", False),
        ("str_replace_editor", True),
        ("str_replace_editor", True),
        ("web_read", False),
        ("think", False),
    ]
    assert classifier.explain(calls[1]["name"], calls[1]["arguments"]).rule == "tool-name-shell"
    results = [m for m in _messages(session) if m["role"] == "toolResult"]
    assert (
        [r["toolCallId"] for r in results]
        == [c["id"] for c in calls]
        == [f"openhands-{n}" for n in (1, 3, 5, 7, 9, 11, 13)]
    )
    assert results[0]["details"]["openhands"]["extras"]["metadata"] == {"exit_code": 0}


def test_a_users_own_command_is_a_user_call_with_a_user_result(tmp_path):
    events = [_action(1, "run", {"command": "touch x"}, source="user"), _observation(2, 1, "run", "")]
    events[1]["source"] = "user"
    session = _import(_file(tmp_path, events))
    call, result = session.entries
    assert call["message"]["role"] == "user" and call["message"]["content"][0]["name"] == "execute_bash"
    assert result["actor"] == "user" and result["message"]["toolCallId"] == "openhands-1"


def test_an_error_observation_is_an_error_result(tmp_path):
    events = [_action(1, "run", {"command": "make"}), _observation(2, 1, "error", "boom")]
    (result,) = [m for m in _messages(_import(_file(tmp_path, events))) if m["role"] == "toolResult"]
    assert result["isError"] is True


def test_events_that_are_no_call_are_kept_as_custom_entries_and_a_condensation_is_noted(tmp_path):
    events = [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands.", "tools": []}},
        _message(1, "user", "hi"),
        _action(2, "recall", {"query": "hi", "recall_type": "workspace_context"}, source="user"),
        _observation(3, 2, "recall", "", {"recall_type": "workspace_context"}),
        _action(4, "condensation", {"forgotten_event_ids": [1], "summary": "greeted"}),
        {
            "id": 5,
            "source": "environment",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "awaiting_user_input"},
        },
    ]
    session = _import(_file(tmp_path, events))
    assert [e.get("customType") for e in session.entries] == [
        "system-prompt",
        None,
        "openhands:recall",
        "openhands:recall",
        "openhands:condensation",
        "openhands:agent_state_changed",
    ]
    assert session.entries[0]["data"] == {"content": "You are OpenHands."}
    assert session.entries[4]["data"]["args"]["summary"] == "greeted"
    assert any("condensed this session's history 1 time" in note for note in session.notes)


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ({"events": []}, "expected a non-empty JSON list of OpenHands events"),
        ([_message(0, "user", "hi"), 7], "field '[1]': event [1] is a int"),
        ([_message(0, "user", "hi"), {"id": 1, "source": "agent"}], "field '[1].action'"),
        ([{"id": 0, "action": "run", "args": "ls"}], "field '[0].args': event [0] has args of type str"),
        (
            [{"id": 0, "action": "run", "args": {}, "tool_call_metadata": {"function_name": "execute_bash"}}],
            "field '[0].tool_call_metadata.tool_call_id'",
        ),
    ],
)
def test_a_bad_trajectory_is_an_error_naming_file_index_and_field(tmp_path, events, expected):
    path = _file(tmp_path, events)
    with pytest.raises(InputError) as caught:
        _import(path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


def test_an_imported_trajectory_runs_through_replaylab_inspect(tmp_path):
    events = [
        _message(0, "user", "clean"),
        _action(1, "run", {"command": "ls"}, _metadata("execute_bash", "c1", {"command": "ls"})),
        _observation(2, 1, "run", "build"),
        _action(3, "run", {"command": "rm -rf build"}, _metadata("execute_bash", "c2", {"command": "rm -rf build"})),
        _observation(4, 3, "run", ""),
    ]
    path = _file(tmp_path, events)
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "replaylab.cli"]
    done = subprocess.run(
        [*cli, "import", "--from", "openhands", str(path), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (transcript,) = out.glob("*.jsonl")
    shown = subprocess.run([*cli, "inspect", "--json", str(transcript)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    (report,) = json.loads(shown.stdout)
    assert report["diagnostics"] == [] and report["replaySafe"] is False
    assert [(e["toolCallId"], e["tool"]) for e in report["mutatingEvents"]] == [("c2", "execute_bash")]


@pytest.mark.parametrize(
    ("observation", "content", "extras", "success", "is_error"),
    [
        # newer trajectories: the top-level `success` of event_to_dict
        ("run", "1 failed", {"command": "pytest", "metadata": {"exit_code": 1}}, False, True),
        # between the two: `extras.metadata.exit_code` with no `success` (CmdOutputObservation.error)
        ("run", "1 failed", {"command": "pytest", "metadata": {"exit_code": 1, "pid": -1}}, None, True),
        ("run", "still running", {"command": "sleep 99", "metadata": {"exit_code": -1}}, None, True),
        ("run", "ok", {"command": "pytest", "metadata": {"exit_code": 0}}, None, False),
        # older trajectories: the legacy `extras.exit_code`
        ("run", "No such file", {"command_id": -1, "command": "cat x", "exit_code": 1}, None, True),
        ("run", "x", {"command_id": -1, "command": "cat x", "exit_code": 0}, None, False),
        # BrowserOutputObservation.error
        ("browse", "", {"url": "http://x", "error": True, "last_browser_action_error": "Timeout"}, None, True),
        ("browse", "page", {"url": "http://x", "error": False}, None, False),
        # MCPObservation: the CallToolResult as JSON
        ("mcp", json.dumps({"isError": True, "content": [{"type": "text", "text": "denied"}]}), {}, None, True),
        ("mcp", json.dumps({"isError": False, "content": []}), {}, None, False),
    ],
)
def test_an_observation_that_says_its_action_failed_is_an_error_result(
    tmp_path, observation, content, extras, success, is_error
):
    event = _observation(2, 1, observation, content, extras)
    if success is not None:
        event["success"] = success
    events = [_action(1, "run", {"command": "pytest"}, _metadata("execute_bash", "c1", {"command": "pytest"})), event]
    session = _import(_file(tmp_path, events))
    (result,) = [m for m in _messages(session) if m["role"] == "toolResult"]
    assert result["isError"] is is_error
    (interaction,) = session.interactions
    assert interaction["response"]["headers"][TOOL_ERROR_HEADER] == [str(is_error).lower()]


@pytest.mark.parametrize("wrapped", [False, True])
def test_init_imports_a_trajectory_it_finds(tmp_path, wrapped):
    folder = tmp_path / "sessions"
    folder.mkdir()
    events = [
        _message(0, "user", "clean"),
        _action(1, "run", {"command": "rm -rf b"}, _metadata("execute_bash", "c1", {"command": "rm -rf b"})),
        _observation(2, 1, "run", ""),
    ]
    _file(folder, {"instance_id": "x__y-1", "history": events} if wrapped else events, "output.json")
    done = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "init", str(folder), "--import"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(openhands): 1 session" in done.stdout and "execute_bash 1" in done.stdout
