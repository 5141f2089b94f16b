"""A text stream that scrubs what is written to it: the command line's stdout and stderr.

Every command prints names, paths, diagnostics and excerpts that can hold secrets (a recording
named after a token, a tool's output in `compact --json`, an importer's note). Scrubbing at the
stream, rather than at each `print`, covers every line a command writes, including the ones
written later by code that never heard of scrubbing.

Text is scrubbed a block of whole lines at a time: a secret split over two `write` calls (print
writes the text, then the newline) is seen whole, and so is a PEM block or a wrapped key written
line by line, which is held back until its block ends or the stream is flushed.
"""

from __future__ import annotations

import io
import os
from typing import Any, TextIO

from replaylab.scrub import Scrubber

#: text held back at most before it is written anyway (a block that never ends)
MAX_PENDING = 1 << 20
#: a line holding one of these opens a block the scrubber must see whole
_BLOCK_OPENERS = ("-----BEGIN", "---- BEGIN", "PuTTY-User-Key-File")


class ScrubbingStream(io.TextIOBase):
    """Writes to `target` what is written to it, scrubbed by `scrubber`."""

    def __init__(self, target: TextIO, scrubber: Scrubber) -> None:
        super().__init__()
        self.target = target
        self.scrubber = scrubber
        self._pending = ""
        #: the reader went away (`cmd | head -1`): what is written from then on goes nowhere
        self.reader_gone = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.reader_gone:
            return len(text)
        self._pending += text
        cut = self._pending.rfind("\n") + 1
        if cut and (len(self._pending) > MAX_PENDING or not self._open_block(self._pending[:cut])):
            self._emit(self._pending[:cut])
            self._pending = self._pending[cut:]
        return len(text)

    def flush(self) -> None:
        if self.reader_gone:
            return
        if self._pending:
            self._emit(self._pending)
            self._pending = ""
        try:
            self.target.flush()
        except BrokenPipeError:
            self._lost_reader()
            raise

    def close(self) -> None:  # the target is not ours to close
        self.flush()

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":  # bytes written there would pass unscrubbed
            raise AttributeError(name)
        return getattr(self.target, name)

    def _emit(self, text: str) -> None:
        try:
            self.target.write(self.scrubber.text(text))
        except BrokenPipeError:
            self._lost_reader()
            raise

    def _lost_reader(self) -> None:
        """Once the pipe's reader is gone, nothing more is written, and the target's descriptor is
        pointed at /dev/null: the interpreter's own last flush of it would fail again."""
        self.reader_gone = True
        self._pending = ""
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.target.fileno())
            os.close(devnull)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # a target without a descriptor of its own (a test's buffer) is never flushed at exit

    def _open_block(self, text: str) -> bool:
        """Whether the last block opened in `text` has not ended yet (a key being written)."""
        opened = max(text.rfind(marker) for marker in _BLOCK_OPENERS)
        if opened < 0:
            return False
        tail = text[opened:]
        return "END" not in tail and "Private-MAC" not in tail
