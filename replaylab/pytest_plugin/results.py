"""Each item's result, from where it ran to the one process that writes the reports.

Without xdist, or on the xdist controller, a `ResultCollector` keeps each result as its item's
setup report is made. An xdist worker has none: it puts the result on the setup report as its
scrubbed report JSON, xdist carries the report to the controller, and the controller's collector
takes the result off it as it arrives.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from replaylab.pytest_plugin.names import item_id_parts
from replaylab.pytest_plugin.survivors import freeze_survivors

if TYPE_CHECKING:
    from replaylab.report.html import SectionBudget
    from replaylab.results import ItemResult, Outcome

#: the attribute of an item's setup `TestReport` that carries its `ItemResult` JSON to the
#: controller. A report attribute and not `user_properties`: xdist forwards both, but pytest's
#: JUnit writer prints every user property, and a result (full traces, unscrubbed tool output)
#: does not belong in a CI system's JUnit file.
RESULT_ATTRIBUTE = "replaylab_result"
#: the same without the heavy fields, and the item's HTML sections rendered by the worker, for
#: the controller to read instead (`replaylab.report.jsonio.item_messages`)
LIGHT_ATTRIBUTE = "replaylab_light"
SECTIONS_ATTRIBUTE = "replaylab_sections"
#: the plugin name the collector is registered under
COLLECTOR_NAME = "replaylab-results"


class ResultCollector:
    """Registered on the controller: gathers each item's result (forwarded by xdist workers too)
    and writes the reports once, at the end of the session."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.results: dict[str, Any] = {}  # node id → ItemResult (with its report JSON)
        #: node id → pytest's failed report of an item whose result never arrived (a crashed worker)
        self.lost: dict[str, pytest.TestReport] = {}
        self.started = time.time()  # the report's started_at (configure time: the run's start)
        #: pytest's exit status when it left no reports to write (`run_end.writes_reports`)
        self.not_written: int | None = None
        #: the HTML report's size budget, walked as the items finish (`keep`), each item's place
        #: in the report (by node id), and the items finished before their turn in the walk
        self.sections_budget: SectionBudget | None = None
        self.report_positions: dict[str, int] = {}
        self.waiting: dict[int, ItemResult] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The items' places in the report, which lists them by node id (`keep`)."""
        ids = sorted({item.nodeid for item in session.items if is_item_id(item.nodeid)})
        if ids:
            from replaylab.report.html import SectionBudget

            self.report_positions = {node_id: position for position, node_id in enumerate(ids)}
            self.sections_budget = SectionBudget(len(ids))

    def keep(self, node_id: str, result: ItemResult) -> ItemResult:
        """What the run keeps of the item `node_id` (`item_kept`), with the HTML report's size
        budget walked in the report's order as the items finish: an item that finishes before
        its turn waits for it, and once the walk reaches the sessions the report shows brief,
        every later one is kept without sections (most items of a large run). An item the walk
        does not expect (not counted, or walked already) ends the walk: items then render every
        level, as xdist workers do."""
        from replaylab.report.jsonio import item_kept

        budget = self.sections_budget
        position = self.report_positions.get(node_id)
        if budget is None or position is None or position < budget.index or position in self.waiting:
            self.sections_budget, self.waiting = None, {}
            return item_kept(result)
        if budget.brief_only:
            return item_kept(result, sections=False)
        if position == budget.index:  # its turn: only the sections the walk takes are rendered
            kept = item_kept(result, sections=False)
            kept._sections = budget.place_rendering(result, kept)
        else:
            kept = self.waiting[position] = item_kept(result)
        while budget.index in self.waiting and not budget.brief_only:
            waited = self.waiting.pop(budget.index)
            budget.place_rendered(waited, waited._sections or {})
        if budget.brief_only:
            self.waiting = {}
        return kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A worker's result is read as it arrives, while the workers still run: at the end of
        the session only the controller works, so whatever it leaves until then adds to the
        run's wall time. Taken off the report first: what other plugins read of a report (a
        JSON report log, JUnit) is pytest's, not our large payload."""
        value = getattr(report, RESULT_ATTRIBUTE, None)
        if value is None:
            if report.when == "call" and not report.passed and report.nodeid in self.results:
                self.overrule(report)
            elif (
                (report.failed or (report.skipped and report.when == "setup"))
                and report.nodeid not in self.results
                and is_item_id(report.nodeid)
            ):
                if report.when not in ("setup", "call", "teardown"):
                    # xdist's report of a worker that died mid-item names no phase, and pytest's
                    # terminal counts it a failure while its JUnit counts an error: no result was
                    # made, which is an error of the item's setup — so it is for all of them
                    report.when = "setup"
                self.lost.setdefault(report.nodeid, report)
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
        from replaylab.pytest_plugin.run_end import finish_run, writes_reports

        if not writes_reports(session):
            # a usage error, an interruption or a collection error: the last reports stay as they
            # are, and nothing is printed before pytest's own message
            self.results.clear()
            self.not_written = int(session.exitstatus)
            return
        self.add_lost_items()
        written = finish_run(self.config, [v for _, v in sorted(self.results.items())], self.started)
        self.results.clear()  # written: the memory goes back before pytest's last full collections
        if written is True or session.exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            return  # a non-zero status of pytest's own (failed tests, ...) is kept: it says more
        # the reports were not written (disk full, directory gone): never exit 0, same code as the
        # configure-time check; or the run exercised nothing: its own status
        session.exitstatus = pytest.ExitCode.USAGE_ERROR if written is False else written

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """After pytest's own account of an interrupted run, why the reports are older than it
        (a usage error says nothing: pytest prints its message after every summary)."""
        if self.not_written is not None and self.not_written != pytest.ExitCode.USAGE_ERROR:
            from replaylab.pytest_plugin import options

            terminalreporter.write_line(
                f"replaylab: no reports written (pytest exit status {self.not_written}: the run did not complete); "
                f"any in {options.report_dir(self.config)} are an earlier run's",
                yellow=True,
            )

    def overrule(self, report: pytest.TestReport) -> None:
        """pytest failed or skipped the call phase of an item whose result says otherwise (another
        plugin did it: a timeout, a marker): the item's result becomes what pytest counts, so no
        report counts it as passed while pytest counts it as failed or skipped."""
        kept = self.results[report.nodeid]
        outcome: Outcome = "failed" if report.failed else "skipped"
        failing = kept.outcome in ("failed", "uncompacted")
        if kept.outcome == outcome or kept.outcome == "error" or (failing and outcome in ("failed", "skipped")):
            return
        from replaylab.pytest_plugin.crashed import lost_result
        from replaylab.report.jsonio import item_kept

        why = f"pytest {'failed' if report.failed else 'skipped'} the item replaylab found {kept.outcome}"
        result = lost_result(report.nodeid, outcome, what_pytest_said(report), why=why)
        update = {"suite": kept.suite, "scenario": kept.scenario, "recording": kept.recording}
        self.results[report.nodeid] = item_kept(result.model_copy(update=update))

    def add_lost_items(self) -> None:
        """A result for each item pytest reported without one arriving (its xdist worker died
        while running it, or something stopped its setup): counted as pytest counts it, so the
        reports agree with pytest."""
        from replaylab.pytest_plugin.crashed import lost_result
        from replaylab.report.jsonio import item_kept

        for node_id, report in self.lost.items():
            if node_id not in self.results:
                outcome: Outcome
                if report.skipped:
                    outcome = "skipped"
                else:
                    outcome = "error" if report.when in ("setup", "teardown") else "failed"
                self.results[node_id] = item_kept(lost_result(node_id, outcome, what_pytest_said(report)))
        self.lost.clear()


