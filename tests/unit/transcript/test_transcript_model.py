"""Transcript model and loader: load → dump reproduces every object, leaf paths, v1/v2 migration.

The round trip is checked on the canonical JSON text (sorted keys) of each object, so a silent
type change (1 → 1.0, true → 1, "3" → 3) fails the test where Python's `==` would let it pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from replaylab.cassette import canonical_json
from replaylab.transcript.load import load_transcript, loads_transcript
from replaylab.transcript.model import (
    ENTRY_ADAPTER,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessage,
    CustomMessageEntry,
    ImageBlock,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    TextBlock,
    ThinkingBlock,
    ThinkingLevelChangeEntry,
    ToolCallBlock,
    ToolResultMessage,
    UnknownBlock,
    UnknownEntry,
    UnknownMessage,
    UserMessage,
    dump_entry,
    identifier_text,
    message_text,
)
from replaylab.transcript.writer import file_sha256

PI_FILES = ["pi-before-compaction.jsonl", "pi-compact.jsonl", "pi-large-session.jsonl", "pi-session.jsonl"]

#: fields the v1 → v3 migration adds to an entry (openclaw-internals §1.2); nothing else may change
V1_ADDED = {"id", "parentId"}


def raw_objects(data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """Every JSON object of a file with its line, parsed independently of the loader: orjson per
    line, and for a line orjson rejects, json's raw_decode object by object (glued entries)."""
    out = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            out.append((lineno, orjson.loads(line)))
        except orjson.JSONDecodeError:
            text, pos, decoder = line.decode("utf-8"), 0, json.JSONDecoder()
            while pos < len(text):
                obj, pos = decoder.raw_decode(text, pos)
                out.append((lineno, obj))
    return out


def canon(obj: Any) -> str:
    return canonical_json(obj)


# ---------------------------------------------------------------- real files


@pytest.mark.realdata
@pytest.mark.parametrize("name", PI_FILES)
def test_real_pi_file_round_trips_line_for_line(shared_data: Path, name: str) -> None:
    path = shared_data / "openclaw-fixtures" / name
    before = file_sha256(path)
    raw = raw_objects(path.read_bytes())
    transcript = load_transcript(path, recover_glued_lines=True)  # every object, glued ones too

    assert raw[0][1]["type"] == "session" and "version" not in raw[0][1]  # all four are v1 files
    assert canon(dump_entry(transcript.header)) == canon(raw[0][1])
    entries = raw[1:]
    assert len(transcript.entries) == len(entries), "an entry was lost or invented"
    for (lineno, original), entry in zip(entries, transcript.entries):
        dumped = dump_entry(entry)
        added = set(dumped) - set(original)
        expected_added = set(V1_ADDED)
        if original.get("type") == "compaction" and "firstKeptEntryIndex" in original:
            expected_added.add("firstKeptEntryId")
        assert added == expected_added, f"line {lineno}: migration added {added}"
        assert transcript.line_of[entry.id] == lineno
        without_migration = {k: v for k, v in dumped.items() if k not in added}
        assert canon(without_migration) == canon(original), f"line {lineno} ({entry.id}) changed on load → dump"
    assert file_sha256(path) == before


@pytest.mark.realdata
@pytest.mark.parametrize("name", PI_FILES)
def test_real_pi_file_raw_objects_validate_without_the_loader(shared_data: Path, name: str) -> None:
    """Second, loader-independent route: each raw object plus only the fields migration adds
    validates with ENTRY_ADAPTER, and its dump minus those fields is the raw object."""
    raw = raw_objects((shared_data / "openclaw-fixtures" / name).read_bytes())
    header = SessionHeader.model_validate(raw[0][1])
    assert canon(dump_entry(header)) == canon(raw[0][1])
    for index, (lineno, original) in enumerate(raw[1:]):
        entry = ENTRY_ADAPTER.validate_python({**original, "id": f"x{index}", "parentId": None})
        dumped = {k: v for k, v in dump_entry(entry).items() if k not in V1_ADDED}
        assert canon(dumped) == canon(original), f"line {lineno}"
        assert not isinstance(entry, UnknownEntry), f"line {lineno}: type {original.get('type')!r} not modelled"


