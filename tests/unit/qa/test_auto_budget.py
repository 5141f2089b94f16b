"""`contextTokens: auto` (the default), the turn-start windows it is chosen from, and the budget
settings of the suite and the command line: which one an item ran with, and that every report
says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders.pytest_runs import run_pytest
from replaylab.compaction.safeguard import path_calls, select_protected
from replaylab.diagnostics import InputError
from replaylab.qa.auto_budget import (
    BUDGET_SHARE,
    KEEP_MIN,
    MIN_PEAK_TOKENS,
    RESERVE_MIN,
    RESERVE_WINDOW_SHARE,
    choose_budget,
)
from replaylab.qa.boundaries import Boundary, turn_boundaries
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.replay import split_turns
from replaylab.replay.loop import window_tokens
from replaylab.replay.turns import continues_run
from replaylab.safety.classify import ToolClassifier
from replaylab.suite import load_suite
from replaylab.transcript import build_window, load_transcript
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
HELPDESK = REPO / "recordings" / "helpdesk"
#: three small sessions (refund-cracked-local's largest turn-start window is under 500 tokens)
SMALL = REPO / "recordings" / "helpdesk-local"


def _suite(tmp_path: Path, compaction: str = "{mode: safeguard}", recordings: str = "cancel-two-orders") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(
        f"name: budgets\nrecordings: {HELPDESK / recordings}.jsonl\ntools: examples.helpdesk\n"
        f"compaction: {compaction}\nexpect: {{replaySafe: false}}\n",
        encoding="utf-8",
    )
    return path


def _boundary(turn: int, tokens: int, protected: int = 0, *, after_compaction: bool = False) -> Boundary:
    return Boundary(
        turn=turn, start=turn * 10, tokens=tokens, protected_tokens=protected, after_compaction=after_compaction
    )


# ---------------------------------------------------------------- turn starts


def _expected_boundaries(path, turns, classifier) -> list[tuple[int, int]]:
    """(tokens, tokens of the protected entries) at each turn start, the slow way: the window built again."""
    calls = path_calls(path)
    out = []
    for previous, turn in zip(turns, turns[1:]):
        if not turn.inputs or continues_run(previous, turn):
            continue
        start = path.index(turn.inputs[0])
        window = build_window(path[:start])
        by_id = {e.id: e for e in path[:start]}
        entries = [by_id[w.entry_id] for w in window if w.entry_id in by_id]
        protected = set(select_protected(entries, classifier, calls=calls).entry_ids)
        protected |= {w.entry_id for w in window if w.protected}
        out.append((window_tokens(window), window_tokens([w for w in window if w.entry_id in protected])))
    return out


def _sessions(shared_data: Path) -> list[Path]:
    real = sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))
    assert real, "the pi sessions of ../shared/data"
    return [*sorted(HELPDESK.glob("*.jsonl")), *real]


def test_turn_starts_are_the_windows_pi_builds_there_in_one_pass(shared_data: Path) -> None:
    """The running sums equal the window rebuilt at every turn start — helpdesk recordings and
    the real pi sessions, whose recorded compactions restart the window."""
    compacted = steered = 0
    for recording in _sessions(shared_data):
        path = load_transcript(recording).leaf_path()
        turns = split_turns(path)
        classifier = ToolClassifier()  # every tool mutating: protected entries everywhere
        found = turn_boundaries(path, turns, classifier)
        assert [(b.tokens, b.protected_tokens) for b in found] == _expected_boundaries(path, turns, classifier)
        compacted += any(b.after_compaction or b.tokens < found[0].tokens for b in found)
        steered += sum(continues_run(previous, turn) for previous, turn in zip(turns, turns[1:]))
    assert compacted, "a session with a recorded compaction must be among them"
    assert steered, "real pi sessions hold inputs typed while the agent's tools ran: no turn start there"


def test_without_a_classifier_nothing_is_protected() -> None:
    path = load_transcript(HELPDESK / "cancel-two-orders.jsonl").leaf_path()
    found = turn_boundaries(path, split_turns(path))
    assert found and all(b.protected_tokens == 0 for b in found)
    assert [b.tokens for b in found] == sorted(b.tokens for b in found)  # no compaction: it only grows


# ---------------------------------------------------------------- the rule


def test_the_budget_is_a_share_of_the_largest_turn_start_window() -> None:
    chosen = choose_budget([_boundary(1, 20_000), _boundary(2, 70_000), _boundary(3, 100_000)], protects=True)
    assert chosen.budget == int(BUDGET_SHARE * 100_000)
    assert chosen.reserve_tokens_floor == 10_000 and chosen.keep_recent_tokens == 15_000
    assert chosen.turn == 2  # the first turn start over the budget
    assert "largest turn-start window 100,000 tokens" in chosen.why


def test_small_sessions_keep_a_minimal_reserve_and_tail() -> None:
    chosen = choose_budget([_boundary(1, 400), _boundary(2, 3_000)], protects=False)
    assert chosen.reserve_tokens_floor == RESERVE_MIN and chosen.keep_recent_tokens == max(KEEP_MIN, 450)


def test_the_budget_is_raised_past_a_turn_start_where_safeguard_could_not_gain() -> None:
    """At turn 2 everything from the first write on is 60,000 tokens of 65,000: with a summary of up
    to 0.8 × the reserve the compacted window would not be smaller; at turn 3 it can be."""
    starts = [_boundary(1, 30_000, 0), _boundary(2, 65_000, 60_000), _boundary(3, 100_000, 60_000)]
    chosen = choose_budget(starts, protects=True)
    assert chosen.turn == 3
    assert 65_000 <= chosen.budget < 100_000  # no trigger at turn 2, a trigger at turn 3
    assert chosen.budget >= 60_000 + int(0.8 * chosen.reserve_tokens_floor)
    assert "raised to" in chosen.why and "turn 4" in chosen.why  # turns are 1-based in words
    # the same turn starts in a mode that protects nothing: no need to raise it
    assert choose_budget(starts, protects=False).turn == 2


def test_when_no_turn_start_can_gain_compaction_is_attempted_where_the_session_is_large() -> None:
    starts = [_boundary(1, 50_000, 49_000), _boundary(2, 100_000, 99_000)]
    chosen = choose_budget(starts, protects=True)
    assert chosen.turn is None and not chosen.too_small
    assert chosen.budget == int(BUDGET_SHARE * 100_000)
    assert "safeguard must keep" in chosen.why


def test_a_session_too_small_for_any_summary_is_marked_so() -> None:
    chosen = choose_budget([_boundary(1, 300), _boundary(2, 1_000)], protects=True, keep_recent_tokens=900)
    assert chosen.too_small and chosen.turn is None
    assert "no compaction could make it smaller" in chosen.why


def test_a_session_under_the_floor_is_too_small_and_gets_no_budget_of_nonsense() -> None:
    """A 115-token window once got budget 69, a reserve of 1,000 called "10 % of it" and a kept
    tail of 200: now it is too small, and the rule says why in its own numbers."""
    chosen = choose_budget([_boundary(1, 60), _boundary(2, 115)], protects=True)
    assert chosen.too_small and chosen.turn is None
    assert MIN_PEAK_TOKENS == 500
    assert "largest turn-start window 115 tokens, under the 500" in chosen.why
    assert "10%" not in chosen.why
    just_enough = choose_budget([_boundary(1, 300), _boundary(2, MIN_PEAK_TOKENS)], protects=False)
    assert not just_enough.too_small and just_enough.turn == 2
    # its reserve is half its window, not the 1,000 a larger session gets
    assert just_enough.reserve_tokens_floor == MIN_PEAK_TOKENS * RESERVE_WINDOW_SHARE < RESERVE_MIN
    assert "reserveTokensFloor 250 (50% of the window: the least reserve, 1,000, may take no more" in just_enough.why


@settings(max_examples=300, deadline=None)
@given(
    peaks=st.lists(st.integers(min_value=1, max_value=400_000), min_size=1, max_size=12),
    protected=st.floats(min_value=0, max_value=1),
    protects=st.booleans(),
)
def test_every_auto_budget_is_one_a_user_would_choose(peaks: list[int], protected: float, protects: bool) -> None:
    """Past the floor: the reserve takes at most its share of the window, the kept tail fits the
    budget, and the budget is below the largest window (compaction can happen); under it, too small."""
    starts = [_boundary(n + 1, tokens, int(protected * tokens)) for n, tokens in enumerate(peaks)]
    chosen = choose_budget(starts, protects=protects)
    peak = max(peaks)
    if peak < MIN_PEAK_TOKENS:
        assert chosen.too_small
        return
    assert chosen.reserve_tokens_floor <= RESERVE_WINDOW_SHARE * peak
    assert KEEP_MIN <= chosen.keep_recent_tokens <= chosen.budget
    assert chosen.budget < peak or chosen.turn is None
    assert "10% of it" not in chosen.why  # each part of the rule says how it was chosen, in its own numbers


def test_a_clamped_reserve_says_it_was_raised_to_the_least_one() -> None:
    chosen = choose_budget([_boundary(1, 1_000), _boundary(2, 2_400)], protects=False)
    assert chosen.reserve_tokens_floor == RESERVE_MIN
    assert "reserveTokensFloor 1,000 (the least reserve; 10% of the window would be 240)" in chosen.why
    large = choose_budget([_boundary(1, 300_000), _boundary(2, 400_000)], protects=False)
    assert "reserveTokensFloor 20,000 (the largest reserve; 10% of the window would be 40,000)" in large.why


def test_a_set_tail_above_the_budget_is_kept_and_said() -> None:
    chosen = choose_budget([_boundary(1, 2_000), _boundary(2, 3_000)], protects=False, keep_recent_tokens=5_000)
    assert chosen.keep_recent_tokens == 5_000 and "(set; more than the budget" in chosen.why


def test_a_turn_right_after_a_recorded_compaction_is_not_a_compaction_point() -> None:
    starts = [_boundary(1, 90_000, after_compaction=True), _boundary(2, 100_000)]
    chosen = choose_budget(starts, protects=False)
    assert chosen.turn == 2 and chosen.budget >= 90_000  # turn 1 must not trigger either


def _steered_session(folder: Path, typed_while_reading: bool = True) -> Path:
    """A pi session whose second input follows the results of a large read, before the agent's
    reply: typed while the read ran (pi's steering queue delivers it there), or after it (a new
    prompt: the run had ended)."""
    from builders.transcripts import Session, imported_suite

    s = Session("steered")
    s.user("Hello, I need help with the build. " + "Some context. " * 150)
    s.assistant("Sure. " + "I can look at it. " * 100)
    s.user("Look at the repo. " + "Be thorough. " * 60)
    s.tool_turn("read", {"path": "build.log"}, "log line: all fine\n" * 300)
    read_done = s.lines[-1]["message"]["timestamp"]
    s.user("Also, keep it short.")
    s.lines[-1]["message"]["timestamp"] = read_done + (-400 if typed_while_reading else 400)
    s.assistant("The build is fine.")
    s.user("Write the changelog.")
    s.tool_turn("write", {"path": "CHANGELOG.md", "content": "v1"}, "wrote CHANGELOG.md")
    s.assistant("Done.")
    s.user("Thanks, anything else?")
    s.assistant("No, all done.")
    return imported_suite(s, folder)


def test_an_input_typed_while_the_agents_run_goes_on_is_no_compaction_point(tmp_path: Path) -> None:
    """pi and OpenClaw check for compaction when a run ends and before a prompt, never at an
    input typed while the tools ran and steered into the loop: `auto` compacts before the next
    prompt instead, `every:N` skips it, and `turn:N` there is not exercised, naming the input's
    line. The same input written after the results is a prompt, and a compaction point."""
    from replaylab.transcript import load_transcript

    suite = load_suite(_steered_session(tmp_path / "steered"))
    recording = suite.recordings[0]
    path = load_transcript(recording).leaf_path()
    turns = split_turns(path)
    steered = next(t.index for t in turns if "keep it short" in t.user_text())
    assert steered == 2 and [b.turn for b in turn_boundaries(path, turns)] == [1, 3, 4]

    auto = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="on"))
    assert auto.compaction is not None and auto.compaction.success, auto.reason
    assert auto.outcome == "passed", auto.reason
    assert auto.verified_windows >= 1  # pi rebuilds the compacted window the same
    # the window crossed the budget at the steered input already; the compaction waited for the prompt
    assert auto.compacted.turns[0].turn == 4

    from replaylab.compaction import compact

    compacted_before: list[int] = []

    def counting(params, *, classifier, writer):
        compacted_before.append(len(compacted_before))
        return compact(params, classifier=classifier, writer=writer)

    every = run_item(
        suite.scenarios[0].model_copy(update={"compact_at": "every:2"}), recording, RunOptions(compactor=counting)
    )
    # every second turn is before turns 3 and 5: not before the steered input of turn 3
    assert every.outcome == "passed" and every.compacted.turns[0].turn == 5, every.reason
    assert len(compacted_before) == 1

    fixed = run_item(suite.scenarios[0].model_copy(update={"compact_at": "turn:3"}), recording, RunOptions())
    assert fixed.outcome == "skipped" and fixed.cause is not None and fixed.cause.key == "mid-run"
    line = load_transcript(recording).line_of[turns[2].inputs[0].id]
    assert f"no compaction before turn 3: its input (line {line})" in (fixed.reason or "")

    # the same input written after the read's result is a prompt: the run had ended, and it is a point
    suite = load_suite(_steered_session(tmp_path / "prompted", typed_while_reading=False))
    path = load_transcript(suite.recordings[0]).leaf_path()
    assert [b.turn for b in turn_boundaries(path, split_turns(path))] == [1, 2, 3, 4]
    prompted = run_item(suite.scenarios[0], suite.recordings[0], RunOptions(verify_with_pi="on"))
    # compacted there: pi's cut keeps the read the window ends with, so safeguard gains nothing
    assert prompted.outcome == "uncompacted", prompted.reason
    assert "safeguard cannot compact before turn 3: nothing to gain" in (prompted.reason or "")


def test_a_set_reserve_or_tail_replaces_that_part_of_the_rule_only() -> None:
    chosen = choose_budget(
        [_boundary(1, 40_000), _boundary(2, 100_000)], protects=False, reserve_tokens_floor=3_000, keep_recent_tokens=7
    )
    assert (chosen.reserve_tokens_floor, chosen.keep_recent_tokens, chosen.budget) == (3_000, 7, 60_000)
    assert "(set)" in chosen.why


def test_one_user_turn_has_no_budget() -> None:
    assert choose_budget([], protects=True) is None


# ---------------------------------------------------------------- which budget an item ran with


def test_a_suite_that_sets_no_budget_compacts_each_recording_where_it_is_large(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    assert suite.scenarios[0].compaction.context_tokens == "auto"
    for name in ("cancel-two-orders", "long-account-review"):
        result = run_item(suite.scenarios[0], HELPDESK / f"{name}.jsonl", RunOptions(verify_with_pi="off"))
        assert result.compaction is not None and result.compaction.success, (name, result.reason)
        assert result.budget.source == "auto" and "largest turn-start window" in result.budget.rule
        assert result.budget.context_tokens - result.budget.reserve_tokens_floor == result.budget.budget
    # the long session is larger: so is its budget
    small = run_item(suite.scenarios[0], HELPDESK / "cancel-two-orders.jsonl", RunOptions(verify_with_pi="off"))
    large = run_item(suite.scenarios[0], HELPDESK / "long-account-review.jsonl", RunOptions(verify_with_pi="off"))
    assert large.budget.budget > small.budget.budget


@pytest.mark.parametrize("mode", ["safeguard", "auto", "aggressive"])
def test_a_session_too_small_is_not_exercised_for_one_reason_in_every_mode(tmp_path: Path, mode: str) -> None:
    """The same condition, the same outcome: no compaction is attempted, so no compactor's words
    (nothing to gain, protected entries over the budget, no budget) can turn it into a failure."""
    path = tmp_path / "small.yaml"
    path.write_text(
        f"name: small\nrecordings: {SMALL}/*.jsonl\ntools: examples.helpdesk\ncompaction: {{mode: {mode}}}\n"
    )
    suite = load_suite(path)
    result = run_item(suite.scenarios[0], SMALL / "refund-cracked-local.jsonl", RunOptions(verify_with_pi="off"))
    assert result.outcome == "skipped" and result.compaction is None, result.reason
    assert result.cause is not None and result.cause.key == "too-small"
    assert result.reason.startswith("not exercised: too small to be worth compacting: largest turn-start window ")
    assert result.cause.largest_window is not None and result.cause.largest_window < MIN_PEAK_TOKENS
    assert not [d for d in result.defects if d.code.value == "CANNOT_COMPACT"]


def test_a_fixed_budget_the_session_never_reaches_says_so_with_its_largest_window(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    recording = HELPDESK / "cancel-two-orders.jsonl"
    result = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="off", context_tokens=128_000))
    assert result.outcome == "skipped" and result.cause is not None
    assert result.cause.key == "never-crosses-budget" and result.cause.budget == 108_000
    assert result.reason == (
        f"not exercised: never crosses the budget: its largest turn-start window is "
        f"{result.cause.largest_window:,} tokens, the budget 108,000 (budget 108,000 tokens (contextTokens "
        "128,000 − reserveTokensFloor 20,000; command line))"
    )
    assert "--replaylab-context-tokens auto" in result.cause.knob


def test_the_command_line_overrides_the_suite_and_auto_overrides_a_set_budget(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, "{mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800}"))
    recording = HELPDESK / "cancel-two-orders.jsonl"
    own = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="off")).budget
    assert (own.source, own.context_tokens, own.reserve_tokens_floor) == ("suite", 3200, 800)
    given = run_item(
        suite.scenarios[0], recording, RunOptions(verify_with_pi="off", context_tokens=4000, keep_recent_tokens=300)
    ).budget
    assert (given.source, given.context_tokens, given.reserve_tokens_floor, given.keep_recent_tokens) == (
        "command line",
        4000,
        800,
        300,
    )
    auto = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="off", context_tokens="auto")).budget
    assert auto.source == "auto" and auto.reserve_tokens_floor == 800  # the suite's reserve kept: "(set)"


def test_a_set_context_window_the_reserve_leaves_nothing_of_is_refused_by_the_loader(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_suite(_suite(tmp_path, "{mode: safeguard, contextTokens: 3000, reserveTokensFloor: 3000}"))
    text = str(caught.value)
    assert "suite.yaml" in text and "leaves no budget after reserveTokensFloor 3000" in text


@pytest.mark.parametrize(("context", "reserve"), [(3_000, 750), (50_000, 12_500), (128_000, 20_000)])
def test_a_set_context_window_alone_keeps_openclaws_floor_within_a_quarter_of_it(
    tmp_path: Path, context: int, reserve: int
) -> None:
    """OpenClaw 2026.9.6 caps its reserve floor at a quarter of the window: a small window set on
    the command line (the knob a session too small to compact is offered) still leaves a budget."""
    suite = load_suite(_suite(tmp_path))
    recording = HELPDESK / "cancel-two-orders.jsonl"
    result = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="off", context_tokens=context))
    assert (result.budget.context_tokens, result.budget.reserve_tokens_floor) == (context, reserve)
    assert load_suite(_suite(tmp_path, f"{{mode: safeguard, contextTokens: {context}}}")).scenarios[0].compaction


def test_a_small_window_set_on_the_command_line_compacts_a_small_session(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path))
    recording = HELPDESK / "cancel-two-orders.jsonl"
    forced = run_item(suite.scenarios[0], recording, RunOptions(verify_with_pi="off", context_tokens=1_200))
    assert forced.budget.reserve_tokens_floor == 300
    assert forced.compaction is not None and forced.compaction.success, forced.reason


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return run_pytest(REPO, "--replaylab", *args)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--replaylab-context-tokens", "lots"], "expected a whole number of tokens"),
        (["--replaylab-keep-recent-tokens", "0"], "expected 1 to"),
        (
            ["--replaylab-context-tokens", "3000", "--replaylab-reserve-tokens-floor", "3000"],
            "leaves no budget after --replaylab-reserve-tokens-floor 3000",
        ),
    ],
)
def test_bad_budget_options_are_usage_errors_before_anything_runs(tmp_path: Path, options, message) -> None:
    done = _pytest(tmp_path, str(_suite(tmp_path)), f"--replaylab-report={tmp_path / 'r'}", *options)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert message in done.stderr
    assert not (tmp_path / "r" / "replaylab.json").exists()


def test_every_report_says_which_budget_each_item_ran_with(tmp_path: Path) -> None:
    out = tmp_path / "r"
    done = _pytest(tmp_path, str(_suite(tmp_path)), f"--replaylab-report={out}", "--replaylab-keep-recent-tokens=400")
    assert done.returncode == 0, done.stdout[-3000:]
    item = json.loads((out / "replaylab.json").read_text(encoding="utf-8"))["items"][0]
    budget = item["budget"]
    assert budget["source"] == "auto" and budget["keep_recent_tokens"] == 400 and "(set)" in budget["rule"]
    html = (out / "replaylab.html").read_text(encoding="utf-8")
    assert 'data-testid="budget"' in html and f"contextTokens {budget['context_tokens']:,}" in html


def test_a_rebuild_per_turn_start_is_reported_as_progress_on_a_long_run() -> None:
    """Under rules that rebuild every turn start's window (OpenClaw 2026.9.6's), reading the turn
    starts of a long session takes a while before any turn is replayed: the run's progress hears
    of the phase and of the turn starts read, the last one always."""
    from replaylab.agents import memo_rules
    from replaylab.qa.progress import Progress
    from replaylab.transcript.memo import ItemMemo
    from replaylab.upstream.profiles import profile_named

    path = load_transcript(HELPDESK / "long-account-review.jsonl").leaf_path()
    turns = split_turns(path)
    lines: list[str] = []
    memo = ItemMemo(rules=memo_rules(profile_named("openclaw@2026.9.6")))
    found = turn_boundaries(path, turns, ToolClassifier(), memo, Progress(lines.append, after_s=0))
    assert len(found) >= 2
    assert lines[0] == f"replaylab: reading {len(found):,} turn starts by the agent's rules"
    assert lines[-1] == f"replaylab: turn-start windows rebuilt {len(found):,}/{len(found):,} turns"
    # the plain rule (pi 0.73.1's running sums) has nothing slow to report
    quiet: list[str] = []
    turn_boundaries(path, turns, ToolClassifier(), None, Progress(quiet.append, after_s=0))
    assert quiet == []


def _one_run_session(folder: Path) -> Path:
    """A pi session of one prompt and one long run: the agent reads a log, writes a report from
    it, reads more, then answers."""
    from builders.transcripts import Session, imported_suite

    s = Session("one-run")
    s.user("Go through the build logs and write the report. " + "Be thorough. " * 40)
    for part in range(1, 4):
        s.tool_turn("read", {"path": f"build-{part}.log"}, f"log {part}: all fine\n" * 40)
    s.tool_turn("write", {"path": "REPORT.md", "content": "All three builds are fine."}, "wrote REPORT.md")
    for part in range(4, 7):
        s.tool_turn("read", {"path": f"build-{part}.log"}, f"log {part}: all fine\n" * 40)
    s.assistant("All six builds are fine; REPORT.md has the first three.")
    return imported_suite(s, folder, settings="")


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
def test_a_session_of_one_run_compacts_within_it_where_the_window_crosses_the_budget(
    tmp_path: Path, agent: str
) -> None:
    """No later turn starts: `auto` compacts before the first reply within the run whose window
    crosses the budget (after the agent's tool results, where pi 1.6.0 checks and every agent
    compacts on an overflow), and replays the rest of the run on the compacted window. The
    write before that point is kept verbatim and not made again; the agent's own rebuild of the
    compacted copy is the window replaylab replays on."""
    suite = load_suite(_one_run_session(tmp_path))
    recording = suite.recordings[0]
    path = load_transcript(recording).leaf_path()
    turns = split_turns(path)
    assert len(turns) == 1 and turn_boundaries(path, turns) == []  # no turn start to compact at
    result = run_item(
        suite.scenarios[0].model_copy(update={"agent": agent}), recording, RunOptions(verify_with_pi="on")
    )
    assert result.compaction is not None and result.compaction.success, result.reason
    assert result.outcome == "passed", result.reason
    assert result.verified_windows >= 1
    [said] = [note for note in result.diagnostics if "compacted within its run" in note]
    reply = int(said.split("before reply ")[1].split(" ")[0])
    assert 2 <= reply <= len(turns[0].steps) and "of turn 1 (line " in said
    # the automatic budget was chosen on the windows before those replies, and says so
    assert result.budget is not None and result.budget.rule.startswith("largest window before a reply ")
    # the rest of the run is replayed on the compacted window: its calls, none made before the point
    replayed = [call.tool for turn in result.compacted.turns for call in turn.tool_calls]
    recorded = [c.name for e in turns[0].steps[reply - 1 :] for c in e.message.tool_calls()]
    assert replayed == recorded and len(replayed) < 7
    # each replayed call names the recorded turn's step it is compared with, not its place in the rest
    steps = [call.step for turn in result.compacted.turns for call in turn.tool_calls]
    recorded_steps = [i for i, e in enumerate(turns[0].steps) if i >= reply - 1 for _ in e.message.tool_calls()]
    assert steps == recorded_steps, (steps, recorded_steps)
    assert result.compacted.turns[0].turn == 1 and result.compacted.turns[0].answer.startswith("All six builds")
    if "write" not in replayed:  # made before the point: protected, kept verbatim, not repeated
        assert any(e.tool == "write" for e in result.ledger_after.events)


def _six_build_logs(name: str):
    """A pi session whose first run reads six logs and writes a report between them."""
    from builders.transcripts import Session

    s = Session(name)
    s.user("Go through the six build logs and write the report.")
    for part in range(1, 4):
        s.tool_turn("read", {"path": f"build-{part}.log"}, f"log {part}: all fine\n" * 120)
    s.tool_turn("write", {"path": "REPORT.md", "content": "Builds 1-3 are fine."}, "wrote REPORT.md")
    for part in range(4, 7):
        s.tool_turn("read", {"path": f"build-{part}.log"}, f"log {part}: all fine\n" * 120)
    s.assistant("All six builds are fine; REPORT.md has the first three.")
    return s


def _long_first_run_session(folder: Path) -> Path:
    """The six build logs' run, then two short turns: the window grows past any budget within
    that run, long before turn 2 starts."""
    from builders.transcripts import imported_suite

    s = _six_build_logs("long-first-run")
    s.user("Which log was the largest?")
    s.tool_turn("stat", {"path": "build-6.log"}, "2,040 bytes")
    s.assistant("They are all the same size, 2,040 bytes.")
    s.user("Thanks, that is all.")
    s.assistant("You're welcome.")
    return imported_suite(s, folder, settings="")


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
def test_an_agent_that_checks_before_each_reply_compacts_within_a_run_of_a_longer_session(
    tmp_path: Path, agent: str
) -> None:
    """pi 1.6.0 checks for compaction before every reply of a run, after the agent's tool results
    (`_compactBeforeNextAssistantResponse`), not only where a prompt starts one: under `auto` its
    items compact at the first such reply or turn start whose window crosses the budget, and
    replay the rest of that run and every turn after it. pi 0.73.1 and OpenClaw 2026.9.6 check at
    turn starts only. Each agent's own rebuild of the compacted copy is the window replayed on."""
    suite = load_suite(_long_first_run_session(tmp_path))
    recording = suite.recordings[0]
    turns = split_turns(load_transcript(recording).leaf_path())
    result = run_item(
        suite.scenarios[0].model_copy(update={"agent": agent}), recording, RunOptions(verify_with_pi="on")
    )
    assert result.outcome == "passed" and result.verified_windows >= 1, result.reason
    replayed_turns = [turn.turn for turn in result.compacted.turns]
    within = [note for note in result.diagnostics if "compacted within" in note]
    if agent != "pi@1.6.0":
        assert within == [] and replayed_turns == [2, 3]
        assert result.budget is not None and result.budget.rule.startswith("largest turn-start window ")
        return
    [said] = within
    reply = int(said.split("before reply ")[1].split(" ")[0])
    assert said.startswith("compacted within turn 1's run, before reply ") and "pi 1.6.0 checks" in said
    assert 2 <= reply <= len(turns[0].steps)
    assert result.budget is not None and result.budget.rule.startswith(
        "largest window at a turn start or before a reply "
    )
    # the rest of turn 1's run, then turns 2 and 3, each call compared with the recorded one at its step
    assert replayed_turns == [1, 2, 3]
    replayed = [(call.tool, call.step) for call in result.compacted.turns[0].tool_calls]
    recorded = [(c.name, i) for i, e in enumerate(turns[0].steps) if i >= reply - 1 for c in e.message.tool_calls()]
    assert replayed == recorded and replayed
    if "write" not in [tool for tool, _ in replayed]:  # made before the point: kept verbatim, not made again
        assert any(e.tool == "write" for e in result.ledger_after.events)


