"""RECORDED_*: the compactions a recording already holds, audited like replaylab's own.

A session recorded in production may hold the agent's own compactions (OpenClaw / pi `compaction`
entries, `fromHook` ones among them; Claude Code's `compact_boundary`, which the importer turns into
a compaction that keeps nothing verbatim). What such a compaction lost is lost before any replay,
and no compaction of replaylab's can show it. Each one on the leaf path is judged by the same
rules replaylab's own compactions are held to, on the windows the item's agent rebuilds (its
profile's rebuild: `transcript.build_window` with the item's memo) just before and just after it:

* RECORDED_MUTATION_DROPPED — a mutating event the window showed before it and does not show
  verbatim after it (its call or its result summarized away), one finding per event, at its call,
  with whether the summary still names its arguments;
* RECORDED_IDENTIFIER_LOST — identifiers of the summarized messages (and of a previous summary
  it replaced) visible nowhere in the window after it, one finding per compaction;
* RECORDED_SUMMARY_INVALID — a summary that wipes the memory of a real conversation: empty, a
  placeholder such as OpenClaw's "Summary unavailable due to size limits", or an empty skeleton.

All are blocking by default: the loss happened. A suite that accepts them tolerates their codes
(`expect: {tolerate: [RECORDED_IDENTIFIER_LOST]}`). The checks never depend on whether the item's
scenario is exercised: they run for every item (`checks.hooks.BEFORE_RUNS`) and `replaylab inspect`
prints the same audit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from replaylab.checks.before_runs import BeforeRuns
from replaylab.checks.classified import with_classification
from replaylab.defects import Code, Defect
from replaylab.results import RecordedCompactionView, SummarizedEvent
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import Ledger
from replaylab.scrub import scrub_text
from replaylab.transcript.context import WindowMessage, windows_at
from replaylab.transcript.javascript import js_truthy, number_or_none
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry, CompactionEntry, MessageEntry
from replaylab.transcript.pairing import message_calls
from replaylab.upstream.openclaw_2026_4_12 import SUMMARY_UNAVAILABLE_MARKERS

if TYPE_CHECKING:
    from replaylab.compaction.invariants import MutatingEvent

#: identifiers a finding's message names (its `actual` keeps up to `IDENTIFIERS_KEPT`)
IDENTIFIERS_SHOWN = 5
IDENTIFIERS_KEPT = 50


@dataclass(frozen=True)
class RecordedCompaction:
    """One recorded compaction: what the reports show of it, and its findings."""

    view: RecordedCompactionView
    defects: list[Defect]


def recorded_compaction_findings(item: BeforeRuns) -> list[Defect]:
    """Every finding of every compaction the recording holds, in path order."""
    return [defect for audit in recorded_compactions(item) for defect in audit.defects]


def recorded_compactions(item: BeforeRuns) -> list[RecordedCompaction]:
    """The item's recorded compactions, audited once for the check and for the reports."""
    if "recorded_compactions" not in item.made:
        item.made["recorded_compactions"] = audit_recorded_compactions(
            item.transcript, item.classifier, item.ledger, item.memo, item.progress
        )
    audited: list[RecordedCompaction] = item.made["recorded_compactions"]
    return audited


