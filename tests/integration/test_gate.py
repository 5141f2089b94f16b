"""The run's exit status as a CI gate: a run that did not complete (a usage error, a collection
error) leaves the last reports as they are; a run that exercised nothing exits 6 (so does
`replaylab report merge --check` on such a report) unless the user allows it.

Each run is a fresh `pytest` process: the exit status and the order of what is printed are the point.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from replaylab.report.run import NOTHING_EXERCISED_EXIT
from replaylab.results import ItemResult
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
CLI = [sys.executable, "-m", "replaylab.cli"]
#: a budget the session never crosses: its one item is not exercised
HUGE_BUDGET = (
    "name: huge-budget\nrecordings: ../recordings/helpdesk/readonly-missing-parcel.jsonl\n"
    "tools: examples.helpdesk\ncompaction: {mode: safeguard, contextTokens: 900000}\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundled recordings, the manual suite and a suite that exercises nothing."""
    root = tmp_path_factory.mktemp("gate")
    shutil.copytree(REPO / "recordings", root / "recordings")
    (root / "suites").mkdir()
    shutil.copy(REPO / "suites" / "manual.yaml", root / "suites")
    (root / "idle").mkdir()
    (root / "idle" / "huge-budget.yaml").write_text(HUGE_BUDGET)
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_pytest(root, "-q", *args, pythonpath=[REPO])


def test_a_typo_in_the_suites_path_leaves_the_last_report_as_it_was_and_prints_no_summary(
    project: Path, tmp_path: Path
) -> None:
    out = tmp_path / "reports"
    good = run(project, "--replaylab", "suites/manual.yaml", "--replaylab-report", str(out))
    assert good.returncode == 0, good.stdout[-3000:]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"replaylab.html", "replaylab.json", "replaylab.md"}
    typo = run(project, "--replaylab", "suitez/", "--replaylab-report", str(out))
    assert typo.returncode == 4
    assert "file or directory not found: suitez/" in typo.stderr
    assert "replaylab:" not in typo.stdout.replace("replaylab: model=", "")  # only pytest's header line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_collection_error_writes_no_report_and_says_so_after_pytests_errors(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    broken = tmp_path / "test_broken.py"
    broken.write_text("def test_x(:\n")
    done = run(project, "--replaylab", "suites/manual.yaml", str(broken), "--replaylab-report", str(out))
    assert done.returncode == 2, done.stdout[-3000:]
    assert not out.exists() or not list(out.iterdir())  # checked writable before the run, left empty
    note = "replaylab: no reports written (pytest exit status 2: the run did not complete)"
    assert note in done.stdout
    assert done.stdout.index("ERROR collecting") < done.stdout.index(note)
    assert " items: " not in done.stdout  # no summary of a run that did not complete


