"""What the real-data sweep measures of each compaction an item makes: its tokens before and
after, the mutating entries it kept byte-identical, the identifiers its window still shows, and
the texts `sweep_losses.confirmed_loss` checks a lost value against. The compactor is watched, not
replaced (`RunOptions.observe_compactor`): the figures are of the compaction the item made."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactParams, CompactResult
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.writer import TranscriptWriter


def measuring(compactor: Callable[..., Any], sink: dict[str, Any]) -> Callable[..., Any]:
    """`compactor`, unchanged, that records the figures of its first successful compaction (and
    whether its first compaction found nothing to gain)."""
    from replaylab.compactors.outcome import found_nothing_to_gain

    def run(
        params: CompactParams, *, classifier: ToolClassifier | None = None, writer: TranscriptWriter | None = None
    ) -> Any:
        outcome = compactor(params, classifier=classifier, writer=writer)
        sink.setdefault("nothing_to_gain", found_nothing_to_gain(outcome))
        if outcome.success and "tokens_before" not in sink:
            sink.update(_measure(params, outcome, classifier))
        if outcome.success:
            sink.setdefault("compaction_texts", []).append(_compaction_texts(params, outcome))
        return outcome

    return run


def _compaction_texts(params: CompactParams, outcome: CompactResult) -> tuple[str, str]:
    """(the text of the span a compaction summarized, the text of the window it left), for
    `confirmed_loss`."""
    from replaylab.qa.views import compaction_leaf
    from replaylab.transcript import build_window, load_transcript
    from replaylab.transcript.model import identifier_text

    copy = load_transcript(Path(params.session_file))
    before = build_window(copy.path_to(outcome.compaction_event_id)[:-1])
    after = build_window(copy.path_to(compaction_leaf(outcome)))
    kept = {w.source_id for w in after}
    span = "\n".join(identifier_text(w.message) for w in before if w.entry_id not in kept)
    return span, "\n".join(identifier_text(w.message) for w in after)


def _measure(params: CompactParams, outcome: CompactResult, classifier: ToolClassifier | None) -> dict[str, Any]:
    from replaylab.compaction.identifiers import extract_identifiers
    from replaylab.compaction.invariants import ledger_entries
    from replaylab.qa.views import compaction_leaf
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger
    from replaylab.transcript import build_window, load_transcript
    from replaylab.transcript.model import MessageEntry, dump_entry, identifier_text

    copy = load_transcript(Path(params.session_file))
    path = copy.path_to(outcome.compaction_event_id)[:-1]
    after_path = copy.path_to(compaction_leaf(outcome))
    before, after = build_window(path), build_window(after_path)
    mutating = ledger_entries(build_ledger(copy, classifier or ToolClassifier(), path=path))
    recorded = {e.id: e.message for e in path if isinstance(e, MessageEntry)}
    after_by_id = {w.source_id: w.message for w in after}  # a restated entry is the entry it restates

    def dumped(message: Any) -> bytes:
        return orjson.dumps(dump_entry(message), option=orjson.OPT_SORT_KEYS)

    def same(entry_id: str) -> bool:
        return entry_id in after_by_id and dumped(after_by_id[entry_id]) == dumped(recorded[entry_id])

    visible_before = [w.entry_id for w in before if w.entry_id in mutating and w.entry_id in recorded]
    kept = set(after_by_id)
    visible = "\n".join(identifier_text(w.message) for w in after)
    upper = visible.upper()
    span = "\n".join(identifier_text(w.message) for w in before if w.entry_id not in kept)
    identifiers = extract_identifiers(span)
    return {
        "tokens_before": outcome.original_token_count,
        "tokens_after": outcome.compacted_token_count,
        "mutating_entries": len(visible_before),
        "mutating_kept_verbatim": sum(1 for i in visible_before if same(i)),
        "identifiers": len(identifiers),
        "identifiers_visible": sum(1 for i in identifiers if i in visible or i.upper() in upper),
    }
