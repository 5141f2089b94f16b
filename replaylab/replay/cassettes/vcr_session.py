"""vcrpy glue: the matchers, a vcrpy cassette over a replay's `Playback`, patching without reloading.

Imported lazily (only when a pack tool's real HTTP is replayed, a recording runs or an LLM
cassette is used): `import vcr` is slow because it imports every client it patches (deps.md
§3). A tool the session recorded is answered without it (`replaylab.replay.cassettes.playback`).

Why not plain `vcr.use_cassette(path)` per call: it re-reads and re-parses the YAML on every
enter and starts with fresh play counts, so (a) a session's cassette would be parsed once per
tool call and (b) `allow_playback_repeats=False` could not span a run. Here a cassette file is
parsed once per process (`playback._parsed`, cached by file identity, size and mtime), each
replay gets a fresh `Playback` over the shared parsed interactions (its own play counts), and
`patched()` installs vcrpy's patches around an `IndexedCassette` sharing that play state — the
same patchers vcrpy's own context manager installs (`CassettePatcherBuilder`), so every client
vcrpy supports is served.

Matching is method + path + query + canonical JSON body (`MATCH_ON`; `request_keys.request_key`
is the same comparison as one hashable value). `IndexedCassette` answers vcrpy's lookups from the
playback's dict keyed by that value instead of running the matchers over every recorded
interaction, and remembers each request it could not serve (`misses`) even when the tool
implementation swallows vcrpy's exception.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import orjson
from vcr.cassette import Cassette
from vcr.patch import CassettePatcherBuilder
from vcr.record_mode import RecordMode
from vcr.request import Request
from vcr.serializers import compat

from replaylab import caches
from replaylab.json_dump import compact_json
from replaylab.replay.cassettes.playback import Interactions, Playback, RequestIndex, open_playback
from replaylab.replay.cassettes.request_keys import request_body_key, request_key, scrubbed_query
from replaylab.scrub import default_scrubber


def canonical_body_matcher(r1: Request, r2: Request) -> None:
    """vcrpy matcher: raise AssertionError when the canonical bodies differ."""
    a, b = request_body_key(r1), request_body_key(r2)
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
    if scrubbed_query(r1.uri) != scrubbed_query(r2.uri):  # compared as the recorder wrote them
        raise AssertionError(f"query {scrubbed_query(r1.uri)} != {scrubbed_query(r2.uri)}")


query_matcher.__name__ = "query"

MATCH_ON = (method_matcher, path_matcher, query_matcher, canonical_body_matcher)


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


class IndexedCassette(Playback, Cassette):
    """A vcrpy playback cassette (record mode none, no playback repeats) with O(1) lookups: a
    `Playback` vcrpy's patches can serve from. Built `over` a replay's playback, it shares that
    playback's interactions and play state (counts, order, misses): a call served here and a
    recorded-tool call served by the playback count against the same recorded interactions."""

    def __init__(self, path: str | Path, interactions: Interactions, index: RequestIndex | None = None):
        """`index`: `request_index(interactions)` when the caller has it already (read only here)."""
        Cassette.__init__(
            self,
            path=str(path),
            persister=_NoPersister,
            record_mode=RecordMode.NONE,
            match_on=MATCH_ON,
            allow_playback_repeats=False,
        )
        Playback.__init__(self, path, interactions, index)
        self._loaded_count = len(self.data)
        self.rewound = True  # "loaded from a file": vcrpy plays only from loaded cassettes

    @classmethod
    def over(cls, playback: Playback) -> IndexedCassette:
        """A vcrpy cassette sharing `playback`'s interactions, index and play state."""
        cassette = cls(playback.file, playback.data, playback.index)
        cassette.recorded_responses = playback.recorded_responses
        cassette.play_counts, cassette.played, cassette.misses = playback.play_counts, playback.played, playback.misses
        return cassette

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
                self.mark_played(index)
                return response
        return super().play_response(request)  # raises vcrpy's UnhandledHTTPRequestError


def open_cassette(path: str | Path) -> IndexedCassette:
    """A vcrpy playback cassette of the file with its own play state (tests, tools outside a replay)."""
    return IndexedCassette.over(open_playback(path))


def open_recording(label: str = "<recording>") -> Cassette:
    """A cassette that sends every request live and keeps what it saw (record mode all), each
    response body decompressed as it is kept (gzip, deflate; its `Content-Encoding` dropped): a
    compressed body is bytes no scrubber can read and no reader of a cassette can check."""
    from vcr.filters import decode_response

    return Cassette(
        path=label,
        persister=_NoPersister,
        record_mode=RecordMode.ALL,
        match_on=MATCH_ON,
        before_record_response=decode_response,
    )


