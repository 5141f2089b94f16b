"""Results keyed by identity: every item has its own node id, whatever the suite layout, and the
terminal summary, the JSON, HTML and markdown reports and JUnit count exactly what pytest counts —
items that crashed included.

Each run is a real `python -m pytest --replaylab` in a fresh process on copies of the bundled
recordings (exit status, stdout and every written file are the real ones). A failing item comes
from a negative control whose expected defect safeguard never produces; a crashing item from a
tool pack whose argument-dependent classifier raises (user code replaylab calls mid-pipeline);
an item whose process dies from a classifier that calls `os._exit` under xdist.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from html_dom import Dom, el_text
from replaylab.results import SCHEMA_VERSION
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
RECORDING = "cancel-two-orders"
SAFEGUARD = "compaction: {mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}\n"
#: pytest's last line: "1 failed, 1 passed, 2 errors in 3.21s"
SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped)")


def project(tmp_path: Path, folders: tuple[str, ...] = ("a", "b")) -> Path:
    """The bundled recording copied into each folder of `folders`, the helpdesk pack importable."""
    root = tmp_path / "project"
    (root / "suites").mkdir(parents=True)
    for folder in folders:
        (root / folder).mkdir()
        for suffix in (".jsonl", ".cassette.yaml"):
            shutil.copy(REPO / "recordings" / "helpdesk" / f"{RECORDING}{suffix}", root / folder)
    shutil.copytree(REPO / "examples", root / "examples")
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_pytest(root, "-q", "-rA", *args, pythonpath=[root])


def pytest_counts(stdout: str) -> dict[str, int]:
    last = [line for line in stdout.splitlines() if " in " in line and SUMMARY.search(line)][-1]
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for number, word in SUMMARY.findall(last):
        counts["error" if word.startswith("error") else word] += int(number)
    return counts


def report_counts(root: Path, stdout: str) -> dict[str, dict[str, int]]:
    """What each output says: pytest's own line, the replaylab terminal summary, the three reports, JUnit."""
    out = {"pytest": pytest_counts(stdout)}
    line = next(line for line in stdout.splitlines() if line.startswith("replaylab: ") and " items: " in line)
    # pytest counts an item that cannot compact as failed; the reports count it apart
    numbers = {
        word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error|cannot compact|not exercised)", line)
    }
    out["terminal"] = {
        "passed": numbers["passed"],
        "failed": numbers["failed"] + numbers["cannot compact"],
        "error": numbers["error"],
        "skipped": numbers["not exercised"],
    }
    totals = json.loads((root / "reports" / "replaylab.json").read_text())["totals"]
    out["json"] = {k: totals[k] for k in ("passed", "failed", "error", "skipped")}
    out["json"]["failed"] += totals["uncompacted"]
    lines = (root / "reports" / "replaylab.md").read_text().splitlines()
    header = [c.strip() for c in lines[2].strip("|").split("|")]  # | sessions | passed | failed | ...
    cells = dict(zip(header, (int(c) for c in lines[4].strip("|").split("|"))))
    out["markdown"] = {
        "passed": cells["passed"],
        "failed": cells["failed"] + cells["cannot compact"],
        "error": cells["error"],
        "skipped": cells["not exercised"],
    }
    dom = Dom((root / "reports" / "replaylab.html").read_text())

    def html_count(key: str) -> int:
        return int(re.match(r"\d+", el_text(dom.find(data_testid=f"count-{key}")[0]))[0])

    out["html"] = {k: html_count(k) for k in out["json"]}
    out["html"]["failed"] += html_count("uncompacted")
    suite = ET.parse(root / "junit.xml").getroot().find("testsuite")
    failures, errors, skipped = (int(suite.get(k)) for k in ("failures", "errors", "skipped"))
    out["junit"] = {
        "passed": int(suite.get("tests")) - failures - errors - skipped,
        "failed": failures,
        "error": errors,
        "skipped": skipped,
    }
    return out


