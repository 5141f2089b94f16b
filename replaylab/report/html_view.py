"""The HTML report's view model (`replaylab.report.html`): what a session's section and the defect
tables show of an item — its defect rows, windows, ledger diff, side-by-side runs and legend of
lost values — clipped and scrubbed, for the template to lay out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson
from markupsafe import Markup

from replaylab.defects import Code, Defect
from replaylab.differences import Differences, differences_of
from replaylab.replay.trace import RunTrace, TurnTrace
from replaylab.results import ItemResult, LostValue, WindowItem
from replaylab.safety.ledger import LedgerView
from replaylab.scrub import scrub_data, scrub_prefix, scrub_text

#: clip limits (characters) of the values a section shows
VALUE_LIMIT = 400  # expected / actual / arguments / tool results / divergence values
TABLE_VALUE_LIMIT = 160  # expected / actual in the defect tables (the session section shows VALUE_LIMIT)
WINDOW_MAX_ENTRIES = 120  # even a full window shows at most this many entries (head, protected, tail)
EXCERPT_HEAD, EXCERPT_TAIL = 1, 1  # entries of an excerpt window ...
EXCERPT_PROTECTED = 1  # ... plus its first protected entries
DIVERGENCE_CONTEXT = 1  # turns shown before and after the diverging turn
MAX_LOST_ROWS = 50  # rows of an item's legend of lost values (all of them are in replaylab.json) ...
BRIEF_LOST_ROWS, BRIEF_LOST_VALUE = 3, 60  # ... and in a brief section, with values cut to this


@dataclass(frozen=True)
class Clip:
    """A scrubbed text cut to a limit; `more` is how many characters were left out (shown as a note)."""

    text: str
    more: int = 0


def clip(text: str | None, limit: int) -> Clip:
    """Scrub and cut (`scrub_prefix`: only a margin past the cut is ever scrubbed)."""
    text = text or ""
    if len(text) <= limit:
        return Clip(scrub_text(text))
    return Clip(scrub_prefix(text, limit), len(text) - limit)


def _result_clip(call: Any) -> Clip:
    """A tool result; one the report already keeps as an excerpt counts its full length."""
    shown = clip(call.result, VALUE_LIMIT)
    if call.result_chars is not None:
        shown = Clip(shown.text, call.result_chars - len(shown.text))
    return shown


def show_value(value: Any, limit: int = VALUE_LIMIT) -> Clip:
    """Expected / actual / argument values: strings as they are, anything else as compact JSON."""
    if value is None:
        return Clip("")
    if isinstance(value, str):
        return clip(value, limit)
    try:
        text = orjson.dumps(
            scrub_data(value), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str
        ).decode()
    except TypeError:
        text = repr(value)
    return clip(text, limit)


@dataclass
class DefectRow:
    defect: Defect
    item: ItemResult
    anchor: str
    expected_by_suite: bool
    expected: Clip
    actual: Clip
    message: Clip

    # the template asks a row's differences, nearest call and place several times each, and
    # scrubs their values anew at each ask: kept per row, asked once
    @cached_property
    def differences(self) -> list[LeafView]:
        """The differing leaves the defect names (windowed and scrubbed where they were made)."""
        return _leaf_views(differences_of(self.defect.detail))

    @cached_property
    def differences_more(self) -> int:
        return differences_of(self.defect.detail).more

    @cached_property
    def nearest(self) -> NearestView | None:
        """The nearest recorded call of a blocked call: a hint, shown apart from EXPECTED."""
        hint = self.defect.detail.get("nearest")
        if not isinstance(hint, dict) or hint.get("call") is None:
            return None
        return NearestView(
            label=str(hint.get("label") or "nearest recorded call (hint)"),
            call=show_value(hint["call"], TABLE_VALUE_LIMIT),
            method=str(hint.get("method") or ""),
            result=str(hint.get("result") or ""),
            leaves=_leaf_views(differences_of(hint)),
            is_expected=hint["call"] == scrub_data(self.defect.expected),
        )

    @property
    def expected_short(self) -> Clip:
        return _shorter(self.expected, TABLE_VALUE_LIMIT)

    @property
    def actual_short(self) -> Clip:
        return _shorter(self.actual, TABLE_VALUE_LIMIT)

    @cached_property
    def where(self) -> list[tuple[str, str]]:
        w = self.defect.where
        pairs = [
            ("entry", w.entry_id),
            ("turn", None if w.turn is None else str(w.turn)),
            ("call", w.tool_call_id),
            ("tool", w.tool),
            ("session", w.session),
        ]
        return [(k, v) for k, v in pairs if v]


@dataclass(frozen=True)
class LeafView:
    """One differing leaf as a row shows it: its path, both values (a missing side says so)."""

    path: str
    expected: Clip
    actual: Clip
    change: str


@dataclass(frozen=True)
class NearestView:
    label: str
    call: Clip
    method: str
    result: str
    leaves: list[LeafView]
    #: the hint is the very call EXPECTED shows (then it is not shown twice)
    is_expected: bool = False


def _leaf_views(diffs: Differences) -> list[LeafView]:
    return [
        LeafView(
            scrub_text(leaf.path),
            _leaf_value(leaf.expected, leaf.change == "extra"),
            _leaf_value(leaf.actual, leaf.change == "missing"),
            leaf.change,
        )
        for leaf in diffs.leaves
    ]


def _leaf_value(value: Any, absent: bool) -> Clip:
    """A leaf's value: a string in quotes (so `"1"` and `1` read apart), anything else as JSON."""
    if absent:
        return Clip("(no such key)")
    if isinstance(value, str):
        shown = clip(value, VALUE_LIMIT)
        return Clip(f'"{shown.text}"', shown.more)
    return Clip("null") if value is None else show_value(value)


