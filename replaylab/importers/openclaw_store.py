"""OpenClaw 2026.9.6's session store read as it is, read-only: the per-agent SQLite database
(`~/.openclaw/agents/<id>/agent/openclaw-agent.sqlite`) that its `SessionManager` writes.

Opened with `file:<path>?mode=ro` (the store is in WAL mode: its `-wal` / `-shm` files are read
beside it; a copy must take all three). Only the tables a transcript lives in are read, through
the schema OpenClaw's own code writes (agent schema 23):

* `session_windows`: one row per transcript (`session_id`), with its `session_key`
  (`agent:<agentId>:<name>`), why it began (`reason`: initial, reset, rollover, fork, ...) and
  the session it follows; `session_nodes.current_session_id` names each key's current one;
* `transcript_events`: one row per JSONL line of a transcript, in file order by `seq` (0 is the
  header); the line is `event_json`, or `event_zstd` (a zstd frame of `event_utf8_bytes` bytes)
  — OpenClaw reads `coalesce(event_json, decode(event_zstd))`;
* `session_transcript_cold_archives`: a transcript moved out of `transcript_events` into a zstd
  archive (`archive_blob`, or `sessions/cold/<name>` when `storage` is `file`), a JSONL stream
  of `{"kind": "event", "row": {"seq", "event_json"}}` records among others.

Each transcript is given back as the JSON objects of its lines, header first: exactly what
OpenClaw's `SessionManager.open` reads (checked against it by `tests/oracles/test_openclaw_store.py`).
"""

from __future__ import annotations

import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.json_dump import compact_json

STORE_NAME = "openclaw-agent.sqlite"
#: the tables a transcript is read from (a file without them is no OpenClaw agent store)
TRANSCRIPT_TABLES = ("session_windows", "transcript_events")


def decompressed(source: Path, data: Any, what: str) -> bytes:
    """One zstd stream, its size recorded in the frame or not (OpenClaw's archives do not record
    it); bytes that are no zstd stream are an input error naming them."""
    import zstandard

    if not isinstance(data, bytes):
        raise _error(source, f"{what} is {type(data).__name__}, not a zstd frame")
    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            return reader.read()
    except zstandard.ZstdError as exc:
        raise _error(source, f"{what} is not a zstd frame OpenClaw wrote ({exc})") from None


def _error(path: Path, message: str, *, code: str = "bad-openclaw-store") -> InputError:
    return InputError([Diagnostic(code=code, file=str(path), message=message)])


def connect_read_only(store: Path) -> sqlite3.Connection:
    """A read-only connection (`mode=ro`: nothing is ever written, no journal is created)."""
    uri = f"file:{urllib.parse.quote(str(Path(store).resolve()))}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True)
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        raise _error(store, f"cannot be read as an OpenClaw session store (SQLite): {exc}") from None
    missing = [t for t in TRANSCRIPT_TABLES if t not in tables]
    if missing:
        connection.close()
        raise _error(store, f"is not an OpenClaw agent store: no {', '.join(missing)} table")
    connection.row_factory = sqlite3.Row
    return connection


@dataclass(frozen=True)
class StoredSession:
    """One transcript of the store."""

    session_id: str
    session_key: str
    #: the store's agent (`agents/<agentId>/agent/…`)
    agent_id: str
    #: why this transcript began (initial, reset, rollover, fork, rewind, switch, recovery, compaction)
    reason: str | None
    previous_session_id: str | None
    #: the key's current transcript (an older one of the same key was reset or rolled over)
    current: bool
    events: int
    cold: bool

    @property
    def name(self) -> str:
        """The session key's own part (`agent:main:support` → `support`)."""
        return self.session_key.split(":", 2)[-1] if self.session_key.count(":") >= 2 else self.session_key

    def describe(self) -> str:
        state = "current" if self.current else "earlier"
        began = f", began by {self.reason}" if self.reason and self.reason != "initial" else ""
        where = "cold archive" if self.cold else f"{self.events} lines"
        return f"{self.session_key} {self.session_id} ({state}{began}; {where})"


def agent_of(store: Path, connection: sqlite3.Connection) -> str:
    """The store's agent id: its `schema_meta` row, else the folder it sits in."""
    try:
        row = connection.execute("SELECT agent_id FROM schema_meta WHERE meta_key = 'primary'").fetchone()
    except sqlite3.Error:
        row = None
    if row is not None and isinstance(row[0], str) and row[0]:
        return row[0]
    folder = Path(store).resolve().parent
    return folder.parent.name if folder.name == "agent" else "main"


