"""Tools that fail closed, the socket guard and the recorder, against a real loopback HTTP service
that counts the requests it receives: replay answers a pack's tools from the recording and never
runs their code."""

from __future__ import annotations

import errno
import socket
import sys
import textwrap

import orjson
import pytest

from builders.transcripts import message_chain_jsonl
from replaylab.cassette import cassette_path_for, recorded_tool_interaction, write_cassette
from replaylab.cli import main as cli_main
from replaylab.defects import Code
from replaylab.replay import (
    NetworkBlockedError,
    ToolExecutor,
    calls_before,
    make_model,
    run_turns,
    socket_guard,
    split_turns,
)
from replaylab.replay.cassettes.interaction_tags import TAG_KEY
from replaylab.replay.guard import guard_active
from replaylab.replay.recorder import record_session
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.replay.tools.recorded_results import RecordedResults, turn_number
from replaylab.replay.tools.recorded_tool import recorded_tool
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.context import build_window
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import ToolCallBlock
from repo_paths import REPO_ROOT

PACK_SOURCE = '"""A tiny shop tool pack for replaylab\'s replay tests: a real loopback HTTP service over a dict."""\nimport json, threading, urllib.request\nfrom http.server import BaseHTTPRequestHandler, ThreadingHTTPServer\nfrom replaylab.replay.tools.pack import ToolOutput, ToolSpec\n\nORDERS = {"1001": {"id": "1001", "status": "delivered", "total": 4250, "customer": "cus_7Q2X"},\n          "1002": {"id": "1002", "status": "shipped", "total": 1999, "customer": "cus_7Q2X"}}\n\nclass Service:\n    def __init__(self):\n        self.writes = 0\n        self.requests = []\n        self.state = json.loads(json.dumps(ORDERS))\n        service = self\n        class Handler(BaseHTTPRequestHandler):\n            def log_message(self, *a): pass\n            def _send(self, code, obj):\n                body = json.dumps(obj).encode()\n                self.send_response(code); self.send_header("Content-Type", "application/json")\n                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)\n            def do_GET(self):\n                service.requests.append(("GET", self.path))\n                if self.path.startswith("/orders/"):\n                    order = service.state.get(self.path.rsplit("/", 1)[1])\n                    return self._send(200 if order else 404, order or {"error": "no such order"})\n                self._send(404, {"error": "not found"})\n            def do_POST(self):\n                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")\n                service.requests.append(("POST", self.path))\n                if self.path == "/search":\n                    hits = [o for o in service.state.values() if o["customer"] == body.get("customer")]\n                    return self._send(200, {"orders": hits})\n                service.writes += 1\n                if self.path.endswith("/refund"):\n                    order = service.state.get(self.path.split("/")[2])\n                    if not order: return self._send(404, {"error": "no such order"})\n                    order["status"] = "refunded"\n                    return self._send(200, {"refund_id": f"re_{order[\'id\']}_{service.writes}", "amount": body.get("amount")})\n                if self.path == "/notes":\n                    return self._send(200, {"note_id": f"note_{service.writes}", "text": body.get("text")})\n                self._send(404, {"error": "not found"})\n        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)\n        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"\n        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True); self.thread.start()\n    def stop(self):\n        self.server.shutdown(); self.server.server_close()\n\nSERVICES = []\ndef start_service():\n    service = Service(); SERVICES.append(service); return service\n\ndef _http(method, url, body=None):\n    data = json.dumps(body).encode() if body is not None else None\n    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json",\n                                                                              "Authorization": "Bearer " + "sk-" + "shop-secret-token-123456"})\n    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))\n    try:\n        with opener.open(request, timeout=5) as response:\n            return ToolOutput(response.read().decode())\n    except urllib.error.HTTPError as exc:\n        return ToolOutput(exc.read().decode(), is_error=True)\n\ndef get_order(args, ctx): return _http("GET", f"{ctx.base_url}/orders/{args[\'order_id\']}")\ndef find_orders(args, ctx): return _http("POST", f"{ctx.base_url}/search", {"customer": args["customer"]})\ndef refund_order(args, ctx): return _http("POST", f"{ctx.base_url}/orders/{args[\'order_id\']}/refund", {"amount": args["amount"]})\ndef lookup_note(args, ctx): return _http("POST", f"{ctx.base_url}/notes", {"text": args["text"]})\n\n_obj = lambda **props: {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}, "required": list(props)}\nTOOLS = [\n    ToolSpec("get_order", "Get one order by id", _obj(order_id="string"), "read", get_order),\n    ToolSpec("find_orders", "Find a customer\'s orders", _obj(customer="string"), "read", find_orders),\n    ToolSpec("refund_order", "Refund an order", _obj(order_id="string", amount="integer"), "write", refund_order),\n    ToolSpec("lookup_note", "Look up a note (declared read, but it writes one)", _obj(text="string"), "read", lookup_note),\n]\n'