def _two_long_runs_session(folder: Path) -> Path:
    """Two runs that each read six logs and change the report between them, then a short turn,
    under a budget the second run crosses again after a compaction."""
    from builders.transcripts import imported_suite

    s = _six_build_logs("two-long-runs")
    s.user("Now the six test logs, and add them to the report.")
    for part in range(1, 4):
        s.tool_turn("read", {"path": f"test-{part}.log"}, f"test log {part}: passed\n" * 120)
    edit = {"path": "REPORT.md", "oldText": "fine.", "newText": "fine. Tests 1-3 pass."}
    s.tool_turn("edit", edit, "edited REPORT.md")
    for part in range(4, 7):
        s.tool_turn("read", {"path": f"test-{part}.log"}, f"test log {part}: passed\n" * 120)
    s.assistant("All six test logs pass; REPORT.md says so for the first three.")
    s.user("Thanks, that is all.")
    s.assistant("You're welcome.")
    settings = "compaction: {mode: safeguard, contextTokens: 2800, reserveTokensFloor: 800, keepRecentTokens: 400}\n"
    return imported_suite(s, folder, settings=settings + "compact_at: auto\n")


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0"])
def test_the_compacted_run_of_an_agent_that_checks_before_each_reply_compacts_again_within_a_run(
    tmp_path: Path, agent: str
) -> None:
    """After the first compaction the replayed run goes on growing: pi 1.6.0 compacts again before
    the first reply after tool results whose window crosses the budget, within the run, each time
    it does; pi 0.73.1 only where the next turn starts. Every compacted window is the agent's own
    rebuild of the working copy there."""
    suite = load_suite(_two_long_runs_session(tmp_path))
    result = run_item(
        suite.scenarios[0].model_copy(update={"agent": agent}), suite.recordings[0], RunOptions(verify_with_pi="on")
    )
    assert result.outcome == "passed", result.reason
    assert result.compaction is not None and result.verified_windows == result.compaction.compactions
    turn_two = next(turn for turn in result.compacted.turns if turn.turn == 2)
    # the window each reply of turn 2 was asked on: it shrinks within the run only where it compacted
    shrank = [b < a for a, b in zip(turn_two.context_tokens, turn_two.context_tokens[1:])]
    if agent == "pi@0.73.1":
        assert not any(shrank) and result.compaction.compactions == 2
        assert max(turn_two.context_tokens) > 2_000  # past the budget, which pi 0.73.1 checks at turn starts
    else:
        assert sum(shrank) >= 2 and result.compaction.compactions >= 4
        assert max(turn_two.context_tokens) <= 2_000


