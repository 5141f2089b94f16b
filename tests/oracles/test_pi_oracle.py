"""The window replaylab tests is the context real pi builds.

Every check here asks the pinned pi itself (`replaylab.oracles.pi`): for a transcript, pi's
`buildSessionContext` must equal replaylab's `build_window` position by position (source entry,
role, message), pi's `estimateTokens` must equal replaylab's estimate for every message, and pi's
`prepareCompaction` must cut where replaylab cuts. For a working copy `compact()` wrote, pi's
context must also equal the result's `compactedWindow` and hold every entry safeguard protects
(restated after the summary: by the recorded entry each restated entry names), verbatim, in
chronological order, every call followed by its results; and the working copy's ledger right after
the compaction must be the ledger right before it — the recording's, for a first compaction.

Without node or the oracle's npm install these tests skip with the reason (under CI=true they fail:
`.ci/run` installs the oracle with `npm ci`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from replaylab.compaction import CompactParams, compact
from replaylab.compaction.cutpoint import compute_cut_point
from replaylab.oracles.agent import AgentCut, AgentOracle, AgentView, AgentWindow
from replaylab.oracles.compare import context_mismatches, message_as_pi_holds_it
from replaylab.oracles.pi import PiOracle, PiView
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.tokens import estimate_tokens
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
BUNDLED = sorted((REPO / "recordings" / "helpdesk").glob("*.jsonl"))
MODES = ("safeguard", "auto", "aggressive", "manual")
KEEP_RECENT = (20_000, 2_000, 500)


def window_tokens(path: Path) -> int:
    return sum(estimate_tokens(w.message) for w in build_window(load_transcript(path).leaf_path()))


def copies(recording: Path, folder: Path, classifier=None) -> dict[str, tuple[object, Path]]:
    """`compact()` of `recording` in every mode, each into its own working copy, at a budget
    that makes the session compact (a budget below its window, a tail of a sixth of it)."""
    tokens = window_tokens(recording)
    out = {}
    for mode in MODES:
        copy = folder / f"{recording.stem}.{mode}.jsonl"
        params = CompactParams(
            session_file=str(recording),
            compaction_mode=mode,
            context_tokens=max(3_000, int(tokens * 0.8)) + 1_000,
            reserve_tokens_floor=1_000,
            keep_recent_tokens=max(200, tokens // 6),
            working_copy=str(copy),
        )
        out[mode] = (compact(params, classifier=classifier), copy)
    return out


def disagreements(path: Path, view: PiView) -> list[str]:
    """Where replaylab's window of `path` and pi's context of it (`view`) differ."""
    return [str(m) for m in context_mismatches(build_window(load_transcript(path).leaf_path()), view)]


def compacted_window_mismatches(result, view: PiView) -> list[str]:
    ours = [
        (item["entryId"], message_as_pi_holds_it(item["message"]), item["tokens"]) for item in result.compacted_window
    ]
    theirs = [(m.entry_id, m.message, m.tokens) for m in view.context]
    if len(ours) != len(theirs):
        return [f"compactedWindow has {len(ours)} messages, pi's context {len(theirs)}"]
    return [f"position {i}: {a[0]} vs {b[0]}" for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]


class Tally:
    """Counts for the closing note: what was compared and what differed."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.problems: list[str] = []

    def check(self, what: str, problems: list[str]) -> None:
        self.counts[what] += 1
        if problems:
            self.counts[what + " differ"] += 1
            self.problems.append(f"{what}: {problems[:3]}")


