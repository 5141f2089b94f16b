"""Suite files as pytest collectors, a collector per recording under each, an item per scenario
under that, and the shard a run keeps.

The node id is the item's identity: `<suite file>::<recording>::<scenario>` (`names`), unique
for any suite layout, and the id of its result in every report. An item runs the pipeline in its
*setup* phase, so an infrastructure error is a pytest (and JUnit) error, not a failure; a
regression fails the *call* phase; a scenario that was not exercised is skipped (failed under
`--replaylab-strict`: the verdict says so). An exception escaping the pipeline still gives the
item a result (`crashed`), so no report loses an item pytest counts.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from replaylab.input_files import open_regular
from replaylab.printable import printable
from replaylab.pytest_plugin import options
from replaylab.pytest_plugin.names import recording_names, scenario_name, unique_names
from replaylab.pytest_plugin.survivors import freeze_survivors

if TYPE_CHECKING:
    from replaylab.qa.progress import Progress
    from replaylab.results import ItemResult
    from replaylab.suite import Scenario


def validate_suites(config: pytest.Config) -> list[Path]:
    """Bad suite files are usage errors (exit 4), reported before anything runs; the recordings of
    the good ones."""
    from replaylab.suite.files import find_suite_files

    roots = [Path(a.split("::")[0]) for a in config.args] or [Path.cwd()]
    suites = [path for root in roots if root.exists() for path in find_suite_files([root]) if looks_like_suite(path)]
    if not suites:  # the schema (pydantic, the transcript layer) only when there is a suite to read
        return []
    from replaylab.diagnostics import InputError
    from replaylab.suite import load_suite, recording_problems

    messages: list[str] = []
    recordings: list[Path] = []
    for path in suites:
        try:
            suite = load_suite(path)
            recordings.extend(suite.recordings)
            messages.extend(
                str(d) for d in recording_problems(suite, config.getoption("replaylab_record_mode"), os.environ)
            )
        except InputError as exc:
            messages.extend(str(d) for d in exc.diagnostics)
        except Exception as exc:  # no suite file may turn into pytest's INTERNALERROR
            messages.append(printable(f"{path}: error[suite-unreadable]: {type(exc).__name__}: {exc}"))
    if messages:
        raise pytest.UsageError("replaylab: invalid suite file(s):\n  " + "\n  ".join(messages))
    return recordings


def looks_like_suite(path: Path) -> bool:
    """Suite files live in a suites/ folder or declare `recordings:`; other YAML is left alone.
    Only a regular file's head is read (a FIFO named `*.yaml` would block the read)."""
    if "suites" in path.parts:
        return True
    try:
        with open_regular(path) as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return "\nrecordings:" in "\n" + head


class SuiteCollector(pytest.File):
    @classmethod
    def collector(cls, parent: pytest.Collector, path: Path) -> SuiteCollector:
        """The suite file's collector, its node id scrubbed and printable: pytest prints node ids
        and writes them into JUnit, and a suite's file name can hold a token (its items' ids
        start with this one; recording and scenario names are scrubbed as they are added)."""
        from replaylab.scrub import scrub_text

        made = cls.from_parent(parent, path=path)
        shown = printable(scrub_text(made.nodeid))
        return made if shown == made.nodeid else cls.from_parent(parent, path=path, nodeid=shown)

    def collect(self):
        from replaylab.suite import load_suite

        suite = load_suite(self.path)
        names = recording_names(suite.path.parent, suite.recordings)
        for recording in suite.recordings:
            yield RecordingCollector.from_parent(self, name=names[recording], suite=suite, recording=recording)


class RecordingCollector(pytest.Collector):
    """One recording of a suite: its scenarios are its items."""

    def __init__(self, *, suite: Any, recording: Path, **kwargs: Any):
        super().__init__(**kwargs)
        self.suite = suite
        self.recording = recording

    def collect(self):
        override = options.mode(self.config)
        names = unique_names(scenario_name(s.name, s.compaction.mode, override) for s in self.suite.scenarios)
        for name, scenario in zip(names, self.suite.scenarios):
            yield ReplayItem.from_parent(self, name=name, scenario=scenario, recording=self.recording)

    def reportinfo(self):
        return self.path, None, f"replaylab: {self.name}"


# pytest.fail.Exception is a class kept on a function, which mypy does not see as a type
class ReplayError(pytest.fail.Exception):  # type: ignore[name-defined]
    """Infrastructure problem of one item (JUnit <error>: it is raised in setup). A `Failed` with
    `pytrace=False`, so pytest does not build a traceback report (the source of every frame down
    the pipeline, slow) that the failure story replaces anyway."""

    def __init__(self, reason: str):
        super().__init__(printable(reason), pytrace=False)