def test_a_compaction_within_a_run_that_cannot_gain_says_where_it_was(tmp_path: Path) -> None:
    suite = load_suite(_one_run_session(tmp_path))
    scenario = suite.scenarios[0]
    tight = scenario.compaction.model_copy(
        update={"context_tokens": 600, "reserve_tokens_floor": 300, "keep_recent_tokens": 100}
    )
    result = run_item(scenario.model_copy(update={"compaction": tight}), suite.recordings[0], RunOptions())
    assert result.outcome == "uncompacted", result.reason
    assert "safeguard cannot compact within turn 1's run, before reply 2: nothing to gain" in (result.reason or "")


def test_a_point_where_the_agents_cut_keeps_the_whole_window_gives_way_to_the_next() -> None:
    """Within a run no tool result is a cut point: after a burst of results larger than the tail,
    the agent's cut keeps the whole window there and nothing can gain. The budget is raised past
    that point, to the next where the cut leaves something to summarize."""
    points = [_boundary(1, 6_300), _boundary(2, 6_400), _boundary(3, 6_600)]
    whole = {1: 6_300}  # the first point's cut keeps all of it; the others keep about the tail
    chosen = choose_budget(points, protects=True, tail=lambda b, keep: whole.get(b.turn, keep))
    assert chosen.turn == 2 and 6_300 <= chosen.budget < 6_400, chosen
    assert "raised to 6,300 so compaction at turn 3 can gain (kept tail 990" in chosen.why, chosen.why
    assert "at turn 2 the agent's own cut keeps 6,300 of its 6,300 tokens" in chosen.why
    assert choose_budget(points, protects=True).turn == 1  # a tail of keepRecentTokens would have gained there
    nowhere = choose_budget(points, protects=True, tail=lambda b, keep: b.tokens)
    assert nowhere.too_small and "the tail the agent's cut keeps" in nowhere.why


