"""`manual` mode: OpenClaw's `/compact` as the item's OpenClaw release runs it (`RuntimeRules.manual`).

OpenClaw 2026.4.12 (the runtime both pi profiles run with) moves the written compaction's boundary
to the leaf (`hardenManualCompactionBoundary`): its `firstKeptEntryId` is its own id and the tail
after the cut is lost. OpenClaw 2026.9.6 has no such step: `/compact` (`AgentSession.compact` →
`preflightManualSessionCompaction`, resource-loader-v8341X6T.mjs) keeps the tail its cut keeps, and
where that cut summarizes nothing it cuts once more with `keepRecentTokens: 0`.
tests/oracles/test_openclaw_compactor.py checks the 2026.9.6 cuts against OpenClaw's own `/compact`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite
from replaylab.transcript.memo import ItemMemo
from repo_paths import REPO_ROOT

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
USAGE = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}
BIG = "word " * 800  # 1,000 tokens
OPENCLAW = "openclaw@2026.9.6"


def _turns(count: int, text: str) -> list[dict[str, Any]]:
    entries = []
    for _ in range(count):
        entries.append(message("user", [{"type": "text", "text": text}]))
        entries.append(message("assistant", [{"type": "text", "text": text}], stopReason="stop", usage=USAGE))
    return entries


def _compact(tmp_path: Path, agent: str, data: bytes, mode: str, keep: int = 1_500) -> Any:
    recording = tmp_path / f"{agent}-{mode}.jsonl"
    recording.write_bytes(data)
    params = CompactParams(
        session_file=str(recording),
        context_tokens=20_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=keep,
        compaction_mode=mode,
        working_copy=str(tmp_path / f"{agent}-{mode}.copy.jsonl"),
    )
    return compact(params, memo=ItemMemo(rules=rules_of(agent)))


def _last_turn(text: str) -> list[dict[str, Any]]:
    return [
        message("user", [{"type": "text", "text": text}]),
        message("assistant", [{"type": "text", "text": "ok"}], stopReason="stop", usage=USAGE),
    ]


def test_openclaw_2026_9_6_keeps_the_tail_its_cut_keeps_as_its_safeguard_does(tmp_path: Path) -> None:
    """Before: the boundary moved to the leaf and the kept tail was lost, as in 2026.4.12."""
    data = linear_jsonl(HEADER, *_turns(5, BIG), *_last_turn("b"))
    manual = _compact(tmp_path, OPENCLAW, data, "manual")
    safeguard = _compact(tmp_path, OPENCLAW, data, "safeguard")
    assert manual.success and safeguard.success, (manual.error, safeguard.error)
    assert manual.first_kept_entry_id == safeguard.first_kept_entry_id != manual.compaction_event_id
    kept = [w["entryId"] for w in manual.compacted_window[1:]]
    assert kept == [w["entryId"] for w in safeguard.compacted_window[1:]] and kept[-2:] == ["e11", "e12"]


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0"])
def test_under_openclaw_2026_4_12s_runtime_the_boundary_moves_to_the_leaf(tmp_path: Path, agent: str) -> None:
    data = linear_jsonl(HEADER, *_turns(5, BIG), *_last_turn("b"))
    manual = _compact(tmp_path, agent, data, "manual")
    assert manual.success, manual.error
    assert manual.first_kept_entry_id == manual.compaction_event_id
    assert [w["role"] for w in manual.compacted_window] == ["compactionSummary"]


def test_openclaw_2026_9_6_cuts_again_keeping_nothing_when_its_cut_summarizes_nothing(tmp_path: Path) -> None:
    """The whole context fits in the kept tail: safeguard (and 2026.9.6's threshold compaction)
    finds nothing to summarize; `/compact` cuts at the last message instead (a split turn: its user
    message is the turn's prefix). Before: refused."""
    data = linear_jsonl(HEADER, *_turns(1, "word " * 600), *_last_turn("b"))
    safeguard = _compact(tmp_path, OPENCLAW, data, "safeguard")
    assert not safeguard.success and "nothing to summarize" in safeguard.error
    manual = _compact(tmp_path, OPENCLAW, data, "manual")
    assert manual.success, manual.error
    assert manual.first_kept_entry_id == "e4" and manual.cut_point.keep_recent_tokens == 0
    assert [w["entryId"] for w in manual.compacted_window[1:]] == ["e4"]


def test_openclaw_2026_9_6_refuses_a_compact_after_a_reset_as_before(tmp_path: Path) -> None:
    """Its `prepareCompaction` returns nothing at a reset leaf whatever the tail: no retry helps."""
    header = {**HEADER, "version": 4}
    data = linear_jsonl(header, *_turns(5, BIG), {"type": "reset", "reason": "new"})
    manual = _compact(tmp_path, OPENCLAW, data, "manual")
    assert not manual.success and manual.failure == "agent_refuses", manual.error


@pytest.mark.parametrize(("agent", "outcome"), [("openclaw@2026.9.6", "passed"), ("pi@0.73.1", "failed")])
def test_a_tail_2026_9_6_keeps_leaves_no_value_lost_that_2026_4_12s_boundary_loses(agent: str, outcome: str) -> None:
    """long-account-review in manual mode (the bundled OpenClaw suite's budget): a later turn needs
    a ticket id that only the tail after the cut holds. OpenClaw 2026.9.6 keeps that tail, so the
    compacted run asks what the recorded one did; 2026.4.12's boundary at the leaf loses it."""
    suite = load_suite(REPO_ROOT / "suites" / "openclaw.yaml")
    scenario = suite.scenarios[0]
    recording = next(r for r in suite.recordings if r.stem == "long-account-review")
    result = run_item(scenario, recording, RunOptions(mode="manual", agent=agent, verify_with_pi="off"))
    assert result.outcome == outcome, result.reason
    lost = [v for v in result.lost_values if "TCK-5007" in str(v)]
    assert bool(lost) is (outcome == "failed"), result.lost_values
    assert (Code.TOOL_SEQUENCE_DIVERGED in {d.code for d in result.defects}) is (outcome == "failed")
