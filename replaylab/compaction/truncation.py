"""Tool-result size control: write-time cap, head / head+tail truncation, the per-call context
guard, and `truncateOversizedToolResultsInSession` on a working copy (openclaw-internals §4).

Three places shrink tool output in OpenClaw, each with its own numbers:

* **write time** (`session-tool-result-guard.ts`): a result is capped to
  `DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS` text chars before it is persisted (`cap_tool_result_for_write`);
* **per call** (`tool-result-context-guard.ts`, in memory only): one oversized result is cut, then
  (as the OpenClaw releases before the snapshot did, and replaylab keeps) old results are replaced
  by a placeholder while the newest is kept, then an estimate over `PREEMPTIVE_OVERFLOW_RATIO` of
  the window raises the preemptive overflow error that the recovery chain recognizes (`guard_context`);
* **recovery** (`tool-result-truncation.ts`): the session itself is rewritten — per-result cap plus
  an aggregate budget (`recovery_plan`: 2026.4.12 the cap, trimmed newest first; 2026.9.6 four caps
  or half the window, trimmed oldest first, cut then cleared) — by branching from the parent of the
  first rewritten entry and re-appending the suffix (`truncate_oversized_tool_results_in_session`).
  replaylab does that on a working copy, append-only: the old entries stay as an abandoned branch.

Texts are cut by `truncate_tool_result_text`: head only, or head + tail when the tail looks
important (errors, JSON closing, totals), with the exact upstream markers.

Every function takes the OpenClaw release's rules as a value (`rules`, an
`upstream.runtime_rules.RuntimeRules`; default 2026.4.12's). From 2026.9.6 on texts are measured
by OpenClaw's weighted length and cut to fit (`compaction.fitted_truncation`), the write-time cap
depends on the window, the guard only cuts single results, and the recovery's plan is OpenClaw's
(`fitted_truncation.recovery_plan`).
"""

from __future__ import annotations

import functools
import math
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replaylab.compaction import fitted_truncation as fitted
from replaylab.compaction.js_strings import Utf16Text, js_regex, js_trim
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.ids import derived_entry_id
from replaylab.transcript.javascript import json_stringify, utf16_length
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    CompactionEntry,
    ImageBlock,
    LabelEntry,
    MessageEntry,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    dump_entry,
)
from replaylab.transcript.writer import TranscriptWriter
from replaylab.upstream.openclaw_2026_4_12 import (
    CHARS_PER_TOKEN_ESTIMATE,
    CONTEXT_INPUT_HEADROOM_RATIO,
    GUARD_IMAGE_CHARS,
    GUARD_MIN_CHARS,
    GUARD_NEWLINE_SNAP_SHARE,
    GUARD_UNKNOWN_MESSAGE_CHARS,
    HARD_MAX_TOOL_RESULT_CHARS,
    HEAD_NEWLINE_SNAP_SHARE,
    IMPORTANT_TAIL_ERROR_RE,
    IMPORTANT_TAIL_JSON_RE,
    IMPORTANT_TAIL_SCAN_CHARS,
    IMPORTANT_TAIL_SUMMARY_RE,
    MAX_TAIL_BUDGET_CHARS,
    MAX_TOOL_RESULT_CONTEXT_SHARE,
    MIDDLE_OMISSION_MARKER,
    MIN_KEEP_CHARS,
    PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE,
    PREEMPTIVE_OVERFLOW_RATIO,
    PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER,
    RECOVERY_MIN_KEEP_CHARS,
    SINGLE_TOOL_RESULT_CONTEXT_SHARE,
    TAIL_BUDGET_SHARE,
    TAIL_NEWLINE_SNAP_SHARE,
    TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE,
)
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, RuntimeRules

# JavaScript regexes (ASCII `\b`), as OpenClaw matches them
_ERROR_TAIL = js_regex(IMPORTANT_TAIL_ERROR_RE, ignore_case=False)
_JSON_TAIL = js_regex(IMPORTANT_TAIL_JSON_RE, ignore_case=False)
_SUMMARY_TAIL = js_regex(IMPORTANT_TAIL_SUMMARY_RE, ignore_case=False)

SuffixFactory = Callable[[int], str]


