"""Replay that cannot touch the world: no tool pack code runs in a replay, so no side effect is
repeated, whatever route a tool takes to the outside world.

The hostile pack (`tests/packs/hostile`) has a mutating tool per route — file append, raw socket,
`asyncio.open_connection`, libc through `ctypes`, `curl` in a subprocess, `os.system`, a thread
that fires after the call returned. A session recorded with it (the recorder runs tools live:
each route really reaches the recording's service) is replayed against a *live* loopback service
that counts every connection, with a trap file path: baseline and compacted run, calls before and
after the compaction point. The counters stay 0, the file is never created, and the items'
verdicts are what the suite expects. The same holds for every bundled suite item with hostile
implementations of every helpdesk tool.

Live read tools (suite `live_read_tools: true`) run a read tool's own code, in a tool process
inside a network namespace of its own; a read tool that exits, hangs, leaves a thread or reaches
out is an infrastructure error naming it, and the run still writes its reports and exits non-zero.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builders.pytest_runs import run_replaylab
from packs.hostile import MISBEHAVING_READS, MUTATING, TRAP_FILE_ENV, CountingService
from replaylab.defects import Code
from replaylab.diagnostics import InputError
from replaylab.qa.item import item_id
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.replay import ToolExecutor, calls_before
from replaylab.replay.recorder import record_session
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.replay.tools.recorded_results import RecordedResults
from replaylab.safety.classify import ToolClassifier
from replaylab.suite import load_suite
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import ToolCallBlock
from repo_paths import (
    REPO_ROOT,
    TESTS,
)

REPO = REPO_ROOT
SCRIPT = TESTS / "packs" / "hostile" / "scripts" / "every-route.yaml"
#: how long the tests wait for a side effect that fires late (the delayed thread waits 0.05 s)
SETTLE_S = 0.5

SUITE = """\
name: hostile
recordings: rec/*.jsonl
tools: packs.hostile
live_read_tools: {live}
model: replay
compaction: {{mode: safeguard, contextTokens: 1200, reserveTokensFloor: 200, keepRecentTokens: 150,
             recentTurnsPreserve: 1}}
compact_at: turn:3
match: {{tools: strict, args: exact, answer: normalized}}
expect: {{defects: []}}
scenarios:
  - name: safeguard
  # tool results dropped: the bin of B-2000 is lost, so the delayed reminder's call misses
  - name: aggressive
    compaction: {{mode: aggressive}}
    expect: {{defects: [MUTATION_DROPPED, SIDE_EFFECT_ESCAPED], tolerate: [TOOL_SEQUENCE_DIVERGED, ANSWER_DIVERGED]}}
"""

BEFORE_THE_CUT = {"append_note", "socket_send", "asyncio_send"}
AFTER_THE_CUT = set(MUTATING) - BEFORE_THE_CUT


def _settled(service: CountingService) -> int:
    time.sleep(SETTLE_S)
    return service.connections


@pytest.fixture(scope="module")
def hostile_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The every-route session recorded live with the hostile pack, and its suites (live read
    tools off and on), in a folder of their own."""
    import packs.hostile as pack

    folder = tmp_path_factory.mktemp("hostile")
    services: list[CountingService] = []

    def start() -> CountingService:
        services.append(CountingService())
        return services[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(TRAP_FILE_ENV, str(folder / "recording-trap.txt"))
        patch.setattr(pack, "start_service", start)
        record_session(tools="packs.hostile", out_dir=folder / "rec", script=SCRIPT, pass_env=[TRAP_FILE_ENV])
    # the recorder ran every route for real: one connection per lookup and per network route
    assert _settled(services[0]) == 4 + len(MUTATING) - 1
    assert (folder / "recording-trap.txt").read_text().count("append_note") == 1
    services[0].stop()
    (folder / "hostile.yaml").write_text(SUITE.format(live="false"), encoding="utf-8")
    (folder / "hostile-live.yaml").write_text(SUITE.format(live="true"), encoding="utf-8")
    return folder


@pytest.fixture()
def trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A live counting service the tools are pointed at, and a file path they would write."""
    trap_file = tmp_path / "replay-trap.txt"
    monkeypatch.setenv(TRAP_FILE_ENV, str(trap_file))
    with CountingService() as service:
        monkeypatch.setenv("REPLAYLAB_TOOL_BASE_URL", service.url)
        yield service, trap_file


def _calls(result) -> list:
    return [c for run in (result.baseline, result.compacted) if run for t in run.turns for c in t.tool_calls]


@pytest.mark.parametrize("suite_name", ["hostile.yaml", "hostile-live.yaml"], ids=["recorded-reads", "live-reads"])
def test_replaying_every_side_effect_route_touches_nothing(hostile_session: Path, trap, suite_name: str) -> None:
    service, trap_file = trap
    suite = load_suite(hostile_session / suite_name)
    [recording] = suite.recordings
    results = {
        scenario.name: run_item(scenario, recording, RunOptions(work_dir=hostile_session))
        for scenario in suite.scenarios
    }
    assert _settled(service) == 0 and service.received == []
    assert not trap_file.exists()
    safeguard, aggressive = results["safeguard"], results["aggressive"]
    assert (safeguard.outcome, safeguard.defects) == ("passed", [])
    assert aggressive.outcome == "passed" and "negative control" in aggressive.reason
    [escaped] = [d for d in aggressive.defects if d.code == Code.SIDE_EFFECT_ESCAPED]
    assert escaped.where.tool == "delayed_send" and escaped.expected == {
        "tool": "delayed_send",
        "arguments": {"text": "BIN-0002-B"},
    }
    for result in results.values():
        calls = _calls(result)
        # calls before the compaction point are never replayed; after it, each is answered from
        # the recording (or blocked) — in both runs
        assert {c.tool for c in calls if c.mutating} == AFTER_THE_CUT
        assert {c.source for c in calls if c.mutating} <= {"cassette", "blocked"}
        assert all(c.source == "cassette" for c in calls if c.tool == "lookup")
    blocked = [c for c in aggressive.compacted.turns[-1].tool_calls if c.source == "blocked"]
    assert [c.tool for c in blocked] == ["delayed_send"] and "never executes a side effect" in blocked[0].result


def test_repeating_every_call_before_the_cut_is_a_duplicate_and_runs_nothing(hostile_session: Path, trap) -> None:
    """Calls before the starting point are marked played from the recording: their repeat is a
    DUPLICATE_SIDE_EFFECT, never executed — for every route."""
    service, trap_file = trap
    recording = hostile_session / "rec" / "every-route.jsonl"
    path = load_transcript(recording).leaf_path()
    pack = load_tool_pack("packs.hostile")
    executor = ToolExecutor(
        recording.with_name("every-route.cassette.yaml"),
        ToolClassifier.from_tool_pack(pack),
        tool_pack=pack,
        recorded=RecordedResults.of(path),
        executed_before=calls_before(path),
        base_url=service.url,
    )
    with executor:
        traces = [
            executor.execute(ToolCallBlock(id=f"again-{i}", name=name, arguments=args), turn=9, step=0)[1]
            for i, (name, args) in enumerate(calls_before(path))
        ]
    mutating = [t for t in traces if t.mutating]
    assert {t.tool for t in mutating} == set(MUTATING) and {t.source for t in mutating} == {"blocked"}
    assert [d.code for d in executor.defects] == [Code.DUPLICATE_SIDE_EFFECT] * len(MUTATING)
    assert {t.source for t in traces if not t.mutating} == {"missing"}  # reads already played too
    assert _settled(service) == 0 and not trap_file.exists()


def test_every_bundled_suite_item_with_hostile_tool_code_touches_nothing(trap, bundled_results) -> None:
    """Every item of every bundled suite, with each helpdesk tool's implementation replaced by
    one that takes all seven routes first: the same outcomes and defects as with the real pack
    (the run's one plain run of the bundled items), and the live service and the trap file see
    nothing."""
    service, trap_file = trap
    checked = 0
    for suite_file in sorted((REPO / "suites").glob("*.yaml")):
        suite = load_suite(suite_file)
        for scenario in suite.scenarios:
            hostile = scenario.model_copy(update={"tools": "packs.hostile_helpdesk"})
            for recording in suite.recordings:
                plain = bundled_results[item_id(recording, scenario)]
                trapped = run_item(hostile, recording, RunOptions(tool_base_url=service.url))
                assert (trapped.outcome, [d.code for d in trapped.defects]) == (
                    plain.outcome,
                    [d.code for d in plain.defects],
                ), trapped.id
                assert trapped.outcome in ("passed", "skipped"), (trapped.id, trapped.reason)
                checked += 1
    assert checked >= 4 * 13
    assert _settled(service) == 0 and service.received == [] and not trap_file.exists()


def test_the_bundled_suites_leave_the_helpdesk_service_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    """REPLAYLAB_TOOL_BASE_URL at the live helpdesk service: its counters stay 0, its rows unchanged."""
    from examples.helpdesk import start_service

    with start_service() as service:
        rows = service.row_counts()
        monkeypatch.setenv("REPLAYLAB_TOOL_BASE_URL", service.url)
        outcomes = [
            run_item(scenario, recording, RunOptions()).outcome
            for suite_file in sorted((REPO / "suites").glob("*.yaml"))
            for suite in [load_suite(suite_file)]
            for scenario in suite.scenarios
            for recording in suite.recordings
        ]
        assert service.read_requests == service.write_requests == 0 and service.row_counts() == rows
    assert outcomes and set(outcomes) <= {"passed", "skipped"}


# ---------------------------------------------------------------- live read tools


def _misbehaving_session(folder: Path, tools: list[str]) -> Path:
    """A recording whose agent calls these (misbehaving) read tools once each, and its cassette."""
    from builders.transcripts import Session
    from replaylab.cassette import write_cassette

    session = Session("misbehaving")
    session.user("Check everything.")
    for name in tools:
        session.tool_turn(name, {}, "{}")
    session.assistant("All checked.")
    recording = session.write(folder / "misbehaving.jsonl")
    write_cassette(folder / "misbehaving.cassette.yaml", [])
    return recording


def _live_executor(folder: Path, tools: list[str], *, timeout: float = 20.0) -> tuple[ToolExecutor, list]:
    recording = _misbehaving_session(folder, tools)
    path = load_transcript(recording).leaf_path()
    pack = load_tool_pack("packs.hostile")
    executor = ToolExecutor(
        recording.with_name("misbehaving.cassette.yaml"),
        ToolClassifier.from_tool_pack(pack),
        tool_pack=pack,
        recorded=RecordedResults.of(path),
        live_read_tools=True,
        tool_timeout_s=timeout,
    )
    calls = [c for e in path if e.message.role == "assistant" for c in e.message.tool_calls()]
    return executor, calls


def test_a_live_read_tool_runs_in_a_network_namespace_of_its_own(tmp_path: Path) -> None:
    executor, [call] = _live_executor(tmp_path, ["network_view"])
    try:
        with executor:
            _, trace = executor.execute(call, turn=0, step=0)
    finally:
        executor.close()
    view = json.loads(trace.result)
    assert trace.source == "cassette" and executor.defects == []
    assert view["netns"] != os.stat("/proc/self/ns/net").st_ino and view["interfaces"] == ["lo"]
    assert view["pid"] != os.getpid()


def test_live_read_tools_that_misbehave_are_infrastructure_errors_naming_them(tmp_path: Path, trap) -> None:
    """Exit, hard exit, an endless loop, a thread left running: each a TOOL_FAILED naming the
    tool, and the executor goes on with a new process after each. A tool reaching for the live
    service (loopback, which the guard allows) finds no network at all in its namespace."""
    service, _ = trap
    tools = ["read_exit", "read_hard_exit", "read_forever", "read_linger", "read_leak", "network_view"]
    assert set(tools) == set(MISBEHAVING_READS)
    executor, calls = _live_executor(tmp_path, tools, timeout=3.0)
    executor.base_url = service.url
    try:
        with executor:
            traces = [executor.execute(call, turn=0, step=i)[1] for i, call in enumerate(calls)]
    finally:
        executor.close()
    assert [t.source for t in traces] == ["blocked"] * 4 + ["cassette"] * 2
    failed = {d.where.tool: d for d in executor.defects if d.code == Code.TOOL_FAILED}
    assert set(failed) == {"read_exit", "read_hard_exit", "read_forever", "read_linger"}
    assert "SystemExit(0)" in failed["read_exit"].message
    assert "exit status 0" in failed["read_hard_exit"].message
    assert "did not answer within 3 s" in failed["read_forever"].message
    assert "hostile-linger" in failed["read_linger"].message
    assert traces[4].is_error and "Network is unreachable" in traces[4].result
    assert all(d.where.tool_call_id for d in executor.defects) and len(executor.defects) == 4
    assert _settled(service) == 0


def test_live_read_tools_are_refused_where_no_network_namespace_can_be_made(
    tmp_path: Path, trap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `unshare` on PATH: the calls are refused with the reason, once, and no code runs."""
    service, _ = trap
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    executor, calls = _live_executor(tmp_path, ["read_leak", "network_view"])
    executor.base_url = service.url
    try:
        with executor:
            traces = [executor.execute(call, turn=0, step=i)[1] for i, call in enumerate(calls)]
    finally:
        executor.close()
    assert [t.source for t in traces] == ["blocked", "blocked"]
    [refused] = executor.defects
    assert refused.code == Code.TOOL_FAILED and "unshare" in refused.message and "network namespace" in refused.message
    assert all("could not be run" in t.result for t in traces)
    assert _settled(service) == 0


def test_live_read_tools_are_refused_on_a_cassette_without_tool_call_tags(
    hostile_session: Path, tmp_path: Path, trap
) -> None:
    """A cassette recorded before the tags: the HTTP of the calls before the cut cannot be marked
    played, so a live read could get an earlier answer — refused, once, naming the tool."""
    from replaylab.cassette import load_cassette, write_cassette
    from replaylab.replay.cassettes.interaction_tags import TAG_KEY

    service, _ = trap
    rec = tmp_path / "rec"
    rec.mkdir()
    shutil.copyfile(hostile_session / "rec" / "every-route.jsonl", rec / "every-route.jsonl")
    interactions = load_cassette(hostile_session / "rec" / "every-route.cassette.yaml")
    write_cassette(
        rec / "every-route.cassette.yaml", [{k: v for k, v in i.items() if k != TAG_KEY} for i in interactions]
    )
    (tmp_path / "hostile-live.yaml").write_text(SUITE.format(live="true"), encoding="utf-8")
    suite = load_suite(tmp_path / "hostile-live.yaml")
    result = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(work_dir=tmp_path))
    assert result.outcome == "error"
    [refused] = [d for d in result.defects if d.code == Code.TOOL_FAILED]
    assert refused.where.tool == "lookup" and "re-record it" in refused.message
    assert _settled(service) == 0


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to become another user")
def test_a_user_without_privileges_gets_a_network_namespace_too(tmp_path: Path) -> None:
    """`unshare --map-root-user --net` for a user that is not root (where the kernel allows it)."""
    from replaylab.replay.tools.netns import namespace_commands

    probe = "import os, socket; print(os.stat('/proc/self/ns/net').st_ino, [n for _, n in socket.if_nameindex()])"
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *namespace_commands()[0][-1]]
        + ["python3", "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    if done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip(f"this kernel does not let unprivileged users make namespaces: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    inode, interfaces = done.stdout.split(" ", 1)
    assert int(inode) != os.stat("/proc/self/ns/net").st_ino and interfaces.strip() == "['lo']"


def test_a_live_read_tool_that_ends_the_process_errors_the_item_and_the_run_still_reports(tmp_path: Path) -> None:
    """Through pytest in a fresh process: the item is an error naming the tool, every report is
    written, and the exit status is not 0."""
    from builders.transcripts import Session
    from replaylab.cassette import write_cassette

    rec = tmp_path / "rec"
    rec.mkdir()
    session = Session("ends")
    session.user("Look at item A-1 in detail. " + "Please be thorough. " * 40)
    session.tool_turn("lookup", {"item": "A-1"}, '{"item": "A-1"}')
    session.assistant("A-1 looked up. " + "Details follow. " * 40)
    session.user("Now check the system.")
    session.tool_turn("read_hard_exit", {}, "{}")
    session.assistant("Checked.")
    session.write(rec / "ends.jsonl")
    write_cassette(rec / "ends.cassette.yaml", [])
    (tmp_path / "suite.yaml").write_text(
        "name: ends\nrecordings: rec/*.jsonl\ntools: packs.hostile\nlive_read_tools: true\n"
        # a budget of its own: the session is under the size the auto budget compacts at all
        "compaction: {mode: manual, contextTokens: 400, reserveTokensFloor: 100, keepRecentTokens: 50}\n"
        "compact_at: turn:2\n",
        encoding="utf-8",
    )
    done = run_replaylab(tmp_path, "suite.yaml", pythonpath=[TESTS, REPO])
    assert done.returncode not in (0, 4), done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "reports" / "replaylab.json").read_text())
    [item] = report["items"]
    assert item["outcome"] == "error" and report["totals"]["error"] == 1
    [failed] = [d for d in item["defects"] if d["code"] == "TOOL_FAILED"]
    assert failed["where"]["tool"] == "read_hard_exit" and "ended its process" in failed["message"]
    assert (tmp_path / "reports" / "replaylab.html").is_file() and (tmp_path / "reports" / "replaylab.md").is_file()
    assert "<error" in (tmp_path / "reports" / "junit.xml").read_text()


# ---------------------------------------------------------------- the recorder


@pytest.mark.parametrize(
    "tool,says",
    [
        ("read_exit", "tried to end its process (SystemExit(0))"),
        ("read_hard_exit", "ended its process (exit status 0)"),
        ("read_forever", "did not answer within 2 s"),
        ("read_linger", "left 1 thread(s) running (hostile-linger)"),
        ("read_leak", None),
    ],
)
def test_recording_a_tool_that_misbehaves_fails_naming_it_and_writes_nothing(
    tmp_path: Path, tool: str, says: str | None
) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text(
        f"name: bad\nturns:\n  - user: go\n    steps:\n      - tool_calls: [{{name: {tool}, arguments: {{}}}}]\n"
        "      - say: done\n",
        encoding="utf-8",
    )
    if tool == "read_leak":  # loopback is allowed while recording: the service answers, nothing fails
        record_session(tools="packs.hostile", out_dir=tmp_path / "ok", script=script)
        return
    with pytest.raises(InputError) as error:
        record_session(tools="packs.hostile", out_dir=tmp_path / "out", script=script, tool_timeout_s=2.0)
    message = str(error.value)
    assert f"tool {tool!r}" in message and says in message and "nothing was written" in message
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ---------------------------------------------------------------- the suite key


def test_live_read_tools_is_a_validated_suite_key(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    (tmp_path / "r.jsonl").write_text("", encoding="utf-8")
    suite.write_text("name: s\nrecordings: r.jsonl\nlive_read_tools: sometimes\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_suite(suite)
    [diagnostic] = error.value.diagnostics
    assert (diagnostic.line, diagnostic.field) == (3, "live_read_tools") and "sometimes" in diagnostic.message
    suite.write_text("name: s\nrecordings: r.jsonl\n", encoding="utf-8")
    assert [s.live_read_tools for s in load_suite(suite).scenarios] == [False]


def test_a_pack_whose_module_reaches_out_on_import_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pack's module is imported in a process of its own (`pack_data`), under the socket
    guard and without a network: an import that reaches for the network fails there, with the
    pack named, and never in replaylab's process."""
    from replaylab.qa.setup import load_pack
    from replaylab.replay.tools.pack_data import PackFailure

    name = f"rl_phone_home_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "import socket\nsocket.getaddrinfo('phone-home.example.invalid', 443)\nTOOLS = []\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "r.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "s.yaml").write_text(f"name: s\nrecordings: r.jsonl\ntools: {name}\n", encoding="utf-8")
    [scenario] = load_suite(tmp_path / "s.yaml").scenarios
    with pytest.raises(PackFailure) as error:
        load_pack(scenario)
    assert error.value.pack == name and "failed to import: NetworkBlockedError" in str(error.value)
    assert name not in sys.modules
