"""The pytest plugin: `pytest --replaylab suites/`.

Each suite YAML file under the given paths becomes a collector; each (recording × scenario) an
item with a readable id (`suite::recording::scenario`). The item's outcome, the JUnit XML, the
exit status and the reports all come from one `Verdict` (replaylab.qa.verdict):

* infrastructure errors are raised in the item's *setup* phase, so pytest and JUnit report them
  as errors, not failures;
* regressions and blocking defects fail the *call* phase with a short expected-vs-actual story;
* a scenario in which no compaction happened is skipped as "not exercised" (failed under
  `--replaylab-strict`).

Loading this module must stay cheap: the pipeline (and through it deepdiff, vcrpy, litellm when a
real model is configured) is imported only when an item runs.
"""

from __future__ import annotations

import gc
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from replaylab.pytest_plugin.options import report_dir

#: the attribute of an item's setup `TestReport` that carries its `ItemResult` JSON to the
#: controller. A report attribute and not `user_properties`: xdist forwards both, but pytest's
#: JUnit writer prints every user property, and a result (full traces, unscrubbed tool output)
#: does not belong in a CI system's JUnit file.
RESULT_ATTRIBUTE = "replaylab_result"
#: the same without the heavy fields, and the item's HTML sections rendered by the worker, for
#: the controller to read instead (`replaylab.report.jsonio.item_messages`)
LIGHT_ATTRIBUTE = "replaylab_light"
SECTIONS_ATTRIBUTE = "replaylab_sections"
#: the controller's (or a run without xdist's) `ResultCollector`; xdist workers have none
COLLECTOR_NAME = "replaylab-results"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("replaylab", "replaylab: compaction replay and regression testing")
    group.addoption("--replaylab", action="store_true", default=False,
                    help="collect suite YAML files under the given paths; replay each recording × scenario "
                         "on the full and the compacted context and report what changed")
    group.addoption("--replaylab-report", metavar="DIR", default=None,
                    help="where to write replaylab.html / .json / .md (default: ini replaylab_report or reports/)")
    group.addoption("--replaylab-model", metavar="MODEL", default=None,
                    help="override every suite's model: replay (offline default) | litellm/<provider>/<model> | scripted")
    group.addoption("--replaylab-mode", metavar="MODE", default=None,
                    choices=["safeguard", "auto", "aggressive", "manual"],
                    help="override every suite's compaction mode")
    group.addoption("--replaylab-record-mode", metavar="MODE", default=None,
                    choices=["none", "once", "new_episodes", "all"],
                    help="LLM cassette record mode for litellm models (default none: never call a model)")
    group.addoption("--replaylab-strict", action="store_true", default=None,
                    help="fail scenarios that were not exercised (no compaction happened) and recordings with problems")
    group.addoption("--replaylab-bless", action="store_true", default=False,
                    help="write the run's per-item results as the baseline file; later runs report regressions against it")
    group.addoption("--replaylab-baseline", metavar="FILE", default=None,
                    help="baseline file to write (--replaylab-bless) or compare with (default: <report dir>/../replaylab-baseline.json "
                         "or ini replaylab_baseline)")
    group.addoption("--replaylab-shard", metavar="K/N", default=None,
                    help="run only shard K of N (1-based; stable split by item id) — merge with `replaylab report merge`")
    parser.addini("replaylab_report", "default report directory", default="reports")
    parser.addini("replaylab_model", "default model override", default="")
    parser.addini("replaylab_mode", "default compaction mode override", default="")
    parser.addini("replaylab_strict", "treat not-exercised scenarios as failures", type="bool", default=False)
    parser.addini("replaylab_baseline", "baseline file for --replaylab-bless", default="")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("replaylab"):
        return
    shard = config.getoption("replaylab_shard")
    if shard is not None:
        parse_shard(shard)
    if config.getoption("replaylab_bless") and config.getoption("replaylab_shard"):
        raise pytest.UsageError("--replaylab-bless and --replaylab-shard conflict: bless a complete run, not a shard")
    if not hasattr(config, "workerinput"):  # an xdist worker starts only after its controller checked
        _validate_suites(config)
        if not config.getoption("collectonly"):
            _check_report_dir(config)
        config.pluginmanager.register(ResultCollector(config), COLLECTOR_NAME)


