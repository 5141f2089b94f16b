"""Request bodies that only ask: a GraphQL query, JSON-RPC methods that read, a search.

An HTTP request that sends a body changes something unless the body says otherwise, and three
kinds of body say so by their own protocol's rules:

* a GraphQL document whose operations are all queries (the GraphQL spec's read-only fetch); a
  `mutation` or `subscription` anywhere in it, outside strings and comments, keeps the request a
  change;
* a JSON-RPC request, or a batch, whose every method reads: named by an English read verb, after
  a namespace or not (`eth_getBalance`, `getAccountInfo`, `tools/list`, Bitcoin's glued
  `getblockchaininfo`), with no word that changes something (`eth_sendRawTransaction`; Bitcoin's
  `getnewaddress` adds a key to the wallet), or one the chains' specs define as a read without a
  read verb (`upstream.json_rpc`: `eth_call`, `eth_blockNumber` …);
* a body sent to Elasticsearch's / OpenSearch's search APIs (`_search`, `_count`, `_msearch` …):
  every path segment of the URL that starts with `_` names one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from replaylab.safety.shell import word
from replaylab.safety.verb_words import CHANGE_VERBS, CHANGE_VERBS_IN_VERB_POSITION, READ_VERBS
from replaylab.upstream import json_rpc

#: strings (block and plain) and comments of a GraphQL document: what a keyword inside means nothing
#: (GraphQL ends a comment, and forbids a plain string to hold, any line terminator: `\n`, `\r`)
_GRAPHQL_NOISE = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|"(?:[^"\\\n\r]|\\.)*"|#[^\n\r]*')
_GRAPHQL_CHANGE = re.compile(r"\b(?:mutation|subscription)\b")
#: how a document of queries starts: a selection set (the shorthand query), `query` or `fragment`
_GRAPHQL_START = re.compile(r"\s*(?:\{|query\b|fragment\b)")
_GRAPHQL_KEYS = frozenset({"query", "variables", "operationName", "extensions"})

_METHOD_WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_READ = READ_VERBS["English"]
#: how a glued lower-case method that reads starts (Bitcoin Core's `getblockchaininfo`, `listunspent`)
_GLUED_READ_PREFIXES = ("get", "list")
#: what a glued method that reads may not hold: a new thing or a change (`getnewaddress`,
#: `getrawchangeaddress` add keys to the wallet); verbs of three letters are too often part of a noun
_GLUED_CHANGES = ("new", "change", *sorted(verb for verb in CHANGE_VERBS if len(verb) > 3 and verb.isascii()))

#: the search APIs' path segments (Elasticsearch / OpenSearch), every one a read of the index
_SEARCH_SEGMENTS = frozenset(
    {"_search", "_msearch", "_count", "_mget", "_explain", "_validate", "_field_caps", "_termvectors"}
    | {"_mtermvectors", "_analyze", "_knn_search", "_search_shards", "_sql", "_eql"}
)
_URL_PATH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?[^/?#]*(?P<path>/[^?#]*)?")


def graphql_only_queries(document: str) -> bool:
    """Whether a GraphQL document holds queries only (and fragments)."""
    bare = _GRAPHQL_NOISE.sub(" ", document)
    return _GRAPHQL_START.match(bare) is not None and _GRAPHQL_CHANGE.search(bare) is None


def rpc_method_reads(method: str) -> bool:
    """Whether a JSON-RPC method only reads, by its spec or its name's verb."""
    if method in json_rpc.READ_METHODS:
        return True
    words = [w.lower() for w in _METHOD_WORDS.split(method) if w]
    if len(words) == 1:
        glued = words[0]
        return glued.startswith(_GLUED_READ_PREFIXES) and not any(part in glued for part in _GLUED_CHANGES)
    if not words or "new" in words:
        return False
    at = 0 if words[0] in _READ else 1  # a namespace names its service first (`eth_`, `tools/`)
    if at >= len(words) or words[at] not in _READ:
        return False
    return not any(w in CHANGE_VERBS or w in CHANGE_VERBS_IN_VERB_POSITION for w in words[at + 1 :])


def body_asks(body: str, urls: Sequence[str]) -> str | None:
    """What a request body only asks for (for the reason), or None when it may change something
    or cannot be read."""
    searches = [_search_segments(url) for url in urls]
    if urls and all(searches):  # its bodies are queries, and `_msearch` sends lines of JSON
        return f"a search (`{word(searches[0][-1])}`)"
    try:
        parsed: Any = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than a parser goes
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("query"), str) and set(parsed) <= _GRAPHQL_KEYS:
        return "a GraphQL query" if graphql_only_queries(parsed["query"]) else None
    calls = parsed if isinstance(parsed, list) else [parsed]
    methods = [call.get("method") if isinstance(call, dict) and "jsonrpc" in call else None for call in calls]
    if methods and all(isinstance(m, str) and rpc_method_reads(m) for m in methods):
        return f"JSON-RPC `{word(', '.join(m for m in methods if m))}`"
    return None


def _search_segments(url: str) -> list[str]:
    """The URL's path segments that start with `_`, when every one names a search API; else none."""
    match = _URL_PATH.match(url)
    path = (match.group("path") if match else None) or ""
    segments = path.split("/")
    # curl resolves `..` (`/orders/_search/..` is a POST to `/orders/`); a server decodes `%5F`
    if any(segment in (".", "..") or "%" in segment for segment in segments):
        return []
    marked = [segment for segment in segments if segment.startswith("_")]
    return marked if marked and all(segment in _SEARCH_SEGMENTS for segment in marked) else []
