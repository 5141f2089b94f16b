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
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

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
        decoded = decode_concatenated(text)
        objects, error = decoded.objects, decoded.error
        if decoded.surrogates:
            self.diagnostics.append(
                diagnostic(
                    self.name,
                    lineno,
                    "lone-surrogate",
                    f"holds {decoded.surrogates} lone surrogate escape(s) (\\uD800-\\uDFFF without its pair), which "
                    "is not Unicode text; replaylab read each as U+FFFD (pi's JSON.parse keeps them)",
                    field=decoded.surrogate_field,
                )
            )
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
        if not decoded.pi_skips:
            where, pi = "line cannot be read as JSON", "pi would read it"
        else:
            where = "last line is truncated" if is_last and decoded.cut_short else "line does not parse as JSON"
            pi = "pi skips it too"
        self.diagnostics.append(
            diagnostic(self.name, lineno, "invalid-json", f"{where}: {error}; the line was skipped ({pi})")
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
    return [o for o in decode_concatenated(text).objects if isinstance(o, dict)]


class Decoded(NamedTuple):
    """What `decode_concatenated` read of one line."""

    objects: list[Any]
    #: the error that stopped decoding (None: every value decoded)
    error: str | None = None
    #: the error is the line ending early (a truncated write, not a malformed value)
    cut_short: bool = False
    #: pi's JSON.parse rejects the line too (False: pi reads it, replaylab cannot)
    pi_skips: bool = True
    #: lone surrogates read as U+FFFD, and the JSON path of the first
    surrogates: int = 0
    surrogate_field: str | None = None


class _OutOfRange(ValueError):
    """A number JSON can spell but no 64-bit float holds: pi's JSON.parse reads it as Infinity."""

    def __init__(self, number: str):
        shown = number if len(number) <= 24 else f"{number[:12]}… ({len(number)} characters)"
        infinity = "-Infinity" if number.startswith("-") else "Infinity"
        super().__init__(
            f"the number {shown} is beyond a 64-bit float; pi's JSON.parse reads it as {infinity}, which JSON cannot "
            "hold"
        )
        self.number = number


#: the integers orjson keeps as integers; outside, orjson (like JavaScript) reads a float
_INT_RANGE = range(-(1 << 63), 1 << 64)
#: more digits than any integer in `_INT_RANGE` has (and below Python's int-parsing limit)
_INT_DIGITS = 20


def _parse_int(text: str) -> int | float:
    """An integer as orjson and pi's JSON.parse read it: an integer in 64 bits, else a float."""
    if len(text.lstrip("-")) <= _INT_DIGITS:
        value = int(text)
        if value in _INT_RANGE:
            return value
    return _parse_float(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise _OutOfRange(text)
    return value


TOO_DEEP = "nested too deeply for a JSON parser (about 1000 levels of arrays / objects or more)"


def decode_concatenated(text: str) -> Decoded:
    """The JSON values on one line, read as orjson reads them (integers past 64 bits as floats;
    NaN, Infinity and numbers past a float refused), with every lone surrogate read as U+FFFD."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float)
    objects: list[Any] = []
    pos, end = 0, len(text)
    outcome = Decoded(objects)
    while pos < end:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos >= end:
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            cut_short = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
            outcome = Decoded(objects, f"{exc.msg.removesuffix(' at')} at column {exc.colno}", cut_short)
            break
        except _OutOfRange as exc:
            column = text.find(exc.number, pos) + 1 or None
            outcome = Decoded(objects, f"{exc} (column {column})" if column else str(exc), pi_skips=False)
            break
        except ValueError as exc:  # a NaN / Infinity literal
            outcome = Decoded(objects, str(exc))
            break
        except RecursionError:  # deeper than the stdlib decoder's stack (orjson stops at 1024 levels)
            outcome = Decoded(objects, TOO_DEEP)
            break
        objects.append(obj)
    if _SURROGATE_ESCAPE.search(text) is None:
        return outcome
    replaced, where = _replace_lone_surrogates(objects)
    return outcome._replace(surrogates=replaced, surrogate_field=where) if replaced else outcome


def _reject_constant(name: str) -> Any:
    """`NaN` / `Infinity` are not JSON: orjson and pi's JSON.parse reject them, so must the fallback."""
    raise ValueError(f"{name} is not a JSON value")


#: a `\uD800`-`\uDFFF` escape: the only way a surrogate reaches decoded text (bad UTF-8 bytes are
#: replaced before decoding); a pair becomes one character, a lone one stays a surrogate
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_lone_surrogates(objects: list[Any]) -> tuple[int, str | None]:
    """Replace each lone surrogate in the strings and keys of `objects` by U+FFFD, in place: how
    many, and the JSON path of the first (`message.content.0.text`). Why: text with one cannot be
    encoded, so every writer (reports, working copies) would fail on it. An explicit stack, not
    recursion: a line may nest as deep as the decoder reads."""
    count = 0
    first: str | None = None

    def fixed(value: str, where: tuple[Any, ...]) -> str:
        nonlocal count, first
        text, n = _LONE_SURROGATE.subn("\ufffd", value)
        if n and first is None:
            path = ".".join(str(part) for part in where[1:])  # [0]: the object's index on the line
            first = _LONE_SURROGATE.sub("\ufffd", path) or None
        count += n
        return text

    stack: list[tuple[Any, tuple[Any, ...]]] = [(objects, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    node[index] = fixed(item, (*where, index))
                elif isinstance(item, (list, dict)):
                    stack.append((item, (*where, index)))
        elif isinstance(node, dict):
            for key in list(node):
                value = node[key]
                if isinstance(value, str):
                    value = node[key] = fixed(value, (*where, key))
                elif isinstance(value, (list, dict)):
                    stack.append((value, (*where, key)))
                if _LONE_SURROGATE.search(key) is not None:
                    del node[key]
                    node[fixed(key, (*where, key))] = value
    return count, first
