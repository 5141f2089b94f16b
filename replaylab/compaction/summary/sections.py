"""OpenClaw's five-section summary shape: a summary's sections, whether it has them all, whether
they are all empty, and the split-turn section a summary may end with."""

from __future__ import annotations

from replaylab.upstream.openclaw_2026_4_12 import (
    NO_PRIOR_HISTORY,
    NONE_CAPTURED,
    REQUIRED_SUMMARY_SECTIONS,
    SPLIT_TURN_HEADING,
    SPLIT_TURN_SEPARATOR,
)

#: the five headings by name, for the code that writes or reads one of them
DECISIONS, OPEN_TODOS, CONSTRAINTS_RULES, PENDING_USER_ASKS, EXACT_IDENTIFIERS = REQUIRED_SUMMARY_SECTIONS
#: the least a summary holding the five required headings can be: each on a line of its own, so
#: at least one line break between each two
HEADINGS_FLOOR_CHARS = sum(len(s) for s in REQUIRED_SUMMARY_SECTIONS) + len(REQUIRED_SUMMARY_SECTIONS) - 1
#: section bodies that say nothing (lower-cased)
EMPTY_BODIES = frozenset(
    {"", "none", "none.", NONE_CAPTURED.lower(), NO_PRIOR_HISTORY.lower(), "n/a", "-", "- none", "- none."}
)


def parse_sections(summary: str) -> dict[str, list[str]]:
    """`## Heading` → its non-empty lines (text before the first heading goes under '')."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for raw in summary.splitlines():
        line = raw.rstrip()
        if line.strip().startswith("## "):
            current = line.strip()
            sections.setdefault(current, [])
        elif line.strip():
            sections[current].append(line)
    return sections


def has_required_sections(summary: str) -> bool:
    """Every one of the five required headings is a line of `summary`."""
    lines = {line.strip() for line in summary.splitlines()}
    return all(s in lines for s in REQUIRED_SUMMARY_SECTIONS)


def is_empty_skeleton(summary: str) -> bool:
    """Every required section present but empty (`None.`, `No prior history.` …): the summary that
    wipes the memory when written over a previous one. A blank summary is one too (it holds no
    section). Each non-blank line that is no heading is some section's body (`parse_sections`),
    so the first meaningful one settles it: a real summary is read up to its first body line,
    not parsed whole."""
    if not summary.strip():
        return True
    for raw in summary.splitlines():
        line = raw.strip()
        if line and not line.startswith("## ") and line.lower() not in EMPTY_BODIES:
            return False
    return has_required_sections(summary)


def split_turn_section(prefix_summary: str | None) -> str:
    """The summary's split-turn section around a turn prefix's summary (none without one)."""
    return f"{SPLIT_TURN_HEADING}\n\n{prefix_summary}" if prefix_summary else ""


def merge_split_turn(history: str, prefix_summary: str) -> str:
    """pi's summary of a split turn: the history's summary, the separator, then the split-turn section."""
    section = f"{SPLIT_TURN_HEADING}\n\n{prefix_summary}"
    return f"{history}{SPLIT_TURN_SEPARATOR}{section}" if history.strip() else section
