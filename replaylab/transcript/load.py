"""Load a pi / OpenClaw JSONL transcript: parse, migrate in memory, index, diagnose.

pi drops a line that does not parse and carries on silently (two entries glued on one line are
both lost). replaylab follows pi's reading rules but never silently: each problem becomes a
`Diagnostic` with file, line, entry id and a plain sentence, and glued entries are recovered.
`strict=True` turns any diagnostic into an `InputError`. The file is only ever read.
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson
from pydantic import ValidationError

from replaylab.constants import CURRENT_SESSION_VERSION
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.transcript.model import (
    ENTRY_ADAPTER,
    AnyEntry,
    AssistantMessage,
    CompactionEntry,
    MessageEntry,
    SessionHeader,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)


@dataclass
class Transcript:
    """A loaded session: header, entries in file order, and what was wrong with the file."""

    path: Path | None
    header: SessionHeader
    entries: list[AnyEntry]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    source_version: int = CURRENT_SESSION_VERSION
    line_of: dict[str, int] = field(default_factory=dict)
    by_id: dict[str, AnyEntry] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name if self.path else self.header.id

    @property
    def leaf_id(self) -> str | None:
        """pi's rule: the leaf is the last entry in file order."""
        return self.entries[-1].id if self.entries else None

    def path_to(self, leaf_id: str | None = None) -> list[AnyEntry]:
        """Root → leaf list of entries along `parentId` (abandoned branches left out)."""
        leaf_id = self.leaf_id if leaf_id is None else leaf_id
        chain: list[AnyEntry] = []
        seen: set[str] = set()
        current = self.by_id.get(leaf_id) if leaf_id else None
        while current is not None and current.id not in seen:
            seen.add(current.id)
            chain.append(current)
            current = self.by_id.get(current.parent_id) if current.parent_id else None
        chain.reverse()
        return chain

    def leaf_path(self) -> list[AnyEntry]:
        return self.path_to(None)

    def abandoned_entries(self) -> list[AnyEntry]:
        on_path = {e.id for e in self.leaf_path()}
        return [e for e in self.entries if e.id not in on_path]

    def problems(self) -> list[Diagnostic]:
        return list(self.diagnostics)


def load_transcript(path: str | Path, *, strict: bool = False) -> Transcript:
    """Read a transcript file. Raises `InputError` only when nothing usable can be read
    (missing file, a directory) or when `strict` and any problem was found."""
    path = Path(path)
    if path.is_dir():
        raise InputError([_diag(path, None, "not-a-file", "is a directory; expected a .jsonl transcript file")])
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError([_diag(path, None, "missing-file", "no such file")]) from None
    except OSError as exc:
        raise InputError([_diag(path, None, "unreadable", f"cannot be read: {exc.strerror}")]) from None
    transcript = loads_transcript(data, path=path)
    if strict and transcript.diagnostics:
        raise InputError(transcript.diagnostics)
    return transcript


def loads_transcript(data: bytes, *, path: Path | None = None) -> Transcript:
    """Parse transcript bytes (see `load_transcript`).

    The cyclic GC is off for the whole load (parse *and* validation): every object created is
    kept, so each collection pass is pure overhead (deps.md §6: up to 3×; here ≈10% on top of
    disabling it for the parse alone)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _loads(data, path)
    finally:
        if gc_was_enabled:
            gc.enable()


def _loads(data: bytes, path: Path | None) -> Transcript:
    name = Path(path) if path else Path("<memory>")
    diags: list[Diagnostic] = []
    raw = list(_parse_lines(data, name, diags))
    if not raw:
        diags.append(_diag(name, None, "empty-file", "holds no JSON object; expected a session header on line 1"))
        header = SessionHeader(id=name.stem, version=CURRENT_SESSION_VERSION)
        return Transcript(path=path, header=header, entries=[], diagnostics=diags)

    header, raw = _read_header(raw, name, diags)
    version = header.version or 1
    if version > CURRENT_SESSION_VERSION:
        diags.append(
            _diag(name, 1, "unknown-version", f"session version {version} is newer than {CURRENT_SESSION_VERSION}, "
                  "the newest replaylab knows; reading it as version 3", field="version")
        )
    if version < 2:
        raw = _migrate_v1(raw)
    if version < 3:
        _migrate_v2(raw)

    transcript = Transcript(path=path, header=header, entries=[], diagnostics=diags, source_version=version)
    _validate_entries(transcript, raw, name)
    _check_graph(transcript, name)
    _check_tool_pairing(transcript, name)
    return transcript


# ---------------------------------------------------------------- parsing


def _parse_lines(data: bytes, name: Path, diags: list[Diagnostic]) -> Iterator[tuple[int, dict[str, Any]]]:
    lines = data.split(b"\n")
    last = len(lines)
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            yield from _recover_line(line, lineno, lineno == last or (lineno == last - 1 and not lines[-1]), name, diags)
            continue
        if not isinstance(obj, dict):
            diags.append(_diag(name, lineno, "not-an-object", f"holds a JSON {type(obj).__name__}, expected an object"))
            continue
        yield lineno, obj


def _recover_line(line: bytes, lineno: int, is_last: bool, name: Path, diags: list[Diagnostic]):
    """A line orjson rejects: bad UTF-8, glued entries, or a truncated / broken object."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.append(_diag(name, lineno, "invalid-utf8",
                           f"is not valid UTF-8 (byte {exc.start}); undecodable bytes were replaced with U+FFFD"))
        text = line.decode("utf-8", errors="replace")
    objects, error = _decode_concatenated(text)
    if error is None and len(objects) == 1:
        obj = objects[0]
        if isinstance(obj, dict):
            yield lineno, obj
        return
    if error is None and len(objects) > 1:
        kinds = ", ".join(str(o.get("type", "?")) if isinstance(o, dict) else type(o).__name__ for o in objects)
        diags.append(_diag(name, lineno, "glued-lines",
                           f"holds {len(objects)} JSON objects glued together without a newline ({kinds}); "
                           "pi drops the whole line, replaylab recovered each object"))
        for obj in objects:
            if isinstance(obj, dict):
                yield lineno, obj
        return
    where = "last line is truncated" if is_last else "line does not parse as JSON"
    diags.append(_diag(name, lineno, "invalid-json", f"{where}: {error}; the line was skipped (pi skips it too)"))