def format_truncation_notice(truncated_chars: int, rules: RuntimeRules = OPENCLAW_2026_4_12) -> str:
    """`formatContextLimitTruncationNotice(n)`: `[... <n> more characters truncated]` (2026.9.6
    adds `; rerun with narrower args if needed`)."""
    return rules.truncation.notice.format(n=max(1, math.floor(truncated_chars)))


def _notice_of(rules: RuntimeRules) -> SuffixFactory:
    return lambda n: format_truncation_notice(n, rules)


def has_important_tail(text: str) -> bool:
    """Errors, a JSON closing brace or a summary word in the last `IMPORTANT_TAIL_SCAN_CHARS`
    UTF-16 units (as both releases read it: trimmed, lower-cased, ASCII word boundaries)."""
    tail = js_trim(Utf16Text(text).safe_slice(-IMPORTANT_TAIL_SCAN_CHARS)).lower()
    return bool(_ERROR_TAIL.search(tail) or _JSON_TAIL.search(js_trim(tail)) or _SUMMARY_TAIL.search(tail))


def truncate_tool_result_text(
    text: str,
    max_chars: int,
    *,
    min_keep_chars: int | None = None,
    suffix: SuffixFactory | None = None,
    rules: RuntimeRules = OPENCLAW_2026_4_12,
    minimum_raw_weight: int = 1,
) -> str:
    """`truncateToolResultText`: head (cut snapped back to a newline past
    `HEAD_NEWLINE_SNAP_SHARE` of it) or, with an important tail and room for both, head + middle
    marker + tail (`TAIL_BUDGET_SHARE` of the budget, at most `MAX_TAIL_BUDGET_CHARS`, start
    snapped forward to a newline within `TAIL_NEWLINE_SNAP_SHARE` of it), then the notice
    counting the characters that are gone. `min_keep_chars` defaults to the rules' floor;
    `minimum_raw_weight` (2026.9.6 on) weighs raw text 1 or 2 chars per char."""
    min_keep_chars = rules.truncation.min_keep_chars if min_keep_chars is None else min_keep_chars
    suffix = suffix or _notice_of(rules)
    if rules.truncation.fits_max_chars:
        return fitted.truncate_text(
            text,
            max_chars,
            min_keep_chars=min_keep_chars,
            suffix=suffix,
            has_important_tail=has_important_tail,
            weight=minimum_raw_weight,
        )
    units = Utf16Text(text)
    size = len(units)  # JavaScript's length: a character above U+FFFF counts 2
    if size <= max_chars:
        return text
    budget = max(min_keep_chars, max_chars - utf16_length(suffix(max(1, size - max_chars))))
    if has_important_tail(text) and budget > min_keep_chars * 2:
        tail_budget = min(math.floor(budget * TAIL_BUDGET_SHARE), MAX_TAIL_BUDGET_CHARS)
        head_budget = budget - tail_budget - utf16_length(MIDDLE_OMISSION_MARKER)
        if head_budget > min_keep_chars:
            head_cut = head_budget
            newline = units.rfind("\n", head_budget)
            if newline > head_budget * HEAD_NEWLINE_SNAP_SHARE:
                head_cut = newline
            tail_start = size - tail_budget
            newline = units.find("\n", tail_start)
            if newline != -1 and newline < tail_start + tail_budget * TAIL_NEWLINE_SNAP_SHARE:
                tail_start = newline + 1
            kept = units.slice(0, head_cut) + MIDDLE_OMISSION_MARKER + units.slice(tail_start)
            return kept + suffix(max(1, size - utf16_length(kept)))
    cut = budget
    newline = units.rfind("\n", budget)
    if newline > budget * HEAD_NEWLINE_SNAP_SHARE:
        cut = newline
    kept = units.slice(0, cut)
    return kept + suffix(max(1, size - utf16_length(kept)))


def calculate_max_tool_result_chars(context_tokens: int, rules: RuntimeRules = OPENCLAW_2026_4_12) -> int:
    """`calculateMaxToolResultChars`: the tool results' share of the window in chars, capped (at
    the rules' write cap for that window)."""
    cap = HARD_MAX_TOOL_RESULT_CHARS if not rules.truncation.fits_max_chars else _tier(context_tokens, rules)
    return min(math.floor(context_tokens * MAX_TOOL_RESULT_CONTEXT_SHARE) * CHARS_PER_TOKEN_ESTIMATE, max(1, cap))


