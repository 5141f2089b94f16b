"""OpenClaw 2026.9.6's rules (npm `openclaw@2026.9.6`, `packages/agent-core`): its context rebuild
(`context`), token estimate (`estimate`), compaction cut (`cut`), the tool-result pairing a
reset keeps (`pairing`) and where its load attaches an entry after a reset (`navigation`),
gathered as this profile's `RULES`. Checked against OpenClaw's own code by
`tests/oracles/test_openclaw_agent.py` (the pinned package run under node).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from replaylab.agents.openclaw_2026_9_6 import context, cut, estimate, navigation
from replaylab.agents.openclaw_2026_9_6.cut import OpenClawCut
from replaylab.transcript.context import WindowMessage, WindowStep
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry
from replaylab.upstream.openclaw_2026_9_6 import PROFILE


class OpenClawRules:
    name = PROFILE.name

    def window(self, path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
        return context.build_context(path, memo)

    def window_steps(self, path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
        return context.context_steps(path, ends)

    def tokens(self, message: Any) -> int:
        return estimate.estimate_tokens(message)

    def context_tokens(self, messages: Sequence[Any], tokens_of: Callable[[Any], int]) -> int:
        return int(estimate.context_tokens(messages, tokens_of)[0])

    def window_tokens(self, window: Sequence[WindowMessage], tokens_of: Callable[[Any], int]) -> int:
        return sum(tokens_of(item.message) for item in window)

    def cut(
        self,
        path: Sequence[AnyEntry],
        keep_recent_tokens: int,
        boundary_rule: str,
        entry_tokens: Callable[[AnyEntry], int],
        message_tokens: Callable[[Any], int],
    ) -> OpenClawCut:
        return cut.prepare_cut(path, keep_recent_tokens, message_tokens)

    def refusal(self, path: Sequence[AnyEntry]) -> str | None:
        return cut.refusal(path)

    def kept_aside(self, path: Sequence[AnyEntry]) -> list[tuple[AnyEntry, str]]:
        return [(entry, context.why_kept_aside(entry)) for entry in path if not context.indexed(entry)]

    def starts_afresh(self, entry: AnyEntry) -> bool:
        return navigation.is_reset(entry)

    def lines_to_copy(self, transcript: Transcript, leaf_id: str, memo: ItemMemo | None = None) -> int | None:
        return navigation.lines_to_copy(transcript, leaf_id, memo)

    def compaction_fields(self, window: Sequence[WindowMessage], timestamp: str) -> dict[str, Any]:
        """None its rebuild reads: OpenClaw's `tokensAfter` and `__openclaw` change no context."""
        return {}


RULES = OpenClawRules()
