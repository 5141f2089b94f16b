"""`reports/replaylab.md`: the short, regressions-first summary for `$GITHUB_STEP_SUMMARY` / PR comments.

Why so terse: CI summaries are read at a glance and GitHub caps a step summary at 1 MiB, so the
markdown lists only what needs attention (unexpected blocking defects, regressions, errors,
failing sessions), each list capped, and points to the HTML report for the rest.

Transcript text reaches markdown scrubbed (only what is shown is scrubbed), on one line (line
breaks and control characters escaped, bidi overrides named: `replaylab.printable`), clipped,
and with HTML and table syntax neutralised (`&`, `<`, `>` as entities; `|` escaped), so a tool
output cannot inject markup into the rendered summary or forge a line of it.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from replaylab.defects import SEVERITY_ORDER, Defect
from replaylab.differences import differences_of
from replaylab.printable import printable
from replaylab.report.agent_line import agent_verification_line, agents_line
from replaylab.report.causes import cause_line
from replaylab.report.counts import expected_phrase, items_phrase, unexpected_phrase
from replaylab.report.recovery import recovery_lines
from replaylab.report.run import is_baseline_warning
from replaylab.results import ItemResult, RunReport
from replaylab.scrub import SCRUB_MARGIN, scrub_data, scrub_text

MAX_ROWS = 25  # per table / list
CELL_LIMIT = 140
MAX_LOST_VALUES = 10  # legend lines per listed session
LOST_VALUE_LIMIT = 60  # characters of a lost value in its legend line

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def render_markdown(report: RunReport) -> str:
    """Markdown summary: verdict line, counts, then blocking defects, regressions, errors, failures.

    Every user string goes through `_cell` (scrub, one line, clip, escape); nothing else is
    interpolated but numbers and defect codes.
    """
    t = report.totals
    found = [(item, d) for item in report.items for d in item.defects]
    unexpected = [(i, d) for i, d in found if d.code.value not in i.expected_defects]
    blocking = [(i, d) for i, d in unexpected if d.severity == "blocking"]
    uncompacted = [i for i in report.items if i.outcome == "uncompacted"]
    # an uncompacted item's CANNOT_COMPACT is listed with the item, not again as a regression
    regressions = [(i, d) for i, d in unexpected if d.severity == "regression" and i.outcome != "uncompacted"]
    errors = [i for i in report.items if i.outcome == "error"]
    failed = [i for i in report.items if i.outcome == "failed"]

    status = "FAIL" if (t.failed or t.error or t.uncompacted) else ("PASS" if t.passed else "NOTHING EXERCISED")
    icon = {"FAIL": "❌", "PASS": "✅"}.get(status, "⚠️")
    lines = [
        f"## {icon} replaylab: {status} — {t.failed} failed, {t.error} error, {t.uncompacted} cannot compact, "
        f"{unexpected_phrase(t)}",
        "",
        "| items | passed | failed | error | cannot compact | not exercised | unexpected blocking defects "
        "| expected by negative controls |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| {t.items} | {t.passed} | {t.failed} | {t.error} | {t.uncompacted} | {t.skipped} | {t.blocking_defects} "
        f"| {t.expected_defects} |",
        "",
        f"{items_phrase(report.items)}.",
        "",
        agent_verification_line(t),
        "",
        agents_line(t),
        "",
    ]
    # a baseline that matched nothing (or could not be read) is said first and loudly, not counted as a regression
    lines += [f"> ⚠️ **{_cell(line, 400)}**\n" for line in report.regressions_vs_baseline if is_baseline_warning(line)]
    against = [line for line in report.regressions_vs_baseline if not is_baseline_warning(line)]
    if against:
        lines += [f"### Regressions against the blessed baseline ({len(against)})", ""]
        lines += [f"- {_cell(line)}" for line in against[:MAX_ROWS]]
        if len(against) > MAX_ROWS:
            lines.append(f"- … {len(against) - MAX_ROWS} more in replaylab.html")
        lines.append("")
    if t.expected_defects:
        lines += [f"Found as their suites expect: {expected_phrase(t)} (listed apart in replaylab.html).", ""]
    if blocking:
        lines += [f"### Unexpected blocking defects ({len(blocking)})", ""] + _defect_table(blocking)
    if regressions:
        lines += [f"### Regressions ({len(regressions)})", ""] + _defect_table(regressions)
    if errors:
        lines += [f"### Errors ({len(errors)})", ""] + _item_list(errors)
    if uncompacted:
        lines += [f"### Cannot compact ({len(uncompacted)}): compaction was due and cannot succeed", ""]
        lines += _item_list(uncompacted)
    if failed:
        lines += [f"### Failed sessions ({len(failed)})", ""] + _item_list(failed)
    if not (blocking or regressions or errors or failed or uncompacted):
        lines += ["No regressions." + (f" {t.skipped} items not exercised." if t.skipped else ""), ""]
    if t.causes:  # one line per cause, its count and the knob that changes it
        lines += ["### Not exercised and cannot compact, by cause", ""]
        lines += [f"- {_cell(cause_line(group), 600)}" for group in t.causes] + [""]
    lines += _recorded_compactions(report.items)
    m = report.meta
    bits = [f"model {_cell(m.model, 60)}"] + ([f"mode {_cell(m.mode, 40)}"] if m.mode else [])
    bits += [f"git {_cell(m.git_sha[:12], 20)}"] if m.git_sha else ["not run in a git checkout"]
    bits += [f"replaylab {_cell(m.replaylab_version, 20)}"]
    if m.shards:
        bits.append(f"{len(m.shards)} shards")
    lines += [f"<sub>{' · '.join(bits)} · full report: replaylab.html</sub>", ""]
    return "\n".join(lines)


def _defect_table(rows: list[tuple[ItemResult, Defect]]) -> list[str]:
    rows = sorted(rows, key=lambda r: (SEVERITY_ORDER.get(r[1].severity, 9), r[0].id, r[1].code.value))
    out = ["| code | session | where | expected → actual | message |", "|---|---|---|---|---|"]
    for item, d in rows[:MAX_ROWS]:
        w = d.where
        where = ", ".join(
            f"{k} {_cell(v, 40)}"
            for k, v in (("entry", w.entry_id), ("turn", w.turn), ("call", w.tool_call_id))
            if v is not None
        )
        exp_act = _expected_actual(d)
        out.append(f"| `{d.code.value}` | {_cell(item.id, 80)} | {where} | {exp_act} | {_cell(d.message)} |")
    if len(rows) > MAX_ROWS:
        out.append(f"| … | {len(rows) - MAX_ROWS} more in replaylab.html | | | |")
    return out + [""]


def _expected_actual(d: Defect) -> str:
    """The first differing leaf when the defect names them (two prefixes of long values would
    hide the difference), else both values."""
    diffs = differences_of(d.detail)
    if diffs:
        leaf = diffs.leaves[0]
        rest = len(diffs.leaves) - 1 + diffs.more
        return _cell(leaf.line(), 400) + (f" (+{rest} more)" if rest else "")
    if d.expected is None and d.actual is None:
        return ""
    return f"{_cell(_value(d.expected), 60)} → {_cell(_value(d.actual), 60)}"


def _item_list(items: list[ItemResult]) -> list[str]:
    out = []
    for item in items[:MAX_ROWS]:
        codes = " ".join(f"`{c}`" for c in sorted({d.code.value for d in item.defects}))
        reason = f": {_cell(item.reason)}" if item.reason else ""
        # a real model's runs say so: its answers are its own, not the recording's served back
        model = f" (model {_cell(item.model, 60)})" if item.model != "replay" else ""
        if item.compactor != "replaylab":  # a compactor under test: its findings are about it
            model += f" (compactor {_cell(item.compactor, 60)})"
        model += f" (agent {_cell(item.agent, 60)})"
        out.append(f"- {_cell(item.id, 100)}{model} {codes}{reason}".rstrip())
        out += _lost_values(item)
        out += [f"  - {_cell(line, 400)}" for line in recovery_lines(item.compacted)]
    if len(items) > MAX_ROWS:
        out.append(f"- … {len(items) - MAX_ROWS} more in replaylab.html")
    return out + [""]


def _recorded_compactions(items: list[ItemResult]) -> list[str]:
    """The compactions the recordings themselves hold (`checks.recorded`), one line each (capped)."""
    found = [(item, view) for item in items for view in item.recorded_compactions]
    if not found:
        return []
    out = [f"### Compactions in the recordings ({len(found)})", ""]
    out += [f"- {_cell(item.id, 100)}: {_cell(view.line(), 400)}" for item, view in found[:MAX_ROWS]]
    if len(found) > MAX_ROWS:
        out.append(f"- … {len(found) - MAX_ROWS} more in replaylab.html")
    return out + [""]


def _lost_values(item: ItemResult) -> list[str]:
    """The item's legend of `⟨lost:N⟩` markers, one nested line per marker (capped)."""
    if not item.lost_values:
        return []
    compactions = item.compaction.compactions if item.compaction is not None else 1
    out = ["  - lost values:"]
    for lost in item.lost_values[:MAX_LOST_VALUES]:
        value = scrub_text(lost.value[: LOST_VALUE_LIMIT + SCRUB_MARGIN])[:LOST_VALUE_LIMIT]
        out.append(f"    - {_cell(lost.model_copy(update={'value': value}).line(compactions), 400)}")
    if len(item.lost_values) > MAX_LOST_VALUES:
        out.append(f"    - … {len(item.lost_values) - MAX_LOST_VALUES} more in replaylab.html")
    return out


def _value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    return orjson.dumps(scrub_data(value), option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str).decode()


def _cell(value: Any, limit: int = CELL_LIMIT) -> str:
    """One line of plain text, safe in a table cell: clipped, HTML neutralised, markdown escaped."""
    text = str(value)
    # not scrub_prefix: cut after the join; escaped after scrubbing (escapes could hide a secret's shape)
    text = " ".join(printable(scrub_text(text[: limit + SCRUB_MARGIN])).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)
