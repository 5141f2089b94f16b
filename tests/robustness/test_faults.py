"""Faults: a killed run, a report directory that cannot be written, parallel runs.

* SIGKILL in the middle of `pytest --replaylab suites/` leaves every recording and cassette
  byte-identical, and the next run is green. Replay writes only to working copies in a temporary
  directory, so a kill can leave stray working copies *there* (TMPDIR) but never touches a
  recording. Runs happen on a copy of the repo's recordings + suites in tmp_path, never on the repo.
* A report directory that cannot be written is the user's to fix: pytest stops at configure
  time with a usage error (exit 4) naming the directory, before anything runs. Read-only as *root*
  needs a directory that really refuses writes (root ignores chmod): a path under /proc, an
  existing sysfs directory, a path whose parent is a regular file, a regular file.
* A disk that fills up while the run goes on shows only when the reports are written at the end:
  a file-size limit (RLIMIT_FSIZE, set just before the reports are written) makes the kernel fail
  the writes with EFBIG, as a full disk fails them with ENOSPC — the real error on the real code
  path (`write_reports` → `finish_run`). The run prints one line naming the directory, no
  traceback, exits non-zero (4), and the previous reports stay complete (atomic writes). A tiny
  tmpfs would be the same, but mounting needs privileges CI may not have. (The writer's
  temporary files have unpredictable names and are never opened through a link, so no file can
  be planted in their place.)
* `-n 2` with two workers on the same recordings (and two concurrent pytest processes on one
  folder) never collide: no errors, identical reports, recordings unchanged, no stray working copies.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from builders.pytest_runs import CHILD_PLUGINS
from replaylab.report import REPORT_FILES, check_report_dir
from replaylab.results import RunMeta, RunReport
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
ITEM_DONE = re.compile(rb"::\S+ (PASSED|FAILED|ERROR|SKIPPED)\b")
#: the run a SIGKILL interrupts: safeguard's suite, over every bundled helpdesk recording
KILLED_SUITE = "suites/safeguard.yaml"


# ---------------------------------------------------------------- workspace helpers


def workspace(tmp_path: Path) -> Path:
    """A copy of the repo's recordings/ and suites/ (the suites glob ../recordings/...)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("recordings", "suites"):
        shutil.copytree(REPO / name, ws / name)
    return ws


def tree_hashes(ws: Path) -> dict[str, str]:
    """sha256 of every file under recordings/ and suites/ (a new or removed file changes the keys)."""
    out = {}
    for name in ("recordings", "suites"):
        for path in sorted((ws / name).rglob("*")):
            if path.is_file() or path.is_symlink():
                out[str(path.relative_to(ws))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def child_env(tmp: Path) -> dict[str, str]:
    """Environment for a child pytest: working copies go to `tmp` (so strays are visible), no
    inherited pytest options or xdist worker identity, unbuffered output (polled line by line), the
    example pack the suites name importable from the repository (the workspace holds only
    recordings and suites)."""
    tmp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "REPLAYLAB_"))}
    env.update(
        TMPDIR=str(tmp), PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(REPO), **CHILD_PLUGINS
    )
    return env


def pytest_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--replaylab", *args]