def _shorter(c: Clip, limit: int) -> Clip:
    """An already scrubbed clip cut further (cutting scrubbed text cannot expose a secret)."""
    if len(c.text) <= limit:
        return c
    return Clip(c.text[:limit], c.more + len(c.text) - limit)


@dataclass(frozen=True)
class DroppedMark:
    """Why a window entry is marked dropped: the MUTATION_DROPPED event it belongs to (scrubbed)."""

    tool: str
    turn: int | None
    tool_call_id: str


@dataclass(frozen=True)
class CutMark:
    """Where the compaction cut in the window before it: right above `first_kept` (scrubbed);
    `protected_above`: entries above the cut that a safeguard compaction kept verbatim anyway."""

    first_kept: str
    protected_above: int = 0


@dataclass
class WindowRow:
    gap: int = 0  # > 0: this row stands for that many entries left out
    cut: CutMark | None = None  # set: this row is the compaction's cut, not an entry
    entry_id: str = ""
    role: str = ""
    tokens: int = 0
    protected: bool = False
    mutating: bool = False
    text: Clip = field(default_factory=lambda: Clip(""))
    dropped: DroppedMark | None = None
    restates: str = ""  # the recorded entry this one restates after a compaction (scrubbed)


@dataclass
class WindowView:
    rows: list[WindowRow]
    entries: int
    tokens: int
    protected: int
    excerpt: bool


@dataclass
class LedgerRow:
    event_id: str
    tool: str
    tool_class: str
    entry_id: str
    tool_call_id: str
    args_hash: str
    kept: bool | None  # None when there is no "after" ledger to compare with
    #: the recording holds it after the compaction point: the window at the cut cannot hold it
    later: bool = False


@dataclass
class LedgerDiff:
    before: LedgerView | None
    after: LedgerView | None
    rows: list[LedgerRow]
    missing_after: list[str]
    extra_after: list[str]
    #: the events after the compaction point, which the window at the cut is not compared on
    after_point: list[str] = field(default_factory=list)


@dataclass
class CallView:
    tool: str
    tool_call_id: str
    step: int
    mutating: bool
    source: str
    is_error: bool
    arguments: Clip
    result: Clip
    diverged: bool


@dataclass
class TurnCell:
    present: bool
    user: Clip
    calls: list[CallView]
    answer: Clip
    answer_diverged: bool


@dataclass
class SideBySide:
    rows: list[tuple[int, TurnCell, TurnCell]]  # (turn number, baseline, compacted)
    first_turn: int
    last_turn: int
    total_turns: int  # how many turns the runs replayed: turns `replayed[0]`–`replayed[1]`
    replayed: tuple[int, int]
    baseline_error: Clip
    compacted_error: Clip


@dataclass
class LostRow:
    """One row of an item's legend of lost values: the (scrubbed) entry and its value, clipped."""

    lost: LostValue
    value: Clip


