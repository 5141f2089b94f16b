"""Transcript lines → JSON objects with where each came from, never dropping a line silently.

pi drops a line that does not parse. Here each such line is reported, and read as pi reads it:
bad UTF-8 is replaced (node decodes with U+FFFD too), a truncated last line (an interrupted write)
is told apart from a malformed one, and a line holding several objects glued together without a
newline is dropped, as pi drops it, with a diagnostic naming every object lost — replaylab tests
the context the agent sees, and that line is not in it. `recover_glued_lines` reads each glued
object instead (the diagnostic then says the result differs from pi). Each object keeps its line
number and byte span, which is what `TranscriptIndex.load_entries` reads back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from replaylab.diagnostics import Diagnostic
from replaylab.transcript.diagnose import diagnostic

#: read buffer for the streaming pass (lines are yielded one by one from it)
READ_BUFFER = 1 << 20
UTF8_BOM = b"\xef\xbb\xbf"

#: One parsed object and where it came from: (line number, object, byte offset of the line, length
#: of the line, sub, patch). sub -1: the whole line; k: the k-th object recovered from the line.
#: patch (v1 only): what the migration added, re-applied when the line is read again. A plain
#: tuple: one is made per line, and a class instance would cost more.
Item = tuple[int, dict[str, Any], int, int, int, "dict[str, Any] | None"]


class LineReader:
    """Yields the objects of raw lines (with their newline, as iterating a binary file gives
    them) and keeps what was wrong with the lines in `diagnostics`."""

    def __init__(self, name: Path, *, recover_glued_lines: bool = False):
        self.name = name
        self.recover_glued_lines = recover_glued_lines
        self.diagnostics: list[Diagnostic] = []
        self.newlines = 0  # set when `read` has read every line

    def read(self, lines: Iterable[bytes]) -> Iterator[Item]:
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        pending_last: tuple[int, int, bytes] | None = None
        lineno = offset = 0
        raw = b"\n"
        for raw in lines:
            lineno += 1
            offset += len(raw)
            if pending_last is not None:  # the previous line failed and was not the last one
                yield from self._recover(*pending_last, is_last=False)
                pending_last = None
            try:
                obj = loads(raw)  # JSON whitespace covers the trailing "\r\n" the split would strip
            except decode_error:
                if not raw.strip():
                    continue
                pending_last = (lineno, offset - len(raw), raw)
                continue
            if type(obj) is not dict:
                self.diagnostics.append(
                    diagnostic(
                        self.name, lineno, "not-an-object", f"holds a JSON {type(obj).__name__}, expected an object"
                    )
                )
                continue
            yield lineno, obj, offset - len(raw), len(raw), -1, None
        if pending_last is not None:
            yield from self._recover(*pending_last, is_last=True)
        self.newlines = lineno - (not raw.endswith(b"\n"))  # the last line may lack its newline

    def _recover(self, lineno: int, offset: int, raw: bytes, *, is_last: bool) -> Iterator[Item]:
        """A line orjson rejects: bad UTF-8, glued entries, or a truncated / broken object.
        `is_last`: no non-blank line follows (the split-based rule: the final line, or the one
        before a final empty remainder)."""
        line = strip_line(raw)
        if not line.strip():
            return
        if lineno == 1 and raw.startswith(UTF8_BOM):  # invisible in an editor; pi's JSON.parse fails on it
            self.diagnostics.append(
                diagnostic(
                    self.name,
                    1,
                    "utf8-bom",
                    "starts with a UTF-8 byte-order mark (bytes EF BB BF), which pi's "
                    "JSON.parse rejects; replaylab read the line without it (save the file as UTF-8 without BOM)",
                )
            )
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.diagnostics.append(
                diagnostic(
                    self.name,
                    lineno,
                    "invalid-utf8",
                    f"is not valid UTF-8 (byte {exc.start}); undecodable bytes were replaced with U+FFFD",
                )
            )
            text = line.decode("utf-8", errors="replace")
        objects, error, cut_short = decode_concatenated(text)
        if error is None and len(objects) == 1:
            if isinstance(objects[0], dict):
                yield lineno, objects[0], offset, len(raw), 0, None
            else:
                self.diagnostics.append(
                    diagnostic(
                        self.name,
                        lineno,
                        "not-an-object",
                        f"holds a JSON {type(objects[0]).__name__}, expected an object",
                    )
                )
            return
        if error is None and len(objects) > 1:
            kinds = ", ".join(_described(o) for o in objects)
            if not self.recover_glued_lines:
                self.diagnostics.append(
                    diagnostic(
                        self.name,
                        lineno,
                        "glued-lines",
                        f"holds {len(objects)} JSON objects glued together without a newline ({kinds}); "
                        "pi drops the whole line, so replaylab drops it too: these entries are not in the context "
                        "the agent sees (recover_glued_lines reads each one, differing from pi)",
                    )
                )
                return
            self.diagnostics.append(
                diagnostic(
                    self.name,
                    lineno,
                    "glued-lines-recovered",
                    f"holds {len(objects)} JSON objects glued together without a newline ({kinds}); "
                    "replaylab recovered each object (recover_glued_lines), so its leaf and window differ from pi's, "
                    "which drops the whole line",
                )
            )
            for sub, obj in enumerate(o for o in objects if isinstance(o, dict)):
                yield lineno, obj, offset, len(raw), sub, None
            return
        where = "last line is truncated" if is_last and cut_short else "line does not parse as JSON"
        self.diagnostics.append(
            diagnostic(self.name, lineno, "invalid-json", f"{where}: {error}; the line was skipped (pi skips it too)")
        )


def _described(obj: Any) -> str:
    """One glued object as a diagnostic names it: its entry type and id."""
    if not isinstance(obj, dict):
        return f"a JSON {type(obj).__name__}"
    kind = obj.get("type", "?")
    role = obj.get("message", {}).get("role") if isinstance(obj.get("message"), dict) else None
    label = f"{kind} ({role})" if role else str(kind)
    return f"{label} {obj['id']!r}" if isinstance(obj.get("id"), str) else f"{label} without an id"


def strip_line(raw: bytes) -> bytes:
    """The line as `bytes.split(b"\\n")` gives it, with trailing CRs and a leading UTF-8
    byte-order mark removed (orjson rejects the mark, so such a line always comes through here)."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    return raw.rstrip(b"\r").removeprefix(UTF8_BOM)


def recovered_objects(line: bytes) -> list[dict[str, Any]]:
    """The dict objects `LineReader` recovers from a line orjson rejects (to read one of them again)."""
    text = line.decode("utf-8", errors="replace")
    objects, _, _ = decode_concatenated(text)
    return [o for o in objects if isinstance(o, dict)]


def decode_concatenated(text: str) -> tuple[list[Any], str | None, bool]:
    """The JSON values on one line, the error that stopped decoding (None: all decoded), and
    whether that error is the line ending early (a truncated write, not a malformed value)."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    objects: list[Any] = []
    pos, end = 0, len(text)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            cut_short = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
            return objects, f"{exc.msg.removesuffix(' at')} at column {exc.colno}", cut_short
        except ValueError as exc:  # a NaN / Infinity literal
            return objects, str(exc), False
        except RecursionError:  # deeper than the stdlib decoder's stack (orjson stops at 1024 levels)
            return objects, "nested too deeply for a JSON parser (about 1000 levels of arrays / objects or more)", False
        objects.append(obj)
    return objects, None, False


def _reject_constant(name: str) -> Any:
    """`NaN` / `Infinity` are not JSON: orjson and pi's JSON.parse reject them, so must the fallback."""
    raise ValueError(f"{name} is not a JSON value")