def run_pytest(ws: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(pytest_cmd(*args), cwd=ws, env=child_env(tmp), capture_output=True, text=True)


def working_copies(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.glob("replaylab-*"))


def one_recording_suite(ws: Path, recording: str = "readonly-missing-parcel") -> str:
    """A one-item suite (safeguard settings) for the cheap end-to-end runs."""
    (ws / "suites" / "one.yaml").write_text(
        f"""\
name: one
recordings: ../recordings/helpdesk/{recording}.jsonl
tools: examples.helpdesk
model: replay
compaction: {{mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500,
             maxHistoryShare: 0.5, identifierPolicy: strict, recentTurnsPreserve: 3}}
compact_at: auto
expect: {{defects: []}}
""",
        encoding="utf-8",
    )
    return "suites/one.yaml"


def assert_clean_user_error(output: str) -> None:
    assert "Traceback" not in output and "INTERNALERROR" not in output, output[-3000:]


# ---------------------------------------------------------------- SIGKILL in the middle of a run


@pytest.mark.slow
def test_sigkill_mid_run_leaves_recordings_identical_and_next_run_is_green(tmp_path):
    """A run of the safeguard suite (every bundled recording) killed once its first item is done,
    then the same run again."""
    ws = workspace(tmp_path)
    tmp = tmp_path / "tmp"
    reports = ws / "reports"
    before = tree_hashes(ws)
    proc = subprocess.Popen(
        pytest_cmd(KILLED_SUITE, "-v", "--replaylab-report", str(reports)),
        cwd=ws,
        env=child_env(tmp),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    seen: list[bytes] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # poll the output: kill once the first item has finished
            seen.append(line)
            if ITEM_DONE.search(line):
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        if proc.poll() is None:  # also on an error above: never leave the child running (not reaped yet: same pid)
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    output = b"".join(seen).decode("utf-8", "replace")
    assert any(ITEM_DONE.search(line) for line in seen), f"no item finished before the run ended:\n{output[-3000:]}"
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, output[-2000:])
    assert not (reports / REPORT_FILES["json"]).exists(), "the run got to its end: the kill came too late"

    assert tree_hashes(ws) == before  # every recording, cassette and suite byte-identical, nothing added
    strays = working_copies(tmp)  # a killed process cannot clean up: only ever in TMPDIR, never in ws

    done = run_pytest(ws, tmp, KILLED_SUITE, "-q", "--replaylab-report", str(reports))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    report = json.loads((reports / REPORT_FILES["json"]).read_text(encoding="utf-8"))
    assert report["totals"]["items"] > 1 and report["totals"]["error"] == 0 and report["totals"]["failed"] == 0
    assert tree_hashes(ws) == before
    assert working_copies(tmp) == strays  # the green run cleaned up all of its own working copies
    assert not list(reports.glob(".*.tmp"))


# ---------------------------------------------------------------- report directory not writable


def _unwritable_dirs(tmp_path: Path) -> dict[str, Path | None]:
    afile = tmp_path / "a-file"
    afile.write_text("not a directory\n", encoding="utf-8")
    return {
        "under-proc": Path("/proc/replaylab-x") if Path("/proc/self").exists() else None,
        "sysfs-directory": Path("/sys/kernel") if Path("/sys/kernel").is_dir() else None,
        "parent-is-a-file": afile / "reports",
        "is-a-file": afile,
    }


@pytest.mark.parametrize("case", ["under-proc", "sysfs-directory", "parent-is-a-file", "is-a-file"])
def test_unwritable_report_dir_is_a_usage_error_before_anything_runs(tmp_path, case):
    target = _unwritable_dirs(tmp_path)[case]
    if target is None:
        pytest.skip(f"{case}: not available on this system")
    ws = workspace(tmp_path)
    suite = one_recording_suite(ws)
    before = tree_hashes(ws)
    done = run_pytest(ws, tmp_path / "tmp", suite, "--replaylab-report", str(target))
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output[-3000:]
    assert f"cannot write the replaylab report to directory {target}" in output, output[-3000:]
    assert "--replaylab-report" in output  # says where the setting came from
    assert_clean_user_error(output)
    assert " passed" not in output and "PASSED" not in output  # failed fast: nothing ran
    assert tree_hashes(ws) == before
    if case == "is-a-file":
        assert target.read_text(encoding="utf-8") == "not a directory\n"


def test_check_report_dir_probes_with_a_real_write(tmp_path):
    """The configure-time probe writes: a directory where writes fail (RLIMIT_FSIZE 0 makes every
    write fail with EFBIG, as a full disk fails with ENOSPC) is refused though it exists and
    `os.access` says yes."""
    target = tmp_path / "reports"
    check_report_dir(target)
    assert target.is_dir() and list(target.iterdir()) == []  # the probe leaves nothing behind
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from replaylab.report import ReportWriteError, check_report_dir\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))\n"
        "import os; assert os.access(sys.argv[1], os.W_OK)\n"
        "try:\n    check_report_dir(Path(sys.argv[1]))\n"
        "except ReportWriteError as exc:\n    print(exc); sys.exit(7)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True, text=True)
    assert done.returncode == 7, done.stdout + done.stderr
    assert done.stdout.strip() == f"cannot write the replaylab report to directory {target}: File too large"
    assert list(target.iterdir()) == []


def _report() -> RunReport:
    from replaylab.report.run import build_report

    return build_report([], RunMeta(replaylab_version="0", started_at="2026-01-01T00:00:00+00:00"))


FULL_DISK_WRITER = """\
import resource, signal, sys
from pathlib import Path
from replaylab.results import RunMeta
from replaylab.report import ReportWriteError, write_reports
from replaylab.report.run import build_report
report = build_report([], RunMeta(replaylab_version="0", started_at="2026-01-01T00:00:00+00:00"))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG instead of a core dump
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    write_reports(report, Path(sys.argv[1]))
except ReportWriteError as exc:
    print(exc); sys.exit(7)
"""


