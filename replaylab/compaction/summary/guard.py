"""Attempts, retries and the fallback: OpenClaw's quality-guarded summary.

Each summarizer call is retried on errors (`retryAsync`); each answer is audited (`quality`), and
a failed audit is fed back into the next round's request. A failing retry keeps the last good
summary; no summary at all ⇒ the fallback summarizer. An answer that is an empty skeleton while a
previous summary exists is rejected like a failed audit, never written over it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from replaylab.compaction.summary.cap import cap_summary_preserving_suffix
from replaylab.compaction.summary.quality import audit_summary_quality, quality_feedback
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.compaction.summary.sections import is_empty_skeleton
from replaylab.compaction.summary.summarizer import SummarizationError, Summarizer
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_QUALITY_GUARD_MAX_RETRIES
from replaylab.upstream.pi_0_73_1 import (
    SUMMARIZE_RETRY_ATTEMPTS,
    SUMMARIZE_RETRY_JITTER,
    SUMMARIZE_RETRY_MAX_DELAY_MS,
    SUMMARIZE_RETRY_MIN_DELAY_MS,
)


@dataclass(frozen=True)
class GuardSettings:
    """How hard the summary is tried: the quality guard's rounds and each call's retries."""

    quality_guard: bool = True
    max_retries: int = DEFAULT_QUALITY_GUARD_MAX_RETRIES  # quality rounds after the first
    call_retries: int = SUMMARIZE_RETRY_ATTEMPTS  # attempts per summarizer call on errors
    retry_delay_s: float = SUMMARIZE_RETRY_MIN_DELAY_MS / 1000  # first back-off; 0 = none

    @property
    def rounds(self) -> int:
        return self.max_retries + 1 if self.quality_guard else 1

    def backoff_s(self, attempt: int) -> float:
        """`retryAsync`'s delay after the failed `attempt` (0-based): doubling, capped, with jitter."""
        wait = min(self.retry_delay_s * (2.0**attempt), SUMMARIZE_RETRY_MAX_DELAY_MS / 1000)
        return wait * (1 + random.uniform(-SUMMARIZE_RETRY_JITTER, SUMMARIZE_RETRY_JITTER))


@dataclass
class SummaryOutcome:
    text: str
    source: str  # the summarizer's name, or fallback
    calls: int = 0
    guard_ok: bool = True
    guard_rounds: int = 0
    reasons: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class FailureInjector:
    """Test hook (`summarizerFailures`): the first `count` summarizer calls of a compaction fail."""

    def __init__(self, count: int = 0):
        self.remaining = count
        self.total = count

    def take(self) -> bool:
        if self.remaining > 0:
            self.remaining -= 1
            return True
        return False

    def note(self) -> str:
        """Which injected failure the last taken one is."""
        return f"injected failure {self.total - self.remaining}/{self.total}"


def call_with_retries(
    summarizer: Summarizer,
    request: SummaryRequest,
    settings: GuardSettings,
    injector: FailureInjector,
    errors: list[str],
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[str | None, int]:
    """`retryAsync` around one summarizer call; returns (text or None, calls). Only a model's
    own failures wait before the next attempt: an injected one or an offline summarizer's would
    fail the same at once."""
    calls = 0
    for attempt in range(settings.call_retries):
        calls += 1
        fail = injector.take()
        try:
            if fail:
                return summarizer.summarize_failing(request, injector.note()), calls
            return summarizer.summarize(request), calls
        except SummarizationError as exc:
            errors.append(str(exc))
            if (
                attempt + 1 < settings.call_retries
                and settings.retry_delay_s > 0
                and summarizer.calls_model
                and not fail
            ):
                sleep(settings.backoff_s(attempt))
    return None, calls


def summarize_with_guard(
    summarizer: Summarizer,
    request: SummaryRequest,
    settings: GuardSettings,
    *,
    fallback: Summarizer,
    injector: FailureInjector | None = None,
) -> SummaryOutcome:
    """Quality-guarded summary: up to `settings.rounds` rounds, each round's failures fed back into
    the next request; a failing retry keeps the last good summary; no summary at all ⇒ `fallback`.
    The audit checks the summary as it will be written (the answer, then `request.audit_suffix`,
    capped) for `request.pinned_identifiers` and `request.guard_ask`, and the answer's part of it
    for the sections."""
    injector = injector if injector is not None else FailureInjector()
    outcome = SummaryOutcome(text="", source=summarizer.name)
    rounds = settings.rounds
    last_good: str | None = None
    previous = (request.previous_summary or "").strip()
    for round_index in range(rounds):
        outcome.guard_rounds = round_index + 1
        text, calls = call_with_retries(summarizer, request, settings, injector, outcome.errors)
        outcome.calls += calls
        if text is None:
            if last_good is not None:
                outcome.errors.append("quality retry failed; keeping the last successful summary")
                break
            continue
        if previous and is_empty_skeleton(text):
            outcome.reasons = ["empty_skeleton_over_previous_summary"]
            outcome.guard_ok = False
            if round_index + 1 < rounds:
                request = _with_feedback(request, outcome.reasons)
            continue
        ok, reasons = _audit(text, request)
        last_good, outcome.text = text, text
        outcome.guard_ok, outcome.reasons = ok, reasons
        if ok or not settings.quality_guard or round_index + 1 >= rounds:
            break
        if summarizer.deterministic:
            break  # the same input gives the same summary: a retry cannot fix it
        request = _with_feedback(request, reasons)
    if last_good is None:
        outcome.text = fallback.summarize(request)
        outcome.source = fallback.name
        ok, reasons = _audit(outcome.text, request)
        outcome.guard_ok = False
        outcome.reasons = (outcome.reasons or ["summarizer_failed"]) + [r for r in reasons if r not in outcome.reasons]
    return outcome


def _audit(text: str, request: SummaryRequest) -> tuple[bool, list[str]]:
    """OpenClaw 2026.9.6's audit of its finalized artifact (`compactionSafeguardExtension`): the
    identifiers and the ask in the whole summary as written, the sections in the answer alone
    (`structuralSummary`)."""
    written = cap_summary_preserving_suffix(text, request.audit_suffix, request.audit_chars)
    return audit_summary_quality(
        written, request.pinned_identifiers, request.guard_ask, request.identifier_policy, structural=text
    )


def _with_feedback(request: SummaryRequest, reasons: list[str]) -> SummaryRequest:
    return replace(request, feedback=quality_feedback(request.identifier_policy, reasons))
