"""Which error texts OpenClaw 2026.9.6 takes for a context overflow, a rate limit, a billing error
or a failed compaction (`RuntimeRules.classifiers == "9.6"`; `compaction.recovery` has
2026.4.12's and chooses between them).

2026.9.6 keeps its wordings in `@openclaw/ai`'s pattern scopes (`CONTEXT_OVERFLOW_PATTERN_SCOPES`)
and OpenClaw's failover tables; the logic around them (`isContextOverflowErrorFromTables`,
`isLikelyContextOverflowError`, `isRateLimitErrorMessage`, ...) is ported here line for line, the
patterns compiled as JavaScript matches them (`js_strings.js_regex`). OpenClaw may also ask a
provider plugin about a text that looks like an overflow; replaylab loads no plugin, as OpenClaw
without one (the conformance harness answers so too).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from replaylab.compaction.js_strings import js_regex, js_trim
from replaylab.transcript.javascript import js_string, js_truthy
from replaylab.upstream import openclaw_2026_9_6 as OC96


def _compiled(patterns: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(js_regex(p) for p in patterns)


_SCOPES = {scope: _compiled(patterns) for scope, patterns in OC96.CONTEXT_OVERFLOW_PATTERN_SCOPES.items()}
_NON_OVERFLOW = _compiled(OC96.NON_OVERFLOW_PATTERNS)
_SIGNAL = js_regex(OC96.PROVIDER_CONTEXT_OVERFLOW_SIGNAL_RE)
_ACTION = js_regex(OC96.PROVIDER_CONTEXT_OVERFLOW_ACTION_RE)
_STATED_SIZES = js_regex(OC96.STATED_TOKEN_SIZES_RE)
_BILLING_HEAD = js_regex(OC96.BILLING_ERROR_HEAD_RE)
_HEADING = js_regex(OC96.MARKDOWN_HEADING_RE, ignore_case=False)
_SUMS = _compiled(OC96.OBSERVED_OVERFLOW_TOKEN_SUM_PATTERNS)
_COUNTS = _compiled(OC96.OBSERVED_OVERFLOW_TOKEN_PATTERNS)
#: a pattern list's entries: a regex, or (a plain string) a substring of the lower-cased text
_REGEX_CHARS = set("\\[](){}?*+^$|.")


def _entries(patterns: Iterable[str]) -> tuple[str | re.Pattern[str], ...]:
    return tuple(js_regex(p) if _REGEX_CHARS & set(p) else p for p in patterns)


_RATE_LIMIT = _entries(OC96.RATE_LIMIT_PATTERNS)
_BILLING = _entries(OC96.BILLING_PATTERNS)


def normalized(text: str) -> str:
    """`normalizeLowercaseStringOrEmpty`: trimmed, lower-cased."""
    return js_trim(text).lower()


def matches_scope(text: str, scope: str) -> bool:
    """`matchesContextOverflowMessage(text, scope)`."""
    return any(pattern.search(text) for pattern in _SCOPES[scope])


def _matches(raw: str | None, entries: tuple[str | re.Pattern[str], ...]) -> bool:
    """`matchesErrorPatterns`: on the trimmed, lower-cased text."""
    if not raw:
        return False
    value = normalized(raw)
    return any(e.search(value) if isinstance(e, re.Pattern) else e in value for e in entries)


def is_rate_limit_error(text: str | None) -> bool:
    return _matches(text, _RATE_LIMIT)


def is_billing_error(text: str | None) -> bool:
    value = normalized(text or "")
    if not value:
        return False
    assert text is not None
    if len(_HEADING.findall(text)) > 1:  # a document with headings, not an error
        return False
    if _matches(value, _BILLING):
        return True
    if not _BILLING_HEAD.search(text):
        return False
    return any(word in value for word in OC96.BILLING_HEAD_WORDS)


def _stated_count(digits: str | None) -> float | None:
    if digits is None:
        return None
    try:
        value = float(digits.replace(",", "") or "nan")
    except ValueError:
        return None
    return value if value == value and value > 0 and value != float("inf") else None


def is_provider_request_size_ceiling_error(text: str | None) -> bool:
    """A TPM limit whose request is larger than the limit (Groq's 413): an overflow, not a rate limit."""
    if not text:
        return False
    stated = _STATED_SIZES.search(text)
    limit = _stated_count(stated.group(1)) if stated else None
    requested = _stated_count(stated.group(2)) if stated else None
    return limit is not None and requested is not None and requested > limit


def _is_reasoning_constraint(text: str) -> bool:
    lower = normalized(text)
    return any(s in lower for s in OC96.REASONING_CONSTRAINT_SUBSTRINGS) or (
        "reasoning" in lower and "cannot be disabled" in lower
    )


def looks_like_provider_overflow(text: str) -> bool:
    """`looksLikeProviderContextOverflowCandidate`."""
    return not is_rate_limit_error(text) and bool(_SIGNAL.search(text)) and bool(_ACTION.search(text))


def is_context_overflow_error(text: str | None) -> bool:
    """`isContextOverflowError` (`isContextOverflowErrorFromTables`; no provider plugin)."""
    if not text:
        return False
    if matches_scope(text, "tpm-rate-limit-hint") and not is_provider_request_size_ceiling_error(text):
        return False
    if _is_reasoning_constraint(text):
        return False
    return matches_scope(text, "failover-explicit") or (
        looks_like_provider_overflow(text) and matches_scope(text, "provider-fallback")
    )


def is_likely_context_overflow_error(text: str | None) -> bool:
    """`isLikelyContextOverflowError`."""
    if not text:
        return False
    if is_provider_request_size_ceiling_error(text):
        return is_context_overflow_error(text)
    if matches_scope(text, "tpm-rate-limit-hint") or _is_reasoning_constraint(text) or is_billing_error(text):
        return False
    if matches_scope(text, "context-window-too-small") or is_rate_limit_error(text):
        return False
    if is_context_overflow_error(text):
        return True
    if OC96.PROMPT_TEMPLATE_WORDS in normalized(text):
        return False
    if matches_scope(text, "rate-limit-hint"):
        return False
    return matches_scope(text, "failover-hint")


def is_compaction_failure_error(text: str | None) -> bool:
    """`isCompactionFailureError`: a compaction term plus a likely overflow (or "context overflow")."""
    if not text:
        return False
    lower = normalized(text)
    if not any(term in lower for term in OC96.COMPACTION_FAILURE_TERMS):
        return False
    return is_likely_context_overflow_error(text) or "context overflow" in lower


def extract_observed_overflow_token_count(text: str | None) -> int | None:
    """`extractObservedOverflowTokenCount`: N + M of a sum first, else the first stated count."""
    if not text:
        return None
    for pattern in _SUMS:
        found = pattern.search(text)
        left = _stated_count(found.group(1)) if found else None
        right = found.group(2).replace(",", "") if found else ""
        if left is not None and right.isdigit():
            return int(left + int(right))
    for pattern in _COUNTS:
        found = pattern.search(text)
        count = _stated_count(found.group(1)) if found else None
        if count is not None:
            return int(count)
    return None


def _context_input_tokens(usage: dict[str, Any]) -> float | None:
    context = usage.get("contextUsage")
    if isinstance(context, dict) and context.get("state") == "available":
        return context.get("promptTokens")
    if isinstance(context, dict) and context.get("state") == "unavailable":
        return None
    parts = [usage.get(key) for key in ("input", "cacheRead", "cacheWrite")]
    numbers = [part for part in parts if isinstance(part, int | float) and not isinstance(part, bool)]
    if len(numbers) < len(parts):
        return None  # JavaScript's sum is NaN, which exceeds nothing
    return sum(numbers)


def is_context_overflow(message: Any, context_window: int | None = None) -> bool:
    """`@openclaw/ai` `isContextOverflow(message, contextWindow)`: an assistant error in the
    assistant-error scope (not throttling), a successful reply whose prompt (input + cache reads
    + cache writes, or the provider's context snapshot) exceeds the window, or a length stop with
    no output at 99 % of it. A provider refusal is never an overflow."""
    diagnostics = getattr(message, "diagnostics", None) or (message.model_extra or {}).get("diagnostics") or []
    if any(isinstance(d, dict) and d.get("type") == "provider_refusal" for d in diagnostics):
        return False
    # `message.errorMessage` tested for truth, then by `RegExp.test`, which reads its JavaScript string
    text = js_string(message.error_message) if js_truthy(message.error_message) else ""
    if message.stop_reason == "error" and text:
        if not any(p.search(text) for p in _NON_OVERFLOW) and matches_scope(text, "assistant-error"):
            return True
    usage = message.usage if isinstance(message.usage, dict) else {}
    if context_window and message.stop_reason == "stop":
        tokens = _context_input_tokens(usage)
        if tokens is not None and tokens > context_window:
            return True
    if context_window and message.stop_reason == "length" and usage.get("output") == 0:
        tokens = _context_input_tokens(usage)
        if tokens is not None and tokens >= context_window * OC96.LENGTH_STOP_OVERFLOW_SHARE:
            return True
    return False
