"""Replay without vcrpy: a session's recorded tools are answered from a `Playback`, and vcrpy
(slow to import, since it imports every client it patches) is imported only for a pack tool's
real HTTP, a recording, an LLM cassette or a recorded `Request` read from the file.

What is checked here:

* a whole pipeline run of generated bench sessions (recorded tools only: served calls, blocked
  writes, repeats of earlier writes) in a fresh interpreter never imports `vcr`, and
  gives the results it gives with vcrpy imported first;
* an opted-in live read tool (served through vcrpy's patches in the tool process) and a recorded
  tool of the same executor count against one play state: what one plays, the other cannot play
  again, and `fresh` restores both;
* `ToolRequest`, the record of a recorded-tool miss, parses its URI as vcrpy's `Request` does, and
  a recorded tool's key is its request's key;
* a cassette's parse is shared by its executors (not their play counts), parsed again when the
  file changes, and kept for the latest few files only;
* `RecordedInteractions` holds what vcrpy's own deserialization reads, and serves the text vcrpy's
  bytes decode to.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.cassette import canonical_json, interaction, recorded_tool_interaction, write_cassette
from replaylab.defects import Code
from replaylab.replay import ToolExecutor
from replaylab.replay.cassettes.playback import (
    LazyResponses,
    Playback,
    RecordedInteractions,
    open_playback,
    request_index,
)
from replaylab.replay.cassettes.request_keys import request_key
from replaylab.replay.tools.recorded_tool import ToolRequest, recorded_tool_key, recorded_tool_request
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock
from repo_paths import REPO_ROOT

REPO = REPO_ROOT

_RUN_BENCH_SESSIONS = r"""
import json, os, sys
from pathlib import Path
sys.path[:0] = [{repo!r}, {tests!r}]
if {vcr_first!r}:
    import vcr  # noqa: F401 - the control: the same run with vcrpy already imported
from bench.cases.pipeline import make_sessions
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite

suite_path = make_sessions(Path({folder!r}), {count})
os.chdir(suite_path.parent.parent)
suite = load_suite(suite_path)
results = [run_item(scenario, recording, RunOptions()).model_dump(mode="json", exclude={{"duration_s"}})
           for scenario in suite.scenarios for recording in suite.recordings]
for result in results:
    (result.get("compaction") or {{}}).pop("diag_id", None)
print(json.dumps({{"vcr": "vcr" in sys.modules, "results": results}}))
"""


def _bench_run(folder: Path, *, vcr_first: bool, count: int = 44) -> dict:
    """Each item's result (but its duration and diagnostics id) of `count` generated bench
    sessions, run in a fresh interpreter, and whether that interpreter imported vcrpy."""
    code = _RUN_BENCH_SESSIONS.format(
        repo=str(REPO), tests=str(REPO / "tests"), vcr_first=vcr_first, folder=str(folder), count=count
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1].replace(str(folder), "<folder>"))


def test_a_pipeline_run_of_recorded_tool_sessions_never_imports_vcrpy(tmp_path: Path) -> None:
    plain = _bench_run(tmp_path / "plain", vcr_first=False)
    assert plain["vcr"] is False
    sources = {
        trace["source"]
        for item in plain["results"]
        for run in ("baseline", "compacted")
        for turn in (item[run] or {}).get("turns", [])
        for trace in turn["tool_calls"]
    }
    codes = {defect["code"] for item in plain["results"] for defect in item["defects"]}
    # served calls and misses (a miss of a read or of a write takes the same route: `_serve_recorded`)
    assert {"cassette", "blocked"} <= sources, sources
    assert Code.SIDE_EFFECT_ESCAPED.value in codes or Code.DUPLICATE_SIDE_EFFECT.value in codes
    control = _bench_run(tmp_path / "control", vcr_first=True)
    assert control["vcr"] is True
    assert len(plain["results"]) == 44 and plain["results"] == control["results"]


LOOKUP_PACK = """
import urllib.request

