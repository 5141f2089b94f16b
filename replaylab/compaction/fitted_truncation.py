"""Tool-result truncation and the request-time guard as OpenClaw cuts from 2026.9.6 on
(`RuntimeRules.truncation.fits_max_chars`, `RuntimeRules.guard.single_result_cut == "truncate"`).

The same shape as 2026.4.12's (`compaction.truncation`): head only, or head + middle marker + tail
when the tail looks important, then a notice counting what is gone. What differs:

* lengths are OpenClaw's weighted estimate (`js_strings.weighted_length`: UTF-16 units, CJK
  characters 4 and more), and cuts are by UTF-16 units, never inside a surrogate pair;
* the 2,000-character floor is clamped to the budget, and notice + kept text are fitted again
  until they fit, so a cut text never exceeds `max_chars` (2026.4.12 kept 2,000 and overshot);
* the head snaps back to its last newline when that lies past 80 % of the head it kept;
* a message's text blocks share the budget by weight after each large block's notice is
  reserved, small blocks kept whole when they fit; a result whose content is one string is left
  as it is.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.js_strings import Utf16Text, slice_to_budget, weighted_length
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.javascript import json_stringify, utf16_length
from replaylab.transcript.model import TextBlock, ToolResultMessage
from replaylab.upstream.openclaw_2026_4_12 import (
    HEAD_NEWLINE_SNAP_SHARE,
    MAX_TAIL_BUDGET_CHARS,
    MIDDLE_OMISSION_MARKER,
    TAIL_BUDGET_SHARE,
    TAIL_NEWLINE_SNAP_SHARE,
)
from replaylab.upstream.openclaw_2026_9_6 import (
    AGGREGATE_ELISION_MARKER,
    GUARD_IMAGE_CHARS,
    GUARD_TEXT_MINIMUM_RAW_WEIGHT,
    IMAGE_OMISSION_NONE_FIT,
    IMAGE_OMISSION_NOTICE,
    RECOVERY_MIN_KEEP_CHARS,
)

SuffixFactory = Callable[[int], str]


def effective_min_keep(max_chars: int, min_keep_chars: int, suffix: SuffixFactory, weight: int) -> int:
    """`resolveEffectiveMinKeepChars`: the floor, clamped to what the budget leaves beside a notice."""
    floor = weighted_length(suffix(1), weight)
    return max(0, min(min_keep_chars, max(0, max_chars - floor)))


def _fit(kept: str, original_length: int, max_chars: int, suffix: SuffixFactory, weight: int) -> str:
    """`appendBoundedTruncationSuffix`: the notice for what is gone after `kept`, the kept text
    shortened until both fit in `max_chars`."""
    while True:
        notice = suffix(max(1, original_length - utf16_length(kept)))
        notice_chars = weighted_length(notice, weight)
        if notice_chars >= max_chars:
            return slice_to_budget(suffix(max(1, original_length)), max_chars, weight)
        shorter = slice_to_budget(kept, max_chars - notice_chars, weight)
        final = shorter + notice
        if utf16_length(shorter) == utf16_length(kept) and weighted_length(final, weight) <= max_chars:
            return final
        if not shorter and not kept:
            return slice_to_budget(final, max_chars, weight)
        kept = shorter


def truncate_text(
    text: str,
    max_chars: int,
    *,
    min_keep_chars: int,
    suffix: SuffixFactory,
    has_important_tail: Callable[[str], bool],
    weight: int = 1,
) -> str:
    """`truncateToolResultText(text, maxChars, {suffix, minKeepChars, minimumRawWeight})`."""
    min_keep = effective_min_keep(max_chars, min_keep_chars, suffix, weight)
    units = Utf16Text(text)
    size = len(units)
    if size <= max_chars and weighted_length(text, weight) <= max_chars:
        return text
    initial = slice_to_budget(text, max_chars, weight)
    default_notice = suffix(max(1, size - utf16_length(initial)))
    budget = max(min_keep, max_chars - weighted_length(default_notice, weight))
    if has_important_tail(text) and budget > min_keep * 2:
        tail_budget = min(math.floor(budget * TAIL_BUDGET_SHARE), MAX_TAIL_BUDGET_CHARS)
        head_budget = budget - tail_budget - weighted_length(MIDDLE_OMISSION_MARKER, weight)
        if head_budget > min_keep:
            head = Utf16Text(slice_to_budget(text, head_budget, weight))
            newline = head.text.rfind("\n")
            if newline >= 0:
                newline = utf16_length(head.text[:newline])
            if newline > len(head) * HEAD_NEWLINE_SNAP_SHARE:
                head = Utf16Text(head.safe_slice(0, newline))
            tail = Utf16Text(slice_to_budget(text, tail_budget, weight, from_end=True))
            newline = tail.text.find("\n")
            if newline >= 0:
                newline = utf16_length(tail.text[:newline])
            if newline != -1 and newline < len(tail) * TAIL_NEWLINE_SNAP_SHARE:
                tail = Utf16Text(tail.safe_slice(newline + 1))
            if len(head) + len(tail) < size:
                return _fit(head.text + MIDDLE_OMISSION_MARKER + tail.text, size, max_chars, suffix, weight)
    kept = Utf16Text(slice_to_budget(text, budget, weight))
    newline = kept.text.rfind("\n")
    if newline >= 0:
        newline = utf16_length(kept.text[:newline])
    if newline > len(kept) * HEAD_NEWLINE_SNAP_SHARE:
        kept = Utf16Text(kept.safe_slice(0, newline))
    return _fit(kept.text, size, max_chars, suffix, weight)


def text_of(block: Any) -> str | None:
    """`isToolResultTextBlock`: a `text` or `toolResult` block's string text (None: not one)."""
    if getattr(block, "type", None) not in ("text", "toolResult"):
        return None
    text = getattr(block, "text", None)
    return text if isinstance(text, str) else None


