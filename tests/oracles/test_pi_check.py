"""Every compacted window the pipeline judges is compared with the context the real pi builds from
the working copy (`replaylab.checks.agent_window`), and the reports, the terminal and `replaylab compact
--verify-with-pi` say so. Needs the pi oracle (`npm ci --prefix replaylab/oracles/node/pi-0.73.1`): without
it these tests skip with the reason, and under CI=true they fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builders.oracles import oracles_asked_ahead, running_oracles
from builders.pytest_runs import run_pytest
from replaylab.compaction import compact as real_compact
from replaylab.oracles.pi import pinned_version
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
RECORDING = REPO / "recordings" / "helpdesk" / "cancel-two-orders.jsonl"
LONG = REPO / "recordings" / "helpdesk" / "long-account-review.jsonl"


# the conftest's `pi` fixture: skips without the oracle, fails under CI=true
pytestmark = pytest.mark.usefixtures("pi")


def scenario(name: str = "safeguard"):
    suite = load_suite(REPO / "suites" / "safeguard.yaml")
    return next(s for s in suite.scenarios if s.name == name)


def test_each_compacted_window_of_an_item_is_checked_and_equal() -> None:
    result = run_item(scenario(), RECORDING, RunOptions())
    assert result.outcome == "passed", result.reason
    assert result.verified_against == f"pi {pinned_version()}" and result.agent == "pi@0.73.1"
    assert result.verified_windows >= 1
    assert "AGENT_CONTEXT_DIFFERS" not in {d.code.value for d in result.defects}


def test_the_check_off_compares_nothing() -> None:
    result = run_item(scenario(), RECORDING, RunOptions(verify_with_pi="off"))
    assert result.outcome == "passed" and result.verified_against is None and result.verified_windows == 0


@pytest.mark.parametrize("setting", ["auto", "off"])
def test_an_item_starts_its_agents_oracle_before_its_runs(monkeypatch, setting: str) -> None:
    """The item's oracle runs by the time its baseline starts, so its start overlaps the runs
    instead of being waited for by the check after them; with the check off none is started."""
    from replaylab.checks import agent_window
    from replaylab.qa import pipeline

    agent_window._SHARED.close()
    seen: list[set[str]] = []
    baseline_run = pipeline.baseline_run

    def observed(*args, **kwargs):
        seen.append(running_oracles())
        return baseline_run(*args, **kwargs)

    monkeypatch.setattr(pipeline, "baseline_run", observed)
    result = run_item(scenario(), RECORDING, RunOptions(verify_with_pi=setting))
    assert result.outcome == "passed", result.reason
    assert seen == [{"pi@0.73.1"} if setting == "auto" else set()]
    assert (result.verified_windows >= 1) == (setting == "auto")


@pytest.mark.parametrize(("compact_at", "ahead"), [("turn:3", True), ("every:2", False), ("auto", False)])
def test_the_first_window_is_sent_to_the_agent_ahead_of_the_compacted_run_when_no_later_compaction_is_due(
    monkeypatch, compact_at: str, ahead: bool
) -> None:
    """With one compaction point, the agent is asked for its rebuild of the first window as soon as
    the compaction is written, and reads the working copy while the compacted run goes on; with
    later compactions due (more points, or `auto`), one request after the run asks for every
    window, so the agent reads the copy once. Either way each window is checked and equal."""
    from replaylab.checks import agent_window
    from replaylab.qa import pipeline

    agent_window._SHARED.close()
    in_flight: list[set[str]] = []
    compacted_run = pipeline.compacted_run

    def observed(*args, **kwargs):
        in_flight.append(oracles_asked_ahead())
        return compacted_run(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compacted_run", observed)
    chosen = scenario().model_copy(update={"compact_at": compact_at})
    result = run_item(chosen, RECORDING, RunOptions())
    assert result.outcome == "passed", result.reason
    assert in_flight == [{"pi@0.73.1"} if ahead else set()]
    assert oracles_asked_ahead() == set()
    assert result.compaction is not None and result.verified_windows == result.compaction.compactions
    assert result.verified_windows > 1 or compact_at != "every:2"
    assert "AGENT_CONTEXT_DIFFERS" not in {d.code.value for d in result.defects}


@pytest.mark.usefixtures("openclaw")
def test_a_compaction_in_the_compacted_run_waits_until_the_agent_asked_ahead_has_read_the_copy(monkeypatch) -> None:
    """The first window was sent ahead; an overflow in the compacted run then compacts again,
    which changes the working copy. The compactor runs only once the agent has answered (no
    request in flight), so the agent rebuilt the copy as the first compaction left it; the window
    of the overflow compaction is checked in a request of its own, and both are the agent's."""
    from replaylab.checks import agent_window
    from replaylab.qa import pipeline

    agent_window._SHARED.close()
    loaded = load_suite(REPO / "suites" / "overflow-controls-refund.yaml")
    (chosen,) = [s for s in loaded.scenarios if s.name == "recovers"]
    at_compactions: list[set[str]] = []
    at_compacted_run: list[set[str]] = []
    compacted_run = pipeline.compacted_run

    def compactor(params, *, classifier=None, writer=None):
        at_compactions.append(oracles_asked_ahead())
        return real_compact(params, classifier=classifier, writer=writer)

    def observed(*args, **kwargs):
        at_compacted_run.append(oracles_asked_ahead())
        return compacted_run(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compacted_run", observed)
    result = run_item(chosen, loaded.recordings[0], RunOptions(compactor=compactor))
    assert result.outcome == "passed", (result.reason, [d.message for d in result.defects])
    assert at_compacted_run == [{"openclaw@2026.9.6"}]
    assert at_compactions == [set(), set()]
    assert result.verified_windows == 2
    assert "AGENT_CONTEXT_DIFFERS" not in {d.code.value for d in result.defects}


def test_a_compactor_whose_copy_pi_reads_differently_is_an_error_naming_the_difference() -> None:
    """A compactor under test that appends, after what its compaction wrote, a message replaylab's
    loader cannot read (its content a number: no text, no list of blocks) and a turn after it: pi
    reads the first as it is and rebuilds through it, replaylab cannot — the item cannot be judged."""

    def appends_what_only_pi_reads(params, *, classifier=None, writer=None):
        result = real_compact(params, classifier=classifier, writer=writer)
        if result.success:
            for entry_id, parent, content in (
                ("after0001", result.leaf_id, 5),
                ("after0002", "after0001", [{"type": "text", "text": "and another"}]),
            ):
                writer.append(
                    {
                        "type": "message",
                        "id": entry_id,
                        "parentId": parent,
                        "timestamp": "2026-01-01T00:00:00.000Z",
                        "message": {"role": "user", "content": content, "timestamp": 0},
                    }
                )
        return result

    result = run_item(scenario(), RECORDING, RunOptions(compactor=appends_what_only_pi_reads))
    codes = [d.code.value for d in result.defects]
    assert "AGENT_CONTEXT_DIFFERS" in codes, codes
    assert result.outcome == "error"
    defect = next(d for d in result.defects if d.code.value == "AGENT_CONTEXT_DIFFERS")
    assert "differs" in defect.message and f"pi {pinned_version()}" in defect.message


def test_the_window_judged_is_the_one_pi_rebuilds_from_what_the_compactor_left() -> None:
    """A compactor that appends a turn after its compaction entry, branching off what it restated
    there: pi follows the file's leaf, and so does the window replaylab judges — equal to pi's, and
    the restated writes it abandoned are MUTATION_DROPPED."""

    def abandons_what_it_restated(params, *, classifier=None, writer=None):
        result = real_compact(params, classifier=classifier, writer=writer)
        if result.success:
            writer.append(
                {
                    "type": "message",
                    "id": "after0001",
                    "parentId": result.compaction_event_id,
                    "timestamp": "2026-01-01T00:00:00.000Z",
                    "message": {"role": "user", "content": [{"type": "text", "text": "an extra turn"}], "timestamp": 0},
                }
            )
        return result

    result = run_item(scenario(), RECORDING, RunOptions(compactor=abandons_what_it_restated))
    codes = {d.code.value for d in result.defects}
    assert "AGENT_CONTEXT_DIFFERS" not in codes and "MUTATION_DROPPED" in codes, codes
    assert result.verified_windows >= 1


def _pytest(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_pytest(REPO, "--replaylab", *args, env=env)


def test_the_terminal_and_every_report_say_how_many_windows_pi_verified(tmp_path: Path) -> None:
    out = tmp_path / "reports"
    done = _pytest("suites/long-session.yaml", f"--replaylab-report={out}", "-q")
    assert done.returncode == 0, done.stdout[-3000:]
    report = json.loads((out / "replaylab.json").read_text(encoding="utf-8"))
    windows = report["totals"]["verified_windows"][f"pi {pinned_version()}"]
    assert windows == sum(item["verified_windows"] for item in report["items"]) >= 3
    line = f"window verified against pi {pinned_version()}: {windows} compacted windows equal to pi's context"
    assert f"replaylab: {line}" in done.stdout
    assert line in (out / "replaylab.md").read_text(encoding="utf-8")
    assert line in (out / "replaylab.html").read_text(encoding="utf-8").replace("&#39;", "'")


def test_verify_with_pi_on_without_the_oracle_is_a_usage_error(tmp_path: Path) -> None:
    done = _pytest(
        "suites/long-session.yaml",
        f"--replaylab-report={tmp_path / 'r'}",
        "--replaylab-verify-windows",
        "on",
        env={"REPLAYLAB_NODE": str(tmp_path / "no-node")},
    )
    assert done.returncode == 4, done.stdout[-2000:]
    assert "--replaylab-verify-windows on: REPLAYLAB_NODE=" in done.stdout + done.stderr


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "replaylab.cli", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


BUDGET = ("--context-tokens", "6000", "--reserve-tokens-floor", "800", "--keep-recent-tokens", "500")


def test_compact_verify_with_pi_prints_the_check_and_puts_it_in_the_json(tmp_path: Path) -> None:
    done = cli(
        "compact", str(LONG), "--mode", "aggressive", *BUDGET, "--out", str(tmp_path / "a.jsonl"), "--verify-with-pi"
    )
    assert f"window verified against pi {pinned_version()}: " in done.stdout, done.stdout[-2000:]
    data = cli(
        "compact",
        str(LONG),
        "--mode",
        "auto",
        *BUDGET,
        "--out",
        str(tmp_path / "b.jsonl"),
        "--json",
        "--verify-with-pi",
    )
    check = json.loads(data.stdout)["windowCheck"]
    assert check["agent"] == f"pi {pinned_version()}" and check["mismatches"] == [] and check["messages"] >= 2


def test_compact_verify_with_pi_without_the_oracle_says_why(tmp_path: Path) -> None:
    done = cli("compact", str(LONG), "--verify-with-pi", env={"REPLAYLAB_NODE": str(tmp_path / "no-node")})
    assert done.returncode == 2
    assert "error[no-oracle] field '--verify'" in done.stderr + done.stdout