def _decode_concatenated(text: str) -> tuple[list[Any], str | None]:
    decoder = json.JSONDecoder()
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
            return objects, f"{exc.msg} at column {exc.colno}"
        objects.append(obj)
    return objects, None


def _read_header(raw: list[tuple[int, dict]], name: Path, diags: list[Diagnostic]):
    lineno, first = raw[0]
    if first.get("type") == "session" and isinstance(first.get("id"), str):
        try:
            header = SessionHeader.model_validate(first)
        except ValidationError as exc:
            diags.extend(_validation_diags(exc, name, lineno, None))
            header = SessionHeader.model_construct(**first)
        if lineno != 1:
            diags.append(_diag(name, lineno, "header-not-first", "the session header is not on line 1"))
        return header, raw[1:]
    if first.get("type") == "session":
        diags.append(_diag(name, lineno, "bad-header", "session header has no string 'id'", field="id"))
        header = SessionHeader(id=name.stem, version=first.get("version") if isinstance(first.get("version"), int) else None)
        return header, raw[1:]
    diags.append(_diag(name, lineno, "missing-header",
                       f"line {lineno} is a {first.get('type')!r} entry; expected a 'session' header first "
                       "(pi would discard this file); entries read without a header", field="type"))
    version = CURRENT_SESSION_VERSION if all("id" in o for _, o in raw[:5]) else 1
    return SessionHeader(id=name.stem, version=version), raw


# ---------------------------------------------------------------- migration (in memory only)


