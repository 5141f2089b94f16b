"""Replay without vcrpy: a session's recorded tools are answered from a `Playback`, and vcrpy
(slow to import, since it imports every client it patches) is imported only for a pack tool's
real HTTP, a recording, an LLM cassette or a recorded `Request` read from the file.

What is checked here:

* a whole pipeline run of generated bench sessions (recorded tools only: served calls, blocked
  writes, repeats of earlier writes) in a fresh interpreter never imports `vcr`, and
  gives the results it gives with vcrpy imported first;
* a pack tool (served through vcrpy's patches) and a recorded tool of the same executor count
  against one play state: what one plays, the other cannot play again, and `fresh` restores both;
* `ToolRequest`, the record of a recorded-tool miss, parses its URI as vcrpy's `Request` does.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.cassette import interaction, recorded_tool_interaction, write_cassette
from replaylab.defects import Code
from replaylab.replay import ToolExecutor
from replaylab.replay.playback import Playback
from replaylab.replay.recorded_tool import ToolRequest, recorded_tool_request
from replaylab.replay.request_keys import request_key
from replaylab.replay.toolpack import ToolOutput, ToolPack, ToolSpec
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock

REPO = Path(__file__).resolve().parents[1]

_RUN_BENCH_SESSIONS = r"""
import json, os, sys
from pathlib import Path
sys.path[:0] = [{repo!r}, {tests!r}]
if {vcr_first!r}:
    import vcr  # noqa: F401 - the control: the same run with vcrpy already imported
from bench.cases.pipeline import make_sessions
from test_pipeline_speed import _results