def assert_all_agree(root: Path, done: subprocess.CompletedProcess, expected: dict[str, int]) -> None:
    counts = report_counts(root, done.stdout)
    assert all(c == expected for c in counts.values()), (counts, done.stdout[-3000:])


def test_the_same_file_name_in_two_folders_is_two_items_and_every_report_counts_both(tmp_path: Path) -> None:
    """Before: both recordings were `cancel-two-orders`, one result replaced the other, and the
    markdown said PASS while pytest said 1 failed."""
    root = project(tmp_path)
    (root / "suites" / "two.yaml").write_text(
        "name: two-folders\nrecordings: [../a/*.jsonl, ../b/*.jsonl]\ntools: examples.helpdesk\n"
        + SAFEGUARD
        # a negative control only for the copy in b/: safeguard drops nothing, so that item fails
        + "per_recording:\n  b/cancel-two-orders.jsonl: {defects: [MUTATION_DROPPED]}\n"
    )
    done = run(root, "--replaylab", "suites", "--junitxml", "junit.xml")
    assert done.returncode == 1, done.stdout[-3000:]
    assert_all_agree(root, done, {"passed": 1, "failed": 1, "error": 0, "skipped": 0})
    ids = [item["id"] for item in json.loads((root / "reports" / "replaylab.json").read_text())["items"]]
    assert ids == [f"suites/two.yaml::../a/{RECORDING}::safeguard", f"suites/two.yaml::../b/{RECORDING}::safeguard"]
    assert f"PASSED suites/two.yaml::../a/{RECORDING}::safeguard" in done.stdout
    assert f"FAILED suites/two.yaml::../b/{RECORDING}::safeguard" in done.stdout
    assert "FAIL" in (root / "reports" / "replaylab.md").read_text().splitlines()[0]


def test_node_ids_round_trip_and_every_report_keys_by_them(tmp_path: Path) -> None:
    """The id pytest lists is the id the reports use, and naming it on the command line runs that
    item alone (what `--lf` and a rerun of one failure rely on); `-k` selects by the same names."""
    root = project(tmp_path, ("a",))
    (root / "suites" / "s.yaml").write_text(
        "name: s\nrecordings: ../a/*.jsonl\ntools: examples.helpdesk\n"
        + SAFEGUARD
        + "scenarios:\n  - {name: safeguard}\n  - {name: again}\n"
    )
    listed = run(root, "--replaylab", "suites", "--collect-only")
    ids = [line for line in listed.stdout.splitlines() if line.startswith("suites/")]
    assert ids == [f"suites/s.yaml::{RECORDING}::safeguard", f"suites/s.yaml::{RECORDING}::again"]
    one = run(root, "--replaylab", ids[1], "--junitxml", "junit.xml")
    assert one.returncode == 0, one.stdout[-3000:]
    report = json.loads((root / "reports" / "replaylab.json").read_text())
    assert report["schema_version"] == SCHEMA_VERSION and [i["id"] for i in report["items"]] == [ids[1]]
    assert_all_agree(root, one, {"passed": 1, "failed": 0, "error": 0, "skipped": 0})
    picked = run(root, "--replaylab", "suites", "-k", "again", "--junitxml", "junit.xml")
    assert [i["id"] for i in json.loads((root / "reports" / "replaylab.json").read_text())["items"]] == [ids[1]]
    assert_all_agree(root, picked, {"passed": 1, "failed": 0, "error": 0, "skipped": 0})


CRASHING_PACK = """\
import os
from dataclasses import replace

from examples.helpdesk import TOOLS as HELPDESK


def broken(args):
    {body}


TOOLS = [replace(tool, class_for=broken) if tool.name == "get_order" else tool for tool in HELPDESK]
"""


