"""End of a pytest run: assemble the `RunReport`, compare with the blessed baseline, write reports.

Runs on the controller only (xdist workers send each item's result as its scrubbed report JSON on
its setup report; the plugin's collector reads it as it arrives).
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from pathlib import Path
from typing import Any

import pytest

from replaylab import __version__
from replaylab.pytest_plugin.options import report_dir
from replaylab.qa.results import ItemResult, RunMeta
from replaylab.report.run import bless, build_report, compare_with_baseline, git_sha


def run_meta(config: pytest.Config | None = None, started: float | None = None) -> RunMeta:
    """`started`: when the run began (`time.time()`); now when not given."""
    model = None
    mode = None
    if config is not None:
        model = config.getoption("replaylab_model") or config.getini("replaylab_model") or None
        mode = config.getoption("replaylab_mode") or config.getini("replaylab_mode") or None
    shard = config.getoption("replaylab_shard") if config is not None else None
    return RunMeta(replaylab_version=__version__, git_sha=git_sha(), model=model or "per-suite", mode=mode,
                   started_at=_now(started), python=platform.python_version(), argv=list(sys.argv[1:]),
                   shards=[shard] if shard else [])


def finish_run(config: pytest.Config, items: list[ItemResult], started: float | None = None) -> None:
    """`items`: every item's result (an xdist worker's was read on arrival by the collector);
    `started`: when the session began (`time.time()`)."""
    meta = run_meta(config, started)
    meta.finished_at = _now()
    report = build_report(items, meta)
    out_dir = report_dir(config)
    baseline = baseline_path(config, out_dir)
    report.regressions_vs_baseline = compare_with_baseline(report, baseline)
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    try:
        from replaylab.report import write_reports

        written = write_reports(report, out_dir)
    except OSError as exc:
        _report_failure(config, terminal, f"replaylab: cannot write reports to {out_dir}: {exc.strerror or exc}")
        return
    if config.getoption("replaylab_bless"):
        try:
            bless(report, baseline)
        except OSError as exc:  # a user's bad --replaylab-baseline path: a message, not a traceback
            _report_failure(config, terminal, f"replaylab: cannot write the baseline file {baseline}: "
                                              f"{exc.strerror or exc}")
            return
    if terminal:
        t = report.totals
        terminal.write_sep("-", "replaylab")
        terminal.write_line(f"replaylab: {t.items} items: {t.passed} passed, {t.failed} failed, {t.error} error, "
                            f"{t.skipped} not exercised; {t.blocking_defects} unexpected blocking defects")
        for line in report.regressions_vs_baseline:
            terminal.write_line(f"replaylab: regression vs baseline: {line}", yellow=True)
        if config.getoption("replaylab_bless"):
            terminal.write_line(f"replaylab: blessed baseline written to {baseline}")
        terminal.write_line(f"replaylab: reports: {', '.join(str(p) for p in written.values())}")


def _report_failure(config: pytest.Config, terminal: Any, message: str) -> None:
    """Say why the reports could not be written; the plugin then makes the exit status 4."""
    if terminal:
        terminal.write_line(message, red=True)
    else:
        print(message, file=sys.stderr)
    config._replaylab_report_failed = True  # type: ignore[attr-defined]


def baseline_path(config: pytest.Config, out_dir: Path) -> Path:
    value = config.getoption("replaylab_baseline") or config.getini("replaylab_baseline")
    if value:
        path = Path(value)
        return path if path.is_absolute() else Path(config.invocation_params.dir) / path
    return out_dir.parent / "replaylab-baseline.json"


def _now(when: float | None = None) -> str:
    moment = _dt.datetime.now(_dt.timezone.utc) if when is None else _dt.datetime.fromtimestamp(when, _dt.timezone.utc)
    return moment.isoformat(timespec="seconds")
