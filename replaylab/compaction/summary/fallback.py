"""OpenClaw's structured fallback summary: what is written when every summarizer attempt fails.

It keeps the pinned context (the latest ask, the guard's identifiers, the user's constraints),
and never wipes the memory: a previous summary that already has the five sections is kept whole,
else it becomes the Decisions section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replaylab.compaction.summary.lines import MAX_ASK_CHARS, one_line
from replaylab.compaction.summary.messages import explicit_constraints
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.compaction.summary.sections import (
    CONSTRAINTS_RULES,
    DECISIONS,
    EXACT_IDENTIFIERS,
    OPEN_TODOS,
    PENDING_USER_ASKS,
    has_required_sections,
)
from replaylab.compaction.summary.summarizer import Summarizer
from replaylab.upstream.openclaw_2026_4_12 import NO_PRIOR_HISTORY, NONE_CAPTURED, NONE_TEXT


def build_structured_fallback_summary(
    previous_summary: str | None,
    *,
    latest_ask: str | None = None,
    identifiers: Sequence[str] = (),
    constraints: Sequence[str] = (),
) -> str:
    """`buildStructuredFallbackSummary` in the five-section shape, with the pinned context of
    later OpenClaw releases: a previous summary that already has the sections is returned as is;
    otherwise it becomes ## Decisions (`No prior history.` when there is none)."""
    previous = (previous_summary or "").strip()
    if previous and has_required_sections(previous):
        return previous
    return "\n".join(
        [
            DECISIONS,
            previous or NO_PRIOR_HISTORY,
            "",
            OPEN_TODOS,
            NONE_TEXT,
            "",
            CONSTRAINTS_RULES,
            "\n".join(f"- {c}" for c in constraints) if constraints else NONE_TEXT,
            "",
            PENDING_USER_ASKS,
            f"- {one_line(latest_ask, MAX_ASK_CHARS)}" if latest_ask else NONE_TEXT,
            "",
            EXACT_IDENTIFIERS,
            "\n".join(f"- {i}" for i in identifiers) if identifiers else NONE_CAPTURED,
        ]
    )


@dataclass(frozen=True)
class FallbackSummarizer(Summarizer):
    """The structured fallback over the request's previous summary, with this pinned context.
    The constraints are read from `constraint_sources` only when the fallback is written."""

    latest_ask: str | None = None
    identifiers: Sequence[str] = ()
    constraint_sources: Sequence[Any] = ()

    name = "fallback"
    deterministic = True
    calls_model = False

    def summarize(self, request: SummaryRequest) -> str:
        return build_structured_fallback_summary(
            request.previous_summary,
            latest_ask=self.latest_ask,
            identifiers=self.identifiers,
            constraints=explicit_constraints(self.constraint_sources),
        )