def test_a_run_that_exercised_nothing_exits_6_unless_allowed(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    idle = run(project, "--replaylab", "idle/", "--replaylab-report", str(out))
    assert idle.returncode == NOTHING_EXERCISED_EXIT == 6, idle.stdout[-3000:]
    assert "replaylab: NOTHING EXERCISED: none of 1 items was compacted and compared; exit status 6" in idle.stdout
    report = json.loads((out / "replaylab.json").read_text())  # the reports are written all the same
    assert report["totals"]["items"] == report["totals"]["skipped"] == 1
    assert "NOTHING EXERCISED" in (out / "replaylab.md").read_text().splitlines()[0]
    allowed = run(
        project, "--replaylab", "idle/", "--replaylab-report", str(out), "--replaylab-allow-nothing-exercised"
    )
    assert allowed.returncode == 0 and "NOTHING EXERCISED" not in allowed.stdout
    by_ini = run(
        project, "--replaylab", "idle/", "--replaylab-report", str(out), "-o", "replaylab_allow_nothing_exercised=true"
    )
    assert by_ini.returncode == 0
    # zero items (a -k that selects none) exercised nothing too: 6, not pytest's 5
    none = run(project, "--replaylab", "suites/manual.yaml", "-k", "no-such-item", "--replaylab-report", str(out))
    assert none.returncode == 6 and "none of 0 items" in none.stdout
    # a run that exercised something keeps pytest's status
    some = run(project, "--replaylab", "suites/manual.yaml", "idle/", "--replaylab-report", str(out))
    assert some.returncode == 0, some.stdout[-3000:]


def test_merge_check_fails_a_merged_report_that_exercised_nothing(project: Path, tmp_path: Path) -> None:
    shard = tmp_path / "reports-1"
    assert run(project, "--replaylab", "idle/", "--replaylab-report", str(shard)).returncode == 6
    merge = [*CLI, "report", "merge", str(shard / "replaylab.json"), "--out", str(tmp_path / "merged")]
    checked = subprocess.run([*merge, "--check"], capture_output=True, text=True)
    assert checked.returncode == 6, checked
    assert "NOTHING EXERCISED: none of 1 merged sessions" in checked.stderr
    assert subprocess.run(merge, capture_output=True).returncode == 0  # no --check: no gate
    allowed = subprocess.run([*merge, "--check", "--allow-nothing-exercised"], capture_output=True, text=True)
    assert allowed.returncode == 0, allowed


def test_not_exercised_items_are_located_at_their_suite_and_summarised_with_counts(
    project: Path, tmp_path: Path
) -> None:
    done = run(project, "--replaylab", "idle/", "-rs", "--replaylab-report", str(tmp_path / "r"))
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    # the suite file and its `compaction:` line (the default scenario), not the plugin's source
    assert skipped and skipped[0].startswith("SKIPPED [1] idle/huge-budget.yaml:4: not exercised: "), skipped
    assert "collect.py" not in done.stdout
    assert "replaylab: not exercised 1: never crosses the budget" in done.stdout


def test_a_named_scenarios_skip_is_located_at_its_name(project: Path, tmp_path: Path) -> None:
    suite = tmp_path / "named.yaml"
    suite.write_text(
        HUGE_BUDGET.replace("../recordings", str(project / "recordings"))
        + "scenarios:\n  - name: first\n  - name: 'second'\n"
    )
    done = run(project, "--replaylab", str(suite), "-rs", "--replaylab-report", str(tmp_path / "r"))
    lines = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert [line.split(": not exercised")[0].rsplit(":", 1)[1] for line in lines] == ["6", "7"], lines
    assert "replaylab: not exercised 2: never crosses the budget" in done.stdout


def test_a_baseline_partly_absent_from_the_run_is_counted_and_a_shard_counts_only_its_part(tmp_path: Path) -> None:
    from replaylab.report.run import compare_with_baseline
    from replaylab.results import RunMeta, RunReport

    blessed = {f"s.yaml::r{k}::m": {"outcome": "passed", "defects": []} for k in range(4)}
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"schema_version": 2, "items": blessed}))
    items = [
        ItemResult(id=item_id, suite="s", scenario="m", recording="r", outcome="passed")
        for item_id in ("s.yaml::r0::m", "s.yaml::r1::m", "s.yaml::new::m")
    ]
    meta = RunMeta(replaylab_version="0", git_sha=None, model="replay", started_at="", python="3.11", argv=[])
    report = RunReport(meta=meta, items=items)
    whole = compare_with_baseline(report, baseline)
    assert (whole.blessed, whole.absent, whole.unblessed) == (4, 2, 1)
    assert whole.warning is not None and whole.warning.startswith(
        "baseline warning: 2 of 4 blessed items are not in this run (2 compared; 1 items of this run are not in"
    )
    # a shard compares with its own part of the baseline: the other shards' items are not absent
    shard = compare_with_baseline(report, baseline, lambda item_id: item_id.split("::")[1] in ("r0", "r1"))
    assert (shard.blessed, shard.absent, shard.warning) == (2, 0, None)
