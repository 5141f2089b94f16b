"""Context-overflow detection and the recovery chain of OpenClaw's run loop, as a pure state machine.

Detection (openclaw-internals §2.3, §5.1): pi's `isContextOverflow` on an assistant message (its
provider patterns, the 0.66.1 additions and non-overflow exclusions, Cerebras' bodiless 400/413, and
silent overflow by usage) and OpenClaw's `isContextOverflowError` / `isLikelyContextOverflowError` /
`isCompactionFailureError` on error text.

The chain (`run.ts`, §5.3) for one run: after each attempt —
1. timed out (not during compaction) with prompt tokens over `TIMEOUT_COMPACTION_PROMPT_SHARE` of
   the window and fewer than `MAX_TIMEOUT_COMPACTION_ATTEMPTS` timeout compactions so far ⇒
   compact (`timeout_recovery`) and retry;
2. an overflow (the prompt error if there is one, else the last assistant error; skipped if aborted):
   0. from 2026.9.6 on, a provider's request-size ceiling ⇒ give up at once (step d);
   a. the attempt already compacted in-attempt (pi) ⇒ count an attempt, retry **without** compacting;
   b. else, fewer than `MAX_OVERFLOW_COMPACTION_ATTEMPTS` attempts ⇒ count, compact (`overflow`),
      retry if it compacted (a compaction that did not happen says why: `StepOutcome.failure`);
   c. once per run, if the snapshot has oversized tool results ⇒ truncate them in the session, retry;
   d. give up: `compaction_failure` when the error text is one, else `context_overflow`, with the
      user-facing text and a diagnostic id (`create_compaction_diag_id`).

The machine owns no I/O: the agent loop passes `attempt(window)`, `compact_fn(trigger, info)` and
`truncate_fn(info)`; each may hand back a new window.

Detection and the chain take the OpenClaw release's rules as a value (`rules`; default
2026.4.12's): from 2026.9.6 on the classifiers are `compaction.error_classes`, an assistant error is
judged by `@openclaw/ai`'s `isContextOverflow`, and giving up says the release's texts.
"""

from __future__ import annotations

import re
import secrets
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from replaylab.compaction import error_classes as oc96
from replaylab.compaction.params import CompactFailure, CompactResult
from replaylab.transcript.javascript import js_string, js_truthy
from replaylab.transcript.model import AssistantMessage
from replaylab.upstream.openclaw_2026_4_12 import (
    COMPACTION_DIAG_ID_PREFIX,
    COMPACTION_DIAG_ID_TOKEN_CHARS,
    COMPACTION_FAILURE_ERROR_KIND,
    COMPACTION_FAILURE_TERMS,
    CONTEXT_OVERFLOW_ERROR_KIND,
    CONTEXT_OVERFLOW_HINT_RE,
    CONTEXT_WINDOW_TOO_SMALL_RE,
    OBSERVED_OVERFLOW_TOKEN_PATTERNS,
    OPENCLAW_BILLING_PATTERNS,
    OPENCLAW_OVERFLOW_CJK,
    OPENCLAW_OVERFLOW_SUBSTRING_PAIRS,
    OPENCLAW_OVERFLOW_SUBSTRINGS,
    OPENCLAW_PROVIDER_OVERFLOW_PATTERNS,
    OPENCLAW_RATE_LIMIT_PATTERNS,
    OPENCLAW_REASONING_CONSTRAINT_SUBSTRINGS,
    OPENCLAW_REQUEST_SIZE_CONTEXT_WORDS,
    OPENCLAW_REQUEST_SIZE_EXCEEDS,
    OPENCLAW_TPM_HINT,
    RATE_LIMIT_HINT_RE,
    TIMEOUT_COMPACTION_PROMPT_SHARE,
)
from replaylab.upstream.pi_0_73_1 import (
    PI_0661_EXTRA_OVERFLOW_PATTERNS,
    PI_0661_NON_OVERFLOW_PATTERNS,
    PI_CEREBRAS_NO_BODY_PATTERN,
    PI_OVERFLOW_PATTERNS,
)
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, RuntimeRules