def test_an_item_whose_run_raises_is_an_error_in_every_report(tmp_path: Path) -> None:
    """Before: the exception escaped the pipeline, pytest counted an error, and the item was missing
    from every report. Now the pack's exception is an item error, the same in every report."""
    root = project(tmp_path, ("a",))
    (root / "crashpack.py").write_text(CRASHING_PACK.format(body="raise ZeroDivisionError('the classifier broke')"))
    (root / "suites" / "s.yaml").write_text("name: s\nrecordings: ../a/*.jsonl\ntools: crashpack\n" + SAFEGUARD)
    done = run(root, "--replaylab", "suites", "--junitxml", "junit.xml")
    assert done.returncode == 1, done.stdout[-3000:]
    assert_all_agree(root, done, {"passed": 0, "failed": 0, "error": 1, "skipped": 0})
    (item,) = json.loads((root / "reports" / "replaylab.json").read_text())["items"]
    assert item["id"] == f"suites/s.yaml::{RECORDING}::safeguard" and item["outcome"] == "error"
    # the pack's code runs in a process of its own: its exception is the pack's failure, named
    reason = (
        "infrastructure error (TOOL_FAILED): tool pack 'crashpack', tool 'get_order': class_for raised "
        "ZeroDivisionError: the classifier broke"
    )
    assert item["reason"] == reason
    assert reason in done.stdout and "Traceback" not in done.stdout + done.stderr
    assert "the classifier broke" in (root / "reports" / "replaylab.md").read_text()
    case = ET.parse(root / "junit.xml").getroot().find("testsuite/testcase")
    assert case.find("error") is not None


WORKER_EXIT = """\
import os


def pytest_runtest_setup(item):
    if "dies.yaml" in item.nodeid:
        os._exit(3)
"""


def test_an_item_whose_worker_process_dies_is_counted_as_pytest_counts_it(tmp_path: Path) -> None:
    """Under xdist the worker running the item exits mid-run: no result can arrive from it, and
    the controller still gives the item one: an error naming the crash, in pytest's summary and
    JUnit as in every report."""
    root = project(tmp_path, ("a", "b"))
    # the worker itself exits (a pack's code can no longer end it: that runs in a process of its own)
    (root / "conftest.py").write_text(WORKER_EXIT)
    (root / "suites" / "dies.yaml").write_text(
        "name: dies\nrecordings: ../a/*.jsonl\ntools: examples.helpdesk\n" + SAFEGUARD
    )
    (root / "suites" / "fine.yaml").write_text(
        "name: fine\nrecordings: ../b/*.jsonl\ntools: examples.helpdesk\n" + SAFEGUARD
    )
    done = run(root, "--replaylab", "suites", "-n", "2", "--junitxml", "junit.xml", "--basetemp", str(tmp_path / "t"))
    assert done.returncode == 1, done.stdout[-3000:]
    assert_all_agree(root, done, {"passed": 1, "failed": 0, "error": 1, "skipped": 0})
    items = {i["id"]: i for i in json.loads((root / "reports" / "replaylab.json").read_text())["items"]}
    lost = items[f"suites/dies.yaml::{RECORDING}::safeguard"]
    assert lost["outcome"] == "error" and lost["reason"].startswith("no replaylab result arrived: worker 'gw")
    assert items[f"suites/fine.yaml::{RECORDING}::safeguard"]["outcome"] == "passed"


STOPPING_PLUGIN = """\
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    yield
    if item.name == "stopped":
        pytest.fail("the timeout plugin stopped it")
    if item.name == "skipped":
        pytest.skip("the plugin skipped it")
"""


def test_an_item_another_plugin_fails_after_replaylab_passed_it_is_failed_in_every_report(tmp_path: Path) -> None:
    """A plugin (a timeout, say) fails or skips the call phase of an item replaylab passed:
    pytest counts a failure or a skip, so does every report."""
    root = project(tmp_path, ("a",))
    (root / "conftest.py").write_text(STOPPING_PLUGIN)
    (root / "suites" / "s.yaml").write_text(
        "name: s\nrecordings: ../a/*.jsonl\ntools: examples.helpdesk\n"
        + SAFEGUARD
        + "scenarios:\n  - {name: stopped}\n  - {name: skipped}\n  - {name: fine}\n"
    )
    done = run(root, "--replaylab", "suites", "--junitxml", "junit.xml")
    assert done.returncode == 1, done.stdout[-3000:]
    assert_all_agree(root, done, {"passed": 1, "failed": 1, "error": 0, "skipped": 1})
    items = {i["id"]: i for i in json.loads((root / "reports" / "replaylab.json").read_text())["items"]}
    stopped = items[f"suites/s.yaml::{RECORDING}::stopped"]
    assert stopped["outcome"] == "failed" and stopped["scenario"] == "stopped"
    assert stopped["reason"].startswith("pytest failed the item replaylab found passed:")
    assert "the timeout plugin stopped it" in stopped["reason"]
    skipped = items[f"suites/s.yaml::{RECORDING}::skipped"]
    assert skipped["outcome"] == "skipped" and skipped["reason"] == (
        "pytest skipped the item replaylab found passed: Skipped: the plugin skipped it"
    )


