"""What a replayed request is matched on: method + path + sorted query + canonical JSON body.

The body is compared as canonical JSON, key order and whitespace insensitive: a harmless
re-serialisation must not turn into a cassette miss. `request_key` is the whole
comparison as one hashable value, what `vcr_session.MATCH_ON`'s matchers compare one by one.

Both are compared scrubbed (`replaylab.scrub`): a cassette holds its requests scrubbed, so a
live request that carries a token of the tool's own (a query `access_token`, a key in its
body) matches its recording only once that token is redacted the same way. Scrubbing a
recorded request again changes nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlparse

import orjson

from replaylab import caches
from replaylab.cassette import canonical_json
from replaylab.scrub import scrub_data, scrub_text

RequestKey = tuple[str, str, tuple[tuple[str, str], ...], str]


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
        return canonical_json(scrub_data(orjson.loads(raw)))
    except orjson.JSONDecodeError:
        return scrub_text(raw.decode("utf-8", "replace"))


@caches.lru("replay.text_body_key", maxsize=4096)
def text_body_key(text: str) -> str:
    """`canonical_body` of a request body given as text (`text` UTF-8 encoded): the body the
    recorded-tool client sends, or a text body of a cassette. A pure function of the text,
    cached: a pipeline item asks for the same calls' keys several times (both executors consume
    the calls before the cut, both runs make the later ones), and opening the cassette computed
    each recorded body's key before (`RecordedInteractions`): the body is parsed and serialised once."""
    return canonical_body(text.encode("utf-8"))


def request_body_key(request: Any) -> str:
    """`canonical_body` of a request's body, kept on the request once computed."""
    cached = getattr(request, "_replaylab_body_key", None)
    if cached is None:
        cached = canonical_body(request.body)
        try:
            request._replaylab_body_key = cached
        except AttributeError:
            pass
    return cached


def request_key(request: Any) -> RequestKey:
    """What `MATCH_ON` compares, as one hashable value: the index lookups serve by it alone, so
    it holds every matcher's part — the query too (a lookup `?email=` with a value lost to
    compaction must not be served the recorded answer)."""
    return request.method.upper(), request.path or "/", scrubbed_query(request.uri), request_body_key(request)


@caches.lru("replay.scrubbed_query", maxsize=1024)
def scrubbed_query(uri: str) -> tuple[tuple[str, str], ...]:
    """vcrpy's `request.query` (`sorted(parse_qsl(urlparse(uri).query))`) of the scrubbed URI: what
    the recorder wrote for this request. Cached: a run's tools repeat a few URIs."""
    return tuple(sorted(parse_qsl(urlparse(scrub_text(uri)).query)))