_I = re.IGNORECASE
_PI_PATTERNS = [re.compile(p, _I) for p in PI_OVERFLOW_PATTERNS + PI_0661_EXTRA_OVERFLOW_PATTERNS]
_PI_NON_OVERFLOW = [re.compile(p, _I) for p in PI_0661_NON_OVERFLOW_PATTERNS]
_CEREBRAS = re.compile(PI_CEREBRAS_NO_BODY_PATTERN, _I)
_PROVIDER = [re.compile(p, _I) for p in OPENCLAW_PROVIDER_OVERFLOW_PATTERNS]
_TPM = re.compile(OPENCLAW_TPM_HINT, _I)
_TOO_SMALL = re.compile(CONTEXT_WINDOW_TOO_SMALL_RE, _I)
_HINT = re.compile(CONTEXT_OVERFLOW_HINT_RE, _I)
_RATE_HINT = re.compile(RATE_LIMIT_HINT_RE, _I)
_RATE = [re.compile(p, _I) for p in OPENCLAW_RATE_LIMIT_PATTERNS]
_BILLING = [re.compile(p, _I) for p in OPENCLAW_BILLING_PATTERNS]
_OBSERVED = [re.compile(p, _I) for p in OBSERVED_OVERFLOW_TOKEN_PATTERNS]

#: OpenClaw's text when the run loop itself gives up (run.ts MAX_RUN_LOOP_ITERATIONS)
RUN_LOOP_EXHAUSTED_TEXT = "Request failed after repeated internal retries."


# ---------------------------------------------------------------- detection


def pi_is_context_overflow(
    message: AssistantMessage, context_window: int | None = None, rules: RuntimeRules = OPENCLAW_2026_4_12
) -> bool:
    """pi `isContextOverflow` (0.66.1): an errored assistant whose message matches a provider
    pattern (and no throttling / rate-limit exclusion), Cerebras' `400/413 (no body)`, or a
    successful reply whose input + cacheRead usage exceeds the window (silent overflow). From
    OpenClaw 2026.9.6 on, `@openclaw/ai`'s own (`error_classes.is_context_overflow`)."""
    if rules.classifiers == "9.6":
        return oc96.is_context_overflow(message, context_window)
    # `message.errorMessage` tested for truth, then by `RegExp.test`, which reads its JavaScript string
    text = js_string(message.error_message) if js_truthy(message.error_message) else ""
    if message.stop_reason == "error" and text:
        if not any(p.search(text) for p in _PI_NON_OVERFLOW):
            if any(p.search(text) for p in _PI_PATTERNS) or _CEREBRAS.search(text):
                return True
    if context_window and message.stop_reason == "stop" and isinstance(message.usage, dict) and message.usage:
        used = (message.usage.get("input") or 0) + (message.usage.get("cacheRead") or 0)
        if used > context_window:
            return True
    return False


def _is_reasoning_constraint(lower: str) -> bool:
    return any(s in lower for s in OPENCLAW_REASONING_CONSTRAINT_SUBSTRINGS) or (
        "reasoning" in lower and "cannot be disabled" in lower
    )


def is_rate_limit_error(text: str, rules: RuntimeRules = OPENCLAW_2026_4_12) -> bool:
    if rules.classifiers == "9.6":
        return oc96.is_rate_limit_error(text)
    return any(p.search(text.lower()) for p in _RATE)


def is_billing_error(text: str, rules: RuntimeRules = OPENCLAW_2026_4_12) -> bool:
    if rules.classifiers == "9.6":
        return oc96.is_billing_error(text)
    return any(p.search(text.lower()) for p in _BILLING)


def is_context_overflow_error(text: str | None, rules: RuntimeRules = OPENCLAW_2026_4_12) -> bool:
    """OpenClaw `isContextOverflowError`: exact substrings and provider patterns (TPM and
    reasoning-constraint errors excluded)."""
    if rules.classifiers == "9.6":
        return oc96.is_context_overflow_error(text)
    if not text:
        return False
    lower = text.lower()
    if _TPM.search(lower) or _is_reasoning_constraint(lower):
        return False
    if any(s in lower for s in OPENCLAW_OVERFLOW_SUBSTRINGS):
        return True
    if any(all(word in lower for word in group) for group in OPENCLAW_OVERFLOW_SUBSTRING_PAIRS):
        return True
    if OPENCLAW_REQUEST_SIZE_EXCEEDS in lower and any(w in lower for w in OPENCLAW_REQUEST_SIZE_CONTEXT_WORDS):
        return True
    if any(s in text for s in OPENCLAW_OVERFLOW_CJK):
        return True
    return any(p.search(text) for p in _PROVIDER)