def _migrate_v1(raw: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """v1 → v2: give each entry a stable id (from its line) and chain parentId in file order.

    pi assigns random ids; we derive them from the line so a diagnostic or defect can be traced
    back to the file. `firstKeptEntryIndex` indexes the whole entry array with the header at 0.
    """
    out: list[tuple[int, dict]] = []
    ids: list[str] = []
    per_line: dict[int, int] = {}
    previous: str | None = None
    for lineno, obj in raw:
        obj = dict(obj)
        if "id" not in obj:
            k = per_line.get(lineno, 0)
            per_line[lineno] = k + 1
            obj["id"] = f"l{lineno}" if k == 0 else f"l{lineno}-{k + 1}"
            obj["parentId"] = previous
        previous = obj["id"]
        ids.append(obj["id"])
        out.append((lineno, obj))
    for _, obj in out:
        if obj.get("type") == "compaction" and "firstKeptEntryIndex" in obj and "firstKeptEntryId" not in obj:
            index = obj["firstKeptEntryIndex"]
            if isinstance(index, int) and 1 <= index <= len(ids):
                obj["firstKeptEntryId"] = ids[index - 1]
    return out


def _migrate_v2(raw: list[tuple[int, dict]]) -> None:
    """v2 → v3: message role `hookMessage` was renamed `custom`."""
    for _, obj in raw:
        message = obj.get("message")
        if isinstance(message, dict) and message.get("role") == "hookMessage":
            obj["message"] = {**message, "role": "custom"}


# ---------------------------------------------------------------- validation and graph checks


def _validate_entries(transcript: Transcript, raw: list[tuple[int, dict]], name: Path) -> None:
    diags = transcript.diagnostics
    for lineno, obj in raw:
        entry_id = obj.get("id") if isinstance(obj.get("id"), str) else None
        if entry_id is None:
            diags.append(_diag(name, lineno, "missing-id", f"{obj.get('type', 'untyped')!r} entry has no string 'id'; "
                               "it cannot be placed in the session tree and was skipped", field="id"))
            continue
        if obj.get("type") == "session":
            diags.append(_diag(name, lineno, "extra-header", "a second session header inside the file was ignored",
                               entry_id=entry_id))
            continue
        try:
            entry = ENTRY_ADAPTER.validate_python(obj)
        except ValidationError as exc:
            diags.extend(_validation_diags(exc, name, lineno, entry_id))
            continue
        if entry_id in transcript.by_id:
            first_line = transcript.line_of[entry_id]
            diags.append(_diag(name, lineno, "duplicate-id",
                               f"id also used on line {first_line}; the later entry wins (as in pi)", entry_id=entry_id))
            transcript.entries = [e for e in transcript.entries if e.id != entry_id]
        transcript.entries.append(entry)
        transcript.by_id[entry_id] = entry
        transcript.line_of[entry_id] = lineno


def _check_graph(transcript: Transcript, name: Path) -> None:
    by_id, line_of = transcript.by_id, transcript.line_of
    for entry in transcript.entries:
        if entry.parent_id is not None and entry.parent_id not in by_id:
            transcript.diagnostics.append(_diag(
                name, line_of[entry.id], "dangling-parent",
                f"parentId {entry.parent_id!r} names no entry in the file; the path stops here",
                entry_id=entry.id, field="parentId"))
    # cycle detection: colour walk over parent links
    state: dict[str, int] = {}
    for entry in transcript.entries:
        trail: list[str] = []
        current: str | None = entry.id
        while current is not None and current in by_id and state.get(current) is None:
            state[current] = 1
            trail.append(current)
            current = by_id[current].parent_id
        if current is not None and state.get(current) == 1:
            loop = trail[trail.index(current):] if current in trail else [current]
            transcript.diagnostics.append(_diag(
                name, line_of[current], "cycle",
                f"parentId links form a cycle ({' → '.join(loop)} → {current}); the path is cut there",
                entry_id=current, field="parentId"))
            by_id[current] = by_id[current].model_copy(update={"parent_id": None})
        for node in trail:
            state[node] = 2


def _check_tool_pairing(transcript: Transcript, name: Path) -> None:
    """On the leaf path: every tool result answers an earlier call, every call gets a result."""
    pending: dict[str, str] = {}
    called: set[str] = set()
    for entry in transcript.leaf_path():
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if isinstance(message, AssistantMessage):
            errored = message.stop_reason in ("error", "aborted")
            for call in message.tool_calls():
                called.add(call.id)  # a result for it is never an orphan
                if not errored:  # pi drops errored/aborted messages before a request: no result needed
                    pending[call.id] = entry.id
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            # τ²-bench telecom: the simulated user runs tools on its own phone (actor = user)
            for block in message.content:
                if isinstance(block, ToolCallBlock):
                    pending[block.id] = entry.id
                    called.add(block.id)
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id not in called:
                transcript.diagnostics.append(_diag(
                    name, transcript.line_of.get(entry.id), "orphan-tool-result",
                    f"tool result for call {message.tool_call_id!r} has no matching tool call earlier on the path",
                    entry_id=entry.id, field="message.toolCallId"))
            pending.pop(message.tool_call_id, None)
    for call_id, entry_id in pending.items():
        transcript.diagnostics.append(_diag(
            name, transcript.line_of.get(entry_id), "missing-tool-result",
            f"tool call {call_id!r} has no tool result later on the path", entry_id=entry_id,
            field="message.content"))


def _validation_diags(exc: ValidationError, name: Path, lineno: int, entry_id: str | None) -> list[Diagnostic]:
    errors = exc.errors()
    # `content: str | list[...]` reports one error per union member; the `str` one is noise
    # when the other member got further
    real = [e for e in errors if "str" not in e["loc"]] or errors
    out = []
    for err in real[:3]:
        out.append(_diag(name, lineno, "invalid-entry", f"{err['msg']} (got {_short(err.get('input'))}); entry skipped",
                         entry_id=entry_id, field=_json_path(err["loc"]) or None))
    return out


def _json_path(loc: tuple[Any, ...]) -> str:
    """pydantic's error location as the JSON path a user can find in the line: drop the union
    tags pydantic inserts (entry type at [0], role after `message`, block type after a list
    index) and union member labels (`str`, `list[...]`)."""
    parts: list[str] = []
    skip_next = True  # loc[0] is the entry-type tag
    for part in loc:
        if skip_next:
            skip_next = False
            continue
        if isinstance(part, str) and (part == "str" or "[" in part):
            continue
        parts.append(str(part))
        skip_next = (part == "message" and len(parts) == 1) or isinstance(part, int)
    return ".".join(parts)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _diag(name: Path, line: int | None, code: str, message: str, *, entry_id: str | None = None,
          field: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, file=str(name), line=line, entry_id=entry_id, field=field, message=message,
                      severity="warning" if code in {"glued-lines", "unknown-version"} else "error")
