"""`reports/replaylab.html`: one self-contained page a QA engineer reads offline.

Why the view model lives here and not in the template: truncation, excerpts, ordering and the
ledger diff are logic that tests can reach; the template only lays them out. Jinja2 runs with
autoescape on, so transcript text (arbitrary tool output) can only ever appear as text.

Scrubbing: every string that reaches the template is scrubbed. Small fields are scrubbed whole
(a "light" copy of each item without windows and traces); the heavy ones (windows, run traces,
summaries) are cut first and scrubbed after, with a margin past the cut so a secret straddling
the cut is still recognised. Scrubbing only what is shown keeps 1,000 sessions fast: the regex
scrubber runs at a few MB/s and a run's transcripts are tens of MB.

Size budget: 1,000 sessions must stay under 10 MB whatever fails. Passing sessions show window
excerpts (head, protected entries, tail); failing and erroring ones show their whole window while
a run-wide budget of HTML bytes lasts, excerpts after it. Every session is rendered on its own
and a section that would leave less than `BRIEF_RESERVE` bytes for each session still to come is
rendered again "brief" (verdict, defects, compaction, ledger; no windows or runs), and so are all
after it. Each cut says so and points to replaylab.json. Long texts are clipped with a visible
"… N more chars" note everywhere. Sections are rendered where their items ran (`item_sections`)
and placed here; a run without xdist walks the budget as its items finish (`SectionBudget`), so
an item shown brief gets no other section rendered.

The page works without JavaScript (everything is in the DOM; the filter bar stays hidden). The
one inline script, the verdict / defect-code filter (preset from the URL: `replaylab.html?verdict=
failed&code=MUTATION_DROPPED`, handy for links from CI), is allowed by a CSP hash; the CSP forbids
every network load, so the file cannot reach anything even if opened from a web server.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson
from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, Template
from markupsafe import Markup

from replaylab import caches
from replaylab.defects import SEVERITY_ORDER, Code, Defect
from replaylab.differences import Differences, differences_of
from replaylab.printable import visible
from replaylab.replay.trace import RunTrace, TurnTrace
from replaylab.report.agent_line import agent_verification_line, agents_line
from replaylab.report.causes import cause_line
from replaylab.report.counts import items_phrase
from replaylab.report.recovery import recovery_lines
from replaylab.report.svg import Bar, bar_chart
from replaylab.results import OUTCOME_LABELS, ItemResult, LostValue, RunMeta, RunReport, WindowItem
from replaylab.safety.ledger import LedgerView
from replaylab.scrub import scrub_data, scrub_prefix, scrub_text

#: clip limits (characters) — failing sessions get room, passing ones an excerpt
TEXT_FAILING = 1500  # messages, reasons, answers of failing sessions
TEXT_PASSING = 100  # window entries of passing sessions
WINDOW_TEXT = 800  # one window entry of a failing session (the pipeline already stores excerpts)
VALUE_LIMIT = 400  # expected / actual / arguments / tool results / divergence values
TABLE_VALUE_LIMIT = 160  # expected / actual in the defect tables (the session section shows VALUE_LIMIT)
SUMMARY_LIMIT = 4000
WINDOW_MAX_ENTRIES = 120  # even a full window shows at most this many entries (head, protected, tail)
EXCERPT_HEAD, EXCERPT_TAIL = 1, 1  # entries of an excerpt window ...
EXCERPT_PROTECTED = 1  # ... plus its first protected entries
FULL_DETAIL_BYTES = 2_500_000  # HTML spent on failing sessions with full windows; excerpts after that
SECTIONS_BYTES = 8_000_000  # HTML of all session sections, with ...
BRIEF_RESERVE = 4_000  # ... this much kept for each session still to come (a "brief" section fits in it)
BRIEF_MAX_DEFECTS = 8  # defects listed in a brief section (all of them are in the defect tables / JSON)
LEVELS = ("full", "excerpt", "brief")
DIVERGENCE_CONTEXT = 1  # turns shown before and after the diverging turn
MAX_DEFECT_ROWS = 300  # per defect table; the per-session sections list every defect
MAX_CHART_BARS = 60
MAX_LOST_ROWS = 50  # rows of an item's legend of lost values (all of them are in replaylab.json) ...
BRIEF_LOST_ROWS, BRIEF_LOST_VALUE = 3, 60  # ... and in a brief section, with values cut to this

HEAVY_FIELDS: dict[str, Any] = {
    "window_before": True,
    "window_after": True,
    "baseline": True,
    "compacted": True,
    "compaction": {"summary_text": True},
}

OUTCOMES = ("passed", "failed", "error", "uncompacted", "skipped")
#: outcomes whose sessions open with full detail
FAILING = ("failed", "error", "uncompacted")

FILTER_JS = """(function () {
  var doc = document;
  var bar = doc.getElementById('filters');
  var verdict = doc.getElementById('filter-verdict');
  var code = doc.getElementById('filter-code');
  var status = doc.getElementById('filter-status');
  if (!bar || !verdict || !code || !status) { return; }
  function matches(el, attr) {
    var v = verdict.value, c = code.value;
    var codes = ' ' + (el.getAttribute(attr) || '') + ' ';
    return (!v || el.getAttribute('data-verdict') === v) && (!c || codes.indexOf(' ' + c + ' ') >= 0);
  }
  function apply() {
    var items = doc.querySelectorAll('.item'), shown = 0, i;
    for (i = 0; i < items.length; i++) {
      var ok = matches(items[i], 'data-codes');
      items[i].hidden = !ok;
      if (ok) { shown++; }
    }
    var rows = doc.querySelectorAll('.defect-row');
    for (i = 0; i < rows.length; i++) { rows[i].hidden = !matches(rows[i], 'data-code'); }
    status.textContent = shown + ' of ' + items.length + ' items shown';
    var counts = doc.querySelectorAll('.count-of'), filtered = verdict.value || code.value;
    for (i = 0; i < counts.length; i++) {
      var el = counts[i], scope = el.getAttribute('data-scope');
      var total = Number(el.getAttribute('data-total')), listed = Number(el.getAttribute('data-listed'));
      var sel = scope === 'sessions' ? '.item' : '#' + scope + '-table .defect-row';
      var all = doc.querySelectorAll(sel), k = 0, j;
      for (j = 0; j < all.length; j++) { if (!all[j].hidden) { k++; } }
      el.textContent = !filtered ? total.toLocaleString('en-US')
        : k + ' of ' + (listed < total ? 'the first ' + listed + ' of ' : '') + total.toLocaleString('en-US');
    }
  }
  function preset(select, value) {
    for (var i = 0; value && i < select.options.length; i++) {
      if (select.options[i].value === value) { select.value = value; }
    }
  }
  var query = new URLSearchParams(window.location.search);
  preset(verdict, query.get('verdict'));
  preset(code, query.get('code'));
  verdict.addEventListener('change', apply);
  code.addEventListener('change', apply);
  bar.hidden = false;
  apply();
  doc.body.setAttribute('data-js', 'ready');
})();"""


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

    @property
    def differences(self) -> list[LeafView]:
        """The differing leaves the defect names (windowed and scrubbed where they were made)."""
        return _leaf_views(differences_of(self.defect.detail))

    @property
    def differences_more(self) -> int:
        return differences_of(self.defect.detail).more

    @property
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

    @property
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
    index: int | str  # `INDEX_MARK` in the sections rendered once and numbered later
    anchor: str
    failing: bool
    detail: str  # "full" | "excerpt" | "brief" (see the size budget above)
    codes: list[str]
    defects: list[DefectRow]  # all (the defect tables at the top are built from these)
    shown_defects: list[DefectRow]  # listed in the session's own section
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


#: a section's index in its anchors until the report places it (`item_sections`). A raw "<" can
#: come into a rendered section only from the template's own markup (autoescape turns every "<"
#: of data into "&lt;"), and the template has no "<index>": replacing the mark touches nothing else
INDEX_MARK = "<index>"


def item_sections(item: ItemResult, light: ItemResult | None = None) -> dict[str, str]:
    """`item`'s HTML section at each detail level the run-wide size budget can give it without
    knowing the other sessions — "full" and "excerpt" for a failing one, "excerpt" for the others
    ("brief" needs only the light item the report holds anyway) — with `INDEX_MARK` for its index.

    Why: an xdist worker renders its items' sections while the workers run, and the controller,
    which alone writes the report at the end of the run, only places them (rendering them there
    would add to the run's wall time while the other cores sit idle). `light`: the item's scrubbed
    light copy when the caller has it (`_light_copy`), made here once for all levels otherwise."""
    levels = ("full", "excerpt") if item.outcome in FAILING else ("excerpt",)
    light = light if light is not None else _light_copy(item)
    return {level: item_section(item, light, level) for level in levels}


def item_section(item: ItemResult, light: ItemResult, level: str) -> str:
    """`item`'s HTML section at `level` (not "brief"), with `INDEX_MARK` for its index; `light`:
    its scrubbed light copy (`_light_copy`)."""
    return str(_sections_macro()(_item_view(INDEX_MARK, item, level, light)))


class SectionBudget:
    """The run-wide size budget of the sessions' sections (module docstring), walked in report
    order: the detail level each session gets. `render_html` walks it to place the sections; a
    run without xdist walks it as its items finish (`ResultCollector`), so that an item the
    report will show brief has no other section rendered for it — in a large run most are."""

    def __init__(self, sessions: int):
        self.sessions = sessions
        self.index = self.spent_full = self.spent_all = 0
        #: the least detailed level used so far because of the budget; later sessions stay at or below it
        self.floor = 0

    @property
    def brief_only(self) -> bool:
        """Every session from here on is shown brief, whatever its sections' sizes."""
        return self.floor == len(LEVELS) - 1

    def place(self, failing: bool, section_at: Callable[[int], str]) -> tuple[int, str]:
        """The level (index into `LEVELS`) the next session is shown at, and its section there
        (`section_at(level)`: the section at that level, its index filled in)."""
        level = max(0 if failing and self.spent_full < FULL_DETAIL_BYTES else 1, self.floor)
        reserve = (self.sessions - self.index - 1) * BRIEF_RESERVE
        while True:
            section = section_at(level)
            size = len(section.encode("utf-8"))
            if level == len(LEVELS) - 1 or self.spent_all + size + reserve <= SECTIONS_BYTES:
                break
            level += 1
            self.floor = max(self.floor, level)
        self.spent_all += size
        if level == 0:
            self.spent_full += size
        self.index += 1
        return level, section

    def place_rendered(self, item: ItemResult, sections: dict[str, str]) -> None:
        """Walks the next session, `item`, past, given the sections rendered where it ran
        (`item_sections`). Ahead of the report its "brief" section is not made: once a session
        is brief, every later one is (`brief_only`), whatever the sizes spent."""

        def section_at(level: int) -> str:
            ready = sections.get(LEVELS[level])
            return "" if ready is None else ready.replace(INDEX_MARK, str(self.index))

        self.place(item.outcome in FAILING, section_at)

    def place_rendering(self, item: ItemResult, light: ItemResult) -> dict[str, str]:
        """Walks the next session, `item` (`light`: its scrubbed light copy), past, rendering only
        the sections the walk asks for, and returns them (`item_sections`' shape): a failing
        session ahead of `item_sections` would have both levels rendered, and the walk keeps
        one. The report renders any other level it asks for from the item's JSON (`_section_at`)."""
        rendered: dict[str, str] = {}

        def section_at(level: int) -> str:
            if level == len(LEVELS) - 1:
                return ""  # brief: not made ahead of the report, as in `place_rendered`
            section = rendered[LEVELS[level]] = item_section(item, light, LEVELS[level])
            return section.replace(INDEX_MARK, str(self.index))

        self.place(item.outcome in FAILING, section_at)
        return rendered


def render_html(report: RunReport) -> str:
    """The whole report as one HTML document; every string in it is scrubbed and escaped."""
    items: list[ItemView] = []
    sections: list[Markup] = []
    budget = SectionBudget(len(report.items))
    for index, raw in enumerate(report.items):
        views: dict[int, ItemView] = {}
        level, section = budget.place(raw.outcome in FAILING, partial(_section_at, index, raw, views))
        view = views.get(level)
        items.append(view if view is not None else _item_view(index, raw, "brief", tables_only=True))
        sections.append(Markup(section))
    rows = [row for view in items for row in view.defects]
    rows.sort(key=lambda r: (SEVERITY_ORDER.get(r.defect.severity, 9), r.item.id))
    # a negative control's expected findings are what it exists to show: listed apart, collapsed,
    # and never in the tables or the chart of what needs attention
    expected_rows = [r for r in rows if r.expected_by_suite]
    rows = [r for r in rows if not r.expected_by_suite]
    blocking = [r for r in rows if r.defect.severity == "blocking"]
    others = [r for r in rows if r.defect.severity != "blocking"]
    return _template().render(
        schema_version=report.schema_version,
        meta=RunMeta.model_validate(scrub_data(report.meta.model_dump(mode="json"))),
        totals=report.totals,
        regressions=[clip(line, TEXT_FAILING) for line in report.regressions_vs_baseline[:200]],
        regressions_total=len(report.regressions_vs_baseline),
        outcomes=OUTCOMES,
        items=items,
        item_sections=sections,
        blocking=blocking[:MAX_DEFECT_ROWS],
        blocking_total=len(blocking),
        others=others[:MAX_DEFECT_ROWS],
        others_total=len(others),
        expected_rows=expected_rows[:MAX_DEFECT_ROWS],
        expected_total=len(expected_rows),
        codes=sorted({r.defect.code.value for r in rows + expected_rows}),
        chart_savings=_savings_chart(items),
        chart_defects=_defects_chart(rows, len(expected_rows)),
        script=Markup(FILTER_JS),
        csp=_csp(FILTER_JS),
        verdict=_verdict(report),
        agent_line=agent_verification_line(report.totals),
        agents_line=agents_line(report.totals),
        causes=[(g.outcome, g.key, scrub_text(cause_line(g))) for g in report.totals.causes],
        items_phrase=items_phrase(report.items),
    )


# ---------------------------------------------------------------- view model


def _section_at(index: int, raw: ItemResult, views: dict[int, ItemView], level: int) -> Markup:
    """The section of the report's `index`th item, `raw`, at `level` (into `LEVELS`): the one
    rendered where it ran, placed; else rendered now (its view kept in `views`)."""
    ready = (raw._sections or {}).get(LEVELS[level])
    if ready is not None:
        return Markup(ready.replace(INDEX_MARK, str(index)))
    if raw._sections is not None and raw._report_json is not None and level < len(LEVELS) - 1:
        # a light copy without this level's section (its run's walk of the budget took it for
        # brief): its windows and runs read back from its report JSON, scrubbed already
        view = _item_view(index, ItemResult.model_validate_json(raw._report_json), LEVELS[level], raw)
    else:
        view = _item_view(index, raw, LEVELS[level])
    views[level] = view
    return Markup(_sections_macro()(view))


def _light_copy(raw: ItemResult) -> ItemResult:
    """The item without its heavy fields, scrubbed (the item itself when it was read back from its
    scrubbed JSON): what a section shows besides the clipped windows, runs and summary."""
    return (
        raw
        if raw._scrubbed
        else ItemResult.model_validate(scrub_data(raw.model_dump(mode="json", exclude=HEAVY_FIELDS)))
    )


def _item_view(
    index: int | str, raw: ItemResult, detail: str, light: ItemResult | None = None, tables_only: bool = False
) -> ItemView:
    """`tables_only`: the view only feeds the defect tables and the charts (the item's section was
    rendered where it ran), so its ledger diff and reason are left empty (a brief view has no
    windows): at the end of an xdist run, when nothing else runs, the ledger diffs would be a large
    share of placing the rendered sections."""
    item = light if light is not None else _light_copy(raw)
    failing = item.outcome in FAILING
    anchor = f"item-{index}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", item.id)[:80].strip("-")
    if index == INDEX_MARK:
        anchor = Markup(anchor)  # letters, digits, "-", "_" and the mark: nothing to escape, the mark kept raw
    expected = set(item.expected_defects)
    defects = [
        DefectRow(
            defect=d,
            item=item,
            anchor=anchor,
            expected_by_suite=d.code.value in expected,
            expected=show_value(d.expected),
            actual=show_value(d.actual),
            message=clip(d.message, TEXT_FAILING),
        )
        for d in sorted(item.defects, key=lambda d: (SEVERITY_ORDER.get(d.severity, 9), d.code.value))
    ]
    shown_defects = defects[:BRIEF_MAX_DEFECTS] if detail == "brief" else defects
    compaction = item.compaction
    protected_ids = set(compaction.protected_entry_ids) if compaction else set()
    full = detail == "full"
    limit = WINDOW_TEXT if full else TEXT_PASSING
    windows = ([], []) if detail == "brief" else (raw.window_before, raw.window_after)
    before = _window(
        windows[0],
        excerpt=not full,
        limit=limit,
        protected_ids=protected_ids,
        dropped=_dropped_marks(raw),
        # the raw item's: matched with the raw entry ids, shown scrubbed
        first_kept=(raw.compaction.cut_entry_id or raw.compaction.first_kept_entry_id)
        if raw.compaction and raw.compaction.success
        else None,
    )
    after = _window(windows[1], excerpt=not full, limit=limit, protected_ids=protected_ids)
    saved_pct = None
    if compaction and compaction.original_tokens:
        saved_pct = 100.0 * compaction.token_saved / compaction.original_tokens
    div = item.first_divergence
    summary_text = raw.compaction.summary_text if raw.compaction else ""
    return ItemView(
        item=item,
        index=index,
        anchor=anchor,
        failing=failing,
        detail=detail,
        codes=sorted({d.code.value for d in item.defects}),
        defects=defects,
        shown_defects=shown_defects,
        reason=clip("" if tables_only else item.reason, TEXT_FAILING),
        ledger=None if tables_only else _ledger_diff(item.ledger_before, item.ledger_after, item.ledger_after_point),
        window_before=before,
        window_after=after,
        divergence_values=(show_value(div.baseline), show_value(div.compacted)) if div else None,
        side_by_side=None if detail == "brief" else _side_by_side(raw, TEXT_FAILING if failing else VALUE_LIMIT),
        summary=Clip("") if detail == "brief" else clip(summary_text, SUMMARY_LIMIT if full else TEXT_PASSING * 3),
        saved_pct=saved_pct,
        lost_rows=_lost_rows(item, brief=detail == "brief"),
        compactions=compaction.compactions if compaction else 1,
        recovery=[] if tables_only else [scrub_text(line) for line in recovery_lines(raw.compacted)],
    )