def is_likely_context_overflow_error(text: str | None, rules: RuntimeRules = OPENCLAW_2026_4_12) -> bool:
    """OpenClaw `isLikelyContextOverflowError`: exclusions (TPM, reasoning, billing, window too
    small, rate limit) → exact match → rate-limit hint exclusion → the broad hint regex."""
    if rules.classifiers == "9.6":
        return oc96.is_likely_context_overflow_error(text)
    if not text:
        return False
    lower = text.lower()
    if _TPM.search(lower) or _is_reasoning_constraint(lower) or is_billing_error(text):
        return False
    if _TOO_SMALL.search(text) or is_rate_limit_error(text):
        return False
    if is_context_overflow_error(text):
        return True
    if _RATE_HINT.search(text):
        return False
    return bool(_HINT.search(text))


def is_compaction_failure_error(text: str | None, rules: RuntimeRules = OPENCLAW_2026_4_12) -> bool:
    """A compaction term plus a likely overflow (or the bare words "context overflow")."""
    if rules.classifiers == "9.6":
        return oc96.is_compaction_failure_error(text)
    if not text:
        return False
    lower = text.lower()
    if not any(term in lower for term in COMPACTION_FAILURE_TERMS):
        return False
    return is_likely_context_overflow_error(text) or "context overflow" in lower


def extract_observed_overflow_token_count(text: str | None, rules: RuntimeRules = OPENCLAW_2026_4_12) -> int | None:
    """The prompt size an overflow error states, in tokens (2026.9.6 also sums `N + M`)."""
    if rules.classifiers == "9.6":
        return oc96.extract_observed_overflow_token_count(text)
    if not text:
        return None
    for pattern in _OBSERVED:
        match = pattern.search(text)
        if match:
            value = int(match.group(1).replace(",", ""))
            if value > 0:
                return value
    return None


def _base36(number: int) -> str:
    """`number.toString(36)` as JavaScript writes it: a minus sign before a negative number's
    digits (floor division alone would never reach 0 for one, and loop forever)."""
    if number < 0:
        return "-" + _base36(-number)
    digits = string.digits + string.ascii_lowercase
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def create_compaction_diag_id(now_ms: int | None = None, token: str | None = None) -> str:
    """`cmp-<Date.now() base36>-<4 chars>` (createCompactionDiagId). Any clock gives an id: one
    set before 1970 gives a negative time, written with its sign as JavaScript writes it."""
    now_ms = int(time.time() * 1000) if now_ms is None else int(now_ms)
    token = token or _random_token()
    return f"{COMPACTION_DIAG_ID_PREFIX}{_base36(now_ms)}-{token}"


def _random_token() -> str:
    """`COMPACTION_DIAG_ID_TOKEN_CHARS` characters of [0-9a-z], each equally likely: the base-36
    digits of one number drawn below 36 ** chars (a draw per character reads the system's
    randomness several times)."""
    number = secrets.randbelow(36**COMPACTION_DIAG_ID_TOKEN_CHARS)
    return _base36(number).rjust(COMPACTION_DIAG_ID_TOKEN_CHARS, "0")


# ---------------------------------------------------------------- snapshot choice (§5.4)


@dataclass(frozen=True)
class SnapshotChoice:
    messages: list[Any]
    session_id: str | None
    source: Literal["current", "pre-compaction"]


def take_pre_compaction_snapshot(
    compacting_before: bool, messages: Sequence[Any], compacting_after: bool
) -> list[Any] | None:
    """A copy of the messages only if compaction was running at neither read (attempt.ts)."""
    return None if compacting_before or compacting_after else list(messages)


def select_compaction_timeout_snapshot(
    *,
    timed_out_during_compaction: bool,
    pre_compaction_snapshot: Sequence[Any] | None,
    pre_compaction_session_id: str | None,
    current_messages: Sequence[Any],
    current_session_id: str | None,
) -> SnapshotChoice:
    """`selectCompactionTimeoutSnapshot`: after a compaction-retry timeout, proceed with the state
    from before compaction when one was captured; otherwise with the current state."""
    if timed_out_during_compaction and pre_compaction_snapshot is not None:
        return SnapshotChoice(list(pre_compaction_snapshot), pre_compaction_session_id, "pre-compaction")
    return SnapshotChoice(list(current_messages), current_session_id, "current")


