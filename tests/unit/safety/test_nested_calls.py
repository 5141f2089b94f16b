"""A call judged by the calls a session records it making (`safety.nested_calls`): pi 1.6.0's
`nestedCalls` on the call's tool result, each nested call classified by the same classifier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builders.pi16_codemode import codemode_turn, extension_turn, pi16_session
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.nested_calls import nested_records, recorded_nested_calls
from replaylab.transcript import load_transcript
from replaylab.transcript.model import MessageEntry, ToolCallBlock

CODE = "const notes = await tools.read({path: 'notes.txt'}); return notes"


def _judged(tmp_path: Path, session: Any, call_id: str, classifier: ToolClassifier | None = None):
    classifier = classifier or ToolClassifier()
    path = load_transcript(session.write(tmp_path / "s.jsonl")).leaf_path()
    records = nested_records((e.id, e.message) for e in path if isinstance(e, MessageEntry))
    call = next(
        b
        for e in path
        if isinstance(e, MessageEntry)
        for b in getattr(e.message, "content", [])
        if getattr(b, "id", "") == call_id
    )
    assert isinstance(call, ToolCallBlock)
    return records.judge(call.name, call.id, classifier.explain(call.name, call.arguments), classifier)


@pytest.mark.parametrize(
    ("nested", "models", "tool_class", "why"),
    [
        ([("read", {"path": "notes.txt"}), ("grep", {"pattern": "bank", "path": "."})], 0, "read", "only reads"),
        ([], 0, "read", "called no tool"),  # pi writes no `nestedCalls`: the script computed only
        ([], 2, "read", "called no tool"),  # `models.*` rows: non-LLM models answer the script
        ([("read", {"path": "a"}), ("write", {"path": "b", "content": "x"})], 0, "exec", "`write`"),
        ([("bash", {"command": "rm -rf build"})], 0, "exec", "`bash`"),
        ([("read", {"path": "a"}), ("read", None)], 0, "exec", "incomplete"),  # arguments over 8 KiB
    ],
)
def test_a_codemode_call_is_judged_by_the_calls_its_result_records(
    tmp_path: Path, nested: list, models: int, tool_class: str, why: str
) -> None:
    session = pi16_session()
    session.user("check the notes")
    _, _, call_id = codemode_turn(session, CODE, nested, models=models)
    judged = _judged(tmp_path, session, call_id)
    assert (judged.tool_class, judged.mutating) == (tool_class, tool_class != "read"), judged
    assert why in judged.reason, judged


def test_a_record_pi_marks_incomplete_or_cannot_be_read_mutates(tmp_path: Path) -> None:
    """Past `NESTED_CALL_LIMITS` pi drops calls and marks the record `complete: false`, though the
    calls it kept all read; a record of another shape says nothing that can be trusted."""
    session = pi16_session()
    _, incomplete, first = codemode_turn(session, CODE, [("read", {"path": "a"})], complete=False)
    _, broken, second = codemode_turn(session, CODE, [("read", {"path": "a"})])
    session.lines[-1]["message"]["nestedCalls"] = {"calls": "read a"}
    for call_id, why in ((first, "incomplete"), (second, "cannot be read")):
        judged = _judged(tmp_path, session, call_id)
        assert judged.mutating and why in judged.reason, judged


def test_a_codemode_result_that_lost_its_record_mutates(tmp_path: Path) -> None:
    """codemode's own rows (`details.calls`) name a tool the script called, yet no `nestedCalls`
    is on the result (a `message_end` handler replaced the message): the record was lost. So are
    rows that are missing altogether (a tool that threw: pi's error result has empty details)."""
    session = pi16_session()
    _, _, lost = codemode_turn(session, CODE, [("write", {"path": "b", "content": "x"})])
    del session.lines[-1]["message"]["nestedCalls"]
    _, _, bare = codemode_turn(session, "return 1", [])
    session.lines[-1]["message"]["details"] = {}
    for call_id in (lost, bare):
        judged = _judged(tmp_path, session, call_id)
        assert judged.mutating and "record was lost" in judged.reason, judged


def test_another_tools_nested_calls_only_add_a_change(tmp_path: Path) -> None:
    """A tool other than codemode that called tools through `ctx.executeTool()` keeps its own class
    when it mutates (its code may write whatever it called), and mutates when a nested call does."""
    session = pi16_session()
    _, _, quiet = extension_turn(session, "lookup_notes", {"topic": "bank"}, [("write", {"path": "b", "content": "x"})])
    _, _, deploy = extension_turn(session, "deploy", {"env": "prod"}, [("read", {"path": "cfg"})])
    assert ToolClassifier().explain("lookup_notes", {"topic": "bank"}).tool_class == "read"
    judged = _judged(tmp_path, session, quiet)
    assert judged.tool_class == "exec" and "`write`" in judged.reason
    judged = _judged(tmp_path, session, deploy)
    assert judged.mutating and "nestedCalls" not in judged.reason


def test_a_nested_call_is_classified_by_the_items_classifier(tmp_path: Path) -> None:
    """The suite's classification applies to nested calls as to the model's own: a tool forced
    safe reads there too, one declared a sub-agent mutates (no result links its transcript)."""
    session = pi16_session()
    _, _, call_id = codemode_turn(session, CODE, [("post_note", {"text": "hi"})])
    assert _judged(tmp_path, session, call_id).mutating
    assert not _judged(tmp_path, session, call_id, ToolClassifier({"post_note": "read"})).mutating
    assert _judged(tmp_path, session, call_id, ToolClassifier({"post_note": "subagent"})).mutating


def test_an_unanswered_codemode_call_of_a_reused_id_mutates(tmp_path: Path) -> None:
    """A provider may number calls afresh: a codemode call whose id an earlier, read-only one had,
    and that no result answers yet, is not judged by the earlier one's record."""
    session = pi16_session()
    _, _, call_id = codemode_turn(session, CODE, [("read", {"path": "a"})])
    session.raw(
        {
            "message": {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": call_id, "name": "codemode", "arguments": {"code": "x"}}],
                "stopReason": "toolUse",
                "timestamp": 1,
            }
        }
    )
    judged = _judged(tmp_path, session, call_id)
    assert judged.mutating and "no result" in judged.reason, judged


def test_recorded_nested_calls_are_read_as_pi_reads_them(tmp_path: Path) -> None:
    session = pi16_session()
    codemode_turn(session, CODE, [("read", {"path": "a"}), ("write", None)])
    path = load_transcript(session.write(tmp_path / "s.jsonl")).leaf_path()
    assert list(recorded_nested_calls(path[-1].message)) == [("read", {"path": "a"}), ("write", None)]
    assert list(recorded_nested_calls(path[-2].message)) == []
