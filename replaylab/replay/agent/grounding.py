"""Context grounding: which values of a recorded assistant message the current window supports.

This module holds the rules of the `replay` model (DESIGN §7); `ReplayModel` in `models.py` only
feeds it the recording and the replay window.

Rules (all comparisons are plain substring tests on text, case-sensitive):

* **Text of a message** (`grounding_text`): what a model reads from it — text and thinking
  blocks, tool-call names and arguments (as JSON and as the raw leaf values), tool-result and
  custom-message text, compaction / branch summaries, bash command and output.
* **Candidate values** of a recorded assistant message (`candidates`):
  - every leaf of every tool call's `arguments`: strings of ≥ 3 characters, numbers with ≥ 3
    digits (compared through their JSON text, e.g. `1234`, `12.5`); booleans, null and shorter
    values never count (they carry no learned identity), and neither does a leaf that is one word
    of letters (`one_way`, `basic_economy`, `USA`: an enum or a word the agent writes from the
    request or the schema, `replaylab.values.is_vocabulary_word`);
  - tokens inside text the agent composed: text blocks, and argument strings that were not
    learned as a whole (file contents, markdown, prose, commands). Only tokens the agent cannot
    have produced itself count (`replaylab.values.is_opaque_token`: `M05KNL`, `C1001`,
    `mia_li_3668`, `555-123-2002`, `credit_card_8003957`, hashes); its own vocabulary does not
    (markdown anchors like `#custom-tools`, acronyms like `JFK`, snake_case names, colours,
    quantities, round numbers) — counting it made a compaction look as if it lost what the agent
    could simply write again.
  Thinking blocks are never changed (they are not actions, and their signatures must stay valid).
* **Levels** (`GroundingRules`, from a suite's `match.args.<tool>.grounding`, per tool or per
  top-level argument): `values` (the default, the rule above), `strict` (every identifier-like
  token of composed text counts too: `IDENT_RE`, ≥ 3 characters, with a digit, one of `_ @ #`,
  or all upper-case; and so does a whole leaf of one word), `off` (the argument is never
  grounded: its recorded value is kept).
  Text blocks always follow `values`.
* **Learned**: a candidate is learned at a step when its text occurs in the window the *original*
  agent saw at that step — `build_window(path[:i])` of the recording, where `i` is the step's
  index on the leaf path, rebuilt by the item's agent's rules (OpenClaw 2026.9.6 starts that
  window afresh at a `reset`: what lies before it, outside its kept range, was not learned).
  A plain number (`274`, `12.5`) occurs only where it stands as a number,
  not inside a longer number or identifier (`HAT274`, `12745`, `1.274`): a substring there is a
  coincidence, and the agent computed the value itself. The system prompt and tool schemas are not
  part of that window. Past a recorded compaction that lies after the replay's start, the original
  window holds that compaction's summary, which no replay shows (turns skip compaction entries): a
  value counts as learned there only if it also occurs in what the replay could show — the window
  at the replay's start and the entries since, compaction entries left out. A value that summary
  alone holds is text its summarizer wrote, as the agent's own text is, and is kept in both runs
  (else the baseline, which has no such summary, would drift on it).
  Values the agent produced itself (a computed total, a composed message) are not learned and are
  always kept.
* **Visible**: its text occurs in the replay window's text, or in what the model always sees
  (tool schemas passed to `complete`, the system prompt).
* A learned value that is not visible is **lost**: it is replaced by the marker `⟨lost:N⟩`
  (N = 1, 2, … numbering the distinct lost values in order of first loss, once for every message
  grounded with the same `LostMarkers` — the replay model keeps one per pipeline item, so the
  same value has the same N in every call and answer of the item and one legend explains them
  all; the marker never contains the value). A whole argument leaf is replaced when the leaf itself was
  learned; otherwise only the lost tokens inside it. The changed call no longer matches the
  cassette, so the loss shows up as a divergence (and, for a mutating tool, as a blocked call).
* On the recording's own window every learned value is visible by construction, so the
  recorded message is returned unchanged (the same object): zero drift.

Speed: the original windows are never materialised per step. The path's message texts are
joined once (`\\x00`-separated, with offsets); "learned at step i" is a `find` from the start of
the window segment (after the latest compaction, whose summary/kept text is joined once) with
the hit required to end before step i's offset. The replay window's text is cached and extended
incrementally while the window only grows.

Sharing (the pipeline replays one recording twice, baseline and compacted): with the item's memo,
`RecordingText.shared` keeps the joined text, the per-message texts and the learned candidates of a
recording's path for the next model over the same path. The key is the identity of the path's
entry objects (the memo holds them, so an id cannot be reused while kept): another recording, or
the same file loaded again, is another key. Entries and messages are treated as immutable, as
everywhere in replay (grounding copies a message before changing it).
"""

