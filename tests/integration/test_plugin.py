"""The pytest plugin on the bundled helpdesk suites: the README's main command, options, exit
statuses, shards, bless, strict, repeats, JUnit, and a live service that must see no request.

Runs happen in this process (`pytester`) unless a fresh process is the point: the exit status of
a usage error, the garbage collector's state, xdist.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from inprocess import pytest_in
from repo_paths import REPO_ROOT

REPO = REPO_ROOT


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundled recordings, suites and the example tool pack they name (runs never touch
    the repo's own folders)."""
    root = tmp_path_factory.mktemp("project")
    for folder in ("recordings", "suites", "examples"):
        shutil.copytree(REPO / folder, root / folder)
    return root


@pytest.fixture
def in_project(pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch):
    """`pytest ARGS` run in this process, in the project folder."""
    return pytest_in(pytester, project, monkeypatch)


def run(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`pytest ARGS` in a fresh process (in `root`)."""
    return run_pytest(root, *args, env=env)


def tree_hashes(root: Path) -> dict[str, str]:
    import hashlib

    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "reports" not in p.parts and "out" not in p.parts[:1]
    }


def test_main_command_runs_every_bundled_suite_offline_and_nothing_escapes(
    project: Path, in_project, monkeypatch: pytest.MonkeyPatch
):
    """`pytest --replaylab suites/` exits 0 and writes the three reports; with the pack's tools
    pointed at a live helpdesk service, the service sees no request and its rows do not change."""
    from examples.helpdesk import start_service

    before = tree_hashes(project)
    with start_service() as service:
        rows_before = service.row_counts()
        monkeypatch.setenv("REPLAYLAB_TOOL_BASE_URL", service.url)
        result = in_project("--replaylab", "suites/", "--junitxml", "reports/junit.xml")
        assert service.write_requests == 0 and service.read_requests == 0
        assert service.row_counts() == rows_before
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((project / "reports" / "replaylab.json").read_text())
    totals = report["totals"]
    assert totals["items"] >= 4 * 13 and totals["failed"] == totals["error"] == 0 and totals["skipped"] == 0
    assert totals["blocking_defects"] == 0
    assert {i["suite"] for i in report["items"]} >= {
        "helpdesk-safeguard",
        "helpdesk-auto",
        "helpdesk-aggressive",
        "helpdesk-manual",
    } or len({i["suite"] for i in report["items"]}) == 4
    html = (project / "reports" / "replaylab.html").read_text()
    assert "<html" in html and "http://" not in html.split("<body", 1)[0].replace("http://www.w3.org", "")
    assert "| " in (project / "reports" / "replaylab.md").read_text()
    assert tree_hashes(project) == before, "recordings and suites must be byte-identical after the run"
    junit = ET.parse(project / "reports" / "junit.xml").getroot()
    cases = junit.findall(".//testcase")
    assert len(cases) == totals["items"] and not junit.findall(".//failure") and not junit.findall(".//error")
    negative = [c for c in cases if "aggressive" in c.get("classname", "") + c.get("name", "")]
    assert negative and any(
        p.get("name", "").startswith("replaylab.defect.") for c in negative for p in c.findall("./properties/property")
    )
    # the item results reach the controller on the reports, not as JUnit properties: a CI system's
    # JUnit file gets the defect lines, never whole traces of (unscrubbed) tool output
    names = {p.get("name", "") for p in junit.iter("property")}
    assert names and all(n.startswith("replaylab.defect.") for n in names), sorted(names)[:5]


def test_negative_control_fails_when_its_expected_defect_is_not_found(project: Path, tmp_path: Path, in_project):
    """A safeguard run that *expects* MUTATION_DROPPED must fail: replaylab would have missed it."""
    suite = project / "suites-extra" / "wrong-expectation.yaml"
    suite.parent.mkdir(exist_ok=True)
    suite.write_text(
        "name: wrong-expectation\nrecordings: ../recordings/helpdesk/refund-cracked-headphones.jsonl\n"
        "tools: examples.helpdesk\ncompaction: {mode: safeguard, contextTokens: 3200, "
        "reserveTokensFloor: 800, keepRecentTokens: 500}\nexpect: {defects: [MUTATION_DROPPED]}\n"
    )
    result = in_project(
        "--replaylab", str(suite), "--replaylab-report", str(tmp_path / "r"), "--junitxml", str(tmp_path / "junit.xml")
    )
    assert result.ret == 1
    assert "negative control: replaylab did not find MUTATION_DROPPED" in result.stdout.str()
    assert "Traceback" not in result.stdout.str()
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert len(junit.findall(".//failure")) == 1 and not junit.findall(".//error")


def test_a_run_renders_no_section_of_a_session_its_report_shows_brief(tmp_path: Path, in_project, monkeypatch):
    """With a size budget most sessions outrun, the run renders sections only for the sessions its
    HTML report shows in more detail than brief (`SectionBudget`, walked as the items finish, in
    the report's order whatever order they finish in), and its page is the one rendered afresh
    from its JSON report."""
    import re

    from replaylab.pytest_plugin.results import ResultCollector
    from replaylab.report import html
    from replaylab.report.jsonio import load_json

    monkeypatch.setattr(html, "SECTIONS_BYTES", 26 * html.BRIEF_RESERVE + 30_000)
    rendered: list[dict[str, str]] = []  # the sections each item was kept with
    keep = ResultCollector.keep

    def counted(*args, **kwargs):
        kept = keep(*args, **kwargs)
        rendered.append(kept._sections)
        return kept

    monkeypatch.setattr(ResultCollector, "keep", counted)
    result = in_project("--replaylab", "suites/safeguard.yaml", "--replaylab-report", str(tmp_path / "r"))
    assert result.ret == 0, result.stdout.str()[-2000:]
    page = (tmp_path / "r" / "replaylab.html").read_text(encoding="utf-8")
    details = re.findall(r'data-testid="session" [^>]*data-detail="(\w+)"', page)
    assert len(details) == len(rendered) == 26 and 0 < details.count("brief") < 26
    # no section for the sessions shown brief, but the one that showed the walk the budget is
    # spent, and at most one that finished before its turn (each recording's scenarios run in the
    # suite's order, and the report lists them by name)
    skipped = sum(1 for sections in rendered if not sections)
    assert details.count("brief") - 2 <= skipped <= details.count("brief") - 1
    assert html.render_html(load_json(tmp_path / "r" / "replaylab.json")) == page


def seen_by_the_first_item(in_project, monkeypatch, probe, suite: str, *args: str):
    """`probe()` as the run's first item starts (before the item's own work), and the run."""
    from replaylab.qa import pipeline

    seen: list = []
    run_item = pipeline.run_item

    def observed(*item_args, **item_kwargs):
        if not seen:
            seen.append(probe())
        return run_item(*item_args, **item_kwargs)

    monkeypatch.setattr(pipeline, "run_item", observed)
    result = in_project("--replaylab", suite, *args)
    assert result.ret == 0, result.stdout.str()[-2000:]
    return seen


@pytest.mark.usefixtures("pi")
@pytest.mark.parametrize("setting", ["auto", "off"])
def test_a_run_starts_the_oracles_its_items_ask_before_the_first_item(
    tmp_path: Path, in_project, monkeypatch, setting: str
):
    """The agent oracles the items' window checks ask run before the first item does (their start,
    seconds for OpenClaw, overlaps the items before the first check); none with the check off."""
    from builders.oracles import running_oracles
    from replaylab.checks import agent_window

    agent_window._SHARED.close()
    report = ("--replaylab-report", str(tmp_path / "r"))
    seen = seen_by_the_first_item(
        in_project,
        monkeypatch,
        running_oracles,
        "suites/long-session.yaml",
        "--replaylab-verify-windows",
        setting,
        *report,
    )
    assert seen == [{"pi@0.73.1"} if setting == "auto" else set()]


@pytest.mark.usefixtures("openclaw")
def test_a_run_starts_the_workers_of_its_items_agent_compactors_before_the_first_item(
    tmp_path: Path, in_project, monkeypatch
):
    """A suite whose items compact with OpenClaw's own compaction has its worker loading OpenClaw
    before the first item runs (seconds, overlapping the items before the first compaction)."""
    from replaylab.compactors.openclaw import shared_worker

    shared_worker().close()
    report = ("--replaylab-report", str(tmp_path / "r"))
    seen = seen_by_the_first_item(
        in_project,
        monkeypatch,
        lambda: shared_worker()._running(),
        "suites/openclaw-compaction.yaml",
        "--replaylab-verify-windows",
        "off",
        *report,
    )
    assert seen == [True]


def test_usage_errors_exit_4_before_running(project: Path, tmp_path: Path):
    """The exit status of `pytest` itself, so a fresh process."""
    bad = tmp_path / "suites" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("name: bad\nrecordings: ../nowhere/*.jsonl\ncompaction: {mode: safeguard, contxtTokens: 1}\n")
    result = run(tmp_path, "--replaylab", "suites/")
    assert result.returncode == 4
    assert "bad.yaml:3" in result.stderr and "unknown key 'contxtTokens'" in result.stderr
    assert "Traceback" not in result.stderr
    for args in (
        ["--replaylab-shard", "3/2"],
        ["--replaylab-shard", "x"],
        ["--replaylab-bless", "--replaylab-shard", "1/2"],
    ):
        result = run(project, "--replaylab", "suites/", *args)
        assert result.returncode == 4, args
        assert "--replaylab-" in result.stderr


def test_shards_partition_the_items(tmp_path: Path, in_project):
    ids = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}"
        result = in_project(
            "--replaylab", "suites/manual.yaml", "--replaylab-shard", f"{k}/2", "--replaylab-report", str(out)
        )
        assert result.ret == 0, result.stdout.str()[-2000:]
        report = json.loads((out / "replaylab.json").read_text())
        assert report["meta"]["shards"] == [f"{k}/2"]
        ids.append({i["id"] for i in report["items"]})
    whole = in_project("--replaylab", "suites/manual.yaml", "--replaylab-report", str(tmp_path / "whole"))
    assert whole.ret == 0
    all_ids = {i["id"] for i in json.loads((tmp_path / "whole" / "replaylab.json").read_text())["items"]}
    assert ids[0] and ids[1] and not (ids[0] & ids[1]) and ids[0] | ids[1] == all_ids


def test_bless_then_compare(tmp_path: Path, in_project):
    baseline = tmp_path / "baseline.json"
    first = in_project(
        "--replaylab",
        "suites/manual.yaml",
        "--replaylab-bless",
        "--replaylab-baseline",
        str(baseline),
        "--replaylab-report",
        str(tmp_path / "a"),
    )
    assert first.ret == 0 and "blessed baseline written" in first.stdout.str()
    blessed = json.loads(baseline.read_text())
    assert blessed["items"] and all(v["outcome"] == "passed" for v in blessed["items"].values())
    # pretend the blessed run had no defects anywhere: now any defect code found is reported as new
    for value in blessed["items"].values():
        value["defects"] = []
    baseline.write_text(json.dumps(blessed))
    second = in_project(
        "--replaylab",
        "suites/aggressive.yaml",
        "--replaylab-baseline",
        str(baseline),
        "--replaylab-report",
        str(tmp_path / "b"),
    )
    report = json.loads((tmp_path / "b" / "replaylab.json").read_text())
    assert second.ret == 0
    # aggressive items are not in the manual baseline, so nothing to compare: no false regressions,
    # and a loud warning that the whole baseline compared nothing
    warning = (
        f"baseline warning: {len(blessed['items'])} of {len(blessed['items'])} blessed items are not in this run "
        f"(0 compared; {report['totals']['items']} items of this run are not in the baseline)"
    )
    assert [line[: len(warning)] for line in report["regressions_vs_baseline"]] == [warning]
    assert f"replaylab: WARNING: {warning}" in second.stdout.str()
    third = in_project(
        "--replaylab",
        "suites/manual.yaml",
        "--replaylab-baseline",
        str(baseline),
        "--replaylab-report",
        str(tmp_path / "c"),
    )
    regressions = json.loads((tmp_path / "c" / "replaylab.json").read_text())["regressions_vs_baseline"]
    found = [i for i in json.loads((tmp_path / "c" / "replaylab.json").read_text())["items"] if i["defects"]]
    assert len(regressions) == len(found)
    assert third.ret == 0


def test_junit_testcases_are_named_recording_and_scenario_with_the_suite_as_classname(tmp_path: Path, in_project):
    """Not 13 testcases all called `manual`; the node ids (and so the reports) stay as they are."""
    result = in_project(
        "--replaylab",
        "suites/manual.yaml",
        "--replaylab-report",
        str(tmp_path / "r"),
        "--junitxml",
        str(tmp_path / "junit.xml"),
        "--junit-prefix",
        "nightly",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    ids = [i["id"] for i in json.loads((tmp_path / "r" / "replaylab.json").read_text())["items"]]
    cases = ET.parse(tmp_path / "junit.xml").getroot().findall(".//testcase")
    assert len(cases) == len(ids) >= 10
    assert {c.get("classname") for c in cases} == {"nightly.suites.manual"}
    assert sorted(c.get("name") for c in cases) == sorted(i.removeprefix("suites/manual.yaml::") for i in ids)
    assert all(c.get("name").endswith("::manual") for c in cases)


def test_not_exercised_is_a_skip_and_a_failure_under_strict(project: Path, tmp_path: Path, in_project):
    suite = project / "suites-extra" / "huge-budget.yaml"
    suite.parent.mkdir(exist_ok=True)
    suite.write_text(
        "name: huge-budget\nrecordings: ../recordings/helpdesk/readonly-missing-parcel.jsonl\n"
        "tools: examples.helpdesk\ncompaction: {mode: safeguard, contextTokens: 900000}\n"
    )
    lenient = in_project(
        "--replaylab", str(suite), "--replaylab-report", str(tmp_path / "a"), "--replaylab-allow-nothing-exercised"
    )
    assert lenient.ret == 0 and "1 skipped" in lenient.stdout.str()
    # without the allowance a run that exercised nothing fails the gate with its own status
    gated = in_project("--replaylab", str(suite), "--replaylab-report", str(tmp_path / "g"))
    assert gated.ret == 6 and "replaylab: NOTHING EXERCISED" in gated.stdout.str()
    item = json.loads((tmp_path / "a" / "replaylab.json").read_text())["items"][0]
    assert item["outcome"] == "skipped" and item["reason"].startswith("not exercised: never crosses the budget")
    strict = in_project("--replaylab", str(suite), "--replaylab-strict", "--replaylab-report", str(tmp_path / "b"))
    assert strict.ret == 1 and "not exercised" in strict.stdout.str()


def test_repeats_report_pass_k(project: Path, tmp_path: Path, in_project):
    suite = project / "suites-extra" / "repeats.yaml"
    suite.parent.mkdir(exist_ok=True)
    suite.write_text(
        "name: repeats\nrecordings: ../recordings/helpdesk/refund-cracked-headphones.jsonl\n"
        "tools: examples.helpdesk\nrepeats: 3\ncompaction: {mode: aggressive, contextTokens: 3200, "
        "reserveTokensFloor: 800, keepRecentTokens: 500}\n"
    )
    result = in_project("--replaylab", str(suite), "--replaylab-report", str(tmp_path / "r"))
    item = json.loads((tmp_path / "r" / "replaylab.json").read_text())["items"][0]
    assert item["repeats"]["k"] == 3 and item["repeats"]["passes"] == 0 and item["repeats"]["pass_k"] is False
    # the replay model is deterministic: the baselines agree, so the failure is compaction's doing
    assert item["repeats"]["baseline_variants"] == 1
    assert item["repeats"]["failure_attribution"] == "compaction (baselines agree)"
    assert "pass^3 = 0/3" in item["reason"] and result.ret == 1


def test_collect_only_lists_readable_ids_and_writes_no_report(tmp_path: Path, in_project):
    result = in_project(
        "--replaylab", "suites/safeguard.yaml", "--collect-only", "-q", "--replaylab-report", str(tmp_path / "r")
    )
    assert result.ret == 0
    assert "suites/safeguard.yaml::refund-cracked-headphones::safeguard" in result.stdout.str()
    assert not (tmp_path / "r").exists()
    assert "litellm" not in result.stdout.str()


PROBE = """
import gc, sys
def pytest_sessionfinish(session):
    sys.stdout.write(f"\\nfrozen-objects={gc.get_freeze_count()}\\n")