def protected_problems(view: PiView, copy: Path, result, classifier=None) -> dict[str, list[str]]:
    """What pi's context of a working copy does wrong by safeguard's promise: protected entries it
    does not show (a restated entry shows the recorded entry it names), entries out of chronological
    order, broken pairs, and a ledger the compaction changed."""
    from replaylab.compaction.invariants import check_pairs
    from replaylab.safety.classify import ToolClassifier
    from replaylab.safety.ledger import build_ledger
    from replaylab.transcript.restated import restated_sources

    transcript = load_transcript(copy)
    after = transcript.path_to(result.leaf_id or result.compaction_event_id)
    before = transcript.path_to(result.compaction_event_id)[:-1]
    sources = restated_sources(after)
    shown = [sources.get(m.entry_id, m.entry_id) for m in view.context[1:]]
    missing = sorted(set(result.protected_entry_ids) - set(shown))
    order = {e.id: i for i, e in enumerate(before)}
    positions = [order[i] for i in shown if i in order]
    classifier = classifier or ToolClassifier()
    ledgers = [build_ledger(transcript, classifier, path=p).events for p in (before, after)]
    return {
        "protected in pi's context": [f"missing {missing[:5]}"] if missing else [],
        "chronological": [] if positions == sorted(positions) else [f"order {shown[:8]}"],
        "pairs": [d.message for d in check_pairs(before, build_window(after))][:3],
        "ledger": [] if ledgers[0] == ledgers[1] else [f"{len(ledgers[0])} events before, {len(ledgers[1])} after"],
    }


def check_copy(
    tally: Tally, mode: str, result, copy: Path, view: PiView, protected_count: str, classifier=None
) -> None:
    """A working copy `compact()` wrote against pi's context of it (`view`): replaylab's window of
    the copy, the result's `compactedWindow`, and safeguard's promise (`protected_problems`)."""
    tally.check(f"{mode} copy", disagreements(copy, view))
    tally.check(f"{mode} compactedWindow", compacted_window_mismatches(result, view))
    tally.counts[protected_count] += len(result.protected_entry_ids)
    for what, problems in protected_problems(view, copy, result, classifier).items():
        if mode in ("safeguard", "manual") or what == "ledger":
            tally.check(f"{mode} {what}", problems)


def check_recording(pi: PiOracle, recording: Path, folder: Path, tally: Tally, classifier=None) -> None:
    tally.check("recording", disagreements(recording, pi.view(recording)))
    for mode, (result, copy) in copies(recording, folder, classifier).items():
        if not result.success:
            tally.counts[f"{mode} not compacted"] += 1
            continue
        check_copy(tally, mode, result, copy, pi.view(copy), "protected", classifier)


def pipeline_compactions(
    pi: PiOracle, scenario, recording: Path, tally: Tally, *, recording_checked: bool = False
) -> None:
    """Every compaction the QA pipeline makes for one item, checked against pi as it happens: the
    working copy then ends in the new compaction entry, which is the leaf pi rebuilds from. The
    recording is checked too, unless the caller did (`recording_checked`: one recording, many
    scenarios). The pipeline's own agent check is off: every copy it would ask about is asked here."""
    from replaylab.compaction import compact as real_compact
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    def checked(params, *, classifier=None, writer=None):
        result = real_compact(params, classifier=classifier, writer=writer)
        mode = params.compaction_mode
        if not result.success:
            tally.counts[f"{mode} not compacted"] += 1
            return result
        copy = Path(params.session_file)
        check_copy(tally, mode, result, copy, pi.view(copy), f"{mode} protected", classifier)
        return result

    if not recording_checked:
        tally.check("recording", disagreements(recording, pi.view(recording)))
    run_item(scenario, recording, RunOptions(compactor=checked, verify_with_pi="off"))


def test_every_bundled_suite_item_compacts_to_pis_context(pi):
    from replaylab.suite import load_suite

    tally = Tally()
    asked: set[Path] = set()  # the suites share recordings: each is checked once
    for suite_file in sorted((REPO / "suites").glob("*.yaml")):
        suite = load_suite(suite_file)
        for scenario in suite.scenarios:
            for recording in suite.recordings:
                pipeline_compactions(pi, scenario, recording, tally, recording_checked=recording in asked)
                asked.add(recording)
    print(dict(tally.counts))
    for mode in MODES:
        assert tally.counts[f"{mode} copy"] >= 5, f"too few {mode} compactions to compare: {dict(tally.counts)}"
    assert not tally.problems, f"{len(tally.problems)} disagreements:\n" + "\n".join(tally.problems[:20])


