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

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, Template
from markupsafe import Markup

from replaylab import caches
from replaylab.defects import SEVERITY_ORDER
from replaylab.printable import visible
from replaylab.report.agent_line import agent_verification_line, agents_line
from replaylab.report.causes import cause_line
from replaylab.report.counts import items_phrase

# re-exported: the report's tests read the view's limits as the page's
from replaylab.report.html_view import EXCERPT_HEAD as EXCERPT_HEAD
from replaylab.report.html_view import EXCERPT_PROTECTED as EXCERPT_PROTECTED
from replaylab.report.html_view import EXCERPT_TAIL as EXCERPT_TAIL
from replaylab.report.html_view import (
    VALUE_LIMIT,
    Clip,
    DefectRow,
    ItemView,
    clip,
    dropped_marks,
    ledger_diff,
    lost_rows,
    show_value,
    side_by_side,
    window_view,
)
from replaylab.report.recovery import recovery_lines
from replaylab.report.svg import Bar, bar_chart
from replaylab.results import OUTCOME_LABELS, ItemResult, RunMeta, RunReport
from replaylab.scrub import scrub_data, scrub_text

#: clip limits (characters) — failing sessions get room, passing ones an excerpt (and `html_view`'s)
TEXT_FAILING = 1500  # messages, reasons, answers of failing sessions
TEXT_PASSING = 100  # window entries of passing sessions
WINDOW_TEXT = 800  # one window entry of a failing session (the pipeline already stores excerpts)
SUMMARY_LIMIT = 4000
FULL_DETAIL_BYTES = 2_500_000  # HTML spent on failing sessions with full windows; excerpts after that
SECTIONS_BYTES = 8_000_000  # HTML of all session sections, with ...
BRIEF_RESERVE = 4_000  # ... this much kept for each session still to come (a "brief" section fits in it)
BRIEF_MAX_DEFECTS = 8  # defects listed in a brief section (all of them are in the defect tables / JSON)
LEVELS = ("full", "excerpt", "brief")
MAX_DEFECT_ROWS = 300  # per defect table; the per-session sections list every defect
MAX_CHART_BARS = 60

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
    shared = SharedRows()
    return {level: item_section(item, light, level, shared) for level in levels}


def item_section(item: ItemResult, light: ItemResult, level: str, shared: SharedRows | None = None) -> str:
    """`item`'s HTML section at `level` (not "brief"), with `INDEX_MARK` for its index; `light`:
    its scrubbed light copy (`_light_copy`); `shared`: what its sections at other levels made of
    its defects, to reuse."""
    return str(_sections_macro()(_item_view(INDEX_MARK, item, level, light, shared=shared)))


@dataclass
class SharedRows:
    """An item's defect rows and the list of them its section shows, made once for all the
    levels its section is rendered at: they are the same at every level but "brief" (which lists
    a few), and an item with thousands of defects spends most of its sections' time on them."""

    light: ItemResult | None = None  # the item's scrubbed light copy the rows were made from
    rows: list[DefectRow] | None = None
    #: the rendered list of the rows, by whether it is a brief section's
    listed: dict[bool, Markup] = field(default_factory=dict)


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
        shared = SharedRows()

        def section_at(level: int) -> str:
            if level == len(LEVELS) - 1:
                return ""  # brief: not made ahead of the report, as in `place_rendered`
            section = rendered[LEVELS[level]] = item_section(item, light, LEVELS[level], shared)
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
        level, section = budget.place(raw.outcome in FAILING, partial(_section_at, index, raw, views, SharedRows()))
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


