"""The older Codex CLI session layouts (`replaylab.importers.codex_layouts`), written by hand in
the shapes Codex's own code gave them:

* early codex-rs rollouts (openai/codex 89a151f5 `codex-rs/core/src/rollout.rs`: `SessionMeta
  {id, timestamp, instructions?}` as the first line, each `ResponseItem` of
  `codex-rs/core/src/models.rs` (5248e90b, `#[serde(tag = "type", rename_all = "snake_case")]`)
  bare on its own line, `StateLine {record_type: "state", ...}`);
* the TypeScript Codex CLI (openai/codex 01d69e28 `codex-cli/src/utils/storage/save-rollout.ts`:
  `JSON.stringify({session: {timestamp, id, instructions}, items}, null, 2)`; an exec's output
  `JSON.stringify({output, metadata})` and `local_shell_call_output`,
  `codex-cli/src/utils/agent/agent-loop.ts` 50302e5a)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaylab.diagnostics import InputError
from replaylab.importers import import_sessions, write_session
from replaylab.transcript.foreign import CODEX, CODEX_CLI_JSON, CODEX_EARLY, detect_foreign
from replaylab.transcript.load import load_transcript

SESSION_ID = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
T = "2025-05-07T17:24:21.123Z"
EARLY_META = {
    "id": SESSION_ID,
    "timestamp": T,
    "instructions": "Be brief.",
    "git": {"commit_hash": "abc123", "branch": "main", "repository_url": "https://example.com/r.git"},
}


def _message(role: str, text: str, kind: str = "input_text", **extra) -> dict:
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}], **extra}


def _shell(call_id: str, command: list[str], **extra) -> dict:
    arguments = json.dumps({"command": command, "workdir": "/work/proj"})
    return {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id, **extra}


def _exec_output(call_id: str, text: str, exit_code: int, kind: str = "function_call_output") -> dict:
    output = json.dumps({"output": text, "metadata": {"exit_code": exit_code, "duration_seconds": 0.1}})
    return {"type": kind, "call_id": call_id, "output": output}


def _early(tmp_path: Path, lines: list, name: str = f"rollout-2025-05-07T17-24-21-{SESSION_ID}.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def _cli(tmp_path: Path, document: object, name: str = f"rollout-2025-05-07-{SESSION_ID}.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))  # as the CLI writes it: JSON.stringify(…, null, 2)
    return path


def _cli_document(items: list) -> dict:
    return {"session": {"timestamp": T, "id": SESSION_ID, "instructions": "Be brief."}, "items": items}


def _import(path: Path):
    (session,) = list(import_sessions("codex", path))
    return session


def _messages(session) -> list[dict]:
    return [e["message"] for e in session.entries if e["type"] == "message"]


EARLY_LINES = [
    EARLY_META,
    _message("user", "List the files"),
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look."}]},
    _shell("c1", ["ls"], id="fc_1"),
    {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
    {
        "type": "local_shell_call",
        "id": "lsc_1",
        "call_id": "c2",
        "status": "completed",
        "action": {"type": "exec", "command": ["cat", "README.md"], "timeout_ms": None},
    },
    {"type": "function_call_output", "call_id": "c2", "output": "# readme"},
    {"record_type": "state", "previous_response_id": "resp_1"},
    _message("assistant", "Done.", "output_text", id="msg_1"),
]


def test_an_early_codex_rs_rollout_is_read_by_the_same_item_handling(tmp_path):
    session = _import(_early(tmp_path, EARLY_LINES))
    assert session.header["id"] == SESSION_ID and session.header["timestamp"].startswith("2025-05-07T17:24:21")
    assert session.header["source"]["layout"] == "codex-rs-early"
    messages = _messages(session)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    assert [b["type"] for b in messages[1]["content"]] == ["thinking", "toolCall"]
    assert messages[3]["content"][0]["name"] == "local_shell"
    assert messages[3]["content"][0]["arguments"]["command"] == ["cat", "README.md"]
    assert [(m["toolCallId"], m["isError"]) for m in (messages[2], messages[4])] == [("c1", False), ("c2", False)]
    customs = [(e["customType"], e["data"]) for e in session.entries if e["type"] == "custom"]
    assert customs[0] == ("system-prompt", {"content": "Be brief."})
    assert customs[1] == ("codex:session_meta", EARLY_META)  # its git kept as written
    assert customs[2] == ("codex:state", {"previous_response_id": "resp_1"})
    assert len(session.interactions) == 2 and session.notes == []


def test_a_typescript_codex_cli_session_is_read_by_the_same_item_handling(tmp_path):
    items = [
        _message("user", "Run the tests"),
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Test."}], "duration_ms": 9},
        _shell("call_1", ["npm", "test"], id="fc_1", status="completed"),
        _exec_output("call_1", "1 failed", 1),
        {
            "type": "local_shell_call",
            "id": "lsc_1",
            "call_id": "call_2",
            "status": "completed",
            "action": {"type": "exec", "command": ["git", "status"]},
        },
        _exec_output("call_2", "clean", 0, kind="local_shell_call_output"),
        _message("assistant", "One test fails.", "output_text", id="msg_1", status="completed"),
    ]
    session = _import(_cli(tmp_path, _cli_document(items)))
    assert session.header["id"] == SESSION_ID and session.header["source"]["layout"] == "codex-cli-json"
    messages = _messages(session)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    assert messages[1]["content"][0]["thinking"] == "Test."
    # the exit code the CLI wrote into the output decides the error
    assert [(m["toolCallId"], m["isError"]) for m in (messages[2], messages[4])] == [
        ("call_1", True),
        ("call_2", False),
    ]
    customs = [e["customType"] for e in session.entries if e["type"] == "custom"]
    assert customs == ["system-prompt", "codex:session_meta"]
    # each entry is named by the line its item starts on in the pretty-printed document
    lines = Path(session.header["source"]["file"]).read_text().split("\n")
    user = next(e for e in session.entries if e["type"] == "message")
    assert lines[int(user["sourceId"].removeprefix("line:")) - 1].strip() == "{"
    assert len(session.interactions) == 2 and session.notes == []


def test_a_typescript_session_written_on_one_line_is_read_too(tmp_path):
    path = tmp_path / "rollout-one-line.json"
    path.write_text(json.dumps(_cli_document([_message("user", "hi")])))
    assert [m["role"] for m in _messages(_import(path))] == ["user"]
    assert detect_foreign(path) is CODEX_CLI_JSON


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([{"id": 7, "timestamp": T}, _message("user", "hi")], ":1: error[bad-import-source] field 'id'"),
        ([EARLY_META, {"role": "user", "content": []}], ":2: error[bad-import-source] field 'type'"),
        ([EARLY_META, ["a list"]], ":2: error[bad-import-source] field 'type'"),
        (
            [EARLY_META, _message("user", "hi"), {"type": "message", "role": "user", "content": "hi"}],
            ":3: error[bad-import-source] field 'content'",
        ),
        ([EARLY_META, "{not json", _message("user", "hi")], ":2: error[bad-import-source]"),
    ],
)
def test_an_early_rollout_that_cannot_be_read_is_an_error_naming_file_line_and_field(tmp_path, lines, expected):
    path = _early(tmp_path, lines)
    with pytest.raises(InputError) as caught:
        _import(path)
    assert f"{path}{expected}" in str(caught.value)


def test_an_early_rollout_s_last_line_cut_off_is_skipped_with_a_note(tmp_path):
    session = _import(_early(tmp_path, [EARLY_META, _message("user", "hi"), '{"type": "mess']))
    assert [m["role"] for m in _messages(session)] == ["user"]
    assert any("line 3 does not parse" in note for note in session.notes)


def _line_of(path: Path, text: str, occurrence: int = 1) -> int:
    found = [n for n, line in enumerate(path.read_text().split("\n"), 1) if text in line]
    return found[occurrence - 1]


def test_a_typescript_session_that_cannot_be_read_is_an_error_naming_file_line_and_field(tmp_path):
    path = _cli(tmp_path, _cli_document([_message("user", "hi"), "not an item"]))
    with pytest.raises(InputError) as caught:
        _import(path)
    assert f"{path}:{_line_of(path, 'not an item')}: error[bad-import-source] field 'items[1]'" in str(caught.value)

    path = _cli(tmp_path, _cli_document([_message("user", "hi"), {"type": "message", "role": "user", "content": 3}]))
    with pytest.raises(InputError) as caught:
        _import(path)
    line = _line_of(path, '"type": "message"', 2) - 1  # the item's `{` is the line before its first field
    assert f"{path}:{line}: error[bad-import-source] field 'items[1].content'" in str(caught.value)

    path = _cli(tmp_path, {"session": {"timestamp": T}, "items": []})
    with pytest.raises(InputError) as caught:
        _import(path)
    assert f"{path}:{_line_of(path, 'session')}: error[bad-import-source] field 'session.id'" in str(caught.value)

    path = tmp_path / "rollout-cut.json"
    path.write_text(json.dumps(_cli_document([_message("user", "hi")]), indent=2)[:-20])
    with pytest.raises(InputError) as caught:
        _import(path)
    assert f"{path}:" in str(caught.value) and "is not valid JSON" in str(caught.value)


def test_replaylab_names_the_codex_importer_for_each_layout(tmp_path):
    early = _early(tmp_path, EARLY_LINES)
    cli = _cli(tmp_path, _cli_document([_message("user", "hi")]))
    current = tmp_path / "rollout-now.jsonl"
    current.write_text(json.dumps({"timestamp": T, "type": "session_meta", "payload": {"id": "x"}}) + "\n")
    assert (detect_foreign(early), detect_foreign(cli), detect_foreign(current)) == (CODEX_EARLY, CODEX_CLI_JSON, CODEX)
    assert {CODEX_EARLY.kind, CODEX_CLI_JSON.kind} == {"codex"}
    shown = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "inspect", "--json", str(early), str(cli)],
        capture_output=True,
        text=True,
    )
    reports = json.loads(shown.stdout)
    assert [r["foreignFormat"] for r in reports] == ["codex", "codex"]
    assert reports[1]["importCommand"].startswith("replaylab import --from codex ")


def test_a_folder_imports_every_layout_and_a_json_copy_of_a_rollout_once(tmp_path):
    sessions_dir = tmp_path / "sessions"
    day = sessions_dir / "2025" / "05" / "07"
    day.mkdir(parents=True)
    _early(day, EARLY_LINES)
    # a JSON document of the same session id beside it is the same session
    _cli(sessions_dir, _cli_document([_message("user", "List the files")]))
    other = "0a1b2c3d-0000-4000-8000-000000000001"
    _cli(sessions_dir, _cli_document([_message("user", "two")]), f"rollout-2025-05-08-{other}.json")
    names = [s.name for s in import_sessions("codex", sessions_dir)]
    assert names == [f"rollout-2025-05-07T17-24-21-{SESSION_ID}", f"rollout-2025-05-08-{other}"]


@pytest.mark.parametrize("layout", ["early", "cli"])
def test_written_sessions_of_older_layouts_load_strictly(tmp_path, layout):
    if layout == "early":
        path = _early(tmp_path, EARLY_LINES)
    else:
        path = _cli(tmp_path, _cli_document([_message("user", "hi"), _shell("c1", ["ls"]), _exec_output("c1", "x", 0)]))
    transcript, _ = write_session(_import(path), tmp_path / "out")
    assert load_transcript(transcript, strict=True).entries