# ---------------------------------------------------------------- the chain


@dataclass
class AttemptResult:
    """What one prompt attempt reports to the run loop."""

    ok: bool = False
    prompt_error: str | None = None
    assistant_error: str | None = None
    aborted: bool = False
    timed_out: bool = False
    timed_out_during_compaction: bool = False
    in_attempt_compactions: int = 0
    prompt_tokens: int | None = None
    messages: list[Any] | None = None  # snapshot, for the oversized-tool-result check
    output: Any = None


@dataclass
class StepOutcome:
    """What `compact_fn` / `truncate_fn` return: did it change anything, and the new window."""

    changed: bool
    window: Any = None
    reason: str | None = None
    detail: Any = None
    failure: CompactFailure | None = None  # a compaction step that did not compact: why


@dataclass
class RecoveryStep:
    kind: str  # attempt | timeout_compaction | retry_after_in_attempt_compaction | overflow_compaction |
    #            compaction_failed | truncate_tool_results | truncation_failed | give_up
    detail: str = ""
    diag_id: str | None = None
    failure: CompactFailure | None = None  # compaction_failed: why the compaction did not happen


@dataclass
class RecoveryOutcome:
    ok: bool
    result: AttemptResult | None
    window: Any = None
    error_kind: str | None = None  # context_overflow | compaction_failure | other | run_loop_exhausted
    error_message: str | None = None
    user_text: str | None = None
    diag_id: str | None = None
    attempts: int = 0
    overflow_compaction_attempts: int = 0
    timeout_compaction_attempts: int = 0
    tool_result_truncation_attempted: bool = False
    steps: list[RecoveryStep] = field(default_factory=list)


def _as_step(value: Any) -> StepOutcome:
    if isinstance(value, StepOutcome):
        return value
    if isinstance(value, bool):
        return StepOutcome(value)
    if isinstance(value, CompactResult):
        return StepOutcome(value.success, detail=value, reason=value.error, failure=value.failure)
    changed = getattr(value, "compacted", None)
    if changed is None:
        changed = getattr(value, "success", None)
    if changed is None:
        changed = getattr(value, "truncated", False)
    return StepOutcome(
        bool(changed), detail=value, reason=getattr(value, "error", None) or getattr(value, "reason", None)
    )


def overflow_of(result: AttemptResult, rules: RuntimeRules = OPENCLAW_2026_4_12) -> tuple[str, str] | None:
    """(error text, source) when the attempt failed with a context overflow (run.ts): a prompt
    error is the only thing inspected when present; aborted attempts are never overflows."""
    if result.aborted:
        return None
    if result.prompt_error:
        overflow = is_likely_context_overflow_error(result.prompt_error, rules)
        return (result.prompt_error, "promptError") if overflow else None
    if result.assistant_error and is_likely_context_overflow_error(result.assistant_error, rules):
        return result.assistant_error, "assistantError"
    return None