def _tier(context_tokens: int | None, rules: RuntimeRules) -> int:
    """The rules' cap for a window of `context_tokens` (the smallest tier when unknown)."""
    tiers = rules.truncation.write_cap_by_context
    if context_tokens is None or not math.isfinite(context_tokens):
        return tiers[0][1]
    return next(chars for start, chars in reversed(tiers) if math.floor(context_tokens) >= start)


def write_cap_chars(context_tokens: int | None = None, rules: RuntimeRules = OPENCLAW_2026_4_12) -> int:
    """The write-time cap in chars (`resolveMaxToolResultChars` as `guardSessionManager` calls it):
    2026.4.12 a fixed 40,000; 2026.9.6 16,000 / 32,000 from 100k tokens / 64,000 from 200k, and
    never over 30 % of a known window."""
    cap = _tier(context_tokens, rules)
    share = rules.truncation.write_cap_context_share
    if context_tokens is None or share is None:
        return cap
    return min(math.floor(context_tokens * share) * CHARS_PER_TOKEN_ESTIMATE, max(1, cap))


def tool_result_text_length(message: Any) -> int:
    """A tool result's text length as OpenClaw counts it (UTF-16 units)."""
    if not isinstance(message, ToolResultMessage):
        return 0
    if isinstance(message.content, str):
        return utf16_length(message.content)
    return sum(utf16_length(b.text) for b in message.content if isinstance(b, TextBlock))


def truncate_tool_result_message(
    message: ToolResultMessage,
    max_chars: int,
    *,
    min_keep_chars: int | None = None,
    suffix: SuffixFactory | None = None,
    rules: RuntimeRules = OPENCLAW_2026_4_12,
    minimum_raw_weight: int = 1,
) -> ToolResultMessage:
    """Text blocks share the budget in proportion to their length (each ≥ min keep); images and
    other blocks are untouched. Returns a new message (`fitted_truncation.truncate_message` from
    2026.9.6 on)."""
    min_keep_chars = rules.truncation.min_keep_chars if min_keep_chars is None else min_keep_chars
    if rules.truncation.fits_max_chars:
        return fitted.truncate_message(
            message,
            max_chars,
            min_keep_chars=min_keep_chars,
            suffix=suffix or _notice_of(rules),
            has_important_tail=has_important_tail,
            weight=minimum_raw_weight,
        )
    total = tool_result_text_length(message)
    if total <= max_chars:
        return message
    if isinstance(message.content, str):
        cut = truncate_tool_result_text(message.content, max_chars, min_keep_chars=min_keep_chars, suffix=suffix)
        return message.model_copy(update={"content": cut})
    blocks = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            share = max(min_keep_chars, math.floor(max_chars * utf16_length(block.text) / total))
            cut = truncate_tool_result_text(block.text, share, min_keep_chars=min_keep_chars, suffix=suffix)
            block = block.model_copy(update={"text": cut})
        blocks.append(block)
    return message.model_copy(update={"content": blocks})


def cap_tool_result_for_write(
    message: ToolResultMessage,
    max_chars: int | None = None,
    *,
    context_tokens: int | None = None,
    rules: RuntimeRules = OPENCLAW_2026_4_12,
) -> ToolResultMessage:
    """Persist-time cap (session-tool-result-guard.ts `capToolResultSize`): `max_chars` text chars
    (default: the rules' cap for a window of `context_tokens`), keeping at least `MIN_KEEP_CHARS`."""
    cap = write_cap_chars(context_tokens, rules) if max_chars is None else max_chars
    return truncate_tool_result_message(message, cap, min_keep_chars=MIN_KEEP_CHARS, rules=rules)


# ---------------------------------------------------------------- per-call context guard


class ContextOverflowError(RuntimeError):
    """The guard's preemptive overflow; its text is recognized by `is_context_overflow_error`."""

    def __init__(
        self, message: str = PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE, *, estimated_chars: int = 0, max_chars: int = 0
    ):
        super().__init__(message)
        self.estimated_chars = estimated_chars
        self.max_chars = max_chars


def _json_len(value: Any) -> int:
    """`JSON.stringify(value).length` (a string: its length)."""
    if value is None:
        return 0
    if isinstance(value, str):
        return utf16_length(value)
    try:
        return utf16_length(json_stringify(orjson.loads(orjson.dumps(value, default=str))))
    except (TypeError, ValueError, RecursionError):
        return GUARD_UNKNOWN_MESSAGE_CHARS