def test_a_pack_that_skips_from_inside_cannot_skip_the_item(tmp_path: Path) -> None:
    """pytest.skip raised by a tool pack's classifier runs in the pack's own process: it cannot
    turn the item into a skip (a green gate that tested nothing); the item is the pack's error, in
    pytest's counts and every report alike."""
    root = project(tmp_path, ("a",))
    (root / "crashpack.py").write_text(CRASHING_PACK.format(body="import pytest; pytest.skip('no service here')"))
    (root / "suites" / "s.yaml").write_text("name: s\nrecordings: ../a/*.jsonl\ntools: crashpack\n" + SAFEGUARD)
    done = run(root, "--replaylab", "suites", "--junitxml", "junit.xml")
    assert done.returncode == 1, done.stdout[-3000:]
    assert_all_agree(root, done, {"passed": 0, "failed": 0, "error": 1, "skipped": 0})
    (item,) = json.loads((root / "reports" / "replaylab.json").read_text())["items"]
    assert item["reason"].startswith("infrastructure error (TOOL_FAILED): tool pack 'crashpack'"), item["reason"]


def test_a_baseline_of_the_wrong_shape_is_a_warning_and_the_reports_are_written(tmp_path: Path) -> None:
    root = project(tmp_path, ("a",))
    (root / "suites" / "s.yaml").write_text("name: s\nrecordings: ../a/*.jsonl\ntools: examples.helpdesk\n" + SAFEGUARD)
    for shape in ("[1, 2]", '{"items": []}', '{"items": {"x": 3}}', "{not json", '{"schema_version": 9, "items": {}}'):
        (root / "replaylab-baseline.json").write_text(shape)
        done = run(root, "--replaylab", "suites", "--junitxml", "junit.xml")
        assert done.returncode == 0, done.stdout[-3000:]
        assert (
            "replaylab: WARNING: baseline file" in done.stdout and "bless again with --replaylab-bless" in done.stdout
        )
        assert_all_agree(root, done, {"passed": 1, "failed": 0, "error": 0, "skipped": 0})
        regressions = json.loads((root / "reports" / "replaylab.json").read_text())["regressions_vs_baseline"]
        assert len(regressions) == 1 and "bless again" in regressions[0]