SCRIPT = """
name: shop-refund
system: You are a shop assistant.
turns:
  - user: "Hi, I'm customer cus_7Q2X (my api_key=abcdefghijklmnop1234). Which orders do I have?"
    steps:
      - tool_calls:
          - {name: find_orders, arguments: {customer: cus_7Q2X}, as: mine}
      - say: "You have orders ${mine.orders[0].id} and ${mine.orders[1].id}."
  - user: "Please refund the delivered one."
    steps:
      - tool_calls:
          - {name: get_order, arguments: {order_id: "${mine.orders[0].id}"}, as: first}
          - {name: get_order, arguments: {order_id: "${mine.orders[1].id}"}}
      - tool_calls:
          - {name: refund_order, arguments: {order_id: "${first.id}", amount: "${first.total}"}, as: refund}
      - say: "Done: refund ${refund.refund_id} for order ${first.id}."
"""


@pytest.fixture()
def pack(tmp_path, monkeypatch):
    """The shop pack as an importable module of this test (fresh per test)."""
    name = f"rl_shop_pack_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(PACK_SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = load_tool_pack(name)
    yield loaded
    for service in loaded.module.SERVICES:
        service.server.server_close()
    sys.modules.pop(name, None)


@pytest.fixture()
def recorded(pack, tmp_path):
    script = tmp_path / "shop.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    result = record_session(tools=pack.name, out_dir=tmp_path / "rec", script=script)
    recording_service = pack.module.SERVICES[-1]
    assert recording_service.writes == 1  # the live run really refunded once
    return result


def _classifier(pack):
    return ToolClassifier.from_tool_pack(pack)


def _dumps(turn):
    return [e.message.model_dump(mode="json", by_alias=True, exclude_none=True) for e in turn.steps]


def test_recording_is_scrubbed_and_replays_with_zero_drift_without_touching_the_service(pack, recorded):
    transcript_text = recorded.transcript.read_text(encoding="utf-8")
    cassette_text = recorded.cassette.read_text(encoding="utf-8")
    assert "abcdefghijklmnop1234" not in transcript_text and "[REDACTED]" in transcript_text
    assert "sk-shop-secret-token" not in cassette_text and "Authorization" not in cassette_text
    transcript = load_transcript(recorded.transcript)
    assert transcript.diagnostics == []
    path = transcript.leaf_path()
    turns = split_turns(path)
    # every HTTP interaction names the call that made it (replay's evidence: it never runs the tool)
    calls = [
        c for e in path if getattr(e, "message", None) and e.message.role == "assistant" for c in e.message.tool_calls()
    ]
    from replaylab.cassette import load_cassette

    assert [(i[TAG_KEY]["toolCallId"], i[TAG_KEY]["tool"]) for i in load_cassette(recorded.cassette)] == [
        (c.id, c.name) for c in calls
    ]
    live = pack.module.start_service()  # a live service is reachable — replay must still not use it
    executor = ToolExecutor(
        recorded.cassette, _classifier(pack), tool_pack=pack, recorded=RecordedResults.of(path), base_url=live.url
    )
    trace = run_turns(
        [],
        turns,
        make_model("replay", recording=transcript),
        executor,
        label="baseline",
        tools=[s.openai_schema() for s in pack.tools.values()],
    )
    live.stop()
    assert trace.error is None and executor.defects == []
    assert [t.assistant_messages for t in trace.turns] == [_dumps(t) for t in turns]
    assert [c.source for t in trace.turns for c in t.tool_calls] == ["cassette"] * 4
    assert trace.turns[1].answer == "Done: refund re_1001_1 for order 1001."
    assert live.requests == [] and live.writes == 0


def test_blocked_mutating_call_never_reaches_the_live_service(pack, recorded):
    transcript = load_transcript(recorded.transcript)
    path = transcript.leaf_path()
    turns = split_turns(path)
    history = path[: path.index(turns[1].inputs[0])]
    # the window loses the lookup result and the answer that named the order ids
    lossy = [w for w in build_window(history) if w.message.role == "user"]
    live = pack.module.start_service()
    # the nearest recorded *call* comes from the recording's results, whether or not the caller
    # names the recording's calls itself
    for recorded_calls in (calls_before(path), ()):
        executor = ToolExecutor(
            recorded.cassette,
            _classifier(pack),
            tool_pack=pack,
            recorded=RecordedResults.of(path),
            base_url=live.url,
            executed_before=calls_before(history),
            recorded_calls=recorded_calls,
        )
        trace = run_turns(lossy, turns[1:], make_model("replay", recording=transcript), executor, label="compacted")
        calls = trace.turns[0].tool_calls
        # markers are numbered over the run: the refund's order id is the first lookup's, its
        # amount a third value
        assert [(c.tool, c.arguments, c.source) for c in calls] == [
            ("get_order", {"order_id": "⟨lost:1⟩"}, "missing"),
            ("get_order", {"order_id": "⟨lost:2⟩"}, "missing"),
            ("refund_order", {"order_id": "⟨lost:1⟩", "amount": "⟨lost:3⟩"}, "blocked"),
        ]
        assert calls[2].is_error and "never executes a side effect live" in calls[2].result
        [escaped] = executor.defects
        assert escaped.code == Code.SIDE_EFFECT_ESCAPED and escaped.where.tool == "refund_order"
        assert escaped.detail["request"] == {}  # no HTTP was attempted: the tool never ran
        changed = {leaf["path"] for leaf in escaped.detail["differences"]}
        # EXPECTED: the call the recorded agent made at this step, whose arguments the lost values replaced
        assert escaped.expected == {"tool": "refund_order", "arguments": {"order_id": "1001", "amount": 4250}}
        assert changed == {"order_id", "amount"} and "differs at order_id, amount" in escaped.message
        assert escaped.detail["nearest"]["label"] == "nearest recorded call (hint)"
    live.stop()
    assert live.writes == 0 and live.requests == []  # nothing ran, so nothing connected


