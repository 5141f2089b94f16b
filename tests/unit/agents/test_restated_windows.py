"""Every agent profile's window of a safeguard working copy knows the restated entries: each names
the recorded entry it restates (`WindowMessage.restates`), and exactly the restated protected
entries are marked protected. What the window shows is the agent's rule alone; the pinned agents
themselves are compared in tests/oracles/test_agent_conformance.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders.transcripts import compact_reset_keeps_a_marked_rm
from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import load_transcript
from replaylab.transcript.restated import restated_sources, restatements
from repo_paths import REPO_ROOT

RECORDING = REPO_ROOT / "recordings" / "helpdesk" / "cancel-two-orders.jsonl"


@pytest.fixture(scope="module")
def working_copy(tmp_path_factory: pytest.TempPathFactory):
    copy = tmp_path_factory.mktemp("restated") / "copy.jsonl"
    params = CompactParams(
        session_file=str(RECORDING),
        compaction_mode="safeguard",
        context_tokens=3_400,
        reserve_tokens_floor=800,
        keep_recent_tokens=500,
        working_copy=str(copy),
    )
    result = compact(params, classifier=ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk")))
    assert result.success and result.first_kept_entry_id == result.compaction_event_id
    return result, Path(copy)


@pytest.mark.parametrize("name", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
def test_each_agents_window_names_what_a_restated_entry_restates_and_marks_the_protected(
    name: str, working_copy
) -> None:
    result, copy = working_copy
    path = load_transcript(copy).leaf_path()
    sources = restated_sources(path)
    window = rules_of(name).window(path)
    restated = [w for w in window if w.entry_id in sources]
    assert restated and all(w.restates == sources[w.entry_id] for w in restated)
    assert [w.entry_id for w in window if w.restates is None][:1] == [result.compaction_event_id]
    protected = [w.source_id for w in window if w.protected]
    assert protected == [i for i in result.protected_entry_ids if i in protected]
    assert set(result.protected_entry_ids) <= {w.source_id for w in window}
    assert set(protected) == set(result.protected_entry_ids)


@pytest.mark.parametrize("name", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
def test_each_agents_window_with_an_items_memo_judges_each_restatement_once(
    name: str, working_copy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every compaction of a long session rebuilds windows over the same restated entries: with an
    item's memo, each agent's rebuild judges each claim once for the item (`ItemMemo.claim`) and
    gives the window it gives without the memo."""
    from replaylab.transcript import restated
    from replaylab.transcript.memo import ItemMemo

    _, copy = working_copy
    path = load_transcript(copy).leaf_path()
    rules = rules_of(name)
    plain = rules.window(path)
    claims = sorted(restated_sources(path))
    judged: list[str] = []
    judge = restated.judged
    monkeypatch.setattr(restated, "judged", lambda entry, source: judged.append(entry.id) or judge(entry, source))
    memo = ItemMemo(rules=rules)
    assert rules.window(path, memo) == plain and rules.window(list(path), memo) == plain
    assert claims and sorted(judged) == claims


def test_safeguard_restates_a_mutating_call_only_a_reset_showed_without_its_mark(tmp_path: Path) -> None:
    """OpenClaw shows a message marked `excludeFromContext` only in a reset's kept range: a byte-for-
    byte copy after the compaction would be invisible and the `rm` lost. Safeguard restates it
    without the mark, declared, and the compaction keeps every mutating event (replayCheck clean)."""
    result, recording, copy_file = compact_reset_keeps_a_marked_rm(tmp_path, "openclaw@2026.9.6")
    rules = rules_of("openclaw@2026.9.6")
    before = rules.window(load_transcript(recording).leaf_path())
    call_entry = next(w.entry_id for w in before if getattr(w.message, "role", None) == "assistant")
    assert result.success and result.findings == [], (result.error, result.findings)
    assert call_entry in result.protected_entry_ids
    path = load_transcript(copy_file).leaf_path()
    after = rules.window(path)
    copy = next(w for w in after if w.source_id == call_entry)
    assert copy.entry_id != call_entry and "excludeFromContext" not in copy.message.model_dump(by_alias=True)


@pytest.mark.parametrize("name", ["pi@0.73.1", "openclaw@2026.9.6"])
def test_a_marked_result_a_reset_kept_is_restated_truncated_without_its_mark(name: str, tmp_path: Path) -> None:
    """Under allowMutatingEventTruncate, the rm's long result (marked, kept by the reset) is
    restated shortened and without the mark, its truncation declared of the unmarked message: the
    copy is that result, and the compaction keeps every mutating event."""
    listing = "removed 'build/obj/module.o'\n" * 1_000
    result, recording, copy_file = compact_reset_keeps_a_marked_rm(tmp_path, name, output=listing, allow_truncate=True)
    assert result.success and result.findings == [], (result.error, result.findings)
    path = load_transcript(copy_file).leaf_path()
    sources, truncated = restatements(path)
    assert truncated, "the result was restated shortened"
    (copy,) = [e for e in path if e.id in truncated]
    assert copy.exclude_from_context_dropped is True
    assert "excludeFromContext" not in copy.message.model_dump(by_alias=True)
