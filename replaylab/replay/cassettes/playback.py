"""A session cassette's recorded interactions and one replay's play state, without vcrpy.

Why apart from `vcr_session`: `import vcr` is slow (it imports every client it patches:
aiohttp, httpx, botocore, …; deps.md §3), a fixed cost per process and per xdist worker, and the
common replay never needs it. A tool the session recorded (no tool pack) is answered by its
`request_key` alone (`Playback.play_key_index`), and a miss is kept as a
`recorded_tool.ToolRequest` with the attributes of vcrpy's `Request` that replaylab reads.
vcrpy is imported only where its own objects are needed: a pack tool's real HTTP under vcrpy's
patches (`vcr_session.IndexedCassette.over(playback)`, sharing this play state), and a recorded
interaction's `Request` read through `RecordedInteractions[i]` (built on first read).

Matching is `request_keys.request_key`: method + path + sorted query + canonical JSON body.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from replaylab import caches
from replaylab.cassette import load_cassette
from replaylab.replay.cassettes.interaction_tags import tool_call_id_of
from replaylab.replay.cassettes.request_keys import (
    RequestKey,
    canonical_body,
    request_key,
    scrubbed_query,
    text_body_key,
)

if TYPE_CHECKING:
    from vcr.request import Request


# ---------------------------------------------------------------- parsed cassettes (cached)

Interactions = Sequence[tuple["Request", dict]]
RequestIndex = dict[RequestKey, list[int]]
#: parsed cassettes kept per process: a session's runs open its cassette a few times in a row
MAX_PARSED_CASSETTES = 8
#: file identity (device, inode) → ((size, mtime), interactions, their request index)
_PARSED: caches.ProcessCache[tuple[int, int], tuple[tuple[int, int], RecordedInteractions, RequestIndex]] = (
    caches.ProcessCache("replay.parsed_cassettes")
)
#: the fields `Request(**fields)` takes (`Request._from_dict`): exactly these, no default
_REQUEST_FIELDS = frozenset({"method", "uri", "body", "headers"})


def _parsed(path: str | Path) -> tuple[RecordedInteractions, RequestIndex]:
    """The parsed interactions and their `request_key` index, both shared (never mutated) by every
    playback cassette of the file. Keyed by the file's identity, not its spelled path (no resolve()
    per open); size and mtime say whether it changed."""
    stat = os.stat(path)
    stamp = (stat.st_size, stat.st_mtime_ns)
    key = (stat.st_dev, stat.st_ino)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1], hit[2]
    interactions = RecordedInteractions(load_cassette(Path(path)), file=str(path))
    index = _index_of(interactions.keys)
    _PARSED.pop(key, None)
    while len(_PARSED) >= MAX_PARSED_CASSETTES:  # a nightly run opens thousands: keep the latest few
        del _PARSED[next(iter(_PARSED))]
    _PARSED[key] = (stamp, interactions, index)
    return interactions, index


def request_index(interactions: Interactions) -> RequestIndex:
    """`request_key` → indices of the interactions with that key, in recorded order."""
    if isinstance(interactions, RecordedInteractions):
        return _index_of(interactions.keys)
    return _index_of(request_key(request) for request, _ in interactions)


def _index_of(keys: Iterable[RequestKey]) -> RequestIndex:
    index: RequestIndex = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    return index


class RecordedInteractions(Sequence):
    """The (vcrpy `Request`, response) pairs of one cassette file, read-only, shared by all its
    playback cassettes (`IndexedCassette.data`), with each pair's `request_key` (`keys`) and
    response (`responses`, bodies as bytes as vcrpy serves them).

    Why lazy: building vcrpy `Request`s (a case-insensitive headers mapping, a URI parse) costs
    a good part of what the JSON parse of the file does, and replay serves calls by key alone
    (`play_key`); a `Request` is needed only where something reads `data[i]` (the executor's
    evidence check on a played read, vcrpy's closest-match report on a miss). Each is built on
    first read, once, and is the object `Request._from_dict` gives, with its body key filled
    (`request_keys.request_body_key`). The key is computed from the recorded fields the way
    `request_key` reads them off the `Request`. Fields vcrpy could refuse (other names, headers
    it cannot hold) are built at once instead, so a bad cassette still fails on open with
    vcrpy's own error, never later in a replay.

    Why `texts`: vcrpy serves bodies as bytes (`responses`), but the recorded-tool route wants
    the text the file holds (`response_text`); decoding the bytes encoded on open again for every
    served call was a noticeable part of a replay (tool results are mostly text, often not
    ASCII). `texts` keeps each body as loaded when it was text; and since that route never reads
    the bytes, each body is encoded only when vcrpy's side first reads its response
    (`LazyResponses`), not all of them on open.

    Request bodies that are text get their canonical key through `text_body_key`, the cache the
    recorded-tool keys read: a replayed call's canonical arguments are the recorded body text,
    so its key is then found, not computed again."""

    __slots__ = ("keys", "responses", "texts", "made_by", "_fields", "_pairs", "_by_call")

    def __init__(self, items: list[dict[str, Any]], *, file: str = "<cassette>"):
        """`items`: what `load_cassette` returned (owned from now on: responses are converted in place)."""
        self._fields: list[dict[str, Any]] = []
        self._pairs: list[tuple[Request, dict] | None] = []
        self.keys: list[RequestKey] = []
        raw_responses: list[dict] = []
        #: each response's body as loaded when that was text (else None: bytes, or no body string)
        self.texts: list[str | None] = []
        #: the tool call id each interaction is tagged with (`interaction_tags`), None when untagged
        self.made_by: list[str | None] = [
            tool_call_id_of(item, file=file, index=i, line_of=lambda index: _line_of_interaction(file, index))
            for i, item in enumerate(items)
        ]
        self._by_call: dict[str, list[int]] | None = None
        for item in items:
            fields = item["request"]
            request = None if _builds_without_error(fields) else _vcr_request(fields)
            path, query = _uri_path_query(fields["uri"])
            body = fields["body"]
            body_key = text_body_key(body) if type(body) is str else canonical_body(body)
            response = item["response"]
            self.texts.append(_body_text(response))  # before the conversion to bytes
            if request is not None:
                request._replaylab_body_key = body_key
            self._fields.append(fields)
            self._pairs.append(None if request is None else (request, response))
            self.keys.append((fields["method"].upper(), path, query, body_key))
            raw_responses.append(response)
        #: the responses as vcrpy serves them (bodies as bytes), each converted on first read
        self.responses = LazyResponses(raw_responses)

    def __len__(self) -> int:
        return len(self._pairs)

    def made_by_call(self, tool_call_id: str) -> list[int]:
        """Indices of the interactions tagged with this tool call id, in recorded order."""
        if self._by_call is None:
            self._by_call = {}
            for index, call_id in enumerate(self.made_by):
                if call_id is not None:
                    self._by_call.setdefault(call_id, []).append(index)
        return self._by_call.get(tool_call_id, [])

    @property
    def tagged(self) -> bool:
        """Whether the recorder tagged these interactions with the calls that made them."""
        return any(call_id is not None for call_id in self.made_by)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return _sliced(self, i)
        pair = self._pairs[i]
        if pair is None:
            request = _vcr_request(self._fields[i])
            request._replaylab_body_key = self.keys[i][3]
            pair = self._pairs[i] = (request, self.responses[i])
        elif not self.responses.converted(i):  # built on open: its response was not read yet
            self.responses[i]
        return pair

    def response_text(self, i: int) -> tuple[str, dict]:
        """(body text, response) of interaction `i`: the text vcrpy's bytes decode to
        (`body.decode("utf-8", "replace")` of what `convert_to_bytes` encoded gives the loaded
        text back exactly; a text it could not encode stayed text), without decoding them. The
        response is the one `responses[i]` gives (the same dict), its body not encoded for this."""
        text = self.texts[i]
        if text is not None:
            return text, self.responses.raw(i)
        response = self.responses[i]
        body = response["body"]["string"]
        return (body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")), response


class LazyResponses(Sequence):
    """Responses as vcrpy serves them: `compat.convert_to_bytes` applied (in place, once) when
    an item is first read. `raw(i)` is the same dict, read without converting it (its status
    and headers; a text body stays text until something reads the item)."""

    __slots__ = ("_items", "_converted")

    def __init__(self, items: list[dict]):
        self._items = items
        self._converted = [False] * len(items)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return _sliced(self, i)
        response = self._items[i]
        if not self._converted[i]:
            from vcr.serializers import compat  # only vcrpy's side reads converted responses

            compat.convert_to_bytes(response)
            self._converted[i] = True
        return response

    def raw(self, i: int) -> dict:
        return self._items[i]

    def converted(self, i: int) -> bool:
        return self._converted[i]


def _line_of_interaction(file: str, index: int) -> int | None:
    """The line of interaction `index` in a cassette file (read again: only a bad cassette asks)."""
    from replaylab.cassette import _line_of  # the cassette module's own key locator

    try:
        raw = Path(file).read_bytes()
    except OSError:
        return None
    return _line_of(raw, ("interactions", index))


def _sliced(items: Sequence, part: slice) -> list:
    """`items[part]` of a lazy sequence: each item read through its `__getitem__`."""
    return [items[j] for j in range(*part.indices(len(items)))]


def _body_text(response: Any) -> str | None:
    try:
        body = response["body"]["string"]
    except (KeyError, TypeError):
        return None
    return body if isinstance(body, str) else None


def _builds_without_error(fields: dict[str, Any]) -> bool:
    """True when `Request._from_dict(fields)` cannot fail, given what `load_cassette` checked
    (method and uri strings, body str / bytes / None, headers a mapping or null: all four there) and what
    `RecordedInteractions` computes at once (the URI parse, the body's UTF-8): exactly vcrpy's
    four fields, header names that are strings (vcrpy lowercases them) and no empty value list
    (vcrpy keeps its first value)."""
    if fields.keys() != _REQUEST_FIELDS:
        return False
    for name, value in (fields["headers"] or {}).items():  # vcrpy reads null headers as none
        if type(name) is not str or (isinstance(value, (list, tuple)) and not value):
            return False
    return True


@caches.lru("replay.uri_path_query", maxsize=1024)
def _uri_path_query(uri: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What `request_key` takes from a `Request` of this URI: `request.path or "/"` and the sorted
    `request.query` of the scrubbed URI (`request_keys.scrubbed_query`). Cached: a cassette, and
    a run's cassettes, repeat a few tool URIs."""
    return urlparse(uri).path or "/", scrubbed_query(uri)


def _vcr_request(fields: dict[str, Any]) -> Request:
    """vcrpy's `Request` of a recorded interaction (imports vcrpy: only where one is read, or
    where vcrpy could refuse the fields, so a bad cassette fails on open with vcrpy's error)."""
    from vcr.request import Request

    return Request._from_dict(fields)


def describe_request(request: Any) -> dict[str, Any]:
    """method, uri and a body preview of a vcrpy request (for defect details)."""
    if request is None:
        return {}
    body = canonical_body(getattr(request, "body", None))
    return {
        "method": getattr(request, "method", None),
        "uri": getattr(request, "uri", None),
        "body": body if len(body) <= 2000 else body[:2000] + f"… ({len(body)} chars)",
    }


class Playback:
    """One replay's play state over a cassette file's shared interactions: record mode none, no
    playback repeats — each recorded interaction answers one call, in recorded order among
    equal requests. `play_counts` (a Counter, as vcrpy's), `played` (interaction indices in play
    order) and `misses` (requests nothing could answer) are what a run changes; a vcrpy
    cassette built `over` this playback shares those very objects."""

    def __init__(self, path: str | Path, interactions: Interactions, index: RequestIndex | None = None):
        """`index`: `request_index(interactions)` when the caller has it already (read only here).
        `RecordedInteractions` are shared as they are (read-only), any other sequence is copied."""
        shared = isinstance(interactions, RecordedInteractions)
        self.file = str(path)  # (not `path`: vcrpy's `Cassette.path` is a read-only property)
        self.data = interactions if shared else list(interactions)
        self.index = index if index is not None else request_index(self.data)
        #: responses by interaction index, read without building a `Request`
        self.recorded_responses = (
            interactions.responses
            if isinstance(interactions, RecordedInteractions)
            else [response for _, response in self.data]
        )
        self.play_counts: collections.Counter[int] = collections.Counter()
        self.misses: list[Any] = []  # `ToolRequest`s, or vcrpy `Request`s a pack tool sent
        self.played: list[int] = []  # interaction indices in play order

    def mark_played(self, index: int) -> None:
        self.play_counts[index] += 1
        self.played.append(index)

    def play_key(self, key: RequestKey) -> dict | None:
        """The response of the first unplayed interaction with that `request_key`, marked played;
        None when there is none (the caller then records the miss)."""
        index = self.play_key_index(key)
        return None if index is None else self.recorded_responses[index]

    def play_key_index(self, key: RequestKey) -> int | None:
        """`play_key`, giving the interaction's index (for `response_text`) instead of its response."""
        for index in self.index.get(key, ()):
            if self.play_counts[index] == 0:
                self.mark_played(index)
                return index
        return None

    def made_by_call(self, tool_call_id: str) -> list[int]:
        """Indices of the interactions the recorder tagged with this tool call id (none untagged)."""
        if isinstance(self.data, RecordedInteractions):
            return self.data.made_by_call(tool_call_id)
        return []

    @property
    def tagged(self) -> bool:
        return isinstance(self.data, RecordedInteractions) and self.data.tagged

    def mark_made_by(self, tool_call_id: str) -> list[int]:
        """Mark the interactions this recorded call made as used (a live read tool must not be
        served what the recording's earlier calls already got); their indices."""
        indices = self.made_by_call(tool_call_id)
        for index in indices:
            if self.play_counts[index] == 0:
                self.mark_played(index)
        return indices

    def response_text(self, index: int) -> tuple[str, dict]:
        """(body text, response) of interaction `index` (see `RecordedInteractions.response_text`)."""
        if isinstance(self.data, RecordedInteractions):
            return self.data.response_text(index)
        response = self.recorded_responses[index]
        body = response["body"]["string"]
        return (body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")), response

    def state(self) -> tuple[dict[int, int], list[int]]:
        """What playing changes (play counts, play order), to start another playback of the same
        interactions from here (`restore`)."""
        return dict(self.play_counts), list(self.played)

    def restore(self, state: tuple[dict[int, int], list[int]]) -> None:
        counts, played = state
        self.play_counts.clear()
        self.play_counts.update(counts)
        self.played[:] = played


def open_playback(path: str | Path) -> Playback:
    return Playback(path, *_parsed(path))
