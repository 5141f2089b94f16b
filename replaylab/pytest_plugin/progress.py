"""Progress lines of a long item on pytest's terminal (`replaylab.qa.progress` decides when).

Shown under `-v`: in pytest's default output the items' outcomes share one line of dots with a
percentage at its end, and a line written in the middle of it would break that line. Under `-v`
each item has its own line; a progress line goes through the terminal reporter's `write_line`
(which ends the line in progress first, and pytest writes the item's name again before its
outcome), with output capturing suspended meanwhile, as pytest's own live logging does.

Under pytest-xdist the item runs in a worker whose terminal output never reaches the
controller: xdist forwards only reports and warnings, at the end of each phase. So a worker
writes its lines to its own stderr, which xdist leaves to the terminal it was started from,
capturing suspended the same way; each line names its worker and item (workers' lines
interleave) and begins with the newline, since the controller's line may still be open.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, nullcontext

import pytest

from replaylab.printable import printable
from replaylab.qa.progress import LONG_ITEM_S, Progress

OPTION = "--replaylab-progress-after"


def add_option(parser: pytest.Parser) -> None:
    parser.getgroup("replaylab").addoption(
        OPTION,
        metavar="SECONDS",
        type=float,
        default=LONG_ITEM_S,
        help=f"under -v, print the phases of an item still running after SECONDS (default {LONG_ITEM_S:g}; "
        "0: every item)",
    )


def item_progress(item: pytest.Item) -> Progress | None:
    """The item's progress reporter, or None when its lines could not be shown (no `-v`)."""
    config = item.config
    if config.get_verbosity() < 1:
        return None
    after = config.getoption(OPTION)
    name = f"{item.parent.name}::{item.name}" if item.parent is not None else item.name
    worker = hasattr(config, "workerinput")
    sink = _stderr_sink(config) if worker else _terminal_sink(config)
    if sink is None:
        return None
    return Progress(sink, name=name, after_s=max(0.0, after))


def _uncaptured(config: pytest.Config) -> AbstractContextManager[object]:
    capman = config.pluginmanager.get_plugin("capturemanager")
    return capman.global_and_fixture_disabled() if capman is not None else nullcontext()


def _terminal_sink(config: pytest.Config):
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is None:
        return None

    def write(line: str) -> None:
        with _uncaptured(config):
            terminal.write_line(printable(line))

    return write


def _stderr_sink(config: pytest.Config):
    worker = config.workerinput.get("workerid", "worker") if hasattr(config, "workerinput") else "worker"

    def write(line: str) -> None:
        with _uncaptured(config):
            # the newline first: the controller's line for the item ("<node id> ") is still open
            sys.stderr.write(f"\n[{worker}] {printable(line)}")
            sys.stderr.flush()

    return write