def test_repeating_a_write_executed_before_the_cut_is_a_duplicate(pack, recorded):
    transcript = load_transcript(recorded.transcript)
    path = transcript.leaf_path()
    turns = split_turns(path)
    executor = ToolExecutor(
        recorded.cassette,
        _classifier(pack),
        tool_pack=pack,
        recorded=RecordedResults.of(path),
        executed_before=calls_before(path),
    )  # everything already ran once
    refund = turns[1].steps[1].message.tool_calls()[0]
    result, trace = executor.execute(refund, turn=turn_number(turns[1].index), step=1)
    assert trace.source == "blocked" and result.is_error
    assert [d.code for d in executor.defects] == [Code.DUPLICATE_SIDE_EFFECT]
    # EXPECTED is the recorded call at this step: the very call, so nothing differs but the repeat
    [duplicate] = executor.defects
    assert duplicate.expected == {"tool": refund.name, "arguments": refund.arguments}
    assert (
        duplicate.detail["differences"] == []
        and "the recorded call at this step is this very call" in duplicate.message
    )
    # a read already played before the cut has no answer left either: a divergence, not a defect
    read = turns[1].steps[0].message.tool_calls()[0]
    _, read_trace = executor.execute(read, turn=1, step=0)
    assert read_trace.source == "missing" and [d.code for d in executor.defects] == [Code.DUPLICATE_SIDE_EFFECT]


def test_a_restated_write_already_ran_once_and_is_never_replayed_as_a_new_call(pack, recorded, tmp_path):
    """A working copy where a safeguard compaction restated the refund after itself: the calls that
    ran and the recorded results are the recording's (the restated call is the refund that already
    ran, its restated result no second answer), so replaying the refund from the copy is the same
    duplicate it is from the recording — never a second side effect."""
    from replaylab.transcript.model import dump_entry
    from replaylab.transcript.restated import restated_copy

    transcript = load_transcript(recorded.transcript)
    path = transcript.leaf_path()
    messages = [e for e in path if hasattr(e, "message")]
    refund_entry = next(e for e in messages if e.message.role == "assistant" and "refund_order" in str(e.message))
    refund = refund_entry.message.tool_calls()[0]
    result_entry = next(e for e in messages if getattr(e.message, "tool_call_id", None) == refund.id)
    lines = recorded.transcript.read_bytes().splitlines()
    compaction = {"type": "compaction", "id": "cmp", "parentId": path[-1].id, "summary": "S", "firstKeptEntryId": "cmp"}
    call = restated_copy(refund_entry, entry_id="r-call", parent_id="cmp", source_id=refund_entry.id)
    answer = restated_copy(result_entry, entry_id="r-result", parent_id="r-call", source_id=result_entry.id)
    copy_file = tmp_path / "copy.jsonl"
    copy_file.write_bytes(b"\n".join([*lines, *(orjson.dumps(o) for o in (compaction, call, answer))]) + b"\n")
    copy = load_transcript(copy_file).leaf_path()
    assert [w.source_id for w in build_window(copy)[1:]] == [refund_entry.id, result_entry.id]
    assert calls_before(copy) == calls_before(path)
    assert RecordedResults.of(copy).calls() == RecordedResults.of(path).calls()
    outcomes = []
    for source in (path, copy):
        executor = ToolExecutor(
            recorded.cassette,
            _classifier(pack),
            tool_pack=pack,
            recorded=RecordedResults.of(source),
            executed_before=calls_before(source),
        )
        _, trace = executor.execute(refund, turn=2, step=1)
        outcomes.append((trace.source, [d.code for d in executor.defects]))
    assert outcomes == [("blocked", [Code.DUPLICATE_SIDE_EFFECT])] * 2
    assert dump_entry(refund_entry.message) == dump_entry(load_transcript(copy_file).by_id["r-call"].message)


def test_read_tool_whose_recorded_http_is_a_write_is_mislabelled(pack, tmp_path):
    script = tmp_path / "note.yaml"
    script.write_text(
        textwrap.dedent("""
        parent_session: shop-refund.jsonl
        turns:
          - user: find my note about order 1001
            steps:
              - tool_calls: [{name: lookup_note, arguments: {text: order 1001}}]
              - say: found it
        """),
        encoding="utf-8",
    )
    recorded = record_session(tools=pack.name, out_dir=tmp_path / "rec", script=script)
    transcript = load_transcript(recorded.transcript)
    assert transcript.header.parent_session == "shop-refund.jsonl"  # recorded as a sub-agent session
    executor = ToolExecutor(
        recorded.cassette, _classifier(pack), tool_pack=pack, recorded=RecordedResults.of(transcript.leaf_path())
    )
    writes = sum(service.writes for service in pack.module.SERVICES)
    trace = run_turns(
        [], split_turns(transcript.leaf_path()), make_model("replay", recording=transcript), executor, label="baseline"
    )
    assert trace.turns[0].tool_calls[0].source == "cassette"
    [defect] = executor.defects  # the evidence is the recorded HTTP the recorder tagged with the call
    assert defect.code == Code.MISLABELLED_TOOL and defect.actual == ["POST /notes"]
    assert sum(service.writes for service in pack.module.SERVICES) == writes  # the tool never ran again


