"""OpenClaw's quality guard on a summary: the five sections, the identifiers and the latest ask —
and the feedback a failed check sends into the next attempt."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from replaylab.compaction.identifiers import summary_includes_identifier
from replaylab.upstream.openclaw_2026_4_12 import (
    MAX_ASK_OVERLAP_TOKENS,
    MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH,
    QUALITY_FEEDBACK_POLICY,
    QUALITY_FEEDBACK_STRICT,
    REQUIRED_SUMMARY_SECTIONS,
)

#: stop words for the latest-ask overlap check (OpenClaw uses `extractKeywords` of its memory
#: search; this English list is replaylab's approximation of it)
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it its itself just let me more most my myself no nor not
now of off on once only or other our ours ourselves out over own please same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself yourselves can't don't won't it's i'm
also get got make made want need like one two""".split()
)


def _ask_tokens(text: str) -> list[str]:
    normalized = unicodedata.normalize("NFKC", text).lower().strip()
    return [t for t in re.split(r"[^\w]+|_", normalized) if t]


def has_ask_overlap(summary: str, latest_ask: str | None) -> bool:
    """The latest ask is reflected: two of its first `MAX_ASK_OVERLAP_TOKENS` meaningful tokens are
    in the summary (one when it has fewer than `MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH`)."""
    if not latest_ask:
        return True
    tokens = list(dict.fromkeys(_ask_tokens(latest_ask)))[:MAX_ASK_OVERLAP_TOKENS]
    meaningful = [t for t in tokens if len(t) > 1 and t not in STOP_WORDS]
    check = meaningful or tokens
    if not check:
        return True
    present = set(_ask_tokens(summary))
    overlap = sum(1 for t in check if t in present)
    return overlap >= (2 if len(check) >= MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH else 1)


def audit_summary_quality(
    summary: str,
    identifiers: Sequence[str],
    latest_ask: str | None,
    identifier_policy: str = "strict",
    *,
    structural: str | None = None,
) -> tuple[bool, list[str]]:
    """OpenClaw `auditSummaryQuality`: the five headings each on their own line (in `structural`,
    the summary's body, when given), every seed identifier present (strict policy; hex
    case-insensitive), the latest ask reflected."""
    reasons: list[str] = []
    lines = {line.strip() for line in (summary if structural is None else structural).splitlines() if line.strip()}
    for section in REQUIRED_SUMMARY_SECTIONS:
        if section not in lines:
            reasons.append(f"missing_section:{section}")
    if identifier_policy == "strict":
        upper = summary.upper()
        missing = [i for i in identifiers if not summary_includes_identifier(summary, i, upper_summary=upper)]
        if missing:
            reasons.append(f"missing_identifiers:{','.join(missing[:3])}")
    if not has_ask_overlap(summary, latest_ask):
        reasons.append("latest_user_ask_not_reflected")
    return not reasons, reasons


def quality_feedback(identifier_policy: str, reasons: Sequence[str]) -> str:
    """OpenClaw's instruction for the next attempt after a failed check, with the reasons quoted
    as untrusted text (they quote identifiers from the conversation)."""
    instruction = QUALITY_FEEDBACK_STRICT if identifier_policy == "strict" else QUALITY_FEEDBACK_POLICY
    return (
        f'{instruction}\n\n<untrusted-text label="Quality check feedback">\n'
        f"Previous summary failed quality checks ({', '.join(reasons)}).\n</untrusted-text>"
    )