def test_working_copies_of_compact_in_every_mode_are_pis_context(pi, tmp_path):
    from replaylab.replay.tools.pack import load_tool_pack
    from replaylab.safety.classify import ToolClassifier

    helpdesk = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))
    tally = Tally()
    for recording in BUNDLED:
        check_recording(pi, recording, tmp_path, tally, helpdesk)
    print(dict(tally.counts))
    assert tally.counts["recording"] == len(BUNDLED) and tally.counts["auto copy"] >= len(BUNDLED) // 2
    assert tally.counts["safeguard copy"] >= len(BUNDLED) // 2 and tally.counts["protected"] > 0
    assert not tally.problems, "\n".join(tally.problems[:20])


def cut_mismatches(transcript, view: AgentView, cut: AgentCut) -> list[str]:
    """replaylab's cut of `transcript` against pi's `cut` (of `view`, at the keep it was asked with)."""
    entries = transcript.leaf_path()
    if cut.refused is not None:
        return [] if entries and entries[-1].type == "compaction" else [f"pi would not compact ({cut.refused})"]
    ours_cut = compute_cut_point(entries, cut.keep_recent_tokens)
    ours = entries[ours_cut.first_kept_index].id if ours_cut.first_kept_index < len(entries) else None
    theirs = cut.first_kept_entry_id
    if view.migrated:  # pi gave a v1 file's entries random ids: compare positions in file order
        file_order = [e.id for e in transcript.entries]
        ours = file_order.index(ours) if ours in file_order else None
        theirs = view.entry_ids.index(theirs) if theirs in view.entry_ids else None
    problems = []
    if ours != theirs:
        problems.append(f"first kept {ours} vs pi {theirs}")
    if ours_cut.is_split_turn != cut.is_split_turn:
        problems.append(f"split turn {ours_cut.is_split_turn} vs pi {cut.is_split_turn}")
    return problems


def token_mismatches(transcript, view: AgentWindow) -> list[str]:
    window = build_window(transcript.leaf_path())
    return [
        f"{w.entry_id}: {estimate_tokens(w.message)} vs pi {m.tokens}"
        for w, m in zip(window, view.context)
        if m.tokens is not None and estimate_tokens(w.message) != m.tokens
    ]


def check_tokens_and_cuts(pi: PiOracle, recording: Path, tally: Tally) -> None:
    """pi's token estimates and its cut at each of `KEEP_RECENT`, asked in one request (the window
    protocol: the file's own leaf, a cut per setting)."""
    view = AgentOracle.view(pi, recording, keep_recent_tokens=KEEP_RECENT)
    (window,) = view.windows
    assert [c.keep_recent_tokens for c in window.cuts] == list(KEEP_RECENT), window.error
    transcript = load_transcript(recording)
    tally.check("tokens", token_mismatches(transcript, window))
    for cut in window.cuts:
        tally.check(f"cut at {cut.keep_recent_tokens}", cut_mismatches(transcript, view, cut))


def test_token_estimates_and_cut_points_of_bundled_recordings_are_pis(pi):
    tally = Tally()
    for recording in BUNDLED:
        check_tokens_and_cuts(pi, recording, tally)
    assert not tally.problems, "\n".join(tally.problems[:20])


@pytest.fixture(scope="module")
def real_sessions(shared_data, real_session_files) -> dict[str, list[Path]]:
    """The real files: the pi fixtures as they are (v1 and v3), and every source imported to v3."""
    raw = sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))
    return {"raw pi fixtures": raw, "imported": real_session_files}