# ---------------------------------------------------------------- synthetic v3 file, every shape


def synthetic_v3_objects() -> list[dict[str, Any]]:
    """openclaw-internals §1.6 plus every role, block and optional field, unknown types/fields/
    blocks, replaylab's replayMark and details.replaylab."""
    usage = {
        "input": 5120,
        "output": 80,
        "cacheRead": 0,
        "cacheWrite": 5000,
        "totalTokens": 10200,
        "cost": {"input": 0.0256, "output": 0.002, "cacheRead": 0, "cacheWrite": 0.0313, "total": 0.0589},
    }
    return [
        {
            "type": "session",
            "version": 3,
            "id": "9b2c6f1e-4d1a-4c1e-9a55-2f3e1d7c8b90",
            "timestamp": "2026-04-10T09:00:00.000Z",
            "cwd": "/home/u/.openclaw/workspace",
            "parentSession": "/x/p.jsonl",
            "futureHeaderField": {"a": [1, 2.5, None, True]},
        },
        {
            "type": "model_change",
            "id": "a1000001",
            "parentId": None,
            "timestamp": "2026-04-10T09:00:00.100Z",
            "provider": "anthropic",
            "modelId": "claude-opus-4-6",
        },
        {
            "type": "thinking_level_change",
            "id": "a1000002",
            "parentId": "a1000001",
            "timestamp": "2026-04-10T09:00:00.101Z",
            "thinkingLevel": "medium",
        },
        {
            "type": "message",
            "id": "a1000003",
            "parentId": "a1000002",
            "timestamp": "2026-04-10T09:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Fix the failing test in src/app.ts ✓ \u2028"},
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                ],
                "timestamp": 1775811601000,
                "provenance": {"kind": "inter_session", "originSessionId": "s-9"},
            },
        },
        {
            "type": "message",
            "id": "a1000004",
            "parentId": "a1000003",
            "timestamp": "2026-04-10T09:00:05.000Z",
            "replayMark": "unsafe",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Need to read the file first.",
                        "thinkingSignature": "EqQBCkYI...",
                    },
                    {"type": "thinking", "thinking": "", "thinkingSignature": "opaque==", "redacted": True},
                    {"type": "text", "text": "Reading.", "textSignature": '{"v":1,"id":"msg_1","phase":"commentary"}'},
                    {"type": "toolCall", "id": "toolu_01AbC", "name": "read", "arguments": {"path": "src/app.ts"}},
                    {
                        "type": "toolCall",
                        "id": "toolu_01Wr",
                        "name": "write",
                        "arguments": {"path": "src/app.ts", "content": "x", "nested": {"b": 1, "a": [1.5, None]}},
                        "thoughtSignature": "sig-g",
                    },
                    {"type": "toolUse", "id": "legacy_1", "input": {"q": 1}},
                    {"type": "futureBlock", "payload": {"k": "v"}},
                ],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-opus-4-6",
                "usage": usage,
                "stopReason": "toolUse",
                "timestamp": 1775811605000,
                "responseId": "resp_1",
            },
        },
        {
            "type": "message",
            "id": "a1000005",
            "parentId": "a1000004",
            "timestamp": "2026-04-10T09:00:05.200Z",
            "replayMark": "safe",
            "message": {
                "role": "toolResult",
                "toolCallId": "toolu_01AbC",
                "toolName": "read",
                "content": [
                    {"type": "text", "text": "export function add(a, b) { return a - b }"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"},
                ],
                "details": {"lines": 1},
                "isError": False,
                "timestamp": 1775811605200,
            },
        },
        {
            "type": "message",
            "id": "a1000005b",
            "parentId": "a1000005",
            "timestamp": "2026-04-10T09:00:05.300Z",
            "replayMark": "unsafe",
            "message": {
                "role": "toolResult",
                "toolCallId": "toolu_01Wr",
                "toolName": "write",
                "content": [{"type": "text", "text": "ok"}],
                "isError": False,
                "timestamp": 1775811605300,
                "details": {"replaylab": {"childSession": "child.jsonl"}, "other": None},
            },
        },
        {
            "type": "message",
            "id": "a1000006",
            "parentId": "a1000005b",
            "timestamp": "2026-04-10T09:00:09.000Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "The bug is the minus sign; fixed."}],
                "api": "anthropic-messages",
                "provider": "anthropic",
                "model": "claude-opus-4-6",
                "usage": usage,
                "stopReason": "error",
                "errorMessage": "overloaded",
                "timestamp": 1775811609000,
            },
        },
        {
            "type": "compaction",
            "id": "a1000007",
            "parentId": "a1000006",
            "timestamp": "2026-04-10T10:30:00.000Z",
            "summary": "## Decisions\n...\n## Exact identifiers\nsrc/app.ts",
            "firstKeptEntryId": "a1000006",
            "tokensBefore": 181395,
            "fromHook": True,
            "details": {
                "readFiles": ["src/app.ts"],
                "modifiedFiles": [],
                "replaylab": {
                    "mode": "safeguard",
                    "protectedEntryIds": ["a1000004", "a1000005b"],
                    "mutatedEventIds": ["toolu_01Wr"],
                    "replaySafe": False,
                    "tokensAfter": 1200,
                    "summaryAttempts": 2,
                },
            },
        },
        {
            "type": "branch_summary",
            "id": "a1000008",
            "parentId": "a1000003",
            "timestamp": "2026-04-10T10:31:00.000Z",
            "fromId": "a1000007",
            "summary": "The user explored a different conversation branch.",
            "details": {"readFiles": []},
            "fromHook": False,
        },
        {
            "type": "custom",
            "id": "a1000009",
            "parentId": "a1000008",
            "timestamp": "2026-04-10T10:31:01.000Z",
            "customType": "openclaw.cache-ttl",
            "data": {"timestamp": 1775817061000, "provider": "anthropic", "modelId": "claude-opus-4-6"},
        },
        {
            "type": "custom_message",
            "id": "a100000a",
            "parentId": "a1000009",
            "timestamp": "2026-04-10T10:31:02.000Z",
            "customType": "openclaw.sessions_yield",
            "content": "Sub-agent finished: 3 files changed.",
            "display": False,
        },
        {
            "type": "custom_message",
            "id": "a100000a2",
            "parentId": "a100000a",
            "timestamp": "2026-04-10T10:31:02.500Z",
            "customType": "x",
            "content": [{"type": "text", "text": "t"}, {"type": "image", "data": "B", "mimeType": "image/gif"}],
            "display": True,
            "details": {"k": 1},
        },
        {
            "type": "label",
            "id": "a100000b",
            "parentId": "a100000a2",
            "timestamp": "2026-04-10T10:31:03.000Z",
            "targetId": "a1000006",
            "label": "checkpoint-1",
        },
        {
            "type": "label",
            "id": "a100000b2",
            "parentId": "a100000b",
            "timestamp": "2026-04-10T10:31:03.100Z",
            "targetId": "a1000006",
        },
        {
            "type": "session_info",
            "id": "a100000c",
            "parentId": "a100000b2",
            "timestamp": "2026-04-10T10:31:04.000Z",
            "name": "Fix add()",
        },
        {
            "type": "message",
            "id": "a100000d",
            "parentId": "a100000c",
            "timestamp": "2026-04-10T10:31:05.000Z",
            "message": {
                "role": "bashExecution",
                "command": "npm test",
                "output": "1 passed",
                "exitCode": 0,
                "cancelled": False,
                "truncated": True,
                "fullOutputPath": "/tmp/out.txt",
                "excludeFromContext": True,
                "timestamp": 1775817065000,
            },
        },
        {
            "type": "message",
            "id": "a100000e",
            "parentId": "a100000d",
            "timestamp": "2026-04-10T10:31:06.000Z",
            "message": {
                "role": "custom",
                "customType": "note",
                "content": "hello",
                "display": True,
                "details": None,
                "timestamp": 1775817066000,
            },
        },
        {
            "type": "message",
            "id": "a100000f",
            "parentId": "a100000e",
            "timestamp": "2026-04-10T10:31:07.000Z",
            "message": {"role": "user", "content": "plain string content", "timestamp": 1775817067000.5},
        },
        {
            "type": "message",
            "id": "a1000010",
            "parentId": "a100000f",
            "timestamp": "2026-04-10T10:31:08.000Z",
            "message": {"role": "futureRole", "stuff": [1, {"x": None}]},
        },
        {
            "type": "future_entry",
            "id": "a1000011",
            "parentId": "a1000010",
            "timestamp": "2026-04-10T10:31:09.000Z",
            "payload": {"deep": {"list": [True, False, 0, -1, 1e-7]}},
        },
        {
            "type": "message",
            "id": "a1000012",
            "parentId": "a1000011",
            "timestamp": "2026-04-10T10:31:10.000Z",
            "idempotencyKey": "idem-1",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "NO_REPLY"}],
                "api": "openai-responses",
                "provider": "openclaw",
                "model": "delivery-mirror",
                "usage": {"input": 0, "output": 0},
                "stopReason": "stop",
                "timestamp": 1775817070000,
            },
        },
    ]