def test_socket_guard_blocks_non_loopback_before_connecting(pack):
    service = pack.module.start_service()
    with socket_guard():
        assert guard_active()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            # a real non-blocking connect would return EINPROGRESS; the guard raises first
            with pytest.raises(NetworkBlockedError, match="192.0.2.1"):
                sock.connect(("192.0.2.1", 80))
            assert sock.connect_ex(("127.0.0.1", 9)) in (0, errno.ECONNREFUSED, errno.EINPROGRESS)
        finally:
            sock.close()
        with pytest.raises(NetworkBlockedError, match="example.invalid"):
            socket.getaddrinfo("example.invalid", 443)
        with pytest.raises(NetworkBlockedError):
            socket.create_connection(("192.0.2.1", 443), timeout=0.5)
        # loopback stays open: the test service answers through the guard
        tool = pack.tools["get_order"]
        from replaylab.replay.tools.pack import ToolContext

        assert '"1001"' in tool.call({"order_id": "1001"}, ToolContext(base_url=service.url)).text
    assert not guard_active()
    service.stop()


def test_recorded_tool_endpoint_http_and_fast_path_agree(tmp_path):
    cassette = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            recorded_tool_interaction("get_user", {"b": 2, "a": "x"}, '{"name": "Mia"}'),
            recorded_tool_interaction("cancel", {"id": "R1"}, "cancelled"),
            recorded_tool_interaction("get_user", {"a": "x", "b": 2}, "error: gone", is_error=True),
        ],
    )
    classifier = ToolClassifier(declared={"get_user": "read", "cancel": "write"})
    executor = ToolExecutor(cassette, classifier)
    call = ToolCallBlock(id="c1", name="get_user", arguments={"a": "x", "b": 2})
    fast = [executor.execute(call, turn=0, step=0)[1] for _ in range(3)]
    assert [(t.result, t.is_error, t.source) for t in fast] == [
        ('{"name": "Mia"}', False, "cassette"),
        ("error: gone", True, "cassette"),
        ("no recorded response for this call (tool 'get_user'); the recording never made it", True, "missing"),
    ]
    assert executor.defects == []  # a read without a recording is a divergence, not an infrastructure error
    # the real HTTP path (urllib under vcrpy's patches) serves the same answers in the same order
    from replaylab.replay.cassettes.vcr_session import open_cassette, patched

    with socket_guard(), patched(open_cassette(cassette)):
        outputs = [recorded_tool("get_user", {"b": 2, "a": "x"}) for _ in range(2)]
    assert [(o.text, o.is_error) for o in outputs] == [('{"name": "Mia"}', False), ("error: gone", True)]
    missing = ToolExecutor(tmp_path / "nope.cassette.yaml", classifier)
    _, trace = missing.execute(ToolCallBlock(id="c2", name="cancel", arguments={"id": "R1"}), turn=0, step=0)
    assert trace.source == "blocked" and [d.code for d in missing.defects] == [Code.CASSETTE_MISSING]


def test_record_command_refuses_to_overwrite(pack, tmp_path, capsys):
    script = tmp_path / "shop.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    args = ["record", "--tools", pack.name, "--script", str(script), "--out", str(tmp_path / "out")]
    assert cli_main(args) == 0
    assert "4 tool calls" in capsys.readouterr().out
    before = (tmp_path / "out" / "shop-refund.jsonl").read_bytes()
    assert cli_main(args) == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "out" / "shop-refund.jsonl").read_bytes() == before
    assert cassette_path_for(tmp_path / "out" / "shop-refund.jsonl").is_file()


def test_playback_matches_the_query_string(tmp_path) -> None:
    """A read recorded as `GET /customers?email=a@x.com` answers that lookup (parameters in any
    order) and never another one: a lookup whose key compaction lost or changed is a miss, not
    the recorded customer."""
    from vcr.request import Request

    from replaylab.cassette import interaction
    from replaylab.replay.cassettes.vcr_session import open_cassette

    cassette = tmp_path / "q.cassette.yaml"
    write_cassette(
        cassette,
        [interaction("GET", "http://127.0.0.1:9/customers?email=a%40x.com&limit=1", None, 200, '{"id": "CUST-1"}')],
    )

    def asks(uri: str) -> bool:
        return open_cassette(cassette).can_play_response_for(Request("GET", uri, None, {}))

    assert asks("http://127.0.0.1:9/customers?email=a%40x.com&limit=1")
    assert asks("http://127.0.0.1:9/customers?limit=1&email=a%40x.com")
    assert not asks("http://127.0.0.1:9/customers?email=lost%40x.com&limit=1")
    assert not asks("http://127.0.0.1:9/customers?limit=1")
    playback = open_cassette(cassette)
    assert playback.play_response(Request("GET", "http://127.0.0.1:9/customers?limit=1&email=a%40x.com", None, {}))


