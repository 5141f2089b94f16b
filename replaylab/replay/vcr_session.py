"""vcrpy glue: canonical-JSON matching, an indexed playback cassette, patching without reloading.

Imported lazily (only when a replay or a recording actually runs): `import vcr` costs ≈0.6 s
because it imports every client it patches (deps.md §3).

Why not plain `vcr.use_cassette(path)` per call: it re-reads and re-parses the YAML on every
enter and starts with fresh play counts, so (a) a session's cassette would be parsed once per
tool call and (b) `allow_playback_repeats=False` could not span a run. Here a cassette file is
parsed once per process (cached by file identity, size and mtime), each replay gets a fresh
`IndexedCassette` over the shared parsed interactions (its own play counts), and `patched()`
installs vcrpy's patches around a cassette object we keep — the same patchers vcrpy's own
context manager installs (`CassettePatcherBuilder`), so every client vcrpy supports is served.

Matching is method + path + canonical JSON body (key order and whitespace insensitive,
vcrpy#309/#533). `IndexedCassette` answers vcrpy's lookups from a dict keyed by exactly those three
values instead of running the matchers over every recorded interaction, and remembers each
request it could not serve (`misses`) even when the tool implementation swallows vcrpy's
exception.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator
from urllib.parse import parse_qsl, urlparse

import orjson
from vcr.cassette import Cassette
from vcr.patch import CassettePatcherBuilder
from vcr.record_mode import RecordMode
from vcr.request import Request
from vcr.serializers import compat

from replaylab.cassette import canonical_json, load_cassette


def canonical_body(body: Any) -> str:
    """Body text for matching: canonical JSON when the body is JSON, else the decoded text."""
    if body is None:
        return ""
    if hasattr(body, "read"):
        body = body.read()
    if isinstance(body, (bytes, bytearray)):
        raw = bytes(body)
    elif isinstance(body, str):
        raw = body.encode("utf-8")
    else:
        try:
            raw = b"".join(body)
        except TypeError:
            return str(body)
    if not raw:
        return ""
    try:
        return canonical_json(orjson.loads(raw))
    except orjson.JSONDecodeError:
        return raw.decode("utf-8", "replace")


def canonical_body_matcher(r1: Request, r2: Request) -> None:
    """vcrpy matcher: raise AssertionError when the canonical bodies differ."""
    a, b = _request_body_key(r1), _request_body_key(r2)
    if a != b:
        raise AssertionError(f"canonical JSON bodies differ: {a[:200]!r} != {b[:200]!r}")


canonical_body_matcher.__name__ = "canonical_body"


def method_matcher(r1: Request, r2: Request) -> None:
    if r1.method.upper() != r2.method.upper():
        raise AssertionError(f"{r1.method} != {r2.method}")


method_matcher.__name__ = "method"


def path_matcher(r1: Request, r2: Request) -> None:
    if (r1.path or "/") != (r2.path or "/"):
        raise AssertionError(f"{r1.path} != {r2.path}")


path_matcher.__name__ = "path"

def query_matcher(r1: Request, r2: Request) -> None:
    """Query parameters, order-insensitive: reads put their lookup key there (`?email=`), and a
    lookup with another key must not be served the recorded answer."""
    if sorted(r1.query) != sorted(r2.query):
        raise AssertionError(f"query {r1.query} != {r2.query}")


query_matcher.__name__ = "query"

MATCH_ON = (method_matcher, path_matcher, query_matcher, canonical_body_matcher)


def _request_body_key(request: Request) -> str:
    cached = getattr(request, "_replaylab_body_key", None)
    if cached is None:
        cached = canonical_body(request.body)
        try:
            request._replaylab_body_key = cached  # type: ignore[attr-defined]
        except AttributeError:
            pass
    return cached


RequestKey = tuple[str, str, tuple[tuple[str, str], ...], str]


def request_key(request: Request) -> RequestKey:
    """What `MATCH_ON` compares, as one hashable value: the index lookups serve by it alone, so
    it holds every matcher's part — the query too (a lookup `?email=` with a value lost to
    compaction must not be served the recorded answer)."""
    return request.method.upper(), request.path or "/", tuple(sorted(request.query)), _request_body_key(request)


# ---------------------------------------------------------------- parsed cassettes (cached)

Interactions = Sequence[tuple[Request, dict]]
RequestIndex = dict[RequestKey, list[int]]
#: parsed cassettes kept per process: a session's runs open its cassette a few times in a row
MAX_PARSED_CASSETTES = 8
#: file identity (device, inode) → ((size, mtime), interactions, their request index)
_PARSED: dict[tuple[int, int], tuple[tuple[int, int], "RecordedInteractions", RequestIndex]] = {}
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
    interactions = RecordedInteractions(load_cassette(Path(path)))
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

    Why lazy: building vcrpy `Request`s (a case-insensitive headers mapping, a URI parse) cost
    half as much as the JSON parse of the file, and replay serves calls by key alone (`play_key`); a
    `Request` is needed only where something reads `data[i]` (the executor's evidence check on a
    played read, vcrpy's closest-match report on a miss). Each is built on first read, once, and
    is the object `Request._from_dict` gave, with `_request_body_key` filled, as before. The key
    is computed from the recorded fields the way `request_key` reads them off the `Request`.
    Fields vcrpy could refuse (other names, headers it cannot hold) are built at once instead, so
    a bad cassette still fails on open with vcrpy's own error, never later in a replay.

    Why `texts`: vcrpy serves bodies as bytes (`responses`), but the recorded-tool route wants
    the text the file holds (`response_text`); decoding the bytes encoded on open again for every
    served call was a tenth of a bench session's baseline run (τ² tool results: ~0.2 MB of mostly
    non-ASCII text per session). `texts` keeps each body as loaded when it was text; and since
    that route never reads the bytes, each body is encoded only when vcrpy's side first reads its
    response (`LazyResponses`: encoding every body on open was a tenth of the cassette's parse).

    Request bodies that are text get their canonical key through `text_body_key`, the cache the
    executor's recorded-tool keys read: a replayed call's canonical arguments are the recorded
    body text, so its key is then found, not computed again."""

    __slots__ = ("keys", "responses", "texts", "_fields", "_pairs")

    def __init__(self, items: list[dict[str, Any]]):
        """`items`: what `load_cassette` returned (owned from now on: responses are converted in place)."""
        from replaylab.replay.executor import text_body_key

        self._fields: list[dict[str, Any]] = []
        self._pairs: list[tuple[Request, dict] | None] = []
        self.keys: list[RequestKey] = []
        raw_responses: list[dict] = []
        #: each response's body as loaded when that was text (else None: bytes, or no body string)
        self.texts: list[str | None] = []
        for item in items:
            fields = item["request"]
            request = None if _builds_without_error(fields) else Request._from_dict(fields)
            path, query = _uri_path_query(fields["uri"])
            body = fields["body"]
            body_key = text_body_key(body) if type(body) is str else canonical_body(body)
            response = item["response"]
            self.texts.append(_body_text(response))  # before the conversion to bytes
            if request is not None:
                request._replaylab_body_key = body_key  # type: ignore[attr-defined]
            self._fields.append(fields)
            self._pairs.append(None if request is None else (request, response))
            self.keys.append((fields["method"].upper(), path, query, body_key))
            raw_responses.append(response)
        #: the responses as vcrpy serves them (bodies as bytes), each converted on first read
        self.responses = LazyResponses(raw_responses)

    def __len__(self) -> int:
        return len(self._pairs)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return _sliced(self, i)
        pair = self._pairs[i]
        if pair is None:
            request = Request._from_dict(self._fields[i])
            request._replaylab_body_key = self.keys[i][3]  # type: ignore[attr-defined]
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

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return _sliced(self, i)
        response = self._items[i]
        if not self._converted[i]:
            compat.convert_to_bytes(response)
            self._converted[i] = True
        return response

    def raw(self, i: int) -> dict:
        return self._items[i]

    def converted(self, i: int) -> bool:
        return self._converted[i]


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
    (method and uri strings, body str / bytes / None, headers a mapping) and what
    `RecordedInteractions` computes at once (the URI parse, the body's UTF-8): exactly vcrpy's
    four fields, header names that are strings (vcrpy lowercases them) and no empty value list
    (vcrpy keeps its first value)."""
    if fields.keys() != _REQUEST_FIELDS:
        return False
    for name, value in fields["headers"].items():
        if type(name) is not str or (isinstance(value, (list, tuple)) and not value):
            return False
    return True


@functools.lru_cache(maxsize=1024)
def _uri_path_query(uri: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What `request_key` takes from a `Request` of this URI: `request.path or "/"` and the sorted
    `request.query` (vcrpy: `urlparse(uri)`, `sorted(parse_qsl(query))`). Cached: a cassette, and
    a run's cassettes, repeat a few tool URIs."""
    parsed = urlparse(uri)
    return parsed.path or "/", tuple(sorted(parse_qsl(parsed.query)))


class _NoPersister:
    """Playback and recording cassettes are never saved by vcrpy: replaylab writes cassettes
    itself (scrubbed, refusing to overwrite)."""

    @staticmethod
    def load_cassette(cassette_path: str, serializer: Any):
        from vcr.persisters.filesystem import CassetteNotFoundError

        raise CassetteNotFoundError()

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: dict, serializer: Any) -> None:
        return None