"""


@pytest.mark.parametrize("collect_only", [False, True])
def test_long_lived_objects_are_frozen_before_the_items_run(project: Path, tmp_path: Path, collect_only: bool):
    """The plugin freezes what lives through the run (imports, schemas, items) so the garbage
    collector stops rescanning it during a long suite; a --collect-only run is left alone. A fresh
    process: the freeze count is the whole process's."""
    (tmp_path / "gcprobe.py").write_text(PROBE)
    result = run(
        project,
        "-p",
        "gcprobe",
        "--replaylab",
        "suites/manual.yaml",
        "-q",
        "-k",
        "refund-cracked",
        "--replaylab-report",
        str(tmp_path / "r"),
        *(["--collect-only"] if collect_only else []),
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout[-2000:]
    frozen = int(result.stdout.split("frozen-objects=")[1].split()[0])
    assert (frozen == 0) if collect_only else (frozen > 10_000), frozen


PHASE_PROBE = """
import gc, sys
def pytest_runtest_logreport(report):
    sys.stdout.write(f"\\nfrozen-after-{report.when}={gc.get_freeze_count()}\\n")
"""


def test_each_items_survivors_are_frozen_after_its_teardown(project: Path, tmp_path: Path):
    """What an item leaves alive (its result in the collector, pytest's reports) is frozen at its
    teardown, so the collections of later items do not rescan a heap that grows with the run
    (a fresh process, as above)."""
    (tmp_path / "phaseprobe.py").write_text(PHASE_PROBE)
    result = run(
        project,
        "-p",
        "phaseprobe",
        "--replaylab",
        "suites/manual.yaml",
        "-q",
        "-k",
        "refund-cracked or cancel-two",
        "--replaylab-report",
        str(tmp_path / "r"),
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout[-2000:]
    counts = [
        (line.split("=")[0].removeprefix("frozen-after-"), int(line.split("=")[1]))
        for line in result.stdout.splitlines()
        if line.startswith("frozen-after-")
    ]
    assert [phase for phase, _ in counts] == ["setup", "call", "teardown"] * 2, counts
    for item in range(2):
        setup, call, teardown = (count for _, count in counts[3 * item : 3 * item + 3])
        # a frozen object freed by its last reference leaves the count, so only the teardown's
        # freeze is sure to add to it
        assert teardown > max(setup, call) and setup > 0, counts


SLOW_COLLECTION = """
import time
def pytest_collection_finish(session):
    time.sleep(2.1)  # the run lasts at least two seconds between its start and its reports
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_report_says_when_the_run_started_not_when_it_was_written(project: Path, tmp_path: Path, workers):
    """`meta.started_at` is the session's start, not when the reports were written (fresh
    processes: the xdist case needs them, and both cases run alike)."""
    import datetime as dt

    if workers:
        pytest.importorskip("xdist")
    (tmp_path / "slowcollect.py").write_text(SLOW_COLLECTION)
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    result = run(
        project,
        "-p",
        "slowcollect",
        "--replaylab",
        "suites/manual.yaml",
        "-q",
        "-k",
        "refund-cracked",
        "--replaylab-report",
        str(tmp_path / "r"),
        *workers,
        env={"PYTHONPATH": str(tmp_path)},
    )
    after = dt.datetime.now(dt.UTC)
    assert result.returncode == 0, result.stdout[-2000:]
    meta = json.loads((tmp_path / "r" / "replaylab.json").read_text())["meta"]
    started, finished = (dt.datetime.fromisoformat(meta[k]) for k in ("started_at", "finished_at"))
    assert before <= started < finished <= after, meta
    assert (finished - started).total_seconds() >= 2, meta


def test_loading_the_plugin_where_there_is_no_suite_imports_no_schema_and_no_pipeline(tmp_path: Path):
    """`pytest --replaylab` starts without pydantic, the suite schema, the transcript layer, the
    scrubber or the pipeline when there is nothing to collect: every pytest start pays for what
    loading the plugin imports (what only a suite or an item needs comes with it)."""
    import sys

    code = (
        "import json, sys, pytest\n"
        "status = pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '--replaylab'])\n"
        "print(json.dumps([int(status), sorted(sys.modules)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    status, modules = json.loads(out.stdout.strip().splitlines()[-1])
    assert status == 5 and "replaylab.pytest_plugin" in modules, out.stdout[-2000:] + out.stderr[-2000:]
    heavy = (
        "pydantic",
        "litellm",
        "replaylab.suite.schema",
        "replaylab.transcript",
        "replaylab.scrub",
        "replaylab.qa.pipeline",
    )
    assert [m for m in modules if m.split(".")[0] == "pydantic" or m in heavy] == []


EDIT_AS_WORKERS_START = """
from pathlib import Path


def pytest_configure_node(node):
    recording = Path("recordings/helpdesk/refund-cracked-headphones.jsonl")
    done = recording.with_suffix(".edited")
    if not done.exists():  # once, as the first worker starts: after the run's start hashed it
        recording.write_bytes(recording.read_bytes() + b"\\n")
        done.write_text("")
"""


def test_a_recording_edited_after_the_runs_start_is_its_items_finding_under_xdist_too(
    project: Path, tmp_path: Path
) -> None:
    """The controller hashes every session file at the run's start and hands the states to its
    workers: a recording edited before a worker started is the item's TRANSCRIPT_REWRITTEN (it
    ran on edited input), as in a run without xdist, not a start the worker took as it found it."""
    pytest.importorskip("xdist")
    root = tmp_path / "p"
    shutil.copytree(project, root, ignore=shutil.ignore_patterns("reports*", "out*"))
    (tmp_path / "edit_as_workers_start.py").write_text(EDIT_AS_WORKERS_START)
    result = run(
        root,
        "-p",
        "edit_as_workers_start",
        "--replaylab",
        "suites/manual.yaml",
        "-q",
        "-n",
        "2",
        "--replaylab-report",
        str(tmp_path / "r"),
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert (root / "recordings/helpdesk/refund-cracked-headphones.edited").exists(), result.stdout[-2000:]
    items = json.loads((tmp_path / "r" / "replaylab.json").read_text())["items"]
    found = {item["recording"].rsplit("/", 1)[-1]: item for item in items}
    edited = found["refund-cracked-headphones.jsonl"]
    rewritten = [d for d in edited["defects"] if d["code"] == "TRANSCRIPT_REWRITTEN"]
    assert rewritten and "changed after the run started and before this item ran" in rewritten[0]["message"]
    others = [item for name, item in found.items() if name != "refund-cracked-headphones.jsonl"]
    assert others and not any(d["code"] == "TRANSCRIPT_REWRITTEN" for item in others for d in item["defects"])
