"""OpenClaw's own session stores → transcripts with a synthesized cassette (`--from openclaw`).

OpenClaw 2026.9.6 keeps a state folder (`~/.openclaw`, or `$OPENCLAW_STATE_DIR`):

    agents/<agentId>/agent/openclaw-agent.sqlite     every transcript of that agent (`openclaw_store`)
    agents/<agentId>/sessions/<id>.jsonl             a legacy transcript (doctor's import source)
    agents/<agentId>/sessions/<id>.jsonl.zst         a zstd transcript archive
    agents/<agentId>/sessions/<id>.jsonl.reset.<time>[.<generation>][.zst]    a reset's archive
    agents/<agentId>/sessions/<id>.jsonl.deleted.<time>[.<generation>][.zst]  a deleted session's
    agents/<agentId>/sessions/cold/<sha256>.jsonl.zst    a cold transcript (read through its store)

`describe(path)` says what each is; `import_openclaw(src)` takes a state folder, a store, an
archive or a transcript and yields one session per transcript. Each is written as the JSONL its
lines are — the lines OpenClaw stored, in its order, header version as stored (4 for its own
sessions) — plus `source: {kind: openclaw, ...}` in the header, naming where it came from; that
`source.kind` is also what makes the openclaw@2026.9.6 profile judge it (`upstream.profiles`),
whatever its header version. The cassette answers every tool call from its recorded result (as
`--from pi` does). Nothing of the state folder is ever written: the store is opened read-only.

Why an import and not the store in place: a recording needs its cassette beside it and a file
that compaction's working copy starts from, and a live store changes under OpenClaw; an import
is a snapshot whose sha256 every report names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replaylab.diagnostics import Diagnostic
from replaylab.importers import openclaw_store as store
from replaylab.importers.common import (
    ImportedSession,
    bad_input,
    each_source,
    find_tool_classes,
    read_bytes,
    safe_name,
)
from replaylab.importers.pi import _interactions
from replaylab.transcript.load import loads_transcript

SOURCE_KIND = "openclaw"
#: `<sessionId>.jsonl.<reason>.<time>[.<generation>][.zst]` (OpenClaw's ARCHIVE_SUFFIX_RE)
ARCHIVE = re.compile(
    r"^(?P<session>.+)\.jsonl\.(?P<reason>reset|deleted|bak)\.(?P<time>[^.]+(?:\.\d{3}Z)?)"
    r"(?:\.(?P<generation>[0-9a-f]{32}))?(?P<zst>\.zst)?$"
)
ZSTD_TRANSCRIPT = ".jsonl.zst"
ARCHIVE_WHAT = {"reset": "a reset's archive", "deleted": "a deleted session's archive", "bak": "a backup"}


@dataclass(frozen=True)
class OpenClawFile:
    """One file of an OpenClaw state folder that holds transcripts."""

    path: Path
    #: store | archive | zstd | cold | legacy
    kind: str
    #: the agent it belongs to (`agents/<agentId>/…`)
    agent_id: str
    #: what it is, in words
    what: str
    session_id: str | None = None
    #: an archive's reason (reset, deleted, bak) and time as its name holds them
    archived: str | None = None
    archived_at: str | None = None


def agent_of_path(path: Path) -> str:
    """`agents/<agentId>/…` → agentId (`main` when the path does not say)."""
    parts = Path(path).resolve().parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "agents" and i + 1 < len(parts) - 1:
            return parts[i + 1]
    return "main"


def describe(path: Path) -> OpenClawFile | None:
    """What an OpenClaw state folder's file is; None for a file that is none of its transcripts."""
    path = Path(path)
    name = path.name
    agent = agent_of_path(path)
    if name == store.STORE_NAME:
        try:
            sessions = store.list_sessions(path)
        except Exception as exc:  # an unreadable store is named, with why
            return OpenClawFile(path, "store", agent, f"an OpenClaw session store that cannot be read ({exc})")
        current = sum(1 for s in sessions if s.current)
        return OpenClawFile(
            path,
            "store",
            agent,
            f"an OpenClaw session store (agent {agent}): {len(sessions)} transcript"
            f"{'s' if len(sessions) != 1 else ''}, {current} current",
        )
    archive = ARCHIVE.match(name)
    if archive:
        reason, when = archive["reason"], archive["time"]
        compressed = ", zstd" if archive["zst"] else ""
        return OpenClawFile(
            path,
            "archive",
            agent,
            f"OpenClaw's {ARCHIVE_WHAT[reason]} of session {archive['session']} ({reason} at {when}{compressed})",
            session_id=archive["session"],
            archived=reason,
            archived_at=when,
        )
    if name.endswith(ZSTD_TRANSCRIPT):
        if path.parent.name == "cold":
            return OpenClawFile(path, "cold", agent, "a cold OpenClaw transcript (its store reads it)")
        session = name.removesuffix(ZSTD_TRANSCRIPT)
        return OpenClawFile(path, "zstd", agent, f"an OpenClaw zstd transcript archive of session {session}", session)
    if name.endswith(".jsonl") and path.parent.name == "sessions" and path.parent.parent.parent.name == "agents":
        session = name.removesuffix(".jsonl")
        return OpenClawFile(
            path,
            "legacy",
            agent,
            f"an OpenClaw legacy transcript of session {session} (doctor's import source)",
            session,
        )
    return None