def _burst_session(folder: Path) -> Path:
    """One prompt and one run whose agent reads four large files at once (four calls in one reply,
    their results one after another), then a short file, writes a report and answers."""
    from builders.transcripts import Session, imported_suite

    s = Session("burst")
    s.user("Summarize the four service logs into NOTES.md.")
    s.tool_turn("read", {"path": "index.txt"}, "api.log db.log web.log queue.log")
    _, ids = s.assistant("Reading all four.", [("read", {"path": f"{n}.log"}) for n in ("api", "db", "web", "queue")])
    for call_id, name in zip(ids, ("api", "db", "web", "queue")):
        s.result(call_id, "read", f"{name}: request served in 12 ms\n" * 45)
    s.tool_turn("read", {"path": "owners.txt"}, "api: ana; db: bo; web: cy; queue: di\n" * 6)
    s.tool_turn("write", {"path": "NOTES.md", "content": "All four services are fast."}, "wrote NOTES.md")
    s.tool_turn("read", {"path": "NOTES.md"}, "All four services are fast.")
    s.assistant("NOTES.md says all four services are fast.")
    return imported_suite(s, folder, settings="")


@pytest.mark.parametrize("agent", ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"])
def test_a_run_compacts_after_a_burst_of_results_where_the_agents_cut_can_gain(tmp_path: Path, agent: str) -> None:
    """The reply right after the burst is the first whose window crosses 60 % of the largest, but
    every agent's cut keeps the whole window there; the item compacts at the next reply instead of
    calling the session too small, and the agent's own rebuild agrees."""
    suite = load_suite(_burst_session(tmp_path))
    result = run_item(
        suite.scenarios[0].model_copy(update={"agent": agent}), suite.recordings[0], RunOptions(verify_with_pi="on")
    )
    assert result.compaction is not None and result.compaction.success, result.reason
    assert result.outcome == "passed" and result.verified_windows >= 1, result.reason
    [said] = [note for note in result.diagnostics if "compacted within its run" in note]
    assert "before reply 4 of turn 1" in said, said  # reply 3 follows the burst
    assert result.budget is not None and "so compaction at reply 4 of turn 1 can gain" in result.budget.rule


def test_the_rule_says_when_keep_recent_tokens_is_the_least_tail_not_a_share_of_the_budget() -> None:
    small = choose_budget([_boundary(1, 200), _boundary(2, 700)], protects=False)
    assert small is not None and small.keep_recent_tokens == 200
    assert "keepRecentTokens 200 (the least tail; 25% of the budget would be 105)" in small.why
    large = choose_budget([_boundary(1, 2_000), _boundary(2, 10_000)], protects=False)
    assert large is not None and "keepRecentTokens 1,500 (25% of the budget)" in large.why
