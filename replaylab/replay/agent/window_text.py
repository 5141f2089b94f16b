"""The text of a replay window, cached while the window grows (`WindowText`), and the "visible"
test of a value against it and what the model always sees (`VisibleText`). Rules:
`replaylab.replay.agent.grounding`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from replaylab.replay.agent.grounding_text import SEP, grounding_text
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import identity  # not id(): the socket guard's audit hook sees every id() call

if TYPE_CHECKING:
    from replaylab.replay.agent.recording_text import RecordingText
    from replaylab.transcript.memo import ItemMemo


class WindowText:
    """Cached text of a replay window; extended in place while the window only grows.

    `known`: texts computed already (a `RecordingText.message_texts`): the recording's own
    messages in the replay window (its history, recorded steps returned unchanged) cost nothing.
    `memo`: the item's, whose message texts the others start from."""

    #: pieces kept at most (bounds the per-piece `in` tests). Pieces are merged as they come so
    #: that each is over twice the next (`_merge`): a window of any size needs fewer than this
    MAX_BLOCKS = 32

    def __init__(self, known: dict[int, tuple[Any, str]] | None = None, memo: ItemMemo | None = None) -> None:
        self._messages: list[Any] = []  # the window seen last (items or messages)
        self._source: Sequence[Any] | None = None  # the sequence it was seen as
        self._texts: list[str] = []  # their texts, in order
        self._text_set: set[str] = set()  # the same texts, for `covers`
        self._joined = 0  # how many of `_texts` the blocks hold
        self._blocks: list[str] = []
        self._covered = 0  # leading path entries `covers` found in this window
        self._per_message: dict[int, tuple[Any, str]] = {}
        self._known = known if known is not None else {}
        self._memo = memo

    def text_of(self, message: Any) -> str:
        key = identity(message)
        hit = self._per_message.get(key)
        if hit is None or hit[0] is not message:
            hit = self._known.get(key)
            if hit is None or hit[0] is not message:
                hit = (message, grounding_text(message, self._memo))
            self._per_message[key] = hit
        return hit[1]

    def __call__(self, messages: Sequence[Any]) -> str:
        """The window's text: SEP + the messages' texts joined by SEP ("" for no messages)."""
        blocks = self.blocks(messages)
        if len(blocks) > 1:
            blocks[:] = ["".join(blocks)]
        return blocks[0] if blocks else ""

    def _sync(self, messages: Sequence[Any]) -> None:
        """Take `messages` as the window: its new messages' texts when it continues the last one
        (the same objects first), else everything from the start.

        `messages` may also be the window's `WindowMessage`s (frozen: the same item holds the same
        message), so a replay step need not list the window's messages first."""
        n = len(self._messages)
        if len(messages) >= n and self._continues(messages, n):
            new = messages[n:]
        else:
            new = messages
            self._messages, self._texts, self._text_set, self._joined, self._blocks = [], [], set(), 0, []
            self._covered = 0
        self._source = messages
        if new:
            texts = [self.text_of(m.message if isinstance(m, WindowMessage) else m) for m in new]
            self._texts.extend(texts)
            self._text_set.update(texts)
            self._messages.extend(new)

    def _continues(self, messages: Sequence[Any], n: int) -> bool:
        """Whether `messages` starts with the `n` messages seen last. The list seen last, grown
        since, does (the replay loop's window, to which a step only appends: a step after step
        check of every message would make a long replay quadratic); another sequence is compared
        in full, at C speed (`==` on lists: the same objects are equal without a call; equal
        messages have the same text)."""
        if messages is self._source:
            return True
        head = messages[:n]
        return (head if isinstance(head, list) else list(head)) == self._messages

    def blocks(self, messages: Sequence[Any]) -> list[str]:
        """The window's text in pieces whose concatenation is `self(messages)`; each piece starts
        with SEP. Growing the window adds a piece instead of copying the whole text again."""
        self._sync(messages)
        if self._joined < len(self._texts):
            self._blocks.append(SEP + SEP.join(self._texts[self._joined :]))
            self._joined = len(self._texts)
            self._merge()
        return self._blocks

    def _merge(self) -> None:
        """Join the last pieces while one is not over twice the next: the pieces' sizes halve
        from first to last, so there are O(log) of them and each character is copied O(log)
        times as the window grows (joining them all every few steps copies the whole window
        text each time: quadratic in a long replay)."""
        blocks = self._blocks
        while len(blocks) > 1 and len(blocks[-2]) <= 2 * len(blocks[-1]):
            last = blocks.pop()
            blocks[-1] += last
        if len(blocks) > self.MAX_BLOCKS:
            blocks[:] = ["".join(blocks)]

    def covers(self, messages: Sequence[Any], history: RecordingText, index: int) -> bool:
        """True when the text of every entry of `history.path[:index]` is the whole text of a
        message of the window `messages` (entries without text need none). Checked once per
        entry while the window grows (a window only gains texts)."""
        self._sync(messages)
        texts, present = history.entry_texts, self._text_set
        k = self._covered
        while k < index:
            text = texts[k]
            if text and text not in present:
                break
            k += 1
        self._covered = max(self._covered, k)
        return self._covered >= index


class VisibleText:
    """`value in visible` for the text "".join(pieces) without building it. Every piece after the
    first starts with SEP, so a value without SEP cannot span two pieces: it occurs in the joined
    text exactly when it occurs in one piece. A value with SEP is tested on the joined text."""

    def __init__(self, pieces: Sequence[str]):
        self.pieces = list(pieces)
        if any(not piece.startswith(SEP) for piece in self.pieces[1:]):
            raise ValueError("every piece after the first must start with SEP")

    @classmethod
    def of_window(cls, blocks: list[str], always_visible: str) -> VisibleText:
        """`VisibleText([*blocks, always_visible])` for `WindowText.blocks` pieces, which start
        with SEP by construction, and an always-visible text that starts with SEP: every grounded
        step makes one, and its pieces need no check (`__init__`'s, for pieces from elsewhere)."""
        visible = cls.__new__(cls)
        visible.pieces = [*blocks, always_visible]
        return visible

    def __contains__(self, value: str) -> bool:
        if SEP in value:
            return value in "".join(self.pieces)
        # the always-visible text and the newest pieces first (the smallest): what a step uses
        # mostly came just before it, and the oldest piece is most of the window
        return any(value in piece for piece in reversed(self.pieces))