@pytest.mark.realdata
def test_real_sessions_compact_to_pis_context_in_every_mode(pi, real_sessions):
    """The real-session sweep's scenario (a budget fitted to each session), in every mode."""
    from replaylab.qa.sweep import sweep_scenario

    tally = Tally()
    for recording in real_sessions["raw pi fixtures"] + real_sessions["imported"]:
        scenario, *_ = sweep_scenario(recording)
        tally.check("recording", disagreements(recording, pi.view(recording)))
        if scenario is None:
            continue
        for mode in MODES:
            moded = scenario.model_copy(
                update={"compaction": scenario.compaction.model_copy(update={"mode": mode}), "name": mode}
            )
            pipeline_compactions(pi, moded, recording, tally, recording_checked=True)
    print(dict(tally.counts))
    assert not tally.problems, f"{len(tally.problems)} disagreements:\n" + "\n".join(tally.problems[:20])


@pytest.mark.realdata
def test_real_cut_points_and_token_estimates_are_pis(pi, real_sessions):
    tally = Tally()
    for recording in real_sessions["raw pi fixtures"] + real_sessions["imported"]:
        check_tokens_and_cuts(pi, recording, tally)
    print(dict(tally.counts))
    assert not tally.problems, f"{len(tally.problems)} disagreements:\n" + "\n".join(tally.problems[:20])


def test_generated_sessions_and_their_compactions_are_pis_context(pi, tmp_path):
    """The bench's generated sessions (varied sizes, parallel calls, thinking, tools of every class):
    each as it is, its working copies in every mode, and every compaction of its pipeline run."""
    from bench.cases.pipeline import make_sessions
    from replaylab.suite import load_suite

    suite = load_suite(make_sessions(tmp_path / "generated", 24))
    tally = Tally()
    for recording in suite.recordings:
        check_recording(pi, recording, tmp_path, tally)
        check_tokens_and_cuts(pi, recording, tally)
        pipeline_compactions(pi, suite.scenarios[0], recording, tally)
    print(dict(tally.counts))
    assert tally.counts["recording"] >= 2 * len(suite.recordings) and tally.counts["safeguard copy"] >= 5
    assert not tally.problems, f"{len(tally.problems)} disagreements:\n" + "\n".join(tally.problems[:20])


def test_a_stalled_oracle_is_asked_again_in_a_fresh_process(monkeypatch, capfd):
    """A node process that stops answering (here really stopped, with SIGSTOP, as a starved
    machine may leave it) costs one wait: the request goes once more to a fresh process, which
    answers it; one that never answers ends in an error naming both attempts."""
    import os
    import signal

    import replaylab.oracles.agent as agent

    recording = REPO_ROOT / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"
    with PiOracle() as oracle:
        expected = oracle.view(recording)
        stalled = oracle._process
        assert stalled is not None
        # a fresh node must start and answer within it, on a machine that may be busy
        monkeypatch.setattr(agent, "REQUEST_TIMEOUT_S", 6.0)
        os.kill(stalled.pid, signal.SIGSTOP)
        try:
            again = oracle.view(recording)
        finally:
            if stalled.poll() is None:
                os.kill(stalled.pid, signal.SIGCONT)
        assert stalled.poll() is not None, "the stalled process was left running"
        assert oracle._process is not None and oracle._process.pid != stalled.pid
        assert again == expected
        assert "did not answer within 6 s (attempt 1 of 2)" in capfd.readouterr().err

        # every process stopped, the running one and the fresh one started for the second attempt:
        # a process left running may answer before a busy machine gets to the 0-s wait
        popen = agent.subprocess.Popen

        def started_stopped(*args, **kwargs):
            process = popen(*args, **kwargs)
            os.kill(process.pid, signal.SIGSTOP)
            return process

        monkeypatch.setattr(agent.subprocess, "Popen", started_stopped)
        assert oracle._process is not None
        os.kill(oracle._process.pid, signal.SIGSTOP)
        monkeypatch.setattr(agent, "REQUEST_TIMEOUT_S", 0.0)
        with pytest.raises(agent.OracleError, match="did not answer within 0 s, 2 times, each in a fresh process"):
            oracle.view(recording)