from replaylab import ToolOutput, ToolSpec


def lookup(args, ctx):
    with urllib.request.urlopen(f"{ctx.base_url}/orders/{args['id']}", timeout=5) as response:
        return ToolOutput(response.read().decode(), False)


TOOLS = [ToolSpec("lookup", "", {}, "read", lookup)]
"""


def test_a_live_read_tool_and_a_recorded_tool_share_one_play_state(tmp_path: Path, monkeypatch) -> None:
    """An opted-in live read tool (its real HTTP served by vcrpy in the isolated tool process)
    and a recorded tool of the same executor play against one play state: what one plays, the
    other cannot play again, calls before the cut are marked from the recording, and `fresh`
    restores both."""
    from replaylab.replay.cassettes.interaction_tags import tagged
    from replaylab.replay.tools.pack import load_tool_pack
    from replaylab.replay.tools.recorded_results import RecordedResult, RecordedResults

    name = f"rl_lookup_pack_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(LOOKUP_PACK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    pack = load_tool_pack(name)
    cassette = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            tagged(interaction("GET", "http://127.0.0.1:9/orders/O-1", None, 200, "first answer"), "c0", "lookup"),
            recorded_tool_interaction("note", {"text": "hi"}, "noted"),
            interaction("GET", "http://127.0.0.1:9/orders/O-1", None, 200, "second answer"),
        ],
    )
    recorded = RecordedResults([RecordedResult("c0", "lookup", {"id": "O-1"}, "first answer", False)])
    classifier = ToolClassifier(declared={"lookup": "read", "note": "write"})
    lookup = ToolCallBlock(id="c1", name="lookup", arguments={"id": "O-1"})
    note = ToolCallBlock(id="c2", name="note", arguments={"text": "hi"})
    executor = ToolExecutor(
        cassette,
        classifier,
        tool_pack=pack,
        recorded=recorded,
        executed_before=[("lookup", {"id": "O-1"})],
        live_read_tools=True,
    )
    try:
        assert isinstance(executor.cassette, Playback) and executor.cassette.played == [0]  # marked at construction
        with executor:
            answers = [executor.execute(call, turn=0, step=i)[1] for i, call in enumerate([lookup, note, lookup, note])]
        assert [(t.result, t.source) for t in answers] == [
            ("second answer", "cassette"),
            ("noted", "cassette"),
            ("no recorded response for this call (tool 'lookup'); the recording never made it", "missing"),
            (
                "replaylab blocked this call: no recorded response matches this call of the mutating tool 'note'; "
                "replay never executes a side effect live",
                "blocked",
            ),
        ]
        assert executor.cassette.played == [0, 2, 1]
        assert dict(executor.cassette.play_counts) == {0: 1, 1: 1, 2: 1}
        # the misses: the live tool's GET (reported by its process), the recorded tool's POST
        assert [(type(m).__name__, m.method, m.path) for m in executor.cassette.misses] == [
            ("ToolRequest", "GET", "/orders/O-1"),
            ("ToolRequest", "POST", "/tools/note"),
        ]
        assert [d.code for d in executor.defects] == [Code.SIDE_EFFECT_ESCAPED]
        again = executor.fresh()  # the state right after construction, for both routes
        assert again.cassette.played == [0] and again.cassette.misses == []
        with again:
            assert again.execute(note, turn=0, step=0)[1].result == "noted"
            assert again.execute(lookup, turn=0, step=1)[1].result == "second answer"
    finally:
        executor.close()


URI_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(name=URI_TEXT, body=st.binary(max_size=20))
def test_a_tool_request_parses_its_uri_as_vcrpy_does(name: str, body: bytes) -> None:
    from vcr.request import Request

    uri = f"http://127.0.0.1:9/tools/{name}"
    mine = ToolRequest("POST", uri, body, {"Content-Type": "application/json"})
    theirs = Request("POST", uri, body, {"Content-Type": "application/json"})
    assert (mine.method, mine.uri, mine.body, mine.path, mine.query) == (
        theirs.method,
        theirs.uri,
        theirs.body,
        theirs.path,
        theirs.query,
    )
    assert request_key(mine) == request_key(theirs)


def test_the_recorded_tool_request_is_the_one_the_http_implementation_sends(tmp_path: Path) -> None:
    """`recorded_tool_request` describes the POST `recorded_tool` makes: served under vcrpy's
    patches, that POST plays the very interaction the playback plays for the request's key."""
    from replaylab.replay.cassettes.vcr_session import open_cassette, patched
    from replaylab.replay.guard import socket_guard
    from replaylab.replay.tools.recorded_tool import recorded_tool

    cassette = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            recorded_tool_interaction("find", {"q": "ä b", "n": 2}, "one"),
            recorded_tool_interaction("find", {"q": "other"}, "two"),
        ],
    )
    request = recorded_tool_request("find", {"n": 2, "q": "ä b"})
    over_http = open_cassette(cassette)
    with socket_guard(), patched(over_http):
        assert recorded_tool("find", {"n": 2, "q": "ä b"}).text == "one"
    assert over_http.played == [0]
    from replaylab.replay.cassettes.playback import open_playback

    playback = open_playback(cassette)
    assert playback.play_key(request_key(request)) is not None and playback.played == [0]