@dataclass
class ItemView:
    item: ItemResult  # the scrubbed light copy: no windows, traces or summary text
    index: int | str  # `html.INDEX_MARK` in the sections rendered once and numbered later
    anchor: str
    failing: bool
    detail: str  # "full" | "excerpt" | "brief" (the size budget: `replaylab.report.html`)
    codes: list[str]
    defects: list[DefectRow]  # all (the defect tables at the top are built from these)
    shown_defects: list[DefectRow]  # listed in the session's own section
    defect_items: Markup  # their list as the section shows it (empty in a view only for the tables)
    reason: Clip
    ledger: LedgerDiff | None
    window_before: WindowView
    window_after: WindowView
    divergence_values: tuple[Clip, Clip] | None
    side_by_side: SideBySide | None
    summary: Clip
    saved_pct: float | None
    lost_rows: list[LostRow] = field(default_factory=list)  # the legend of the `⟨lost:N⟩` markers
    compactions: int = 1  # how many the scenario made (the legend numbers them only when several)
    #: the compacted run's overflow recovery chain, one line per chain and step (`report.recovery`)
    recovery: list[str] = field(default_factory=list)


def lost_rows(item: ItemResult, *, brief: bool) -> list[LostRow]:
    """The legend's rows; a brief section keeps a few, with short values (it must fit its reserve)."""
    rows, limit = (BRIEF_LOST_ROWS, BRIEF_LOST_VALUE) if brief else (MAX_LOST_ROWS, VALUE_LIMIT)
    # the light copy is scrubbed: its values need only the cut
    return [LostRow(lost, _shorter(Clip(lost.value), limit)) for lost in item.lost_values[:rows]]


def dropped_marks(item: ItemResult) -> dict[str, DroppedMark]:
    """Entry id → the MUTATION_DROPPED event it belongs to, for the entries the first compaction
    dropped: the window after it (the item's `window_after`) no longer holds them. An entry a
    later compaction dropped is still in that window, and its cut is not the one shown."""
    kept = {w.entry_id for w in item.window_after}
    marks: dict[str, DroppedMark] = {}
    for defect in item.defects:
        if defect.code != Code.MUTATION_DROPPED:
            continue
        listed = defect.detail.get("dropped") if isinstance(defect.detail, dict) else None
        ids = [i for i in listed if isinstance(i, str)] if isinstance(listed, list) else [defect.where.entry_id]
        mark = DroppedMark(
            tool=scrub_text(defect.where.tool or "?"),
            turn=defect.where.turn,
            tool_call_id=scrub_text(defect.where.tool_call_id or ""),
        )
        for entry_id in ids:
            if entry_id and entry_id not in kept:
                marks.setdefault(entry_id, mark)
    return marks


def window_view(
    entries: list[WindowItem],
    *,
    excerpt: bool,
    limit: int,
    protected_ids: set[str],
    dropped: dict[str, DroppedMark] | None = None,
    first_kept: str | None = None,
) -> WindowView:
    """All entries, or for an excerpt the head, the tail and the protected entries, with gaps marked.
    `dropped`: entries marked as part of a dropped mutating event; `first_kept`: the compaction's
    first kept entry, above which the cut is drawn. Neither a dropped entry nor the two entries
    on each side of the cut are ever left out, so an excerpt cannot hide what the finding is about."""

    def is_protected(entry: WindowItem) -> bool:
        return entry.protected or entry.entry_id in protected_ids

    dropped = dropped or {}
    head, tail, extra = (
        (EXCERPT_HEAD, EXCERPT_TAIL, EXCERPT_PROTECTED) if excerpt else (WINDOW_MAX_ENTRIES - 40, 20, 20)
    )
    n = len(entries)
    cut_at = next((i for i, e in enumerate(entries) if first_kept and e.entry_id == first_kept), None)
    keep = set(range(min(head, n))) | set(range(max(n - tail, 0), n))
    keep |= set([i for i, e in enumerate(entries) if is_protected(e) and i not in keep][:extra])
    keep |= {i for i, e in enumerate(entries) if e.entry_id in dropped}
    if cut_at is not None:
        keep |= {max(cut_at - 1, 0), cut_at}
    rows: list[WindowRow] = []
    previous = -1
    for i in sorted(keep):
        if i - previous > 1:
            rows.append(WindowRow(gap=i - previous - 1))
        entry = entries[i]
        if i == cut_at:
            above = sum(1 for e in entries[:i] if is_protected(e))
            rows.append(WindowRow(cut=CutMark(scrub_text(entry.entry_id or ""), above)))
        rows.append(
            WindowRow(
                entry_id=scrub_text(entry.entry_id or ""),
                role=scrub_text(entry.role),
                tokens=entry.tokens,
                protected=is_protected(entry),
                mutating=entry.mutating,
                text=clip(entry.text, limit),
                dropped=dropped.get(entry.entry_id or ""),
                restates=scrub_text(entry.restates or ""),
            )
        )
        previous = i
    if n - 1 - previous > 0:
        rows.append(WindowRow(gap=n - 1 - previous))
    return WindowView(
        rows=rows,
        entries=n,
        tokens=sum(e.tokens for e in entries),
        protected=sum(1 for e in entries if is_protected(e)),
        excerpt=len(keep) < n,
    )


