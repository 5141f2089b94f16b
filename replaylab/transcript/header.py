"""A transcript's session header, read without reading the rest of the file, and the records
that tell whose session it is when the header does not (`first_record`)."""

from __future__ import annotations

import functools
import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from ahocorasick_rs import BytesAhoCorasick

from replaylab.input_files import open_regular

#: the first line is read up to this many bytes (a header is a few hundred)
HEADER_READ_LIMIT = 1 << 20


def read_header(path: Path) -> dict[str, Any] | None:
    """The JSON object of the file's first line when it is a `session` header, else None (also
    for a file that cannot be read: the loader reports that, with the line)."""
    try:
        with open_regular(Path(path)) as handle:
            line = handle.readline(HEADER_READ_LIMIT)
    except OSError:
        return None
    try:
        header = orjson.loads(line.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return None
    return header if isinstance(header, dict) and header.get("type") == "session" else None


@dataclass(frozen=True)
class FoundRecord:
    """Where a session holds one of the records asked for: the index of the record in the
    request, and the line it is on (1-based)."""

    index: int
    line: int


def first_record(path: Path, wanted: Sequence[tuple[str, str]]) -> FoundRecord | None:
    """The first of `wanted` — ("entry", an entry type), ("role", a message entry's role) or
    ("custom", a custom entry's `customType`) — the
    file holds, in the order asked (the first line holding the first record held), or None (also
    for a file that cannot be read: the loader reports that).

    Searched for in one pass as the bytes an agent writes (`"type":"usage"`, `"role":"system"`,
    with or without a space after the colon), each candidate line then parsed and its own fields
    checked, so text that merely holds those words (a tool result's JSON, escaped in its string)
    claims nothing, and the file is not parsed as a whole: this runs before it is loaded."""
    if not wanted:
        return None
    try:
        with open_regular(Path(path)) as handle:
            try:
                data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file
                return None
    except OSError:
        return None
    best: tuple[int, int] | None = None  # (index in `wanted`, line start) of the best record confirmed
    with data:
        for needle, at, _ in _spellings(tuple(wanted)).find_matches_as_indexes(data):
            index = needle // 2
            if best is not None and index >= best[0]:
                continue  # a record asked for first is already held
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            kind, value = wanted[index]
            if _is_record(data[start : len(data) if end < 0 else end], kind, value):
                best = (index, start)
                if index == 0:
                    break
        return None if best is None else FoundRecord(best[0], data[: best[1]].count(b"\n") + 1)


@functools.lru_cache(maxsize=8)
def _spellings(wanted: tuple[tuple[str, str], ...]) -> BytesAhoCorasick:
    """The automaton of every record's two spellings, in `wanted` order (built once per request)."""
    needles: list[bytes] = []
    for kind, value in wanted:
        key = {"entry": b'"type"', "role": b'"role"', "custom": b'"customType"'}[kind]
        encoded = orjson.dumps(value)
        needles += [key + b":" + encoded, key + b": " + encoded]
    return BytesAhoCorasick(needles)


def _is_record(line: bytes, kind: str, value: str) -> bool:
    try:
        obj = orjson.loads(line.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        return False
    if not isinstance(obj, dict):
        return False
    if kind == "entry":
        return obj.get("type") == value
    if kind == "custom":
        return obj.get("type") == "custom" and obj.get("customType") == value
    message = obj.get("message")
    return obj.get("type") == "message" and isinstance(message, dict) and message.get("role") == value