class ReplayFailure(Exception):
    """Compaction changed what the agent does (JUnit <failure>)."""


class CannotCompact(ReplayFailure):
    """Compaction was due and cannot succeed at the item's budget (a failure of its own kind)."""


class ReplayItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, recording: Path, **kwargs: Any):
        super().__init__(**kwargs)
        self.scenario = scenario
        self.recording = recording
        #: the pipeline's result, from setup until teardown (the plugin hands it over meanwhile)
        self.result: ItemResult | None = None
        #: the compactor under test named by the command line or a hook (`choose_compactors`)
        self.compactor_spec: Any = None
        #: its progress lines (None: not shown), kept for the reports written after the pipeline
        self.progress: Progress | None = None

    def setup(self) -> None:
        from replaylab.scrub import scrub_text

        self.result = self.run_pipeline()
        for defect in self.result.defects:
            self.user_properties.append(
                (f"replaylab.defect.{defect.code.value}", printable(_short(scrub_text(defect.message), 300)))
            )
        if self.result.outcome == "error":
            raise ReplayError(scrub_text(self.result.reason))
        if self.result.outcome == "skipped":
            pytest.skip(printable(scrub_text(self.result.reason)))  # printed and in JUnit

    def run_pipeline(self) -> ItemResult:
        """The item's result, its id the node id; an exception escaping the pipeline is an error
        result naming it (`crashed`), not an item missing from the reports."""
        from dataclasses import replace

        from replaylab.pytest_plugin.progress import item_progress
        from replaylab.qa.pipeline import run_item

        try:
            from replaylab.pytest_plugin.run_files import watched

            run_files = watched(self.config)
            self.progress = item_progress(self)
            run_options = replace(
                options.run_options(self.config),
                progress=self.progress,
                compactor_spec=self.compactor_spec,
                after_item=run_files.after_item if run_files is not None else None,
                known_states=run_files.state_of if run_files is not None else None,
            )
            result = run_item(self.scenario, self.recording, run_options)
        except (Exception, SystemExit) as exc:  # a tool pack's code may raise anything, even exit
            return self.crashed(exc)
        result.id = self.nodeid
        return result

    def crashed(self, error: BaseException, during: str = "while it ran") -> ItemResult:
        from replaylab.pytest_plugin.crashed import crashed_result
        from replaylab.qa.sources import display_path

        return crashed_result(
            self.nodeid,
            suite=self.scenario.suite,
            scenario=self.scenario.name,
            recording=display_path(self.recording),
            error=error,
            during=during,
        )

    def runtest(self) -> None:
        from replaylab.scrub import scrub_text

        if self.result is not None and self.result.outcome in ("failed", "uncompacted"):
            raise (CannotCompact if self.result.outcome == "uncompacted" else ReplayFailure)(
                printable(scrub_text(self.result.reason))
            )

    def teardown(self) -> None:
        """The result went to the collector (or out as JSON on the setup report, in an xdist
        worker) and the call phase has used it: the item lets go of it, so a worker does not hold
        the traces of every item it ran."""
        self.result = None
        freeze_survivors()

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (ReplayFailure, ReplayError)) and self.result is not None:
            from replaylab.report.story import failure_story

            return failure_story(self.result)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"replaylab: {self.nodeid.partition('::')[2]}"


def choose_compactors(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each item's compactor under test, in this order: `--replaylab-compactor`, then the first
    `pytest_replaylab_compactor` implementation that returns one, then the suite's `compactor:`
    (left to the pipeline). A hook's value that names no compactor is a usage error now."""
    replay_items = [item for item in items if isinstance(item, ReplayItem)]
    if not replay_items:  # the specs' schema (pydantic) only when there is an item to give one
        return
    from replaylab.compactors.spec import from_hook

    given = options.compactor(config)
    for item in replay_items:
        if given is not None:
            item.compactor_spec = given
            continue
        value = config.hook.pytest_replaylab_compactor(config=config, scenario=item.scenario)
        try:
            item.compactor_spec = from_hook(value)
        except ValueError as exc:
            raise pytest.UsageError(f"replaylab: pytest_replaylab_compactor for {item.nodeid}: {exc}") from None


def keep_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the replaylab items outside `--replaylab-shard K/N` (a stable split by node id)."""
    shard = options.shard(config)
    if shard is None:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        target = keep if not isinstance(item, ReplayItem) or in_shard(item.nodeid, shard) else drop
        target.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def in_shard(node_id: str, shard: tuple[int, int]) -> bool:
    """Whether the item `node_id` belongs to shard K of N: a split by the node id alone, so every
    process (each xdist worker, a later run comparing with a baseline) makes the same one."""
    k, n = shard
    return zlib.crc32(node_id.encode()) % n == k - 1


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
