"""OpenClaw 2026.9.6's session store read as OpenClaw reads it, and its sessions judged as OpenClaw
judges them.

The store is written by OpenClaw's own `SessionManager` (the `openclaw_state` fixture, from
bundled recordings plus a compaction, an excluded message and resets); replaylab reads it
read-only (`importers.openclaw_store`) and imports it (`--from openclaw`). Every session must read
as OpenClaw's `SessionManager.open` reads it, and every imported session must rebuild, under the
openclaw@2026.9.6 profile, to the context OpenClaw builds from the store itself. Needs the
OpenClaw oracle (`npm ci --prefix replaylab/oracles/node/openclaw-2026.9.6`): without it these
tests skip with the command, under CI=true they fail.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from openclaw_stores import dump_store
from replaylab.agents import profile_of_recording, rules_of
from replaylab.importers import import_sessions, write_session
from replaylab.importers import openclaw_store as store
from replaylab.oracles.compare import context_mismatches
from replaylab.transcript import load_transcript


@pytest.fixture(scope="module")
def agent_store(openclaw_state: Path) -> Path:
    return openclaw_state / "agents" / "main" / "agent" / store.STORE_NAME


@pytest.fixture(scope="module")
def imported(openclaw_state: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The state folder imported: session id → its transcript."""
    out = tmp_path_factory.mktemp("imported")
    for session in import_sessions("openclaw", openclaw_state):
        write_session(session, out)
    found = {}
    for path in sorted(out.glob("*.jsonl")):
        header = orjson.loads(path.read_bytes().split(b"\n", 1)[0])
        found[header["source"]["sessionId"]] = path
    return found


def test_every_session_reads_as_openclaws_session_manager_reads_it(agent_store: Path) -> None:
    reference = dump_store(agent_store)
    listed = store.list_sessions(agent_store)
    assert {s.session_id for s in listed} == {s["sessionId"] for s in reference["sessions"]}
    assert len(listed) == 5
    for session in reference["sessions"]:
        records = store.read_records(agent_store, session["sessionId"])
        theirs = session["records"]
        if theirs and theirs[-1].get("type") == "leaf" and len(theirs) == len(records) + 1:
            theirs = theirs[:-1]  # a leaf control SessionManager synthesizes when its leaf moved
        assert records == theirs, session["sessionKey"]
        assert records[0] == session["header"] and session["header"]["version"] == 4
    # rows of 1 KiB and more are stored zstd-compressed: the reader decoded some
    with sqlite3.connect(f"file:{agent_store}?mode=ro", uri=True) as connection:
        compressed = connection.execute(
            "SELECT count(*) FROM transcript_events WHERE event_zstd IS NOT NULL"
        ).fetchone()
    assert compressed[0] >= 1


def test_the_store_is_only_read(agent_store: Path, imported: dict[str, Path]) -> None:
    before = {p: p.read_bytes() for p in agent_store.parent.iterdir()}
    for session in store.list_sessions(agent_store):
        store.read_records(agent_store, session.session_id)
    assert {p: p.read_bytes() for p in agent_store.parent.iterdir()} == before


def test_imported_sessions_are_openclaws_and_rebuild_to_openclaws_context(
    openclaw, agent_store: Path, imported: dict[str, Path]
) -> None:
    """Per session: OpenClaw's context of the store itself, against replaylab's window of the
    imported transcript under the profile it gets by default (openclaw@2026.9.6)."""
    rules = rules_of("openclaw@2026.9.6")
    compared = 0
    for session in store.list_sessions(agent_store):
        path = imported[session.session_id]
        assert profile_of_recording(path).name == "openclaw@2026.9.6"
        answer = openclaw.ask({"store": str(agent_store), "sessionId": session.session_id})
        assert answer["ok"], answer.get("error")
        context = answer["windows"][0]["context"]
        window = rules.window(load_transcript(path).leaf_path())
        assert list(context_mismatches(window, _as_view(context), migrated=False)) == [], session.session_key
        compared += len(window)
    assert compared > 100