# ---------------------------------------------------------------- a second executor from the same point

REPO = REPO_ROOT


def _helpdesk_items() -> list[tuple]:
    """(recording, calls before the cut, the later turns) of each helpdesk recording, cut before turn 2."""
    out = []
    for recording in sorted((REPO / "recordings" / "helpdesk").glob("*.jsonl")):
        path = load_transcript(recording).leaf_path()
        turns = split_turns(path)
        if len(turns) < 3 or not turns[2].inputs:
            continue
        cut = path.index(turns[2].inputs[0])
        out.append((recording, calls_before(path[:cut]), turns[2:]))
    return out


def _play_state(executor: ToolExecutor) -> tuple:
    cassette = executor.cassette
    return (
        executor.recorded.state(),
        dict(cassette.play_counts),
        list(cassette.played),
        [(r.method, r.uri, r.body) for r in cassette.misses],
        [d.model_dump() for d in executor.defects],
    )


def test_a_fresh_executor_is_the_constructed_one_whatever_the_first_ran() -> None:
    """`fresh()` gives what constructing the executor again with the same arguments gives: the
    same play state (the calls before the cut played), the same findings and the same run after."""
    pack = load_tool_pack("examples.helpdesk")
    classifier = ToolClassifier.from_tool_pack(pack)
    checked = 0
    for recording, before, later in _helpdesk_items():
        cassette = cassette_path_for(recording)
        transcript = load_transcript(recording)
        results = RecordedResults.of(transcript.leaf_path())
        first = ToolExecutor(cassette, classifier, tool_pack=pack, recorded=results, executed_before=before)
        state = _play_state(first)
        # construction marked the earlier calls played: their results and the HTTP tagged with them
        assert (state[0] and sum(state[1].values()) > 0) or not before
        run_turns([], later, make_model("replay", recording=transcript), first, label="baseline")
        assert _play_state(first) != state or not later  # the first one ran on
        copied = first.fresh()
        built = ToolExecutor(cassette, classifier, tool_pack=pack, recorded=results, executed_before=before)
        assert _play_state(copied) == _play_state(built) == state
        assert copied.cassette is not first.cassette and copied.cassette.data is first.cassette.data
        runs = [
            run_turns([], later, make_model("replay", recording=transcript), executor, label="compacted")
            for executor in (copied, built)
        ]
        assert runs[0].model_dump_json() == runs[1].model_dump_json()
        assert _play_state(copied) == _play_state(built)
        assert _play_state(first.fresh()) == state  # the state after construction, not after the runs
        checked += 1
    assert checked >= 3


def test_a_fresh_executor_of_a_changed_or_removed_cassette_starts_over(tmp_path) -> None:
    path = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            recorded_tool_interaction("lookup_order", {"order_id": "O-1"}, "first answer"),
            recorded_tool_interaction("lookup_order", {"order_id": "O-1"}, "second answer"),
        ],
    )
    first = ToolExecutor(path, ToolClassifier(), executed_before=[("lookup_order", {"order_id": "O-1"})])
    assert first.cassette.played == [0]
    path.unlink()
    write_cassette(path, [recorded_tool_interaction("lookup_order", {"order_id": "O-1"}, "only answer, changed")])
    copied = first.fresh()
    assert copied.cassette.data is not first.cassette.data
    assert (
        copied.cassette.played == [0]
        and copied.execute(  # its one answer counts as used: not served again
            ToolCallBlock(id="c", name="lookup_order", arguments={"order_id": "O-1"}), turn=0, step=0
        )[1].source
        != "cassette"
    )
    path.unlink()
    gone = first.fresh()
    assert gone.cassette is None and [d.code for d in gone.defects] == [Code.CASSETTE_MISSING]


def test_earlier_calls_are_marked_played_without_reading_their_responses(tmp_path) -> None:
    path = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            recorded_tool_interaction("lookup_order", {"order_id": "O-1"}, "first"),
            recorded_tool_interaction("lookup_order", {"order_id": "O-1"}, "second"),
        ],
    )
    executor = ToolExecutor(path, ToolClassifier(), executed_before=[("lookup_order", {"order_id": "O-1"})])
    assert executor.cassette.played == [0] and dict(executor.cassette.play_counts) == {0: 1}
    assert not executor.cassette.data.responses.converted(0)
    with executor:
        _, trace = executor.execute(
            ToolCallBlock(id="c", name="lookup_order", arguments={"order_id": "O-1"}), turn=0, step=0
        )
    assert (trace.result, trace.source) == ("second", "cassette")


