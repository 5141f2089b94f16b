"""Progress of long items: the gating of `replaylab.qa.progress`, the phases the pipeline
reports through it, and the lines `pytest --replaylab -v` and `replaylab compact` show.

The lines of a long item are shown once it has run `LONG_ITEM_S`; the pytest runs below pass
`--replaylab-progress-after 0` for the item that must show them, so no assertion depends on how
fast the machine is, and keep the default for the ones that must show none.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cases.pipeline_scaling import mid_turn, write_session, write_suite
from builders.pytest_runs import run_pytest
from replaylab.qa.progress import LONG_ITEM_S, TURN_LINE_EVERY_S, Progress
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
ENTRIES = 400
#: a progress line of an item: `replaylab: <recording>::<scenario>  <phase>`
PROGRESS_LINE = re.compile(r"^(\[\w+\] )?replaylab: (\S+::\S+)  ", re.MULTILINE)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_is_silent_until_the_run_runs_long() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = Progress(lines.append, name="rec::safeguard", clock=clock)
    progress.phase("loaded 10 entries")
    progress.turns("baseline", 5, 10)
    clock.now += LONG_ITEM_S - 0.01
    progress.phase("compacting 10 entries")
    assert lines == []
    clock.now += 0.02
    progress.phase("compacting 100,000 entries")
    assert lines == ["replaylab: rec::safeguard  compacting 100,000 entries"]


def test_turn_counts_are_throttled_and_the_last_is_always_shown() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = Progress(lines.append, name="rec::safeguard", after_s=0, clock=clock)
    progress.phase("baseline")
    for done in range(1, 5_001):
        clock.now += 0.001  # 5 s over the phase: the first count, one after TURN_LINE_EVERY_S, the last
        progress.turns("baseline", done, 5_000)
    counts = [line for line in lines if "turns" in line]
    assert counts[0] == "replaylab: rec::safeguard  baseline 1/5,000 turns"
    assert counts[-1] == "replaylab: rec::safeguard  baseline 5,000/5,000 turns"
    assert len(counts) == 2 + int(5.0 // TURN_LINE_EVERY_S) - 1
    progress.phase("compacted run")  # a new phase shows its first count at once
    progress.turns("compacted run", 1, 5_000)
    assert lines[-1] == "replaylab: rec::safeguard  compacted run 1/5,000 turns"


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated OpenClaw-shaped session with its cassette and a suite compacting it mid-way."""
    folder = tmp_path_factory.mktemp("big")
    recording = write_session(folder, ENTRIES)
    return write_suite(recording, mid_turn(recording))


def test_the_pipeline_reports_each_phase_and_the_verdict_does_not_depend_on_it(big_session: Path) -> None:
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite

    suite = load_suite(big_session)
    scenario, recording = suite.scenarios[0], suite.recordings[0]
    lines: list[str] = []
    shown = run_item(scenario, recording, RunOptions(progress=Progress(lines.append, name="big", after_s=0)))
    silent = run_item(scenario, recording, RunOptions())
    assert shown.compaction is not None and shown.outcome == silent.outcome
    assert [d.code for d in shown.defects] == [d.code for d in silent.defects]
    phases = [line.removeprefix("replaylab: big  ") for line in lines]
    assert phases[0].startswith("loaded ") and phases[0].endswith(" entries")
    later = len(load_suite(big_session).scenarios) and _later_turns(recording, scenario)
    assert f"baseline {later:,}/{later:,} turns" in phases
    assert any(re.fullmatch(r"compacting [\d,]+ entries", p) for p in phases)
    assert f"compacted run {later:,}/{later:,} turns" in phases
    assert phases[-1] == "comparing the runs"
    # the agent's check of the compacted window reads the whole working copy: it has its own line
    from replaylab.checks.agent_window import unavailable_reason
    from replaylab.qa.plan import plan_item

    profile = plan_item(scenario, recording, RunOptions()).profile
    if unavailable_reason(profile, "auto") is None:
        assert phases[-2] == f"checking 1 compacted window against {profile.label}'s own rebuild", phases
    # the recording's own compactions are audited before any run, each counted
    recorded = _recorded_compactions(recording)
    assert recorded > 0
    assert f"auditing the recording's {recorded:,} compactions" in phases
    assert f"audited {recorded:,}/{recorded:,} recorded compactions" in phases
    order = [
        next(i for i, p in enumerate(phases) if p.startswith(word))
        for word in (
            "loaded",
            "auditing",
            "preparing the baseline",
            "baseline",
            "compacting",
            "compacted run",
            "comparing",
        )
    ]
    assert order == sorted(order)


def _recorded_compactions(recording: Path) -> int:
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import CompactionEntry

    return sum(isinstance(e, CompactionEntry) for e in load_transcript(recording).leaf_path())


def _later_turns(recording: Path, scenario) -> int:
    from replaylab.replay import split_turns
    from replaylab.transcript import load_transcript

    turns = split_turns(load_transcript(recording).leaf_path())
    return len(turns) - (int(scenario.compact_at.split(":")[1]) - 1)


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_pytest(cwd, "--replaylab", *args)


