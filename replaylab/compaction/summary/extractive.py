"""The extractive summarizer: OpenClaw's five sections built from the messages themselves.

Why it is the offline default: replay must be deterministic and need no key. Unlike an LLM it can
guarantee what replay needs: every identifier of the summarized span verbatim, the pending user
ask, the argument values a later call may reuse. Besides the five sections it writes one line per
tool outcome. It works inside the request's character budget and spends it by priority: asks,
constraints, identifiers, TODOs, then the most recent tool outcomes and decisions, saying how many
older lines it left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from replaylab.cassette import canonical_json
from replaylab.compaction.identifiers import (
    TextScans,
    argument_values,
    normalize_identifier,
    result_values,
)
from replaylab.compaction.summary.lines import (
    MAX_ASK_CHARS,
    MAX_LINE_CHARS,
    first_line,
    fit_recent_lines,
    one_line,
)
from replaylab.compaction.summary.messages import (
    explicit_constraints,
    is_meaningful_text,
    latest_user_ask,
    scan_text,
    text_of,
)
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.compaction.summary.sections import (
    CONSTRAINTS_RULES,
    DECISIONS,
    EMPTY_BODIES,
    EXACT_IDENTIFIERS,
    HEADINGS_FLOOR_CHARS,
    OPEN_TODOS,
    PENDING_USER_ASKS,
    has_required_sections,
    parse_sections,
)
from replaylab.compaction.summary.summarizer import Summarizer
from replaylab.scrub import default_scrubber
from replaylab.transcript.model import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ToolResultMessage,
    UserMessage,
    identifier_text,
)
from replaylab.transcript.pairing import is_errored, message_calls
from replaylab.upstream.openclaw_2026_4_12 import NONE_CAPTURED, NONE_TEXT, REQUIRED_SUMMARY_SECTIONS

_TODO_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[ \]|\bTODO\b|^\s*(?:next steps?|remaining|still (?:need|to do))\b", re.I)
_HEADING = re.compile(r"^#{1,6}\s+\S")
_FILE_TAGS = re.compile(r"<(read-files|modified-files)>.*?</\1>", re.S)
#: replaylab's section after the five: one line per tool call of the span
TOOL_OUTCOMES_HEADING = "## Tool outcomes"
MAX_OUTCOME_RESULT_CHARS = 160
MAX_OUTCOME_ARGS_CHARS = 160
#: a call restated verbatim after the summary needs only enough of its arguments to be recognised
MAX_KEPT_OUTCOME_ARGS_CHARS = 60
KEPT_VERBATIM = "kept verbatim after this summary"
MAX_TODO_LINES = 10
MAX_DECISION_CHARS = 160
MAX_COMMAND_CHARS = 120
#: share of the extractive budget kept for tool outcomes and decisions once the must-have
#: identifiers (OpenClaw's rules) are in; argument values and id-like tokens get the rest
NARRATIVE_SHARE = 0.3
#: ... and before them, at most this share of the budget (and `NARRATIVE_FLOOR_CHARS`): a summary
#: of nothing but identifiers tells a model what, not why
NARRATIVE_FLOOR_SHARE = 0.15
NARRATIVE_FLOOR_CHARS = 1_500
#: share of what is left for the narrative that goes to tool outcomes when there are decisions too
OUTCOMES_SHARE = 0.5
#: room kept for each '- ...N earlier X omitted' line
OMITTED_LINE_CHARS = 48
#: the previous summary's sections that are merged into the same sections of the new one; the
#: rest of it becomes decisions
_MERGED_SECTIONS = (OPEN_TODOS, CONSTRAINTS_RULES, PENDING_USER_ASKS, EXACT_IDENTIFIERS, TOOL_OUTCOMES_HEADING)


def _tool_outcomes(messages: Sequence[Any], kept_call_ids: Iterable[str] = ()) -> list[str]:
    """One line per tool call, in order: name, arguments, ok/error and the first line of the
    result. A call the compaction restates verbatim after the summary (protected) gets a short
    line that says so: the agent reads where it happened, and its bytes right below."""
    kept = set(kept_call_ids)
    results: dict[str, ToolResultMessage] = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    lines = []
    for message in messages:
        for call in message_calls(message):
            result = results.get(call.id)
            limit = MAX_KEPT_OUTCOME_ARGS_CHARS if call.id in kept else MAX_OUTCOME_ARGS_CHARS
            args = canonical_json(call.arguments or {})
            if len(args) > limit:
                args = args[: limit - 3] + "..."
            if result is None:
                status = "not run" if is_errored(message) else "pending (no result)"
            elif call.id in kept:
                status = "error" if result.is_error else "ok"
            else:
                state = "error" if result.is_error else "ok"
                status = f"{state}: {first_line(text_of(result), MAX_OUTCOME_RESULT_CHARS) or '(no output)'}"
            lines.append(f"- {call.name} {args} → {status}" + (f" ({KEPT_VERBATIM})" if call.id in kept else ""))
    return lines


def _decisions(messages: Sequence[Any]) -> list[str]:
    lines = []
    for message in messages:
        if isinstance(message, AssistantMessage) and not is_errored(message):
            text = text_of(message)
            if is_meaningful_text(text):
                lines.append(f"- {one_line(text, MAX_DECISION_CHARS)}")
        elif isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
            lines.append(f"- Earlier summary: {first_line(message.summary)}")
        elif isinstance(message, BashExecutionMessage):
            lines.append(f"- Ran `{one_line(message.command, MAX_COMMAND_CHARS)}` (exit {message.exit_code})")
    return lines


def _todos(messages: Sequence[Any]) -> list[str]:
    lines: list[str] = []
    for message in messages:
        if not isinstance(message, (AssistantMessage, UserMessage)):
            continue
        for raw in text_of(message).splitlines():
            if _TODO_LINE.search(raw):
                line = f"- {one_line(raw.strip().lstrip('-* '))}"
                if line not in lines:
                    lines.append(line)
    return lines[-MAX_TODO_LINES:]


def _span_text_for_identifiers(
    message: Any, include_tool_results: bool, identifier_text_of: Callable[[Any], str] = identifier_text
) -> str:
    if isinstance(message, ToolResultMessage) and not include_tool_results:
        return ""
    if not include_tool_results:  # aggressive: what the user and assistant wrote, nothing else
        return scan_text(message)
    return identifier_text_of(message)


def _dedupe_identifiers(groups: Iterable[Iterable[str]]) -> list[list[str]]:
    seen: set[str] = set()
    out = []
    for group in groups:
        fresh = []
        for value in group:
            key = normalize_identifier(value)
            if key not in seen:
                seen.add(key)
                fresh.append(value)
        out.append(fresh)
    return out


def _merge(first: Sequence[str], second: Sequence[str]) -> list[str]:
    out = [x for x in first if x.strip().lower() not in EMPTY_BODIES]
    for x in second:
        if x not in out:
            out.append(x)
    return out


@dataclass
class _Layout:
    """What the extractive summary holds besides its identifiers, fixed by the request alone:
    the previous summary's sections, the asks / constraints / TODOs (never trimmed) and the
    candidate tool-outcome and decision lines."""

    previous: str
    prev_sections: dict[str, list[str]] | None
    fixed: list[list[str]]  # asks, constraints, todos: each at least one line
    outcomes: list[str]
    decisions: list[str]


def _layout(request: SummaryRequest) -> _Layout:
    messages = request.messages
    previous = (request.previous_summary or "").strip()
    # file lists are rebuilt from the calls each time; their paths still reach the identifiers
    previous_text = _FILE_TAGS.sub("", previous).strip()
    prev_sections = parse_sections(previous_text) if previous and has_required_sections(previous) else None

    asks = []
    ask = latest_user_ask(messages)
    for value in ([ask] if ask else []) + list(request.pinned_asks):
        line = f"- {one_line(value, MAX_ASK_CHARS)}"
        if line not in asks:
            asks.append(line)
    if prev_sections is not None and not ask:
        asks.extend(x for x in prev_sections.get(PENDING_USER_ASKS, []) if x.strip().lower() not in EMPTY_BODIES)
    constraints = [f"- {c}" for c in explicit_constraints(messages)]
    if prev_sections is not None:
        constraints = _merge(prev_sections.get(CONSTRAINTS_RULES, []), constraints)
    todos = _todos(messages)
    if prev_sections is not None:
        todos = _merge(prev_sections.get(OPEN_TODOS, []), todos)[-MAX_TODO_LINES:]

    outcomes = _tool_outcomes(messages, request.kept_call_ids) if request.include_tool_results else []
    decisions = _decisions(messages)
    if prev_sections is not None:
        prior = [
            x
            for name, lines in prev_sections.items()
            if name not in _MERGED_SECTIONS
            for x in lines
            if x.strip().lower() not in EMPTY_BODIES
        ]
        decisions = [x if x.lstrip().startswith("-") else f"- {x.strip()}" for x in prior] + decisions
        outcomes = list(prev_sections.get(TOOL_OUTCOMES_HEADING, [])) + outcomes
    elif previous:
        decisions = [
            f"- Earlier summary: {one_line(line, MAX_LINE_CHARS)}"
            for line in previous_text.splitlines()
            if line.strip() and not _HEADING.match(line.strip())
        ] + decisions
    fixed = [asks or [NONE_TEXT], constraints or [NONE_TEXT], todos or [NONE_TEXT]]
    return _Layout(previous, prev_sections, fixed, outcomes, decisions)


def _render(
    decision_lines: Sequence[str],
    fixed: Sequence[Sequence[str]],
    identifier_lines: Sequence[str],
    outcome_lines: Sequence[str],
) -> str:
    parts = [
        DECISIONS,
        *(decision_lines or [NONE_CAPTURED]),
        "",
        OPEN_TODOS,
        *fixed[2],
        "",
        CONSTRAINTS_RULES,
        *fixed[1],
        "",
        PENDING_USER_ASKS,
        *fixed[0],
        "",
        EXACT_IDENTIFIERS,
        *(identifier_lines or [NONE_CAPTURED]),
    ]
    if outcome_lines:
        parts += ["", TOOL_OUTCOMES_HEADING, *outcome_lines]
    return "\n".join(parts)


def extractive_summary_floor(request: SummaryRequest) -> int:
    """The fewest characters `ExtractiveSummarizer.summarize(request)` can return (a summary
    request, not a turn prefix) — computed without scanning a text for identifiers, so the
    harness can tell "nothing to gain" before paying for the summary.

    The summary is `_render(decisions, fixed, identifiers, outcomes)`: lines joined by newlines,
    so its length is the sum of its lines' lengths plus one per line but the last. Of its lines,
    the headings and the asks / constraints / TODOs (`_layout`, never trimmed) are fixed by the
    request; the rest are at least:
    * decisions: one line, whatever the budget (`fit_recent_lines` keeps a line or writes how many
      it left out; the trimming loop stops at one) — `None captured.` exactly when there are none;
    * identifiers: one line (an identifier, the omitted note, or `None captured.`);
    * tool outcomes: none when there are no outcome lines; else the blank line, the heading and
      one line (kept or the omitted note, as for decisions).
    So the render with empty strings for those lines is never longer than the summary."""
    layout = _layout(request)
    return len(_render([""] if layout.decisions else [], layout.fixed, [""], [""] if layout.outcomes else []))


class ExtractiveSummarizer(Summarizer):
    """Deterministic, offline: OpenClaw's sections built from the messages themselves."""

    name = "extractive"
    deterministic = True
    calls_model = False

    def __init__(self, scans: TextScans | None = None, identifier_text_of: Callable[[Any], str] = identifier_text):
        #: the compaction's scans (shared with its guard seed, its other calls and tail refits)
        self.scans = scans
        #: `identifier_text` of a message (the job's, which a QA pipeline item's memo keeps)
        self.identifier_text_of = identifier_text_of

    def summary_floor(self, request: SummaryRequest, *, may_fall_back: bool) -> int:
        """`extractive_summary_floor`; when the guard may fall back, the fallback and the previous
        summary hold the five headings as lines too, and nothing more for sure."""
        return HEADINGS_FLOOR_CHARS if may_fall_back else extractive_summary_floor(request)

    def summarize(self, request: SummaryRequest) -> str:
        if request.turn_prefix:
            return self._turn_prefix(request)
        scans = self.scans if self.scans is not None else TextScans()
        messages = request.messages
        include = request.include_tool_results
        layout = _layout(request)
        previous, prev_sections = layout.previous, layout.prev_sections
        fixed, outcomes, decisions = layout.fixed, layout.outcomes, layout.decisions

        # the guard checks the answer for its identifiers as OpenClaw's regex reads them (a run of
        # JSON read as one among them), which the value-by-value scans below need not give
        opaque: list[str] = list(request.pinned_identifiers)
        values: list[str] = []
        tokens_text: list[str] = []
        tokens_results: list[str] = []
        if previous:
            opaque.extend(scans.identifiers(previous))
            if prev_sections is not None:  # a previous summary's identifiers, but never a secret it held
                values.extend(
                    x.lstrip("- ").strip()
                    for x in prev_sections.get(EXACT_IDENTIFIERS, [])
                    if x.strip().lower() not in EMPTY_BODIES
                    and not x.lstrip("- ").startswith("...")
                    and not default_scrubber().changes(x)
                )
        for message in list(messages) + list(request.identifier_sources):
            text = _span_text_for_identifiers(message, include, self.identifier_text_of)
            if text:
                opaque.extend(scans.identifiers(text))
            if include:
                for call in message_calls(message):
                    values.extend(argument_values(call.arguments))
            if isinstance(message, ToolResultMessage):
                if include:
                    result_text = text_of(message)
                    tokens_results.extend(result_values(result_text))
                    tokens_results.extend(scans.value_tokens(result_text))
            elif isinstance(message, (UserMessage, AssistantMessage)):
                tokens_text.extend(scans.value_tokens(text_of(message)))
        groups = _dedupe_identifiers([opaque, values, tokens_text, tokens_results])
        order = {value: i for i, value in enumerate(groups[0])}
        pinned = {normalize_identifier(x) for x in request.pinned_identifiers}
        # when they do not all fit, the guard's identifiers go first, then the most recent ones
        groups[0] = [x for x in groups[0] if normalize_identifier(x) in pinned] + [
            x for x in reversed(groups[0]) if normalize_identifier(x) not in pinned
        ]

        headings = sum(len(h) + 2 for h in REQUIRED_SUMMARY_SECTIONS) + len(TOOL_OUTCOMES_HEADING) + 8
        budget = (
            request.budget_chars - headings - sum(len(x) + 1 for group in fixed for x in group) - OMITTED_LINE_CHARS * 3
        )
        identifier_lines: list[str] = []
        omitted_ids = 0
        # a floor for the narrative even before the must-have identifiers
        narrative_reserve = (
            min(NARRATIVE_FLOOR_CHARS, int(request.budget_chars * NARRATIVE_FLOOR_SHARE))
            if outcomes or decisions
            else 0
        )
        for rank, group in enumerate(groups):
            if rank == 1:  # after the must-have identifiers, keep room for outcomes and decisions
                narrative_reserve = (
                    min(max(0, budget), int(request.budget_chars * NARRATIVE_SHARE)) if outcomes or decisions else 0
                )
            for value in group:
                line = f"- {value}"
                if len(line) + 1 > budget - narrative_reserve:
                    omitted_ids += 1
                    continue
                identifier_lines.append(line)
                budget -= len(line) + 1
        identifier_lines.sort(key=lambda line: order.get(line[2:], len(order)))
        if omitted_ids:
            identifier_lines.append(f"- ...{omitted_ids} more identifiers omitted (budget)")
        outcome_budget = max(0, int(budget * OUTCOMES_SHARE)) if decisions else max(0, budget)
        outcome_lines, _ = fit_recent_lines(outcomes, outcome_budget, omitted_label="tool outcomes")
        budget -= sum(len(x) + 1 for x in outcome_lines)
        decision_lines, _ = fit_recent_lines(decisions, max(0, budget - 40), omitted_label="decisions")

        def render() -> str:
            return _render(decision_lines, fixed, identifier_lines, outcome_lines)

        text = render()
        # the line budgets above are estimates: trim the oldest narrative lines until it fits,
        # so the caller's cap never cuts into the identifiers
        while len(text) > request.budget_chars and (len(decision_lines) > 1 or len(outcome_lines) > 1):
            lines = decision_lines if len(decision_lines) > 1 else outcome_lines
            dropped = lines.pop(1 if lines[0].startswith("- ...") else 0)
            label = "decisions" if lines is decision_lines else "tool outcomes"
            elided = re.match(r"- \.\.\.(\d+)", lines[0]) if lines else None
            count = 1 + (int(elided.group(1)) if elided else 0)
            if lines and lines[0].startswith("- ..."):
                lines[0] = f"- ...{count} earlier {label} omitted"
            elif dropped:
                lines.insert(0, f"- ...{count} earlier {label} omitted")
            text = render()
        return text

    def _turn_prefix(self, request: SummaryRequest) -> str:
        messages = request.messages
        ask = latest_user_ask(messages) or NONE_CAPTURED
        outcomes = _tool_outcomes(messages, request.kept_call_ids) if request.include_tool_results else []
        budget = max(200, request.budget_chars // 16)
        lines, _ = fit_recent_lines(outcomes + _decisions(messages), budget, omitted_label="steps")
        return "\n".join(
            ["## Original Request", one_line(ask, MAX_ASK_CHARS), "", "## Early Progress", *(lines or [NONE_CAPTURED])]
        )