# ---------------------------------------------------------------- keys, parsed cassettes, play state

ORDER = "ORD-55210"
JSON_SCALARS = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False) | URI_TEXT
JSON_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(URI_TEXT, inner, max_size=3), max_leaves=8
)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["lookup_order", "send-email", "x.y", "a b", "q?x=1"]),
    st.dictionaries(URI_TEXT, JSON_VALUES, max_size=4),
)
def test_recorded_tool_key_is_the_request_key_of_the_recorded_tool_request(name: str, args: dict) -> None:
    """The key the playback serves a recorded tool by, the key of replaylab's own request record
    and the key of vcrpy's `Request` of the same fields (what vcrpy's side matches) are one value,
    computed or found again."""
    from vcr.request import Request

    request = recorded_tool_request(name, args)
    vcr_request = Request(request.method, request.uri, request.body, request.headers)
    assert recorded_tool_key(name, args) == request_key(request) == request_key(vcr_request)
    assert recorded_tool_key(name, args) == request_key(request)
    assert (request.path, request.query) == (vcr_request.path, vcr_request.query)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["lookup_order", "send-email", "x.y", "a b", "q?x=1"]),
    st.dictionaries(URI_TEXT, JSON_VALUES, max_size=4),
)
def test_an_executed_call_s_one_key_gives_the_keys_of_every_lookup(name: str, args: dict) -> None:
    """The executor makes `call_key` once per call and reads the recorded-tool key's canonical JSON
    from it: the same keys, and the same recorded result played, as each lookup making its own."""
    from replaylab.replay.tools.recorded_results import RecordedResult, RecordedResults, call_key

    key = call_key(name, args)
    assert recorded_tool_key(name, args, key[len(name) + 1 :]) == recorded_tool_key(name, args)
    results = [RecordedResult("c0", name, args, "first", False), RecordedResult("c1", name, args, "second", False)]
    plain, keyed = RecordedResults(results), RecordedResults(results)
    assert keyed.upcoming(name, args, key) == plain.upcoming(name, args)
    assert [keyed.play(name, args, key) for _ in range(3)] == [plain.play(name, args) for _ in range(3)]


def _order_cassette(path: Path, *results: str) -> Path:
    return write_cassette(
        path, [recorded_tool_interaction("lookup_order", {"order_id": ORDER}, text, is_error=False) for text in results]
    )


def _order_call() -> ToolCallBlock:
    return ToolCallBlock(id="c1", name="lookup_order", arguments={"order_id": ORDER})


