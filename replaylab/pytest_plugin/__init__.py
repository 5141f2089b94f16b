"""The pytest plugin: `pytest --replaylab suites/`.

Each suite YAML file under the given paths becomes a collector, each of its recordings a
collector under it, and each scenario an item: node id `<suite file>::<recording>::<scenario>`,
unique for any layout and the item's id in every report. The item's outcome, the JUnit XML, the
exit status and the reports all come from one `Verdict` (replaylab.verdict):

* infrastructure errors are raised in the item's *setup* phase, so pytest and JUnit report them
  as errors, not failures;
* regressions and blocking defects fail the *call* phase with a short expected-vs-actual story;
* a scenario in which no compaction happened is skipped as "not exercised" (failed under
  `--replaylab-strict`).

This module holds the hooks; the work is in the modules named by job: `options` (the settings),
`collect` (collectors, items, shards), `results` (each result to the process that writes the
reports), `run_end` (the reports and the nothing-exercised gate), `junit` (the JUnit testcase
names), `skips` (where a not-exercised skip is located), `local_model` (the local test model's
fixture). Loading the plugin must stay cheap: the pipeline (and through it deepdiff, vcrpy,
litellm when a real model is configured) is imported only when an item runs, llama.cpp only when
a test asks for the local model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from replaylab.pytest_plugin import options, progress
from replaylab.pytest_plugin.collect import (
    CannotCompact,
    ReplayError,
    ReplayItem,
    SuiteCollector,
    choose_compactors,
    keep_shard,
    looks_like_suite,
    validate_suites,
)
from replaylab.pytest_plugin.junit import JunitNames
from replaylab.pytest_plugin.results import hand_over, start_collecting
from replaylab.pytest_plugin.run_files import RunStartForWorkers, watch, watched
from replaylab.pytest_plugin.skips import skip_location
from replaylab.pytest_plugin.survivors import freeze_survivors

if TYPE_CHECKING:
    from replaylab.upstream.profiles import AgentProfile

LOCAL_MODEL_FIXTURES = "replaylab-local-model"


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from replaylab.pytest_plugin import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)
    progress.add_option(parser)


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(LOCAL_MODEL_FIXTURES):  # for any test, with or without --replaylab
        from replaylab.pytest_plugin import local_model

        config.pluginmanager.register(local_model, LOCAL_MODEL_FIXTURES)
    if not options.enabled(config):
        return
    shard = options.shard(config)  # a malformed value is a usage error here, before anything runs
    options.budget_overrides(config)  # so is a budget the reserve leaves nothing of
    options.check_model(config)  # and a model override that names no model
    options.compactor(config)  # and a compactor override that is no spec
    if options.bless(config) and shard is not None:
        raise pytest.UsageError("--replaylab-bless and --replaylab-shard conflict: bless a complete run, not a shard")
    if not hasattr(config, "workerinput"):  # an xdist worker starts only after its controller checked
        watch(config, validate_suites(config))
        config.pluginmanager.register(RunStartForWorkers(), "replaylab-run-start-for-workers")
        _check_pi_oracle(config)
        if not config.getoption("collectonly"):
            _check_report_dir(config)
        start_collecting(config)
        config.pluginmanager.register(JunitNames(config), "replaylab-junit-names")


def _check_pi_oracle(config: pytest.Config) -> None:
    """`--replaylab-verify-windows on` without the oracle is a usage error before anything runs:
    the oracle of the agent `--replaylab-agent` names, else of every agent a session may get."""
    named = options.agent(config)
    if options.verify_with_pi(config) != "on":
        return
    from replaylab.oracles.agent import oracle_unavailable
    from replaylab.upstream.profiles import profile_named, profiles

    for profile in [profile_named(named)] if named else profiles().values():
        reason = oracle_unavailable(profile)
        if reason is not None:
            raise pytest.UsageError(f"replaylab: --replaylab-verify-windows on: {reason}")


def _check_report_dir(config: pytest.Config) -> None:
    """A report directory that cannot be written is the user's to fix: a usage error (exit 4)
    before anything runs, not a traceback after a long run."""
    from replaylab.report import ReportWriteError, check_report_dir

    try:
        check_report_dir(options.report_dir(config))
    except ReportWriteError as exc:
        raise pytest.UsageError(f"replaylab: {exc} (set by --replaylab-report or ini replaylab_report)") from None


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if not options.enabled(config):
        return None
    model = options.model(config) or "per suite (default replay, offline)"
    return [f"replaylab: model={model} report={options.report_dir(config)}"]


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if not options.enabled(parent.config):
        return None
    if file_path.suffix in (".yaml", ".yml") and looks_like_suite(file_path):
        return SuiteCollector.collector(parent, file_path)
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if options.enabled(config):
        keep_shard(config, items)
        choose_compactors(config, items)
        if watched(config) is None:  # an xdist worker: the files of the items it runs
            watch(config, [item.recording for item in items if isinstance(item, ReplayItem)])


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Before the items run (a full collection): start the agents' processes they will ask, then
    freeze what is alive (imports, schemas, the collected items), which lives to the end of the
    run anyway (`survivors`)."""
    if options.enabled(session.config) and not session.config.getoption("collectonly"):
        _start_agents(session)
        freeze_survivors(generation=2)