class IndexedCassette(Cassette):
    """A vcrpy playback cassette (record mode none, no playback repeats) with O(1) lookups."""

    def __init__(self, path: str | Path, interactions: Interactions, index: RequestIndex | None = None):
        """`index`: `request_index(interactions)` when the caller has it already (read only here).
        `RecordedInteractions` are shared as they are (read-only; record mode none never appends),
        any other sequence is copied."""
        super().__init__(path=str(path), persister=_NoPersister, record_mode=RecordMode.NONE,
                         match_on=MATCH_ON, allow_playback_repeats=False)
        shared = isinstance(interactions, RecordedInteractions)
        self.data = interactions if shared else list(interactions)
        self._loaded_count = len(self.data)
        self.rewound = True  # "loaded from a file": vcrpy plays only from loaded cassettes
        self.index = index if index is not None else request_index(self.data)
        #: responses by interaction index, read without building a `Request`
        self.recorded_responses = interactions.responses if shared else [response for _, response in self.data]
        self.misses: list[Request] = []
        self.played: list[int] = []  # interaction indices in play order

    def _responses(self, request: Request):
        for index in self.index.get(request_key(request), ()):
            yield index, self.recorded_responses[index]

    def can_play_response_for(self, request: Request) -> bool:
        ok = bool(super().can_play_response_for(request))
        if not ok:
            self.misses.append(request)
        return ok

    def play_response(self, request: Request) -> dict:
        for index, response in self._responses(request):
            if self.play_counts[index] == 0:
                self.play_counts[index] += 1
                self.played.append(index)
                return response
        return super().play_response(request)  # raises vcrpy's UnhandledHTTPRequestError

    def mark_played(self, index: int) -> None:
        self.play_counts[index] += 1
        self.played.append(index)

    def play_key(self, key: RequestKey) -> dict | None:
        """`play_response` for a request known by its `request_key` alone (no vcrpy `Request`
        built): the first unplayed interaction with that key, marked played; None when there is
        none (the caller then reports the miss with a real request)."""
        index = self.play_key_index(key)
        return None if index is None else self.recorded_responses[index]

    def play_key_index(self, key: RequestKey) -> int | None:
        """`play_key`, giving the interaction's index (for `response_text`) instead of its response."""
        for index in self.index.get(key, ()):
            if self.play_counts[index] == 0:
                self.mark_played(index)
                return index
        return None

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