def ledger_diff(
    before: LedgerView | None, after: LedgerView | None, after_point: list[str] | None = None
) -> LedgerDiff | None:
    """The recording's events up to the compaction point against the window the compaction left:
    the same span on both sides. Events after the point are listed as such, never as missing."""
    if before is None and after is None:
        return None
    later = set(after_point or [])
    after_ids = set(after.mutated_event_ids) if after else set()
    before_ids = set(before.mutated_event_ids) if before else set()
    events = (before.events if before else []) or (after.events if after else [])
    rows = [
        LedgerRow(
            event_id=e.event_id,
            tool=e.tool,
            tool_class=e.tool_class,
            entry_id=e.entry_id,
            tool_call_id=e.tool_call_id,
            args_hash=e.args_hash[:12],
            kept=(e.event_id in after_ids) if after is not None and e.event_id not in later else None,
            later=e.event_id in later,
        )
        for e in events
    ]
    span = None
    if before is not None:
        ids = [i for i in before.mutated_event_ids if i not in later]
        span = before.model_copy(update={"mutated_event_ids": ids, "replay_safe": not ids})
    return LedgerDiff(
        before=span,
        after=after,
        rows=rows,
        missing_after=[i for i in (span.mutated_event_ids if span else []) if after and i not in after_ids],
        extra_after=[i for i in (after.mutated_event_ids if after else []) if before and i not in before_ids],
        after_point=[i for i in (before.mutated_event_ids if before else []) if i in later],
    )


def side_by_side(item: ItemResult, limit: int) -> SideBySide | None:
    """The turns around the first divergence, baseline and compacted run aligned by turn number."""
    div = item.first_divergence
    if div is None or (item.baseline is None and item.compacted is None):
        return None
    base = _turns(item.baseline)
    comp = _turns(item.compacted)
    all_turns = sorted(set(base) | set(comp))
    if not all_turns:
        return None
    first, last = div.turn - DIVERGENCE_CONTEXT, div.turn + DIVERGENCE_CONTEXT
    shown = [t for t in all_turns if first <= t <= last] or all_turns[: 1 + 2 * DIVERGENCE_CONTEXT]
    rows = [
        (
            t,
            _cell(base.get(t), div if t == div.turn else None, limit),
            _cell(comp.get(t), div if t == div.turn else None, limit),
        )
        for t in shown
    ]
    return SideBySide(
        rows=rows,
        first_turn=shown[0],
        last_turn=shown[-1],
        total_turns=len(all_turns),
        replayed=(all_turns[0], all_turns[-1]),
        baseline_error=clip(item.baseline.error if item.baseline else "", VALUE_LIMIT),
        compacted_error=clip(item.compacted.error if item.compacted else "", VALUE_LIMIT),
    )


def _turns(trace: RunTrace | None) -> dict[int, TurnTrace]:
    return {t.turn: t for t in trace.turns} if trace else {}


def _cell(turn: TurnTrace | None, div: Any, limit: int) -> TurnCell:
    if turn is None:
        return TurnCell(present=False, user=Clip(""), calls=[], answer=Clip(""), answer_diverged=False)
    tool_div = div is not None and div.what != "answer"
    calls = [
        CallView(
            tool=scrub_text(c.tool),
            tool_call_id=scrub_text(c.tool_call_id),
            step=c.step,
            mutating=c.mutating,
            source=c.source,
            is_error=c.is_error,
            arguments=show_value(c.arguments),
            result=_result_clip(c),
            diverged=tool_div and (div.step is None or c.step == div.step),
        )
        for c in turn.tool_calls
    ]
    return TurnCell(
        present=True,
        user=clip(turn.user_text, VALUE_LIMIT),
        calls=calls,
        answer=clip(turn.answer, limit),
        answer_diverged=div is not None and div.what == "answer",
    )
