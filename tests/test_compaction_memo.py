"""compact() with a QA pipeline item's memo (`ItemMemo`, passed by the pipeline only): the same
result as without one, for every mode, however many compactions of the item share the memo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replaylab.compaction import CompactParams, compact
from replaylab.compaction.identifiers import item_scans
from replaylab.transcript.memo import ItemMemo

REPO = Path(__file__).resolve().parents[1]
RECORDING = REPO / "recordings" / "helpdesk" / "long-account-review.jsonl"
BUDGET = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=800)
#: what names the files or the run, not what the compaction found
PLACES = {"session_file", "working_copy", "diag_id"}


def _timeless(value):
    """`value` without its timestamps (the compaction entry is stamped when it is written)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _compacted(folder: Path, mode: str, memo: ItemMemo | None) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    session = folder / RECORDING.name
    shutil.copyfile(RECORDING, session)
    params = CompactParams(
        session_file=str(session), compaction_mode=mode, working_copy=str(folder / "copy.jsonl"), **BUDGET
    )
    return _timeless(compact(params, memo=memo).model_dump(exclude=PLACES))


@pytest.mark.parametrize("mode", ["safeguard", "auto", "aggressive", "manual"])
def test_a_memo_changes_nothing_compact_finds(mode: str, tmp_path: Path) -> None:
    plain = _compacted(tmp_path / "plain", mode, None)
    assert plain["success"] or plain["failure"]
    memo = ItemMemo()
    assert _compacted(tmp_path / "memo", mode, memo) == plain
    assert memo.estimates.values and memo.windows and memo.ledgers  # the compaction used the memo
    assert _compacted(tmp_path / "again", mode, memo) == plain  # a second compaction of the item


def test_the_summary_scans_the_items_texts_once(tmp_path: Path) -> None:
    memo = ItemMemo()
    scans = item_scans(memo)
    _compacted(tmp_path / "memo", "safeguard", memo)
    assert scans._identifiers  # the compaction's summary and guard scanned into the item's scans
    kept = dict(scans._identifiers)
    _compacted(tmp_path / "again", "safeguard", memo)
    assert scans._identifiers == kept  # the same texts: nothing scanned anew
