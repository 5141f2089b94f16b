"""Per-object memos for code that treats messages as values: a QA pipeline item.

One pipeline item reads the same message objects many times: their token estimates ~9 times
(compact() before and after, the re-check, both replays' windows, the report's window views:
184 estimates per bench session, 20 % of them distinct) and their text ~5 times (grounding, the
ledger, the summary, the window views, the identifier check). Inside `messages_as_values()`,
`estimate_tokens` and `message_text` compute each object's value once (`tokens`, `texts`), and
`build_ledger` and `build_window` build the ledger and the window of one path once (`ledgers`,
`windows`: compact(), the pipeline's re-check and its views each rebuild the window before and
after the compaction — 6 windows and 3 ledgers per item, of 2 paths).

Only for code that never changes a message in place, as the pipeline does (replay copies a
message before it changes one): an object changed in place inside the block would keep its
first value. A memo holds the objects it has seen (so no other object can take an `id`) and lets
them go when the block ends; texts are kept up to `MAX_TEXT_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

#: characters of message text kept at most (a τ²-sized session holds ~0.3 M; a 100 MB one would
#: otherwise keep a second copy of its text for the whole item)
MAX_TEXT_CHARS = 16_000_000


#: `identity(obj)`: a key for a live object's identity, unique among live objects as `id(obj)` is
#: (CPython's default hash: the object's address, rotated — a bijection). Why not `id()`: it raises
#: an audit event, and once the replay's socket guard has installed its audit hook (the first
#: replay of a process) every `id()` runs that Python hook: ~740 calls per bench item, ≈0.5 µs
#: each, several times the cost of this call. Every memo keyed by it holds the object and checks `is`.
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

    def get(self, obj: Any, compute: Callable[[Any], T]) -> T:
        key = identity(obj)
        hit = self.values.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = compute(obj)
        if self.room is None:
            self.values[key] = (obj, value)
        elif len(value) <= self.room:  # type: ignore[arg-type]
            self.room -= len(value)  # type: ignore[arg-type]
            self.values[key] = (obj, value)
        return value


#: the memos while `messages_as_values()` is active (None outside it)
tokens: IdentityMemo | None = None
texts: IdentityMemo | None = None
#: ledgers by the identity of what they were built from (`replaylab.safety.ledger.build_ledger`):
#: key → (the objects the key names, held so their ids stay theirs; the ledger)
ledgers: dict[tuple, tuple[Any, Any]] | None = None
#: windows by the identity of their path's entries (`replaylab.transcript.context.build_window`):
#: key → (the entries, held; the window)
windows: dict[tuple, tuple[Any, Any]] | None = None
#: what the report shows of each message (`replaylab.qa.views.window_view`): the window before a
#: compaction and the window after it hold mostly the same message objects (474 of 519 on the bench)
shown: IdentityMemo | None = None
#: the ledger's hashes (`replaylab.safety.ledger`): of a call block's arguments, of a result
#: message's text — the recording's ledger, the compacted path's and the window's share their calls
hashes: IdentityMemo | None = None
#: what other modules keep for one item under a key object of their own (the compaction's text
#: scans: `replaylab.compaction.identifiers.item_scans`)
per_item: dict[object, Any] | None = None


@contextmanager
def messages_as_values() -> Iterator[None]:
    """Memoize `estimate_tokens`, `message_text`, `build_ledger`, `build_window`, the ledger's
    hashes, the report's view of a message per object, and `per_item` state until the block ends (a nested block shares the outer one's memos)."""
    global tokens, texts, ledgers, windows, shown, hashes, per_item
    if tokens is not None:
        yield
        return
    tokens, texts, ledgers, windows = IdentityMemo(), IdentityMemo(room=MAX_TEXT_CHARS), {}, {}
    shown, hashes, per_item = IdentityMemo(), IdentityMemo(), {}
    try:
        yield
    finally:
        tokens = texts = ledgers = windows = shown = hashes = per_item = None