def recorded_interactions(cassette: Cassette) -> list[dict[str, Any]]:
    """The interactions a recording cassette captured, in vcrpy's YAML dict shape."""
    return [
        {"request": compat.convert_to_unicode(request._to_dict()), "response": compat.convert_to_unicode(response)}
        for request, response in cassette.data
    ]


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
_LLM_CASSETTES: caches.ProcessCache[tuple[str, str, tuple[str, ...]], Cassette] = caches.ProcessCache(
    "replay.llm_cassettes"
)


def llm_cassette(path: str | Path, record_mode: str = "none", *, hidden_headers: tuple[str, ...] = ()) -> Cassette:
    """The process-wide cassette object for an LLM cassette file.

    One object per (path, mode) per process so that a cassette created by this process stays
    recordable across calls (vcrpy's `once` = "record only if the file did not exist when it was
    first opened"). `allow_playback_repeats=True`: an LLM response is a function of the request,
    so the same request (e.g. the same window in the baseline and the compacted run) replays the
    same response whatever the order of runs or xdist workers. Secret headers are filtered and
    bodies scrubbed before anything is written. `hidden_headers`: headers a suite configured
    (their values may come from the environment): never written, whatever their names.
    """
    import vcr

    path = Path(path)
    hidden = tuple(sorted({name.lower() for name in hidden_headers}))
    key = (str(path.resolve()), record_mode, hidden)
    if key in _LLM_CASSETTES:
        return _LLM_CASSETTES[key]
    scrubber = default_scrubber()

    def scrub_request(request: Request) -> Request:
        for name in list(request.headers):
            if scrubber.is_secret_key(name) or name.lower() in hidden:
                del request.headers[name]
        request.uri = scrubber.text(request.uri)  # `?key=` of Gemini-style APIs
        body = request.body
        if isinstance(body, (bytes, str)) and body:
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
            cleaned = _scrubbed_body(text, scrubber)
            if cleaned != text:
                request.body = cleaned.encode("utf-8")
        return request

    def scrub_response(response: dict) -> dict:
        headers = response.get("headers") or {}
        for name in list(headers):
            if scrubber.is_secret_key(name):
                del headers[name]
        body = response.get("body", {}).get("string")
        if isinstance(body, bytes):
            try:
                response["body"]["string"] = scrubber.text(body.decode("utf-8")).encode("utf-8")
            except UnicodeDecodeError:
                pass
        return response

    config = vcr.VCR(
        record_mode=record_mode, filter_headers=list(LLM_FILTER_HEADERS), decode_compressed_response=True
    ).get_merged_config(
        path=str(path),
        before_record_request=scrub_request,
        before_record_response=scrub_response,
        allow_playback_repeats=True,
    )
    config["match_on"] = MATCH_ON
    config["persister"] = _PrivatePersister
    for name in ("path_transformer", "func_path_generator", "record_on_exception"):
        config.pop(name, None)
    if record_mode != "none":
        path.parent.mkdir(parents=True, exist_ok=True)
    cassette = Cassette.load(**config)
    _LLM_CASSETTES[key] = cassette
    return cassette


def _scrubbed_body(text: str, scrubber: Any) -> str:
    """A JSON body scrubbed as data (a message's text is a JSON string there, its quotes escaped:
    the text rules read it decoded), any other body as text."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return scrubber.text(text)
    scrubbed = scrubber.data(data)
    # the comparison goes no deeper than `scrub_data` walks: past it, the scrubbed side is text
    return text if scrubbed == data else compact_json(scrubbed)


class _PrivatePersister:
    """vcrpy's file persister, except that a cassette is written private to the user (0600) through
    a fresh temporary file in its folder, renamed over the old one: never through a symlink at
    its name, never half-written."""

    @staticmethod
    def load_cassette(cassette_path: str, serializer: Any):
        from vcr.persisters.filesystem import FilesystemPersister

        return FilesystemPersister.load_cassette(cassette_path, serializer)

    @staticmethod
    def save_cassette(cassette_path: str, cassette_dict: dict, serializer: Any) -> None:
        import tempfile

        from vcr.serialize import serialize

        data = serialize(cassette_dict, serializer)
        path = Path(cassette_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def forget_llm_cassettes() -> None:
    """Drop the process-wide LLM cassette objects (tests that re-open a file in another mode)."""
    _LLM_CASSETTES.clear()


def cassette_miss(exc: BaseException) -> BaseException | None:
    """The `CannotOverwriteExistingCassetteException` behind `exc`, walking `__cause__` and
    `__context__` (litellm wraps it: InternalServerError → OpenAIError → vcrpy's, deps.md §3)."""
    from vcr.errors import CannotOverwriteExistingCassetteException

    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
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
