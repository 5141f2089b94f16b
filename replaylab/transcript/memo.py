"""Per-message memos for code that treats messages as values: a QA pipeline item.

One pipeline item reads the same message objects many times: their token estimates ~9 times
(compact() before and after, the re-check, both replays' windows, the report's window views:
184 estimates per bench session, 20 % of them distinct) and their text ~5 times (grounding, the
ledger, the summary, the window views, the identifier check). Inside `messages_as_values()`,
`estimate_tokens` and `message_text` compute each object's value once.

Only for code that never changes a message in place, as the pipeline does (replay copies a
message before it changes one): an object changed in place inside the block would keep its
first value. The memos hold the objects they have seen (so no other object can take an `id`)
and let them go when the block ends; texts are kept up to `MAX_TEXT_CHARS` characters.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from replaylab.transcript import model, tokens

#: characters of message text kept at most (a τ²-sized session holds ~0.3 M; a 100 MB one would
#: otherwise keep a second copy of its text for the whole item)
MAX_TEXT_CHARS = 16_000_000


@contextmanager
def messages_as_values() -> Iterator[None]:
    """Memoize `estimate_tokens` and `message_text` per message object until the block ends
    (a nested block shares the outer one's memos)."""
    if tokens._cache is not None:
        yield
        return
    tokens._cache, model._text_cache, model._text_room[0] = {}, {}, MAX_TEXT_CHARS
    try:
        yield
    finally:
        tokens._cache = model._text_cache = None
