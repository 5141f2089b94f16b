"""A tool result whose `content` is one JSON object (`transcript.object_content`), and the calls
paired from items no block model reads in the summary, the file lists and the safeguard checks.

OpenClaw 2026.9.6's JSONL reader wraps such a content as a list of that one item and keeps the
result (`normalizeLoadedFileEntry`); pi keeps it as written and its estimate throws on it.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.compaction.summary.file_ops import agent_file_ops, collect_file_ops
from replaylab.compaction.summary.llm import serialize_conversation
from replaylab.transcript import loads_transcript
from replaylab.transcript.model import OpaqueBlock, TextBlock, dump_entry
from replaylab.transcript.object_content import ObjectContent
from replaylab.transcript.opaque_content import read_entry
from replaylab.upstream.profiles import profiles

TEXT = {"type": "text", "text": "twelve chars"}
UNTYPED = {"text": "untyped", "details": {"x": 1}}
IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}


def _session(content: Any, tool: str = "read") -> bytes:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    call = {"type": "toolCall", "id": "c1", "name": tool, "arguments": {"path": "a"}}
    return linear_jsonl(
        header,
        message("user", "read a"),
        message("assistant", [call], stopReason="toolUse"),
        message("toolResult", content, toolCallId="c1", toolName=tool, isError=False),
        message("assistant", [{"type": "text", "text": "done"}], stopReason="stop"),
    )


@pytest.mark.parametrize("label,content", [("text", TEXT), ("untyped", UNTYPED), ("image", IMAGE)])
def test_a_tool_result_whose_content_is_an_object_keeps_its_call_and_is_named(label: str, content: Any) -> None:
    """Before: an unreadable entry (`invalid-entry`), its call `missing-tool-result`, out of every window."""
    data = _session(content)
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        found = [(d.code, d.severity, d.line, d.entry_id, d.field) for d in transcript.diagnostics]
        assert found == [
            ("opaque-content", "warning", 4, "e3", "message.content"),
            ("pi-unestimable", "warning", 4, "e3", "message.content"),
        ], (label, lazy)
        opaque, pi = transcript.diagnostics
        assert "normalizeLoadedFileEntry" in opaque.message and "pi keeps it as written" in opaque.message
        assert ("no rule reads its text" in opaque.message) == (label == "untyped")
        assert "compaction would fail" in pi.message and "throws" in pi.message
        result = transcript.leaf_path()[2]
        assert type(result.message.content) is ObjectContent
        # written back as written: a restated result is the recorded one
        assert dump_entry(result) == orjson.loads(data.splitlines()[3])
        assert dump_entry(read_entry(dump_entry(result))) == dump_entry(result)
        # counted as the list of that one item, as OpenClaw reads it (pi's own estimate throws)
        as_list = loads_transcript(_session([content])).leaf_path()
        for profile in sorted(profiles()):
            rules = rules_of(profile)
            window = rules.window(transcript.leaf_path())
            assert [w.entry_id for w in window] == ["e1", "e2", "e3", "e4"], (profile, lazy)
            expected = rules.tokens(rules.window(as_list)[2].message)
            assert rules.tokens(window[2].message) == expected, (profile, label)


def test_openclaw_holds_the_object_as_a_list_of_it() -> None:
    for content, kind in ((TEXT, TextBlock), (UNTYPED, OpaqueBlock)):
        window = rules_of("openclaw@2026.9.6").window(loads_transcript(_session(content)).leaf_path())
        held = window[2].message
        assert type(held.content) is list and [type(b) for b in held.content] == [kind]
        assert held.model_dump(by_alias=True, exclude_unset=True)["content"] == [content]


def test_openclaws_file_lists_read_the_details_of_such_a_patch_result() -> None:
    """OpenClaw reads `details.summary` of each item of an apply_patch result's content."""
    summary = {"summary": {"added": ["new.txt"], "modified": ["old.txt"]}}
    transcript = loads_transcript(_session({"text": "patched", "details": summary}, tool="apply_patch"))
    rules = next(p.file_ops for name, p in profiles().items() if name.startswith("openclaw") and p.file_ops)
    ops = collect_file_ops([], rules=rules)
    agent_file_ops(transcript.leaf_path()[2].message, ops, rules)
    assert (sorted(ops.written), sorted(ops.edited)) == (["new.txt"], ["old.txt"])


ODD_CALLS = [
    ("string", '{"path":"a"}', 'write(0="{", 1="\\"", 2="p", 3="a", 4="t", 5="h", 6="\\"", 7=":", 8="\\"", 9="a", '
     '10="\\"", 11="}")'),
    ("array", ["a", 1], 'write(0="a", 1=1)'),
]  # fmt: skip


