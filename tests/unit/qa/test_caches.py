"""The process caches (replaylab/caches.py): every cache a process keeps across items is
registered, `clear()` empties each one, and what the library computes after a `clear()` is
exactly what it computed before."""

from __future__ import annotations

from pathlib import Path

import replaylab.qa.setup  # noqa: F401  (its caches register on import, as every cache's module does)
from replaylab import caches
from replaylab.oracles.pi import oracle_unavailable
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.replay.cassettes.vcr_session import llm_cassette
from replaylab.report.html import render_html
from replaylab.results import RunMeta, RunReport
from replaylab.selftest import load_mutants
from replaylab.suite import load_suite
from replaylab.transcript import load_transcript
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
HELPDESK = REPO / "suites" / "long-session.yaml"
SESSION = "long-account-review.jsonl"

#: every process cache: a new one must be added here, with what fills it below
NAMES = {
    "qa.folder_listings",
    "qa.item_folders",
    "qa.agent_oracles",
    "qa.classifier_answers",
    "qa.tool_packs",
    "replay.llm_cassettes",
    "replay.parsed_cassettes",
    "replay.recorded_tool_path",
    "replay.scrubbed_query",
    "replay.text_body_key",
    "replay.uri_path_query",
    "report.sections_macro",
    "report.template",
    "safety.grammar_verdict",
    "safety.name_rule",
    "safety.shell_parser",
    "safety.verb_verdict",
    "scrub.default_scrubber",
    "scrub.detector_rules",
    "safety.shell_verdict",
    "selftest.mutants",
    "transcript.skeleton_validator",
}


def _everything(tmp_path: Path) -> list[str]:
    """What fills every cache, as comparable values: two pipeline items (a tool pack's and a
    session whose tools are recorded), their HTML report, a lazy load, the mutants, an LLM cassette."""
    from bench.cases.pipeline import make_sessions

    suite = load_suite(HELPDESK)
    pack_item = run_item(suite.scenarios[0], next(r for r in suite.recordings if r.name == SESSION), RunOptions())
    generated = load_suite(make_sessions(tmp_path / "generated", 1))
    recorded_item = run_item(generated.scenarios[0], generated.recordings[0], RunOptions())
    items = [pack_item, recorded_item]
    for item in items:
        item.duration_s = 0.0
    report = RunReport(meta=RunMeta(replaylab_version="test"), items=items)
    lazy = load_transcript(suite.recordings[0], lazy=True)
    mutants = load_mutants()
    cassette = llm_cassette(tmp_path / "llm.cassette.yaml", "once")
    return [
        *(item.model_dump_json() for item in items),
        render_html(report),
        str([e.id for e in lazy.leaf_path()]),
        str([m.name for m in mutants]),
        str(len(cassette.data)),
    ]


def test_clear_empties_every_cache_and_changes_no_result(tmp_path: Path) -> None:
    """A cache registers when its module is imported (a module not imported holds nothing)."""
    caches.clear()
    assert set(caches.sizes()) == NAMES
    assert not any(caches.sizes().values())
    first = _everything(tmp_path)
    filled = caches.sizes()
    # each cache was used (the pi oracle's process only where the oracle is installed)
    unused = {name for name, size in filled.items() if not size}
    assert unused == ({"qa.agent_oracles"} if oracle_unavailable() else set())
    caches.clear()
    assert not any(caches.sizes().values())
    assert _everything(tmp_path) == first  # filled again from nothing: the same results
    assert _everything(tmp_path) == first  # and served from the caches: the same again
    caches.clear()  # nothing kept for this test's temporary files


def test_a_process_cache_is_a_named_dict_and_an_lru_a_named_function(tmp_path: Path) -> None:
    cache: caches.ProcessCache[str, int] = caches.ProcessCache("test.dict")
    calls: list[int] = []

    @caches.lru("test.lru", maxsize=4)
    def square(n: int) -> int:
        calls.append(n)
        return n * n

    try:
        cache["a"] = 1
        assert square(3) == square(3) == 9 and calls == [3]
        assert caches.sizes()["test.dict"] == 1 and caches.sizes()["test.lru"] == 1
        caches.clear()
        assert cache == {} and caches.sizes()["test.lru"] == 0
        assert square(3) == 9 and calls == [3, 3]
    finally:
        caches._REGISTRY.pop("test.dict")
        caches._REGISTRY.pop("test.lru")