def test_calls_off_the_leaf_path_are_played_so_the_path_gets_its_own_answers_and_a_repeat_is_blocked(
    tmp_path,
) -> None:
    """An abandoned branch ran `npm run check` and the same write before the path did: the
    cassette holds their answers first. The path's calls get the path's answers; a second write
    finds nothing left (blocked), as it would without the branch."""
    check, write = ("bash", {"command": "npm run check"}), ("write", {"path": "CHANGELOG.md", "content": "v1"})
    path = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            recorded_tool_interaction(*check, "3 errors: lint failed"),  # the abandoned branch
            recorded_tool_interaction(*write, "wrote it (abandoned branch)"),
            recorded_tool_interaction(*check, "All checks passed"),  # the path
            recorded_tool_interaction(*write, "wrote CHANGELOG.md"),
        ],
    )
    file_calls = [(*check, False), (*write, False), (*check, True), (*write, True)]

    def served(executor: ToolExecutor) -> list[tuple[str, str]]:
        with executor:
            return [
                (trace.source, trace.result)
                for i, (name, args) in enumerate([check, write, write])
                for _, trace in [executor.execute(ToolCallBlock(id=f"c{i}", name=name, arguments=args), turn=1, step=i)]
            ]

    executor = ToolExecutor(path, ToolClassifier(), file_calls=file_calls)
    on_path = served(executor)
    assert on_path[:2] == [("cassette", "All checks passed"), ("cassette", "wrote CHANGELOG.md")]
    assert on_path[2][0] == "blocked"
    assert served(executor.fresh()) == on_path  # the compacted run starts where construction left it
    # the control: without knowing the branch, the path is served the branch's answers and the repeat passes
    unaware = served(ToolExecutor(path, ToolClassifier()))
    assert unaware[0] == ("cassette", "3 errors: lint failed") and unaware[2][0] == "cassette"


def test_calls_off_path_are_the_importers_answered_calls_of_the_requests_a_branch_made(tmp_path) -> None:
    """`calls_off_path` pairs calls and results as the importer writes the cassette
    (`answered_calls`: FIFO by id, ids reused, errored messages' calls never ran, a call without a
    result has no interaction) and keeps only the requests a call off the path made."""
    from builders.transcripts import Session
    from replaylab.cassette import canonical_json
    from replaylab.replay import calls_off_path
    from replaylab.transcript.pairing import answered_calls

    check, write, other = ({"command": "npm run check"}, {"path": "a.txt"}, {"path": "b.txt"})
    s = Session("ids")
    s.user("Check it.")
    s.raw({"message": _call_message("c1", "bash", check)})
    s.result("c1", "bash", "first run")
    fork = s.assistant("It ran.")[0]
    s.user("Again, on a branch.")
    s.raw({"message": _call_message("c1", "bash", check)})  # the same id again
    s.result("c1", "bash", "branch run")
    s.raw({"message": _call_message("c2", "write", write, stop="error")})  # never ran
    s.raw({"message": _call_message("c9", "bash", check)})  # no result: in flight
    s.last = fork
    s.user("Again, for real.")
    s.raw({"message": _call_message("c1", "bash", check)})
    s.result("c1", "bash", "path run")
    s.raw({"message": _call_message("c2", "write", write)})
    s.result("c2", "write", "written")
    s.raw({"message": _call_message("c3", "read", other)})
    s.result("c3", "read", "b")
    transcript = load_transcript(s.write(tmp_path / "s.jsonl"))
    path = transcript.leaf_path()
    found = calls_off_path(transcript.entries, path)
    assert found == [("bash", check, True), ("bash", check, False), ("bash", check, True)]
    on_path = {entry.id for entry in path}
    answered = [(c.name, c.arguments, e.id in on_path) for e, c, _ in answered_calls(transcript.entries)]
    off = {(name, canonical_json(args)) for name, args, on in answered if not on}
    assert found == [a for a in answered if (a[0], canonical_json(a[1])) in off]
    assert calls_off_path(path, path) == []  # a file of one path: nothing to look at


def _call_message(call_id: str, name: str, args: dict, *, stop: str = "toolUse") -> dict:
    return {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": args}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-test",
        "stopReason": stop,
        "timestamp": 1775811600000,
    }


def test_off_path_calls_are_left_alone_where_the_cassette_holds_another_number_of_them(tmp_path) -> None:
    """Which interaction is whose is known only where the cassette holds one per answered call
    of the file: an edited cassette with one answer less marks nothing."""
    check = ("bash", {"command": "npm run check"})
    path = write_cassette(tmp_path / "s.cassette.yaml", [recorded_tool_interaction(*check, "All checks passed")])
    executor = ToolExecutor(path, ToolClassifier(), file_calls=[(*check, False), (*check, True)])
    assert executor.cassette.played == []
    assert executor.fresh().cassette.played == []


def test_a_recorded_tool_is_served_the_text_its_cassette_holds(tmp_path) -> None:
    """A recorded call, its arguments in another key order, finds the key its cassette computed
    on open and is served the loaded text: vcrpy's bytes of that response are never made."""
    from replaylab.replay.tools.recorded_tool import recorded_tool_key

    args = {"order_id": "ORD-91", "note": "é"}
    path = write_cassette(tmp_path / "s.cassette.yaml", [recorded_tool_interaction("lookup_order", args, "ok é")])
    executor = ToolExecutor(path, ToolClassifier(declared={"lookup_order": "read"}))
    assert recorded_tool_key("lookup_order", {"note": "é", "order_id": "ORD-91"}) == executor.cassette.data.keys[0]
    with executor:
        _, trace = executor.execute(
            ToolCallBlock(id="c", name="lookup_order", arguments={"note": "é", "order_id": "ORD-91"}), turn=0, step=0
        )
    assert (trace.result, trace.is_error, trace.source) == ("ok é", False, "cassette")
    assert not executor.cassette.data.responses.converted(0)


