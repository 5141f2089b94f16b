"""End of a pytest run: assemble the `RunReport`, compare with the blessed baseline, write reports.

Runs on the controller only (xdist workers send each item's result as its scrubbed report JSON on
its setup report; the plugin's collector reads it as it arrives).
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replaylab import __version__
from replaylab.qa.results import ItemResult, RunMeta, RunReport


def build_report(items: list[ItemResult], meta: RunMeta) -> RunReport:
    from replaylab.report.merge import compute_totals, sort_items

    items = sort_items(items)
    hashes = {item.recording: item.recording_sha256 for item in items if item.recording_sha256}
    hashes.update({item.recording.removesuffix(".jsonl") + ".cassette.yaml": item.cassette_sha256
                   for item in items if item.cassette_sha256})
    return RunReport(meta=meta, totals=compute_totals(items), items=items, cassette_hashes=dict(sorted(hashes.items())))


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


def git_sha() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def compare_with_baseline(report: RunReport, baseline_path: Path) -> list[str]:
    """Items that passed in the blessed baseline and do not pass now (new failures / errors)."""
    if not baseline_path.is_file():
        return []
    try:
        blessed = json.loads(baseline_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"baseline file {baseline_path} is unreadable; bless again with --replaylab-bless"]
    before = blessed.get("items", {})
    out = []
    for item in report.items:
        old = before.get(item.id)
        if old and old.get("outcome") == "passed" and item.outcome in ("failed", "error"):
            out.append(f"{item.id}: passed in the baseline, {item.outcome} now ({item.reason})")
        elif old and set(old.get("defects", [])) != {d.code.value for d in item.defects}:
            new = sorted({d.code.value for d in item.defects} - set(old.get("defects", [])))
            if new:
                out.append(f"{item.id}: new defect codes since the baseline: {', '.join(new)}")
    return out


def bless(report: RunReport, baseline_path: Path) -> None:
    data = {"schema_version": 1, "replaylab_version": __version__, "git_sha": report.meta.git_sha,
            "items": {item.id: {"outcome": item.outcome, "defects": sorted({d.code.value for d in item.defects})}
                      for item in report.items}}
    baseline_path.parent.mkdir(parents=True, exist_ok=True)
    baseline_path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def finish_run(config: pytest.Config, items: list[ItemResult], started: float | None = None) -> None:
    """`items`: every item's result (an xdist worker's was read on arrival by the collector);
    `started`: when the session began (`time.time()`)."""
    from replaylab.pytest_plugin import report_dir

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
