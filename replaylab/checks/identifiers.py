"""IDENTIFIER_LOST: identifiers of the summarized span that the compacted window no longer shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replaylab.checks.after_runs import AfterRuns
from replaylab.defects import Code, Defect
from replaylab.transcript import build_window
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import message_text

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactResult


def identifier_defects(
    outcome: CompactResult, history: list[Any], window: list[WindowMessage], memo: ItemMemo | None = None
) -> list[Defect]:
    """IDENTIFIER_LOST: an identifier of the summarized span that is visible nowhere in the window.
    The span is what the window before the compaction showed and the window after does not: text an
    earlier (recorded) compaction had already summarized away was not visible before either, so
    this compaction did not lose it."""
    from replaylab.compaction.identifiers import item_scans

    text_of = memo.text if memo is not None else message_text
    kept = {item.source_id for item in window}  # a restated entry is the entry it restates
    visible = "\n".join(text_of(item.message) for item in window)
    # the span's identifiers as the joined span text gives them, from each message's own scan:
    # with an item's memo the summary of the same span already scanned those texts (with this
    # module's functions, pure in the text: whatever compactor ran, a scan is what a fresh one gives)
    span = item_scans(memo).identifiers_in(
        text_of(item.message) for item in build_window(history, memo) if item.source_id not in kept
    )
    lost = [i for i in span if i not in visible]
    if lost:  # upper-cased only when needed: most identifiers are visible as written
        visible_upper = visible.upper()
        lost = [i for i in lost if i.upper() not in visible_upper]
    if not lost:
        return []
    return [
        Defect.of(
            Code.IDENTIFIER_LOST,
            f"{len(lost)} identifier(s) of the summarized span are visible nowhere in "
            f"the compacted window: {', '.join(lost[:5])}{' …' if len(lost) > 5 else ''}",
            expected="visible in summary or kept entries",
            actual=lost[:20],
        )
    ]


def lost_identifiers(item: AfterRuns) -> list[Defect]:
    return identifier_defects(item.first, item.history, item.first_window, item.memo)