EXPECTED_TYPES = {
    "a1000001": ModelChangeEntry,
    "a1000002": ThinkingLevelChangeEntry,
    "a1000003": MessageEntry,
    "a1000007": CompactionEntry,
    "a1000008": BranchSummaryEntry,
    "a1000009": CustomEntry,
    "a100000a": CustomMessageEntry,
    "a100000b": LabelEntry,
    "a100000c": SessionInfoEntry,
    "a1000011": UnknownEntry,
}


def test_synthetic_v3_every_shape_round_trips_exactly(tmp_path: Path) -> None:
    objects = synthetic_v3_objects()
    path = tmp_path / "every-shape.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objects))

    transcript = load_transcript(path)
    assert transcript.diagnostics == []
    assert transcript.source_version == 3
    assert canon(dump_entry(transcript.header)) == canon(objects[0])
    assert [e.id for e in transcript.entries] == [o["id"] for o in objects[1:]]
    for original, entry in zip(objects[1:], transcript.entries):
        assert canon(dump_entry(entry)) == canon(original), entry.id

    # every shape was really modelled (not swallowed by a catch-all)
    by_id = transcript.by_id
    for entry_id, kind in EXPECTED_TYPES.items():
        assert type(by_id[entry_id]) is kind, entry_id
    user, assistant = by_id["a1000003"].message, by_id["a1000004"].message
    assert isinstance(user, UserMessage) and [type(b) for b in user.content] == [TextBlock, ImageBlock]
    assert isinstance(assistant, AssistantMessage)
    assert [type(b) for b in assistant.content] == [
        ThinkingBlock,
        ThinkingBlock,
        TextBlock,
        ToolCallBlock,
        ToolCallBlock,
        UnknownBlock,
        UnknownBlock,
    ]
    assert assistant.content[1].redacted is True and assistant.content[4].thought_signature == "sig-g"
    assert isinstance(by_id["a1000005"].message, ToolResultMessage)
    assert by_id["a1000005b"].message.details["replaylab"]["childSession"] == "child.jsonl"
    assert by_id["a1000004"].replay_mark == "unsafe" and by_id["a1000005"].replay_mark == "safe"
    assert by_id["a1000007"].details["replaylab"]["protectedEntryIds"] == ["a1000004", "a1000005b"]
    assert isinstance(by_id["a100000d"].message, BashExecutionMessage)
    assert by_id["a100000d"].message.exclude_from_context is True
    assert isinstance(by_id["a100000e"].message, CustomMessage)
    assert isinstance(by_id["a1000010"].message, UnknownMessage)
    assert by_id["a1000012"].model_extra == {"idempotencyKey": "idem-1"}