def _check_report_dir(config: pytest.Config) -> None:
    """A report directory that cannot be written is the user's to fix: a usage error (exit 4)
    before anything runs, not a traceback after a long run (issue 9)."""
    from replaylab.report import ReportWriteError, check_report_dir

    try:
        check_report_dir(report_dir(config))
    except ReportWriteError as exc:
        raise pytest.UsageError(f"replaylab: {exc} (set by --replaylab-report or ini replaylab_report)") from None


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--replaylab-shard {text!r}: expected K/N with integers, e.g. 1/4") from None
    if not (n >= 1 and 1 <= k <= n):
        raise pytest.UsageError(f"--replaylab-shard {text!r}: expected 1 <= K <= N")
    return k, n


def _validate_suites(config: pytest.Config) -> None:
    """Bad suite files are usage errors (exit 4), reported before anything runs."""
    from replaylab.diagnostics import InputError
    from replaylab.qa.suite import find_suite_files, load_suite

    roots = [Path(a.split("::")[0]) for a in config.args] or [Path.cwd()]
    messages: list[str] = []
    for root in roots:
        if not root.exists():
            continue
        for path in find_suite_files([root]):
            if not _looks_like_suite(path):
                continue
            try:
                load_suite(path)
            except InputError as exc:
                messages.extend(str(d) for d in exc.diagnostics)
    if messages:
        raise pytest.UsageError("replaylab: invalid suite file(s):\n  " + "\n  ".join(messages))


def _looks_like_suite(path: Path) -> bool:
    """Suite files live in a suites/ folder or declare `recordings:`; other YAML is left alone."""
    if "suites" in path.parts:
        return True
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    return "\nrecordings:" in "\n" + head


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if not parent.config.getoption("replaylab"):
        return None
    if file_path.suffix in (".yaml", ".yml") and _looks_like_suite(file_path):
        return SuiteCollector.from_parent(parent, path=file_path)
    return None


class SuiteCollector(pytest.File):
    def collect(self):
        from replaylab.qa.pipeline import item_name
        from replaylab.qa.suite import load_suite

        suite = load_suite(self.path)
        for scenario in suite.scenarios:
            for recording in suite.recordings:
                yield ReplayItem.from_parent(self, name=item_name(recording, scenario),
                                             scenario=scenario, recording=recording)