def state_files(folder: Path) -> list[OpenClawFile]:
    """Every transcript-holding file of a state folder (or of any folder below one), sorted."""
    found = []
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts):
            described = describe(path)
            if described is not None:
                found.append(described)
    return found


def import_openclaw(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    """One session per transcript of `src`: a state folder, a store, an archive or a transcript."""
    src = Path(src)
    if src.is_dir():
        files = [f for f in state_files(src) if f.kind != "cold"]  # a cold transcript comes with its store
        if not files:
            raise bad_input(
                src,
                "holds no OpenClaw session store, archive or transcript; expected an OpenClaw state folder "
                f"(agents/<id>/agent/{store.STORE_NAME}, agents/<id>/sessions/*.jsonl*)",
            )
    else:
        described = describe(src)
        files = [described or OpenClawFile(src, "legacy", agent_of_path(src), "a transcript", src.stem)]
    yield from each_source(files, lambda item: _sessions_of(item, tool_classes_path, problems), problems)


def _sessions_of(
    item: OpenClawFile, tool_classes_path: Path | None, problems: list[Diagnostic] | None
) -> Iterator[ImportedSession]:
    """The sessions of one transcript-holding file: each of a store's (one that cannot be read
    is a problem of its own, not of the store's other sessions), or the file's one."""
    classes, _ = find_tool_classes(item.path, tool_classes_path)
    if item.kind != "store":
        yield _file_session(item, classes)
        return

    def stored(session: store.StoredSession) -> list[ImportedSession]:
        return [
            _session(
                f"{session.agent_id}.{session.name}.{session.session_id}",
                store.read_records(item.path, session.session_id),
                {
                    "kind": SOURCE_KIND,
                    "store": str(item.path),
                    "agentId": session.agent_id,
                    # not "sessionKey": the scrubber redacts a value under a key named like a secret
                    "session": session.session_key,
                    "sessionId": session.session_id,
                    "current": session.current,
                    **({"began": session.reason} if session.reason else {}),
                },
                classes,
            )
        ]

    yield from each_source(store.list_sessions(item.path), stored, problems)


def _file_session(item: OpenClawFile, classes: dict[str, str]) -> ImportedSession:
    data = read_bytes(item.path)
    if item.kind == "cold":
        data = b"".join(line + b"\n" for _, line in store.archive_events(item.path, data, "the cold archive"))
    elif item.path.name.endswith(".zst"):
        data = store.decompressed(item.path, data, "the archive")
    numbered = _lines(item.path, data)
    records = [record for _, record in numbered]
    source: dict[str, Any] = {"kind": SOURCE_KIND, "file": str(item.path), "agentId": item.agent_id}
    if item.session_id:
        source["sessionId"] = item.session_id
    if item.archived:
        source.update({"archive": item.archived, "archivedAt": item.archived_at})
    name = ".".join(p for p in (item.agent_id, item.session_id or item.path.stem) if p)
    if item.archived:
        name += f".{item.archived}-{item.archived_at}"
    return _session(name, records, source, classes, lines=[number for number, _ in numbered])


def _lines(path: Path, data: bytes) -> list[tuple[int, dict[str, Any]]]:
    """The JSON objects of a transcript's lines, each with its line number; a line that does not
    parse is an error naming it (OpenClaw's import stops there too)."""
    records = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise bad_input(
                path, f"line does not parse as JSON ({exc}); expected one JSON object per line", line=number
            ) from None
        if isinstance(value, dict):
            records.append((number, value))
    return records


def _session(
    name: str,
    records: list[dict[str, Any]],
    source: dict[str, Any],
    classes: dict[str, str],
    *,
    lines: list[int] | None = None,
) -> ImportedSession:
    """One session of `records` (its header first); `lines`: each record's line in the source
    file, which the source's own problems name (a store's records have none: they name the store)."""
    first = records[0] if records else None  # a store's line is any JSON: its first may be no object
    header = dict(first) if isinstance(first, dict) and first.get("type") == "session" else None
    entries = records[1:] if header is not None else records
    if header is None:
        raise bad_input(source.get("store") or source.get("file") or name, "holds no session header line")
    header["source"] = source
    transcript = loads_transcript(store.jsonl_bytes(records))
    where = str(source.get("store") or source.get("file") or name)
    notes = [
        f"{name}: source "
        + str(d.model_copy(update={"file": where, "line": lines[d.line - 1] if lines and d.line else None}))
        for d in transcript.diagnostics
    ]
    return ImportedSession(
        name=safe_name(name),
        header=header,
        entries=entries,
        interactions=_interactions(transcript.entries),
        tool_classes=classes,
        notes=notes,
    )