def _blocks_chars(content: Any) -> int:
    if isinstance(content, str):
        return utf16_length(content)
    chars = 0
    for block in content or []:
        if isinstance(block, TextBlock):
            chars += utf16_length(block.text)
        elif isinstance(block, ImageBlock):
            chars += GUARD_IMAGE_CHARS
        else:
            chars += _json_len(block.model_dump(mode="json", by_alias=True))
    return chars


def guard_chars(message: Any) -> int:
    """`estimateMessageChars` (tool-result-char-estimator.ts): tool results weigh ×2 (2 chars per
    token instead of 4) with `details` counted; anything that is not user / assistant / tool
    result counts 256 (OpenClaw estimates AgentMessages, where summaries are such messages)."""
    if isinstance(message, UserMessage):
        return _blocks_chars(message.content)
    if isinstance(message, AssistantMessage):
        chars = 0
        for block in message.content:
            if isinstance(block, TextBlock):
                chars += utf16_length(block.text)
            elif isinstance(block, ThinkingBlock):
                chars += utf16_length(block.thinking)
            elif isinstance(block, ToolCallBlock):
                chars += _json_len(block.arguments or {})
            else:
                chars += _json_len(block.model_dump(mode="json", by_alias=True))
        return chars
    if isinstance(message, ToolResultMessage):
        chars = _blocks_chars(message.content) + _json_len(message.details)
        weighted = math.ceil(chars * (CHARS_PER_TOKEN_ESTIMATE / TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE))
        return max(chars, weighted)
    return GUARD_UNKNOWN_MESSAGE_CHARS


def _tool_result_text(message: ToolResultMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock))


def _replace_tool_result_text(message: ToolResultMessage, text: str) -> ToolResultMessage:
    content: Any = text if isinstance(message.content, str) else [TextBlock(text=text)]
    data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
    data.pop("details", None)
    data["content"] = content if isinstance(content, str) else [{"type": "text", "text": text}]
    return ToolResultMessage.model_validate(data)


def _truncate_text_to_budget(text: str, max_chars: int) -> str:
    units = Utf16Text(text)
    size = len(units)
    if size <= max_chars:
        return text
    if max_chars <= 0:
        return format_truncation_notice(size)
    body = max_chars
    for _ in range(4):
        body = max(0, max_chars - len(format_truncation_notice(max(1, size - body))))
    cut = body
    newline = units.rfind("\n", cut)
    if newline > body * GUARD_NEWLINE_SNAP_SHARE:
        cut = newline
    return units.slice(0, cut) + format_truncation_notice(size - cut)


def _truncate_for_guard(message: ToolResultMessage, max_weighted_chars: int) -> ToolResultMessage:
    estimated = guard_chars(message)
    if estimated <= max_weighted_chars:
        return message
    ratio = CHARS_PER_TOKEN_ESTIMATE / TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE
    text = _tool_result_text(message)
    budget = max(0, math.floor(max_weighted_chars / ratio))
    if not text:
        return _replace_tool_result_text(
            message, format_truncation_notice(max(1, math.floor(max(estimated - max_weighted_chars, 1) / ratio)))
        )
    if budget <= 0:
        return _replace_tool_result_text(message, format_truncation_notice(utf16_length(text)))
    return _replace_tool_result_text(message, _truncate_text_to_budget(text, budget))


@dataclass
class GuardReport:
    """What the guard did to one call's window (the transcript is never touched)."""

    truncated_entry_ids: list[str | None] = field(default_factory=list)
    compacted_entry_ids: list[str | None] = field(default_factory=list)
    estimated_chars: int = 0
    max_single_chars: int = 0
    headroom_chars: int = 0
    max_context_chars: int = 0