def test_executors_of_one_cassette_share_parsing_but_not_play_counts(tmp_path: Path) -> None:
    cassette = _order_cassette(tmp_path / "s.cassette.yaml", "first", "second")
    classifier = ToolClassifier(declared={"lookup_order": "read"})
    before = ToolExecutor(cassette, classifier, executed_before=[("lookup_order", {"order_id": ORDER})])
    fresh = ToolExecutor(cassette, classifier)
    assert before.cassette.data is fresh.cassette.data  # one parse
    with before, fresh:
        assert before.execute(_order_call(), turn=0, step=0)[1].result == "second"
        trace = before.execute(_order_call(), turn=0, step=1)[1]
        assert (trace.source, len(before.cassette.misses)) == ("missing", 1)
        assert [fresh.execute(_order_call(), turn=0, step=i)[1].result for i in range(2)] == ["first", "second"]
    assert before.cassette.misses[0].body == canonical_json({"order_id": ORDER}).encode()


def test_a_rewritten_cassette_is_parsed_again(tmp_path: Path) -> None:
    cassette = _order_cassette(tmp_path / "s.cassette.yaml", "old answer")
    assert open_playback(cassette).play_key(recorded_tool_key("lookup_order", {"order_id": ORDER}))
    inode = cassette.stat().st_ino
    cassette.write_bytes(_order_cassette(tmp_path / "longer.cassette.yaml", "a newer, longer answer").read_bytes())
    assert cassette.stat().st_ino == inode  # rewritten in place: the same file, another size
    with ToolExecutor(cassette, ToolClassifier()) as executor:
        assert executor.execute(_order_call(), turn=0, step=0)[1].result == "a newer, longer answer"
    os.replace(_order_cassette(tmp_path / "new.cassette.yaml", "replaced"), cassette)  # another file, same path
    with ToolExecutor(cassette, ToolClassifier()) as executor:
        assert executor.execute(_order_call(), turn=0, step=0)[1].result == "replaced"


def test_only_the_latest_few_parsed_cassettes_are_kept(tmp_path: Path) -> None:
    """A nightly run opens thousands of cassettes: the process keeps the parse of the latest
    `MAX_PARSED_CASSETTES` only, and one pushed out is parsed again (the same answers) when
    opened again."""
    from replaylab.replay.cassettes.playback import MAX_PARSED_CASSETTES

    paths = []
    for i in range(MAX_PARSED_CASSETTES + 5):
        path = tmp_path / f"c{i}.cassette.yaml"
        write_cassette(path, [recorded_tool_interaction("lookup_order", {"order_id": f"O-{i}"}, f"order {i}")])
        paths.append(path)
    first = open_playback(paths[0]).data
    latest = [open_playback(path).data for path in paths[1:]]
    assert open_playback(paths[-1]).data is latest[-1]
    again = open_playback(paths[0])
    assert again.data is not first
    assert again.play_key(recorded_tool_key("lookup_order", {"order_id": "O-0"}))["body"]["string"] == b"order 0"


# ---------------------------------------------------------------- the recorded interactions, as vcrpy reads them