def test_recorded_tool_misses_are_kept_and_answered(tmp_path) -> None:
    """Calls the cassette cannot serve: each is kept as the request vcrpy would have been asked,
    and answered by kind — a write with no recording is blocked (an escaped side effect), a
    repeat of a write executed before the cut is blocked (a duplicate), a read is missing."""
    from replaylab.replay.tools.recorded_tool import recorded_tool_request

    cassette = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            recorded_tool_interaction("write", {"path": "a.txt", "content": "x"}, "ok"),
            recorded_tool_interaction("read", {"path": "a.txt"}, "x"),
        ],
    )
    rules = ToolClassifier()  # OpenClaw's name rules: `read` is safe, `write` mutates
    executor = ToolExecutor(cassette, rules, executed_before=[("write", {"path": "a.txt", "content": "x"})])
    calls = [
        ToolCallBlock(id="c1", name="write", arguments={"path": "b.txt", "content": "x"}),
        ToolCallBlock(id="c2", name="write", arguments={"path": "a.txt", "content": "x"}),
        ToolCallBlock(id="c3", name="write", arguments={"path": "a.txt", "content": "x"}),
        ToolCallBlock(id="c4", name="read", arguments={"path": "z.txt"}),
    ]
    with executor:
        traces = [executor.execute(call, turn=1, step=0)[1] for call in calls]
    assert [t.source for t in traces] == ["blocked", "blocked", "blocked", "missing"]
    assert [d.code for d in executor.defects] == [
        Code.SIDE_EFFECT_ESCAPED,
        Code.DUPLICATE_SIDE_EFFECT,
        Code.DUPLICATE_SIDE_EFFECT,
    ]
    first_miss = executor.cassette.misses[0]
    sent = recorded_tool_request("write", {"path": "b.txt", "content": "x"})
    assert (first_miss.method, first_miss.uri, first_miss.body) == (sent.method, sent.uri, sent.body)
    assert len(executor.cassette.misses) == 4


def test_a_write_recorded_with_a_lower_case_method_makes_a_read_tool_mislabelled(tmp_path) -> None:
    """A write recorded with a lower-case method (as a client may send it) is still a write: the
    evidence is the interaction tagged with the recorded call, and the tool's code never runs."""

    from replaylab.cassette import interaction
    from replaylab.replay.cassettes.interaction_tags import tagged
    from replaylab.replay.tools.pack import ToolPack, ToolSpec

    def lookup(args, ctx):
        raise AssertionError("replay must not run a tool's code")

    pack = ToolPack(
        name="t",
        tools={
            "lookup_order": ToolSpec(name="lookup_order", description="", parameters={}, tool_class="read", call=lookup)
        },
    )
    path = write_cassette(
        tmp_path / "s.cassette.yaml",
        [
            tagged(interaction("post", "http://127.0.0.1:9/orders/O-1/touch", "{}", 200, "ok"), "c1", "lookup_order"),
            tagged(interaction("GET", "http://127.0.0.1:9/orders/O-2", None, 200, "fine"), "c2", "lookup_order"),
        ],
    )
    messages = [
        {"role": "user", "content": "touch O-1"},
        {
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [{"type": "toolCall", "id": "c1", "name": "lookup_order", "arguments": {"id": "O-1"}}],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "lookup_order",
            "content": [{"type": "text", "text": "ok"}],
        },
    ]
    recording = tmp_path / "s.jsonl"
    recording.write_bytes(message_chain_jsonl(messages))
    results = RecordedResults.of(load_transcript(recording).leaf_path())
    executor = ToolExecutor(path, ToolClassifier.from_tool_pack(pack), tool_pack=pack, recorded=results)
    with executor:
        _, trace = executor.execute(
            ToolCallBlock(id="c9", name="lookup_order", arguments={"id": "O-1"}), turn=0, step=0
        )
    assert (trace.source, trace.result) == ("cassette", "ok")
    [defect] = executor.defects
    assert defect.code == Code.MISLABELLED_TOOL and [a.upper() for a in defect.actual] == ["POST /ORDERS/O-1/TOUCH"]