def what_pytest_said(report: pytest.TestReport) -> str:
    """The line pytest shows for a report: a skip's reason, a failure's exception message, else
    the report's text."""
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:  # a skip: (path, line, reason)
        return str(report.longrepr[2])
    crash = getattr(report.longrepr, "reprcrash", None)
    return crash.message if crash is not None and crash.message else report.longreprtext


def is_item_id(node_id: str) -> bool:
    """Whether `node_id` has the shape of a replaylab item's: `<suite .yaml>::<recording>::<scenario>`."""
    return item_id_parts(node_id) is not None


COLLECTOR = pytest.StashKey[ResultCollector]()


def start_collecting(config: pytest.Config) -> None:
    """On the process that writes the reports (never on an xdist worker)."""
    collector = config.stash[COLLECTOR] = ResultCollector(config)
    config.pluginmanager.register(collector, COLLECTOR_NAME)


def hand_over(config: pytest.Config, report: pytest.TestReport, result: ItemResult) -> None:
    """An item's result, as its setup report is made: kept by this process's collector, or put
    on the report for the controller (an xdist worker)."""
    from replaylab.qa.pipeline import item_collections
    from replaylab.report.jsonio import item_messages

    collector = config.stash.get(COLLECTOR, None)
    # the result is as large as its session and not yet frozen (`freeze_survivors`): at the default
    # thresholds the objects its reports make would have every full collection scan it again
    with item_collections():
        if collector is not None:  # this process writes the reports: it keeps what a worker would send
            if report.nodeid not in collector.results:
                collector.results[report.nodeid] = collector.keep(report.nodeid, result)
        else:
            # as bytes, which execnet carries as they are: a str would be decoded and encoded again at
            # every hop, and copied as UCS-2 each time when the texts are not Latin-1 (τ² texts are not)
            full, light, sections = item_messages(result)
            setattr(report, RESULT_ATTRIBUTE, full)
            setattr(report, LIGHT_ATTRIBUTE, light)
            setattr(report, SECTIONS_ATTRIBUTE, sections)


def prepare_report_writers() -> None:
    """On an xdist controller, when the first result arrives: import the report writers (jinja2,
    the templates). At the end of the run the controller works alone, so whatever it does there
    adds to the run's wall time; while the workers run it shares the cores with them."""
    from replaylab.pytest_plugin import run_end  # noqa: F401
    from replaylab.report import html, markdown, merge  # noqa: F401

    html.prepare()
