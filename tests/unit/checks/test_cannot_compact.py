"""A compaction that is due and cannot succeed is a finding (`CANNOT_COMPACT`) with its own outcome,
`uncompacted`, in every report format — not a skip, not an infrastructure error; a later one is a
warning, reported once."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from builders.transcripts import Session
from replaylab.causes import NO_BUDGET, NOTHING_TO_GAIN, SAFEGUARD_KEEPS_TOO_MUCH, SUMMARY_NOT_SMALLER
from replaylab.checks.cannot_compact import cannot_compact, cannot_compact_cause
from replaylab.compaction.params import CompactResult
from replaylab.importers import import_sessions, write_session
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.results import BudgetView
from replaylab.suite import load_suite
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
OFF = RunOptions(verify_with_pi="off")


@pytest.fixture(scope="module")
def writes_early(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An imported session that runs an unknown (so mutating) tool in every turn, whose results are
    most of the window: its protected entries and the smallest summary alone exceed the budget."""
    root = tmp_path_factory.mktemp("writes-early")
    source = root / "source" / "writes-early.jsonl"
    source.parent.mkdir()
    s = Session()
    for turn in range(8):
        s.user(f"run job {turn}")
        s.tool_turn("run_job", {"job": f"J-{turn:04d}"}, f"job J-{turn:04d} done: " + "the output line\n" * 60)
        s.assistant(f"job J-{turn:04d} ran")
    s.write(source)
    for session in import_sessions("pi", source):
        write_session(session, root / "recordings")
    return root / "recordings" / "writes-early.jsonl"


def _suite(recording: Path, extra: str = "") -> Path:
    path = recording.parent / "suite.yaml"
    path.write_text(f"name: cannot-compact\nrecordings: {recording.name}\n{extra}", encoding="utf-8")
    return path


def test_with_the_defaults_a_session_safeguard_cannot_compact_is_a_finding_with_the_numbers(writes_early) -> None:
    result = run_item(load_suite(_suite(writes_early)).scenarios[0], writes_early, OFF)
    assert result.outcome == "uncompacted", result.reason
    (defect,) = [d for d in result.defects if d.code.value == "CANNOT_COMPACT"]
    assert defect.severity == "regression" and defect.where.turn is not None
    assert defect.detail["failure"] == "protected_too_large" and defect.detail["budget_source"] == "auto"
    assert f"before turn {defect.where.turn}:" in defect.message
    assert defect.detail["cause"] == "safeguard-keeps-too-much" and result.cause.key == "safeguard-keeps-too-much"
    # the budget's numbers, not its rule: the item's budget paragraph is printed once, with the item
    assert result.budget.head() in defect.message and result.budget.rule not in defect.message
    for knob in ("contextTokens", "reserveTokensFloor", "--replaylab-context-tokens", "classification:"):
        assert knob in defect.message, knob
    assert result.reason.startswith("CANNOT_COMPACT: safeguard cannot compact")
    assert result.compacted is None  # nothing was replayed on a compacted window


def test_a_suite_may_tolerate_it_or_expect_it(writes_early) -> None:
    tolerated = run_item(
        load_suite(_suite(writes_early, "expect: {tolerate: [CANNOT_COMPACT]}\n")).scenarios[0], writes_early, OFF
    )
    assert tolerated.outcome == "skipped" and "cannot compact (tolerated)" in tolerated.reason
    expected = run_item(
        load_suite(_suite(writes_early, "expect: {defects: [CANNOT_COMPACT]}\n")).scenarios[0], writes_early, OFF
    )
    assert expected.outcome == "passed" and "found CANNOT_COMPACT as expected" in expected.reason
    strict = run_item(
        load_suite(_suite(writes_early, "expect: {tolerate: [CANNOT_COMPACT]}\n")).scenarios[0],
        writes_early,
        RunOptions(verify_with_pi="off", strict=True),
    )
    assert strict.outcome == "uncompacted"


