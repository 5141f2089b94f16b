"""How Claude Code links its records, as the importer reads them: a rewind leaves its old branch
in the file, which the importer keeps off the leaf path (as pi keeps its own branches), every other
session stays linear, and a compaction keeps the records its boundary preserves."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from builders.claude_code_logs import SESSION, Log
from replaylab.checks.recorded import audit_recorded_compactions
from replaylab.importers import import_sessions, write_session
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import build_ledger
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import (
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    ToolResultMessage,
    UserMessage,
    message_text,
)


def _import(path: Path, out: Path):
    (session,) = import_sessions("claude-code", path)
    written, _ = write_session(session, out)
    return session, load_transcript(written)


def _texts(entries) -> list[str]:
    """What each message of `entries` says: its text, or `call NAME` / `result ID`."""
    said = []
    for entry in entries:
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, ToolResultMessage):
            said.append(f"result {message.tool_call_id}")
        elif isinstance(message, AssistantMessage) and message.tool_calls():
            said.extend(f"call {c.name}" for c in message.tool_calls())
        elif isinstance(message, (AssistantMessage, UserMessage)):
            said.append(message_text(message))
    return said


def _is_linear(session) -> bool:
    ids = [e["id"] for e in session.entries if e["type"] != "session"]
    parents = [e["parentId"] for e in session.entries if e["type"] != "session"]
    return parents == [None, *ids[:-1]]


#: the leaf path of `_rewound`: the branch the rewind started
DRAFTED = [
    "set up the project",
    "Ready.",
    "no: only draft the welcome email",
    "call Write",
    "result toolu_B1",
    "Drafted, not sent.",
]


def _rewound(log: Log) -> None:
    """A prompt that sends an email, its answer, and a rewind to before it that only drafts one."""
    log.user("set up the project")
    ready = log.say("Ready.")
    log.user("send the welcome email to the new customer")
    log.call("toolu_A1", "Bash", {"command": "mail -s welcome customer@example.com < welcome.txt"})
    log.result("toolu_A1", "sent")
    log.say("Sent.")
    log.user("no: only draft the welcome email", parent=ready["uuid"])
    log.call("toolu_B1", "Write", {"file_path": "welcome-draft.txt", "content": "Welcome!"})
    log.result("toolu_B1", "written")
    log.say("Drafted, not sent.")


def test_a_rewinds_old_branch_is_kept_off_the_leaf_path(tmp_path: Path) -> None:
    log = Log(version="2.1.39")
    _rewound(log)
    session, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    assert _texts(transcript.path_to()) == DRAFTED
    off = transcript.abandoned_entries()
    assert _texts(off) == ["send the welcome email to the new customer", "call Bash", "result toolu_A1", "Sent."]
    fork = next(e for e in transcript.path_to() if _texts([e]) == ["Ready."])
    assert off[0].parent_id == fork.id
    assert [e.parent_id for e in off[1:]] == [e.id for e in off[:-1]]
    # the call the rewind took back did run: it stays a call of the file, with its result
    assert session.tool_call_count() == 2
    assert any("a rewind left 4 records (the first at line 3)" in note for note in session.notes)


def test_a_rewind_before_a_compaction_whose_logical_parent_is_gone_is_found(tmp_path: Path) -> None:
    log = Log(version="2.1.39")
    _rewound(log)
    log.add(
        "system",
        None,
        root=True,
        subtype="compact_boundary",
        logicalParentUuid="not-in-this-file",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 150000},
    )
    log.user("This session is being continued from a previous conversation. Summary: a draft.", isCompactSummary=True)
    log.user("now proofread it")
    log.say("Proofread.")
    _, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    on_path = _texts(transcript.path_to())
    assert on_path[:6] == DRAFTED
    assert on_path[-2:] == ["now proofread it", "Proofread."]
    assert [e.type for e in transcript.path_to()].count("compaction") == 1
    assert _texts(transcript.abandoned_entries())[0] == "send the welcome email to the new customer"


def test_a_rewind_before_a_compaction_that_relinks_its_last_record_after_the_summary_is_found(tmp_path: Path) -> None:
    """The record a boundary preserves last is written again after the summary, hung from it, and
    the boundary's `logicalParentUuid` names that copy: the walk back from it meets the boundary
    again. What came before the boundary is then its newest leaf before it, and the rewind's old
    branch stays off the leaf path."""
    log = Log(version="2.1.332")
    _rewound(log)
    log.user("and a reminder for tomorrow")
    kept = [log.say("Reminder drafted.")["uuid"]]
    meta = {"trigger": "auto", "preTokens": 150_000, "preservedMessages": {"anchorUuid": "s", "uuids": kept}}
    boundary = log.add(
        "system", None, root=True, subtype="compact_boundary", logicalParentUuid="relinked", compactMetadata=meta
    )
    log.user("Summary: a draft and a reminder.", isCompactSummary=True)
    log.records.append({**log.records[-3], "uuid": "relinked", "parentUuid": log.records[-1]["uuid"]})
    log.last[False] = "relinked"
    log.user("now proofread it")
    log.say("Proofread.")
    assert log.records.index(boundary) < len(log.records) - 3
    session, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    on_path = _texts(transcript.path_to())
    assert on_path[:8] == [*DRAFTED, "and a reminder for tomorrow", "Reminder drafted."]
    assert on_path[-2:] == ["now proofread it", "Proofread."]
    assert _texts(transcript.abandoned_entries())[0] == "send the welcome email to the new customer"
    assert any("abandoned branch" in note for note in session.notes)


def test_parallel_calls_written_as_siblings_stay_one_linear_conversation(tmp_path: Path) -> None:
    """2.0.x/2.1.x: the records of one response are siblings, a `progress` record sits between
    them, each result hangs from its own call, and the next record from the last result."""
    log = Log(version="2.1.39")
    prompt = log.user("read both configs")
    first = log.call("toolu_P1", "Read", {"file_path": "a.toml"}, message_id="msg_parallel")
    tick = log.add("progress", None, data={"type": "hook_progress"})
    second = log.call("toolu_P2", "Read", {"file_path": "b.toml"}, message_id="msg_parallel", parent=tick["uuid"])
    log.result("toolu_P1", "a = 1", parent=first["uuid"])
    log.result("toolu_P2", "b = 2", parent=second["uuid"])
    log.say("a is 1, b is 2.")
    log.user("thanks")
    assert prompt["parentUuid"] is None
    session, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    assert _is_linear(session)
    assert transcript.abandoned_entries() == []
    assert _texts(transcript.path_to()) == [
        "read both configs",
        "call Read",
        "call Read",
        "result toolu_P1",
        "result toolu_P2",
        "a is 1, b is 2.",
        "thanks",
    ]
    assert not any("rewind" in note for note in session.notes)


def test_an_interrupted_turn_whose_records_share_an_instant_is_not_a_rewind(tmp_path: Path) -> None:
    """The refused calls' results and the interruption are written at one instant, and the local
    commands after hang from the interruption: the newest leaf is the last record."""
    log = Log(version="2.1.39")
    log.user("start the server")
    first = log.call("toolu_I1", "Bash", {"command": "mix phx.server"}, message_id="msg_i")
    second = log.call("toolu_I2", "Bash", {"command": "mix deps.get"}, message_id="msg_i")
    log.result("toolu_I1", "The user doesn't want to proceed", parent=first["uuid"], at=50)
    log.result("toolu_I2", "The user doesn't want to proceed", parent=second["uuid"], at=50)
    log.user("[Request interrupted by user for tool use]", at=50)
    log.add("system", None, subtype="local_command", content="<command-name>/exit</command-name>")
    session, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    assert _is_linear(session)
    assert transcript.abandoned_entries() == []


def test_a_file_whose_newest_leaf_is_not_its_last_record_stays_linear(tmp_path: Path) -> None:
    """No rebuild to trust: the old branch was written last, with the older times."""
    log = Log(version="2.1.39")
    log.user("set up the project")
    ready = log.say("Ready.")
    log.user("only draft the welcome email", at=40)
    log.say("Drafted.", at=41)
    log.user("send the welcome email", parent=ready["uuid"], at=10)
    log.say("Sent.", at=11)
    session, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    assert _is_linear(session)
    assert transcript.abandoned_entries() == []
    assert not any("rewind" in note for note in session.notes)


def _rewound_to_a_missing_parent(gap: int) -> Log:
    """A rewind whose new prompt names a parent that is not in the file, `gap` seconds after the
    record the rewind went back to."""
    log = Log(version="2.1.39")
    log.user("set up the project", at=5)
    log.say("Ready.", at=10)
    log.user("send the welcome email", at=20)
    log.say("Sent.", at=21)
    log.user("only draft it", parent="lost-record", at=10 + gap)
    log.say("Drafted.", at=60)
    return log


def test_a_parent_missing_from_the_file_is_the_record_at_most_five_seconds_older(tmp_path: Path) -> None:
    """Claude Code's fallback (`gcY`): the walk goes on from the newest record at most 5 s older."""
    log = _rewound_to_a_missing_parent(gap=2)
    _, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "near")
    assert _texts(transcript.path_to()) == ["set up the project", "Ready.", "only draft it", "Drafted."]
    assert _texts(transcript.abandoned_entries()) == ["send the welcome email", "Sent."]

    far = _rewound_to_a_missing_parent(gap=6)  # 6 s after "Ready.": no record close enough, no rebuild
    (tmp_path / "far").mkdir()
    session, transcript = _import(far.write(tmp_path / "far" / f"{SESSION}.jsonl"), tmp_path / "far-out")
    assert _is_linear(session) and transcript.abandoned_entries() == []


