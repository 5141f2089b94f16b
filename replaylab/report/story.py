"""The short expected-vs-actual story pytest prints for a failed or errored item (no traceback).

Every line is printed as one line (`replaylab.printable`): ids, names and messages come from
recordings and suites, and a line break or control character in one must not start a line of
its own or reach the terminal raw.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from replaylab.defects import RECORDED_CODES, SEVERITY_ORDER, Defect
from replaylab.differences import differences, differences_of
from replaylab.printable import printable
from replaylab.report.recovery import recovery_lines
from replaylab.results import OUTCOME_LABELS, ItemResult
from replaylab.scrub import scrub_data, scrub_text

MAX_DEFECTS = 8
MAX_RECORDED_COMPACTIONS = 5
MAX_LOST_VALUES = 12
LOST_VALUE_LIMIT = 120  # characters of a lost value in its legend line (a whole file's text can be one)


def failure_story(result: ItemResult) -> str:
    """The story, scrubbed as a whole: pytest prints it and writes it into JUnit, so the names in it
    (recording, scenario, tool call ids) are scrubbed as well as the texts."""
    lines = [
        f"{OUTCOME_LABELS[result.outcome].upper()}: {scrub_text(result.reason)}",
        f"  recording: {result.recording}   scenario: {result.scenario}   model: {result.model}"
        + (f"   compactor: {result.compactor}" if result.compactor != "replaylab" else "")
        + f"   agent: {result.agent}",
    ]
    if result.budget is not None:  # the budget paragraph, once: reasons and findings name its numbers only
        lines.append(f"  {result.budget.line()}")
    lines += _recorded_compactions(result)
    if result.compaction is not None:
        c = result.compaction
        lines.append(
            f"  compaction: mode={c.mode} success={c.success} tokens {c.original_tokens} → "
            f"{c.compacted_tokens} (saved {c.token_saved}), protected entries {len(c.protected_entry_ids)}"
        )
    if result.missing_expected:
        lines.append(f"  expected defects not found: {', '.join(result.missing_expected)}")
    # the recorded compactions' findings are counted under their compaction's line above (one
    # compaction can summarize away hundreds of events): only the headline quotes one of them
    ordered = sorted(
        (d for d in result.defects if d.code not in RECORDED_CODES), key=lambda d: SEVERITY_ORDER.get(d.severity, 9)
    )
    for defect in ordered[:MAX_DEFECTS]:
        where = ", ".join(f"{k}={v}" for k, v in defect.where.model_dump(exclude_none=True).items())
        # the headline already quotes the finding that decided the outcome: not a second time
        said = "(the reason above)" if defect.message and defect.message in result.reason else defect.message
        lines.append(f"  [{defect.severity}] {defect.code.value} ({where or 'session'}): {scrub_text(said)}")
        lines.extend(_expected_actual(defect))
    if len(ordered) > MAX_DEFECTS:
        lines.append(f"  … {len(ordered) - MAX_DEFECTS} more defects in the HTML report")
    lines += _lost_values(result)
    chain = recovery_lines(result.compacted)
    if chain:
        lines += ["  overflow recovery:", *(f"    {line}" for line in chain)]
    if result.first_divergence is not None:
        d = result.first_divergence
        lines.append(f"  first divergence: turn {d.turn} ({d.what})")
        lines.append(f"      baseline:  {_compact(d.baseline)}")
        lines.append(f"      compacted: {_compact(d.compacted)}")
        if d.baseline is not None and d.compacted is not None:
            # two values cut to one prefix can hide where they part: name the differing leaves too
            diffs = differences(d.baseline, d.compacted)
            lines += [f"      differs at {leaf.line()}" for leaf in diffs.leaves]
            if diffs.more:
                lines.append(f"      … {diffs.more} more differing values in the HTML report")
    # each line scrubbed whole (names and ids too), then made one printable line
    return "\n".join(printable(scrub_text(line)) for line in lines)


def _recorded_compactions(result: ItemResult) -> list[str]:
    """The compactions the recording itself holds, one line each (`checks.recorded`)."""
    found = result.recorded_compactions
    if not found:
        return []
    lines = [f"  compactions in the recording: {len(found)}"]
    lines += [f"    {view.line()}" for view in found[:MAX_RECORDED_COMPACTIONS]]
    if len(found) > MAX_RECORDED_COMPACTIONS:
        lines.append(f"    … {len(found) - MAX_RECORDED_COMPACTIONS} more in the HTML report")
    counts = Counter(d.code.value for d in result.defects if d.code in RECORDED_CODES)
    if counts:
        listed = ", ".join(f"{code} {n:,}" for code, n in sorted(counts.items()))
        lines.append(f"    findings: {listed} (each in the HTML report and `replaylab inspect`)")
    return lines


def _lost_values(result: ItemResult) -> list[str]:
    """The legend of the `⟨lost:N⟩` markers in the defects above, one line per marker."""
    if not result.lost_values:
        return []
    compactions = result.compaction.compactions if result.compaction is not None else 1
    shown = [
        f"    {lost.model_copy(update={'value': _compact(lost.value, LOST_VALUE_LIMIT)}).line(compactions)}"
        for lost in result.lost_values[:MAX_LOST_VALUES]
    ]
    if len(result.lost_values) > MAX_LOST_VALUES:
        shown.append(f"    … {len(result.lost_values) - MAX_LOST_VALUES} more in the HTML report")
    return ["  lost values:", *shown]


def _expected_actual(defect: Defect) -> list[str]:
    """The differing leaves when the defect names them (two values cut to one prefix would hide
    the difference), else both values cut; then the nearest recorded call, as a hint."""
    diffs = differences_of(defect.detail)
    if diffs:
        lines = [f"      differs at {leaf.line()}" for leaf in diffs.leaves]
        if diffs.more:
            lines.append(f"      … {diffs.more} more differing values in the HTML report")
    elif defect.expected is not None or defect.actual is not None:
        lines = [f"      expected: {_compact(defect.expected)}", f"      actual:   {_compact(defect.actual)}"]
    else:
        lines = []
    nearest = defect.detail.get("nearest") if isinstance(defect.detail, dict) else None
    if isinstance(nearest, dict) and nearest.get("call") is not None:
        label = nearest.get("label", "nearest recorded call (hint)")
        if nearest["call"] == scrub_data(defect.expected):
            return [*lines, f"      {label}: the recorded call at this step"]
        lines.append(f"      {label}: {_compact(nearest['call'])}")
        said = [f"method {nearest.get('method')}", f"result {nearest['result']}" if nearest.get("result") else ""]
        lines.append(f"        {', '.join(part for part in said if part)}")
        hint = differences_of(nearest)
        lines.extend(f"        differs at {leaf.line()}" for leaf in hint.leaves)
        if not hint:
            lines.append("        arguments identical")
    return lines


def _compact(value: Any, limit: int = 240) -> str:
    """One value on one line, cut to `limit` after it is scrubbed (a cut must not split a secret
    the scrubber would then no longer recognise); data is scrubbed as data first, so a secret
    under its key (`"password": …`) is redacted whatever it looks like."""
    text = value if isinstance(value, str) else json.dumps(scrub_data(value), ensure_ascii=False, default=str)
    text = scrub_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
