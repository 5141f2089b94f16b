"""End of a pytest run: assemble the `RunReport`, compare with the blessed baseline, write reports.

Runs on the controller only (xdist workers send each item's result as its scrubbed report JSON on
its setup report; the plugin's collector reads it as it arrives).
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replaylab import __version__
from replaylab.printable import printable
from replaylab.pytest_plugin import options
from replaylab.report.agent_line import agent_verification_line, agents_line
from replaylab.report.causes import cause_line
from replaylab.report.counts import terminal_summary
from replaylab.report.run import (
    NOTHING_EXERCISED_EXIT,
    bless,
    build_report,
    compare_with_baseline,
    git_sha,
    nothing_exercised,
)
from replaylab.results import ItemResult, RunMeta
from replaylab.scrub import scrub_text


def run_meta(config: pytest.Config, started: float | None = None) -> RunMeta:
    """`started`: when the run began (`time.time()`); now when not given."""
    shard = options.shard_text(config)
    return RunMeta(
        replaylab_version=__version__,
        git_sha=git_sha(),
        model=options.model(config) or "per-suite",
        mode=options.mode(config),
        started_at=_now(started),
        python=platform.python_version(),
        argv=list(sys.argv[1:]),
        shards=[shard] if shard else [],
    )


#: pytest's exit statuses after which no report is written: the run was cut short (interrupted,
#: a collection error) or never started (a usage error such as a path that does not exist), so
#: its report would be empty or partial and would replace the last good one
NO_REPORT_STATUSES = (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR)


def writes_reports(session: pytest.Session) -> bool:
    """Whether the session's end writes reports. `--sw` (stepwise) stops a run at its first
    failure as an interruption (exit status 2), but it is a stop the user asked for, as `-x` is: the
    items run until then are reported, so the failure it stopped at has its story in the HTML."""
    if session.exitstatus == pytest.ExitCode.INTERRUPTED and stopped_by_stepwise(session):
        return True
    return session.exitstatus not in NO_REPORT_STATUSES


def stopped_by_stepwise(session: pytest.Session) -> bool:
    """Stepwise stops the loop by setting `shouldstop` after a failure; Ctrl-C never sets it."""
    return bool(session.config.getoption("stepwise", False)) and bool(session.shouldstop)


def finish_run(config: pytest.Config, items: list[ItemResult], started: float | None = None) -> bool | int:
    """Write the reports (and the baseline under `--replaylab-bless`); False when they could
    not be written, which the plugin turns into a non-zero exit status, and
    `NOTHING_EXERCISED_EXIT` when the run exercised nothing and the user did not allow it.
    `items`: every item's result (an xdist worker's was read on arrival by the collector);
    `started`: when the session began (`time.time()`)."""
    meta = run_meta(config, started)
    meta.finished_at = _now()
    rewritten = _rewritten_at_end(config, items)
    report = build_report(items, meta)
    out_dir = options.report_dir(config)
    baseline = options.baseline_path(config)
    comparison = compare_with_baseline(report, baseline, _in_shard(config))
    # a baseline that cannot be used, or that matched nothing, is said in the report too, where
    # the comparison would be
    said = [line for line in (comparison.problem, comparison.warning) if line]
    report.regressions_vs_baseline = said + comparison.regressions  # first: no cap cuts them off
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    for line in said:
        _say_failure(terminal, printable(f"replaylab: WARNING: {line}"))
    try:
        from replaylab.report import write_reports

        written = write_reports(report, out_dir)
    except OSError as exc:
        _say_failure(terminal, printable(f"replaylab: cannot write reports to {out_dir}: {exc.strerror or exc}"))
        return False
    if options.bless(config):
        try:
            bless(report, baseline)
        except OSError as exc:  # a user's bad --replaylab-baseline path: a message, not a traceback
            message = f"replaylab: cannot write the baseline file {baseline}: {exc.strerror or exc}"
            _say_failure(terminal, printable(message))
            return False
    if terminal:
        t = report.totals
        terminal.write_sep("-", "replaylab")
        terminal.write_line(terminal_summary(t))
        terminal.write_line(f"replaylab: {agent_verification_line(t)}")
        terminal.write_line(f"replaylab: {agents_line(t)}")
        for line in _unverified(config, t):
            terminal.write_line(printable(f"replaylab: {line}"), yellow=True)
        for group in t.causes:  # one line per cause, with its count and its knob
            line = printable(scrub_text(f"replaylab: {cause_line(group)}"))
            terminal.write_line(line, red=group.outcome == "uncompacted", yellow=group.outcome == "skipped")
        for line in comparison.regressions:
            terminal.write_line(printable(scrub_text(f"replaylab: regression vs baseline: {line}")), yellow=True)
        if options.bless(config):
            terminal.write_line(printable(scrub_text(f"replaylab: blessed baseline written to {baseline}")))
        terminal.write_line(printable(scrub_text(f"replaylab: reports: {', '.join(str(p) for p in written.values())}")))
    if rewritten:
        from replaylab.checks.run_files import file_names

        changed = f"{len(rewritten)} session file(s) changed during the run: {file_names(rewritten)}"
        _say_failure(terminal, printable(f"replaylab: TRANSCRIPT_REWRITTEN: {changed}"))
        return int(pytest.ExitCode.TESTS_FAILED)
    if nothing_exercised(report.totals) and not options.allow_nothing_exercised(config):
        _say_failure(
            terminal,
            f"replaylab: NOTHING EXERCISED: none of {report.totals.items} items was compacted and compared; "
            f"exit status {NOTHING_EXERCISED_EXIT} (allow it with --replaylab-allow-nothing-exercised "
            "or ini replaylab_allow_nothing_exercised)",
        )
        return NOTHING_EXERCISED_EXIT
    return True


def _rewritten_at_end(config: pytest.Config, items: list[ItemResult]) -> list[Path]:
    """The session files changed since the run started (`checks.run_files`); an item whose files
    changed after its own check gets its TRANSCRIPT_REWRITTEN here (and fails), so the reports say
    what the exit status says."""
    from replaylab.defects import Code, Defect
    from replaylab.pytest_plugin.run_files import watched
    from replaylab.qa.sources import display_path

    files = watched(config)
    if files is None:
        return []
    changed, unseen = files.at_end()
    late = {display_path(r) for r in files.recordings_of(unseen)}
    for item in items:
        if item.recording not in late or any(d.code == Code.TRANSCRIPT_REWRITTEN for d in item.defects):
            continue
        defect = Defect.of(
            Code.TRANSCRIPT_REWRITTEN,
            "the recording or a file of its session changed after its item ran, before the run ended",
            expected=item.recording_sha256,
            actual="changed",
        )
        item.defects.append(defect)
        if item.outcome in ("passed", "skipped"):
            item.outcome, item.reason = "failed", defect.message
    return changed


def _in_shard(config: pytest.Config) -> Callable[[str], bool] | None:
    """Whether a blessed item id belongs to this run's shard (None: every one does), by the
    split `collect.keep_shard` makes."""
    shard = options.shard(config)
    if shard is None:
        return None
    from replaylab.pytest_plugin.collect import in_shard

    return lambda item_id: in_shard(item_id, shard)


def _unverified(config: pytest.Config, totals: Any) -> list[str]:
    """Why the windows of an agent the items ran under were not verified (its oracle is not
    installed: the install command), for each such agent."""
    from replaylab.checks.agent_window import unavailable_reason
    from replaylab.upstream.profiles import UnknownProfile, profile_named

    setting = options.verify_with_pi(config)
    out = []
    for name in totals.agents:
        try:
            profile = profile_named(name)
        except UnknownProfile:
            continue
        reason = unavailable_reason(profile, setting) if setting != "off" else None
        if reason is not None:
            out.append(f"windows not verified against {profile.label}: {reason}")
    return out


def _say_failure(terminal: Any, message: str) -> None:
    """A line the run must not end without: why the reports could not be written (the plugin
    then makes the exit status 4), a baseline that compared nothing, a run that exercised nothing."""

    message = scrub_text(message)
    if terminal:
        terminal.ensure_newline()  # not at the end of the progress dots
        terminal.write_line(message, red=True)
    else:
        print(message, file=sys.stderr)


def _now(when: float | None = None) -> str:
    """ISO 8601 UTC of `when` (seconds since the epoch; now when None). A clock the calendar
    cannot hold (before year 1, after 9999, not a number) gives "" rather than stopping the run's
    reports."""
    try:
        moment = _dt.datetime.now(_dt.UTC) if when is None else _dt.datetime.fromtimestamp(when, _dt.UTC)
    except (OverflowError, OSError, ValueError):
        return ""
    return moment.isoformat(timespec="seconds")