def _section_at(index: int, raw: ItemResult, views: dict[int, ItemView], shared: SharedRows, level: int) -> Markup:
    """The section of the report's `index`th item, `raw`, at `level` (into `LEVELS`): the one
    rendered where it ran, placed; else rendered now (its view kept in `views`, its defect rows
    in `shared` for its other levels)."""
    ready = (raw._sections or {}).get(LEVELS[level])
    if ready is not None:
        return Markup(ready.replace(INDEX_MARK, str(index)))
    if raw._sections is not None and raw._report_json is not None and level < len(LEVELS) - 1:
        # a light copy without this level's section (its run's walk of the budget took it for
        # brief): its windows and runs read back from its report JSON, scrubbed already
        view = _item_view(index, ItemResult.model_validate_json(raw._report_json), LEVELS[level], raw, shared=shared)
    else:
        view = _item_view(index, raw, LEVELS[level], shared=shared)
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
    index: int | str,
    raw: ItemResult,
    detail: str,
    light: ItemResult | None = None,
    tables_only: bool = False,
    shared: SharedRows | None = None,
) -> ItemView:
    """`tables_only`: the view only feeds the defect tables and the charts (the item's section was
    rendered where it ran), so its ledger diff and reason are left empty (a brief view has no
    windows): at the end of an xdist run, when nothing else runs, the ledger diffs would be a large
    share of placing the rendered sections. `shared`: the defect rows of the same item's view at
    another level (the same `index` and `light`), and their lists, reused and kept."""
    if light is None:
        light = shared.light if shared is not None and shared.light is not None else _light_copy(raw)
    item = light
    failing = item.outcome in FAILING
    anchor = f"item-{index}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", item.id)[:80].strip("-")
    if index == INDEX_MARK:
        anchor = Markup(anchor)  # letters, digits, "-", "_" and the mark: nothing to escape, the mark kept raw
    expected = set(item.expected_defects)
    defects = (
        shared.rows
        if shared is not None and shared.rows is not None
        else [
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
    )
    shown_defects = defects[:BRIEF_MAX_DEFECTS] if detail == "brief" else defects
    brief = detail == "brief"
    listed = shared.listed.get(brief) if shared is not None else None
    if listed is None:
        listed = Markup("") if tables_only else _defect_items_macro()(shown_defects, brief)
    if shared is not None and not tables_only:
        shared.light, shared.rows, shared.listed[brief] = item, defects, listed
    compaction = item.compaction
    protected_ids = set(compaction.protected_entry_ids) if compaction else set()
    full = detail == "full"
    limit = WINDOW_TEXT if full else TEXT_PASSING
    windows = ([], []) if detail == "brief" else (raw.window_before, raw.window_after)
    before = window_view(
        windows[0],
        excerpt=not full,
        limit=limit,
        protected_ids=protected_ids,
        dropped=dropped_marks(raw),
        # the raw item's: matched with the raw entry ids, shown scrubbed
        first_kept=(raw.compaction.cut_entry_id or raw.compaction.first_kept_entry_id)
        if raw.compaction and raw.compaction.success
        else None,
    )
    after = window_view(windows[1], excerpt=not full, limit=limit, protected_ids=protected_ids)
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
        defect_items=listed,
        reason=clip("" if tables_only else item.reason, TEXT_FAILING),
        ledger=None if tables_only else ledger_diff(item.ledger_before, item.ledger_after, item.ledger_after_point),
        window_before=before,
        window_after=after,
        divergence_values=(show_value(div.baseline), show_value(div.compacted)) if div else None,
        side_by_side=None if detail == "brief" else side_by_side(raw, TEXT_FAILING if failing else VALUE_LIMIT),
        summary=Clip("") if detail == "brief" else clip(summary_text, SUMMARY_LIMIT if full else TEXT_PASSING * 3),
        saved_pct=saved_pct,
        lost_rows=lost_rows(item, brief=detail == "brief"),
        compactions=compaction.compactions if compaction else 1,
        recovery=[] if tables_only else [scrub_text(line) for line in recovery_lines(raw.compacted)],
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
def _macros() -> Any:
    # a template's macros are attributes its module gains when it is rendered
    return _template().environment.get_template("macros.html.j2").module


def _sections_macro() -> Any:
    return _macros().item_section


def _defect_items_macro() -> Any:
    return _macros().defect_items


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