def list_sessions(store: Path) -> list[StoredSession]:
    """Every transcript of the store, oldest first."""
    with closing(connect_read_only(store)) as connection:
        agent = agent_of(store, connection)
        cold_table = _has_table(connection, "session_transcript_cold_archives")
        rows = connection.execute(
            f"""
            SELECT w.session_id, w.session_key, w.reason, w.previous_session_id,
                   (n.current_session_id = w.session_id) AS current,
                   (SELECT count(*) FROM transcript_events e WHERE e.session_id = w.session_id) AS events,
                   {
                "(SELECT count(*) FROM session_transcript_cold_archives c WHERE c.session_id = w.session_id)"
                if cold_table
                else "0"
            } AS cold
              FROM session_windows w
              LEFT JOIN session_nodes n ON n.session_key = w.session_key
             ORDER BY w.created_at, w.session_id
            """
        ).fetchall()
    return [
        StoredSession(
            r["session_id"],
            r["session_key"],
            agent,
            r["reason"],
            r["previous_session_id"],
            bool(r["current"]),
            int(r["events"]),
            bool(r["cold"]),
        )
        for r in rows
    ]


def read_records(store: Path, session_id: str) -> list[dict[str, Any]]:
    """The transcript's lines as JSON objects, header first, in file order. A store that cannot
    be read to the end (a damaged page, a row of another shape) is an input error naming it."""
    records = []
    try:
        texts = list(_event_texts(store, session_id))
    except sqlite3.Error as exc:
        raise _error(store, f"session {session_id}: its lines cannot be read ({exc})") from None
    for seq, text in texts:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise _error(store, f"session {session_id}: line {seq} is not JSON ({exc})") from None
        records.append(value)
    return records


def jsonl_bytes(records: list[dict[str, Any]]) -> bytes:
    return b"".join(compact_json(r).encode() + b"\n" for r in records)


def _event_texts(store: Path, session_id: str) -> Iterator[tuple[int, bytes]]:
    with closing(connect_read_only(store)) as connection:
        cold = _cold_events(store, connection, session_id)
        if cold is not None:
            yield from cold
            return
        for row in connection.execute(
            "SELECT seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events "
            "WHERE session_id = ? ORDER BY seq",
            (session_id,),
        ):
            where = f"session {session_id}: line {row['seq']}"
            if row["event_json"] is not None:
                yield row["seq"], row["event_json"].encode("utf-8")
                continue
            raw = decompressed(store, row["event_zstd"], f"{where}: event_zstd")
            if row["event_utf8_bytes"] is not None and len(raw) != row["event_utf8_bytes"]:
                raise _error(store, f"{where} decodes to {len(raw)} bytes, the store says {row['event_utf8_bytes']}")
            yield row["seq"], raw


def _cold_events(store: Path, connection: sqlite3.Connection, session_id: str) -> list[tuple[int, bytes]] | None:
    """The events of a cold transcript, from its archive (None: it is not cold)."""
    if not _has_table(connection, "session_transcript_cold_archives"):
        return None
    row = connection.execute(
        "SELECT archive_name, storage, archive_blob FROM session_transcript_cold_archives WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    where = f"session {session_id}: its cold archive {row['archive_name']}"
    if row["storage"] == "sqlite":
        data = row["archive_blob"]
    else:  # the artifacts folder: agents/<id>/sessions when the store sits in agents/<id>/agent
        folder = Path(store).resolve().parent
        artifacts = folder.parent / "sessions" if folder.name == "agent" else folder
        archive = artifacts / "cold" / str(row["archive_name"])
        try:
            data = archive.read_bytes()
        except OSError as exc:
            raise _error(store, f"{where} cannot be read at {archive}: {exc.strerror}") from None
    return archive_events(store, data, where)


def archive_events(source: Path, data: Any, what: str) -> list[tuple[int, bytes]]:
    """`cold_events` of a compressed cold archive, where one that is not what OpenClaw writes is
    an input error naming it."""
    try:
        return cold_events(decompressed(source, data, what))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise _error(source, f"{what} holds an event of another shape ({type(exc).__name__}: {exc})") from None


def cold_events(data: bytes) -> list[tuple[int, bytes]]:
    """(seq, line) of each event of a decompressed cold archive, in file order."""
    events = []
    for line in data.splitlines():
        if not line.strip():
            continue
        record = orjson.loads(line)
        if isinstance(record, dict) and record.get("kind") == "event" and isinstance(record.get("row"), dict):
            row = record["row"]
            events.append((int(row["seq"]), str(row["event_json"]).encode("utf-8")))
    return sorted(events)


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    found = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
    return found is not None
