"""OpenClaw's quality guard on a summary: the five sections, the identifiers and the latest ask —
and the feedback a failed check sends into the next attempt. replaylab's safeguard audits what it
writes as OpenClaw 2026.9.6 does, whichever agent's profile the item runs under."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

from replaylab.compaction.identifiers import summary_includes_identifier
from replaylab.compaction.summary.keywords import (
    extract_keywords,
    is_keyword,
    is_query_stop_word,
    js_trim,
    letter_number_runs,
    tokenize,
)
from replaylab.upstream.openclaw_2026_4_12 import (
    MAX_ASK_OVERLAP_TOKENS,
    MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH,
    QUALITY_FEEDBACK_POLICY,
    QUALITY_FEEDBACK_STRICT,
    REQUIRED_SUMMARY_SECTIONS,
)

_LINE_BREAK = re.compile(r"\r?\n")


def _normalized(text: str) -> str:
    return js_trim(unicodedata.normalize("NFKC", text).lower())


def ask_tokens(text: str) -> list[str]:
    """`tokenizeAskOverlapText` of an ask: its keywords (`keywords.extract_keywords`) or, when it
    has none, its runs of letters and numbers (`token.trim()` of one changes nothing: no white
    space is a letter or a number)."""
    normalized = _normalized(text)
    return (extract_keywords(normalized) or letter_number_runs(normalized)) if normalized else []


def _utf16_length(token: str) -> int:
    return len(token) + sum(1 for c in token if ord(c) > 0xFFFF)


def has_ask_overlap(summary: str, latest_ask: str | None) -> bool:
    """OpenClaw 2026.9.6's `hasAskOverlap`: of the latest ask's first `MAX_ASK_OVERLAP_TOKENS`
    tokens, those longer than one character and no stop word (all of them when none is), two are
    in the summary's tokens, keywords and runs of letters and numbers both (one when the ask has
    fewer than `MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH`)."""
    if not latest_ask:
        return True
    tokens = list(dict.fromkeys(ask_tokens(latest_ask)))[:MAX_ASK_OVERLAP_TOKENS]
    if not tokens:
        return True
    meaningful = [t for t in tokens if _utf16_length(t) > 1 and not is_query_stop_word(t)]
    check = meaningful or tokens
    # the summary read as 2026.9.6 reads it (`tokenizeAskOverlapText(summary, true)`: its keywords
    # and its runs of letters and numbers both), asked of a dozen words: a word is one of its
    # keywords when it is one of its tokens and a keyword itself (no need to filter them all)
    normalized = _normalized(summary)
    needed = 2 if len(check) >= MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH else 1
    runs = set(letter_number_runs(normalized))
    overlap = sum(1 for t in check if t in runs)
    # a token among the runs counts whatever the words say: the words (a slower read of a whole
    # summary) are read only when the runs alone do not settle it and a keyword is left to find
    rest = [t for t in check if t not in runs and is_keyword(t)]
    if overlap >= needed or overlap + len(rest) < needed:
        return overlap >= needed
    words = set(tokenize(normalized))
    return overlap + sum(1 for t in rest if t in words) >= needed


def audit_summary_quality(
    summary: str,
    identifiers: Sequence[str],
    latest_ask: str | None,
    identifier_policy: str = "strict",
    *,
    structural: str | None = None,
) -> tuple[bool, list[str]]:
    """OpenClaw 2026.9.6's `auditSummaryQuality`: the five headings each on a line of its own (in
    `structural`, the summary's body, when given), none of them twice in it, every seed identifier
    present (strict policy; hex case-insensitive), the latest ask reflected."""
    reasons: list[str] = []
    body = summary if structural is None else structural
    lines = Counter(filter(None, map(js_trim, _LINE_BREAK.split(body))))  # `normalizedSummaryLines`
    for section in REQUIRED_SUMMARY_SECTIONS:
        if section not in lines:
            reasons.append(f"missing_section:{section}")
        if lines[section] > 1:
            reasons.append(f"duplicate_section:{section}")
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