def test_a_reset_after_51_messages_leaves_one_message_as_in_openclaw(openclaw, agent_store, imported) -> None:
    session = next(s for s in store.list_sessions(agent_store) if s.name == "reset-after-51")
    transcript = load_transcript(imported[session.session_id])
    path = transcript.leaf_path()
    assert sum(1 for e in path if e.type == "message") == 52
    window = rules_of("openclaw@2026.9.6").window(path)
    answer = openclaw.ask({"store": str(agent_store), "sessionId": session.session_id})
    assert len(window) == len(answer["windows"][0]["context"]) == 1
    assert window[0].message.content == "a fresh start"
    assert len(rules_of("pi@0.73.1").window(path)) == 52  # pi 0.73.1 knows no reset


def test_excluded_and_compacted_sessions_keep_openclaws_fields(imported: dict[str, Path]) -> None:
    texts = b"".join(p.read_bytes() for p in imported.values())
    assert b'"excludeFromContext":true' in texts
    assert b'"tokensAfter":900' in texts and b'"__openclaw":{"runId":"run-1"}' in texts
    assert b'"type":"reset"' in texts


class _as_view:
    """The oracle's raw context as `context_mismatches` reads it."""

    def __init__(self, context: list[dict]):
        self.context = [_Message(m) for m in context]
        self.migrated = False


class _Message:
    def __init__(self, data: dict):
        self.entry_id = data.get("entryId")
        self.role = data.get("role")
        self.message = data.get("message") or {}


def _damaged_copy(openclaw_state: Path, tmp_path: Path, change: str) -> Path:
    """A copy of the state folder OpenClaw wrote (the store with its WAL files), with one SQL
    change made to the copy's store."""
    import shutil

    copy = tmp_path / "state"
    shutil.copytree(openclaw_state, copy)
    with sqlite3.connect(copy / "agents" / "main" / "agent" / store.STORE_NAME) as connection:
        connection.execute(change)
    return copy


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            "UPDATE transcript_events SET event_zstd = x'00ff00ff' WHERE seq = "
            "(SELECT min(seq) FROM transcript_events WHERE event_zstd IS NOT NULL) AND event_zstd IS NOT NULL",
            "event_zstd is not a zstd frame OpenClaw wrote",
        ),
        (
            "UPDATE transcript_events SET event_utf8_bytes = event_utf8_bytes + 1 WHERE event_zstd IS NOT NULL",
            "decodes to ",
        ),
        (
            "UPDATE transcript_events SET event_json = 'not json{' WHERE seq = "
            "(SELECT min(seq) FROM transcript_events WHERE event_json IS NOT NULL AND seq > 0)",
            "is not JSON",
        ),
    ],
)
def test_a_damaged_store_row_is_an_input_error_naming_the_store_session_and_line(
    openclaw_state: Path, tmp_path: Path, change: str, said: str
) -> None:
    from replaylab.diagnostics import InputError

    state = _damaged_copy(openclaw_state, tmp_path, change)
    with pytest.raises(InputError) as caught:
        for _ in import_sessions("openclaw", state):
            pass
    text = str(caught.value)
    assert f"{store.STORE_NAME}: error[bad-openclaw-store]: session " in text and ": line " in text, text
    assert said in text, text


def test_a_store_whose_first_line_is_no_object_is_an_input_error_not_a_crash(
    openclaw_state: Path, tmp_path: Path
) -> None:
    """A row's line is any JSON to SQLite: a header line that is an array is no session header."""
    from replaylab.diagnostics import InputError

    change = (
        "UPDATE transcript_events SET event_json = '[1, 2]', event_zstd = NULL, event_utf8_bytes = NULL WHERE seq = 0"
    )
    state = _damaged_copy(openclaw_state, tmp_path, change)
    with pytest.raises(InputError) as caught:
        for _ in import_sessions("openclaw", state):
            pass
    assert "holds no session header line" in str(caught.value)


def test_a_zstd_archive_that_is_not_one_is_an_input_error_naming_it(openclaw_state: Path, tmp_path: Path) -> None:
    from replaylab.diagnostics import InputError

    state = _damaged_copy(openclaw_state, tmp_path, "SELECT 1")
    archive = state / "agents" / "main" / "sessions" / "0d7a9a1e-archived.jsonl.zst"
    archive.parent.mkdir(parents=True, exist_ok=True)
    archive.write_bytes(b"not zstd at all\n")
    with pytest.raises(InputError) as caught:
        for _ in import_sessions("openclaw", archive):
            pass
    assert f"{archive}: error[bad-openclaw-store]: the archive is not a zstd frame OpenClaw wrote" in str(caught.value)