def _listed(kept: list[str]) -> dict:
    return {"preservedMessages": {"anchorUuid": "summary", "uuids": kept}}


def _segment(kept: list[str]) -> dict:
    return {"preservedSegment": {"headUuid": kept[0], "anchorUuid": "summary", "tailUuid": kept[-1]}}


def _broken_segment(kept: list[str]) -> dict:
    return {"preservedSegment": {"headUuid": "not-in-this-file", "anchorUuid": "summary", "tailUuid": kept[-1]}}


def _compacted_keeping(folder: Path, metadata: Callable[[list[str]], dict]):
    """Two writes, a compact boundary whose `metadata` may preserve the second turn, its summary
    and a turn after it: the imported transcript, its compaction entry and the calls its
    recorded audit says were dropped."""
    log = Log(version="2.1.332")
    log.user("clean the build")
    log.call("toolu_W1", "Bash", {"command": "rm -rf build"})
    log.result("toolu_W1", "")
    log.say("Cleaned.")
    kept = [log.user("now drop the cache")["uuid"]]
    kept.append(log.call("toolu_W2", "Bash", {"command": "rm -rf .cache"})["uuid"])
    kept.append(log.result("toolu_W2", "")["uuid"])
    kept.append(log.say("Dropped.")["uuid"])
    meta = {"trigger": "manual", "preTokens": 90_000, **metadata(kept)}
    log.add("system", None, root=True, subtype="compact_boundary", logicalParentUuid=kept[-1], compactMetadata=meta)
    log.user("Summary: the build was cleaned.", isCompactSummary=True)
    log.user("what is left?")
    log.say("Nothing.")
    folder.mkdir()
    _, transcript = _import(log.write(folder / f"{SESSION}.jsonl"), folder / "out")
    classifier = ToolClassifier({})
    audits = audit_recorded_compactions(transcript, classifier, build_ledger(transcript, classifier))
    (compaction,) = [e for e in transcript.path_to() if isinstance(e, CompactionEntry)]
    dropped = [d.where.tool_call_id for a in audits for d in a.defects if d.code.value == "RECORDED_MUTATION_DROPPED"]
    return transcript, compaction, dropped