def test_pytest_v_shows_the_phases_of_a_long_item_on_their_own_lines(big_session: Path, tmp_path: Path) -> None:
    done = _pytest(
        big_session.parent,
        big_session.name,
        "-v",
        "--replaylab-progress-after",
        "0",
        "--replaylab-report",
        str(tmp_path),
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    lines = [m.group(0) + done.stdout[m.end() :].split("\n", 1)[0] for m in PROGRESS_LINE.finditer(done.stdout)]
    name = f"big-{ENTRIES}::auto"
    assert lines and all(line.startswith(f"replaylab: {name}  ") for line in lines), done.stdout[-3000:]
    text = "\n".join(lines)
    for phase in ("loaded ", "baseline ", "compacting ", "compacted run ", "comparing the runs"):
        assert phase in text, text
    # pytest's own line for the item is whole: its node id, then its outcome, after the progress lines
    outcome = re.search(rf"^\S+::{re.escape(name)} (PASSED|FAILED|SKIPPED|ERROR)", done.stdout, re.MULTILINE)
    assert outcome is not None and outcome.start() > done.stdout.index(lines[-1]), done.stdout[-3000:]


def test_without_v_a_long_item_prints_no_progress_lines(big_session: Path, tmp_path: Path) -> None:
    done = _pytest(
        big_session.parent, big_session.name, "--replaylab-progress-after", "0", "--replaylab-report", str(tmp_path)
    )
    assert done.returncode in (0, 1), done.stdout[-3000:]
    assert PROGRESS_LINE.search(done.stdout) is None and PROGRESS_LINE.search(done.stderr) is None
    assert re.search(r"^\S+\.yaml [.FsE]+ +\[100%\]$", done.stdout, re.MULTILINE), done.stdout[-3000:]


def test_short_items_print_no_progress_lines_under_v(tmp_path: Path) -> None:
    shutil.copytree(REPO / "recordings", tmp_path / "recordings")
    shutil.copytree(REPO / "examples", tmp_path / "examples")  # the tool pack the suite names
    shutil.copytree(
        REPO / "suites", tmp_path / "suites", ignore=lambda folder, names: [n for n in names if n != "safeguard.yaml"]
    )
    # without the pi check (node per compacted window): each item then takes milliseconds
    done = _pytest(
        tmp_path,
        "suites/safeguard.yaml",
        "-v",
        "--replaylab-verify-with-pi",
        "off",
        "--replaylab-report",
        str(tmp_path / "reports"),
    )
    assert done.returncode in (0, 1), done.stdout[-3000:]
    assert " PASSED" in done.stdout
    # an item is short by what it took here: on a loaded machine one may pass the threshold, and
    # then its lines are right; an item well under it never prints one
    items = json.loads((tmp_path / "reports" / "replaylab.json").read_text(encoding="utf-8"))["items"]
    took = {item["id"].split("::", 1)[1]: item["duration_s"] for item in items}
    assert took and min(took.values()) < LONG_ITEM_S, took
    printed = {m.group(2) for m in PROGRESS_LINE.finditer(done.stdout + done.stderr)}
    assert printed <= set(took), printed
    assert [name for name in printed if took[name] < LONG_ITEM_S / 2] == []


def test_replaylab_compact_shows_progress_on_stderr_when_asked(big_session: Path, tmp_path: Path) -> None:
    recording = big_session.parent / f"big-{ENTRIES}.jsonl"
    command = [sys.executable, "-m", "replaylab.cli", "compact", str(recording), "--mode", "auto"]
    shown = subprocess.run([*command, "--out", str(tmp_path / "a.jsonl"), "--progress"], capture_output=True, text=True)
    assert shown.returncode in (0, 1), shown.stderr[-2000:]
    assert re.search(rf"^replaylab: compacting {re.escape(str(recording))} \([\d.,]+ MB\)$", shown.stderr, re.MULTILINE)
    assert re.search(r"^replaylab: compacted in [\d.,]+ s$", shown.stderr, re.MULTILINE), shown.stderr
    assert "replaylab:" not in shown.stdout
    # stderr is no terminal here and the file is small: nothing unless asked
    quiet = subprocess.run([*command, "--out", str(tmp_path / "b.jsonl")], capture_output=True, text=True)
    assert quiet.returncode == shown.returncode and "replaylab: compact" not in quiet.stderr


def test_under_xdist_a_worker_writes_the_lines_on_its_stderr(big_session: Path, tmp_path: Path) -> None:
    """The controller never sees a worker's terminal output: the worker's own stderr (which xdist
    leaves to the terminal) carries them, each naming the worker and the item."""
    pytest.importorskip("xdist")
    done = _pytest(
        big_session.parent,
        big_session.name,
        "-v",
        "-n",
        "2",
        "--replaylab-progress-after",
        "0",
        "--replaylab-verify-with-pi",
        "off",
        "--replaylab-report",
        str(tmp_path),
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    lines = re.findall(rf"^\[gw\d\] replaylab: big-{ENTRIES}::auto  (.+)$", done.stderr, re.MULTILINE)
    assert lines and lines[0].startswith("loaded ") and lines[-2] == "comparing the runs", done.stderr[-3000:]
    assert re.fullmatch(r"writing its reports \([\d,]+ defects?\)", lines[-1]), done.stderr[-3000:]
    assert re.search(rf"\[gw\d\] \[100%\] (PASSED|FAILED) \S+::big-{ENTRIES}::auto", done.stdout), done.stdout[-3000:]