def test_write_reports_on_a_full_disk_names_the_directory_and_keeps_the_old_reports(tmp_path):
    """The JSON report (written first) fits, the HTML does not: nothing is renamed over the old
    reports, the written temporary is removed with the failed one, the previous set stays."""
    from replaylab.report.html import render_html
    from replaylab.report.jsonio import dump_json

    out = tmp_path / "reports"
    out.mkdir()
    old = {name: f"previous complete {name}\n".encode() for name in REPORT_FILES.values()}
    for name, data in old.items():
        (out / name).write_bytes(data)
    json_size, html_size = len(dump_json(_report())), len(render_html(_report()).encode())
    assert json_size < html_size
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK_WRITER, str(out), str(json_size + 1)], capture_output=True, text=True
    )
    assert done.returncode == 7, done.stdout + done.stderr
    assert done.stdout.strip() == f"cannot write the replaylab report to directory {out}: File too large"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == old  # no temporary left either


DISK_FULL_DRIVER = """\
import os, resource, signal, sys
import pytest


class FillTheDisk:
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self):  # before the reports are written: every later file write fails
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))


sys.exit(pytest.main(sys.argv[2:], plugins=[FillTheDisk()]))
"""


def test_disk_full_when_writing_reports_gives_a_clear_error_and_non_zero_exit(tmp_path):
    ws = workspace(tmp_path)
    suite = one_recording_suite(ws)
    reports = tmp_path / "reports"
    reports.mkdir()
    old = {name: f"previous complete {name}\n".encode() for name in REPORT_FILES.values()}
    for name, data in old.items():
        (reports / name).write_bytes(data)
    before = tree_hashes(ws)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DISK_FULL_DRIVER,
            str(reports),
            "-p",
            "no:cacheprovider",
            "--replaylab",
            suite,
            "--replaylab-report",
            str(reports),
        ],
        cwd=ws,
        env=child_env(tmp_path / "tmp"),
        capture_output=True,
        text=True,
    )
    output = done.stdout + done.stderr
    assert "1 passed" in output, output[-3000:]  # the run itself was fine ...
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output[-3000:]  # ... but it must not exit 0
    assert f"replaylab: cannot write reports to {reports}: File too large" in output, output[-3000:]
    assert_clean_user_error(output)
    assert {p.name: p.read_bytes() for p in reports.iterdir()} == old  # old reports intact, no temp files
    assert tree_hashes(ws) == before


def test_unwritable_baseline_file_on_bless_gives_a_clear_error(tmp_path):
    """`--replaylab-bless` writes the baseline file after the reports: a path that cannot be
    written is reported like a report directory (message, exit 4), not as a traceback."""
    ws = workspace(tmp_path)
    suite = one_recording_suite(ws)
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    baseline = blocker / "replaylab-baseline.json"  # its parent is a regular file
    done = run_pytest(
        ws,
        tmp_path / "tmp",
        suite,
        "--replaylab-bless",
        "--replaylab-baseline",
        str(baseline),
        "--replaylab-report",
        str(tmp_path / "reports"),
    )
    output = done.stdout + done.stderr
    assert "1 passed" in output, output[-3000:]
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output[-3000:]
    assert f"replaylab: cannot write the baseline file {baseline}: " in output  # (mkdir of its parent: File exists)
    assert_clean_user_error(output)


# ---------------------------------------------------------------- parallel runs on the same recordings

PARALLEL_RECORDINGS = ("security-lockout", "cancel-two-orders")  # security-lockout has a sub-agent transcript


def parallel_suite(ws: Path) -> str:
    """Two suites over the same recordings, one scenario each, so both workers replay one recording at
    once: xdist hands each worker a run of consecutive items, and a suite's items are grouped by recording."""
    names = ", ".join(f"../../recordings/helpdesk/{n}.jsonl" for n in PARALLEL_RECORDINGS)
    (ws / "suites" / "twice").mkdir()
    for scenario, settings in (("first", ""), ("second", "\n    compaction: {summarizerFailures: 1}")):
        (ws / "suites" / "twice" / f"{scenario}.yaml").write_text(
            f"""\
name: {scenario}
recordings: [{names}]
tools: examples.helpdesk
model: replay
compaction: {{mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500,
             maxHistoryShare: 0.5, identifierPolicy: strict, recentTurnsPreserve: 3}}
compact_at: auto
expect: {{defects: []}}
scenarios:
  - name: {scenario}{settings}
""",
            encoding="utf-8",
        )
    return "suites/twice"