@pytest.mark.parametrize("metadata", [_listed, _segment], ids=["preservedMessages", "preservedSegment"])
def test_a_compaction_keeps_the_records_its_boundary_preserves(tmp_path: Path, metadata) -> None:
    """2.1.x: the records a boundary preserves are relinked after the summary; the write they
    hold is still in the window, so only the earlier one was dropped."""
    transcript, compaction, dropped = _compacted_keeping(tmp_path / "kept", metadata)
    assert dropped == ["toolu_W1"]
    kept_from = transcript.by_id[compaction.first_kept_entry_id]
    assert _texts([kept_from]) == ["now drop the cache"]


def test_a_compaction_whose_segment_cannot_be_walked_keeps_nothing(tmp_path: Path) -> None:
    """As Claude Code, which relinks nothing when the walk from the tail never meets the head."""
    _, compaction, dropped = _compacted_keeping(tmp_path / "broken", _broken_segment)
    assert compaction.first_kept_entry_id == compaction.id
    assert dropped == ["toolu_W1", "toolu_W2"]


def test_a_boundary_without_its_summary_record_is_named_by_file_and_line(tmp_path: Path) -> None:
    """A compaction entry then holds the boundary's own text; the note says where the boundary is,
    also when its record has no uuid (a viewer's stripped fixture)."""
    log = Log(version="2.1.39")
    log.user("draft it")
    log.say("Drafted.")
    boundary = log.add("system", None, subtype="compact_boundary", content="Conversation compacted")
    del boundary["uuid"]
    log.user("now proofread it")
    log.say("Proofread.")
    source = log.write(tmp_path / f"{SESSION}.jsonl")
    (session,) = import_sessions("claude-code", source)
    (note,) = [n for n in session.notes if "compact_boundary" in n]
    assert note.startswith(f"{source}: compact_boundary at line 3 has no isCompactSummary record")
    assert "boundary text only (22 characters)" in note