def open_playback(path: str | Path) -> IndexedCassette:
    return IndexedCassette(path, *_parsed(path))


def open_recording(label: str = "<recording>") -> Cassette:
    """A cassette that sends every request live and keeps what it saw (record mode all)."""
    return Cassette(path=label, persister=_NoPersister, record_mode=RecordMode.ALL, match_on=MATCH_ON)


def recorded_interactions(cassette: Cassette) -> list[dict[str, Any]]:
    """The interactions a recording cassette captured, in vcrpy's YAML dict shape."""
    return [{"request": compat.convert_to_unicode(request._to_dict()),
             "response": compat.convert_to_unicode(response)} for request, response in cassette.data]


@contextmanager
def patched(cassette: Cassette) -> Iterator[Cassette]:
    """Install vcrpy's patches for `cassette` (nested use is fine: inner patches win, outer ones
    come back on exit). Never saves: the caller decides what is written."""
    with ExitStack() as stack:
        for patcher in CassettePatcherBuilder(cassette).build():
            stack.enter_context(patcher)
        yield cassette


# ---------------------------------------------------------------- LLM cassettes (file-backed)

LLM_FILTER_HEADERS = ("authorization", "api-key", "x-api-key")
_LLM_CASSETTES: dict[tuple[str, str], Cassette] = {}