@pytest.fixture(scope="module")
def writes_later(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An imported session that chats first, then runs an unknown (so mutating) tool every turn with
    a sizeable result: its protected entries grow with it until they alone outgrow the budget."""
    root = tmp_path_factory.mktemp("writes-later")
    source = root / "source" / "writes-later.jsonl"
    source.parent.mkdir()
    s = Session()
    prose = "the quick brown fox jumps over the lazy dog " * 28
    for topic in range(3):
        s.user(f"tell me about topic {topic}: {prose}")
        s.assistant(f"topic {topic} is {prose}")
    for job in range(16):
        s.user(f"run job {job}")
        s.tool_turn("run_job", {"job": f"J-{job:04d}"}, f"job J-{job:04d} done: {prose[:700]}")
        s.assistant(f"job J-{job:04d} ran")
    s.write(source)
    for session in import_sessions("pi", source):
        write_session(session, root / "recordings")
    return root / "recordings" / "writes-later.jsonl"


def test_a_later_compaction_that_cannot_succeed_is_one_warning_with_the_count(writes_later) -> None:
    """Safeguard compacts this session; later its protected entries and the smallest
    summary exceed the budget, so every later attempt fails: one warning with the count, the numbers
    in it, and the run goes on over the window as it was."""
    extra = "compaction: {mode: safeguard, contextTokens: 3000, reserveTokensFloor: 800, keepRecentTokens: 300}\n"
    result = run_item(load_suite(_suite(writes_later, extra)).scenarios[0], writes_later, OFF)
    later = [d for d in result.defects if d.code.value == "CANNOT_COMPACT"]
    assert len(later) == 1, [d.message[:80] for d in later]
    assert later[0].severity == "warning" and "at a later compaction (and" in later[0].message
    assert "protected entries" in later[0].message and "the smallest summary" in later[0].message
    assert result.outcome == "passed" and result.compacted is not None and result.compaction.compactions >= 1
    assert "COMPACTION_FAILED" not in {d.code.value for d in result.defects}


def test_a_session_whose_first_write_comes_early_compacts_again_and_again() -> None:
    """long-account-review writes from its start; under the bundled safeguard budget (2,400 tokens)
    every compaction it needs succeeds — safeguard restates its writes instead of keeping everything
    from the first one on — and replaying on each compacted window changes nothing."""
    suite = load_suite(REPO / "suites" / "safeguard.yaml")
    result = run_item(suite.scenarios[0], REPO / "recordings" / "helpdesk" / "long-account-review.jsonl", OFF)
    assert result.outcome == "passed", result.reason
    assert result.compaction.compactions >= 3 and "CANNOT_COMPACT" not in {d.code.value for d in result.defects}


def test_every_report_format_gives_it_its_own_outcome(writes_early, tmp_path: Path) -> None:
    out, junit = tmp_path / "r", tmp_path / "junit.xml"
    done = run_pytest(
        REPO, "--replaylab", str(_suite(writes_early)), "-v", f"--replaylab-report={out}", f"--junitxml={junit}"
    )
    assert done.returncode == 1, done.stdout[-3000:]
    assert "CANNOT COMPACT" in done.stdout  # pytest's -v word for the item
    assert "1 cannot compact" in done.stdout  # replaylab's summary line
    assert "CANNOT COMPACT: CANNOT_COMPACT: safeguard cannot compact" in done.stdout  # the failure story
    # ... with the budget paragraph once, and the finding that is the headline not a second time
    report = json.loads((out / "replaylab.json").read_text(encoding="utf-8"))
    rule = report["items"][0]["budget"]["rule"]
    # (in the failure section: pytest's own summary under -v repeats an item's whole message)
    story = done.stdout.split("= FAILURES =", 1)[-1].split("short test summary info", 1)[0]
    assert rule and story.count(rule) == 1, done.stdout[-4000:]
    assert "[regression] CANNOT_COMPACT (turn=" in done.stdout and "(the reason above)" in done.stdout
    # one line per cause, with its count and its knob, in the terminal and every report
    line = (
        "cannot compact 1: safeguard must keep its protected entries verbatim, and with a summary they leave no "
        "compaction under the budget"
    )
    assert f"replaylab: {line}" in done.stdout and "knob: --replaylab-mode auto" in done.stdout
    (group,) = report["totals"]["causes"]
    assert (group["outcome"], group["key"], group["items"]) == ("uncompacted", "safeguard-keeps-too-much", 1)
    assert report["items"][0]["cause"]["key"] == "safeguard-keeps-too-much"
    assert line in (out / "replaylab.md").read_text(encoding="utf-8")
    assert line in (out / "replaylab.html").read_text(encoding="utf-8")
    assert report["totals"]["uncompacted"] == 1 and report["items"][0]["outcome"] == "uncompacted"
    markdown = (out / "replaylab.md").read_text(encoding="utf-8")
    assert "FAIL" in markdown.splitlines()[0] and "### Cannot compact (1)" in markdown
    html = (out / "replaylab.html").read_text(encoding="utf-8")
    assert '<div class="count c-uncompacted" data-testid="count-uncompacted"><b>1</b>cannot compact</div>' in html
    assert 'data-verdict="uncompacted"' in html and ">cannot compact</span>" in html
    case = ET.parse(junit).getroot().find(".//testcase")
    assert case is not None and case.find("failure") is not None
    assert "CANNOT_COMPACT" in case.find("failure").get("message", "")


def _failed(failure: str) -> CompactResult:
    return CompactResult(success=False, failure=failure, error=f"compaction_failure: {failure}")


@pytest.mark.parametrize(
    ("failure", "mode", "source", "protected", "cause"),
    [
        ("protected_too_large", "safeguard", "auto", 5_000, SAFEGUARD_KEEPS_TOO_MUCH),
        # nothing to gain because of what safeguard keeps (more than the tail a compaction keeps anyway)
        ("nothing_to_gain", "safeguard", "auto", 900, SAFEGUARD_KEEPS_TOO_MUCH),
        ("nothing_to_gain", "manual", "suite", 900, SAFEGUARD_KEEPS_TOO_MUCH),
        # nothing to gain whatever safeguard keeps: an auto budget's session is too small, a set one's is a finding
        ("nothing_to_gain", "safeguard", "auto", 100, SUMMARY_NOT_SMALLER),
        ("nothing_to_gain", "auto", "auto", 5_000, SUMMARY_NOT_SMALLER),
        ("nothing_to_gain", "auto", "command line", 5_000, NOTHING_TO_GAIN),
        ("no_budget", "safeguard", "suite", 5_000, NO_BUDGET),
    ],
)
def test_the_cause_comes_from_the_condition_not_from_the_compactors_words(failure, mode, source, protected, cause):
    budget = BudgetView(context_tokens=3_000, reserve_tokens_floor=1_000, keep_recent_tokens=500, source=source)
    assert cannot_compact_cause(_failed(failure), mode, budget, protected) is cause


@pytest.mark.parametrize("keep", [None, 500])
def test_nothing_to_gain_under_a_set_window_names_the_tail_it_keeps(keep: int | None) -> None:
    """A window set by hand without keepRecentTokens keeps pi's default tail, which a small budget
    cannot hold: the whole window is the tail, and raising the window keeps more of it. The knob
    is keepRecentTokens then; with one set, the window is."""
    budget = BudgetView(context_tokens=2_500, reserve_tokens_floor=625, keep_recent_tokens=keep, source="command line")
    result = _failed("nothing_to_gain").model_copy(update={"mode": "auto"})
    message = cannot_compact(result, None, budget).message  # type: ignore[arg-type]  # the result names its mode
    if keep is None:
        assert "set keepRecentTokens below the budget (1,875): unset, it is pi's 20,000" in message
        assert "raise contextTokens" not in message
    else:
        assert "keepRecentTokens below" not in message and "raise contextTokens" in message