def test_a_mode_override_renames_the_scenario_and_a_baseline_that_matches_nothing_is_a_loud_warning(
    tmp_path: Path,
) -> None:
    """`--replaylab-mode auto` runs the `safeguard` scenario as `safeguard[auto]`: its results never
    pass for (or compare with) the scenario's own; a baseline blessed without the override then
    matches no item, which every report says with counts instead of comparing nothing silently."""
    root = project(tmp_path, ("a",))
    (root / "suites" / "s.yaml").write_text("name: s\nrecordings: ../a/*.jsonl\ntools: examples.helpdesk\n" + SAFEGUARD)
    own = f"suites/s.yaml::{RECORDING}::safeguard"
    assert run(root, "--replaylab", "suites", "--replaylab-bless").returncode == 0
    same = run(root, "--replaylab", "suites", "--replaylab-mode", "safeguard", "--collect-only")
    assert own in same.stdout.splitlines()  # the scenario's own mode: its name as it is
    done = run(root, "--replaylab", "suites", "--replaylab-mode", "auto", "--junitxml", "junit.xml")
    assert done.returncode in (0, 1), done.stdout[-3000:]
    report = json.loads((root / "reports" / "replaylab.json").read_text())
    assert [i["id"] for i in report["items"]] == [f"{own}[auto]"]
    warning = "baseline warning: 1 of 1 blessed items are not in this run (0 compared; 1 items of this run are not in the baseline)"
    assert f"replaylab: WARNING: {warning}" in done.stdout
    assert report["regressions_vs_baseline"][0].startswith(warning)
    markdown = (root / "reports" / "replaylab.md").read_text()
    assert f"> ⚠️ **{warning}" in markdown and "Regressions against the blessed baseline" not in markdown
    dom = Dom((root / "reports" / "replaylab.html").read_text())
    (shown,) = dom.find(data_testid="baseline-warning")
    assert warning in el_text(shown) and not dom.find(data_testid="baseline-regressions")
    # `-k` and a node id on the command line take the renamed scenario
    picked = run(root, "--replaylab", "suites", "--replaylab-mode", "auto", "-k", "safeguard[auto]", "--collect-only")
    assert f"{own}[auto]" in picked.stdout.splitlines()
    # blessed under the same override, the baseline matches again: no warning
    assert run(root, "--replaylab", "suites", "--replaylab-mode", "auto", "--replaylab-bless").returncode in (0, 1)
    again = run(root, "--replaylab", "suites", "--replaylab-mode", "auto")
    assert "baseline warning" not in again.stdout
    assert json.loads((root / "reports" / "replaylab.json").read_text())["regressions_vs_baseline"] == []


def test_a_version_1_baseline_is_compared_by_its_old_item_ids(tmp_path: Path) -> None:
    """Ids of schema 1 were `<suite name>::<recording stem>::<scenario>`: a baseline blessed then
    still finds its items."""
    root = project(tmp_path, ("a",))
    (root / "suites" / "s.yaml").write_text(
        "name: s\nrecordings: ../a/*.jsonl\ntools: examples.helpdesk\n"
        + SAFEGUARD
        + f"per_recording:\n  {RECORDING}.jsonl: {{defects: [MUTATION_DROPPED]}}\n"
    )
    baseline = {"schema_version": 1, "items": {f"s::{RECORDING}::safeguard": {"outcome": "passed", "defects": []}}}
    (root / "replaylab-baseline.json").write_text(json.dumps(baseline))
    done = run(root, "--replaylab", "suites", "--junitxml", "junit.xml")
    assert done.returncode == 1
    regressions = json.loads((root / "reports" / "replaylab.json").read_text())["regressions_vs_baseline"]
    assert regressions and regressions[0].startswith(
        f"suites/s.yaml::{RECORDING}::safeguard: passed in the baseline, failed now"
    )


@pytest.mark.parametrize("versions", [(1, 1), (1, SCHEMA_VERSION)], ids=["both-version-1", "mixed"])
def test_report_merge_reads_version_1_reports_and_refuses_to_mix_versions(tmp_path: Path, versions) -> None:
    from builders.reports import build_report
    from replaylab.report.jsonio import dump_json

    paths = []
    for index, version in enumerate(versions):
        report = build_report()
        report.items = [item.model_copy(update={"id": f"{item.id}-{index}"}) for item in report.items]
        raw = dump_json(report).replace(
            f'"schema_version": {SCHEMA_VERSION}'.encode(), f'"schema_version": {version}'.encode()
        )
        paths.append(tmp_path / f"shard-{index}.json")
        paths[-1].write_bytes(raw)
    done = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "report", "merge", *map(str, paths), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    if versions == (1, 1):
        assert done.returncode == 0, done.stderr
        merged = json.loads((tmp_path / "out" / "replaylab.json").read_text())
        assert merged["schema_version"] == 1 and merged["totals"]["items"] == 2 * len(build_report().items)
    else:
        assert done.returncode == 2 and "schema versions 1" in done.stderr and "cannot be one run" in done.stderr