def llm_cassette(path: str | Path, record_mode: str = "none") -> Cassette:
    """The process-wide cassette object for an LLM cassette file.

    One object per (path, mode) per process so that a cassette created by this process stays
    recordable across calls (vcrpy's `once` = "record only if the file did not exist when it was
    first opened"). `allow_playback_repeats=True`: an LLM response is a function of the request,
    so the same request (e.g. the same window in the baseline and the compacted run) replays the
    same response whatever the order of runs or xdist workers. Secret headers are filtered and
    bodies scrubbed before anything is written.
    """
    import vcr

    from replaylab.scrub import default_scrubber

    path = Path(path)
    key = (str(path.resolve()), record_mode)
    if key in _LLM_CASSETTES:
        return _LLM_CASSETTES[key]
    scrubber = default_scrubber()

    def scrub_request(request: Request) -> Request:
        for name in list(request.headers):
            if name.lower() in scrubber.headers:
                del request.headers[name]
        body = request.body
        if isinstance(body, (bytes, str)) and body:
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            cleaned = scrubber.text(text)
            if cleaned != text:
                request.body = cleaned.encode("utf-8")
        return request

    def scrub_response(response: dict) -> dict:
        headers = response.get("headers") or {}
        for name in list(headers):
            if name.lower() in scrubber.headers:
                del headers[name]
        body = response.get("body", {}).get("string")
        if isinstance(body, bytes):
            try:
                response["body"]["string"] = scrubber.text(body.decode("utf-8")).encode("utf-8")
            except UnicodeDecodeError:
                pass
        return response

    config = vcr.VCR(record_mode=record_mode, filter_headers=list(LLM_FILTER_HEADERS),
                     decode_compressed_response=True).get_merged_config(
        path=str(path), before_record_request=scrub_request, before_record_response=scrub_response,
        allow_playback_repeats=True)
    config["match_on"] = MATCH_ON
    for name in ("path_transformer", "func_path_generator", "record_on_exception"):
        config.pop(name, None)
    if record_mode != "none":
        path.parent.mkdir(parents=True, exist_ok=True)
    cassette = Cassette.load(**config)
    _LLM_CASSETTES[key] = cassette
    return cassette


def forget_llm_cassettes() -> None:
    """Drop the process-wide LLM cassette objects (tests that re-open a file in another mode)."""
    _LLM_CASSETTES.clear()


def cassette_miss(exc: BaseException) -> BaseException | None:
    """The `CannotOverwriteExistingCassetteException` behind `exc`, walking `__cause__` and
    `__context__` (litellm wraps it: InternalServerError → OpenAIError → vcrpy's, deps.md §3)."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, CannotOverwriteExistingCassetteException):
            return current
        stack.extend([current.__cause__, current.__context__])
        original = getattr(current, "original_exception", None)
        if isinstance(original, BaseException):
            stack.append(original)
    return None


def describe_request(request: Any) -> dict[str, Any]:
    """method, uri and a body preview of a vcrpy request (for defect details)."""
    if request is None:
        return {}
    body = canonical_body(getattr(request, "body", None))
    return {"method": getattr(request, "method", None), "uri": getattr(request, "uri", None),
            "body": body if len(body) <= 2000 else body[:2000] + f"… ({len(body)} chars)"}