def guard_context(
    window: Sequence[WindowMessage],
    context_tokens: int,
    *,
    skip_entry_ids: Iterable[str] = (),
    rules: RuntimeRules = OPENCLAW_2026_4_12,
) -> tuple[list[WindowMessage], GuardReport]:
    """The per-call guard: (1) cut any single tool result over `SINGLE_TOOL_RESULT_CONTEXT_SHARE` of
    the window (weighted chars), (2) if the window is over `CONTEXT_INPUT_HEADROOM_RATIO`, replace
    tool results with the placeholder oldest first, never the newest, (3) if still over
    `PREEMPTIVE_OVERFLOW_RATIO`, raise
    `ContextOverflowError(PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE)`. From 2026.9.6 on only (1), with
    OpenClaw's cut of each block (`fitted_truncation.guard_cut`). `skip_entry_ids` (e.g. protected
    mutating results) are left as they are — a replaylab option; OpenClaw has no such notion."""
    if rules.guard.single_result_cut == "truncate":
        out, truncated, max_single = fitted.guard_single_results(
            window,
            context_tokens,
            skip=set(skip_entry_ids),
            suffix=_notice_of(rules),
            min_keep_chars=rules.truncation.min_keep_chars,
            min_chars=rules.guard.min_chars,
            chars_per_token=rules.guard.single_result_chars_per_token,
            has_important_tail=has_important_tail,
        )
        estimated = sum(
            fitted.tool_result_guard_chars(w.message)
            if isinstance(w.message, ToolResultMessage)
            else guard_chars(w.message)
            for w in out
        )
        return out, GuardReport(truncated_entry_ids=truncated, estimated_chars=estimated, max_single_chars=max_single)
    ctx = max(1, int(context_tokens))
    report = GuardReport(
        max_single_chars=max(
            GUARD_MIN_CHARS, math.floor(ctx * TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE * SINGLE_TOOL_RESULT_CONTEXT_SHARE)
        ),
        headroom_chars=max(GUARD_MIN_CHARS, math.floor(ctx * CHARS_PER_TOKEN_ESTIMATE * CONTEXT_INPUT_HEADROOM_RATIO)),
        max_context_chars=max(GUARD_MIN_CHARS, math.floor(ctx * CHARS_PER_TOKEN_ESTIMATE * PREEMPTIVE_OVERFLOW_RATIO)),
    )
    skip = set(skip_entry_ids)
    out = list(window)
    sizes = [guard_chars(item.message) for item in out]
    for index, item in enumerate(out):
        if (
            isinstance(item.message, ToolResultMessage)
            and item.entry_id not in skip
            and sizes[index] > report.max_single_chars
        ):
            out[index] = WindowMessage(
                item.entry_id, _truncate_for_guard(item.message, report.max_single_chars), item.protected
            )
            sizes[index] = guard_chars(out[index].message)
            report.truncated_entry_ids.append(item.entry_id)
    total = sum(sizes)
    if total > report.headroom_chars:
        results = [i for i, item in enumerate(out) if isinstance(item.message, ToolResultMessage)]
        for index in results[:-1]:  # never the newest result
            if total <= report.headroom_chars:
                break
            item = out[index]
            if (
                item.entry_id in skip
                or _tool_result_text(item.message) == PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER
            ):
                continue
            out[index] = WindowMessage(
                item.entry_id,
                _replace_tool_result_text(item.message, PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER),
                item.protected,
            )
            new_size = guard_chars(out[index].message)
            total += new_size - sizes[index]
            sizes[index] = new_size
            report.compacted_entry_ids.append(item.entry_id)
    report.estimated_chars = total
    if total > report.max_context_chars:
        raise ContextOverflowError(estimated_chars=total, max_chars=report.max_context_chars)
    return out, report


# ---------------------------------------------------------------- session rewrite (recovery)


def _min_truncated_text_chars(min_keep_chars: int) -> int:
    return min_keep_chars + len(format_truncation_notice(1))


def plan_tool_result_replacements(
    path: Sequence[AnyEntry],
    context_tokens: int,
    *,
    max_chars: int | None = None,
    min_keep_chars: int = RECOVERY_MIN_KEEP_CHARS,
    skip_entry_ids: Iterable[str] = (),
) -> dict[str, ToolResultMessage]:
    """entry id → shortened tool result: every result over the per-result cap, then (with ≥ 2
    results) an aggregate budget of the same size, trimmed newest first."""
    cap = max(1, max_chars if max_chars is not None else calculate_max_tool_result_chars(context_tokens))
    skip = set(skip_entry_ids)
    results = [
        (e.id, e.message)
        for e in path
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage) and e.id not in skip
    ]
    return plan_result_replacements(results, cap, min_keep_chars=min_keep_chars)


