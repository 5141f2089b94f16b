"""Turn numbers count from 1 everywhere a user reads one: the traces, every finding's `where.turn`,
the messages, `compact_at: turn:N` and the bundled suites' comments all name the same turn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from replaylab.compactors.recheck import entry_turns
from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.replay import split_turns
from replaylab.suite import load_suite
from replaylab.transcript import load_transcript
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
REFUND = REPO / "recordings" / "helpdesk" / "refund-cracked-headphones.jsonl"


@pytest.fixture(scope="module")
def auto_scenario():
    (scenario,) = load_suite(REPO / "suites" / "auto.yaml").scenarios
    return scenario


def test_the_refund_is_dropped_in_turn_5_as_the_auto_suite_says(auto_scenario) -> None:
    """suites/auto.yaml: "the refund (turn 5) precedes the cut before turn 8"."""
    result = run_item(auto_scenario, REFUND, RunOptions())
    (refund,) = [d for d in result.defects if d.code == Code.MUTATION_DROPPED and d.where.tool == "issue_refund"]
    assert refund.where.turn == 5
    assert [t.turn for t in result.baseline.turns] == [8, 9, 10]
    assert [t.turn for t in result.compacted.turns] == [8, 9, 10]
    assert all(c.turn == t.turn for t in result.baseline.turns for c in t.tool_calls)


def test_compact_at_turn_n_replays_from_the_turn_named_n(auto_scenario) -> None:
    scenario = auto_scenario.model_copy(update={"compact_at": "turn:6"})
    result = run_item(scenario, REFUND, RunOptions())
    assert result.baseline.turns[0].turn == 6
    assert result.baseline.turns[0].user_text == split_turns(load_transcript(REFUND).leaf_path())[5].user_text()
    assert result.compacted.turns[0].turn == 6 and result.compacted.turns[-1].turn == 10


def test_the_first_entry_of_a_session_is_in_turn_1() -> None:
    path = load_transcript(REFUND).leaf_path()
    turns = entry_turns(path)
    first_message = next(e for e in path if e.id in turns)
    assert turns[first_message.id] == 1
    assert max(turns.values()) == len(split_turns(path))


def test_replaylab_compact_names_the_turn_of_every_finding(tmp_path: Path) -> None:
    """The compactor knows no turns: the command locates its findings in the file it compacted."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "replaylab.cli",
            "compact",
            str(REFUND),
            "--mode",
            "auto",
            "--context-tokens",
            "3200",
            "--reserve-tokens-floor",
            "800",
            "--keep-recent-tokens",
            "500",
            "--out",
            str(tmp_path / "copy.jsonl"),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    located = [f for f in findings if f["code"] in ("MUTATION_DROPPED", "MUTATION_ALTERED", "PAIR_BROKEN")]
    assert located and all(f["where"]["turn"] is not None for f in located)
    (refund,) = [f for f in located if f["where"]["tool"] == "issue_refund"]
    assert refund["where"]["turn"] == 5


#: the turns of the dropped writes as suites/auto.yaml's comments name them
AUTO_SUITE_COMMENTS = {
    "ambiguous-customer-expedite": [5, 7],  # the ticket (turn 5) and the email (turn 7)
    "cancel-two-orders": [3, 4, 5],  # the three cancellations of turns 3-5
    "long-account-review": [11, 21, 27],  # the cancellation (turn 11), address change (21) and refund (27)
    "parallel-order-overview": [5, 5, 5],  # the refund and the two parallel ticket notes of turn 5
    "refund-approval-pending": [5],  # the refused first refund (turn 5)
    "refund-cracked-headphones": [5],  # the refund (turn 5)
    "security-lockout": [3],  # the sessions_spawn call (turn 3)
    "threshold-exact-budget": [3, 4, 7],  # note (turn 3), escalation (4) and cancellation (7)
    "vat-invoice-escalation": [5, 6],  # escalation (turn 5) and note (6)
}


def test_every_dropped_write_of_the_auto_suite_is_in_the_turn_its_comment_names(auto_scenario) -> None:
    suite = load_suite(REPO / "suites" / "auto.yaml")
    text = (REPO / "suites" / "auto.yaml").read_text()
    for recording in suite.recordings:
        if recording.stem not in AUTO_SUITE_COMMENTS:
            continue
        assert f"{recording.name}:" in text
        result = run_item(auto_scenario, recording, RunOptions())
        turns = sorted(d.where.turn for d in result.defects if d.code == Code.MUTATION_DROPPED)
        assert turns == AUTO_SUITE_COMMENTS[recording.stem], recording.stem
