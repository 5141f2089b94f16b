"""Codex CLI rollouts (`replaylab.importers.codex`): lines written by hand in the shapes Codex's
own code gives them (openai/codex `codex-rs/protocol/src/protocol.rs` `RolloutItem`,
`codex-rs/protocol/src/models.rs` `ResponseItem`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaylab.cassette import TOOL_ERROR_HEADER
from replaylab.diagnostics import InputError
from replaylab.importers import import_sessions, write_session
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.load import load_transcript

T = "2025-12-28T12:21:44.491Z"


def _line(kind: str, payload: dict) -> dict:
    return {"timestamp": T, "type": kind, "payload": payload}


def _call(name: str, call_id: str, arguments: dict) -> dict:
    return _line(
        "response_item",
        {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id},
    )


def _output(call_id: str, output) -> dict:
    return _line("response_item", {"type": "function_call_output", "call_id": call_id, "output": output})


def _user(text: str) -> dict:
    return _line(
        "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
    )


META = _line(
    "session_meta",
    {"id": "019b-rollout", "timestamp": T, "cwd": "/work/proj", "originator": "codex_cli_rs", "cli_version": "0.77.0"},
)
CONTEXT = _line("turn_context", {"cwd": "/work/proj", "approval_policy": "on-request", "model": "gpt-5.2-codex"})


def _rollout(tmp_path: Path, lines: list, name: str = "rollout-2025-12-28T12-18-30-019b.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _import(path: Path):
    (session,) = list(import_sessions("codex", path))
    return session


def _calls(session) -> list[dict]:
    return [
        b
        for e in session.entries
        if e["type"] == "message"
        for b in e["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "toolCall"
    ]


def test_one_model_answer_is_one_assistant_message_and_each_output_answers_its_call(tmp_path):
    path = _rollout(
        tmp_path,
        [
            META,
            CONTEXT,
            _user("List the files and the README"),
            _line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Look."}]}),
            _call("shell", "c1", {"command": ["bash", "-lc", "ls"], "workdir": "/work/proj"}),
            _line("event_msg", {"type": "exec_command_begin", "call_id": "c1"}),
            _call("shell", "c2", {"command": ["cat", "README.md"]}),
            _output("c2", "# readme"),
            _output("c1", "README.md"),
            _line(
                "response_item",
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
            ),
        ],
    )
    session = _import(path)
    assert session.header["id"] == "019b-rollout" and session.header["cwd"] == "/work/proj"
    messages = [e["message"] for e in session.entries if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    answer = messages[1]
    assert [b["type"] for b in answer["content"]] == ["thinking", "toolCall", "toolCall"]
    assert answer["content"][0]["thinking"] == "Look." and answer["model"] == "gpt-5.2-codex"
    assert answer["stopReason"] == "toolUse"
    assert [(m["toolCallId"], m["toolName"]) for m in messages[2:4]] == [("c2", "shell"), ("c1", "shell")]
    customs = [e["customType"] for e in session.entries if e["type"] == "custom"]
    assert customs == ["codex:session_meta", "codex:turn_context", "codex:event_msg:exec_command_begin"]
    assert len(session.interactions) == 2 and session.notes == []


def test_codex_shell_calls_are_judged_by_the_shell_classifier_and_apply_patch_writes(tmp_path):
    path = _rollout(
        tmp_path,
        [
            META,
            _user("go"),
            _call("shell", "read", {"command": ["bash", "-lc", "git status && ls -la"]}),
            _output("read", "ok"),
            _call("shell", "rm", {"command": ["bash", "-lc", "rm -rf build"]}),
            _output("rm", ""),
            _call("exec_command", "uexec", {"cmd": "touch notes.txt"}),
            _output("uexec", ""),
            _line(
                "response_item",
                {
                    "type": "local_shell_call",
                    "call_id": "local",
                    "status": "completed",
                    "action": {"type": "exec", "command": ["cat", "a.txt"], "timeout_ms": 1000},
                },
            ),
            _output("local", "a"),
            _line(
                "response_item",
                {"type": "custom_tool_call", "call_id": "patch", "name": "apply_patch", "input": "*** Begin Patch\n"},
            ),
            _line("response_item", {"type": "custom_tool_call_output", "call_id": "patch", "output": "Success."}),
        ],
    )
    session = _import(path)
    classifier = ToolClassifier(session.tool_classes)
    judged = {c["id"]: classifier.explain(c["name"], c["arguments"]) for c in _calls(session)}
    assert {k: v.mutating for k, v in judged.items()} == {
        "read": False,
        "rm": True,
        "uexec": True,
        "local": False,
        "patch": True,
    }
    assert "`rm`" in judged["rm"].reason and judged["patch"].tool_class == "write"
    assert session.tool_classes["apply_patch"] == "write"


def test_codex_compaction_is_kept_as_a_custom_entry_and_named_in_a_note(tmp_path):
    summary = "The user asked for a refactor; files a.py and b.py were changed."
    path = _rollout(
        tmp_path,
        [
            META,
            _user("refactor"),
            _line("compacted", {"message": summary, "replacement_history": [_user("refactor")["payload"]]}),
            _user("and now the tests"),
        ],
    )
    session = _import(path)
    (compacted,) = [e for e in session.entries if e.get("customType") == "codex:compacted"]
    assert compacted["data"]["message"] == summary and compacted["sourceId"] == "line:3"
    assert not any(e["type"] == "compaction" for e in session.entries)
    assert any("compacted this session 1 time" in note for note in session.notes)


def test_a_record_codex_does_not_write_is_kept_and_noted(tmp_path):
    path = _rollout(tmp_path, [META, _user("hi"), _line("world_state", {"agents_md": "x"})])
    session = _import(path)
    assert session.entries[-1]["customType"] == "codex:world_state"
    assert session.entries[-1]["data"] == {"agents_md": "x"}
    assert any("line 3" in note and "'world_state'" in note for note in session.notes)


def test_a_failed_output_is_an_error_result(tmp_path):
    path = _rollout(
        tmp_path,
        [META, _call("shell", "c1", {"command": ["false"]}), _output("c1", {"content": "exit 1", "success": False})],
    )
    (result,) = [e["message"] for e in _import(path).entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["isError"] is True and result["content"] == [{"type": "text", "text": "exit 1"}]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([META, {"timestamp": T, "type": "response_item"}], ":2: error[bad-import-source] field 'payload'"),
        ([META, {"timestamp": T, "payload": {}}], ":2: error[bad-import-source] field 'type'"),
        (
            [META, _line("response_item", {"type": "function_call", "name": "shell", "arguments": "{}"})],
            ":2: error[bad-import-source] field 'payload.call_id'",
        ),
        (
            [META, _line("response_item", {"type": "message", "role": "user", "content": "hi"})],
            ":2: error[bad-import-source] field 'payload.content'",
        ),
        ([META, "{not json", _user("hi")], ":2: error[bad-import-source]"),
    ],
)
def test_a_bad_line_is_an_error_naming_file_line_and_field(tmp_path, lines, expected):
    path = _rollout(tmp_path, lines)
    with pytest.raises(InputError) as caught:
        _import(path)
    assert f"{path}{expected}" in str(caught.value)


def test_a_last_line_cut_off_is_skipped_with_a_note(tmp_path):
    path = _rollout(tmp_path, [META, _user("hi"), '{"timestamp": "2025-12-28T12:2'])
    session = _import(path)
    assert [e["type"] for e in session.entries] == ["custom", "message"]
    assert any("line 3 does not parse" in note for note in session.notes)


def test_a_folder_imports_its_rollouts(tmp_path):
    day = tmp_path / "sessions" / "2025" / "12" / "28"
    day.mkdir(parents=True)
    _rollout(day, [META, _user("one")], "rollout-a.jsonl")
    _rollout(day, [META, _user("two")], "rollout-b.jsonl")
    sessions = list(import_sessions("codex", tmp_path / "sessions"))
    assert [s.name for s in sessions] == ["rollout-a", "rollout-b"]


def test_an_imported_rollout_runs_through_replaylab_inspect(tmp_path):
    path = _rollout(
        tmp_path,
        [
            META,
            CONTEXT,
            _user("clean up"),
            _call("shell", "c1", {"command": ["bash", "-lc", "ls"]}),
            _output("c1", "build"),
            _call("shell", "c2", {"command": ["bash", "-lc", "rm -rf build"]}),
            _output("c2", ""),
            _line(
                "response_item",
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Removed."}]},
            ),
        ],
    )
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "replaylab.cli"]
    done = subprocess.run(
        [*cli, "import", "--from", "codex", str(path), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (transcript,) = out.glob("*.jsonl")
    assert load_transcript(transcript, strict=True).entries
    shown = subprocess.run([*cli, "inspect", "--json", str(transcript)], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    (report,) = json.loads(shown.stdout)
    assert report["diagnostics"] == [] and report["replaySafe"] is False
    assert [(e["toolCallId"], e["toolClass"]) for e in report["mutatingEvents"]] == [("c2", "exec")]
    assert "`rm` removes files" in report["mutatingEvents"][0]["reason"]
    assert report["toolCallsByRule"] == {"shell-read-only": 1, "tool-name-shell": 1}


def test_written_rollout_session_loads_strictly(tmp_path):
    path = _rollout(tmp_path, [META, _user("hi"), _call("shell", "c1", {"command": ["ls"]}), _output("c1", "x")])
    transcript, _ = write_session(_import(path), tmp_path / "out")
    assert len(load_transcript(transcript, strict=True).entries) == 4


@pytest.mark.parametrize(
    ("name", "arguments", "output", "is_error"),
    [
        # format_exec_output_for_model_structured (shell, local_shell, container.exec)
        (
            "shell",
            {"command": ["false"]},
            json.dumps({"output": "", "metadata": {"exit_code": 1, "duration_seconds": 0.0}}),
            True,
        ),
        (
            "shell",
            {"command": ["true"]},
            json.dumps({"output": "", "metadata": {"exit_code": 0, "duration_seconds": 0.0}}),
            False,
        ),
        # format_exec_output_for_model_freeform (shell_command, freeform apply_patch)
        ("shell_command", {"command": "pytest -q"}, "Exit code: 2\nWall time: 1.3 seconds\nOutput:\n1 failed", True),
        (
            "shell_command",
            {"command": "ls"},
            "Exit code: 0\nWall time: 0 seconds\nTotal output lines: 900\nOutput:\na",
            False,
        ),
        # unified exec's format_response (exec_command, write_stdin)
        (
            "exec_command",
            {"cmd": "make"},
            "Chunk ID: 3f\nWall time: 0.5000 seconds\nProcess exited with code 127\nOriginal token count: 9\nOutput:\nmake: not found",
            True,
        ),
        (
            "exec_command",
            {"cmd": "npm run dev"},
            "Chunk ID: 3f\nWall time: 10.0000 seconds\nProcess running with session ID 4\nOutput:\nready",
            False,
        ),
        # another tool's text that reads like a header is its own text, not an exit code
        ("read_file", {"file_path": "log.txt"}, "Exit code: 1\nWall time: 2 seconds\nOutput:\n", False),
    ],
)
def test_a_command_that_failed_is_an_error_result_by_the_exit_code_codex_wrote_into_its_output(
    tmp_path, name, arguments, output, is_error
):
    """Codex keeps no `success` flag in a rollout (`FunctionCallOutputPayload` serializes as its
    text alone): the exit code in the text (`codex-rs/core/src/tools/mod.rs`,
    `tools/handlers/unified_exec.rs`) is what says a command failed."""
    path = _rollout(tmp_path, [META, _call(name, "c1", arguments), _output("c1", output)])
    session = _import(path)
    (result,) = [e["message"] for e in session.entries if e.get("message", {}).get("role") == "toolResult"]
    assert result["isError"] is is_error and result["content"] == [{"type": "text", "text": output}]
    (interaction,) = session.interactions
    assert interaction["response"]["headers"][TOOL_ERROR_HEADER] == [str(is_error).lower()]


def test_init_imports_a_rollout_it_finds(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    _rollout(
        folder,
        [META, CONTEXT, _user("clean"), _call("shell", "c1", {"command": ["rm", "-rf", "b"]}), _output("c1", "")],
    )
    done = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "init", str(folder), "--import"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(codex): 1 session" in done.stdout and "1 recording" in done.stdout
    assert "shell 1" in done.stdout  # the mutating call, listed
