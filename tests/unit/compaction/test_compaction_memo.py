"""compact() with a QA pipeline item's memo (`ItemMemo`, passed by the pipeline only): the same
result as without one, for every mode, however many compactions of the item share the memo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from builders.transcripts import TOOL_CLASSES, Session
from replaylab.compaction import CompactParams, compact
from replaylab.compaction.identifiers import item_scans
from replaylab.transcript.memo import ItemMemo
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
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


def _compacted(folder: Path, mode: str, memo: ItemMemo | None, recording: Path = RECORDING, **extra) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    session = folder / recording.name
    shutil.copyfile(recording, session)
    params = CompactParams(
        session_file=str(session), compaction_mode=mode, working_copy=str(folder / "copy.jsonl"), **BUDGET, **extra
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


def _late_writes_session() -> Session:
    """Order look-ups, cancels from turn 2 on: safeguard's cut moves back to the first cancel and
    still has the look-ups before it to summarize (the bundled recording writes from its start, so
    at this budget safeguard refuses it before any summary is made)."""
    s = Session()
    for turn in range(8):
        order = f"#W{2000000 + turn}"
        s.user(f"Turn {turn}: what is the status of order {order} for user noah_kim_{7100 + turn}?")
        s.tool_turn("get_order", {"order_id": order}, f'{{"order_id": "{order}", "note": "{"n" * 400}"}}')
        if turn >= 2:
            s.tool_turn("cancel_order", {"order_id": order}, f"cancelled {order}")
        s.assistant(f"Order {order} is pending; ticket https://help.example.com/t/{turn}.")
    return s


def test_the_summary_scans_the_items_texts_once(tmp_path: Path) -> None:
    recording = _late_writes_session().write(tmp_path / "late.jsonl")
    memo = ItemMemo()
    scans = item_scans(memo)
    first = _compacted(tmp_path / "memo", "safeguard", memo, recording, tool_classes=TOOL_CLASSES)
    assert first["success"] and first["summarizer"] == "extractive" and first["protectedEntryIds"]
    assert scans._identifiers  # the compaction's summary and guard scanned into the item's scans
    kept = dict(scans._identifiers)
    again = _compacted(tmp_path / "again", "safeguard", memo, recording, tool_classes=TOOL_CLASSES)
    assert again == first
    assert scans._identifiers == kept  # the same texts: nothing scanned anew