def audit_recorded_compactions(
    transcript: Transcript,
    classifier: ToolClassifier,
    ledger: Ledger,
    memo: ItemMemo | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[RecordedCompaction]:
    """Each compaction entry on the leaf path, audited on the windows just before and after it
    (`progress` told of each one audited: a long session holds hundreds)."""
    from replaylab.compaction.invariants import ledger_events
    from replaylab.compactors.recheck import entry_turns

    path = transcript.leaf_path(memo)
    at = [index for index, entry in enumerate(path) if isinstance(entry, CompactionEntry)]
    if not at:
        return []
    turns = entry_turns(path, memo)
    # made once for every compaction of the path: a long session holds many, each over the whole path
    messages = _PathMessages(path)
    mutating = _EventsByEntry(ledger_events(ledger))
    windows = windows_at(path, [end for index in at for end in (index, index + 1)], memo)
    audits = []
    for done, index in enumerate(at, 1):
        audits.append(_audit(path, index, (windows[index], windows[index + 1]), mutating, turns, memo, messages))
        if progress is not None:
            progress(done, len(at))
    # each finding about a mutating call says which rule made it mutating, in `inspect` as in a run
    return [RecordedCompaction(a.view, with_classification(a.defects, classifier)) for a in audits]


class _EventsByEntry:
    """The recording's mutating events, found by the entries they hold: a compaction is judged
    on the events its window showed, not on every event of a long session."""

    __slots__ = ("events", "positions")

    def __init__(self, events: list[MutatingEvent]) -> None:
        self.events = events
        self.positions: dict[str, list[int]] = {}
        for position, event in enumerate(events):
            for entry_id in event.entry_ids:
                self.positions.setdefault(entry_id, []).append(position)

    def shown_in(self, window: Sequence[WindowMessage]) -> list[MutatingEvent]:
        """The events with an entry in `window`, in the recording's order."""
        found = {p for item in window if item.source_id for p in self.positions.get(item.source_id, ())}
        return [self.events[p] for p in sorted(found)]


class _PathMessages:
    """A leaf path's message entries found by id, made once per path for all its compactions."""

    __slots__ = ("recorded", "entries")

    def __init__(self, path: Sequence[AnyEntry]) -> None:
        from replaylab.compaction.invariants import recorded_messages

        #: entry id → its message (`invariants.recorded_messages`)
        self.recorded: dict[str, Any] = recorded_messages(path)
        #: entry id → the message entries of that id, in path order
        self.entries: dict[str, list[MessageEntry]] = {}
        for entry in path:
            if isinstance(entry, MessageEntry):
                self.entries.setdefault(entry.id, []).append(entry)

    def call_arguments(self, entry_id: Any, call_id: str) -> Any:
        """The arguments of call `call_id` in the first message entry `entry_id` that holds it."""
        for entry in self.entries.get(entry_id, ()):
            for call in message_calls(entry.message):
                if call.id == call_id:
                    return call.arguments
        return None


def _audit(
    path: Sequence[AnyEntry],
    index: int,
    windows: tuple[list[WindowMessage], list[WindowMessage]],
    mutating: _EventsByEntry,
    turns: Mapping[str, int],
    memo: ItemMemo | None,
    messages: _PathMessages,
) -> RecordedCompaction:
    from replaylab.compaction.invariants import check_mutations_kept
    from replaylab.compactors.recheck import summary_defects

    entry = path[index]
    assert isinstance(entry, CompactionEntry)
    before, after = windows  # just before the compaction and with it
    kept = {item.entry_id for item in after}
    span = [item for item in before if item.entry_id not in kept]
    turn = next((turns[path[i].id] for i in range(index - 1, -1, -1) if path[i].id in turns), None)
    where = _where(entry, turn)
    shown = mutating.shown_in(before)
    kept_check = check_mutations_kept(path, before, after, shown, turns, recorded=messages.recorded)
    # a kept entry of a recorded compaction is the recorded entry itself: only drops can happen
    dropped = [d for d in kept_check if d.code == Code.MUTATION_DROPPED]
    events = [_event(d, messages, entry.summary or "") for d in dropped]
    defects = [_dropped(d, event, where, entry.id) for d, event in zip(dropped, events)]
    lost = _lost_identifiers(span, after, memo)
    if lost:
        defects.append(
            Defect.of(
                Code.RECORDED_IDENTIFIER_LOST,
                f"{where}: {len(lost)} identifier(s) of the {len(span)} messages it summarized are visible nowhere "
                f"in the window after it: {', '.join(lost[:IDENTIFIERS_SHOWN])}"
                + (" …" if len(lost) > IDENTIFIERS_SHOWN else ""),
                expected="visible in its summary or the entries it kept",
                actual=lost[:IDENTIFIERS_KEPT],
                detail={"compaction_entry_id": entry.id, "lost": len(lost)},
                entry_id=entry.id,
                turn=turn,
            )
        )
    wiped = summary_defects(entry, before, after, list(path[: index + 1]), None, memo)
    defects += [
        Defect.of(
            Code.RECORDED_SUMMARY_INVALID,
            f"{where}: {d.message}",
            expected=d.expected,
            actual=d.actual,
            detail={"compaction_entry_id": entry.id},
            entry_id=entry.id,
            turn=turn,
        )
        for d in wiped
    ]
    view = RecordedCompactionView(
        entry_id=entry.id,
        turn=turn,
        tokens_before=int(tokens) if (tokens := number_or_none(entry.tokens_before)) is not None else None,
        from_hook=js_truthy(entry.from_hook),
        trigger=_trigger(entry),
        summary_chars=len(entry.summary or ""),
        summary=_summary_state(entry.summary or "") if wiped else "ok",
        summarized_messages=len(span),
        summarized_events=events,
        lost_identifiers=len(lost),
    )
    return RecordedCompaction(view, defects)


def _where(entry: CompactionEntry, turn: int | None) -> str:
    how = [
        f"turn {turn}" if turn is not None else None,
        "written by a hook (fromHook)" if js_truthy(entry.from_hook) else None,
    ]
    if (tokens := number_or_none(entry.tokens_before)) is not None:
        how.append(f"tokensBefore {int(tokens):,}")
    shown = ", ".join(h for h in how if h)
    return f"the recording's own compaction {entry.id}" + (f" ({shown})" if shown else "")


def _event(defect: Defect, messages: _PathMessages, summary: str) -> SummarizedEvent:
    """The summarized event of a MUTATION_DROPPED finding, with the argument values its summary names."""
    from replaylab.compaction.identifiers import argument_values

    arguments = messages.call_arguments(defect.detail.get("call_entry_id"), defect.where.tool_call_id or "")
    named = [value for value in dict.fromkeys(argument_values(arguments)) if len(value) >= 3 and value in summary]
    return SummarizedEvent(
        tool_call_id=defect.where.tool_call_id or "",
        tool=defect.where.tool or "",
        entry_id=defect.where.entry_id,
        turn=defect.where.turn,
        named_in_summary=[scrub_text(value) for value in named],
    )


def _dropped(defect: Defect, event: SummarizedEvent, where: str, compaction_id: str) -> Defect:
    """A MUTATION_DROPPED of the invariants as the recording's own finding."""
    call_id = defect.where.tool_call_id or ""
    what = defect.message.split(f" ({call_id}): ", 1)[0] + f" ({call_id})"  # mutating event <tool> <arguments> (<id>)
    named = (
        f"; its summary still names {', '.join(repr(v) for v in event.named_in_summary[:3])}"
        if event.named_in_summary
        else "; its summary names none of its arguments"
    )
    return Defect.of(
        Code.RECORDED_MUTATION_DROPPED,
        f"{where} summarized away {what}: not in the window after it{named}",
        expected="kept verbatim",
        actual="summarized",
        detail={
            **defect.detail,
            "compaction_entry_id": compaction_id,
            "named_in_summary": event.named_in_summary,
        },
        entry_id=defect.where.entry_id,
        tool_call_id=defect.where.tool_call_id,
        tool=defect.where.tool,
        turn=defect.where.turn,
    )


def _lost_identifiers(span: list[WindowMessage], after: list[WindowMessage], memo: ItemMemo | None) -> list[str]:
    """Identifiers of the summarized messages visible nowhere in the window after (as IDENTIFIER_LOST
    judges replaylab's own compactions: `checks.identifiers`)."""
    from replaylab.checks.identifiers import invisible_identifiers
    from replaylab.compaction.identifiers import item_scans
    from replaylab.transcript.model import identifier_text

    text_of = memo.identifier_text if memo is not None else identifier_text
    found = item_scans(memo).identifiers_in(text_of(item.message) for item in span)
    if not found:
        return []
    return invisible_identifiers(found, "\n".join(text_of(item.message) for item in after))


def _summary_state(summary: str) -> Any:
    if not summary.strip():
        return "empty"
    if any(marker in summary for marker in SUMMARY_UNAVAILABLE_MARKERS):
        return "unavailable"
    return "skeleton"


def _trigger(entry: CompactionEntry) -> str | None:
    details = entry.details if isinstance(entry.details, dict) else {}
    trigger = details.get("trigger")
    return str(trigger) if isinstance(trigger, str) else None
