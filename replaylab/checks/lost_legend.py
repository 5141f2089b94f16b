"""The legend of an item's `⟨lost:N⟩` markers: for each, the value it stands for, where the
original agent last saw it, where the replay first lacked it, and which compaction took it.

The replay model numbers markers once per item (`replaylab.replay.agent.grounding.LostMarkers`), so one
row per marker explains every call, answer and defect of the item that shows it.

Which compaction took a value: of the compactions between the entry where the recording last
showed it and the step that lacked it, the windows right after each are read in order; the value
was taken by the compaction after the last of them that still held it (by the first one when
none did). No compaction took it when there is none in between (the replay never received it:
the recording got it from a result the replay did not get, e.g. of a blocked call) or the last
one still held it: the row then names none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replaylab.replay.agent.grounding_text import SEP, grounding_text
from replaylab.replay.agent.model_protocol import LostRecord
from replaylab.replay.trace import turn_number
from replaylab.replay.turns import split_turns
from replaylab.results import LostValue

if TYPE_CHECKING:
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.model import AnyEntry


@dataclass
class CompactionStep:
    """One successful compaction of the item: its number (1-based), where it happened and the
    window it left (its text made only when a lost value is looked up in it)."""

    number: int
    entry_id: str | None
    summary_text: str
    before_turn_index: int  # the recording turn index it compacted before (or within)
    window: Sequence[WindowMessage]
    _text: str | None = field(default=None, repr=False)
    #: the index on the recording's path where it compacted, when that is not the start of its
    #: turn (a compaction within a run: `qa.compaction_start.start_within_run`)
    at: int | None = None

    def holds(self, value: str, memo: ItemMemo | None) -> bool:
        if self._text is None:
            self._text = SEP.join(grounding_text(w.message, memo) for w in self.window)
        return value in self._text


def lost_legend(
    records: Iterable[LostRecord],
    path: Sequence[AnyEntry],
    compactions: Sequence[CompactionStep],
    memo: ItemMemo | None = None,
) -> list[LostValue]:
    """One `LostValue` per marker, in marker order, from the first record of each marker."""
    first: dict[str, LostRecord] = {}
    for record in records:
        first.setdefault(record.marker, record)
    if not first:
        return []
    position = {entry.id: index for index, entry in enumerate(path)}
    turn_of, turn_start = _turn_indexes(path, position, memo)
    # where each compaction, the value's last sight and its loss lie on the path: a compaction
    # within a run comes after what its run showed before it
    place = [c.at if c.at is not None else turn_start.get(c.before_turn_index, len(path)) for c in compactions]
    legend = []
    for record in sorted(first.values(), key=lambda r: _marker_number(r.marker)):
        seen = turn_of.get(record.seen_entry_id) if record.seen_entry_id is not None else None
        seen_at = position.get(record.seen_entry_id) if record.seen_entry_id is not None else None
        lost_at = position.get(record.entry_id or "", turn_start.get(record.turn_index, len(path)))
        taken = _taken_by(record, seen_at, lost_at, compactions, place, memo)
        earlier = [at for at in place if at <= lost_at]
        never_received = taken is None and seen_at is not None and bool(earlier) and seen_at >= earlier[-1]
        legend.append(
            LostValue(
                marker=record.marker,
                value=record.value,
                seen_entry_id=record.seen_entry_id,
                seen_turn=None if seen is None else turn_number(seen),
                lost_entry_id=record.entry_id,
                lost_turn=turn_number(record.turn_index),
                lost_in="text" if record.kind == "text" else "call",
                compaction=taken.number if taken else None,
                compaction_entry_id=taken.entry_id if taken else None,
                summary_lacks=(record.value not in taken.summary_text) if taken else None,
                never_received=never_received,
            )
        )
    return legend


def _taken_by(
    record: LostRecord,
    seen_at: int | None,
    lost_at: int,
    compactions: Sequence[CompactionStep],
    place: Sequence[int],
    memo: ItemMemo | None,
) -> CompactionStep | None:
    """The compaction that took the value (module rules); `seen_at`: the path index of the entry
    where the recording last showed it (None: none did), `lost_at` that of the step that lacked
    it, `place` each compaction's."""
    between = [c for c, at in zip(compactions, place) if at <= lost_at and (seen_at is None or seen_at < at)]
    if not between:
        return None
    holding = [n for n, c in enumerate(between) if c.holds(record.value, memo)]
    if not holding:
        return between[0]
    last = holding[-1]
    return between[last + 1] if last + 1 < len(between) else None


def _turn_indexes(
    path: Sequence[AnyEntry], position: dict[str, int], memo: ItemMemo | None = None
) -> tuple[dict[str, int], dict[int, int]]:
    """Entry id → the 0-based index of the recording turn it belongs to (an entry no turn holds,
    a custom or compaction entry, belongs to the turn before it), and each turn's index → the
    path index of its first entry (`position`: each entry's path index), turns by the item's
    agent (`memo`)."""
    member: dict[str, int] = {}
    starts: dict[int, int] = {}
    for turn in split_turns(path, memo):
        for entry in (*turn.inputs, *turn.steps, *turn.results.values()):
            member[entry.id] = turn.index
        if turn.inputs or turn.steps:
            starts[turn.index] = position.get(turn.first_entry.id, len(path))
    out: dict[str, int] = {}
    current = 0
    for entry in path:
        current = member.get(entry.id, current)
        out[entry.id] = current
    return out, starts


def _marker_number(marker: str) -> int:
    digits = "".join(ch for ch in marker if ch.isdigit())
    return int(digits) if digits else 0


def lost_records(models: Iterable[Any]) -> list[LostRecord]:
    """The lost records of the models of an item's runs, in run order (models that lose nothing,
    e.g. a real model, have none)."""
    return [record for model in models for record in getattr(model, "lost", ())]