@pytest.mark.parametrize("label,arguments,shown", ODD_CALLS, ids=[c[0] for c in ODD_CALLS])
def test_the_summary_input_shows_a_call_paired_from_an_opaque_item_as_pi_does(
    label: str, arguments: Any, shown: str
) -> None:
    """pi's `serializeConversation` prints `Object.entries(arguments)`: a string's characters, an
    array's items. Before, such a call was left out of the summary's input."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    call = {"type": "toolCall", "id": "c1", "name": "write", "arguments": arguments}
    data = linear_jsonl(
        header,
        message("user", "write a"),
        message("assistant", [call], stopReason="toolUse"),
        message("toolResult", [{"type": "text", "text": "ok"}], toolCallId="c1", toolName="write", isError=False),
    )
    messages = [e.message for e in loads_transcript(data).leaf_path()]
    assert f"[Assistant tool calls]: {shown}" in serialize_conversation(messages)
    # pi's and OpenClaw's file lists read `arguments.path` of an object only: no file
    assert collect_file_ops(messages).written == set()


def test_safeguard_keeps_the_only_write_when_it_is_such_a_call(tmp_path) -> None:
    """The write before the cut is a call whose arguments are a string: judged mutating, it is
    protected and restated verbatim with its result, and the ledger lists it (a guard: already so
    through `pairing.recorded_calls`)."""
    from builders.transcripts import TOOL_CLASSES, Session
    from replaylab.compaction import CompactParams, compact

    s = Session()
    for i in range(6):
        s.user(f"look up {i} " + "q" * 500)
        if i == 1:
            entry, ids = s.assistant(None, [("write", {})])
            s.lines[-1]["message"]["content"][0]["arguments"] = '{"path":"/srv/app.yml"}'
            result = s.result(ids[0], "write", "written " + "w" * 800)
        else:
            s.tool_turn("get_order", {"order_id": f"#W{i}"}, "order " + "o" * 800)
        s.assistant("found " + "f" * 300)
    path = s.write(tmp_path / "rec.jsonl")
    params = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=800, tool_classes=TOOL_CLASSES)
    done = compact(CompactParams(session_file=str(path), **params))  # type: ignore[arg-type]
    assert done.success and done.protected_entry_ids == [entry, result]
    assert done.mutated_event_ids == ids
    recorded = {e.id: dump_entry(e.message) for e in loads_transcript(path.read_bytes()).leaf_path()}
    shown = {w.get("restates") or w["entryId"]: w["message"] for w in done.compacted_window[1:]}
    assert shown[entry] == recorded[entry] and shown[result] == recorded[result]


def test_an_assistants_string_content_is_one_text_block_as_openclaw_reads_it() -> None:
    """OpenClaw's reader makes an assistant's string content one text block and strips its
    compaction replay checkpoint (`normalizeLoadedFileEntry`); pi keeps the string, whose
    characters its estimate walks and counts none of. Before: an unreadable entry, out of
    OpenClaw's window."""
    from replaylab.oracles.compare import message_as_pi_holds_it

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    replay = {"type": "anthropic-compaction", "x": 1}
    data = linear_jsonl(
        header,
        message("user", "hi"),
        message("assistant", "twelve chars", stopReason="stop", providerReplay=replay),
        message("user", "again"),
    )
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        found = [(d.code, d.severity, d.entry_id, d.field) for d in transcript.diagnostics]
        assert found == [("opaque-content", "warning", "e2", "message.content")], lazy
        assert "normalizeLoadedFileEntry" in transcript.diagnostics[0].message
        entry = transcript.leaf_path()[1]
        assert type(entry.message.content) is ObjectContent
        assert dump_entry(entry) == orjson.loads(data.splitlines()[2])  # written back as written
        assert dump_entry(read_entry(dump_entry(entry))) == dump_entry(entry)
    path = loads_transcript(data).leaf_path()
    openclaw = rules_of("openclaw@2026.9.6")
    window = openclaw.window(path)
    assert [w.entry_id for w in window] == ["e1", "e2", "e3"]
    held = message_as_pi_holds_it(window[1].message)
    assert held["content"] == [{"type": "text", "text": "twelve chars"}] and "providerReplay" not in held
    assert openclaw.tokens(window[1].message) == 3
    for name in ("pi@0.73.1", "pi@1.6.0"):
        rules = rules_of(name)
        mine = rules.window(path)[1].message
        assert message_as_pi_holds_it(mine)["content"] == "twelve chars", name
        assert rules.tokens(mine) == 0, name