def truncate_message(
    message: ToolResultMessage,
    max_chars: int,
    *,
    min_keep_chars: int,
    suffix: SuffixFactory,
    has_important_tail: Callable[[str], bool],
    weight: int = 1,
) -> ToolResultMessage:
    """`truncateToolResultMessage(msg, maxChars, {suffix, minKeepChars, minimumRawWeight})`."""
    min_keep = effective_min_keep(max_chars, min_keep_chars, suffix, weight)
    content = message.content
    if not isinstance(content, list):
        return message
    texts = [text_of(block) for block in content]
    chars = [weighted_length(t, weight) if t is not None else 0 for t in texts]
    total = sum(chars)
    if total <= max_chars:
        return message
    small = [
        chars[i] > 0 and t is not None and utf16_length(t) <= min_keep and weighted_length(t) <= min_keep
        for i, t in enumerate(texts)
    ]
    notices = [
        weighted_length(suffix(max(1, utf16_length(t))), weight) if chars[i] > 0 and t is not None else 0
        for i, t in enumerate(texts)
    ]
    small_chars = sum(c for c, s in zip(chars, small) if s)
    large_notices = sum(n for n, s in zip(notices, small) if not s)
    keep_small = small_chars + large_notices <= max_chars
    preserved = small_chars if keep_small else 0
    remaining = max(0, max_chars - preserved)
    reducible = total - preserved
    reducible_notices = large_notices if keep_small else sum(notices)
    notice_scale = min(1, remaining / reducible_notices) if reducible_notices > 0 else 0
    distributable = max(0, remaining - reducible_notices)
    blocks = []
    for index, block in enumerate(content):
        text = texts[index]
        if text is None:
            blocks.append(block)
            continue
        keep_whole = keep_small and small[index]
        share = chars[index] / reducible if reducible > 0 else 0
        budget = chars[index] if keep_whole else math.floor(notices[index] * notice_scale + distributable * share)
        block_min_keep = chars[index] if keep_whole else math.floor(min_keep * share)
        cut = truncate_text(
            text,
            budget,
            min_keep_chars=block_min_keep,
            suffix=suffix,
            has_important_tail=has_important_tail,
            weight=weight,
        )
        update: dict[str, Any] = {"text": cut}
        if isinstance((block.model_extra or {}).get("content"), str):
            update["content"] = cut  # a block mirroring its text in `content` gets the cut text too
        blocks.append(block.model_copy(update=update))
    return message.model_copy(update={"content": blocks})


