"""Diagnostics: every problem replaylab finds in user input, with file, line, entry id and field.

Why one type for all inputs (transcripts, cassettes, suites, tool packs): the CLI, the pytest
plugin and the reports print them the same way, and a user always gets `file:line` first so
an editor can jump there.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from replaylab.errors import ReplaylabError
from replaylab.printable import printable


class Diagnostic(BaseModel):
    severity: Literal["error", "warning"] = "error"
    code: str
    file: str
    line: int | None = None
    entry_id: str | None = None
    field: str | None = None
    message: str

    def __str__(self) -> str:
        """One line whatever the file, id or message hold: a line break or control character in
        them is escaped (`replaylab.printable`), so no input can print a line of its own."""
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        bits = [f"{where}: {self.severity}[{self.code}]"]
        if self.entry_id:
            bits.append(f"entry {self.entry_id}")
        if self.field:
            bits.append(f"field {self.field!r}")
        return printable(" ".join(bits) + f": {self.message}")


class InputError(ReplaylabError):
    """User input that cannot be used; carries the diagnostics that say why (never a traceback)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]