from __future__ import annotations

import copy
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import is_
from typing import TYPE_CHECKING, Any

from replaylab.transcript.context import WindowMessage, build_window, entry_to_message
from replaylab.transcript.memo import identity  # not id(): the socket guard's audit hook sees every id() call
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    CompactionEntry,
    TextBlock,
    ToolCallBlock,
    message_text,
)
from replaylab.values import (
    IDENT_RE,
    GroundingLevel,
    agent_chosen,
    id_parts,
    identifier_tokens,
    is_calendar_date,
    is_opaque_token,
    is_vocabulary_word,
    scalar_value_text,
)

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo

SEP = "\x00"
MARKER = "⟨lost:{n}⟩"
MARKER_RE = re.compile(r"⟨lost:\d+⟩")  # a marker inside any text the replay produced


def grounding_text(message: Any, memo: ItemMemo | None = None) -> str:
    """All text a model reads from one message, with raw tool-call argument leaves added (the
    JSON form escapes quotes and newlines, the raw form is what a value check compares). With an
    item's `memo`, the message's text is the item's."""
    text = message_text(message) if memo is None else memo.text(message)
    content = getattr(message, "content", None)
    if isinstance(content, list):
        leaves: list[str] = []
        for block in content:
            if isinstance(block, ToolCallBlock):
                _leaf_texts(block.arguments, leaves)
        if leaves:
            text = text + "\n" + "\n".join(leaves)
    return text


def _leaf_texts(value: Any, out: list[str]) -> None:
    """The non-empty `leaf_text`s of `value`'s leaves in `iter_leaves` order, without the paths
    (`grounding_text` runs over every message of a recording: no tuple per leaf)."""
    stack = [value]  # a stack of its own: arguments may nest deeper than Python's recursion limit
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        else:
            text = leaf_text(item)
            if text:
                out.append(text)


