"""Suite files as pytest collectors, each (recording × scenario) as an item, and the shard a run keeps.

An item runs the pipeline in its *setup* phase, so an infrastructure error is a pytest (and
JUnit) error, not a failure; a regression fails the *call* phase; a scenario that was not
exercised is skipped (failed under `--replaylab-strict`: the verdict says so).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from replaylab.pytest_plugin import options
from replaylab.pytest_plugin.survivors import freeze_survivors

if TYPE_CHECKING:
    from replaylab.qa.results import ItemResult


def validate_suites(config: pytest.Config) -> None:
    """Bad suite files are usage errors (exit 4), reported before anything runs."""
    from replaylab.diagnostics import InputError
    from replaylab.qa.suite import find_suite_files, load_suite

    roots = [Path(a.split("::")[0]) for a in config.args] or [Path.cwd()]
    messages: list[str] = []
    for root in roots:
        if not root.exists():
            continue
        for path in find_suite_files([root]):
            if not looks_like_suite(path):
                continue
            try:
                load_suite(path)
            except InputError as exc:
                messages.extend(str(d) for d in exc.diagnostics)
    if messages:
        raise pytest.UsageError("replaylab: invalid suite file(s):\n  " + "\n  ".join(messages))


def looks_like_suite(path: Path) -> bool:
    """Suite files live in a suites/ folder or declare `recordings:`; other YAML is left alone."""
    if "suites" in path.parts:
        return True
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return False
    return "\nrecordings:" in "\n" + head


class SuiteCollector(pytest.File):
    def collect(self):
        from replaylab.qa.pipeline import item_name
        from replaylab.qa.suite import load_suite
        from replaylab.scrub import scrub_text

        suite = load_suite(self.path)
        for scenario in suite.scenarios:
            for recording in suite.recordings:
                # scrubbed: pytest prints the name (node ids, -v, summaries) and writes it into JUnit
                yield ReplayItem.from_parent(
                    self, name=scrub_text(item_name(recording, scenario)), scenario=scenario, recording=recording
                )


class ReplayError(pytest.fail.Exception):  # type: ignore[misc,name-defined]
    """Infrastructure problem of one item (JUnit <error>: it is raised in setup). A `Failed` with
    `pytrace=False`, so pytest does not build a traceback report (the source of every frame down
    the pipeline, slow) that the failure story replaces anyway."""

    def __init__(self, reason: str):
        super().__init__(reason, pytrace=False)


class ReplayFailure(Exception):
    """Compaction changed what the agent does (JUnit <failure>)."""


class ReplayItem(pytest.Item):
    def __init__(self, *, scenario: Any, recording: Path, **kwargs: Any):
        super().__init__(**kwargs)
        self.scenario = scenario
        self.recording = recording
        #: the pipeline's result, from setup until teardown (the plugin hands it over meanwhile)
        self.result: ItemResult | None = None

    def setup(self) -> None:
        from replaylab.qa.pipeline import run_item
        from replaylab.scrub import scrub_text

        self.result = run_item(self.scenario, self.recording, options.run_options(self.config))
        for defect in self.result.defects:
            self.user_properties.append(
                (f"replaylab.defect.{defect.code.value}", _short(scrub_text(defect.message), 300))
            )
        if self.result.outcome == "error":
            raise ReplayError(scrub_text(self.result.reason))
        if self.result.outcome == "skipped":
            pytest.skip(scrub_text(self.result.reason))  # the skip reason is printed and in JUnit

    def runtest(self) -> None:
        from replaylab.scrub import scrub_text

        if self.result is not None and self.result.outcome == "failed":
            raise ReplayFailure(scrub_text(self.result.reason))

    def teardown(self) -> None:
        """The result went to the collector (or out as JSON on the setup report, in an xdist
        worker) and the call phase has used it: the item lets go of it, so a worker does not hold
        the traces of every item it ran."""
        self.result = None
        freeze_survivors()

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (ReplayFailure, ReplayError)) and self.result is not None:
            from replaylab.qa.story import failure_story

            return failure_story(self.result)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"replaylab: {self.name}"


def keep_shard(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the replaylab items outside `--replaylab-shard K/N` (a stable split by node id)."""
    shard = options.shard(config)
    if shard is None:
        return
    k, n = shard
    keep, drop = [], []
    for item in items:
        target = keep if not isinstance(item, ReplayItem) or zlib.crc32(item.nodeid.encode()) % n == k - 1 else drop
        target.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