# ---------------------------------------------------------------- the recovery rewrite's plan (2026.9.6)


def text_budget(message: Any) -> int:
    """`getToolResultTextBudget`: a tool result's text blocks by weight (raw weight 1); a result
    whose content is one string, and any other message, weigh nothing."""
    if not isinstance(message, ToolResultMessage) or not isinstance(message.content, list):
        return 0
    return sum(weighted_length(text) for block in message.content if (text := text_of(block)) is not None)


def clear_text(message: ToolResultMessage, max_text_chars: int) -> ToolResultMessage:
    """`clearToolResultText` (without spill markers): each text block's text replaced by the
    elision marker cut to what is left of `max_text_chars`; other blocks kept."""
    if not isinstance(message.content, list):
        return message
    remaining = max(0, math.floor(max_text_chars))
    blocks = []
    for block in message.content:
        if text_of(block) is None:
            blocks.append(block)
            continue
        text = slice_to_budget(AGGREGATE_ELISION_MARKER, remaining)
        remaining = max(0, remaining - weighted_length(text))
        update: dict[str, Any] = {"text": text}
        if isinstance((block.model_extra or {}).get("content"), str):
            update["content"] = text
        blocks.append(block.model_copy(update=update))
    return message.model_copy(update={"content": blocks})


@dataclass
class RecoveryPlan:
    """`buildRecoveryToolResultReplacementPlan`'s answer: entry id → the result that replaces it
    (only those that changed, in branch order), and the figures
    `estimateToolResultReductionPotential` reads."""

    replacements: dict[str, ToolResultMessage] = field(default_factory=dict)
    oversized_count: int = 0
    oversized_reducible_chars: int = 0
    aggregate_reducible_chars: int = 0


def recovery_plan(
    results: Sequence[tuple[str | None, ToolResultMessage]],
    max_chars: int,
    aggregate_budget_chars: int,
    *,
    suffix: SuffixFactory,
    compact_suffix: SuffixFactory,
    has_important_tail: Callable[[str], bool],
    keep: Collection[str | None] = (),
    min_keep_chars: int = RECOVERY_MIN_KEEP_CHARS,
) -> RecoveryPlan:
    """`buildToolResultReplacementPlan` with the recovery's floor, over a branch's tool results in
    order: (1) each result whose text weighs more than `max_chars` cut to it; (2) with ≥ 2 results
    holding text and their total over `aggregate_budget_chars`, the excess taken from them in
    branch order — first each cut down (to no less than one notice; `compact_suffix` when the
    budget is under one full notice per result), then, if still over, their text replaced by the
    elision marker cut to what is left. Results in `keep` (and those without an id) count in the
    total but are never cut (replaylab's safeguard option)."""
    cut = functools.partial(truncate_message, min_keep_chars=min_keep_chars, has_important_tail=has_important_tail)
    plan = RecoveryPlan()
    phase: dict[str, ToolResultMessage] = {}
    measured: list[tuple[str | None, ToolResultMessage, int]] = []
    for entry_id, message in results:
        length = text_budget(message)
        if length > max_chars and entry_id is not None and entry_id not in keep:
            shortened = cut(message, max_chars, suffix=suffix)
            after = length if shortened is message else text_budget(shortened)
            phase[entry_id] = shortened
            plan.oversized_count += 1
            plan.oversized_reducible_chars += max(0, length - after)
            message, length = shortened, after
        measured.append((entry_id, message, length))
    candidates = [item for item in measured if item[2] > 0]
    total = sum(length for _, _, length in candidates)
    if len(candidates) >= 2 and total > aggregate_budget_chars:
        tight = aggregate_budget_chars < len(candidates) * weighted_length(suffix(1))
        factory = compact_suffix if min_keep_chars == 0 and tight else suffix
        floor = min_keep_chars + weighted_length(factory(1))
        remaining = total - aggregate_budget_chars
        lengths: dict[str, int] = {}
        for clear in (False, True):
            for entry_id, message, length in candidates:
                if remaining <= 0:
                    break
                if entry_id is None or entry_id in keep:
                    continue
                base = lengths.get(entry_id, length)
                if not clear and base <= floor:
                    continue
                if clear:
                    shortened = clear_text(message, max(0, base - remaining))
                else:
                    target = max(floor, base - remaining, weighted_length(factory(1)))
                    shortened = cut(message, target, suffix=factory)
                after = length if shortened is message else text_budget(shortened)
                reduction = max(0, base - after)
                if reduction <= 0:
                    continue
                phase[entry_id], lengths[entry_id] = shortened, after
                remaining -= reduction
        plan.aggregate_reducible_chars = sum(
            max(0, length - lengths[entry_id]) for entry_id, _, length in candidates if entry_id in lengths
        )
    for entry_id, message in results:
        if entry_id in phase and _dumped(phase[entry_id]) != _dumped(message):
            plan.replacements[entry_id] = phase[entry_id]
    return plan


