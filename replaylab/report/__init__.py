"""Reports of a replaylab run: `replaylab.html`, `replaylab.json`, `replaylab.md` in one directory.

`write_reports` is what the pytest plugin (and `replaylab report merge|render`) calls at the end
of a run. Each renderer scrubs what it writes. All three files are written to temporary files
first (unpredictable names, opened exclusively and never through a link: `atomic`) and renamed
over the old ones only once all three are on disk, so a failed write (a full disk) leaves the
previous complete set in place, never a half-written file or a mixed set; a SIGTERM or SIGINT
meanwhile removes the temporaries before it ends the run.
Renderers are imported lazily: importing this package is cheap for the plugin at load time (no
jinja2 until a report is written).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replaylab.errors import ReplaylabError
from replaylab.report.atomic import remove, removed_on_signal, write_temporary
from replaylab.results import RunReport

REPORT_FILES = {"html": "replaylab.html", "json": "replaylab.json", "md": "replaylab.md"}

__all__ = [
    "REPORT_FILES",
    "ReportWriteError",
    "check_report_dir",
    "write_reports",
    "render_html",
    "render_markdown",
    "dump_json",
    "load_json",
    "merge_reports",
]

_LAZY = {
    "render_html": "html",
    "render_markdown": "markdown",
    "dump_json": "jsonio",
    "load_json": "jsonio",
    "merge_reports": "merge",
}


def __getattr__(name: str) -> Any:
    """`from replaylab.report import render_html` without importing jinja2 at package import."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"replaylab.report.{_LAZY[name]}"), name)
    raise AttributeError(name)


class ReportWriteError(ReplaylabError, OSError):
    """The report directory cannot be created or written (read-only, full, a file, ...)."""

    def __init__(self, directory: Path, cause: OSError):
        super().__init__(cause.errno or errno.EIO, cause.strerror or str(cause), str(directory))
        self.directory = directory
        self.cause = cause

    def __str__(self) -> str:
        where = (
            f" ({self.cause.filename})"
            if self.cause.filename and str(self.cause.filename) != str(self.directory)
            else ""
        )
        return f"cannot write the replaylab report to directory {self.directory}: {self.strerror}{where}"


def write_reports(report: RunReport, out_dir: Path) -> dict[str, Path]:
    """Write replaylab.html / .json / .md into `out_dir` (created if needed); returns their paths.

    Why a writer thread: at the end of a pytest run nothing else runs, and writing and syncing the
    large JSON report of a nightly suite releases the GIL, so it goes to disk while the
    HTML renders instead of after it.

    Raises `ReportWriteError` (an `OSError`) naming the directory when it cannot be written; the
    old reports are then all still there.
    """
    from replaylab.report.html import render_html
    from replaylab.report.jsonio import dump_json
    from replaylab.report.markdown import render_markdown

    out_dir = Path(out_dir)
    _ensure_dir(out_dir)
    renderers = {
        "json": dump_json,
        "html": lambda r: render_html(r).encode("utf-8"),
        "md": lambda r: render_markdown(r).encode("utf-8"),
    }  # the biggest file first: longest to write
    pending: set[Path] = set()  # every temporary that may exist: removed on a failure or a signal
    with removed_on_signal(pending):
        try:
            temporaries = _write_all(report, out_dir, renderers, pending)
            paths = {}
            for key, name in REPORT_FILES.items():
                try:
                    os.replace(temporaries[key], out_dir / name)
                except OSError as exc:
                    raise ReportWriteError(out_dir, exc) from None
                pending.discard(temporaries[key])
                paths[key] = out_dir / name
        finally:
            for path in list(pending):
                remove(path)
    return paths


def _write_all(
    report: RunReport, out_dir: Path, renderers: dict[str, Callable[[RunReport], bytes]], pending: set[Path]
) -> dict[str, Path]:
    """Each report rendered here and written to its temporary by the writer thread (see
    `write_reports`); {key: temporary}."""
    from concurrent.futures import Future, ThreadPoolExecutor

    futures: dict[str, Future[Path]] = {}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="replaylab-report") as writer:
        for key, render in renderers.items():
            futures[key] = writer.submit(_write_temporary, out_dir / REPORT_FILES[key], render(report), pending)
    return {key: futures[key].result() for key in REPORT_FILES}


def check_report_dir(out_dir: Path) -> None:
    """Fail fast, before a long run, when `out_dir` cannot take the reports: create it, then
    write, fsync and drop one probe byte (an anonymous temporary file). Why a probe and not
    `os.access`: as root, `access()` says yes for directories where creating a file fails
    (/proc, /sys), and a full disk only shows on a write. Raises `ReportWriteError`."""
    out_dir = Path(out_dir)
    _ensure_dir(out_dir)
    try:
        with tempfile.TemporaryFile(dir=out_dir, prefix=".replaylab-probe-") as probe:
            probe.write(b"\n")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:  # the probe's random name would only be noise in the message
        raise ReportWriteError(out_dir, OSError(exc.errno, exc.strerror)) from None


def _ensure_dir(out_dir: Path) -> None:
    try:
        if out_dir.exists() and not out_dir.is_dir():  # mkdir would say "File exists"
            raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a directory", str(out_dir))
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportWriteError(out_dir, exc) from None


def _write_temporary(path: Path, data: bytes, pending: set[Path]) -> Path:
    """`data` in an unpredictable temporary next to `path`, synced (`atomic.write_temporary`)."""
    try:
        return write_temporary(path, data, pending)
    except OSError as exc:
        raise ReportWriteError(path.parent, exc) from None