def plan_result_replacements(
    results: Sequence[tuple[str, ToolResultMessage]],
    cap: int,
    *,
    min_keep_chars: int = RECOVERY_MIN_KEEP_CHARS,
    aggregate: bool = True,
    rules: RuntimeRules = OPENCLAW_2026_4_12,
) -> dict[str, ToolResultMessage]:
    """`plan_tool_result_replacements` over (id, result) pairs in order: each result over `cap`
    cut, then (`aggregate`, with ≥ 2 results) all of them trimmed newest first to `cap` together."""
    cap = max(1, cap)
    cut = functools.partial(truncate_tool_result_message, min_keep_chars=min_keep_chars, rules=rules)
    replacements = {eid: cut(m, cap) for eid, m in results if tool_result_text_length(m) > cap}
    current = [(i, eid, replacements.get(eid, m)) for i, (eid, m) in enumerate(results)]
    sized = [(i, eid, m, n) for i, eid, m in current if (n := tool_result_text_length(m)) > 0]
    if aggregate and len(sized) >= 2:
        remaining = sum(s[3] for s in sized) - cap
        floor_chars = _min_truncated_text_chars(min_keep_chars)
        for _, entry_id, message, length in sorted(sized, key=lambda s: (-s[0], -s[3])):
            if remaining <= 0:
                break
            reducible = max(0, length - floor_chars)
            shortened = cut(message, max(floor_chars, length - min(reducible, remaining))) if reducible > 0 else message
            reduction = length - tool_result_text_length(shortened)
            if reduction > 0:
                replacements[entry_id], remaining = shortened, remaining - reduction
    return replacements


def recovery_budgets(context_tokens: int, rules: RuntimeRules = OPENCLAW_2026_4_12) -> tuple[int, int]:
    """`resolveToolResultBudgets` as the recovery calls it: (the per-result cap, the results'
    aggregate text budget) — the latter max(cap x the rules' multiplier, the rules' share of the
    window in chars), which under 2026.4.12 is the per-result cap itself."""
    cap = max(1, calculate_max_tool_result_chars(context_tokens, rules))
    tokens = max(1, math.floor(context_tokens)) if math.isfinite(context_tokens) else 1
    share = math.floor(tokens * CHARS_PER_TOKEN_ESTIMATE * rules.truncation.recovery_aggregate_context_share)
    return cap, max(1, cap * rules.truncation.recovery_aggregate_cap_multiplier, share)


def _recovery_notice_of(rules: RuntimeRules) -> SuffixFactory:
    return lambda n: rules.truncation.recovery_notice.format(n=max(1, math.floor(n)))


def recovery_plan(
    results: Sequence[tuple[str | None, ToolResultMessage]],
    context_tokens: int,
    rules: RuntimeRules,
    *,
    keep: Iterable[str | None] = (),
) -> fitted.RecoveryPlan:
    """The recovery rewrite's plan over a branch's tool results in order (entry id, result) under
    `rules`: 2026.9.6's `buildRecoveryToolResultReplacementPlan` (`fitted_truncation.
    recovery_plan`), or 2026.4.12's per-result cut then newest-first trim
    (`plan_result_replacements`). `keep` (safeguard's protected results) are never cut; under
    2026.9.6 they still count in the aggregate total, under 2026.4.12 they are left out of it."""
    kept = set(keep)
    cap, budget = recovery_budgets(context_tokens, rules)
    if rules.truncation.recovery_aggregate_order == "branch-order":
        return fitted.recovery_plan(
            results,
            cap,
            budget,
            suffix=_notice_of(rules),
            compact_suffix=_recovery_notice_of(rules),
            has_important_tail=has_important_tail,
            keep=kept,
        )
    eligible = [(eid, m) for eid, m in results if eid is not None and eid not in kept]
    plan = fitted.RecoveryPlan()
    plan.replacements = plan_result_replacements(eligible, cap, rules=rules)
    return plan


