"""The benchmark harness runs end to end (`python -m bench --quick`) and reports every benchmark.

No timing is asserted here (the machine is shared; targets are for the full run, read by
humans): only that each benchmark produced a numeric ratio or an explicit "pending" status, that
the statistics are consistent, and that the run leaves nothing behind in the repo.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import REPO_ROOT

REPO = REPO_ROOT
#: every benchmark (+ the references printed next to them)
EXPECTED = {
    "load-100mb",
    "load-100mb-eager",
    "compact-scaling",
    "cassette-load",
    "cassette-load-block",
    "cassette-write",
    "pytest-startup",
    "html-report",
    "pipeline-1000",
    "pytest-1000",
    "xdist-n2",
    "pipeline-scaling",
    "pipeline-turns",
    "pipeline-text-shapes",
    "oracle-check",
    "agents-cut-pi-0.73.1",
    "agents-cut-pi-1.6.0",
    "agents-cut-openclaw-2026.9.6",
    "writer-append",
    "scrub-worst",
}
PENDING: set[str] = set()  # benchmarks whose code is not there yet: none
GUARD_S = 600  # a hung run fails instead of blocking CI; not a performance assertion


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    before = sorted(p.name for p in REPO.iterdir())
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in REPO.iterdir()) == before  # inputs went to a temp dir
    return proc, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_quick_run_reports_every_benchmark_with_a_ratio_or_pending(quick_run) -> None:
    _, doc = quick_run
    by_name = {b["name"]: b for b in doc["benchmarks"]}
    assert set(by_name) == EXPECTED
    for name, bench in by_name.items():
        assert bench["target"], name
        if (name == "oracle-check" or name.startswith("agents-cut-")) and bench["status"] == "pending":
            # the node oracle is not installed here
            assert "not installed" in bench["reason"], bench
            continue
        if name in PENDING:
            assert bench["status"] == "pending" and bench["ratio"] is None, bench
            assert "needs the QA pipeline" in bench["reason"]
            continue
        assert bench["status"] in ("met", "missed", "info"), bench
        assert isinstance(bench["ratio"], float) and math.isfinite(bench["ratio"]) and bench["ratio"] > 0, bench
        assert 0 < bench["min_s"] <= bench["median_s"] <= bench["max_s"], bench
        assert len(bench["samples_s"]) == bench["repeats"] and min(bench["samples_s"]) == bench["min_s"], bench
        if "samples_s" in bench.get("floor", {}):  # the floor's own samples, and the rounds' ratios when they pair
            floor = bench["floor"]
            assert min(floor["samples_s"]) == floor["min_s"] and max(floor["samples_s"]) == floor["max_s"], bench
            if len(floor["samples_s"]) == len(bench["samples_s"]):
                rounds = sorted(s / f for s, f in zip(bench["samples_s"], floor["samples_s"]))
                assert rounds[0] <= bench["ratio_of_rounds"] <= rounds[-1], bench
        if bench["status"] != "info":
            assert bench["checks"] and bench["met"] == all(c["met"] for c in bench["checks"]), bench


@pytest.mark.slow
def test_quick_run_measures_what_it_claims(quick_run) -> None:
    proc, doc = quick_run
    by_name = {b["name"]: b for b in doc["benchmarks"]}
    assert doc["quick"] is True and doc["machine"]["cpus"] >= 1 and "git_sha" in doc
    load = by_name["load-100mb"]
    assert load["floor"]["what"].startswith("orjson.loads") and load["details"]["rss_added_bytes"] > 0
    assert {c["metric"] for c in load["checks"]} == {"ratio", "rss/file"}
    pipeline = by_name["pipeline-1000"]
    assert (
        pipeline["floor"]["what"].startswith("load_transcript")
        and sum(pipeline["details"]["outcomes"].values()) == pipeline["details"]["sessions"]
    )
    assert pipeline["details"]["outcomes"].get("passed", 0) > 0  # the pipeline really compacted and replayed
    startup = by_name["pytest-startup"]
    assert startup["details"]["litellm_modules"] == [] and startup["details"]["modules_imported"] > 100
    assert by_name["html-report"]["details"]["chromium_dom_bytes"] > 0
    assert set(by_name["compact-scaling"]["details"]["sizes"]) and "slope" in by_name["compact-scaling"]["details"]
    scaling = by_name["pipeline-scaling"]
    sizes = scaling["details"]["sizes"]
    assert len(sizes) == 3 and {c["metric"] for c in scaling["checks"]} == {"slope", "ratio"}
    for size in sizes.values():  # each size really compacted mid-way, in the pipeline and alone
        assert size["compacted"] and size["compact_success"] and size["compact_at"].startswith("turn:"), size
        assert size["ratio"] == pytest.approx(size["pipeline_median_s"] / size["compact_median_s"])
    assert scaling["details"]["note"] in proc.stdout
    shapes = by_name["pipeline-text-shapes"]
    sessions = shapes["details"]["sessions"]
    assert set(sessions) == {"plain", *shapes["details"]["ratios"]} and len(sessions) > 2
    # one structure in other texts: the same entries, each of them compacted and replayed
    assert len({s["structure"] for s in sessions.values()}) == 1 and all(s["compacted"] for s in sessions.values())
    assert len({s["file_bytes"] for s in sessions.values()}) > 1 and shapes["details"]["note"] in proc.stdout
    xdist = by_name["xdist-n2"]
    details, medians = xdist["details"], {}
    for name in ("halves", "loop", "noop_xdist", "noop_serial"):  # each accounting run was really timed
        assert len(details["samples_s"][name]) == len(xdist["samples_s"]) and min(details["samples_s"][name]) > 0, (
            details
        )
        medians[name] = sorted(details["samples_s"][name])[len(details["samples_s"][name]) // 2]
    assert details["noop_tests"] == pipeline["details"]["sessions"]
    assert details["parallel_ceiling"] == pytest.approx(medians["halves"] / medians["loop"])
    assert details["xdist_cost_s"] == pytest.approx(medians["noop_xdist"] - medians["noop_serial"])
    serial = xdist["floor"]["median_s"]
    assert details["predicted_ratio"] == pytest.approx(
        (details["parallel_ceiling"] * serial + details["xdist_cost_s"]) / serial
    )
    assert f"predict {details['predicted_ratio']:.2f}×" in details["note"] and details["note"] in proc.stdout
    for name in EXPECTED:  # the printed table names every benchmark
        assert name in proc.stdout
    oracle = by_name["oracle-check"]
    if oracle["status"] != "pending":  # one request per working copy, every compacted window in it
        checked = oracle["details"]["with_check"]
        assert checked["requests"] == 1 and checked["verified_windows"] == checked["compactions"] >= 2, oracle
        assert oracle["details"]["without_check"]["requests"] == 0, oracle
    for name in ("agents-cut-pi-0.73.1", "agents-cut-pi-1.6.0", "agents-cut-openclaw-2026.9.6"):
        row = by_name[name]
        if row["status"] != "pending":  # both sides timed on the same files, the agent's start apart
            details = row["details"]
            assert details["entries"] == 1_000 and details["agent"]["version"] in row["title"], row
            assert details["node_start_ms"] > 0 and details["agent_import_ms"] > 0, details
            assert all(f["agent_median_s"] > 0 and f["replaylab_median_s"] > 0 for f in details["files"].values())
            assert details["note"] in proc.stdout


def test_run_py_works_as_a_script() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run.py"), "--help"],
        cwd=REPO / "bench",
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and "--quick" in proc.stdout and "--only" in proc.stdout


def test_ci_asks_for_exactly_its_rows_and_each_case_skips_the_rest() -> None:
    """`--ci` (what .ci/run prints) runs the cases of its rows and wants those rows alone: the
    pipeline case then times no pytest or xdist run."""
    from bench.cases.common import Context
    from bench.run import CI_ROWS, parse_args, selected, wanted_benchmarks

    cases = selected(list(CI_ROWS))
    assert wanted_benchmarks(cases, list(CI_ROWS)) == frozenset(CI_ROWS) and "pipeline" in cases
    assert "xdist-n2" not in wanted_benchmarks(cases, list(CI_ROWS))
    assert wanted_benchmarks(cases, []) == frozenset() and wanted_benchmarks(["pipeline"], ["pipeline"]) == {
        "pipeline-1000",
        "pytest-1000",
        "xdist-n2",
    }
    ctx = Context(workdir=Path("."), wanted=wanted_benchmarks(cases, list(CI_ROWS)))
    assert ctx.wants("pipeline-1000") and not ctx.wants("pytest-1000") and Context(workdir=Path(".")).wants("x")
    assert parse_args(["--ci"]).ci


def test_each_case_starts_as_if_it_ran_alone(monkeypatch) -> None:
    """A case finds neither the caches an earlier case filled nor its cyclic garbage: a row's
    figure does not depend on the rows run before it."""
    import gc
    import types
    import weakref

    from bench import run
    from bench.cases.common import Context
    from replaylab import caches
    from replaylab.scrub import scrub_text

    class Cycle:
        pass

    left: list[weakref.ref[Cycle]] = []
    found: dict[str, tuple[dict[str, int], bool]] = {}

    def first(ctx: Context) -> list[dict]:
        scrub_text("fills the scrubber's cache and the default scrubber's")
        cycle = Cycle()
        cycle.self = cycle  # type: ignore[attr-defined]
        left.append(weakref.ref(cycle))
        return []

    def second(ctx: Context) -> list[dict]:
        found["second"] = ({k: v for k, v in caches.sizes().items() if v}, left[0]() is None)
        return []

    modules = {"bench.cases.first": first, "bench.cases.second": second}
    fake = types.SimpleNamespace(import_module=lambda name: types.SimpleNamespace(run=modules[name]))
    monkeypatch.setattr(run, "importlib", fake)
    gc.disable()  # only the harness may collect the cycle
    try:
        run.run_cases(Context(workdir=Path(".")), ["first", "second"], [])
    finally:
        gc.enable()
    assert found["second"] == ({}, True)


def test_unknown_only_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--only", "no-such-bench", "--out", str(tmp_path / "b.json")],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "no benchmark matches" in proc.stderr
    assert not (tmp_path / "b.json").exists()


def test_interleaved_times_every_function_over_every_item_chunk_by_chunk() -> None:
    """The pipeline and its floor are timed chunk by chunk: each sample covers all items once,
    and the order of the functions turns at every chunk (none always follows the same one)."""
    from bench.cases.common import interleaved

    calls: list[tuple[str, list[int]]] = []
    fns = {name: (lambda part, name=name: calls.append((name, list(part)))) for name in ("a", "b", "c")}
    samples = interleaved(fns, list(range(7)), repeats=2, chunk=3)
    assert {name: len(times) for name, times in samples.items()} == {"a": 2, "b": 2, "c": 2}
    assert all(t >= 0 for times in samples.values() for t in times)
    warmup, timed = calls[:3], calls[3:]
    assert warmup == [(name, list(range(7))) for name in "abc"]
    assert len(timed) == 2 * 3 * 3  # repeats × chunks × functions
    first_pass = timed[:9]
    assert [name for name, _ in first_pass] == list("abcbcacab")
    assert [part for _, part in first_pass[::3]] == [[0, 1, 2], [3, 4, 5], [6]]
    for name in "abc":
        seen = [i for n, part in timed for i in part if n == name]
        assert sorted(seen) == sorted(list(range(7)) * 2)


@pytest.mark.slow
def test_the_benchs_pytest_runs_leave_earlier_sessions_temporary_folders_alone(tmp_path, monkeypatch) -> None:
    """An xdist controller makes a numbered folder in pytest's temporary root and, at its end,
    pytest deletes the numbered folders beyond the last three: an earlier test session's, whose
    deletion would be timed as part of a `-n 2` sample. The bench's runs use their own
    `--basetemp` and touch none."""
    import getpass

    pytest.importorskip("xdist")
    from bench.cases.pipeline import _pytest, make_sessions

    root = tmp_path / "bench"
    make_sessions(root, 3)
    temproot = tmp_path / "tmp"
    planted = [temproot / f"pytest-of-{getpass.getuser()}" / f"pytest-{n}" for n in range(1, 5)]
    for folder in planted:
        folder.mkdir(parents=True)
        (folder / "left-by-an-earlier-session").write_text("x", encoding="utf-8")
    monkeypatch.setenv("TMPDIR", str(temproot))
    _pytest(root, "-n", "2")
    assert all((folder / "left-by-an-earlier-session").is_file() for folder in planted)
    assert (root / "reports" / "replaylab.json").is_file()
    # the control: the same run without its own --basetemp deletes the oldest (pytest keeps three)
    env = {**_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "replaylab.pytest_plugin",
            "-p",
            "xdist.plugin",
            "--replaylab",
            "suites/bench.yaml",
            "--replaylab-report",
            str(tmp_path / "control"),
            "-n",
            "2",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    assert done.returncode in (0, 1), done.stdout[-2000:]
    assert not planted[0].exists() and planted[-1].is_dir()


def test_the_benchs_children_import_the_checkout_it_runs_from(tmp_path: Path, monkeypatch) -> None:
    """A child process the bench times (pytest, the plain loop) imports replaylab from the checkout
    the bench was started from, even where the environment's path names another replaylab first
    (a second work tree, an installed copy): both sides of a row time the same code."""
    from bench.cases.common import checkout_env

    decoy = tmp_path / "decoy" / "replaylab"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(decoy.parent))
    shown = subprocess.run(
        [sys.executable, "-c", "import replaylab; print(replaylab.__file__)"],
        cwd=tmp_path,
        env=checkout_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(shown).resolve() == (REPO / "replaylab" / "__init__.py").resolve()