def _start_agents(session: pytest.Session) -> None:
    """The agents' node processes the items will ask, started before the first item — the oracles
    their window checks ask and the workers of their bundled agent compactors: their start (seconds
    for OpenClaw) then overlaps the items that run before the first one needs it, instead of being
    waited for by it. Not under xdist: its controller runs no item, and a worker does not know
    which items it will get (each item starts its own agents, `qa.pipeline`); started for every
    item collected, on each worker, they would take the cores both workers need."""
    items = [item for item in session.items if isinstance(item, ReplayItem)]
    if not items or hasattr(session.config, "workerinput"):
        return
    from replaylab.checks.agent_window import start_oracle
    from replaylab.compactors.external import start_worker
    from replaylab.qa.plan import item_profile

    run = options.run_options(session.config)
    profiles: dict[tuple[str | None, Path], AgentProfile] = {}  # a recording's header is read once
    started: set[tuple[str, str]] = set()
    for item in items:
        named = (item.scenario.agent, item.recording)
        if named not in profiles:
            profiles[named] = item_profile(item.scenario, item.recording, run)
        profile = profiles[named]
        spec = item.compactor_spec or item.scenario.compactor
        key = (profile.name, spec.name() if spec is not None else "")
        if key not in started:
            started.add(key)
            start_oracle(profile, run.verify_with_pi)
            start_worker(spec, profile)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """An item that cannot compact fails as pytest counts failures (its story under FAILURES, the
    exit status), shown with its own letter and word."""
    if getattr(report, "replaylab_outcome", None) == "uncompacted" and report.when == "call":
        return "failed", "C", ("CANNOT COMPACT", {"red": True})
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A replaylab item's setup report hands its result over (`results.hand_over`); a setup error
    prints the failure story too, not pytest's runner frames (pytest only asks `repr_failure` for
    the call phase). A result that cannot be handed over makes the item an error whose (crash)
    result can, so pytest and the reports still count the same items."""
    report = yield
    if isinstance(item, ReplayItem) and report.skipped and isinstance(report.longrepr, tuple):
        report.longrepr = (*skip_location(item.path, item.scenario.name), report.longrepr[2])
    if isinstance(item, ReplayItem) and call.when == "call" and call.excinfo is not None:
        if isinstance(call.excinfo.value, CannotCompact):
            report.replaylab_outcome = "uncompacted"  # a plain attribute: it travels from xdist workers
    if not (isinstance(item, ReplayItem) and call.when == "setup" and item.result is not None):
        return report
    from replaylab.qa.progress import report_phase
    from replaylab.report.story import failure_story

    defects = len(item.result.defects)
    report_phase(item.progress, f"writing its reports ({defects:,} defect{'s' if defects != 1 else ''})")
    try:
        hand_over(item.config, report, item.result)
    except Exception as exc:  # the result cannot travel: the item errors, with a result that can
        item.result = item.crashed(exc, during="while its result went to the reports")
        report.outcome = "failed"
        report.longrepr = failure_story(item.result)
        hand_over(item.config, report, item.result)
        return report
    if call.excinfo is not None and isinstance(call.excinfo.value, ReplayError):
        report.longrepr = failure_story(item.result)
    return report