def test_an_oracle_started_ahead_answers_from_that_process_and_one_never_asked_is_stopped(pi):
    """`start()` runs the agent's process before any request (its start then overlaps the caller's
    work): the first request is answered by that process, which exits at `close()` once its input
    ends. A process started and never asked is stopped at `close()`, not waited for through the
    import of its agent."""
    import signal

    recording = REPO_ROOT / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"
    with PiOracle() as oracle:
        oracle.start()
        started = oracle._process
        assert started is not None and started.poll() is None
        oracle.start()  # running already: the same process
        assert oracle._process is started
        assert oracle.view(recording) == pi.view(recording)
        assert oracle._process is started
    assert started.returncode == 0

    unasked = PiOracle()
    unasked.start()
    process = unasked._process
    assert process is not None and process.poll() is None
    unasked.close()
    assert process.returncode == -signal.SIGKILL


def test_requests_sent_ahead_are_answered_in_order_each_of_the_file_as_the_agent_read_it(pi, tmp_path):
    """`view_later` sends a request and returns at once; answers come in order, so a request
    sent while another is in flight first reads (and keeps) the earlier one's answer. Once
    `settle` returns the agent has read the file: changing it then does not change that answer.
    `close` with an answer nobody read stops the process instead of waiting on it."""
    import json
    import shutil
    import signal

    from replaylab.upstream.pi_0_73_1 import PROFILE

    first = Path(shutil.copy(REPO / "recordings" / "helpdesk" / "cancel-two-orders.jsonl", tmp_path / "a.jsonl"))
    second = Path(
        shutil.copy(REPO / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl", tmp_path / "b.jsonl")
    )
    with AgentOracle(PROFILE) as direct:
        expected = {path: direct.view(path) for path in (first, second)}
    with AgentOracle(PROFILE) as oracle:
        ahead = [oracle.view_later(first), oracle.view_later(second)]
        assert oracle.view(first) == expected[first]  # asked last, answered with its own
        assert [pending.view() for pending in ahead] == [expected[first], expected[second]]

        pending = oracle.view_later(first)
        pending.settle()
        leaf = expected[first].leaf_id
        with first.open("a", encoding="utf-8") as out:
            entry = {
                "type": "message",
                "id": "later01",
                "parentId": leaf,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": "one more question", "timestamp": 0},
            }
            out.write(json.dumps(entry) + "\n")
        assert pending.view() == expected[first]
        assert oracle.view(first).leaf_id == "later01"

        oracle.view_later(second)
        process = oracle._process
        assert process is not None
    assert process.returncode == -signal.SIGKILL


def test_an_answer_orjson_refuses_is_read_as_json_reads_it(pi):
    """Answers are read by orjson, which refuses two things `JSON.stringify` writes and `json`
    reads: a lone surrogate, escaped (pi echoes a transcript's text as it holds it), and an integer
    past 64 bits. Such an answer is read by `json`, to the same values; any other, alike by both."""
    import json

    import orjson

    from replaylab.oracles.agent import _answer

    line = b'{"text": "order \\ud800 1001", "big": 123456789012345678901234567890, "n": [1.5, -0.0, 1e300]}'
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(line)
    assert _answer(line) == json.loads(line)
    assert _answer(line)["big"] == 123456789012345678901234567890
    plain = b'{"text": "caf\\u00e9 \\ud83d\\ude00", "n": [1, 2.5e-7]}'
    assert _answer(plain) == json.loads(plain) == orjson.loads(plain)

    # pi itself, on a transcript whose user message holds a lone surrogate
    view = pi.view(REPO_ROOT / "tests" / "data" / "bad" / "transcript-lone-surrogate.jsonl")
    assert view.context[0].message["content"] == "Refund order 1001 \ud800 please."


@pytest.mark.parametrize(
    "details",
    [["written by a hook", 1], {"readFiles": "/srv/notes.txt", "modifiedFiles": ["src/orders.py"]}],
    ids=["a-list", "read-files-not-a-list"],
)
def test_entries_with_fields_of_types_pi_does_not_check_are_in_the_window_as_in_pis(pi, tmp_path, details):
    """pi's loader checks no field's type: an entry timestamp in epoch milliseconds, a message
    timestamp as an ISO string and a compaction whose `details` is a list (`details?: T`) are all
    in its session. replaylab reads them too, with nothing skipped: the window is pi's. Compacting
    after that compaction takes from its details only the file lists that are lists, as pi does
    (`Array.isArray(details.readFiles)`)."""
    from builders.transcripts import Session

    session = Session("odd-types")
    session.user("look up order W1001")
    session.tool_turn("get_order_details", {"order_id": "W1001"}, "W1001: pending, 2 items")
    session.lines[-1]["timestamp"] = 1775811660000  # an entry timestamp pi would write as a string
    kept = session.user("and the second order?")
    session.lines[-1]["message"]["timestamp"] = (
        "2026-04-10T09:01:00.000Z"  # a message timestamp pi would write as a number
    )
    session.assistant("W1002 is delivered.")
    session.raw(
        {
            "type": "compaction",
            "summary": "The user asked about orders W1001 and W1002.",
            "firstKeptEntryId": kept,
            "tokensBefore": 900,
            "details": details,
            "fromHook": False,
        }
    )
    for order in range(3):
        session.user(f"thanks, what did order W10{order:02d} hold? " + "Tell me everything. " * 20)
        session.tool_turn("get_order_details", {"order_id": f"W10{order:02d}"}, "an item, " * 80)
        session.assistant("It held these items: " + "an item, " * 40)
    path = session.write(tmp_path / "odd-types.jsonl")

    transcript = load_transcript(path)
    assert [d for d in transcript.diagnostics if d.code == "invalid-entry"] == []
    assert len(transcript.leaf_path()) == len(session.lines) - 1
    assert disagreements(path, pi.view(path)) == []

    copy = tmp_path / "odd-types.compacted.jsonl"
    params = CompactParams(
        session_file=str(path),
        compaction_mode="auto",
        context_tokens=1_200,
        reserve_tokens_floor=200,
        keep_recent_tokens=20,
        working_copy=str(copy),
    )
    result = compact(params)
    assert result.success, result.error
    assert "written by a hook" not in result.summary_text and "<read-files>" not in result.summary_text
    assert ("<modified-files>\nsrc/orders.py\n</modified-files>" in result.summary_text) == isinstance(details, dict)


def test_numbers_the_file_writes_as_floats_compare_as_pi_holds_them(pi, tmp_path):
    """pi holds `2.0` as `2` and `-0.0` as `0` (`JSON.parse`): a window message with such numbers
    equals pi's as it is, and one number that differs is still a difference."""
    from builders.transcripts import Session

    session = Session("numbers")
    session.user("count them")
    session.tool_turn("count", {"count": 2.0, "offset": -0.0, "share": 0.25, "big": 1e300, "ids": [1.0, 7]}, "3")
    path = session.write(tmp_path / "numbers.jsonl")
    view = pi.view(path)
    assert view.context[1].message["content"][0]["arguments"]["count"] == 2
    assert type(view.context[1].message["content"][0]["arguments"]["count"]) is int
    window = build_window(load_transcript(path).leaf_path())
    assert type(message_as_pi_holds_it(window[1].message)["content"][0]["arguments"]["count"]) is float
    assert context_mismatches(window, view) == []
    view.context[1].message["content"][0]["arguments"]["share"] = 0.5
    [mismatch] = context_mismatches(window, view)
    assert (mismatch.position, mismatch.what, mismatch.replaylab) == (1, "message", ["content"])


#: pi's own `SessionManager.open` of a copy: whether it rewrote the copy as it loaded it
PI_OPENS_A_COPY = """
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
const { SessionManager } = await import("./node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js");
const [file, folder] = process.argv.slice(1);
const copy = join(folder, "copy.jsonl");
copyFileSync(file, copy);
SessionManager.open(copy, folder);
process.stdout.write(JSON.stringify(!readFileSync(copy).equals(readFileSync(file))));
"""

PI_REWRITES = {
    "v1": '{"type":"session","id":"s1","timestamp":"t","cwd":"/w"}\n'
    '{"type":"message","timestamp":"t","message":{"role":"user","content":"hello","timestamp":1}}\n',
    "v2 with a hook message": '{"type":"session","id":"s2","version":2,"timestamp":"t","cwd":"/w"}\n'
    '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"hookMessage",'
    '"customType":"x","content":"hi","display":true,"timestamp":1}}\n',
    "no session header": '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user",'
    '"content":"hello","timestamp":1}}\n',
    "empty": "",
    "v3": '{"type":"session","id":"s3","version":3,"timestamp":"t","cwd":"/w"}\n'
    '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hello",'
    '"timestamp":1}}\n',
}


@pytest.mark.parametrize("kind", list(PI_REWRITES))
def test_a_file_pi_would_rewrite_is_read_where_it_is_and_left_as_it_was(pi, tmp_path, kind):
    """The oracle reads the file itself with pi's writes off: the bytes stay as they were, and
    `migrated` says what pi's own `SessionManager.open` does to a copy of it (rewrites a v1 or v2
    file and one holding no session; leaves a v3 file)."""
    import hashlib
    import subprocess

    from replaylab.oracles.pi import NODE_DIR, node_executable

    path = tmp_path / "session.jsonl"
    path.write_text(PI_REWRITES[kind], encoding="utf-8")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    view = pi.view(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the oracle changed the file"
    scratch = tmp_path / "pi-own"
    scratch.mkdir()
    node = node_executable()
    assert node is not None
    done = subprocess.run(
        [node, "--input-type=module", "-e", PI_OPENS_A_COPY, str(path), str(scratch)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert view.migrated is (done.stdout == "true")
    assert view.migrated is (kind != "v3")


#: pi's own `bashExecutionToText` (OpenClaw 2026.9.6 ships the same function) of each message on stdin
PI_BASH_TEXT = """
const { bashExecutionToText } = await import("./node_modules/@mariozechner/pi-coding-agent/dist/core/messages.js");
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
process.stdout.write(JSON.stringify(JSON.parse(Buffer.concat(chunks)).map(bashExecutionToText)));
"""


def test_a_bash_execution_of_any_flags_is_the_text_pi_sends(pi) -> None:
    """A bash execution's flags and printed fields as written, of any JSON type: their truth as
    JavaScript tests it and their text as a template literal prints it (`transcript.context.
    bash_execution_text`, the user text of the replay's request and of OpenClaw's pressure)."""
    import subprocess

    import orjson

    from replaylab.oracles.pi import NODE_DIR, node_executable
    from replaylab.transcript.context import bash_execution_text
    from replaylab.transcript.model import BashExecutionMessage

    flags = [
        {},
        {"exitCode": 2},
        {"exitCode": 0.0},
        {"exitCode": "0"},
        {"exitCode": False},
        {"exitCode": 2.5, "cancelled": 0},
        {"exitCode": {"signal": 9}},
        {"exitCode": [1, None, 2]},
        {"cancelled": None, "exitCode": 1e21},
        {"cancelled": [], "exitCode": 3},
        {"cancelled": "", "exitCode": -1},
        {"truncated": "yes", "fullOutputPath": 5},
        {"truncated": 1, "fullOutputPath": "/tmp/o.log"},
        {"truncated": True, "fullOutputPath": ""},
        {"truncated": {}, "fullOutputPath": ["a", "b"]},
        {"truncated": None, "fullOutputPath": "/tmp/o.log"},
    ]
    messages = [
        {"role": "bashExecution", "command": "make", "output": "built" if i % 2 else "", **f}
        for i, f in enumerate(flags)
    ]
    node = node_executable()
    assert node is not None
    done = subprocess.run(
        [node, "--input-type=module", "-e", PI_BASH_TEXT],
        cwd=NODE_DIR,
        input=orjson.dumps(messages),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    texts = orjson.loads(done.stdout)
    ours = [bash_execution_text(BashExecutionMessage.model_validate(m)) for m in messages]
    assert ours == texts
    assert "(command cancelled)" in texts[9] and "Command exited with code [object Object]" in texts[6]
