"""`Job`: what one `compact()` call fixes at its start, shared by its steps."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from replaylab.compaction.cutpoint import compute_cut_point
from replaylab.compaction.identifiers import TextScans, item_scans
from replaylab.compaction.params import CompactParams, Mode
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import AnyEntry, MessageEntry, identifier_text
from replaylab.transcript.tokens import estimate_context_tokens, estimate_tokens
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN, SUMMARY_MAX_TOKENS_SHARE, TURN_PREFIX_MAX_TOKENS_SHARE
from replaylab.upstream.profiles import AgentProfile, default_profile, profiles
from replaylab.upstream.runtime_rules import ManualCompactionRules, runtime_rules_named

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.rules import AgentRules, Cut

#: floor of the summary size limit, so a tiny reserve still leaves room for the five sections
MIN_SUMMARY_CHARS = 800
#: floor of the summarizer's maxTokens, so a tiny reserve still lets a model answer
MIN_SUMMARY_MAX_TOKENS = 256


@dataclass(frozen=True)
class Job:
    """The params of one compaction, its classifier, its budget and the caches its steps share."""

    params: CompactParams
    classifier: ToolClassifier
    #: the QA pipeline item's memo when an item runs this compaction (None: compute plainly)
    memo: ItemMemo | None = None
    #: entries of the path's calls that spawned a sub-agent whose transcript cannot be loaded:
    #: mutating events by the ledger, which safeguard protects as it protects a mutating call
    unresolved_spawns: frozenset[str] = frozenset()
    #: entry id → its message without the `excludeFromContext` mark, for each marked message the
    #: window before showed (a reset kept it): restated, it is written so (`transcript.restated`),
    #: and it costs what the agent estimates of the message shown
    unmarked: Mapping[str, Any] = field(default_factory=dict)
    _entry_tokens: dict[str, int] = field(default_factory=dict)

    @cached_property
    def scans(self) -> TextScans:
        """Each text scanned once per compaction (guard seed, summarizer calls, tail refits), and
        with an item's memo once for all the item's compactions and its identifier check."""
        return item_scans(self.memo)

    @property
    def mode(self) -> Mode:
        return self.params.compaction_mode

    @property
    def safeguard_like(self) -> bool:
        """safeguard and manual protect entries and write OpenClaw's safeguard summary."""
        return self.mode in ("safeguard", "manual")

    @cached_property
    def reserve(self) -> int:
        """The effective reserve: pi's reserveTokens, never below the floor. The QA pipeline settles
        the floor as the item's OpenClaw release keeps it (`qa.setup.resolve_budget`: 2026.9.6's
        own share of the window)."""
        return max(self.params.reserve_tokens or 0, self.params.reserve_tokens_floor)

    @property
    def reserve_follows_window(self) -> bool:
        """The item's release keeps its own share of the window: reserveTokensFloor is no setting it reads."""
        return runtime_rules_named(self.profile.runtime_rules).turn_start.reserve == "window"

    @cached_property
    def budget(self) -> int:
        """What the compacted window may hold, in tokens."""
        return self.params.context_tokens - self.reserve

    @cached_property
    def summary_chars(self) -> int:
        """The summary's size limit: OpenClaw's, but never more than pi lets the summarizer write
        (maxTokens = `SUMMARY_MAX_TOKENS_SHARE` × reserveTokens)."""
        by_reserve = CHARS_PER_TOKEN * math.floor(SUMMARY_MAX_TOKENS_SHARE * self.reserve)
        return max(MIN_SUMMARY_CHARS, min(self.params.summarizer.max_summary_chars, by_reserve))

    @property
    def summary_max_tokens(self) -> int:
        """pi's maxTokens of a summary call."""
        return max(MIN_SUMMARY_MAX_TOKENS, math.floor(SUMMARY_MAX_TOKENS_SHARE * self.reserve))

    @property
    def turn_prefix_max_tokens(self) -> int:
        """pi's maxTokens of a split turn's prefix summary call."""
        return max(MIN_SUMMARY_MAX_TOKENS, math.floor(TURN_PREFIX_MAX_TOKENS_SHARE * self.reserve))

    @property
    def rules(self) -> AgentRules | None:
        """The item's agent rules (None: pi 0.73.1's, the plain functions)."""
        return self.memo.rules if self.memo is not None else None

    @cached_property
    def profile(self) -> AgentProfile:
        """The item's agent profile (pi 0.73.1's without rules, or rules no profile names)."""
        return (profiles().get(self.rules.name) if self.rules is not None else None) or default_profile()

    @cached_property
    def manual(self) -> ManualCompactionRules | None:
        """What the item's OpenClaw release does around a `/compact` (None: not the manual mode)."""
        return runtime_rules_named(self.profile.runtime_rules).manual if self.mode == "manual" else None

    @property
    def boundary_at_leaf(self) -> bool:
        """This compaction ends at the leaf: the tail after its cut is neither summarized nor kept."""
        return self.manual is not None and self.manual.boundary_at_leaf

    def cut(self, path: list[AnyEntry], keep_recent: int, tokens: Callable[[Any], float] | None = None) -> Cut:
        """Where the agent cuts a compaction of `path` keeping about `keep_recent` tokens (its
        `refused`, when set, says why the agent would not compact it at all). `tokens`: the
        message estimate the item's rules cut with, when not `tokens` (`estimate_failure.agent_tokens`)."""
        if self.rules is None:
            return compute_cut_point(path, keep_recent, self.params.boundary_rule, self.entry_tokens)
        return self.rules.cut(path, keep_recent, self.params.boundary_rule, self.entry_tokens, tokens or self.tokens)  # type: ignore[arg-type]

    def context_tokens(self, messages: list[Any]) -> int:
        """The agent's `tokensBefore` of a context (its recorded usage and estimates after it)."""
        if self.rules is None:
            return estimate_context_tokens(messages, self.tokens)
        return self.rules.context_tokens(messages, self.tokens)

    def tokens(self, message: Any) -> int:
        """pi's estimate of a message: the item's, once per message object, with a memo."""
        return estimate_tokens(message) if self.memo is None else self.memo.tokens(message)

    def identifier_text(self, message: Any) -> str:
        """`identifier_text(message)`: the item's, once per message object, with a memo."""
        return identifier_text(message) if self.memo is None else self.memo.identifier_text(message)

    def entry_tokens(self, entry: AnyEntry) -> int:
        """pi's estimate of an entry's message (0 for entries that are no message), once per entry."""
        value = self._entry_tokens.get(entry.id)
        if value is None:
            message = self.unmarked.get(entry.id) or getattr(entry, "message", None)
            value = self.tokens(message) if isinstance(entry, MessageEntry) else 0
            self._entry_tokens[entry.id] = value
        return value
