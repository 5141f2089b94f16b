"""`ItemMemo`: what one QA pipeline item computes once from the message objects it reads again.

An item reads the same message objects many times: their token estimates (compact() before and
after, the re-check, both replays' windows, the report's window views), their texts (grounding,
the ledger, the summary, the window views, the identifier check), the window and the ledger of
the same paths, and whether each restated entry holds its source's bytes (every compaction of a
long session asks it again over its whole path: `transcript.restated`). The pipeline makes one
`ItemMemo` per item and passes it down; every function that can use it takes
`memo: ItemMemo | None = None` and, given None, computes plainly. The plain functions
(`estimate_tokens`, `message_text`) stay pure: code holding a memo asks it instead
(`memo.tokens(message)`, `memo.text(message)`).

The memo also carries the item's agent rules (`rules`: `transcript.rules.AgentRules`; None: pi
0.73.1's, the plain functions): the estimates and windows it keeps are that agent's.

Only for code that never changes a message in place, as the pipeline does (replay copies a
message before it changes one): an object changed in place would keep its first value. A memo
holds the objects it has seen (so no other object can take their identity) and lets them go
with the item; texts are kept up to `MAX_TEXT_CHARS` characters.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from replaylab.transcript.model import (
    TextBlock,
    ThinkingBlock,
    identifier_text,
    identifier_text_differs,
    message_text,
)
from replaylab.transcript.tokens import estimate_tokens

T = TypeVar("T")

#: characters of message text one item keeps at most: a very large session would otherwise keep
#: a second copy of all its text for the whole item
MAX_TEXT_CHARS = 16_000_000


#: `identity(obj)`: a key for a live object's identity, unique among live objects as `id(obj)` is
#: (CPython's default hash: the object's address, rotated — a bijection). Why not `id()`: it raises
#: an audit event, and once the replay's socket guard has installed its audit hook every `id()`
#: runs that Python hook, several times the cost of this call. Every memo keyed by it holds the
#: object and checks `is`.
identity = object.__hash__


class IdentityMemo:
    """`compute(obj)` once per object, found by identity: keyed by `identity(obj)` and holding `obj`,
    so the id cannot come back for another object while the value is kept. `room`: the total
    `len()` of the values it may keep (None: unbounded); a value that no longer fits is computed
    each time."""

    __slots__ = ("values", "room")

    def __init__(self, room: int | None = None):
        self.values: dict[int, tuple[Any, Any]] = {}
        self.room = room

    def get(self, obj: Any, compute: Callable[[Any], T], held: Callable[[Any, Any], bool] | None = None) -> T:
        """`held(obj, value)`: whether `value` is an object `obj` holds itself, which is kept
        without taking room (keeping it keeps no second copy)."""
        key = identity(obj)
        hit = self.values.get(key)
        if hit is not None and hit[0] is obj:
            found: T = hit[1]
            return found
        value = compute(obj)
        if self.room is None or (held is not None and held(obj, value)):
            self.values[key] = (obj, value)
        # a memo given a room holds sized values (texts); T is not bounded by Sized for the others
        elif len(value) <= self.room:  # type: ignore[arg-type]
            self.room -= len(value)  # type: ignore[arg-type]
            self.values[key] = (obj, value)
        return value


def _held_text(message: Any, text: str) -> bool:
    """Whether `text` is a string of `message` itself: `message_text` of a message with one text
    part is that very string, so the room is kept for the texts it joins anew (past the room, a
    long session's later half, where both replays read, would join its texts again at each read)."""
    content = getattr(message, "content", None)
    if content is text:
        return True
    if isinstance(content, list):
        return any(
            (isinstance(block, TextBlock) and block.text is text)
            or (isinstance(block, ThinkingBlock) and block.thinking is text)
            for block in content
        )
    return False


class ItemMemo:
    """The memos of one pipeline item. Each table is filled by the function named beside it, which
    keys it by the identity of what it read and holds those objects (see each function)."""

    __slots__ = (
        "rules",
        "runtime_rules",
        "estimate",
        "estimates",
        "texts",
        "identifier_texts",
        "paths",
        "windows",
        "ledgers",
        "hashes",
        "shown",
        "claims",
        "restated",
        "_kept",
    )

    def __init__(self, text_room: int | None = MAX_TEXT_CHARS, rules: Any = None, runtime_rules: Any = None):
        #: the item's agent rules, a `transcript.rules.AgentRules` (None: pi 0.73.1's, the plain
        #: functions); not annotated so: that module reads the window's types, which read the memo
        self.rules = rules
        #: the OpenClaw runtime rules its profile runs with (`upstream.runtime_rules.RuntimeRules`;
        #: None: 2026.4.12's, which every layer defaults to): which texts are identifiers
        self.runtime_rules = runtime_rules
        #: the agent's estimate of one message (`tokens` memoizes it)
        self.estimate: Callable[[Any], int] = estimate_tokens if rules is None else rules.tokens
        #: `tokens(message)`: the agent's estimate per message object
        self.estimates = IdentityMemo()
        #: `text(message)`: `message_text` per message object, bounded
        self.texts = IdentityMemo(room=text_room)
        #: `identifier_text(message)`: where it is not `text`'s string, per message object, bounded
        self.identifier_texts = IdentityMemo(room=text_room)
        #: `Transcript.path_to`: key → (the transcript, its `by_id`, its size, the path)
        self.paths: dict[tuple[Any, ...], tuple[Any, Any, int, list[Any]]] = {}
        #: `build_window`: key → (the entries, held; the window)
        self.windows: dict[tuple[Any, ...], tuple[list[Any], list[Any]]] = {}
        #: `build_ledger`, `ledger_for_window`: key → ((what it was built from, held), the ledger)
        self.ledgers: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        #: the ledger's hashes of a call block's arguments and of a result message's text: the
        #: recording's ledger, the compacted path's and the window's share their calls
        self.hashes = IdentityMemo()
        #: what the report shows of each message (`qa.views.window_view`): the windows before and
        #: after a compaction hold mostly the same message objects
        self.shown = IdentityMemo()
        #: `claim`: a restated entry → (it and the entry it names, held; the verdict). A claim is
        #: judged by those two entries alone, and every compaction of a long session asks again
        #: about the same entries over its whole path
        self.claims: dict[int, tuple[Any, Any, int]] = {}
        #: `path_restatements`: the path's key → (the path, held; its restatements). One compaction
        #: asks about the same path from the harness, its entry, the ledger, the turns and the
        #: re-check, and each ask would read every claim on it again
        self.restated: dict[tuple[Any, ...], tuple[list[Any], Any]] = {}
        self._kept: dict[object, Any] = {}

    def tokens(self, message: Any) -> int:
        """The agent's estimate of `message` (`estimate_tokens` for pi 0.73.1), once per message object."""
        return self.estimates.get(message, self.estimate)

    def text(self, message: Any) -> str:
        """`message_text(message)`, once per message object: while the text room lasts, or
        always where it is a string the message holds itself."""
        return self.texts.get(message, message_text, _held_text)

    def identifier_text(self, message: Any) -> str:
        """`identifier_text(message)`: the very `text` string where the two agree (its scans are
        then shared), else once per message object while the text room lasts."""
        if identifier_text_differs(message):
            return self.identifier_texts.get(message, identifier_text)
        return self.text(message)

    def claim(self, entry: Any, source: Any, judge: Callable[[Any, Any], int]) -> int:
        """`judge(entry, source)`, once per pair of entry objects (`transcript.restated`)."""
        key = identity(entry)
        hit = self.claims.get(key)
        if hit is not None and hit[0] is entry and hit[1] is source:
            return hit[2]
        verdict = judge(entry, source)
        self.claims[key] = (entry, source, verdict)
        return verdict

    def path_restatements(self, path: Sequence[Any], compute: Callable[[Sequence[Any]], T]) -> T:
        """`compute(path)` once per path of the same entry objects (`transcript.restated`)."""
        key = tuple(map(identity, path))
        hit = self.restated.get(key)
        if hit is not None and len(hit[0]) == len(path) and all(map(operator.is_, hit[0], path)):
            found: T = hit[1]
            return found
        value = compute(path)
        self.restated[key] = (list(path), value)
        return value

    def kept(self, owner: object, make: Callable[[], T]) -> T:
        """What a module of a higher layer keeps for this item under a key object of its own
        (`make()` on the first ask): the compaction's text scans, the replay's recording texts."""
        value = self._kept.get(owner)
        if value is None:
            value = self._kept[owner] = make()
        return value
