"""Progress of one long pipeline run, as lines handed to a sink the caller chooses (the pytest
plugin's terminal, the CLI's stderr).

The pipeline reports every phase and every replayed turn; this value decides what becomes a
line: nothing until the run has taken `LONG_ITEM_S` (a short item, the common case, prints
nothing extra), then one line per phase and a turn count at most every `TURN_LINE_EVERY_S`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: a run still busy after this long is worth lines on the terminal: an item under it finishes
#: before anyone wonders whether it hangs, and most items take milliseconds
LONG_ITEM_S = 2.0
#: turn counts of one phase at most this often: enough to see it move, few enough to read
TURN_LINE_EVERY_S = 5.0


class Progress:
    """Phase and turn reports of one run, turned into lines for `sink` once the run runs long.

    `after_s`: how long the run must take before any line (`LONG_ITEM_S`; 0 prints every phase).
    `clock`: seconds, monotonic (a test's own clock, to check the gating without waiting)."""

    def __init__(
        self,
        sink: Callable[[str], None],
        *,
        name: str = "",
        after_s: float = LONG_ITEM_S,
        every_s: float = TURN_LINE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sink = sink
        self.prefix = f"replaylab: {name}  " if name else "replaylab: "
        self.after_s = after_s
        self.every_s = every_s
        self.clock = clock
        self.started = clock()
        self._last_turn_line: float | None = None
        self.lines = 0

    def long(self) -> bool:
        return self.clock() - self.started >= self.after_s

    def phase(self, text: str) -> None:
        """A phase begins (`compacting 100,000 entries`): a line when the run is long already."""
        self._last_turn_line = None  # the next phase's first count is shown at once
        if self.long():
            self._write(text)

    def turns(self, label: str, done: int, total: int, unit: str = "turns") -> None:
        """`done` of `total` turns of `label` replayed (or of another `unit`): a line now and then
        on a long run, and always the last one (the phase's end)."""
        if not self.long():
            return
        now = self.clock()
        if done < total and self._last_turn_line is not None and now - self._last_turn_line < self.every_s:
            return
        self._last_turn_line = now
        self._write(f"{label} {done:,}/{total:,} {unit}")

    def _write(self, text: str) -> None:
        self.lines += 1
        self.sink(self.prefix + text)


def report_phase(progress: Progress | None, text: str) -> None:
    if progress is not None:
        progress.phase(text)


def report_turns(progress: Progress | None, label: str, done: int, total: int, unit: str = "turns") -> None:
    if progress is not None:
        progress.turns(label, done, total, unit)


def audit_progress(progress: Progress | None) -> Callable[[int, int], None] | None:
    """What a check tells of the recording's compactions it audits, as this run's lines."""
    if progress is None:
        return None

    def audited(done: int, total: int) -> None:
        if done == 1:
            progress.phase(f"auditing the recording's {total:,} compactions")
        progress.turns("audited", done, total, "recorded compactions")

    return audited