def _dumped(message: ToolResultMessage) -> dict[str, Any]:
    return message.model_dump(mode="json", by_alias=True, exclude_unset=True)


# ---------------------------------------------------------------- the request-time guard (2026.9.6)


def _is_text(block: Any) -> bool:
    return getattr(block, "type", None) == "text" and isinstance(getattr(block, "text", None), str)


def _text_of(block: Any) -> str | None:
    """A text block's text (None for any other block)."""
    return str(block.text) if _is_text(block) else None


def _is_image(block: Any) -> bool:
    return getattr(block, "type", None) == "image"


def _block_json_chars(block: Any) -> int:
    """`JSON.stringify(block).length` of a block that is neither text nor image."""
    return utf16_length(json_stringify(block.model_dump(mode="json", by_alias=True, exclude_unset=True)))


def _content_of(message: ToolResultMessage) -> list[Any]:
    """`getToolResultContent`: a string content as one text block."""
    if isinstance(message.content, str):
        return [TextBlock(type="text", text=message.content)]
    return list(message.content)


def tool_result_guard_chars(message: ToolResultMessage, content: list[Any] | None = None) -> int:
    """`estimateToolResultContentChars`: text at raw weight 2 (CJK weighted), an image
    `GUARD_IMAGE_CHARS`, any other block its JSON length twice; `details` do not count."""
    chars = 0
    for block in _content_of(message) if content is None else content:
        if _is_text(block):
            chars += weighted_length(block.text, GUARD_TEXT_MINIMUM_RAW_WEIGHT)
        elif _is_image(block):
            chars += GUARD_IMAGE_CHARS
        else:
            chars += _block_json_chars(block) * 2
    return chars


def _replaced(message: ToolResultMessage, replacement: str | list[Any]) -> ToolResultMessage:
    """`replaceToolResultContent`: the message with this content and without its `details`."""
    if isinstance(replacement, str) and isinstance(message.content, list):
        replacement = [TextBlock(type="text", text=replacement)]
    data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
    data.pop("details", None)
    data["content"] = replacement if isinstance(replacement, str) else [_block_data(b) for b in replacement]
    return ToolResultMessage.model_validate(data)


def _block_data(block: Any) -> dict[str, Any]:
    """A block as read, with its `type` even when it was made with the default one (a cut text
    block): without it the block would not be read back as the same kind."""
    data = block.model_dump(mode="json", by_alias=True, exclude_unset=True)
    kind = getattr(block, "type", None)
    return data if kind is None or "type" in data else {"type": kind, **data}