class ReplayError(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """Infrastructure problem of one item (JUnit <error>: it is raised in setup). A `Failed` with
    `pytrace=False`, so pytest does not build a traceback report (source of every frame down the
    pipeline, ~0.1 s an item) that `pytest_runtest_makereport` replaces with the story anyway."""

    def __init__(self, reason: str):
        super().__init__(reason, pytrace=False)


class ReplayFailure(Exception):
    """Compaction changed what the agent does (JUnit <failure>)."""


class ReplayItem(pytest.Item):
    def __init__(self, *, scenario: Any, recording: Path, **kwargs: Any):
        super().__init__(**kwargs)
        self.scenario = scenario
        self.recording = recording
        self.result = None

    def setup(self) -> None:
        from replaylab.qa.pipeline import RunOptions, run_item
        from replaylab.scrub import scrub_text

        options = RunOptions.from_config(self.config)
        self.result = run_item(self.scenario, self.recording, options)
        for defect in self.result.defects:
            self.user_properties.append((f"replaylab.defect.{defect.code.value}",
                                         _short(scrub_text(defect.message), 300)))
        if self.result.outcome == "error":
            raise ReplayError(self.result.reason)
        if self.result.outcome == "skipped":
            pytest.skip(self.result.reason)

    def runtest(self) -> None:
        if self.result is not None and self.result.outcome == "failed":
            raise ReplayFailure(self.result.reason)

    def teardown(self) -> None:
        """The result went to the collector (or out as JSON on the setup report, in an xdist
        worker) and the call phase has used it: the item lets go of it, so a worker does not hold
        the traces of every item it ran."""
        self.result = None
        freeze_survivors()

    def repr_failure(self, excinfo, style=None):  # noqa: D401 - pytest hook signature
        if isinstance(excinfo.value, (ReplayFailure, ReplayError)) and self.result is not None:
            from replaylab.qa.story import failure_story

            return failure_story(self.result)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"replaylab: {self.name}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Setup errors of replaylab items print the failure story too, not pytest's runner frames
    (pytest only asks `repr_failure` for the call phase)."""
    report = yield
    if not (isinstance(item, ReplayItem) and call.when == "setup" and item.result is not None):
        return report
    from replaylab.report.jsonio import item_kept, item_messages

    collector = item.config.pluginmanager.get_plugin(COLLECTOR_NAME)
    if collector is not None:  # this process writes the reports: it keeps what a worker would send
        collector.results.setdefault(report.nodeid, item_kept(item.result))
    else:  # an xdist worker: the result travels to the controller as its scrubbed report JSON
        # as bytes, which execnet carries as they are: a str was decoded here, encoded by execnet,
        # decoded by the controller's and encoded again for the report (a tenth of the controller's
        # instructions: τ² texts are not Latin-1, so every step copied them as UCS-2)
        full, light, sections = item_messages(item.result)
        setattr(report, RESULT_ATTRIBUTE, full)
        setattr(report, LIGHT_ATTRIBUTE, light)
        setattr(report, SECTIONS_ATTRIBUTE, sections)
    if call.excinfo is not None and isinstance(call.excinfo.value, ReplayError):
        from replaylab.qa.story import failure_story

        report.longrepr = failure_story(item.result)
    return report


def freeze_survivors(generation: int = 1) -> None:
    """After an item (or its result's arrival from a worker): freeze what is still alive, after a
    young-generation collection so no fresh garbage goes with it. The results and pytest's
    reports live to the end of the session, and every full collection would scan them again — a
    heap that grows with each item. Over 300 bench items: garbage collection 1.18 → 0.39 s, peak
    RSS unchanged (gc.callbacks probe, /usr/bin/time)."""
    gc.collect(generation)
    gc.freeze()


def prepare_report_writers() -> None:
    """On an xdist controller, when the first result arrives: import the report writers (jinja2,
    the templates), ~0.1 s. At the end of the run the controller works alone, so whatever it does
    there adds to the run's wall time; while the workers run it shares the cores with them."""
    from replaylab.pytest_plugin import run_end  # noqa: F401
    from replaylab.report import html, markdown, merge  # noqa: F401

    html.prepare()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the items run: collect once, then freeze what is alive (imports, schemas, the
    collected items) into the garbage collector's permanent generation. Those objects live to the
    end anyway, and every full collection during a long run would scan them again: over 300
    items the collector's time fell from 0.98 s to 0.73 s (gc.callbacks probe). Nothing is
    leaked: the full collection first leaves no garbage to freeze."""
    if session.config.getoption("replaylab") and not session.config.getoption("collectonly"):
        freeze_survivors(generation=2)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    shard = config.getoption("replaylab_shard") if config.getoption("replaylab") else None
    if not shard:
        return
    k, n = parse_shard(shard)
    keep, drop = [], []
    for item in items:
        target = keep if not isinstance(item, ReplayItem) or zlib.crc32(item.nodeid.encode()) % n == k - 1 else drop
        target.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class ResultCollector:
    """Registered on the controller: gathers each item's result (forwarded by xdist workers too)
    and writes the reports once, at the end of the session."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.results: dict[str, Any] = {}  # node id → ItemResult (with its report JSON)
        self.started = time.time()  # the report's started_at (configure time: the run's start)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A worker's result is read as it arrives, while the workers still run: at the end of
        the session only the controller works, so whatever it leaves until then is added to
        the run's wall time (parsing 1,000 items ≈ 1.7 s). Taken off the report, first: what
        other plugins read of a report (a JSON report log, JUnit) is pytest's, not ~70 KB of
        ours in bytes."""
        value = getattr(report, RESULT_ATTRIBUTE, None)
        if value is None:
            return
        light, sections = getattr(report, LIGHT_ATTRIBUTE, None), getattr(report, SECTIONS_ATTRIBUTE, None)
        for name in (RESULT_ATTRIBUTE, LIGHT_ATTRIBUTE, SECTIONS_ATTRIBUTE):
            report.__dict__.pop(name, None)
        if report.nodeid not in self.results:
            from replaylab.report.jsonio import item_from_report_json

            if not self.results:
                prepare_report_writers()
            self.results[report.nodeid] = item_from_report_json(value, light, sections)
            freeze_survivors()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput") or self.config.getoption("collectonly"):
            return  # xdist workers never write reports (the controller aggregates); nothing ran
        from replaylab.pytest_plugin.run_end import finish_run

        finish_run(self.config, [v for _, v in sorted(self.results.items())], self.started)
        self.results.clear()  # written: the memory goes back before pytest's last full collections
        if getattr(self.config, "_replaylab_report_failed", False) and session.exitstatus in (
                pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            # the reports were not written (disk full, directory gone): never exit 0; same code as
            # the configure-time check. A non-zero status (failed tests, ...) is kept: it says more.
            session.exitstatus = pytest.ExitCode.USAGE_ERROR


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if not config.getoption("replaylab"):
        return None
    model = config.getoption("replaylab_model") or config.getini("replaylab_model") or "per suite (default replay, offline)"
    return [f"replaylab: model={model} report={report_dir(config)}"]




def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
