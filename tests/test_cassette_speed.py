"""Opening a cassette for replay got cheaper (issue 8) and must mean exactly what it meant before.

The implementations that were replaced are kept here, verbatim, as references:

* `_read_json_flow` searched two regex alternations over the whole file and walked the parsed data
  recursively; now byte tests and an explicit stack (`_yaml_reads_differently`,
  `_loaded_json_safe`). Same data and the same JSON-vs-YAML-loader decision on every input.
* `_parsed` built a vcrpy `Request` per interaction on open; now `RecordedInteractions` computes
  the same `request_key`s from the recorded fields and builds each `Request` when it is first
  read. Same keys, index, requests, responses, errors, served responses and miss reports.

No timing is asserted anywhere (the figures are measured outside the tests).
"""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.request import Request
from vcr.serializers import compat

from replaylab import cassette
from replaylab.cassette import load_cassette, recorded_tool_interaction, write_cassette
from replaylab.diagnostics import InputError
from replaylab.replay.playback import RecordedInteractions, _request_body_key, request_index, request_key
from replaylab.replay.vcr_session import IndexedCassette, open_cassette

REPO = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------- the replaced implementations

_OLD_YAML_SPECIAL = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf|\xef\xbf[\xbe\xbf]")
_OLD_YAML_DIFFERENT = re.compile(rb"\t|\\/|\\u[dD][89a-fA-F]")
_OLD_MAX_KEY = 1000


def old_json_safe(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(k) is str and len(k) <= _OLD_MAX_KEY and old_json_safe(v) for k, v in value.items())
    if kind is list:
        return all(old_json_safe(v) for v in value)
    return False


def old_read_json_flow(raw: bytes) -> Any:
    if not raw.lstrip()[:1] == b"{":
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if _OLD_YAML_SPECIAL.search(raw) or _OLD_YAML_DIFFERENT.search(raw) or not old_json_safe(data):
        return None
    return data


def old_parse(items: list[dict[str, Any]]) -> tuple[list[tuple[Request, dict]], dict]:
    """The loop of the old `_parsed` and the old `request_index`."""
    pairs = []
    for item in items:
        request = Request._from_dict(item["request"])
        _request_body_key(request)
        pairs.append((request, compat.convert_to_bytes(item["response"])))
    index: dict = {}
    for i, (request, _) in enumerate(pairs):
        index.setdefault(request_key(request), []).append(i)
    return pairs, index


# ---------------------------------------------------------------- inputs

#: byte sequences the two decisions turn on, their near misses, and JSON's own syntax
FRAGMENTS = [
    b"\x7f", b"\x7e", b"\xc2\x80", b"\xc2\x85", b"\xc2\x9f", b"\xc2\xa0", b"\xc2", b"\xc3\xa9",
    b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xe2\x80\xa7", b"\xe2\x80\xaa", b"\xe2\x86\x92", b"\xe2\x80", b"\xe2",
    b"\xef\xbb\xbf", b"\xef\xbf\xbe", b"\xef\xbf\xbf", b"\xef\xbf\xbd", b"\xef\xbb", b"\xef\xbc\x81", b"\xef",
    b"\t", b"\\/", b"\\\\/", b"\\u", b"\\ud800", b"\\uD83D\\uDE00", b"\\udfff", b"\\uDa00", b"\\uDB", b"\\ud7ff",
    b"\\ue000", b"\\u2028", b"\\u007f", b"\\n", b"\\", b"/", b"u", b"d", b"8", b'"', b"{", b"}", b"[", b"]",
    b":", b",", b" ", b"\n", b"\r", b"1", b"1.5", b"1e5", b"-0", b"true", b"null", b"a", "日".encode(),
    b"\x80", b"\xff", b"\x00",
]
fragments = st.one_of(st.sampled_from(FRAGMENTS), st.integers(0x80, 0x9F).map(lambda c: b"\xc2" + bytes([c])),
                      st.binary(max_size=3))
random_bytes = st.lists(fragments, max_size=30).map(b"".join)

#: characters YAML 1.1 reads otherwise than JSON (raw in a string), their neighbours, and the rest
SPECIAL_TEXT = ["\x7f", "\x80", "\x85", "\x9f", "\xa0", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff",
                "\ufffd", "\ud800", "\udfff", "\t", "/", "\\", '"', "\n", "é", "→", "日", "😀", "a", "b"]
texts = st.text(alphabet=st.one_of(st.sampled_from(SPECIAL_TEXT), st.characters()), max_size=8)
keys = st.one_of(texts, st.sampled_from(["k", "é", "日"]).flatmap(
    lambda c: st.integers(995, 1005).map(lambda n: c * n)))  # _MAX_KEY counts characters, not bytes
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(keys, inner, max_size=4)), max_leaves=20)


