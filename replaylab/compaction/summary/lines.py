"""Lines of the summary's bulleted sections: a text on one line, its first line, and the most
recent lines that fit a budget."""

from __future__ import annotations

from collections.abc import Sequence

from replaylab.upstream.openclaw_2026_4_12 import MAX_RECENT_TURN_TEXT_CHARS

MAX_LINE_CHARS = 200
#: an ask is carried as long as a preserved turn's text, so the two read alike
MAX_ASK_CHARS = MAX_RECENT_TURN_TEXT_CHARS


def one_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """`text` with its whitespace collapsed, cut to `limit` chars with '...'."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3].rstrip() + "..."


def first_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """The first line of `text` that says something once its Markdown marks are stripped."""
    for line in text.splitlines():
        stripped = line.strip().lstrip("#*-> ").strip()
        if stripped:
            return one_line(stripped, limit)
    return ""


def fit_recent_lines(lines: Sequence[str], budget: int, *, omitted_label: str) -> tuple[list[str], int]:
    """The most recent lines that fit `budget` chars, with a note on how many older were left out."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        cost = len(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    kept.reverse()
    omitted = len(lines) - len(kept)
    if omitted:
        kept.insert(0, f"- ...{omitted} earlier {omitted_label} omitted")
    return kept, omitted
