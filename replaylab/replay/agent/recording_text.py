"""The text of a recording's leaf path, joined once (`RecordingText`), and the "learned" check
over it (`LearnedCheck`): does a value occur in the window the original agent saw at a step.
One `RecordingText` serves every model over the same path of a pipeline item. Rules and speed:
`replaylab.replay.agent.grounding`."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from operator import is_
from typing import TYPE_CHECKING, Any

from replaylab.replay.agent.candidate import Candidate
from replaylab.replay.agent.grounding_text import SEP, grounding_text
from replaylab.transcript.context import build_window, entry_to_message
from replaylab.transcript.memo import identity  # not id(): the socket guard's audit hook sees every id() call
from replaylab.transcript.model import AnyEntry, AssistantMessage, CompactionEntry

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo


class LearnedCheck:
    """`check(value)`: does `value` occur in the original window of one step?
    `check.external(value)`: in a message of that window the agent did not write itself?

    `start`: the path index where the replay starts. When a recorded compaction lies between it
    and the step, the original window holds that compaction's summary, which no replay shows
    (turns skip compaction entries): a value is learned only where the replay could show it too
    — in its first window or in the entries since (`RecordingText.shown_between`); one the summary
    alone holds is text the summarizer wrote."""

    def __init__(self, history: RecordingText, step_index: int, memo: ItemMemo | None = None, start: int | None = None):
        self.history = history
        self.step = step_index
        self.memo = memo
        self.seg_start, self.fixed = history.segment(step_index, memo)
        self.end = history.offsets[step_index]
        #: the replay's first window (`segment` at `start`), when a compaction lies in between
        self.replayable = (
            history.segment(start, memo) if start is not None and history.compacted_between(start, step_index) else None
        )
        self._cache: dict[str, bool] = {}
        self._external: dict[str, bool] = {}

    def external(self, value: str) -> bool:
        hit = self._external.get(value)
        if hit is None:
            history = self.history
            hit = history.occurs(value, self.seg_start, self.end, external=True) or history.in_fixed(
                value, self.seg_start, lambda: history.external_fixed(self.step, self.memo), external=True
            )
            self._external[value] = hit
        return hit

    def __call__(self, value: str) -> bool:
        hit = self._cache.get(value)
        if hit is None:
            history = self.history
            if history.occurs(value, self.seg_start, self.end):
                hit = True  # after the latest compaction: entries a replay shows
            elif not history.in_fixed(value, self.seg_start, self.fixed):
                hit = False
            elif self.replayable is None:
                hit = True  # in the summary or kept entries of a compaction before the start
            else:  # in the summary or kept entries of a compaction the replay does not show
                seg_start, fixed = self.replayable
                # from the step back first: a kept entry just before the compaction is the usual place
                hit = history.shown_between(value, seg_start, self.end) or history.in_fixed(value, seg_start, fixed)
            self._cache[value] = hit
        return hit


#: a summary and kept entries this short are searched again rather than their answers remembered
SHORT_FIXED_CHARS = 4_096
#: a value that is a plain number (`274`, `-3`, `12.5`)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _occurs_in(value: str, text: str) -> bool:
    """`value` in `text`; a plain number only where it stands as a number: a price `274` is not
    learned from a flight `HAT274`, a total `1234` not from `12345` or `0.1234` (but from
    `$1234.00`) — the agent computed it itself."""
    if _PLAIN_NUMBER.fullmatch(value):
        return _number_at(value, text, 0, len(text))
    return value in text


#: what may not stand right before a number's occurrence, nor right after it (`_places`)
_NUMBER_BEFORE = re.compile(r"[\w.]")
_NUMBER_AFTER = re.compile(r"\w|\.0*[1-9]")


def _number_at(value: str, text: str, start: int, end: int) -> bool:
    """Whether the number `value` stands as a number in `text[start:end]` (`_places`)."""
    return next(_places(value, text, start, end, number=True), None) is not None


def _places(value: str, text: str, start: int, end: int, *, number: bool) -> Iterator[int]:
    """Where `value` occurs in `text[start:end]`, from the end (`RecordingText.occurs`). A `number`
    only where it stands as one: no word character or dot right before it (even before `start`),
    neither a word character nor decimals other than zeros right after it (within `end`). Found
    with `str.rfind` and two precompiled checks per occurrence: a pattern of its own per value
    would be compiled per value, and one opening with a lookbehind is tried at every position of
    a long segment."""
    size = len(value)
    at = text.rfind(value, start, end)
    while at >= 0:
        if not number or (
            (at == 0 or _NUMBER_BEFORE.match(text, at - 1) is None)
            and _NUMBER_AFTER.match(text, at + size, end) is None
        ):
            yield at
        at = text.rfind(value, start, at + size - 1)


class RecordingText:
    """The text of a recording's leaf path, joined once, for "learned" checks at any step.

    Also keeps what every replay of the path reuses: `message_texts` (grounding text of each
    path message object, by `identity`, with the object to check it) and `plans` (every learned
    candidate per step entry id, `all_candidates`, filled by `ReplayModel.plan`)."""

    def __init__(self, path: Sequence[AnyEntry], memo: ItemMemo | None = None):
        self.path = list(path)
        self.index_of = {entry.id: i for i, entry in enumerate(self.path)}
        pieces: list[str] = []
        self.offsets: list[int] = []  # offset of entry i's text in `full` (= end of entries < i)
        self.message_texts: dict[int, tuple[Any, str]] = {}
        self.plans: dict[tuple[int | None, str], list[Candidate]] = {}
        #: trace dumps of the path's messages, by `identity` (`message_texts` holds the objects): see `holding`
        self.dumps: dict[int, dict[str, Any]] = {}
        #: entries whose message the agent wrote (its text, thinking and calls)
        self.own: list[bool] = []
        pos = 0
        for entry in self.path:
            self.offsets.append(pos)
            message = entry_to_message(entry)
            text = ""
            if message is not None:
                text = grounding_text(message, memo)
                self.message_texts[identity(message)] = (message, text)
            pieces.append(text)
            self.own.append(isinstance(message, AssistantMessage))
            pos += len(text) + 1
        self.offsets.append(pos)
        self._full: str | None = None
        self._external_full: str | None = None
        self._external_fixed: dict[int, str] = {}
        self.entry_texts = pieces  # entry i's text is full[offsets[i]:offsets[i + 1] - 1]
        self._compactions = [i for i, e in enumerate(self.path) if isinstance(e, CompactionEntry)]
        #: where the original window starts again: a compaction, and for an agent that starts
        #: afresh at a reset (`AgentRules.starts_afresh`), a reset, whose window keeps only its
        #: kept range — what lies before it was not learned there
        rules = memo.rules if memo is not None else None
        self._boundaries = (
            [i for i, e in enumerate(self.path) if isinstance(e, CompactionEntry) or rules.starts_afresh(e)]
            if rules is not None
            else self._compactions
        )
        self._fixed: dict[int, str] = {}
        self._first_index: dict[str, int] | None = None  # entry id → its first index on the path
        #: (external, segment start, value) → [an occurrence's start or -1, an end no occurrence reaches]
        self._occurrences: dict[tuple[bool, int, str], list[int]] = {}
        #: (external, segment start, value) → whether the segment's summary and kept entries hold it
        self._in_fixed: dict[tuple[bool, int, str], bool] = {}

    @property
    def full(self) -> str:
        """The path's texts joined by SEP (and ending with one): made on the first "learned"
        check (a step's plan), which a replay that never plans a step never makes (the baseline;
        the pipeline's items without a compacted run)."""
        if self._full is None:
            self._full = SEP.join(self.entry_texts) + SEP
        return self._full

    @property
    def external_full(self) -> str:
        """`full` with the agent's own messages blanked (SEP for every character, so the offsets
        are `full`'s): what the agent was told, by the user, its tools and summaries."""
        if self._external_full is None:
            self._external_full = (
                SEP.join(SEP * len(text) if own else text for text, own in zip(self.entry_texts, self.own)) + SEP
            )
        return self._external_full

    def external_fixed(self, step_index: int, memo: ItemMemo | None = None) -> str:
        """`segment`'s joined window text without the agent's own messages."""
        latest = max((c for c in self._boundaries if c < step_index), default=None)
        if latest is None:
            return ""
        if latest not in self._external_fixed:
            window = build_window(self.path[self._kept_from(latest) : latest + 1], memo)
            self._external_fixed[latest] = SEP.join(
                grounding_text(w.message, memo) for w in window if not isinstance(w.message, AssistantMessage)
            )
        return self._external_fixed[latest]

    @classmethod
    def shared(cls, path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> RecordingText:
        """The `RecordingText` of `path`; with an item's `memo`, the one made before for the same
        entry objects (the baseline and the compacted model of one pipeline item): matched by the
        identity of every entry (the memo holds them, so no other object can take their place)."""
        path = list(path)
        if memo is None:
            return cls(path)
        kept: list[RecordingText] = memo.kept(cls, list)
        for hit in kept:
            if len(hit.path) == len(path) and all(map(is_, hit.path, path)):
                return hit
        hit = cls(path, memo)
        kept.append(hit)
        return hit

    @classmethod
    def holding(cls, message: Any, memo: ItemMemo | None, key: int | None = None) -> RecordingText | None:
        """The `RecordingText` of the item's `memo` whose path holds this very message object, if
        any: what the recorded trace and both replays of a pipeline item dump the same recorded
        assistant message through (`replaylab.replay.loop.message_dump`). `key`:
        `identity(message)`, when the caller has it already."""
        if memo is None:
            return None
        key = identity(message) if key is None else key
        held: list[RecordingText] = memo.kept(cls, list)
        for hit in reversed(held):
            known = hit.message_texts.get(key)
            if known is not None and known[0] is message:
                return hit
        return None

    def compacted_between(self, start: int, step_index: int) -> bool:
        """Whether a compaction entry lies at or after `start` and before `step_index`."""
        at = bisect_left(self._compactions, start)
        return at < len(self._compactions) and self._compactions[at] < step_index

    def occurs(self, value: str, start: int, end: int, *, external: bool = False) -> bool:
        """`value` in `full[start:end]` (`external_full` with `external`); a plain number only
        where it stands as one (`_places`). Searched from `end` back: a value the agent uses was
        mostly learned just before.

        Remembered per value and segment start, because the steps of a replay ask about the same
        values at an `end` that grows: each stretch of text is searched for a value about once,
        not once per step. What was found holds for any `end`: an `end` is an entry's offset,
        right after a SEP, and no occurrence of a value without SEP ends there — so the
        characters a number's occurrence is judged by lie below every `end` that holds it."""
        key = (external, start, value)
        known = self._occurrences.get(key)
        size = len(value)
        if known is None and external and SEP not in value:
            told = self._told_from_full(value, start, end)
            if told is not None:
                return told
        if known is None:
            searched_from = start
        else:
            found, clear = known  # no occurrence lies within full[start:clear]
            if found >= 0 and found + size <= end:
                return True
            if end <= clear:
                return False
            searched_from = max(start, clear - size + 1)
        text = self.external_full if external else self.full
        if _PLAIN_NUMBER.fullmatch(value):
            at = next(_places(value, text, searched_from, end, number=True), -1)
        else:
            at = text.rfind(value, searched_from, end)
        if known is None:
            self._occurrences[key] = [at, start if at >= 0 else end]
        elif at < 0:
            known[1] = end
        else:
            known[0] = at
        return at >= 0

    def _told_from_full(self, value: str, start: int, end: int) -> bool | None:
        """The external answer for `value` in `[start, end)` from what `occurs` found in `full`
        there, remembered as if searched (None: not known). `external_full` is `full` with the
        agent's own entries blanked, so an occurrence of a value without SEP in an entry it did not
        write is one there too, judged by the same characters (a number's neighbours lie in its
        entry or are the SEP between entries); and where `full` holds none, it holds none."""
        plain = self._occurrences.get((False, start, value))
        if plain is None:
            return None
        found, clear = plain
        if found < 0 or found + len(value) > end:
            if found >= 0 or end > clear:
                return None
            self._occurrences[(True, start, value)] = [-1, end]
            return False
        if self.own[bisect_right(self.offsets, found) - 1]:
            return None
        self._occurrences[(True, start, value)] = [found, start]
        return True

    def in_fixed(self, value: str, start: int, fixed: str | Callable[[], str], *, external: bool = False) -> bool:
        """`value` in the summary and kept entries of the segment that starts at `start`
        (`fixed`: their joined text, `segment`'s, or a function that makes it), remembered per value."""
        if isinstance(fixed, str) and len(fixed) <= SHORT_FIXED_CHARS:
            return _occurs_in(value, fixed)  # read at once: cheaper than remembered
        key = (external, start, value)
        hit = self._in_fixed.get(key)
        if hit is None:
            hit = self._in_fixed[key] = _occurs_in(value, fixed if isinstance(fixed, str) else fixed())
        return hit

    def shown_between(self, value: str, start: int, end: int) -> bool:
        """`value` in `full[start:end]` outside the texts of compaction entries, which no replay
        shows (a plain number: where it stands as one)."""
        size = len(value)
        for at in _places(value, self.full, start, end, number=_PLAIN_NUMBER.fullmatch(value) is not None):
            first = bisect_right(self.offsets, at) - 1
            last = bisect_right(self.offsets, at + size - 1) - 1
            k = bisect_left(self._compactions, first)
            if k == len(self._compactions) or self._compactions[k] > last:
                return True
        return False

    def compacted_before(self, step_index: int) -> bool:
        """Whether a compaction entry (or a reset the agent starts afresh at) precedes
        `step_index` (then `segment` is not the plain prefix)."""
        return bool(self._boundaries) and self._boundaries[0] < step_index

    def segment(self, step_index: int, memo: ItemMemo | None = None) -> tuple[int, str]:
        """(start offset of the tail after the latest boundary — a compaction, or a reset the
        agent starts afresh at —, joined text of its summary + kept entries) of the window before
        `step_index`."""
        latest = None
        for c in self._boundaries:
            if c < step_index:
                latest = c
        if latest is None:
            return 0, ""
        if latest not in self._fixed:
            window = build_window(self.path[self._kept_from(latest) : latest + 1], memo)
            self._fixed[latest] = SEP.join(grounding_text(w.message, memo) for w in window)
        return self.offsets[latest + 1], self._fixed[latest]

    def _kept_from(self, compaction: int) -> int:
        """Where the window of the path up to this compaction entry starts: its kept entries'
        first (pi's rule, `build_window`), else the compaction itself. The window of that slice is
        the window of the whole prefix, built without walking the prefix once per compaction."""
        if self._first_index is None:
            self._first_index = {}
            for index in range(len(self.path) - 1, -1, -1):  # the first entry of an id wins, as in build_window
                self._first_index[self.path[index].id] = index
        entry = self.path[compaction]
        first_kept = getattr(entry, "first_kept_entry_id", None)
        kept = self._first_index.get(first_kept) if first_kept is not None else None
        return kept if kept is not None and kept < compaction else compaction

    def last_seen(self, value: str, step_index: int) -> int | None:
        """The index of the last entry before `step_index` whose text holds `value` (None: none
        does): where the original agent last saw a value the replay lost."""
        pos = self.full.rfind(value, 0, self.offsets[step_index])
        return None if pos < 0 else bisect_right(self.offsets, pos) - 1

    def learned_at(self, entry_id: str, memo: ItemMemo | None = None, start: int | None = None) -> LearnedCheck:
        return LearnedCheck(self, self.index_of[entry_id], memo, start)