def normalized_report(path: Path) -> dict:
    """The report minus what legitimately differs between runs (run metadata, timings)."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "duration_s"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("meta")
    return strip(data)


WORKER_LINE = re.compile(r"^\[(gw\d+)\] .*PASSED \S*(?:first|second)\.yaml::([\w-]+)::(\w+)", re.M)


@pytest.mark.slow
def test_two_workers_and_two_processes_on_the_same_recordings_never_collide(tmp_path):
    pytest.importorskip("xdist")
    ws = workspace(tmp_path)
    suite = parallel_suite(ws)
    tmp = tmp_path / "tmp"
    before = tree_hashes(ws)
    expected_items = 2 * len(PARALLEL_RECORDINGS)
    reports: list[dict] = []

    def check(done: subprocess.CompletedProcess, out: Path) -> None:
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        assert f"{expected_items} passed" in done.stdout
        report = normalized_report(out / REPORT_FILES["json"])
        assert report["totals"]["items"] == expected_items and report["totals"]["error"] == 0
        reports.append(report)

    for run in range(2):  # under -n 2, several times (a third -n 2 run is one of the concurrent pair below)
        out = tmp_path / f"reports-xdist-{run}"
        # `=`: pytest picks its rootdir before it knows plugin options, so a separate value naming an
        # existing folder outside the project would count as a test path and move the rootdir (and ids)
        done = run_pytest(ws, tmp, suite, "-n", "2", "-v", f"--replaylab-report={out}")
        check(done, out)
        # the two scenarios of each recording ran on different workers: the same recording, at once
        workers: dict[str, set[str]] = {}
        for worker, recording, _scenario in WORKER_LINE.findall(done.stdout):
            workers.setdefault(recording, set()).add(worker)
        assert workers == {name: {"gw0", "gw1"} for name in PARALLEL_RECORDINGS}, done.stdout[-3000:]

    # two pytest processes on the same folder at the same time (one of them with two workers)
    outs = [tmp_path / f"reports-concurrent-{i}" for i in range(2)]
    extra = (["-n", "2"], [])
    procs = [
        subprocess.Popen(
            pytest_cmd(suite, *extra[i], "-q", f"--replaylab-report={out}"),
            cwd=ws,
            env=child_env(tmp),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, out in enumerate(outs)
    ]
    for proc, out in zip(procs, outs):
        stdout, stderr = proc.communicate()
        check(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), out)

    assert len(reports) == 4 and all(report == reports[0] for report in reports[1:]), "reports differ between runs"
    assert tree_hashes(ws) == before  # recordings, cassettes, suites unchanged; nothing added next to them
    assert working_copies(tmp) == []  # every worker removed its working copies
    assert sorted(p.name for p in ws.iterdir()) == ["recordings", "suites"]


@pytest.mark.slow
def test_an_xdist_run_hands_other_plugins_reports_without_replaylab_results(tmp_path):
    """Workers send each result as bytes on its setup report; the controller takes them off the
    report before other plugins see it: a plugin that serializes every report to JSON on the
    controller (as pytest-reportlog does) works, and never sees the result's bytes."""
    pytest.importorskip("xdist")
    ws = workspace(tmp_path)
    suite = parallel_suite(ws)
    (ws / "conftest.py").write_text(
        "import json, os, pathlib\n"
        "import _pytest.reports\n"
        "def pytest_runtest_logreport(report):\n"
        "    if os.environ.get('PYTEST_XDIST_WORKER'):\n"
        "        return  # the controller's view is the one to check\n"
        "    data = _pytest.reports._report_to_json(report)\n"
        "    line = json.dumps(data, default=lambda o: f'<{type(o).__name__}>')  # as reportlog cleans up\n"
        "    assert 'replaylab_' not in line, line[:300]\n"
        "    with open(pathlib.Path(__file__).parent / 'log.jsonl', 'a') as out:\n"
        "        out.write(line + '\\n')\n",
        encoding="utf-8",
    )
    out = tmp_path / "reports"
    done = run_pytest(ws, tmp_path / "tmp", suite, "-n", "2", "-q", "--replaylab-report", str(out))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    expected_items = 2 * len(PARALLEL_RECORDINGS)
    assert f"{expected_items} passed" in done.stdout
    lines = (ws / "log.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 * expected_items  # setup, call and teardown of each item, each serialized
    report = json.loads((out / REPORT_FILES["json"]).read_text(encoding="utf-8"))
    assert report["totals"]["items"] == expected_items
    assert all(item["window_before"] and item["baseline"] for item in report["items"])  # the full results arrived
