"""pi / OpenClaw session files (v1, v2, v3) → v3 sessions with a synthesized cassette.

`load_transcript` already migrates v1/v2 in memory (v1 entries get ids `l<line>`) and recovers
glued lines; this importer writes what it loaded as v3 (`dump_entry`, header version 3), keeps
each entry's (migrated) id as `sourceId`, and reports the loader's diagnostics as notes, so a
broken source line is named, never silently repaired. The cassette holds one interaction per
tool call that has a result, in call order (calls of `error` / `aborted` assistant messages are
skipped, as pi drops those messages before a request).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replaylab.cassette import recorded_tool_interaction
from replaylab.diagnostics import Diagnostic, InputError, errors
from replaylab.importers.common import (
    ImportedSession,
    bad_input,
    each_source,
    find_tool_classes,
    safe_name,
    text_of_blocks,
)
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import MessageEntry, ToolResultMessage, UnreadableEntry, dump_entry
from replaylab.transcript.pairing import answered_calls
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION

#: the refused lines an import names when a file has no entry it can read
MAX_UNREAD_LINES = 5


def import_pi(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    files = sorted(src.rglob("*.jsonl")) if src.is_dir() else [src]
    if not files:
        raise bad_input(src, "holds no pi session file (*.jsonl)")
    yield from each_source(files, lambda path: [import_pi_file(path, tool_classes_path=tool_classes_path)], problems)


def import_pi_file(path: Path, *, tool_classes_path: Path | None = None) -> ImportedSession:
    transcript = load_transcript(path)  # raises InputError for a missing file or a directory
    if any(d.code == "missing-header" for d in transcript.diagnostics):
        raise bad_input(
            path,
            "line 1 is not a pi session header {type: 'session', id, ...}; expected a pi / OpenClaw session file",
            line=1,
            field_name="type",
        )
    if not transcript.entries:
        unread = errors(transcript.diagnostics)
        if not unread:
            raise bad_input(
                path,
                "holds no session entries; expected a pi / OpenClaw session file "
                "(a 'session' header line, then one entry per line)",
            )
        # every line was read and refused: say why each was, not that there was nothing
        raise InputError(
            [
                *unread[:MAX_UNREAD_LINES],
                *bad_input(
                    path,
                    f"holds no entry replaylab can read: {len(unread)} lines refused (the first shown above); "
                    "expected a pi / OpenClaw session file",
                ).diagnostics,
            ]
        )
    header = dump_entry(transcript.header)
    source = {"kind": "pi", "file": str(path), "sourceVersion": transcript.source_version}
    header.update({"type": "session", "version": CURRENT_SESSION_VERSION, "id": transcript.header.id, "source": source})
    header.setdefault("timestamp", transcript.entries[0].timestamp)
    header.setdefault("cwd", "")
    unreadable = {entry.id for entry in transcript.entries if isinstance(entry, UnreadableEntry)}
    as_written = _entries_as_written(path, unreadable) if unreadable else {}
    entries: list[dict[str, Any]] = []
    for entry in transcript.entries:
        obj = as_written.get(entry.id) or dump_entry(entry)
        if isinstance(entry, UnreadableEntry) and entry.id not in as_written and isinstance(entry.written_type, str):
            obj["type"] = entry.written_type
        obj["sourceId"] = entry.id
        entries.append(obj)
    classes, _ = find_tool_classes(path, tool_classes_path)
    notes = [f"{path.name}: source {d}" for d in transcript.diagnostics]
    return ImportedSession(
        name=safe_name(path.stem),
        header=header,
        entries=entries,
        interactions=_interactions(transcript.entries),
        tool_classes=classes,
        notes=notes,
    )


def _entries_as_written(path: Path, ids: set[str]) -> dict[str, dict[str, Any]]:
    """The objects of the entries `ids` as the file holds them (the first of each id): an entry
    the loader cannot read is written back as it was, never as the stand-in it reads (its id and
    link alone), which would lose what it holds."""
    found: dict[str, dict[str, Any]] = {}
    with open(path, "rb") as handle:
        for line in handle:
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict) and value.get("id") in ids and value["id"] not in found:
                found[value["id"]] = value
    return found


def _interactions(entries: list[Any]) -> list[dict[str, Any]]:
    """One recorded-tool interaction per answered call, in file order (`answered_calls`); an
    in-flight call has no result in the source (reported by the loader) and no interaction."""
    results: dict[str, list[ToolResultMessage]] = {}
    for entry in entries:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage):
            results.setdefault(entry.message.tool_call_id, []).append(entry.message)
    out = []
    for _, call, k in answered_calls(entries):
        result = results[call.id][k]
        content = result.content
        text = (
            content
            if isinstance(content, str)
            else text_of_blocks(b.model_dump(mode="json", by_alias=True, exclude_unset=True) for b in content)
        )
        out.append(recorded_tool_interaction(call.name, call.arguments, text, is_error=bool(result.is_error)))
    return out