def _lost_rows(item: ItemResult, *, brief: bool) -> list[LostRow]:
    """The legend's rows; a brief section keeps a few, with short values (it must fit its reserve)."""
    rows, limit = (BRIEF_LOST_ROWS, BRIEF_LOST_VALUE) if brief else (MAX_LOST_ROWS, VALUE_LIMIT)
    # the light copy is scrubbed: its values need only the cut
    return [LostRow(lost, _shorter(Clip(lost.value), limit)) for lost in item.lost_values[:rows]]


def _dropped_marks(item: ItemResult) -> dict[str, DroppedMark]:
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


def _window(
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


def _ledger_diff(
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


def _side_by_side(item: ItemResult, limit: int) -> SideBySide | None:
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


# ---------------------------------------------------------------- charts, verdict, CSP


def _savings_chart(items: list[ItemView]) -> Markup:
    with_compaction = [v for v in items if v.item.compaction is not None]
    chosen = with_compaction
    note = ""
    if len(with_compaction) > MAX_CHART_BARS:
        chosen = sorted(with_compaction, key=lambda v: -v.item.compaction.token_saved)[:MAX_CHART_BARS]  # type: ignore[union-attr]
        chosen.sort(key=lambda v: v.index)
        note = f"({MAX_CHART_BARS} largest of {len(with_compaction)} items)"
    # one suite file: its name goes in the note once, and each bar keeps room for recording and scenario
    suite_files = {view.item.id.split("::", 1)[0] for view in chosen}
    single = len(suite_files) == 1 and all("::" in view.item.id for view in chosen)
    if single:
        note = f"{next(iter(suite_files))} {note}".strip()
    bars = []
    for view in chosen:
        c = view.item.compaction
        assert c is not None
        pct = f" ({view.saved_pct:.0f}%)" if view.saved_pct is not None else ""
        bars.append(
            Bar(
                label=view.item.id.split("::", 1)[1] if single else view.item.id,
                value=c.token_saved,
                href="#" + view.anchor,
                css_class=f"bar bar-{view.item.outcome}",
                value_text=f"{c.token_saved:,}{pct}",
            )
        )
    return bar_chart("chart-savings", "Tokens saved by compaction, per item", bars, note=note)


def _defects_chart(rows: list[DefectRow], expected: int) -> Markup:
    counts: dict[str, tuple[int, str]] = {}
    for r in rows:
        n, _ = counts.get(r.defect.code.value, (0, r.defect.severity))
        counts[r.defect.code.value] = (n + 1, r.defect.severity)
    ordered = sorted(counts.items(), key=lambda kv: (SEVERITY_ORDER.get(kv[1][1], 9), -kv[1][0], kv[0]))
    bars = [Bar(label=code, value=n, css_class=f"bar sev-{sev}") for code, (n, sev) in ordered]
    note = f"(not counting {expected:,} expected by negative controls)" if expected else ""
    return bar_chart("chart-defects", "Defects by code", bars, note=note)


def _verdict(report: RunReport) -> str:
    t = report.totals
    if t.failed or t.error or t.uncompacted:
        return "fail"
    if t.items == 0 or t.skipped == t.items:
        return "empty"
    return "pass"


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def prepare() -> None:
    """Load the templates now (from the bytecode cache), not when the first report is rendered."""
    _sections_macro()


@caches.lru("report.sections_macro", maxsize=1)
def _sections_macro() -> Any:
    # a template's macros are attributes its module gains when it is rendered
    return _template().environment.get_template("macros.html.j2").module.item_section  # type: ignore[attr-defined]


@caches.lru("report.template", maxsize=1)
def _template() -> Template:
    from pathlib import Path

    env = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
        finalize=_visible,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters["num"] = lambda n: f"{n:,}"
    env.globals["outcome_labels"] = OUTCOME_LABELS
    return env.get_template("report.html.j2")


def _visible(value: Any) -> Any:
    """Every value the template prints, as text that shows what it holds: control characters
    (ESC, BEL) spelled out and invisible or direction-changing ones named (`printable.visible`),
    line breaks kept. A compactor's stderr, a tool's error or a tool name reaches the page so,
    never as a sequence that hides or turns around what follows. The template's own markup
    (`Markup`) is left as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


class _TemplateCache(FileSystemBytecodeCache):
    """Jinja's compiled templates, kept between runs in Jinja's per-user folder in the temp
    directory (which Jinja makes 0700 and refuses unless this user owns it). Why: compiling both
    templates is slow in every process that renders — the end of each run, and each xdist
    worker — and loading them compiled is not. Jinja keys each entry by the template's source
    and Python's bytecode version. A cache that cannot be written or read is skipped: the report
    is rendered all the same."""

    def load_bytecode(self, bucket: Any) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: Any) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


#: the compiled templates' file names: Jinja compiles `finalize` (`_visible`) into the code, so a
#: template compiled without it — another version's, sharing the per-user folder — is not this one
BYTECODE_PATTERN = "__replaylab_visible_%s.cache"


def _bytecode_cache() -> _TemplateCache | None:
    try:
        return _TemplateCache(pattern=BYTECODE_PATTERN)
    except (OSError, RuntimeError):  # no usable per-user folder (RuntimeError: Jinja found it unsafe)
        return None
