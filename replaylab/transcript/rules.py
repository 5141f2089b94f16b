"""What an agent's rules must answer, for the code that judges a session under them.

Each agent release rebuilds the context it sends from a session path, estimates a message's
tokens, measures a window against its budget and cuts a compaction its own way. Those rule
functions live in `replaylab.agents` (one module per release, named by its profile in
`replaylab.upstream`); the layers below — the window views, the memo, replaylab's own compactor —
receive them as a value (`ItemMemo.rules`) and never import them. `None` where a rules value is
expected means pi 0.73.1's rules: the plain functions of this package (`build_window`,
`estimate_tokens`, `compaction.cutpoint`), which is how replaylab judged every session before
profiles were named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from replaylab.transcript.context import WindowMessage, WindowStep
    from replaylab.transcript.load import Transcript
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.model import AnyEntry


class Cut(Protocol):
    """Where an agent cuts a compaction of a path (indexes into the path), as
    `compaction.cutpoint.CutPoint` holds it; `refused` (when present and not None) says why the
    agent would not compact this path at all."""

    @property
    def first_kept_index(self) -> int: ...
    @property
    def turn_start_index(self) -> int: ...
    @property
    def is_split_turn(self) -> bool: ...
    @property
    def boundary_start(self) -> int: ...
    @property
    def previous_compaction_index(self) -> int: ...


class AgentRules(Protocol):
    """One agent release's rule functions (`replaylab.agents.<release>.RULES`)."""

    #: the profile's name (`openclaw@2026.9.6`)
    name: str

    def window(self, path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
        """The context the agent rebuilds from a root → leaf path, each message with its entry;
        with an item's `memo`, each restatement on the path is judged once for the item
        (`ItemMemo.claim`). No window is kept: `transcript.build_window` keeps them."""
        ...

    def window_steps(self, path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
        """The windows at `path[:end]` for each of the ascending `ends`, each exactly `window`'s,
        given as steps from the previous one: a long session's every turn start is read without
        building each window from the root again (`transcript.context.rebuilt_steps` when the
        agent cannot say more)."""
        ...

    def tokens(self, message: Any) -> int:
        """The agent's token estimate of one context message."""
        ...

    def context_tokens(self, messages: Sequence[Any], tokens_of: Callable[[Any], int]) -> int:
        """The agent's `tokensBefore` of a context: its recorded usage and estimates after it."""
        ...

    def window_tokens(self, window: Sequence[WindowMessage], tokens_of: Callable[[Any], int]) -> int:
        """The figure compared with the budget when deciding whether compaction is due (the
        trigger): replaylab measures every window by the agent's own estimate."""
        ...

    def cut(
        self,
        path: Sequence[AnyEntry],
        keep_recent_tokens: int,
        boundary_rule: str,
        entry_tokens: Callable[[AnyEntry], int],
        message_tokens: Callable[[Any], int],
    ) -> Cut:
        """Where the agent cuts a compaction of `path` keeping about `keep_recent_tokens`;
        `entry_tokens` / `message_tokens` give its (memoized) estimates."""
        ...

    def refusal(self, path: Sequence[AnyEntry]) -> str | None:
        """Why the agent would not compact a path whose leaf this is, before any cut (None: it
        would try); a double compaction is refused by replaylab for every agent."""
        ...

    def kept_aside(self, path: Sequence[AnyEntry]) -> list[tuple[AnyEntry, str]]:
        """The path's entries the agent keeps aside as it loads the session — in no context, the
        path running through them — each with why (empty: it keeps every entry)."""
        ...

    def starts_afresh(self, entry: AnyEntry) -> bool:
        """Whether the agent's context starts afresh after this path entry, whatever came before
        it (OpenClaw's `reset`): what a compaction before it did reaches no turn after it."""
        ...

    def lines_to_copy(self, transcript: Transcript, leaf_id: str, memo: ItemMemo | None = None) -> int | None:
        """How many of the recording's lines a working copy continued from `leaf_id` holds, so
        that the agent's own load keeps what replaylab appends there on that leaf's path (None:
        every line)."""
        ...

    def compaction_fields(self, window: Sequence[WindowMessage], timestamp: str) -> dict[str, Any]:
        """The fields the agent's own `appendCompaction` adds to a compaction entry written at
        `timestamp` (ISO) where its context is `window`, that its context rebuild reads (empty:
        none), so that the compaction replaylab writes rebuilds, under the agent's rules, to what
        the agent's own would."""
        ...
