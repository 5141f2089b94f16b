"""pi 0.73.1's rules (`@mariozechner/pi-coding-agent`): the plain functions replaylab has always
judged sessions by — `build_window` (pi's `buildSessionContext`), `estimate_tokens`,
`estimate_context_tokens` and `compaction.cutpoint` (`prepareCompaction`'s cut) — gathered as
this profile's `RULES`. Checked against pi itself by `tests/oracles/test_pi_oracle.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from replaylab.compaction.cutpoint import BoundaryRule, CutPoint, compute_cut_point
from replaylab.transcript.context import WindowMessage, WindowStep, rebuild_window, window_steps
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry, CompactionEntry
from replaylab.transcript.tokens import estimate_context_tokens, estimate_tokens
from replaylab.upstream.pi_0_73_1 import PROFILE


class PiRules:
    name = PROFILE.name
    #: these are the plain functions every layer falls back to without rules (`agents.memo_rules`)
    plain = True

    def window(self, path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
        return rebuild_window(path, memo)

    def window_steps(self, path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
        return window_steps(path, ends)

    def tokens(self, message: Any) -> int:
        return estimate_tokens(message)

    def context_tokens(self, messages: Sequence[Any], tokens_of: Callable[[Any], int]) -> int:
        """`estimateContextTokens` (compaction/compaction.js): `getAssistantUsage` takes any truthy
        usage, one of another JSON type too, whose `calculateContextTokens` is NaN (the plain
        function, which every layer falls back to without rules, holds the rule)."""
        return estimate_context_tokens(messages, tokens_of)

    def window_tokens(self, window: Sequence[WindowMessage], tokens_of: Callable[[Any], int]) -> int:
        return sum(tokens_of(item.message) for item in window)

    def cut(
        self,
        path: Sequence[AnyEntry],
        keep_recent_tokens: int,
        boundary_rule: str,
        entry_tokens: Callable[[AnyEntry], int],
        message_tokens: Callable[[Any], int],
    ) -> CutPoint:
        rule: BoundaryRule = "0.58.3" if boundary_rule == "0.58.3" else "0.66.1"
        return compute_cut_point(path, keep_recent_tokens, rule, entry_tokens)

    def refusal(self, path: Sequence[AnyEntry]) -> str | None:
        """`prepareCompaction` returns nothing when the leaf already is a compaction (replaylab's
        compactor refuses it as `already_compacted`, unless forced)."""
        if path and isinstance(path[-1], CompactionEntry):
            return "the leaf already is a compaction"
        return None

    def kept_aside(self, path: Sequence[AnyEntry]) -> list[tuple[AnyEntry, str]]:
        """None: pi's loader checks no entry's fields, so every entry it reads is in its session."""
        return []

    def starts_afresh(self, entry: AnyEntry) -> bool:
        """False: pi ignores a `reset` entry, and no other entry starts its context afresh."""
        return False

    def lines_to_copy(self, transcript: Transcript, leaf_id: str, memo: ItemMemo | None = None) -> int | None:
        """None: pi's load follows every entry's `parentId`, so an entry appended anywhere in the
        file stays on the branch it names."""
        return None

    def compaction_fields(self, window: Sequence[WindowMessage], timestamp: str) -> dict[str, Any]:
        """None: pi 0.73.1's `appendCompaction` adds nothing its rebuild reads."""
        return {}


RULES = PiRules()