def test_a_1_0_x_compaction_without_a_boundary_is_a_compaction(tmp_path: Path) -> None:
    """1.0.56 writes no `compact_boundary`: its `insertMessageChain` starts each chain at
    `parentUuid: null`, so the `isCompactSummary` record its compaction puts first is a root in
    the same file. It is the compaction, keeping nothing before it, not a prompt."""
    log = Log(version="1.0.56")
    log.user("fix the flaky test")
    log.say("It races on the clock.")
    log.user(
        "This session is being continued from a previous conversation. Summary: a race.",
        root=True,
        isCompactSummary=True,
    )
    log.user("go on")
    log.say("Fixed.")
    _, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    (compaction,) = [e for e in transcript.path_to() if isinstance(e, CompactionEntry)]
    assert "Summary: a race." in compaction.summary
    assert compaction.first_kept_entry_id == compaction.id
    assert _texts(transcript.path_to())[-2:] == ["go on", "Fixed."]


def test_a_rewind_before_a_1_0_x_compaction_stays_off_the_leaf_path(tmp_path: Path) -> None:
    """1.0.56's summary is a root (`parentUuid: null`): the walk from the leaf goes on from the
    newest leaf before it, as it does at a boundary, so that a branch a rewind left before the
    compaction is still found."""
    log = Log(version="1.0.56")
    log.user("fix the flaky test")
    asked = log.say("Which way?")
    log.user("mock the clock")
    log.say("Mocked.")
    log.user("freeze the clock instead", parent=asked["uuid"])
    log.say("Frozen.")
    log.user("This session is being continued from a previous conversation. Summary: frozen.", root=True, isCompactSummary=True)  # fmt: skip
    log.user("go on")
    log.say("Fixed.")
    session, transcript = _import(log.write(tmp_path / f"{SESSION}.jsonl"), tmp_path / "out")

    assert _texts(transcript.abandoned_entries()) == ["mock the clock", "Mocked."]
    assert _texts(transcript.path_to())[:4] == [
        "fix the flaky test",
        "Which way?",
        "freeze the clock instead",
        "Frozen.",
    ]