def test_a_write_through_tool_search_code_is_a_mutating_event_of_the_imported_session(openclaw, tmp_path: Path) -> None:
    """OpenClaw's Tool Search code mode runs a `write` through `openclaw.tools.call`; OpenClaw
    records the nested call only as an `openclaw.nested-tool.v1` message excluded from the context
    (`createSubscribedToolSearchExecutor`). The `tool_search_code` call is the write's event: a
    session holding it is not replay-safe, and safeguard compaction keeps it verbatim."""
    from builders.openclaw_records import NESTED_WROTE, nested_tool_record
    from openclaw_stores import make_store
    from replaylab.safety import ToolClassifier, build_ledger

    code = "return await openclaw.tools.call('write', {path: 'notes.txt', content: 'call the bank'})"
    wrote = NESTED_WROTE
    nested = nested_tool_record()
    call = {"type": "toolCall", "id": "call_code", "name": "tool_search_code", "arguments": {"code": code}}
    entries = [
        {"type": "message", "message": {"role": "user", "content": "Save 'call the bank' to notes.txt."}},
        {"type": "message", "message": {"role": "assistant", "content": [call]}},
        {"type": "message", "message": nested},
        {
            "type": "message",
            "message": {
                "role": "toolResult",
                "toolCallId": "call_code",
                "toolName": "tool_search_code",
                "content": wrote,
            },
        },
        {"type": "message", "message": {"role": "assistant", "content": "Saved."}},
    ]
    state = tmp_path / "state"
    make_store(state, {"sessions": [{"name": "code-mode-write", "entries": entries}]})
    out = tmp_path / "imported"
    for session in import_sessions("openclaw", state):
        write_session(session, out)
    (path,) = out.glob("*.jsonl")
    ledger = build_ledger(load_transcript(path), ToolClassifier())
    assert [(e.tool, e.tool_class) for e in ledger.events] == [("tool_search_code", "exec")]
    assert not ledger.replay_safe


def _written_and_imported(tmp_path: Path, name: str, entries: list[dict]) -> tuple[Path, str, Path]:
    """A one-session store OpenClaw's SessionManager wrote: (its store, the session id, the
    session imported)."""
    from openclaw_stores import make_store

    state = tmp_path / "state"
    written = make_store(state, {"sessions": [{"name": name, "entries": entries}]})
    out = tmp_path / "imported"
    for session in import_sessions("openclaw", state):
        write_session(session, out)
    (path,) = out.glob("*.jsonl")
    return state / "agents" / "main" / "agent" / store.STORE_NAME, written["sessions"][0]["sessionId"], path


def _openclaws_context(openclaw, tmp_path: Path, name: str, entries: list[dict]) -> tuple[list[dict], Path]:
    """OpenClaw's own context of a one-session store it wrote, and the session imported."""
    agent_store, session_id, path = _written_and_imported(tmp_path, name, entries)
    answer = openclaw.ask({"store": str(agent_store), "sessionId": session_id})
    assert answer["ok"], answer.get("error")
    return answer["windows"][0]["context"], path


def _said(role: str, text: str, **extra: object) -> dict:
    return {"type": "message", "message": {"role": role, "content": text, **extra}}


def test_a_branch_taken_from_before_a_reset_continues_where_openclaw_reads_it(openclaw, tmp_path: Path) -> None:
    """OpenClaw's load attaches an entry whose parent lies before the latest reset (a branch
    taken from there) to the entry read just before it: history before a reset can no longer be
    branched from. replaylab's path and window are OpenClaw's."""
    from replaylab.transcript.model import message_text

    entries = [
        {"ref": "u1", **_said("user", "old question")},
        {"ref": "a1", **_said("assistant", "old answer")},
        {"type": "reset", "reason": "reset"},
        _said("user", "fresh question"),
        _said("assistant", "fresh answer"),
        {"type": "branch", "from": "a1"},
        _said("user", "branched question"),
        _said("assistant", "branched answer"),
    ]
    context, path = _openclaws_context(openclaw, tmp_path, "branch-before-reset", entries)
    for lazy in (False, True):
        leaf_path = load_transcript(path, lazy=lazy).leaf_path()
        assert len(leaf_path) == 7 and leaf_path[2].type == "reset"
        window = rules_of("openclaw@2026.9.6").window(leaf_path)
        assert list(context_mismatches(window, _as_view(context), migrated=False)) == []
    texts = [message_text(m.message) for m in window]
    assert texts == ["fresh question", "fresh answer", "branched question", "branched answer"]