def test_dump_keeps_value_types_exactly() -> None:
    """Floats stay floats, ints stay ints, nulls stay null, absent stays absent."""
    original = {
        "type": "message",
        "id": "m",
        "parentId": None,
        "timestamp": "t",
        "message": {
            "role": "toolResult",
            "toolCallId": "c",
            "content": [],
            "isError": False,
            "timestamp": 1.0,
            "details": None,
        },
    }
    dumped = dump_entry(ENTRY_ADAPTER.validate_python(original))
    assert orjson.dumps(dumped, option=orjson.OPT_SORT_KEYS) == orjson.dumps(original, option=orjson.OPT_SORT_KEYS)
    assert "toolName" not in dumped["message"]


# ---------------------------------------------------------------- leaf path


def test_leaf_path_follows_parent_ids_from_the_last_entry_and_lists_abandoned(tmp_path: Path) -> None:
    def msg(entry_id: str, parent: str | None, role: str = "user") -> dict[str, Any]:
        content: Any = "q" if role == "user" else [{"type": "text", "text": "a"}]
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "t",
            "message": {"role": role, "content": content},
        }

    lines = [
        {"type": "session", "version": 3, "id": "s"},
        msg("u1", None),
        msg("a1", "u1", "assistant"),
        msg("u2", "a1"),
        msg("a2", "u2", "assistant"),  # abandoned branch …
        msg("u2b", "a1"),
        msg("a2b", "u2b", "assistant"),  # … the user went back to a1 and retried
        {"type": "label", "id": "lab", "parentId": "a2b", "timestamp": "t", "targetId": "u1", "label": "x"},
    ]
    path = tmp_path / "branched.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines))
    transcript = load_transcript(path)
    assert transcript.diagnostics == []
    assert transcript.leaf_id == "lab"
    assert [e.id for e in transcript.leaf_path()] == ["u1", "a1", "u2b", "a2b", "lab"]
    assert [e.id for e in transcript.abandoned_entries()] == ["u2", "a2"]
    assert [e.id for e in transcript.path_to("a2")] == ["u1", "a1", "u2", "a2"]


