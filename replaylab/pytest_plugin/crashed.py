"""The result of an item whose run raised instead of returning one.

Why: the reports are written from the results the plugin holds, and pytest counts every item it
ran. An exception escaping the pipeline (a bug, a tool pack's code raising where replaylab calls
it) must not drop the item from the reports while pytest counts it: the item gets an `error`
result naming the exception and where it was raised, and every report lists it.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

from replaylab.printable import printable
from replaylab.pytest_plugin.names import item_id_parts
from replaylab.results import ItemResult, Outcome
from replaylab.scrub import scrub_text

#: the most of an exception's message a reason keeps
MESSAGE_CHARS = 300
#: the line xdist puts first in a worker's report ("[gw0] linux -- Python 3.11.7 /usr/bin/python")
_WORKER_HEADER = re.compile(r"^\[gw\d+\] ")


def crashed_result(
    node_id: str,
    *,
    suite: str,
    scenario: str,
    recording: str,
    error: BaseException,
    during: str = "while it ran",
    outcome: Outcome = "error",
) -> ItemResult:
    """An `error` result for an item whose run raised `error` (scrubbed, on one line)."""
    return ItemResult(
        id=node_id,
        suite=suite,
        scenario=scenario,
        recording=recording,
        outcome=outcome,
        reason=crash_reason(error, during),
    )


def crash_reason(error: BaseException, during: str = "while it ran") -> str:
    message = str(error)
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 1] + "…"
    where = _raised_at(error)
    text = f"replaylab crashed {during}: {type(error).__name__}: {message}" + (f" (raised at {where})" if where else "")
    return printable(scrub_text(text))


def lost_result(
    node_id: str, outcome: Outcome, longrepr: str, *, why: str = "no replaylab result arrived"
) -> ItemResult:
    """A result for an item pytest reported but whose result never arrived (its xdist worker
    crashed, or its run stopped before it made one), or that pytest failed after replaylab
    judged it (`why` says which): what pytest said about it."""
    suite_file, recording, scenario = item_id_parts(node_id) or (node_id, "", "")
    lines = [line.strip() for line in longrepr.splitlines() if line.strip() and not _WORKER_HEADER.match(line)]
    first = lines[0] if lines else "no result was made"
    if len(first) > MESSAGE_CHARS:
        first = first[: MESSAGE_CHARS - 1] + "…"
    return ItemResult(
        id=node_id,
        suite=suite_file,
        scenario=scenario,
        recording=recording,
        outcome=outcome,
        reason=printable(scrub_text(f"{why}: {first}")),
    )


def _raised_at(error: BaseException) -> str:
    """`file:line in function` of the frame that raised (paths relative to the working directory)."""
    frames = traceback.extract_tb(error.__traceback__) if error.__traceback__ else []
    if not frames:
        return ""
    frame = frames[-1]
    try:
        name = str(Path(frame.filename).resolve().relative_to(Path.cwd()))
    except (ValueError, OSError, RuntimeError):
        name = frame.filename
    return f"{name}:{frame.lineno} in {frame.name}"
