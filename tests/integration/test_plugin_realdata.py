"""`pytest --replaylab` end to end on imported real τ²-bench sessions (generated into a temp dir).

Safeguard must find zero blocking defects; aggressive, as a negative control, must find the
defects it is expected to find (and the control fails when replaylab misses them). The same suite
with and without `-n 2` gives the same JSON report; JUnit keeps failures and errors apart. Runs
happen in this process (`pytester`), except the xdist comparison's (real processes).
"""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from inprocess import pytest_in

pytestmark = pytest.mark.realdata

TAU2_FILE = "tau2-bench/airline/claude-sonnet-4-5_airline_default_gpt4.1_1trials.json"  # 50 long sessions


@pytest.fixture(scope="module")
def tau2_dir(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from replaylab.importers import import_sessions, write_session

    out = tmp_path_factory.mktemp("tau2") / "recordings"
    for session in import_sessions("tau2-bench", shared_data / TAU2_FILE):
        write_session(session, out)
    return out


def _suite(folder: Path, name: str, mode: str, expect: str, extra: str = "") -> Path:
    suites = folder / "suites"
    suites.mkdir(exist_ok=True)
    path = suites / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        f"recordings: ../recordings/*.jsonl\n"
        f"model: replay\n"
        f"compaction: {{mode: {mode}, contextTokens: 6000, reserveTokensFloor: 2000, keepRecentTokens: 1500}}\n"
        f"compact_at: auto\n"
        f"match: {{tools: strict, answer: normalized}}\n"
        f"expect: {expect}\n{extra}",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def in_folder(pytester: pytest.Pytester, tau2_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """`pytest --replaylab ARGS` run in this process, in the folder of the imported recordings."""
    run = pytest_in(pytester, tau2_dir.parent, monkeypatch)
    return lambda *args: run("--replaylab", *args)


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return run_pytest(folder, "--replaylab", *args)


def test_safeguard_zero_blocking_defects(tau2_dir: Path, in_folder):
    folder = tau2_dir.parent
    _suite(folder, "tau2-safeguard", "safeguard", "{defects: []}")
    run = in_folder(
        "suites/tau2-safeguard.yaml", "--replaylab-report", "out-safeguard", "--junitxml", "out-safeguard/junit.xml"
    )
    report = json.loads((folder / "out-safeguard" / "replaylab.json").read_text())
    assert run.ret == 0, run.stdout.str()[-3000:] + run.stderr.str()[-2000:]
    assert report["totals"]["items"] == 50
    assert report["totals"]["blocking_defects"] == 0
    exercised = [i for i in report["items"] if i["outcome"] == "passed"]
    assert len(exercised) >= 10, "the long sessions must cross the budget and be compacted"
    for item in exercised:
        assert item["compaction"]["success"] and item["compaction"]["token_saved"] > 0
        assert not [d for d in item["defects"] if d["severity"] in ("blocking", "regression", "error")]
    junit = ET.parse(folder / "out-safeguard" / "junit.xml").getroot()
    cases = junit.findall(".//testcase")
    assert len(cases) == 50 and not junit.findall(".//failure") and not junit.findall(".//error")


def test_aggressive_negative_control_finds_what_safeguard_keeps(tau2_dir: Path, in_folder):
    """Aggressive keeps a small tail and a summary without tool results: values the agent needs
    later are gone, so its writes no longer match the cassette and are blocked. The negative
    control expects SIDE_EFFECT_ESCAPED on every exercised session and fails where it is missing."""
    folder = tau2_dir.parent
    _suite(folder, "tau2-aggressive", "aggressive", "{defects: [SIDE_EFFECT_ESCAPED], tolerate: any}")
    run = in_folder(
        "suites/tau2-aggressive.yaml", "--replaylab-report", "out-aggressive", "--junitxml", "out-aggressive/junit.xml"
    )
    report = json.loads((folder / "out-aggressive" / "replaylab.json").read_text())
    found = [i for i in report["items"] if any(d["code"] == "SIDE_EFFECT_ESCAPED" for d in i["defects"])]
    assert len(found) >= 5, "aggressive compaction must lose values that later writes need"
    for item in found:
        assert item["outcome"] == "passed" and "negative control" in item["reason"]
        escaped = next(d for d in item["defects"] if d["code"] == "SIDE_EFFECT_ESCAPED")
        assert (
            "⟨lost:" in json.dumps(escaped["actual"], ensure_ascii=False) and escaped["expected"]
        )  # nearest recorded call
    missed = [i for i in report["items"] if i["outcome"] == "failed"]
    for item in missed:
        assert item["missing_expected"] == ["SIDE_EFFECT_ESCAPED"]
    # the control fails (exit 1) exactly when some exercised item did not show the expected defect
    assert run.ret == (1 if missed else 0), run.stdout.str()[-2000:]
    junit = ET.parse(folder / "out-aggressive" / "junit.xml").getroot()
    assert len(junit.findall(".//failure")) == len(missed) and not junit.findall(".//error")


def test_xdist_gives_the_same_report(tau2_dir: Path):
    folder = tau2_dir.parent
    _suite(folder, "tau2-xdist", "safeguard", "{defects: []}")
    one = _run(folder, "suites/tau2-xdist.yaml", "--replaylab-report", "out-serial")
    two = _run(folder, "suites/tau2-xdist.yaml", "--replaylab-report", "out-xdist", "-n", "2")
    assert one.returncode == two.returncode == 0, two.stdout[-2000:]

    def stable(path: Path) -> dict:
        data = json.loads(path.read_text())
        data.pop("meta")
        for item in data["items"]:
            item.pop("duration_s")
        return data

    assert stable(folder / "out-serial" / "replaylab.json") == stable(folder / "out-xdist" / "replaylab.json")

    def sessions(path: Path) -> str:
        """The HTML's session sections (rendered by the workers under xdist), durations aside."""
        html = path.read_text()
        part = html[html.index("<h2>Items (") :]
        return re.sub(r"<dt>duration</dt><dd>[0-9.]+ s</dd>", "", part)

    serial, xdist = (
        sessions(folder / "out-serial" / "replaylab.html"),
        sessions(folder / "out-xdist" / "replaylab.html"),
    )
    assert serial.count('data-testid="session"') >= 2 and xdist == serial