TEXTS = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", "plain", "données 日本語 ✓", "lone \ud800 surrogate", "\x85\u2028\ufeff"]
)
URIS = [
    "http://127.0.0.1:9/tools/lookup_order",
    "http://127.0.0.1:9/tools/a?b=2&a=1&a=0",
    "http://h/p;params?q=1#frag",
    "http://h/%7Epath?x=%20y&flag",
    "https://example.com",
    "",
    "/relative?x=",
    "http://[::1",
    "http://h:bad/",
    "HTTP://H/Upper?Z=1",
]
HEADER_NAMES = st.sampled_from(["Content-Type", "content-type", "X-Api", "x-api"])
HEADER_MAPS = st.dictionaries(
    HEADER_NAMES, st.one_of(st.lists(st.text(max_size=3), min_size=1, max_size=2), st.text(max_size=3)), max_size=3
)
#: what vcrpy cannot take: names that are not strings, empty value lists
ODD_HEADER_MAPS = st.dictionaries(
    st.one_of(HEADER_NAMES, st.integers(), st.none()),
    st.one_of(st.lists(st.text(max_size=3), max_size=2), st.integers()),
    max_size=3,
)
BODIES = st.one_of(st.none(), TEXTS, st.binary(max_size=8), JSON_VALUES.map(lambda v: json.dumps(v)))
METHODS = st.sampled_from(["GET", "post", "Put", "DELETE"])
#: mostly what vcrpy and `write_cassette` write; one in ten with a missing or extra field or odd headers
REQUEST_FIELDS = st.integers(0, 9).flatmap(
    lambda n: (
        st.fixed_dictionaries(
            {"method": METHODS, "uri": st.sampled_from(URIS)},
            optional={"body": BODIES, "headers": ODD_HEADER_MAPS, "extra": st.just(1)},
        )
        if n == 0
        else st.fixed_dictionaries(
            {"method": METHODS, "uri": st.sampled_from(URIS), "body": BODIES, "headers": HEADER_MAPS}
        )
    )
)
RESPONSES = st.fixed_dictionaries(
    {
        "status": st.fixed_dictionaries({"code": st.sampled_from([200, 404]), "message": st.just("OK")}),
        "headers": HEADER_MAPS,
        "body": st.fixed_dictionaries({"string": st.one_of(TEXTS, st.binary(max_size=8))}),
    }
)
CASSETTE_ITEMS = st.lists(st.fixed_dictionaries({"request": REQUEST_FIELDS, "response": RESPONSES}), max_size=5)


def _vcrpy_reads(items: list[dict]) -> tuple[str, Any]:
    """What vcrpy's own deserialization (`vcr.serialize.deserialize`) makes of these interactions:
    a `Request` per recorded request and each response with its body as bytes; or the error."""
    from vcr.request import Request
    from vcr.serializers import compat

    items = copy.deepcopy(items)
    try:
        return "ok", [
            (Request._from_dict(item["request"]), compat.convert_to_bytes(item["response"])) for item in items
        ]
    except Exception as exc:
        return "error", (type(exc), str(exc))


def _request_state(request: Any) -> dict[str, Any]:
    """Everything a vcrpy `Request` holds (header names with their case), but replaylab's own cache."""
    state = {k: v for k, v in vars(request).items() if k != "_replaylab_body_key"}
    state["_headers"] = dict(state["_headers"]._store)
    return state


@settings(max_examples=300, deadline=None)
@given(items=CASSETTE_ITEMS, order=st.randoms(use_true_random=False))
def test_recorded_interactions_are_what_vcrpy_reads(items: list[dict], order: Any) -> None:
    """Each interaction, read in any order, is the `Request` and response vcrpy would have read
    (read once, then the same objects); its key is that `Request`'s `request_key`; the served
    text is the text vcrpy's bytes decode to; a request vcrpy refuses fails at once, with
    vcrpy's error."""
    expected = _vcrpy_reads(items)
    try:
        interactions = RecordedInteractions(copy.deepcopy(items))
    except Exception as exc:
        assert expected == ("error", (type(exc), str(exc)))
        return
    assert expected[0] == "ok", expected
    pairs = expected[1]
    assert len(interactions) == len(pairs)
    texts = [interactions.response_text(i)[0] for i in range(len(pairs))]
    indices = list(range(len(pairs)))
    order.shuffle(indices)
    for i in indices:
        request, response = interactions[i]
        assert _request_state(request) == _request_state(pairs[i][0])
        assert response == pairs[i][1] and response is interactions.responses[i] is interactions.response_text(i)[1]
        assert interactions[i] is interactions[i]
        assert interactions.keys[i] == request_key(pairs[i][0])
        body = pairs[i][1]["body"]["string"]
        assert texts[i] == (body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or ""))
    assert request_index(interactions) == request_index(list(interactions))