def test_a_context_free_command_and_its_reply_are_no_user_turn_as_in_openclaw(openclaw, tmp_path: Path) -> None:
    """A context-free command (`/status`) and the reply the gateway injects are stored marked
    `excludeFromContext: true`; OpenClaw's context leaves out such a message whatever its role.
    replaylab numbers the user turns OpenClaw's context holds, and replays neither message."""
    from replaylab.replay import split_turns
    from replaylab.upstream.profiles import profile_named

    entries = [
        _said("user", "Where is my order?"),
        _said("assistant", "On its way."),
        _said("user", "/status", excludeFromContext=True),
        _said("assistant", "Model: fixture. Tokens: 42.", excludeFromContext=True),
        _said("user", "Cancel it, please."),
        _said("assistant", "Cancelled."),
    ]
    context, path = _openclaws_context(openclaw, tmp_path, "context-free-command", entries)
    turns = split_turns(load_transcript(path).leaf_path(), agent=profile_named("openclaw@2026.9.6"))
    assert len(turns) == sum(1 for m in context if m["role"] == "user") == 2
    assert [t.user_text() for t in turns] == ["Where is my order?", "Cancel it, please."]
    assert [len(t.steps) for t in turns] == [1, 1]


def test_a_write_a_resumed_code_mode_cell_makes_is_an_event_of_its_wait(openclaw, tmp_path: Path) -> None:
    """OpenClaw's Code Mode: `exec` returns `waiting` with a `runId`; `wait {runId}` resumes the
    cell (`runWait`), whose guest writes notes.txt. OpenClaw appends the nested call's
    `openclaw.nested-tool.v1` record during the `wait` (`createSubscribedToolSearchExecutor`), its
    `parentToolCallId` the original `exec`'s. Both control calls are events of class `exec`; the
    nested record is neither an event nor a turn."""
    import json

    from builders.openclaw_records import nested_tool_record
    from replaylab.replay import split_turns
    from replaylab.safety import ToolClassifier, build_ledger
    from replaylab.upstream.profiles import profile_named

    code = "return await write({path: 'notes.txt', content: 'call the bank'})"
    waiting = {"status": "waiting", "runId": "cm_1", "reason": "pending_tools", "replaySafe": False}
    done = {"status": "completed", "value": None, "output": []}
    nested = nested_tool_record()
    nested["details"]["parentToolCallId"] = "call_exec"

    def call(call_id: str, tool: str, arguments: dict) -> dict:
        block = {"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments}
        return {"role": "assistant", "content": [block]}

    def result(call_id: str, tool: str, details: dict) -> dict:
        text = [{"type": "text", "text": json.dumps(details)}]
        return {"role": "toolResult", "toolCallId": call_id, "toolName": tool, "content": text, "details": details}

    messages = [
        {"role": "user", "content": "Save 'call the bank' to notes.txt."},
        call("call_exec", "exec", {"code": code}),
        result("call_exec", "exec", waiting),
        call("call_wait", "wait", {"runId": "cm_1"}),
        nested,
        result("call_wait", "wait", done),
        {"role": "assistant", "content": "Saved."},
    ]
    entries = [{"type": "message", "message": message} for message in messages]
    _, _, path = _written_and_imported(tmp_path, "code-mode", entries)
    transcript = load_transcript(path)
    ledger = build_ledger(transcript, ToolClassifier())
    assert [(e.tool, e.tool_class) for e in ledger.events] == [("exec", "exec"), ("wait", "exec")]
    (turn,) = split_turns(transcript.leaf_path(), agent=profile_named("openclaw@2026.9.6"))
    assert set(turn.results) == {"call_exec", "call_wait"}