def test_a_call_the_recording_never_answered_is_answered_as_pi_shows_it_never_run(tmp_path):
    """A session compacted (or cut off) while a call was in flight: the call has no result anywhere
    on the path. pi shows it to the model with a synthetic error result; the replay answers its
    repeat the same way, once, never runs it, and neither blames the cassette nor reports an
    escaped side effect."""
    from builders.transcripts import Session
    from replaylab.importers import import_sessions, write_session
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite
    from replaylab.upstream.pi_0_73_1 import ORPHAN_TOOL_RESULT_TEXT

    s = Session()
    s.user("look at order 1001")
    s.tool_turn("get_order", {"order_id": "1001"}, '{"status": "delivered"}')
    s.assistant("It was delivered.")
    s.user("refund it")
    s.assistant("Refunding.", [("refund_order", {"order_id": "1001", "amount": 4250})])  # never answered
    s.user("where were we?")
    s.tool_turn("refund_order", {"order_id": "1001", "amount": 4250}, '{"refund_id": "re_1"}')
    s.assistant("Refunded: re_1.")
    source = s.write(tmp_path / "in-flight.jsonl")
    for session in import_sessions("pi", source):
        write_session(session, tmp_path / "recordings")
    suite = tmp_path / "recordings" / "suite.yaml"
    suite.write_text(
        "name: in-flight\nrecordings: in-flight.jsonl\ncompaction: {mode: auto, contextTokens: 100000, "
        "reserveTokensFloor: 1000}\ncompact_at: turn:2\n",
        encoding="utf-8",
    )
    result = run_item(load_suite(suite).scenarios[0], tmp_path / "recordings" / "in-flight.jsonl", RunOptions())
    codes = {d.code.value for d in result.defects}
    assert not codes & {"CASSETTE_MISSING", "SIDE_EFFECT_ESCAPED", "DUPLICATE_SIDE_EFFECT"}, result.reason
    calls = [c for turn in result.baseline.turns for c in turn.tool_calls if c.tool == "refund_order"]
    assert [c.source for c in calls] == ["unanswered", "cassette"]
    assert calls[0].result == ORPHAN_TOOL_RESULT_TEXT


#: a pi 1.6.0 `codemode` script, and the calls pi recorded it making (`nestedCalls`)
CODEMODE = {"code": "return await tools.read({path: 'notes.txt'})"}
READS = [("read", {"path": "notes.txt"}), ("grep", {"pattern": "bank", "path": "notes.txt"})]
WROTE = [("read", {"path": "notes.txt"}), ("write", {"path": "notes.txt", "content": "x"})]


def _codemode_executor(tmp_path, records: list) -> tuple[ToolExecutor, list[str]]:
    """The tools of a replay starting after a pi 1.6.0 session (written in the new folder
    `tmp_path`) whose `codemode` call ran the same script once per record of `records` (its
    `nestedCalls`: a list of calls, or (calls, complete)), answering from its recorded results;
    and the ledger's mutated event ids."""
    from builders.pi16_codemode import codemode_turn, pi16_session
    from replaylab.importers import import_sessions, write_session
    from replaylab.safety.ledger import build_ledger

    s = pi16_session()
    for record in records:
        nested, complete = record if isinstance(record, tuple) else (record, None)
        s.user("what do the notes say?")
        codemode_turn(s, CODEMODE["code"], nested, complete=complete)
        s.assistant("They say: bank.")
    s.user("and now?")
    tmp_path.mkdir()
    for session in import_sessions("pi", s.write(tmp_path / "cm.jsonl")):
        write_session(session, tmp_path / "rec")
    transcript = load_transcript(tmp_path / "rec" / "cm.jsonl")
    path = transcript.leaf_path()
    classifier = ToolClassifier()
    executor = ToolExecutor(
        cassette_path_for(tmp_path / "rec" / "cm.jsonl"),
        classifier,
        recorded=RecordedResults.of(path),
        executed_before=calls_before(path),
    )
    return executor, list(build_ledger(transcript, classifier).mutated_event_ids)


def _repeat(executor: ToolExecutor, arguments: dict = CODEMODE) -> tuple:
    """(source, mutating, finding codes) of one more call of the script, after the starting point."""
    with executor:
        _, trace = executor.execute(ToolCallBlock(id="again", name="codemode", arguments=arguments), turn=3, step=0)
    return trace.source, trace.mutating, [d.code for d in executor.defects]


def test_a_repeated_codemode_script_is_judged_as_the_ledger_judged_its_recorded_runs(tmp_path) -> None:
    """pi 1.6.0's `codemode` call whose result records a complete list of reads is a read for the
    ledger (safeguard may summarize it away), and so for the replay: its repeat after the starting
    point, its recorded answer used, is a read with no answer left — missing, not a repeated side
    effect — in the baseline's tools and the compacted run's (`fresh`). A script the recording
    never ran is still `exec`: blocked, an escaped side effect. The same script whose record holds
    a write, or was left incomplete (pi dropped calls or their arguments) in one of the
    recording's runs of it, mutated as the ledger counts it: its repeat is a repeated side effect."""
    executor, mutated = _codemode_executor(tmp_path / "read", [READS])
    assert mutated == []
    compacted = executor.fresh()
    assert _repeat(executor) == ("missing", False, [])
    assert _repeat(compacted) == ("missing", False, [])
    other = {"code": "await tools.write({path: 'notes.txt', content: 'x'})"}
    assert _repeat(executor.fresh(), other) == ("blocked", True, [Code.SIDE_EFFECT_ESCAPED])
    for name, records in [("wrote", [WROTE]), ("incomplete", [(READS, False)]), ("then", [READS, (READS, False)])]:
        executor, mutated = _codemode_executor(tmp_path / name, records)
        assert mutated, name
        assert _repeat(executor) == ("blocked", True, [Code.DUPLICATE_SIDE_EFFECT]), name
        assert _repeat(executor.fresh()) == ("blocked", True, [Code.DUPLICATE_SIDE_EFFECT]), name
