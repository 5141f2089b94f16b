"""pi 1.6.0's rules (npm `@earendil-works/pi-coding-agent@1.6.0`): its context rebuild, the
projection (`context`), token estimates (`estimate`) and compaction cut (`cut`), gathered as this
profile's `RULES`. Checked against pi 1.6.0's own code by `tests/oracles/test_agent_conformance.py`
and `tests/oracles/test_pi_1_6_0.py` (the pinned package run under node).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from replaylab.agents.pi_1_6_0 import context, cut, estimate
from replaylab.agents.pi_1_6_0.cut import PiCut
from replaylab.transcript.context import WindowMessage, WindowStep
from replaylab.transcript.javascript import date_time_ms
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry
from replaylab.upstream.pi_1_6_0 import PROFILE


class Pi16Rules:
    name = PROFILE.name

    def window(self, path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
        return context.build_context(path, memo=memo)

    def window_steps(self, path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
        return context.context_steps(path, ends)

    def tokens(self, message: Any) -> int:
        return estimate.estimate_tokens(message)

    def context_tokens(self, messages: Sequence[Any], tokens_of: Callable[[Any], int]) -> int:
        return int(estimate.context_tokens(messages, tokens_of))

    def window_tokens(self, window: Sequence[WindowMessage], tokens_of: Callable[[Any], int]) -> int:
        """pi 1.6.0 measures a context without usage as its replayed system message once plus every
        other message."""
        return estimate.unused_context_tokens([item.message for item in window], tokens_of)

    def cut(
        self,
        path: Sequence[AnyEntry],
        keep_recent_tokens: int,
        boundary_rule: str,
        entry_tokens: Callable[[AnyEntry], int],
        message_tokens: Callable[[Any], int],
    ) -> PiCut:
        return cut.prepare_cut(path, keep_recent_tokens, message_tokens)

    def refusal(self, path: Sequence[AnyEntry]) -> str | None:
        return cut.refusal(path)

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
        """`appendCompaction` stores the current system message of the projection (the replay of
        every system message in the context) as the entry's `systemMessage`, stamped with the
        entry's time: the rebuild yields it before the summary."""
        current = estimate.current_system_message([item.message for item in window])
        if current is None:
            return {}
        return {"systemMessage": {**current, "timestamp": date_time_ms(timestamp)}}


RULES = Pi16Rules()