def _image_notice(image_count: int, retained: int) -> str:
    omitted = image_count - retained
    return IMAGE_OMISSION_NOTICE.format(
        omitted=omitted, plural="" if omitted == 1 else "s", none_fit=IMAGE_OMISSION_NONE_FIT if retained == 0 else ""
    )


def guard_cut(
    message: ToolResultMessage,
    max_chars: int,
    *,
    suffix: SuffixFactory,
    min_keep_chars: int,
    has_important_tail: Callable[[str], bool],
) -> ToolResultMessage:
    """`truncateToolResultToChars`: a tool result weighing more than `max_chars` cut to fit —
    images kept while they fit (the rest omitted with a notice), text blocks truncated in what
    the other blocks and the notice leave; a string content cut as one text."""
    if tool_result_guard_chars(message) <= max_chars:
        return message
    weight = GUARD_TEXT_MINIMUM_RAW_WEIGHT
    if not isinstance(message.content, list):
        text = message.content
        cut = truncate_text(
            text, max_chars, min_keep_chars=0, suffix=suffix, has_important_tail=has_important_tail, weight=weight
        )
        return _replaced(message, cut)
    content = list(message.content)
    image_count = sum(1 for block in content if _is_image(block))

    def project(retained: list[Any], notice_text: str | None) -> ToolResultMessage:
        notice = [TextBlock(type="text", text=notice_text)] if notice_text else []
        reserved = tool_result_guard_chars(message, [b for b in retained if not _is_text(b)] + notice)
        cut = truncate_message(
            _replaced(message, retained),
            max(0, max_chars - reserved),
            min_keep_chars=min_keep_chars,
            suffix=suffix,
            has_important_tail=has_important_tail,
            weight=weight,
        )
        return _replaced(message, [*cut.content, *notice])

    for retained_images in range(min(image_count, max_chars // GUARD_IMAGE_CHARS), -1, -1):
        seen = 0
        retained = []
        for block in content:
            if _is_image(block):
                seen += 1
                if seen > retained_images:
                    continue
            retained.append(block)
        projected = project(
            retained, _image_notice(image_count, retained_images) if retained_images < image_count else None
        )
        shown = list(projected.content)
        emptied = any(
            _text_of(block) and (index >= len(shown) or not _text_of(shown[index]))
            for index, block in enumerate(retained)
        )
        if not emptied and tool_result_guard_chars(projected) <= max_chars:
            return projected
    omitted = tool_result_guard_chars(message, [b for b in content if not _is_text(b)])
    notice = _image_notice(image_count, 0) if image_count else suffix(max(1, omitted // 2))
    return project([b for b in content if _is_text(b)], notice)


def guard_single_results(
    window: Sequence[WindowMessage],
    context_tokens: int,
    *,
    skip: set[str],
    suffix: SuffixFactory,
    min_keep_chars: int,
    min_chars: int,
    chars_per_token: float,
    has_important_tail: Callable[[str], bool],
) -> tuple[list[WindowMessage], list[str | None], int]:
    """2026.9.6's guard over one call's window: each tool result weighing more than
    `resolveToolResultContextMaxChars` cut on its own (`guard_cut`); nothing replaced, nothing
    raised (a mid-turn precheck, when the runner enables it, decides about compaction instead).
    (the window, the entry ids cut, the single-result cap)"""
    max_single = max(min_chars, math.floor(max(1, math.floor(context_tokens)) * chars_per_token))
    out = list(window)
    truncated: list[str | None] = []
    for index, item in enumerate(out):
        if not isinstance(item.message, ToolResultMessage) or item.entry_id in skip:
            continue
        cut = guard_cut(
            item.message,
            max_single,
            suffix=suffix,
            min_keep_chars=min_keep_chars,
            has_important_tail=has_important_tail,
        )
        if cut is not item.message:
            out[index] = WindowMessage(item.entry_id, cut, item.protected)
            truncated.append(item.entry_id)
    return out, truncated, max_single
