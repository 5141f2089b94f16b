"""Tool-result size control: write-time cap, head / head+tail truncation and the per-call context
guard (openclaw-internals §4); the recovery's rewrite of the session is
`compaction.session_truncation`.

Three places shrink tool output in OpenClaw, each with its own numbers:

* **write time** (`session-tool-result-guard.ts`): a result is capped to
  `DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS` text chars before it is persisted (`cap_tool_result_for_write`);
* **per call** (`tool-result-context-guard.ts`, in memory only): one oversized result is cut, then
  (as the OpenClaw releases before the snapshot did, and replaylab keeps) old results are replaced
  by a placeholder while the newest is kept, then an estimate over `PREEMPTIVE_OVERFLOW_RATIO` of
  the window raises the preemptive overflow error that the recovery chain recognizes (`guard_context`);
* **recovery** (`tool-result-truncation.ts`): the session itself is rewritten — per-result cap plus
  an aggregate budget (2026.4.12 the cap, trimmed newest first; 2026.9.6 four caps or half the
  window, trimmed oldest first, cut then cleared) — `compaction.session_truncation`, with these cuts.

Texts are cut by `truncate_tool_result_text`: head only, or head + tail when the tail looks
important (errors, JSON closing, totals), with the exact upstream markers.

Every function takes the OpenClaw release's rules as a value (`rules`, an
`upstream.runtime_rules.RuntimeRules`; default 2026.4.12's). From 2026.9.6 on texts are measured
by OpenClaw's weighted length and cut to fit (`compaction.fitted_truncation`), the write-time cap
depends on the window, the guard only cuts single results, and the recovery's plan is OpenClaw's
(`fitted_truncation.recovery_plan`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from replaylab.compaction import fitted_truncation as fitted
from replaylab.compaction.js_strings import Utf16Text, js_regex, js_trim
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.javascript import json_stringify, utf16_length
from replaylab.transcript.model import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
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


def notice_of(rules: RuntimeRules) -> SuffixFactory:
    """`rules`' truncation notice as a suffix factory."""
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
    suffix = suffix or notice_of(rules)
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
            suffix=suffix or notice_of(rules),
            has_important_tail=has_important_tail,
            weight=minimum_raw_weight,
        )
    total = tool_result_text_length(message)
    if total <= max_chars:
        return message
    if isinstance(message.content, str):
        cut = truncate_tool_result_text(message.content, max_chars, min_keep_chars=min_keep_chars, suffix=suffix)
        return message.model_copy(update={"content": cut})
    notice = suffix or notice_of(rules)
    blocks = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            size = utf16_length(block.text)
            share = math.floor(max_chars * size / total)
            # the floor holds the notice for what the share would cut, so a block kept whole but
            # for its notice keeps one more character when the text's own notice is one digit shorter
            budget = max(min_keep_chars + utf16_length(notice(max(1, size - share))), share)
            cut = truncate_tool_result_text(block.text, budget, min_keep_chars=min_keep_chars, suffix=notice)
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
            suffix=notice_of(rules),
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