def _serialise(value: Any, how: str) -> bytes:
    """JSON text of `value`: as orjson writes it, or the stdlib's ways (escapes, tabs, `\\/`)."""
    if how == "orjson":
        try:
            return orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            how = "ascii"
    if how == "ascii":
        return json.dumps(value).encode()
    if how == "tab":
        return json.dumps(value, indent="\t").encode()
    if how == "slash":
        return json.dumps(value).replace("/", "\\/").encode()
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def json_documents(draw) -> bytes:
    """Cassette-shaped JSON (sometimes mutated by one fragment, sometimes with leading whitespace)."""
    value = {"interactions": draw(st.lists(json_values, max_size=3)), "version": 1}
    if draw(st.booleans()):
        value["extra"] = draw(json_values)
    raw = _serialise(value, draw(st.sampled_from(["orjson", "ascii", "tab", "slash", "utf8"])))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(raw)))
        raw = raw[:at] + draw(fragments) + raw[at:]
    return draw(st.sampled_from([b"", b" ", b"\n\t", b"\xef\xbb\xbf"])) + raw


# ---------------------------------------------------------------- the JSON-flow reader


@settings(max_examples=600, deadline=None)
@given(raw=st.one_of(random_bytes, json_documents()))
@example(raw=b'{"interactions": [], "version": 1, "a": "\\u2028\xe2\x80\xa9"}')
@example(raw=b'{"interactions": [], "version": 1, "a": "\xc2\x85"}')
@example(raw=b'{"interactions": [], "version": 1, "a": "\\ud83d\\ude00"}')
@example(raw=b'{"interactions": [], "version": 1, "a": "\\uDBFF\\uDFFF"}')
@example(raw=b'{"interactions": [], "version": 1, "a": "\\uD7FF\\uE000 \\/"}')
@example(raw=b'{"interactions": [],\t"version": 1}')
@example(raw=b'{"interactions": [], "version": 1, "a": "\x7f \xef\xbf\xbe"}')
@example(raw=b'{"interactions": [], "version": 1, "a": 1.0}')
@example(raw=b'{"interactions": [], "version": 1, "' + "é".encode() * 1001 + b'": 1}')
@example(raw=b'{"interactions": [], "version": 1, "' + "é".encode() * 1000 + b'": 1}')
def test_the_reader_decides_and_reads_as_the_regex_reader_did(raw: bytes) -> None:
    old_decision = bool(_OLD_YAML_SPECIAL.search(raw) or _OLD_YAML_DIFFERENT.search(raw))
    assert cassette._yaml_reads_differently(raw) is old_decision
    assert cassette._read_json_flow(raw) == old_read_json_flow(raw)


@settings(max_examples=300, deadline=None)
@given(value=json_values)
def test_the_walk_over_parsed_json_refuses_what_the_recursive_walk_refused(value: Any) -> None:
    try:
        data = orjson.loads(_serialise(value, "ascii"))
    except orjson.JSONDecodeError:  # NaN, integers past 64 bits: never data orjson returns
        return
    assert cassette._loaded_json_safe(data) is old_json_safe(data)


