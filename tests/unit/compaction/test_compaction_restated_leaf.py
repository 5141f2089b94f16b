"""A compaction right after safeguard's, with nothing new but what it restated, is refused where the
agent refuses after a compaction leaf (its `prepareCompaction`), as the recovery chain and the later
points ask it (forced past replaylab's own guard); the COMPACTION_LOOP recheck reads "nothing new"
the same way (`compaction.restated_leaf`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders.transcripts import TOOL_CLASSES, helpdesk_session
from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.job import Job
from replaylab.compaction.restated_leaf import compaction_still_leaf
from replaylab.compactors.recheck import loop_defects
from replaylab.defects import Code
from replaylab.transcript import TranscriptWriter, load_transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import CompactionEntry
from replaylab.upstream.profiles import profile_named

AGENTS = ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"]
SMALL = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=800, tool_classes=TOOL_CLASSES)


def _first(tmp_path: Path, agent: str) -> tuple[TranscriptWriter, ItemMemo, CompactParams]:
    """safeguard's compaction of a session with mutating calls, as the pipeline makes it (the
    agent's rules, forced past replaylab's own double-compaction guard): its leaf restates."""
    recording = helpdesk_session(8).write(tmp_path / "rec.jsonl")
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    memo = ItemMemo(rules=rules_of(agent))
    params = CompactParams(session_file=str(writer.path), force_compact=True, **SMALL)
    first = compact(params, writer=writer, memo=memo)
    assert first.success and first.leaf_id != first.compaction_event_id, first.error
    return writer, memo, params


def _user(writer: TranscriptWriter, parent: str) -> str:
    writer.append(
        {
            "type": "message",
            "id": "new-ask",
            "parentId": parent,
            "timestamp": "2026-04-10T11:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "and the refund? " + "q" * 3_000}]},
        }
    )
    return "new-ask"


@pytest.mark.parametrize("agent", AGENTS)
def test_a_compaction_right_after_safeguard_is_refused_as_after_a_compaction_leaf(tmp_path, agent):
    writer, memo, params = _first(tmp_path, agent)
    path = writer.transcript().leaf_path()
    assert not isinstance(path[-1], CompactionEntry)  # the leaf is a restated copy, not the compaction
    again = compact(params, writer=writer, memo=memo)
    assert not again.success and again.failure == "agent_refuses", again.error
    assert "followed only by the entries it restated" in again.error
    assert writer.transcript().leaf_path()[-1].id == path[-1].id  # nothing appended


@pytest.mark.parametrize("agent", AGENTS)
def test_anything_new_after_the_compaction_lets_the_agent_compact_again(tmp_path, agent):
    writer, memo, params = _first(tmp_path, agent)
    _user(writer, writer.transcript().leaf_id)
    again = compact(params, writer=writer, memo=memo)
    assert again.failure != "agent_refuses", again.error


def test_a_profile_without_the_rule_is_not_refused(tmp_path, monkeypatch):
    """The reading applies only where the agent's code refuses after a compaction leaf."""
    writer, memo, params = _first(tmp_path, "pi@0.73.1")
    without = profile_named("pi@0.73.1").__class__(
        **{**vars(profile_named("pi@0.73.1")), "refuses_after_compaction_leaf": False}
    )
    monkeypatch.setattr(Job, "profile", property(lambda self: without))
    again = compact(params, writer=writer, memo=memo)
    assert again.failure != "agent_refuses", again.error


def test_the_recheck_and_the_guard_read_nothing_new_alike(tmp_path):
    """COMPACTION_LOOP is found exactly where the guard would refuse; the recheck also passes over
    entries that show the model nothing (the guard does not: the agent's leaf moved)."""
    writer, memo, _ = _first(tmp_path, "pi@0.73.1")
    path = writer.transcript().leaf_path()
    index = compaction_still_leaf(path, memo)
    assert index is not None and isinstance(path[index], CompactionEntry)
    looped = CompactionEntry.model_validate(
        {
            "type": "compaction",
            "id": "again",
            "parentId": path[-1].id,
            "timestamp": "2026-04-10T12:00:00.000Z",
            "summary": "s",
            "firstKeptEntryId": "again",
            "tokensBefore": 1,
        }
    )
    (defect,) = loop_defects([*path, looped], memo)
    assert defect.code == Code.COMPACTION_LOOP and defect.actual == f"{path[index].id} → again"
    leaf = _user(writer, path[-1].id)
    path = load_transcript(writer.path).path_to(leaf)
    assert compaction_still_leaf(path, memo) is None
    assert loop_defects([*path, looped.model_copy(update={"parent_id": leaf})], memo) == []