def run_with_recovery(
    attempt: Callable[[Any], AttemptResult],
    compact_fn: Callable[[str, dict[str, Any]], Any],
    truncate_fn: Callable[[dict[str, Any]], Any],
    *,
    context_tokens: int,
    window: Any = None,
    has_oversized_tool_results: Callable[[AttemptResult], bool] | None = None,
    max_iterations: int = 32,
    diag_id_factory: Callable[[], str] = create_compaction_diag_id,
    rules: RuntimeRules = OPENCLAW_2026_4_12,
) -> RecoveryOutcome:
    """Run attempts until one succeeds or the chain gives up (see the module docstring).

    `compact_fn(trigger, info)` and `truncate_fn(info)` may return a `StepOutcome`, a bool, a
    `CompactResult` (its typed `failure` goes into the `compaction_failed` step), or an object
    with `compacted` / `success` / `truncated`; a `StepOutcome` with a `window` replaces the
    window given to the next attempt."""
    from replaylab.compaction.session_truncation import session_likely_has_oversized_tool_results

    def oversized(result: AttemptResult) -> bool:
        if has_oversized_tool_results is not None:
            return has_oversized_tool_results(result)
        if not result.messages:
            return False
        return session_likely_has_oversized_tool_results(result.messages, context_tokens, rules)

    out = RecoveryOutcome(ok=False, result=None, window=window)
    for _ in range(max_iterations):
        result = attempt(out.window)
        out.result, out.attempts = result, out.attempts + 1
        out.steps.append(
            RecoveryStep(
                "attempt",
                "ok"
                if result.ok
                else (result.prompt_error or result.assistant_error or ("timeout" if result.timed_out else "failed")),
            )
        )
        if result.ok:
            out.ok = True
            return out
        if (
            result.timed_out
            and not result.timed_out_during_compaction
            and result.prompt_tokens
            and context_tokens
            and result.prompt_tokens / context_tokens > TIMEOUT_COMPACTION_PROMPT_SHARE
            and out.timeout_compaction_attempts < rules.give_up.max_timeout_compaction_attempts
        ):
            out.timeout_compaction_attempts += 1
            diag = diag_id_factory()
            step = _as_step(
                compact_fn("timeout_recovery", {"diag_id": diag, "attempt": out.timeout_compaction_attempts})
            )
            out.steps.append(
                RecoveryStep("timeout_compaction", "compacted" if step.changed else (step.reason or "no change"), diag)
            )
            if step.changed:
                out.window = step.window if step.window is not None else out.window
                continue
        overflow = overflow_of(result, rules)
        if overflow is None:
            out.error_kind, out.error_message = (
                "other",
                result.prompt_error
                or result.assistant_error
                or ("timed out" if result.timed_out else "attempt failed"),
            )
            return out
        text, source = overflow
        diag = diag_id_factory()
        out.diag_id = diag
        failure = is_compaction_failure_error(text, rules)
        if rules.give_up.surfaces_request_size_ceiling and oc96.is_provider_request_size_ceiling_error(text):
            return _give_up(out, text, failure, diag, rules)
        max_attempts = rules.give_up.max_overflow_compaction_attempts
        had_in_attempt = result.in_attempt_compactions > 0
        if not failure and had_in_attempt and out.overflow_compaction_attempts < max_attempts:
            out.overflow_compaction_attempts += 1
            out.steps.append(
                RecoveryStep(
                    "retry_after_in_attempt_compaction",
                    f"attempt {out.overflow_compaction_attempts}/{max_attempts}",
                    diag,
                )
            )
            continue
        if not failure and not had_in_attempt and out.overflow_compaction_attempts < max_attempts:
            out.overflow_compaction_attempts += 1
            info = {
                "diag_id": diag,
                "attempt": out.overflow_compaction_attempts,
                "source": source,
                "observed_tokens": extract_observed_overflow_token_count(text, rules),
                "error": text,
            }
            step = _as_step(compact_fn("overflow", info))
            if step.changed:
                out.steps.append(
                    RecoveryStep(
                        "overflow_compaction",
                        f"attempt {out.overflow_compaction_attempts}/{max_attempts}",
                        diag,
                    )
                )
                out.window = step.window if step.window is not None else out.window
                continue
            out.steps.append(
                RecoveryStep("compaction_failed", step.reason or "nothing to compact", diag, failure=step.failure)
            )
        if not out.tool_result_truncation_attempted and oversized(result):
            out.tool_result_truncation_attempted = True
            step = _as_step(truncate_fn({"diag_id": diag, "error": text}))
            if step.changed:
                out.steps.append(RecoveryStep("truncate_tool_results", "truncated", diag))
                out.window = step.window if step.window is not None else out.window
                continue
            out.steps.append(RecoveryStep("truncation_failed", step.reason or "nothing truncated", diag))
        return _give_up(out, text, failure, diag, rules)
    out.error_kind, out.user_text = "run_loop_exhausted", RUN_LOOP_EXHAUSTED_TEXT
    return out


def _give_up(out: RecoveryOutcome, text: str, failure: bool, diag: str, rules: RuntimeRules) -> RecoveryOutcome:
    out.error_kind = COMPACTION_FAILURE_ERROR_KIND if failure else CONTEXT_OVERFLOW_ERROR_KIND
    out.error_message, out.user_text = text, rules.give_up.overflow_user_text
    out.steps.append(RecoveryStep("give_up", out.error_kind, diag))
    return out
