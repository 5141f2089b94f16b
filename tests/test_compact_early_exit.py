"""`compact()` decides "nothing to gain" before summarizing when no summary could change it (issue 8).

The shortcut (`harness._Compaction._nothing_to_gain`, switched by `harness.EARLY_NOTHING_TO_GAIN`)
bounds the compacted window from below (kept tail + protected entries + the summary's fixed
parts) and from above (the same with a summary of `_summary_chars()`), and fails at once when the
lower bound already holds the current window and the upper one fits the budget (no tail refit).
Every test here runs `compact()` twice, shortcut on and off (the full path: summarize, build,
compare), and checks:
* soundness — whenever the shortcut fires, the full path fails with "nothing to gain" too, holding
  at least the tokens the shortcut named, and every CompactResult field but `error` and
  `summaryText` is the same (nothing is written in either case);
* identity — when it does not fire, the CompactResult JSON and the written entry are the same bytes
  (minus diag ids, timestamps and the working copy's folder);
over the bench's sessions, the helpdesk recordings in every mode, generated sessions and, with
../shared/data, real sessions; and that an LLM summarizer (a loopback OpenAI-compatible server)
gets no request at all when the shortcut fires. No timing is asserted.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaylab.compaction import CompactParams, SummarizerOptions, compact, harness
from replaylab.replay.toolpack import load_tool_pack
from replaylab.replay.turns import split_turns
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import load_transcript
from replaylab.transcript.model import MessageEntry
from loopback import ChatServer, imported_real_sessions
from strategies import valid_sessions
from test_summarize_speed import HELPDESK, VARIANTS, _drop

EARLY = "decided before summarizing"
#: the bench's compaction (bench/cases/pipeline.py SUITE) and its compaction point: `compact_at: turn:3`
#: is 1-based (before user turn 3), i.e. before `split_turns(path)[2]` (qa.pipeline.compaction_points)
BENCH = dict(compaction_mode="safeguard", context_tokens=12000, reserve_tokens_floor=2000, keep_recent_tokens=1500)
BENCH_TURN = 2


@contextlib.contextmanager
def shortcut(enabled: bool) -> Iterator[None]:
    saved = harness.EARLY_NOTHING_TO_GAIN
    harness.EARLY_NOTHING_TO_GAIN = enabled
    try:
        yield
    finally:
        harness.EARLY_NOTHING_TO_GAIN = saved


def _outcome(params: CompactParams, classifier: ToolClassifier | None, work: Path, *, early: bool
             ) -> tuple[dict[str, Any], Any]:
    """(CompactResult JSON + the written entry, minus diag ids, timestamps and the copy's folder; the result)."""
    work.mkdir(parents=True, exist_ok=True)
    copy = work / Path(params.session_file).name
    with shortcut(early):
        result = compact(params.model_copy(update={"working_copy": str(copy)}), classifier=classifier)
    entry = orjson.loads(copy.read_bytes().splitlines()[-1]) if result.success else None
    if not result.success:
        assert not copy.exists()  # a failure writes nothing
    text = orjson.dumps({"result": result.model_dump(mode="json", by_alias=True), "entry": entry}).decode()
    return _drop(orjson.loads(text.replace(str(work), "<copy>"))), result


def check(params: CompactParams, classifier: ToolClassifier | None, work: Path) -> bool:
    """Shortcut on vs off (see the module docstring); True when the shortcut fired."""
    now, result = _outcome(params, classifier, work / "early", early=True)
    full, full_result = _outcome(params, classifier, work / "full", early=False)
    where = (params.session_file, params.compaction_mode, params.leaf_id)
    if EARLY not in (result.error or ""):
        assert now == full, where
        return False
    assert "nothing to gain" in result.error and not result.success, where
    assert not full_result.success and "nothing to gain" in (full_result.error or ""), (where, full_result.error)
    at_least = int(re.search(r"at least (\d+) tokens", result.error).group(1))
    held = int(re.search(r"would hold (\d+) tokens", full_result.error).group(1))
    assert result.original_token_count <= at_least <= held, where
    assert now["result"]["summaryText"] == "" and result.summary_attempts == 0
    same = {k: v for k, v in now["result"].items() if k not in ("error", "summaryText")}
    assert same == {k: v for k, v in full["result"].items() if k not in ("error", "summaryText")}, where
    return True


# ---------------------------------------------------------------- the bench's sessions


def _bench_leaves(path: Path) -> tuple[str | None, list[str]]:
    """(the bench's compaction point — the entry before user turn 3's first input —, every turn start's)."""
    entries = load_transcript(path).leaf_path()
    turns = split_turns(entries)
    starts = [entries[entries.index(t.inputs[0]) - 1].id for t in turns[1:] if t.inputs]
    bench = entries[entries.index(turns[BENCH_TURN].inputs[0]) - 1].id \
        if len(turns) > BENCH_TURN and turns[BENCH_TURN].inputs else None
    return bench, starts


@pytest.fixture(scope="module")
def bench_sessions(tmp_path_factory) -> list[Path]:
    from bench.cases.pipeline import make_sessions

    root = tmp_path_factory.mktemp("bench")
    make_sessions(root, 60)
    return sorted((root / "recordings").glob("s-*.jsonl"))


def test_bench_sessions_sound_and_identical(bench_sessions, tmp_path):
    """The bench's own compaction at its point: the shortcut decides a good share of the sessions
    (so this cannot pass vacuously) and is sound; elsewhere the result is unchanged. The same over
    every turn start of each session."""
    at_point = fired = runs = 0
    for index, path in enumerate(bench_sessions):
        bench, starts = _bench_leaves(path)
        if bench is not None:
            params = CompactParams(session_file=str(path), leaf_id=bench, replay_check=True, **BENCH)
            at_point += check(params, None, tmp_path / f"{index}-bench")
        for leaf in starts:
            params = CompactParams(session_file=str(path), leaf_id=leaf, force_compact=True, **BENCH)
            fired += check(params, None, tmp_path / f"{index}-{leaf}")
            runs += 1
    assert at_point >= 10, at_point  # 19 of these 60 when written (246 of the 997 the bench compacts, of 1,000)
    assert 0 < fired < runs


BENCH_VARIANTS = {
    "flaky": dict(BENCH, summarizer_failures=2),
    "all-calls-fail": dict(BENCH, summarizer_failures=50),
    "no-guard": dict(BENCH, summarizer=SummarizerOptions(quality_guard=False)),
    "no-preserve": dict(BENCH, recent_turns_preserve=0),
    "small-summary": dict(BENCH, summarizer=SummarizerOptions(max_summary_chars=200)),
    "auto": dict(BENCH, compaction_mode="auto"),
    "aggressive": dict(BENCH, compaction_mode="aggressive"),
    "manual": dict(BENCH, compaction_mode="manual"),
    "tight": dict(BENCH, context_tokens=6000, reserve_tokens_floor=1500, keep_recent_tokens=800),
}


@pytest.mark.parametrize("variant", list(BENCH_VARIANTS))
def test_bench_sessions_in_other_modes_and_with_failures(variant, bench_sessions, tmp_path):
    """Failure injection, the guard off, other modes and budgets at the bench's point: sound where
    it fires, unchanged where it does not (the injected failures and guard rounds included)."""
    fired = 0
    for index, path in enumerate(bench_sessions[::2]):
        bench, _ = _bench_leaves(path)
        params = CompactParams(session_file=str(path), leaf_id=bench, force_compact=True, **BENCH_VARIANTS[variant])
        fired += check(params, None, tmp_path / str(index))
    assert fired > 0, variant  # 2 (auto, aggressive) to 11 (flaky, all-calls-fail, no-guard) of 30 when written


# ---------------------------------------------------------------- helpdesk recordings, generated sessions


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_helpdesk_recordings_every_mode(variant, tmp_path):
    """The suites' recordings (recordings/helpdesk, what suites/*.yaml name) at the leaf and at
    every fourth message, in the suites' budget and modes (test_summarize_speed's variants)."""
    assert len(HELPDESK) >= 10
    classifier = ToolClassifier.from_tool_pack(load_tool_pack("plugins.helpdesk"))
    for index, path in enumerate(HELPDESK):
        ids = [e.id for e in load_transcript(path).leaf_path() if isinstance(e, MessageEntry)]
        for leaf in [None, *ids[2::4]]:
            params = CompactParams(session_file=str(path), leaf_id=leaf, force_compact=True, **VARIANTS[variant])
            check(params, classifier, tmp_path / f"{index}-{leaf}")


EXAMPLE = itertools.count()


@settings(max_examples=120, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(valid_sessions(max_turns=12), st.data())
def test_generated_sessions(tmp_path, lines, data):
    """Generated sessions (earlier compactions included) at any entry, any mode, small budgets."""
    work = tmp_path / f"g{next(EXAMPLE)}"
    work.mkdir()
    session = work / "session.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    leaf = data.draw(st.sampled_from([None, *[line["id"] for line in lines[1:]]]))
    context = data.draw(st.sampled_from([800, 1200, 2000, 4000, 12000]))
    params = CompactParams(
        session_file=str(session), leaf_id=leaf, force_compact=True, context_tokens=context,
        compaction_mode=data.draw(st.sampled_from(["safeguard", "auto", "aggressive", "manual"])),
        reserve_tokens_floor=data.draw(st.sampled_from([0, 200, context // 4])),
        keep_recent_tokens=data.draw(st.sampled_from([None, 100, 400, 1500])),
        recent_turns_preserve=data.draw(st.sampled_from([0, 1, 3])),
        summarizer_failures=data.draw(st.sampled_from([0, 0, 2, 20])),
        allow_mutating_event_truncate=data.draw(st.booleans()),
        summarizer=SummarizerOptions(max_summary_chars=data.draw(st.sampled_from([200, 2000, 16000]))))
    check(params, ToolClassifier(declared={"refund": "mutating", "cancel_order": "mutating"}), work)


# ---------------------------------------------------------------- an LLM summarizer: no request when it fires


@pytest.fixture()
def summary_server(monkeypatch) -> Iterator[ChatServer]:
    """A loopback OpenAI-compatible server answering a two-word summary — the shortest an LLM
    could give, so the full path's window is the smallest the bound allows for."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback-only-000000000000")  # the loopback server ignores it
    server = ChatServer(lambda body: ({"role": "assistant", "content": "All done."}, "stop"))
    try:
        yield server
    finally:
        server.stop()


def test_llm_summarizer_gets_no_request_when_the_shortcut_fires(bench_sessions, summary_server, tmp_path):
    """With `modelProvider`, the bound counts no summary body at all (an LLM may answer two words):
    where it still fires, the server sees no request, while the full path asks it and then fails
    with nothing to gain all the same; where it does not fire, both ask the same and agree."""
    options = SummarizerOptions(api_base=summary_server.url, retry_delay_s=0, timeout_s=20)
    fired = asked = 0
    for index, path in enumerate(bench_sessions[:30]):
        bench, _ = _bench_leaves(path)
        params = CompactParams(session_file=str(path), leaf_id=bench, model_provider="openai/gpt-4o-mini",
                               summarizer=options, **BENCH)
        before = len(summary_server.requests)
        early, result = _outcome(params, None, tmp_path / f"{index}-early", early=True)
        early_requests = len(summary_server.requests) - before
        before = len(summary_server.requests)
        full, full_result = _outcome(params, None, tmp_path / f"{index}-full", early=False)
        full_requests = len(summary_server.requests) - before
        if EARLY in (result.error or ""):
            fired += 1
            assert early_requests == 0, path
            assert "nothing to gain" in (full_result.error or ""), (path, full_result.error)
            asked += full_requests > 0
        else:
            assert early == full and early_requests == full_requests, path
    assert fired > 0 and asked > 0, (fired, asked)


# ---------------------------------------------------------------- real sessions


@pytest.mark.realdata
def test_real_sessions(shared_data, tmp_path):
    """τ-bench, τ²-bench, Claude Code and pi sessions (every third), five parameter sets each."""
    paths = imported_real_sessions(shared_data, tmp_path / "sessions")
    assert len(paths) > 100
    variants = [dict(BENCH), dict(VARIANTS["safeguard"]), dict(BENCH, summarizer_failures=3),
                dict(BENCH, compaction_mode="auto", keep_recent_tokens=4000),
                dict(compaction_mode="manual", context_tokens=12000, reserve_tokens_floor=2000)]
    fired = 0
    for index, path in enumerate(paths[::3]):
        entries = [e.id for e in load_transcript(path).leaf_path() if isinstance(e, MessageEntry)]
        for number, variant in enumerate(variants):
            leaf = entries[len(entries) // 2] if number % 2 and entries else None
            params = CompactParams(session_file=str(path), leaf_id=leaf, force_compact=True, **variant)
            fired += check(params, None, tmp_path / f"{index}-{number}")
    assert fired > 0
