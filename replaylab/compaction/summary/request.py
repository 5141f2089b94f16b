"""`SummaryRequest`: what one summarizer call summarizes, and what the quality guard checks its answer for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replaylab.upstream.openclaw_2026_4_12 import MAX_COMPACTION_SUMMARY_CHARS


@dataclass(frozen=True)
class SummaryRequest:
    """What one summarizer call summarizes. A retry with feedback is a new request
    (`dataclasses.replace`), so a request never changes under a summarizer that reads it."""

    messages: list[Any]
    previous_summary: str | None = None
    identifier_policy: str = "strict"
    include_tool_results: bool = True
    budget_chars: int = MAX_COMPACTION_SUMMARY_CHARS
    custom_instructions: str | None = None
    identifier_instructions: str | None = None
    feedback: str | None = None
    turn_prefix: bool = False  # summarizing the prefix of a split turn
    max_tokens: int | None = None
    pinned_asks: list[str] = field(default_factory=list)  # asks the summary must carry (guard targets)
    kept_call_ids: frozenset[str] = frozenset()  # calls restated verbatim after the summary (a short outcome line)
    identifier_sources: list[Any] = field(default_factory=list)  # more messages whose identifiers to carry
    #: the quality guard's identifiers: the guard checks the answer for them, so they go first in line
    pinned_identifiers: list[str] = field(default_factory=list)
    #: the latest ask the quality guard checks the answer for
    guard_ask: str | None = None
    #: what the final summary adds after the answer (safeguard: the split-turn, preserved-turns,
    #: tool-failures and file sections), and the summary's cap: the guard audits the summary as
    #: it will be written, as OpenClaw 2026.9.6 audits its finalized artifact (0: uncapped)
    audit_suffix: str = ""
    audit_chars: int = 0
