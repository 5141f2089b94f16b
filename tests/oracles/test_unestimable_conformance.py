"""pi's and OpenClaw 2026.9.6's own `prepareCompaction` on sessions holding an item their
`estimateTokens` cannot count, at every place it can lie (summarized, in the tail the cut walks over,
after the last usage), against
replaylab's verdict (`compaction.estimate_failure`): where pi throws, replaylab refuses as the agent
fails; where a NaN leaves pi nothing to summarize, replaylab says so; elsewhere both compact. Run in
safeguard mode, whose summary is not pi's summarizer (the oracle prepares, it does not summarize).
Without node or an oracle's `npm ci` these tests skip with the command; under CI=true they fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.transcript.memo import ItemMemo
from unit.compaction.test_compaction_unestimable import (
    MISSING_TEXT,
    NO_ARGUMENTS,
    NULL_ITEM,
    NUMBER_TEXT,
    _session,
)
from unit.compaction.test_compaction_unestimable_openclaw import MISSING_THINKING, scaled_session, tool_result_session

ITEMS = {"null": NULL_ITEM, "no-text": MISSING_TEXT, "no-arguments": NO_ARGUMENTS, "nan": NUMBER_TEXT}


#: items only OpenClaw's own estimate reads apart from pi's (a number name gives NaN in both)
OPENCLAW_ITEMS = {"no-thinking": MISSING_THINKING, "number-name": {"type": "toolCall", "id": "c", "name": 5}}


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
@pytest.mark.parametrize("where", ["old", "walked", "after-usage"])
@pytest.mark.parametrize("label", sorted(ITEMS))
def test_replaylab_refuses_where_pis_prepare_compaction_fails(agent, where, label, agent_oracles, tmp_path: Path):
    _check(agent, _session(ITEMS[label], where), agent_oracles, tmp_path)


@pytest.mark.parametrize("where", ["old", "walked", "after-usage"])
@pytest.mark.parametrize("label", ["tool-result-null", *sorted(OPENCLAW_ITEMS)])
def test_replaylab_refuses_where_openclaws_prepare_compaction_fails(where, label, agent_oracles, tmp_path: Path):
    """OpenClaw's load keeps a tool result holding a null item (it keeps aside a user or assistant
    message holding one)."""
    data = tool_result_session(None, where) if label == "tool-result-null" else _session(OPENCLAW_ITEMS[label], where)
    _check("openclaw@2026.9.6", data, agent_oracles, tmp_path)


@pytest.mark.parametrize("nan", [False, True])
def test_replaylab_cuts_where_openclaw_cuts_with_a_nan_in_its_context(nan, agent_oracles, tmp_path: Path):
    """A NaN OpenClaw still finds something to summarize with: its tail budget unscaled."""
    recording = tmp_path / "s.jsonl"
    recording.write_bytes(scaled_session(nan))
    cut = agent_oracles("openclaw@2026.9.6").view(recording, keep_recent_tokens=(1_500,)).windows[0].cuts[0]
    params = CompactParams(
        session_file=str(recording),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=1_500,
        force_compact=True,
        compaction_mode="safeguard",
    )
    result = compact(params, memo=ItemMemo(rules=rules_of("openclaw@2026.9.6")))
    assert result.success and result.first_kept_entry_id == cut.first_kept_entry_id, result.error


def _check(agent: str, data: bytes, agent_oracles, tmp_path: Path) -> None:
    recording = tmp_path / "s.jsonl"
    recording.write_bytes(data)
    window = agent_oracles(agent).view(recording, keep_recent_tokens=(1_500,)).windows[0]
    cut = window.cuts[0] if window.cuts else None
    throws = bool(window.error) or (cut is not None and (cut.refused or "").startswith("error"))
    # a NaN: 0.73.1 keeps everything and summarizes nothing, 1.6.0 and OpenClaw return nothing
    empty = not throws and cut is not None and (bool(cut.refused) or not (cut.summarize or cut.turn_prefix))
    params = CompactParams(
        session_file=str(recording),
        context_tokens=6_000,
        reserve_tokens_floor=1_000,
        keep_recent_tokens=1_500,
        force_compact=True,
        compaction_mode="safeguard",
    )
    result = compact(params, memo=ItemMemo(rules=rules_of(agent)))
    if throws:
        assert result.failure == "agent_refuses" and "prepareCompaction throws" in (result.error or ""), result.error
    elif empty:
        assert result.failure in ("agent_refuses", "nothing_to_gain") and "gives NaN" in (result.error or "")
    else:
        assert result.success, result.error