def _repo_and_bench_cassettes(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from bench.cases.pipeline import make_sessions

    bench = tmp_path_factory.mktemp("bench")
    make_sessions(bench, 4)
    paths = [p for top in ("tests", "suites", "recordings") for p in sorted((REPO / top).glob("**/*.cassette.yaml"))]
    return paths + sorted((bench / "recordings").glob("*.cassette.yaml"))


@pytest.fixture(scope="module")
def cassette_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    paths = _repo_and_bench_cassettes(tmp_path_factory)
    assert len([p for p in paths if "recordings" in p.parts]) >= 4 and any("tests" in p.parts for p in paths)
    return paths


def test_every_cassette_of_the_repo_and_the_bench_reads_as_before(cassette_files: list[Path]) -> None:
    json_flow = 0
    for path in cassette_files:
        raw = path.read_bytes()
        data = cassette._read_json_flow(raw)
        assert data == old_read_json_flow(raw), path
        json_flow += data is not None
    assert json_flow >= 4  # the bench's and the bundled recordings' cassettes take the orjson path


def test_json_nested_deeper_than_the_recursive_walk_could_go_is_read_as_json(tmp_path: Path) -> None:
    """The one intended difference: the recursive walk raised RecursionError (a crash) on data
    nested a few hundred levels deep, which orjson reads (up to 1,024 levels)."""
    deep = b"[" * 600 + b"]" * 600
    raw = b'{"interactions": [], "version": 1, "deep": ' + deep + b"}"
    with pytest.raises(RecursionError):
        old_read_json_flow(raw)
    assert cassette._read_json_flow(raw) == orjson.loads(raw) == yaml.load(raw, Loader=yaml.CSafeLoader)
    path = tmp_path / "deep.cassette.yaml"
    path.write_bytes(raw)
    assert load_cassette(path) == []


# ---------------------------------------------------------------- parsed interactions


def _request_state(request: Request) -> dict[str, Any]:
    """Everything a vcrpy `Request` holds, header names with their case."""
    state = dict(vars(request))
    state["_headers"] = dict(state["_headers"]._store)
    return state


def _outcome(build, items):
    try:
        return "ok", build(copy.deepcopy(items))
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return "error", (type(exc), str(exc))


def _assert_same_interactions(new: RecordedInteractions, old_pairs: list, old_index: dict, order: list[int]) -> None:
    assert len(new) == len(old_pairs)
    for i in order:  # built lazily, in any order
        request, response = new[i]
        assert _request_state(request) == _request_state(old_pairs[i][0])
        assert response == old_pairs[i][1] and response is new.responses[i]
        assert new[i] is new[i]  # built once
        assert request_key(request) == new.keys[i]
    assert new.keys == [request_key(request) for request, _ in old_pairs]
    assert request_index(new) == old_index == request_index(list(new))


URIS = ["http://127.0.0.1:9/tools/lookup_order", "http://127.0.0.1:9/tools/a?b=2&a=1&a=0",
        "http://h/p;params?q=1#frag", "http://h/%7Epath?x=%20y&flag", "https://example.com", "", "/relative?x=",
        "http://[::1", "http://h:bad/", "HTTP://H/Upper?Z=1"]
header_names = st.sampled_from(["Content-Type", "content-type", "X-Api", "x-api"])
header_maps = st.dictionaries(header_names, st.one_of(st.lists(st.text(max_size=3), min_size=1, max_size=2),
                                                      st.text(max_size=3)), max_size=3)
#: what vcrpy cannot take: names that are not strings, empty value lists
odd_header_maps = st.dictionaries(st.one_of(header_names, st.integers(), st.none()),
                                  st.one_of(st.lists(st.text(max_size=3), max_size=2), st.integers()), max_size=3)
bodies = st.one_of(st.none(), texts, st.binary(max_size=8), json_values.map(lambda v: _serialise(v, "ascii").decode()))
methods, uris = st.sampled_from(["GET", "post", "Put", "DELETE"]), st.sampled_from(URIS)
#: mostly what vcrpy and `write_cassette` write; one in ten with missing or extra fields or odd headers
request_fields = st.integers(0, 9).flatmap(lambda n: st.fixed_dictionaries(
    {"method": methods, "uri": uris}, optional={"body": bodies, "headers": odd_header_maps, "extra": st.just(1)})
    if n == 0 else st.fixed_dictionaries({"method": methods, "uri": uris, "body": bodies, "headers": header_maps}))
responses = st.fixed_dictionaries({
    "status": st.fixed_dictionaries({"code": st.sampled_from([200, 404]), "message": st.just("OK")}),
    "headers": header_maps, "body": st.fixed_dictionaries({"string": st.one_of(texts, st.binary(max_size=8))})})
cassette_items = st.lists(st.fixed_dictionaries({"request": request_fields, "response": responses}), max_size=5).map(
    lambda items: [item for item in items if cassette._interaction_problem(item) is None])  # what load_cassette lets through
QUERY_ITEMS = [{"request": {"method": "get", "uri": uri, "body": '{"b": 1, "a": [2]}', "headers": {"X-Api": ["1"]}},
                "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "ok é"}}}
               for uri in (URIS[1], URIS[3], URIS[1])]


def _with_request(**fields: Any) -> list[dict]:
    """`QUERY_ITEMS` with one more interaction whose request has these fields."""
    request = {"method": "GET", "uri": URIS[0], "body": None, "headers": {}, **fields}
    return QUERY_ITEMS + [{"request": {k: v for k, v in request.items() if v is not ...}, "response": QUERY_ITEMS[0]["response"]}]


@settings(max_examples=400, deadline=None)
@given(items=cassette_items, shuffle=st.randoms(use_true_random=False))
@example(items=QUERY_ITEMS, shuffle=random.Random(1))
@example(items=_with_request(headers={"X-Api": []}), shuffle=random.Random(1))
@example(items=_with_request(headers={1: ["a"]}), shuffle=random.Random(1))
@example(items=_with_request(headers={"X-Api": ["a"], "x-api": "b"}), shuffle=random.Random(1))
@example(items=_with_request(body=...), shuffle=random.Random(1))
@example(items=_with_request(extra=1), shuffle=random.Random(1))
@example(items=_with_request(uri="http://[::1/tools/x"), shuffle=random.Random(1))
@example(items=_with_request(body="lone \ud800 surrogate"), shuffle=random.Random(1))
def test_recorded_interactions_are_what_the_eager_parse_built(items: list[dict], shuffle: random.Random) -> None:
    """Same keys, index, requests (every attribute), responses, and the same error at open for
    a request vcrpy refuses (missing or extra fields, unreadable headers, a bad URI or body)."""
    old = _outcome(old_parse, items)
    new = _outcome(RecordedInteractions, items)
    assert old[0] == new[0], (old, new)
    if old[0] == "error":
        assert old[1] == new[1]
        return
    order = list(range(len(items)))
    shuffle.shuffle(order)
    _assert_same_interactions(new[1], *old[1], order)


def test_the_cassettes_of_the_repo_and_the_bench_parse_as_before(cassette_files: list[Path]) -> None:
    checked = 0
    for path in cassette_files:
        try:
            items = load_cassette(path)
        except InputError:
            continue
        old_pairs, old_index = old_parse(copy.deepcopy(items))
        new = RecordedInteractions(items)
        _assert_same_interactions(new, old_pairs, old_index, list(reversed(range(len(new)))))
        checked += 1
    assert checked >= 8


def test_opening_builds_no_request_until_one_is_read(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "s.cassette.yaml", [
        recorded_tool_interaction("lookup_order", {"order_id": f"O-{i}"}, f"order {i}") for i in range(3)])
    playback = open_cassette(path)
    interactions = playback.data
    assert isinstance(interactions, RecordedInteractions)
    served = playback.play_key(interactions.keys[2])
    assert served["body"]["string"] == b"order 2"
    assert interactions._pairs == [None, None, None]  # served by key: no Request needed
    request, response = interactions[1]
    assert request.path == "/tools/lookup_order" and request.body == b'{"order_id":"O-1"}'
    assert interactions._pairs[0] is None and interactions._pairs[2] is None
    assert open_cassette(path).data[1][0] is request  # shared by the file's playback cassettes
    assert interactions[2][1] is served and interactions[2][0].body == b'{"order_id":"O-2"}'


def _cassettes_old_and_new(path: Path) -> tuple[IndexedCassette, IndexedCassette]:
    old_pairs, old_index = old_parse(load_cassette(path))
    return IndexedCassette(path, old_pairs, old_index), open_cassette(path)


def test_playback_serves_and_reports_misses_as_before(cassette_files: list[Path]) -> None:
    """Every recorded request served in recorded order, then refused; vcrpy's miss report (which
    walks every recorded request for the closest match) word for word."""
    checked = 0
    for path in cassette_files:
        try:
            old, new = _cassettes_old_and_new(path)
        except InputError:
            continue
        for request, _ in list(old.data) * 2:  # the second round finds everything played
            playable = old.can_play_response_for(request)
            assert new.can_play_response_for(request) is playable
            if playable:
                assert new.play_response(request) == old.play_response(request)
        assert new.play_counts == old.play_counts and new.played == old.played
        assert [str(r) for r in new.misses] == [str(r) for r in old.misses]
        stranger = Request("POST", "http://127.0.0.1:9/tools/never_recorded", b'{"x":1}', {})
        assert new.can_play_response_for(stranger) is old.can_play_response_for(stranger) is False
        assert (str(CannotOverwriteExistingCassetteException(cassette=new, failed_request=stranger))
                == str(CannotOverwriteExistingCassetteException(cassette=old, failed_request=stranger)))
        assert [r.uri for r in new.requests] == [r.uri for r in old.requests]
        checked += 1
    assert checked >= 8


def test_a_request_vcrpy_refuses_still_fails_on_open(tmp_path: Path) -> None:
    """A cassette whose request lacks vcrpy's `body` field passes `load_cassette` but cannot
    become a vcrpy `Request`: the error comes at open, as before, not in the middle of a replay."""
    path = tmp_path / "no-body.cassette.yaml"
    item = {"request": {"method": "GET", "uri": "http://127.0.0.1:9/x", "headers": {}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "ok"}}}
    path.write_text(yaml.safe_dump({"interactions": [item], "version": 1}), encoding="utf-8")
    with pytest.raises(TypeError) as new_error:
        open_cassette(path)
    with pytest.raises(TypeError) as old_error:
        old_parse(load_cassette(path))
    assert str(new_error.value) == str(old_error.value)
