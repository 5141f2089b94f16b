"""OpenClaw's cap on the summary's size, and the cap that keeps the sections after the body whole."""

from __future__ import annotations

from replaylab.upstream.openclaw_2026_4_12 import SUMMARY_TRUNCATED_MARKER


def cap_summary(summary: str, max_chars: int) -> str:
    """`capCompactionSummary`: cut to `max_chars`, ending with the truncation marker."""
    if max_chars <= 0 or len(summary) <= max_chars:
        return summary
    budget = max(0, max_chars - len(SUMMARY_TRUNCATED_MARKER))
    if budget <= 0:
        return summary[:max_chars]
    return summary[:budget] + SUMMARY_TRUNCATED_MARKER


def cap_summary_preserving_suffix(body: str, suffix: str, max_chars: int) -> str:
    """Cap the body so body + suffix fit; a suffix alone over the cap keeps its last chars."""
    if not suffix:
        return cap_summary(body, max_chars)
    if max_chars <= 0:
        return cap_summary(body + suffix, max_chars)
    if len(suffix) >= max_chars:
        return suffix[-max_chars:]
    return cap_summary(body, max(0, max_chars - len(suffix))) + suffix
