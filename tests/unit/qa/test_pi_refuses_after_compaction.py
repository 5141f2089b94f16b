"""pi 0.73.1's items meet pi 0.73.1's own double-compaction guard in every compaction the pipeline
asks for (`qa.setup.forced_past_guard`): a later compaction of a history that ends in a compaction,
or in one followed only by the entries it restated, is the agent's refusal (`agent_refuses`), as
the items with agent rules are refused (`compaction.plan.agent_refusal`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from builders.transcripts import TOOL_CLASSES, helpdesk_session
from replaylab.agents import item_memo
from replaylab.checks.compactions import later_compaction_failures
from replaylab.compaction import CompactParams, compact
from replaylab.compactors.outcome import refused_as_pi, refused_by_agent
from replaylab.qa.setup import forced_past_guard
from replaylab.transcript import TranscriptWriter
from replaylab.transcript.memo import ItemMemo
from replaylab.upstream.profiles import profile_named

SMALL = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=800, tool_classes=TOOL_CLASSES)


@pytest.mark.parametrize(("agent", "forced"), [("pi@0.73.1", False), ("pi@1.6.0", True), ("openclaw@2026.9.6", True)])
def test_only_items_with_agent_rules_are_forced_past_the_guard(agent, forced):
    """pi 0.73.1's items carry no rules: the harness's guard is its refusal, so nothing forces past it."""
    assert forced_past_guard(item_memo(profile_named(agent))) is forced


def _safeguarded(tmp_path: Path) -> tuple[TranscriptWriter, ItemMemo, CompactParams]:
    """A pi 0.73.1 item's first safeguard compaction: its leaf restates the protected entries."""
    recording = helpdesk_session(8).write(tmp_path / "rec.jsonl")
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    memo = item_memo(profile_named("pi@0.73.1"))
    assert memo.rules is None
    params = CompactParams(session_file=str(writer.path), **SMALL)
    first = compact(params, writer=writer, memo=memo)
    assert first.success and first.leaf_id != first.compaction_event_id, first.error
    return writer, memo, params.model_copy(update={"force_compact": forced_past_guard(memo)})


def test_a_later_compaction_right_after_safeguard_is_pi_0_73_1s_refusal(tmp_path):
    writer, memo, params = _safeguarded(tmp_path)
    path = writer.transcript().leaf_path()
    again = compact(params, writer=writer, memo=memo)
    assert not again.success and again.failure == "already_compacted", again.error
    assert writer.transcript().leaf_path()[-1].id == path[-1].id  # nothing appended
    refused = refused_as_pi(again, path, "pi@0.73.1", memo)
    assert refused_by_agent(refused)
    compaction = next(e for e in path if e.type == "compaction")
    assert refused.error == (
        f"nothing to compact: pi@0.73.1 would not compact here: the leaf already is a compaction "
        f"({compaction.id}), followed only by the entries it restated"
    )


def test_a_refused_later_compaction_is_no_failure(tmp_path):
    writer, memo, params = _safeguarded(tmp_path)
    path = writer.transcript().leaf_path()
    refused = refused_as_pi(compact(params, writer=writer, memo=memo), path, "pi@0.73.1", memo)
    assert later_compaction_failures(SimpleNamespace(later=[refused])) == []  # type: ignore[arg-type]


def test_a_guard_refusal_of_a_history_that_ends_in_no_compaction_is_not_taken_at_its_word(tmp_path):
    """A compactor under test that says `already_compacted` where the history ends in no
    compaction stays a failure of its own (COMPACTION_FAILED), not pi's refusal."""
    writer, memo, params = _safeguarded(tmp_path)
    path = writer.transcript().leaf_path()
    before = path[: next(i for i, e in enumerate(path) if e.type == "compaction")]
    said = compact(params, writer=writer, memo=memo)
    assert said.failure == "already_compacted"
    assert refused_as_pi(said, before, "pi@0.73.1", memo).failure == "already_compacted"
    assert [d.code for d in later_compaction_failures(SimpleNamespace(later=[said]))] == ["COMPACTION_FAILED"]  # type: ignore[arg-type]