def iter_leaves(value: Any, path: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    """(path, leaf) of each leaf of `value`, in document order (with a stack of its own: arguments
    may nest deeper than Python's recursion limit)."""
    stack: list[tuple[tuple, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([(where + (key,), child) for key, child in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(where + (index,), child) for index, child in enumerate(item)]))
        else:
            yield where, item


def leaf_text(value: Any) -> str | None:
    """The comparable text of a leaf, or None when the leaf never counts as a learned value."""
    return scalar_value_text(value)


DEFAULT_LEVEL: GroundingLevel = "values"


@dataclass(frozen=True)
class GroundingRules:
    """How each tool's arguments are grounded: `tools` maps a tool name to one level for all its
    arguments or to levels per top-level argument (others: `default`)."""

    tools: Mapping[str, GroundingLevel | Mapping[str, GroundingLevel]] = field(default_factory=dict)
    default: GroundingLevel = DEFAULT_LEVEL

    def level(self, tool: str, key: Any) -> GroundingLevel:
        rule = self.tools.get(tool, self.default)
        if isinstance(rule, Mapping):
            return rule.get(key, self.default) if isinstance(key, str) else self.default
        return rule


VALUES = GroundingRules()


@dataclass(frozen=True)
class Candidate:
    """One value of a recorded message that may have been learned from context."""

    kind: str  # "arg" (a whole argument leaf), "arg-token" (a token inside one), "text" (a token in text)
    value: str
    call: int | None = None  # index of the tool call in the message's content
    path: tuple = ()  # JSON path inside the call's arguments
    block: int | None = None  # content index of the text block
    opaque: bool = True  # a token the agent cannot have produced itself (`is_opaque_token`)
    word: bool = False  # a whole leaf that is one word of letters (`is_vocabulary_word`)
    #: a whole leaf, not opaque, that the original window held only in the agent's own messages
    #: (a command it ran before, a description it wrote): its own composition, not learned
    own: bool = False
    #: a whole leaf the agent chooses by the argument's name (`timeout`, `limit`, `description`)
    chosen: bool = False
    #: the ids a whole leaf wraps in words of the agent's own (`user:<id>`): visible ids are enough
    parts: tuple[str, ...] = ()


def candidates(message: AssistantMessage, learned: LearnedCheck, rules: GroundingRules = VALUES) -> list[Candidate]:
    """Learned candidate values of `message` that `rules` ground (see module rules)."""
    return select(all_candidates(message, learned), message, rules)


def _call_block(message: AssistantMessage, candidate: Candidate) -> ToolCallBlock:
    """The tool call an argument candidate (`arg`, `arg-token`) was found in."""
    assert candidate.call is not None, "an argument candidate names its call"
    block = message.content[candidate.call]
    assert isinstance(block, ToolCallBlock), "an argument candidate's call is a tool call block"
    return block


def _text_block(message: AssistantMessage, candidate: Candidate) -> TextBlock:
    """The text block a `text` candidate was found in."""
    assert candidate.block is not None, "a text candidate names its block"
    block = message.content[candidate.block]
    assert isinstance(block, TextBlock), "a text candidate's block is a text block"
    return block


def select(plan: list[Candidate], message: AssistantMessage, rules: GroundingRules = VALUES) -> list[Candidate]:
    """The candidates of `all_candidates` that `rules` ground: whole leaves unless `off`, tokens of
    composed text when opaque (`values`) or always (`strict`); text tokens when opaque."""
    out: list[Candidate] = []
    whole: set[tuple[int | None, tuple]] = set()  # (call, path) of whole leaves kept at `strict`
    for c in plan:
        if c.kind == "text":
            keep = c.opaque
        else:
            level = rules.level(_call_block(message, c).name, c.path[0] if c.path else None)
            if level == "strict":
                # every learned leaf, whatever composed it; a token inside a leaf kept whole is that leaf's
                keep = c.kind == "arg" or (c.call, c.path) not in whole
                if c.kind == "arg":
                    whole.add((c.call, c.path))
                    c = replace(c, parts=()) if c.parts else c
            elif c.kind == "arg":
                # values: a whole learned leaf unless the agent composes it (one word of letters, its
                # own earlier text, a value it chooses by the argument's name)
                keep = level == "values" and not (c.word or c.own or c.chosen)
            else:  # a token inside a leaf: when opaque
                keep = level == "values" and c.opaque
        if keep:
            out.append(c)
    return out


def all_candidates(message: AssistantMessage, learned: LearnedCheck) -> list[Candidate]:
    """Every learned candidate of `message` at the `strict` level, opaque tokens marked: what any
    rules select from (one plan per step, whatever the suite's levels)."""
    out: list[Candidate] = []
    for index, block in enumerate(message.content):
        if isinstance(block, ToolCallBlock):
            _argument_candidates(block.arguments, (), index, learned, out)
        elif isinstance(block, TextBlock):
            for token in dict.fromkeys(identifier_tokens(block.text)):
                if learned(token):
                    out.append(Candidate("text", token, block=index, opaque=is_opaque_token(token)))
    return out


def _argument_candidates(value: Any, path: tuple, call: int, learned: LearnedCheck, out: list[Candidate]) -> None:
    """`all_candidates` of one tool call's arguments, leaves in `iter_leaves` order (a recursion
    that appends, not nested generators: the plan of every replayed step walks them)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _argument_candidates(item, path + (key,), call, learned, out)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _argument_candidates(item, path + (position,), call, learned, out)
    else:
        text = leaf_text(value)
        if text is None:
            return
        whole = learned(text)
        if whole:
            key = next((k for k in reversed(path) if isinstance(k, str)), None)
            chosen = agent_chosen(key, value)
            # an id the agent cannot make up counts wherever it saw it; any other text — words, a
            # command, lines it wrote in an earlier edit, a date it wrote in ISO form from another
            # spelling — only where it was told it
            opaque_id = is_opaque_token(text) and IDENT_RE.fullmatch(text) is not None and not is_calendar_date(text)
            own = not opaque_id and not learned.external(text)
            parts = id_parts(text) if isinstance(value, str) else ()
            out.append(
                Candidate(
                    "arg",
                    text,
                    call=call,
                    path=path,
                    word=is_vocabulary_word(text),
                    own=own,
                    chosen=chosen,
                    parts=parts,
                )
            )
            if not (chosen or own):
                return
        if isinstance(value, str):  # the tokens of text the agent composed: the opaque ones count
            for token in dict.fromkeys(identifier_tokens(value)):
                if token != value and learned(token):
                    out.append(Candidate("arg-token", token, call=call, path=path, opaque=is_opaque_token(token)))


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


class LostMarkers:
    """The marker of each lost value, numbered once in order of first loss: a marker then stands
    for one value wherever it appears, and a legend of the markers is exact."""

    def __init__(self) -> None:
        self.of: dict[str, str] = {}  # lost value → its marker

    def __call__(self, value: str) -> str:
        marker = self.of.get(value)
        if marker is None:
            marker = self.of[value] = MARKER.format(n=len(self.of) + 1)
        return marker


@dataclass
class Grounded:
    """The result of grounding one recorded message in a window."""

    message: AssistantMessage
    lost: list[Candidate] = field(default_factory=list)
    markers: dict[str, str] = field(default_factory=dict)  # lost value of this message → marker


def ground(
    message: AssistantMessage,
    learned: list[Candidate],
    visible: str | VisibleText,
    numbering: LostMarkers | None = None,
) -> Grounded:
    """Replace every learned candidate that is not in `visible` by its marker. `numbering`: the
    markers shared with the other messages of the run (a fresh one numbers this message alone)."""
    lost = [c for c in learned if c.value not in visible and not (c.parts and all(p in visible for p in c.parts))]
    if not lost:
        return Grounded(message)
    numbering = numbering if numbering is not None else LostMarkers()
    markers = {c.value: numbering(c.value) for c in lost}
    out = message.model_copy(deep=True)
    for c in lost:
        if c.kind == "text":
            block = _text_block(out, c)
            block.text = _replace_tokens(block.text, markers)
        else:
            call = _call_block(out, c)
            call.arguments = copy.deepcopy(call.arguments)
            current = _get(call.arguments, c.path)
            if c.kind == "arg":
                _set(call.arguments, c.path, markers[c.value])
            elif isinstance(current, str):
                _set(call.arguments, c.path, _replace_tokens(current, markers))
    return Grounded(out, lost, markers)


def _replace_tokens(text: str, markers: dict[str, str]) -> str:
    return IDENT_RE.sub(lambda m: markers.get(m.group(0), m.group(0)), text)


def _get(data: Any, path: tuple) -> Any:
    for key in path:
        data = data[key]
    return data


def _set(data: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    if path:
        data[path[-1]] = value