def session_likely_has_oversized_tool_results(
    messages: Iterable[Any], context_tokens: int, rules: RuntimeRules = OPENCLAW_2026_4_12
) -> bool:
    """`sessionLikelyHasOversizedToolResults`: 2026.9.6: the recovery plan over the messages cuts
    a result over the per-result cap or takes chars off for the aggregate budget; 2026.4.12: a
    result over the per-result cap, or (≥ 2 results) results together over the same budget."""
    if rules.truncation.recovery_aggregate_order == "branch-order":
        results = [(f"message-{i}", m) for i, m in enumerate(messages) if isinstance(m, ToolResultMessage)]
        plan = recovery_plan(results, context_tokens, rules)
        return plan.oversized_count > 0 or plan.aggregate_reducible_chars > 0
    cap = calculate_max_tool_result_chars(context_tokens, rules)
    lengths = [tool_result_text_length(m) for m in messages if isinstance(m, ToolResultMessage)]
    lengths = [n for n in lengths if n > 0]
    return any(n > cap for n in lengths) or (len(lengths) >= 2 and sum(lengths) > cap)


@dataclass
class TruncationResult:
    truncated: bool
    truncated_count: int = 0
    working_copy: str | None = None
    leaf_id: str | None = None
    id_map: dict[str, str] = field(default_factory=dict)
    reason: str | None = None


def _remap_compaction(entry: CompactionEntry, id_map: dict[str, str]) -> dict[str, Any]:
    data = dump_entry(entry)
    if entry.first_kept_entry_id in id_map:
        data["firstKeptEntryId"] = id_map[entry.first_kept_entry_id]
    ours = (data.get("details") or {}).get("replaylab") if isinstance(data.get("details"), dict) else None
    if isinstance(ours, dict) and isinstance(ours.get("protectedEntryIds"), list):
        ours["protectedEntryIds"] = [id_map.get(i, i) for i in ours["protectedEntryIds"]]
    return data


def truncate_oversized_tool_results_in_session(
    session_file: str | Path,
    context_tokens: int,
    *,
    writer: TranscriptWriter | None = None,
    working_copy: str | Path | None = None,
    leaf_id: str | None = None,
    max_chars: int | None = None,
    skip_entry_ids: Iterable[str] = (),
) -> TruncationResult:
    """OpenClaw's recovery rewrite, on a working copy, append-only.

    The path (to `leaf_id`, default the file's leaf) is planned with the recovery minimum keep (0).
    From the first rewritten entry on, the whole suffix is re-appended with fresh ids, chained from
    that entry's parent, with the replacements applied; compaction `firstKeptEntryId`, replaylab
    `protectedEntryIds`, restated entries' `restates` and label targets are remapped. The old
    entries remain as an abandoned branch and the new leaf is the last line. `writer` appends to an
    existing working copy; otherwise a copy of `session_file` is made at `working_copy` (default: a
    temp file)."""
    transcript = load_transcript(session_file)
    path = transcript.path_to(leaf_id) if leaf_id else transcript.leaf_path()
    if not path:
        return TruncationResult(False, reason="empty session")
    replacements = plan_tool_result_replacements(
        path, context_tokens, max_chars=max_chars, skip_entry_ids=skip_entry_ids
    )
    if not replacements:
        return TruncationResult(False, reason="no oversized or aggregate tool results")
    if writer is None:
        destination = (
            Path(working_copy)
            if working_copy
            else Path(tempfile.mkdtemp(prefix="replaylab-truncate-")) / Path(session_file).name
        )
        writer = TranscriptWriter.working_copy(session_file, destination)
    first = next(i for i, e in enumerate(path) if e.id in replacements)
    taken = set(transcript.by_id)
    id_map: dict[str, str] = {}
    parent = path[first].parent_id
    for entry in path[first:]:
        new_id = derived_entry_id(taken, entry.id, "truncated")
        id_map[entry.id] = new_id
        if isinstance(entry, CompactionEntry):
            data = _remap_compaction(entry, id_map)
        else:
            data = dump_entry(entry)
            if isinstance(entry, LabelEntry) and entry.target_id in id_map:
                data["targetId"] = id_map[entry.target_id]
            if entry.restates in id_map:  # an entry a compaction restated follows its source
                data["restates"] = id_map[entry.restates]
            if entry.id in replacements:
                data["message"] = dump_entry(replacements[entry.id])
        data["id"], data["parentId"] = new_id, parent
        writer.append(data)
        parent = new_id
    return TruncationResult(
        True, truncated_count=len(replacements), working_copy=str(writer.path), leaf_id=parent, id_map=id_map
    )