def test_a_response_is_encoded_once_when_first_read() -> None:
    items = [recorded_tool_interaction("t", {"a": i}, f"données {i}") for i in range(3)]
    items.append(
        {
            "request": {"method": "GET", "uri": "http://127.0.0.1:9/x", "body": None, "headers": {}},
            "response": {"status": {"code": 200}, "headers": {}, "body": {"string": "lone \ud800"}},
        }
    )
    responses = LazyResponses(copy.deepcopy([item["response"] for item in items]))
    raw = responses.raw(1)
    assert raw["body"]["string"] == "données 1" and not responses.converted(1)
    assert responses[1] is raw and raw["body"]["string"] == "données 1".encode() and responses.converted(1)
    assert responses[1]["body"]["string"] == "données 1".encode()  # not encoded twice
    assert responses[3]["body"]["string"] == "lone \ud800"  # vcrpy leaves what it cannot encode as text
    assert [r["body"]["string"] for r in responses[0:2]] == [b"donn\xc3\xa9es 0", "données 1".encode()]
    assert len(responses) == 4 and list(responses)[2]["body"]["string"] == "données 2".encode()


def test_the_playback_cassettes_of_a_file_share_its_requests(tmp_path: Path) -> None:
    from replaylab.replay.cassettes.vcr_session import open_cassette

    path = write_cassette(
        tmp_path / "s.cassette.yaml",
        [recorded_tool_interaction("lookup_order", {"order_id": f"O-{i}"}, f"order {i}") for i in range(3)],
    )
    playback = open_cassette(path)
    served = playback.play_key(playback.data.keys[2])
    assert served["body"]["string"] == b"order 2"
    request, _ = playback.data[1]
    assert request.path == "/tools/lookup_order" and request.body == b'{"order_id":"O-1"}'
    assert open_cassette(path).data[1][0] is request
    assert playback.data[2][1] is served and playback.data[2][0].body == b'{"order_id":"O-2"}'


def test_a_request_vcrpy_refuses_is_an_invalid_cassette_naming_its_field(tmp_path: Path) -> None:
    """A cassette whose request lacks vcrpy's `body` field cannot become a vcrpy `Request` (vcrpy's
    own read raises): `load_cassette` refuses it as invalid, naming the field, so a run reports the
    file to fix instead of raising at open or in the middle of a replay."""
    import pytest
    import yaml

    from replaylab.diagnostics import InputError
    from replaylab.replay.cassettes.vcr_session import open_cassette

    path = tmp_path / "no-body.cassette.yaml"
    item = {
        "request": {"method": "GET", "uri": "http://127.0.0.1:9/x", "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "ok"}},
    }
    path.write_text(yaml.safe_dump({"interactions": [item], "version": 1}), encoding="utf-8")
    assert _vcrpy_reads([item])[0] == "error"
    with pytest.raises(InputError) as error:
        open_cassette(path)
    assert "error[cassette-invalid] field 'interactions[0].request.body': missing" in str(error.value)


def test_a_request_with_null_headers_opens_as_vcrpy_reads_it(tmp_path: Path) -> None:
    """vcrpy reads a request's null `headers` as none: the cassette opens and its request is the
    one vcrpy makes (replaylab's shortcut around vcrpy read the null as a mapping and raised)."""
    import yaml

    from replaylab.replay.cassettes.vcr_session import open_cassette

    path = tmp_path / "null-headers.cassette.yaml"
    item = {
        "request": {"method": "GET", "uri": "http://127.0.0.1:9/x", "body": None, "headers": None},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "ok"}},
    }
    path.write_text(yaml.safe_dump({"interactions": [item], "version": 1}), encoding="utf-8")
    status, read = _vcrpy_reads([item])
    assert status == "ok"
    request = open_cassette(path).data[0][0]
    assert _request_state(request) == _request_state(read[0][0])