# ---------------------------------------------------------------- migration, in memory only


def test_v1_migration_in_memory_keeps_file_bytes_and_maps_first_kept_index(tmp_path: Path) -> None:
    lines = [
        {
            "type": "session",
            "id": "v1-session",
            "timestamp": "t",
            "cwd": "/w",
            "provider": "anthropic",
            "modelId": "m",
            "thinkingLevel": "off",
        },  # index 0
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "one"}},  # 1
        {
            "type": "message",
            "timestamp": "t",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "two"}], "stopReason": "stop"},
        },  # 2
        {"type": "thinking_level_change", "timestamp": "t", "thinkingLevel": "high"},  # 3
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "three"}},  # 4
        {"type": "compaction", "timestamp": "t", "summary": "S", "firstKeptEntryIndex": 4, "tokensBefore": 10},
        {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "after"}},
    ]
    path = tmp_path / "v1.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in lines))
    before = file_sha256(path)
    data_before = path.read_bytes()

    transcript = load_transcript(path)

    assert file_sha256(path) == before and path.read_bytes() == data_before
    assert transcript.source_version == 1 and transcript.header.version is None
    assert transcript.diagnostics == []
    ids = [e.id for e in transcript.entries]
    assert ids == ["l2", "l3", "l4", "l5", "l6", "l7"]  # ids derived from the line
    assert [e.parent_id for e in transcript.entries] == [None, "l2", "l3", "l4", "l5", "l6"]
    compaction = transcript.by_id["l6"]
    assert isinstance(compaction, CompactionEntry)
    # index 4 of the whole entry array (header = 0) is the user message "three" on line 5
    assert compaction.first_kept_entry_id == "l5"
    assert transcript.by_id["l5"].message.content == "three"


def test_v2_hook_message_becomes_custom(tmp_path: Path) -> None:
    lines = [
        {"type": "session", "version": 2, "id": "v2"},
        {
            "type": "message",
            "id": "h1",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "hookMessage", "customType": "hook", "content": "from a hook", "display": True},
        },
    ]
    data = b"".join(orjson.dumps(o) + b"\n" for o in lines)
    transcript = loads_transcript(data)
    assert transcript.source_version == 2
    message = transcript.by_id["h1"].message
    assert isinstance(message, CustomMessage)
    assert message.content == "from a hook" and message.custom_type == "hook"
    assert b"hookMessage" in data  # the input bytes are untouched


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("name", "compaction_line", "index", "kept_id", "kept_role"),
    [
        ("pi-before-compaction.jsonl", 360, 293, "l294", "user"),
        ("pi-before-compaction.jsonl", 629, 551, "l552", "user"),
        ("pi-compact.jsonl", 670, 573, "l574", "assistant"),
        ("pi-session.jsonl", 463, 355, "l356", "assistant"),
    ],
)
def test_real_first_kept_entry_index_maps_to_a_cut_point(
    shared_data: Path, name: str, compaction_line: int, index: int, kept_id: str, kept_role: str
) -> None:
    """Header = index 0, so index k is the entry on line k+1 (no blank lines before it). The kept
    entry is a user/assistant message, as pi's cut rule requires (never a toolResult), which
    confirms the indexing: one entry later would be a toolResult in pi-compact.jsonl."""
    path = shared_data / "openclaw-fixtures" / name
    before = file_sha256(path)
    transcript = load_transcript(path)
    compaction = transcript.by_id[f"l{compaction_line}"]
    assert isinstance(compaction, CompactionEntry)
    assert compaction.model_extra["firstKeptEntryIndex"] == index
    assert compaction.first_kept_entry_id == kept_id
    assert transcript.by_id[kept_id].message.role == kept_role
    assert file_sha256(path) == before