suite_path = make_sessions(Path({folder!r}), {count})
os.chdir(suite_path.parent.parent)
results = _results(suite_path)
print(json.dumps({{"vcr": "vcr" in sys.modules, "results": results}}))
"""


def _bench_run(folder: Path, *, vcr_first: bool, count: int = 44) -> dict:
    """Each item's result (`test_pipeline_speed._results`) of `count` generated bench sessions,
    run in a fresh interpreter, and whether that interpreter imported vcrpy."""
    code = _RUN_BENCH_SESSIONS.format(repo=str(REPO), tests=str(REPO / "tests"), vcr_first=vcr_first,
                                      folder=str(folder), count=count)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    out["results"] = [ast.literal_eval(result.replace(str(folder), "<folder>")) for result in out["results"]]
    return out


def test_a_pipeline_run_of_recorded_tool_sessions_never_imports_vcrpy(tmp_path: Path) -> None:
    plain = _bench_run(tmp_path / "plain", vcr_first=False)
    assert plain["vcr"] is False
    sources = {trace["source"] for item in plain["results"] for run in ("baseline", "compacted")
               for turn in (item[run] or {}).get("turns", []) for trace in turn["tool_calls"]}
    codes = {defect["code"] for item in plain["results"] for defect in item["defects"]}
    # served calls and misses (a miss of a read or of a write takes the same route: `_serve_recorded`)
    assert {"cassette", "blocked"} <= sources, sources
    assert Code.SIDE_EFFECT_ESCAPED.value in codes or Code.DUPLICATE_SIDE_EFFECT.value in codes
    control = _bench_run(tmp_path / "control", vcr_first=True)
    assert control["vcr"] is True
    assert len(plain["results"]) == 44 and plain["results"] == control["results"]


def _lookup(args: dict, ctx) -> ToolOutput:
    """A pack tool doing real HTTP (served by vcrpy's patches from the cassette)."""
    with urllib.request.urlopen(f"{ctx.base_url}/orders/{args['id']}", timeout=5) as response:
        return ToolOutput(response.read().decode(), False)


def test_a_pack_tool_and_a_recorded_tool_share_one_play_state(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "s.cassette.yaml", [
        interaction("GET", "http://127.0.0.1:9/orders/O-1", None, 200, "first answer"),
        recorded_tool_interaction("note", {"text": "hi"}, "noted"),
        interaction("GET", "http://127.0.0.1:9/orders/O-1", None, 200, "second answer")])
    pack = ToolPack(name="t", tools={"lookup": ToolSpec(name="lookup", description="", parameters={},
                                                          tool_class="read", call=_lookup)})
    classifier = ToolClassifier(declared={"lookup": "read", "note": "write"})
    lookup = ToolCallBlock(id="c1", name="lookup", arguments={"id": "O-1"})
    note = ToolCallBlock(id="c2", name="note", arguments={"text": "hi"})
    executor = ToolExecutor(cassette, classifier, tool_pack=pack, executed_before=[("lookup", {"id": "O-1"})])
    assert isinstance(executor.cassette, Playback) and executor.cassette.played == [0]  # played at construction
    with executor:
        answers = [executor.execute(call, turn=0, step=i)[1] for i, call in enumerate([lookup, note, lookup, note])]
    assert [(t.result, t.source) for t in answers] == [
        ("second answer", "cassette"), ("noted", "cassette"),
        ("no recorded response for this call (tool 'lookup'); the recording never made it", "missing"),
        ("replaylab blocked this call: no recorded response matches this call of the mutating tool 'note'; "
         "replay never executes a side effect live", "blocked")]
    assert executor.cassette.played == [0, 2, 1]
    assert dict(executor.cassette.play_counts) == {0: 1, 1: 1, 2: 1}
    # the misses: vcrpy's `Request` of the pack tool's GET, replaylab's record of the recorded tool's POST
    assert [(type(m).__name__, m.method, m.path) for m in executor.cassette.misses] == [
        ("Request", "GET", "/orders/O-1"), ("ToolRequest", "POST", "/tools/note")]
    assert [d.code for d in executor.defects] == [Code.SIDE_EFFECT_ESCAPED]
    again = executor.fresh()  # the state right after construction, for both routes
    assert again.cassette.played == [0] and again.cassette.misses == []
    with again:
        assert again.execute(note, turn=0, step=0)[1].result == "noted"
        assert again.execute(lookup, turn=0, step=1)[1].result == "second answer"


URI_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(name=URI_TEXT, body=st.binary(max_size=20))
def test_a_tool_request_parses_its_uri_as_vcrpy_does(name: str, body: bytes) -> None:
    from vcr.request import Request

    uri = f"http://127.0.0.1:9/tools/{name}"
    mine = ToolRequest("POST", uri, body, {"Content-Type": "application/json"})
    theirs = Request("POST", uri, body, {"Content-Type": "application/json"})
    assert (mine.method, mine.uri, mine.body, mine.path, mine.query) == \
        (theirs.method, theirs.uri, theirs.body, theirs.path, theirs.query)
    assert request_key(mine) == request_key(theirs)


def test_the_recorded_tool_request_is_the_one_the_http_implementation_sends(tmp_path: Path) -> None:
    """`recorded_tool_request` describes the POST `recorded_tool` makes: served under vcrpy's
    patches, that POST plays the very interaction the playback plays for the request's key."""
    from replaylab.replay.recorded_tool import recorded_tool
    from replaylab.replay.guard import socket_guard
    from replaylab.replay.vcr_session import open_cassette, patched

    cassette = write_cassette(tmp_path / "s.cassette.yaml", [
        recorded_tool_interaction("find", {"q": "ä b", "n": 2}, "one"),
        recorded_tool_interaction("find", {"q": "other"}, "two")])
    request = recorded_tool_request("find", {"n": 2, "q": "ä b"})
    over_http = open_cassette(cassette)
    with socket_guard(), patched(over_http):
        assert recorded_tool("find", {"n": 2, "q": "ä b"}).text == "one"
    assert over_http.played == [0]
    from replaylab.replay.playback import open_playback

    playback = open_playback(cassette)
    assert playback.play_key(request_key(request)) is not None and playback.played == [0]
