"""A recorded call whose arguments cannot be read, a tool result whose content is a string, and
messages pi's own estimate cannot count.

- A `toolCall` item with an id whose `arguments` is no object (a provider's raw JSON string, an
  array, null) is kept as written (`transcript.opaque_content`) and records its call: pi pairs a
  result with it by id (`transformMessages`), OpenClaw too (`readToolCall`). The classifier judges
  it mutating, unless the suite forces its tool safe: what it did cannot be read from its arguments.
- OpenClaw's JSONL reader makes a tool result's string content one text block
  (`normalizeLoadedFileEntry`), type and all.
- An item pi's `estimateTokens` throws or gives NaN on gets a `pi-unestimable` warning.
tests/oracles/test_opaque_content_conformance.py checks the pairing against the agents' own code."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.agents.openclaw_2026_9_6.pairing import reset_kept_entries
from replaylab.safety.classify import UNREADABLE_ARGUMENTS, ToolClassifier
from replaylab.safety.ledger import build_ledger
from replaylab.safety.overrides import ClassificationOverrides
from replaylab.transcript import loads_transcript
from replaylab.transcript.model import UnreadableArguments
from replaylab.transcript.pairing import message_calls, pair_path, pairing_record

PROFILES = {"pi@0.73.1": 3, "pi@1.6.0": 3, "openclaw@2026.9.6": 4}
ODD_ARGUMENTS = [("string", '{"path":"a"}'), ("array", ["a"]), ("null", None), ("number", 3)]


def _session(version: int, call: dict[str, Any], *extra: Any, result: Any = None) -> bytes:
    header = {"type": "session", "version": version, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    content = [{"type": "text", "text": "body"}] if result is None else result
    return linear_jsonl(
        header,
        message("user", "read a"),
        message("assistant", [call, *extra], stopReason="toolUse"),
        message("toolResult", content, toolCallId="c1", toolName=call.get("name", "read"), isError=False),
        message("assistant", [{"type": "text", "text": "done"}], stopReason="stop"),
    )


def _call(arguments: Any, name: str = "read") -> dict[str, Any]:
    return {"type": "toolCall", "id": "c1", "name": name, "arguments": arguments}


@pytest.mark.parametrize("version", sorted(set(PROFILES.values())))
@pytest.mark.parametrize("label,arguments", ODD_ARGUMENTS, ids=[n for n, _ in ODD_ARGUMENTS])
def test_a_call_whose_arguments_are_no_object_is_paired_with_its_result(
    label: str, arguments: Any, version: int
) -> None:
    """Before, the item recorded no call: its result was an `orphan-tool-result` error."""
    data = _session(version, _call(arguments))
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        assert [(d.code, d.severity, d.line, d.entry_id, d.field) for d in transcript.diagnostics] == [
            ("opaque-content", "warning", 3, "e2", "message.content.0.arguments")
        ], (label, lazy)
        assert "paired with its result by id" in transcript.diagnostics[0].message
        assert "judged mutating" in transcript.diagnostics[0].message
        path = transcript.leaf_path()
        [call] = message_calls(path[1].message)
        assert (call.id, call.name, type(call.arguments)) == ("c1", "read", UnreadableArguments)
        assert call.arguments.written == arguments and not call.arguments
        assert pairing_record(path[1].message) == (0, ("c1",), False)
        pairing = pair_path((e.id, e.message) for e in path)
        [paired] = pairing.calls
        assert (paired.entry, paired.result_entry, paired.unread) == ("e2", "e3", False)


def test_a_call_with_unreadable_arguments_is_an_event_though_its_tool_reads() -> None:
    classifier = ToolClassifier()
    readable = build_ledger(loads_transcript(_session(3, _call({"path": "a"}))), classifier)
    assert readable.events == []
    ledger = build_ledger(loads_transcript(_session(3, _call('{"path":"a"}'))), classifier)
    [event] = ledger.events
    assert (event.entry_id, event.tool, event.rule, event.result_entry_id) == ("e2", "read", UNREADABLE_ARGUMENTS, "e3")
    assert event.reason.startswith("its arguments cannot be read (a JSON string, not an object): judged mutating")


def test_the_classifier_fails_closed_on_unreadable_arguments() -> None:
    unreadable = UnreadableArguments('{"command":"ls"}', "a JSON string, not an object")
    classifier = ToolClassifier()
    assert classifier.explain("read", {"path": "a"}).mutating is False
    assert classifier.explain("read", unreadable).rule == UNREADABLE_ARGUMENTS
    assert classifier.is_mutating("read", unreadable)
    shell = classifier.explain("bash", unreadable)  # mutating without them already: its own rule, said why
    assert shell.mutating and shell.reason.endswith("its arguments cannot be read (a JSON string, not an object)")
    forced = classifier.with_overrides(ClassificationOverrides(safe=["read"]))
    assert not forced.explain("read", unreadable).mutating  # the suite's word on the tool, whatever it was given


def test_openclaws_reset_pairs_the_result_with_such_a_call() -> None:
    path = loads_transcript(_session(4, _call('{"path":"a"}'))).leaf_path()
    assert [e.id for e in reset_kept_entries(path)] == ["e1", "e2", "e3", "e4"]


def test_openclaw_holds_a_string_tool_result_as_one_text_block() -> None:
    """Its JSONL reader's block has a `type`: replaylab's left it out of the dump before."""
    data = _session(4, _call({"path": "a"}), result="plain output")
    window = rules_of("openclaw@2026.9.6").window(loads_transcript(data).leaf_path())
    assert [w.entry_id for w in window] == ["e1", "e2", "e3", "e4"]
    assert window[2].message.model_dump(by_alias=True, exclude_unset=True)["content"] == [
        {"type": "text", "text": "plain output"}
    ]


#: (label, role the item is in, the item, the field pi's estimate fails on)
UNESTIMABLE = [
    ("assistant-text-without-text", "assistant", {"type": "text"}, "message.content.1.text"),
    ("assistant-text-a-number", "assistant", {"type": "text", "text": 5}, "message.content.1.text"),
    ("assistant-thinking-without-thinking", "assistant", {"type": "thinking"}, "message.content.1.thinking"),
    ("assistant-null", "assistant", None, "message.content.1"),
    ("assistant-call-without-name", "assistant", {"type": "toolCall", "id": "c9"}, "message.content.1.name"),
    ("user-null", "user", None, "message.content.1"),
    ("user-text-a-number", "user", {"type": "text", "text": 5}, "message.content.1.text"),
    ("result-null", "toolResult", None, "message.content.1"),
]


def _with_item(role: str, item: Any) -> bytes:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    odd = {role: [item]}
    return linear_jsonl(
        header,
        message("user", [{"type": "text", "text": "read a"}, *odd.get("user", [])]),
        message("assistant", [_call({"path": "a"}), *odd.get("assistant", [])], stopReason="toolUse"),
        message(
            "toolResult",
            [{"type": "text", "text": "b"}, *odd.get("toolResult", [])],
            toolCallId="c1",
            toolName="read",
            isError=False,
        ),  # fmt: skip
        message("assistant", [{"type": "text", "text": "done"}], stopReason="stop"),
    )


@pytest.mark.parametrize("label,role,item,field", UNESTIMABLE, ids=[u[0] for u in UNESTIMABLE])
def test_an_item_pis_estimate_fails_on_is_named(label: str, role: str, item: Any, field: str) -> None:
    """Before, replaylab counted it as 0 and said only that the item was kept."""
    data = _with_item(role, item)
    at = {"user": "e1", "assistant": "e2", "toolResult": "e3"}[role]
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        found = [
            (d.severity, d.line, d.entry_id, d.field) for d in transcript.diagnostics if d.code == "pi-unestimable"
        ]
        assert found == [("warning", int(at[1:]) + 1, at, field)], (label, lazy)
        [note] = [d for d in transcript.diagnostics if d.code == "pi-unestimable"]
        assert note.message.startswith("pi cannot estimate this message") and "compaction would fail" in note.message


@pytest.mark.parametrize(
    "role,item",
    [("user", 7), ("user", {"type": "text"}), ("toolResult", {"type": "image"}), ("assistant", "plain")],
)
def test_an_item_pi_counts_gets_no_such_warning(role: str, item: Any) -> None:
    transcript = loads_transcript(_with_item(role, item))
    assert [d.code for d in transcript.diagnostics] == ["opaque-content"]


def test_a_well_formed_session_gets_none_and_counts_as_before() -> None:
    data = _with_item("user", {"type": "text", "text": "fine"})
    transcript = loads_transcript(data)
    assert transcript.diagnostics == []
    rules = rules_of("pi@0.73.1")
    assert [rules.tokens(w.message) for w in rules.window(transcript.leaf_path())] == [3, 4, 1, 1]
    assert orjson.loads(data.splitlines()[1])["message"]["content"][1] == {"type": "text", "text": "fine"}


def test_a_call_written_without_arguments_is_judged_as_one_whose_arguments_cannot_be_read() -> None:
    """pi's estimate throws on it, OpenClaw's repair drops it: before, it was read as `{}` and a
    reading tool's call passed as a read. Still written back without arguments."""
    data = _session(3, {"type": "toolCall", "id": "c1", "name": "read"})
    transcript = loads_transcript(data)
    [call] = message_calls(transcript.leaf_path()[1].message)
    assert type(call.arguments) is UnreadableArguments and call.arguments.why == "none are written"
    [event] = build_ledger(transcript, ToolClassifier()).events
    assert event.rule == UNREADABLE_ARGUMENTS
    assert (
        "arguments" not in transcript.leaf_path()[1].message.model_dump(by_alias=True, exclude_unset=True)["content"][0]
    )


@pytest.mark.parametrize("lazy", [False, True])
def test_a_call_written_without_arguments_is_warned_about_where_it_is_read(lazy: bool) -> None:
    """The message validates (the block model reads the missing arguments), so before only the
    compaction's refusal said so, naming no line."""
    data = _session(3, _call({"path": "a"}), {"type": "toolCall", "id": "c2", "name": "write"})
    transcript = loads_transcript(data, lazy=lazy)
    [note] = [d for d in transcript.diagnostics if d.code != "missing-tool-result"]  # c2 has none
    assert (note.code, note.severity, note.line, note.entry_id) == ("pi-unestimable", "warning", 3, "e2")
    assert note.field == "message.content.1.arguments" and "JSON.stringify(arguments)" in note.message