def _calls(*calls: tuple[str, str, dict]) -> AssistantMessage:
    """An assistant message of tool calls (id, name, arguments)."""
    content = [{"type": "toolCall", "id": i, "name": name, "arguments": args} for i, name, args in calls]
    return AssistantMessage.model_validate({"role": "assistant", "content": content})


def _json_result(call_id: str, text: str) -> ToolResultMessage:
    fields = {"toolCallId": call_id, "toolName": "x", "content": [{"type": "text", "text": text}], "isError": False}
    return ToolResultMessage.model_validate({"role": "toolResult", **fields})


def test_identifier_text_reads_tool_call_arguments_and_json_results_value_by_value() -> None:
    """What the model reads of a call is JSON (`message_text`); the identifier scans read each key
    and value as written, where JSON's escapes and separators would glue them together; a text
    that only looks like JSON, and a message without either, read as `message_text` does."""
    from replaylab.compaction.identifiers import extract_identifiers, extract_openclaw_identifiers

    call = _calls(
        ("c1", "fetch", {"url": "https://x.org/a", "prompt": "What?"}),
        ("c2", "bash", {"command": "cd /srv/app\ngit log", "n": 10, "dry": False}),
    )
    assert '"url":"https://x.org/a","prompt"' in message_text(call)
    assert identifier_text(call).splitlines() == [
        "fetch", "url", "https://x.org/a", "prompt", "What?", "bash", "command", "cd /srv/app", "git log", "n", "10", "dry", "false"
    ]  # fmt: skip
    assert extract_identifiers(identifier_text(call)) == ["https://x.org/a", "/srv/app"]
    result = _json_result("c1", '{"url":"https://x.org/b","path":"C:\\\\srv\\\\app.yml","id":"a1b2c3d4e5f6"}')
    assert extract_openclaw_identifiers(message_text(result)) == [
        'https://x.org/b","path":"C:\\\\srv\\\\app.yml","id":"a1b2c3d4e5f6"}'
    ]
    assert extract_identifiers(identifier_text(result)) == ["https://x.org/b", "C:\\srv\\app.yml", "a1b2c3d4e5f6"]
    for plain in ("{not json https://x.org/c}", "see https://x.org/d"):
        message = UserMessage.model_validate({"role": "user", "content": plain})
        assert identifier_text(message) == message_text(message) == plain


def test_identifier_text_holds_no_value_under_a_secret_name() -> None:
    """As JSON, the scrubber masks a secret beside its name; read value by value it would not know
    the name: such values are left out, in a call's arguments as in a JSON result."""
    from replaylab.compaction.identifiers import extract_openclaw_identifiers

    call = _calls(
        ("c", "login", {"user": "bob", "api_token": "deadbeefcafe1234", "auth": {"password": "0badc0ffee42"}})
    )
    result = _json_result("c", '{"session":{"access_token":"feedface99887766"},"id":"a1b2c3d4e5f6"}')
    for message, kept in ((call, []), (result, ["a1b2c3d4e5f6"])):
        text = identifier_text(message)
        assert not any(s in text for s in ("deadbeefcafe1234", "0badc0ffee42", "feedface99887766")), text
        assert extract_openclaw_identifiers(text) == kept
