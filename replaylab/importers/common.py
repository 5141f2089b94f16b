"""What every importer shares: the `ImportedSession` contract, a builder that turns source
messages into v3 entries + cassette interactions, reading sources and their `tool_classes.json`
(`writing` writes the result).

Why one builder: the rules every source must obey are the same (unique entry ids, a linear
`parentId` chain, ISO timestamps, `sourceId` on each entry, one result per tool call, one
cassette interaction per call in call order). Keeping them in one place means an importer only
translates its source's shapes; it cannot get the pairing or the cassette wrong on its own.

Ids: entry ids are 8 hex digits derived from the session name and the entry's position, so a
re-import gives the same ids (pi uses random 8-hex ids). Tool-call ids are kept as in the
source, except when a source reuses one inside one session (τ-bench does, in 49 of 200
trajectories): the repeat gets a `~<n>` suffix and the entry keeps the original in
`sourceToolCallIds`, because a ledger, a cassette match or a compaction pair check keyed by
call id would otherwise mix two different calls.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import orjson

from replaylab.cassette import recorded_tool_interaction
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.safety.classify import is_mutating_class
from replaylab.upstream.pi_0_73_1 import CURRENT_SESSION_VERSION

#: file name of the tool → class map read next to a source and written into the output folder
TOOL_CLASSES_FILE = "tool_classes.json"
#: how many folders above a source file we look for its `tool_classes.json`
TOOL_CLASSES_SEARCH_DEPTH = 4
#: custom entry type of a system prompt (kept, but not sent to the model as a message)
SYSTEM_PROMPT_CUSTOM_TYPE = "system-prompt"
#: synthesized timestamps (sources without any) count seconds from this instant
SYNTHETIC_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass
class ImportedSession:
    """One imported session, ready for `write_session`."""

    name: str
    header: dict[str, Any]
    entries: list[dict[str, Any]]
    interactions: list[dict[str, Any]]
    tool_classes: dict[str, str]
    children: list[ImportedSession] = field(default_factory=list)
    #: things the user should know (source defects, skipped files); printed by the CLI
    notes: list[str] = field(default_factory=list)

    def tool_call_count(self) -> int:
        return sum(len(_tool_calls_of(e)) for e in self.entries)


def child_file_stem(parent_name: str, child_name: str) -> str:
    """`<parent>.sub-<child>`: the file stem a child session is written under."""
    return f"{parent_name}.sub-{child_name}"


# ---------------------------------------------------------------- input helpers


def bad_input(
    path: Path | str,
    message: str,
    *,
    line: int | None = None,
    field_name: str | None = None,
    code: str = "bad-import-source",
) -> InputError:
    """An `InputError` naming the file (and line / field when known) and what was expected."""
    return InputError([Diagnostic(code=code, file=str(path), line=line, field=field_name, message=message)])


Source = TypeVar("Source")


def each_source(
    sources: Iterable[Source],
    sessions_of: Callable[[Source], Iterable[ImportedSession]],
    problems: list[Diagnostic] | None,
) -> Iterator[ImportedSession]:
    """The sessions of each source of a folder (`sessions_of` one source). With `problems`, a
    source that is not what the importer reads is listed there (its file, line and field) and the
    folder's other sources are still imported, as are the sessions a bad source gave before its
    problem: a folder holds whatever else its owner keeps in it (an empty log of a session that
    never started, another tool's file). Without, the first problem raises."""
    for source in sources:
        sessions: Iterator[ImportedSession] | None = None
        while True:
            try:
                if sessions is None:
                    sessions = iter(sessions_of(source))
                session = next(sessions)
            except StopIteration:
                break
            except InputError as exc:
                if problems is None:
                    raise
                problems.extend(exc.diagnostics)
                break
            yield session


def read_json(path: Path) -> Any:
    """Parse a whole JSON file; errors name the file and line."""
    data = read_bytes(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise bad_input(
            path, f"is not valid JSON ({exc.msg} at column {exc.colno}); expected one JSON document", line=exc.lineno
        ) from None


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, object) for each non-blank line; a bad line is an error naming it."""
    rows, unparsed = jsonl_rows(path)
    if unparsed:
        raise unparsed[0][1]
    return rows


def jsonl_rows(path: Path) -> tuple[list[tuple[int, Any]], list[tuple[int, InputError]]]:
    """(line number, object) for each non-blank line that parses, and an error naming each line
    that does not."""
    rows: list[tuple[int, Any]] = []
    unparsed: list[tuple[int, InputError]] = []
    for lineno, line in enumerate(read_bytes(path).split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, orjson.loads(line)))
        except orjson.JSONDecodeError as exc:
            message = f"line does not parse as JSON ({exc.msg}); expected one JSON object per line"
            unparsed.append((lineno, bad_input(path, message, line=lineno)))
    return rows, unparsed


def read_bytes(path: Path) -> bytes:
    if path.is_dir():
        raise bad_input(path, "is a directory; expected a file")
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise bad_input(path, "no such file", code="missing-file") from None
    except OSError as exc:
        raise bad_input(path, f"cannot be read: {exc.strerror}") from None


def find_tool_classes(source: Path, override: Path | None = None) -> tuple[dict[str, str], Path | None]:
    """The `tool_classes.json` that belongs to a source: `override`, else the nearest one in the
    source's folder or up to `TOOL_CLASSES_SEARCH_DEPTH` folders above it (the real data keeps it
    next to the file for τ/τ²-bench and at the top of the Claude Code folder)."""
    if override is not None:
        return load_tool_classes(override), override
    folder = source if source.is_dir() else source.parent
    for _ in range(TOOL_CLASSES_SEARCH_DEPTH + 1):
        candidate = folder / TOOL_CLASSES_FILE
        if candidate.is_file():
            return load_tool_classes(candidate), candidate
        if folder.parent == folder:
            break
        folder = folder.parent
    return {}, None


def with_benchmark_classes(
    declared: dict[str, str], benchmark: dict[str, str], whose: str
) -> tuple[dict[str, str], str | None]:
    """`declared` with the classes a benchmark's own code gives its tools filled in where it is
    silent (a `tool_classes.json` is the user's word and wins), and a note saying how many came
    from `whose` (None when none did)."""
    added = sorted(set(benchmark) - set(declared))
    if not added:
        return dict(declared), None
    note = (
        f"the classes of {len(added)} tools come from {whose}, as its code gives them "
        "(a tool_classes.json beside the source would decide instead)"
    )
    return {**benchmark, **declared}, note


def load_tool_classes(path: Path) -> dict[str, str]:
    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise bad_input(path, "expected a JSON object mapping each tool name to its class (read, write, exec, ...)")
    return {str(k): v for k, v in data.items()}


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict. OpenAI sends a JSON string; returns (args, problem)."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {"_raw": raw}, f"arguments are not valid JSON ({exc.msg}); kept as {{'_raw': ...}}"
        if isinstance(value, dict):
            return value, None
        return {"_raw": value}, "arguments are JSON but not an object; kept as {'_raw': ...}"
    return {"_raw": raw}, f"arguments are a {type(raw).__name__}, not an object; kept as {{'_raw': ...}}"


def provider_for_model(model: str | None) -> str | None:
    """Provider of a model name when the name says it (`x/...` prefix or a well-known family)."""
    if not model:
        return None
    if "/" in model:
        return model.split("/", 1)[0]
    lowered = model.lower()
    if lowered.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    if lowered.startswith("claude"):
        return "anthropic"
    if lowered.startswith("gemini"):
        return "google"
    return None


def safe_name(text: str) -> str:
    """A string usable in a file name (no path separators, colons or spaces)."""
    out = "".join(c if c.isalnum() or c in "._-" else "-" for c in text)
    return out.strip("-.") or "session"


def text_of_blocks(blocks: Iterable[dict[str, Any]]) -> str:
    """Text of pi content blocks (what a recorded tool answered), images named, not inlined."""
    parts = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            parts.append(f"[image {block.get('mimeType', '')}]".replace(" ]", "]"))
    return "\n".join(parts)


# ---------------------------------------------------------------- timestamps


def normalize_timestamp(value: Any) -> datetime | None:
    """A source timestamp (ISO string, Unix seconds or ms) as an aware datetime, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch_ms(moment: datetime) -> int:
    return int(round(moment.timestamp() * 1000))


# ---------------------------------------------------------------- the builder


@dataclass
class _Call:
    id: str
    source_id: str
    name: str
    arguments: dict[str, Any]
    entry_id: str
    result_text: str | None = None
    is_error: bool = False


class SessionBuilder:
    """Appends v3 entries in source order as one linear `parentId` chain (unless `continue_from`
    moves it to another entry, as a branch does) and pairs tool results to calls, so that the
    finished session has exactly one result per call where the source had one, and a cassette
    interaction for each such call in call order."""

    def __init__(
        self,
        name: str,
        *,
        session_id: str,
        source: dict[str, Any],
        cwd: str = "",
        timestamp: Any = None,
        tool_classes: dict[str, str] | None = None,
    ):
        self.name = name
        self.session_id = session_id
        self.source = source
        self.cwd = cwd
        self._header_time = normalize_timestamp(timestamp)
        self.tool_classes = dict(tool_classes or {})
        self.entries: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.children: list[ImportedSession] = []
        self._ids: set[str] = set()
        self._last_id: str | None = None
        self._last_time: datetime | None = None
        self._calls: list[_Call] = []
        self._pending: dict[str, deque[_Call]] = {}
        self._call_ids: dict[str, int] = {}

    # -- ids and times

    def new_id(self) -> str:
        n = len(self.entries)
        salt = 0
        while True:
            digest = hashlib.sha1(f"{self.name}\0{n}\0{salt}".encode()).hexdigest()[:8]
            if digest not in self._ids:
                self._ids.add(digest)
                return digest
            salt += 1

    def _time(self, value: Any) -> datetime:
        moment = normalize_timestamp(value)
        if moment is None:
            if self._last_time is not None:
                return self._last_time  # same instant as the entry before: order is kept by the file
            return SYNTHETIC_EPOCH + timedelta(seconds=len(self.entries))
        self._last_time = moment
        return moment

    @property
    def last_id(self) -> str | None:
        """The entry the next one will hang from."""
        return self._last_id

    def continue_from(self, entry_id: str | None) -> None:
        """Hang the next entry from `entry_id` (an earlier entry of this session, or None for a root)."""
        if entry_id is not None and entry_id not in self._ids:
            raise ValueError(f"{self.name}: no entry {entry_id} to continue from")
        self._last_id = entry_id

    # -- generic append

    def append(
        self, body: dict[str, Any], *, source_id: Any, timestamp: Any = None, extra: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Add one entry (`body` holds `type` and its fields); returns the entry dict."""
        moment = self._time(timestamp)
        entry_id = self.new_id()
        entry: dict[str, Any] = {
            "type": body["type"],
            "id": entry_id,
            "parentId": self._last_id,
            "timestamp": iso(moment),
        }
        entry.update({k: v for k, v in body.items() if k != "type"})
        if isinstance(entry.get("message"), dict) and "timestamp" not in entry["message"]:
            entry["message"]["timestamp"] = epoch_ms(moment)
        entry["sourceId"] = source_id
        if extra:
            entry.update(extra)
        if self._header_time is None:
            self._header_time = moment
        self.entries.append(entry)
        self._last_id = entry_id
        return entry

    # -- typed helpers

    def system_prompt(
        self, content: Any, *, source_id: Any, timestamp: Any = None, extra_data: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        data = {"content": content, **(extra_data or {})}
        return self.append(
            {"type": "custom", "customType": SYSTEM_PROMPT_CUSTOM_TYPE, "data": data},
            source_id=source_id,
            timestamp=timestamp,
        )

    def custom(self, custom_type: str, data: Any, *, source_id: Any, timestamp: Any = None) -> dict[str, Any]:
        return self.append(
            {"type": "custom", "customType": custom_type, "data": data}, source_id=source_id, timestamp=timestamp
        )

    def compaction(
        self,
        summary: str,
        *,
        tokens_before: Any,
        details: dict[str, Any],
        source_id: Any,
        timestamp: Any = None,
        extra: dict[str, Any] | None = None,
        first_kept: str | None = None,
    ) -> dict[str, Any]:
        """A compaction that keeps the path from `first_kept` on verbatim, or nothing
        (`firstKeptEntryId` its own id)."""
        entry = self.append(
            {"type": "compaction", "summary": summary}, source_id=source_id, timestamp=timestamp, extra=extra
        )
        entry["firstKeptEntryId"] = first_kept or entry["id"]
        if tokens_before is not None:
            entry["tokensBefore"] = tokens_before
        entry["details"] = details
        return entry

    def message(
        self, message: dict[str, Any], *, source_id: Any, timestamp: Any = None, extra: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A `message` entry. toolCall blocks in an assistant or user message are registered as
        calls (ids made unique if the source reused one); a toolResult is paired to its call."""
        renamed: dict[str, str] = {}
        role = message.get("role")
        if role in ("assistant", "user") and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    source_call = str(block["id"])
                    block["id"] = self._unique_call_id(source_call)
                    if block["id"] != source_call:
                        renamed[block["id"]] = source_call
        pair_with: _Call | None = None
        if role == "toolResult":
            pair_with = self._take_pending(str(message["toolCallId"]))
            if pair_with is not None:
                message["toolCallId"] = pair_with.id
                if not message.get("toolName"):
                    message["toolName"] = pair_with.name
            else:
                self.notes.append(
                    f"{self.name}: tool result for call {message['toolCallId']!r} "
                    f"(source {source_id!r}) has no open call before it; kept as it is"
                )
        entry = self.append(
            {"type": "message", "message": message}, source_id=source_id, timestamp=timestamp, extra=extra
        )
        if renamed:
            entry["sourceToolCallIds"] = renamed
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if role in ("assistant", "user") and isinstance(block, dict) and block.get("type") == "toolCall":
                call_id: str = block["id"]  # made a unique string above
                call = _Call(
                    call_id,
                    renamed.get(call_id, call_id),
                    block["name"],
                    block.get("arguments") or {},
                    entry["id"],
                )
                self._calls.append(call)
                self._pending.setdefault(call.source_id, deque()).append(call)
        if pair_with is not None:
            content = message.get("content")
            pair_with.result_text = content if isinstance(content, str) else text_of_blocks(content or [])
            pair_with.is_error = bool(message.get("isError"))
        return entry

    def tool_result(
        self,
        source_call_id: str,
        content: Any,
        *,
        is_error: bool,
        source_id: Any,
        tool_name: str | None = None,
        timestamp: Any = None,
        actor: str | None = None,
        details: Any = None,
    ) -> dict[str, Any]:
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": source_call_id,
            "toolName": tool_name or "",
            "content": blocks,
            "isError": bool(is_error),
        }
        if details is not None:
            message["details"] = details
        return self.message(
            message, source_id=source_id, timestamp=timestamp, extra={"actor": actor} if actor else None
        )

    def pending_call_name(self, source_call_id: str) -> str | None:
        return queue[0].name if (queue := self._pending.get(source_call_id)) else None

    def pending_call_id(self, source_call_id: str) -> str | None:
        return queue[0].id if (queue := self._pending.get(source_call_id)) else None

    def _unique_call_id(self, source_call: str) -> str:
        count = self._call_ids.get(source_call, 0) + 1
        self._call_ids[source_call] = count
        return source_call if count == 1 else f"{source_call}~{count}"

    def _take_pending(self, source_call_id: str) -> _Call | None:
        """The oldest call with this source id that has no result yet (FIFO: a source that
        reuses an id answers each use before the next one)."""
        queue = self._pending.get(source_call_id)
        return queue.popleft() if queue else None

    # -- finish

    def finish(self) -> ImportedSession:
        interactions = []
        for call in self._calls:
            if call.result_text is None:
                self.notes.append(
                    f"{self.name}: tool call {call.id!r} ({call.name}) in entry {call.entry_id} "
                    "has no result in the source; no cassette interaction for it"
                )
                continue
            interactions.append(
                recorded_tool_interaction(call.name, call.arguments, call.result_text, is_error=call.is_error)
            )
        header = {
            "type": "session",
            "version": CURRENT_SESSION_VERSION,
            "id": self.session_id,
            "timestamp": iso(self._header_time or SYNTHETIC_EPOCH),
            "cwd": self.cwd,
            "source": self.source,
        }
        return ImportedSession(
            name=self.name,
            header=header,
            entries=self.entries,
            interactions=interactions,
            tool_classes=dict(self.tool_classes),
            children=self.children,
            notes=self.notes,
        )


def _tool_calls_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    message = entry.get("message") if entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") not in ("assistant", "user"):
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]


def update_tool_classes(out_dir: Path, maps: list[dict[str, str]]) -> dict[str, str]:
    """Merge tool classes into `out_dir/tool_classes.json`. When two sources disagree on a tool,
    the mutating class wins (fail closed: a wrong "unsafe" only makes replay stricter)."""
    path = out_dir / TOOL_CLASSES_FILE
    merged: dict[str, str] = load_tool_classes(path) if path.exists() else {}
    changed = not path.exists()
    for mapping in maps:
        for tool, cls in mapping.items():
            old = merged.get(tool)
            if old == cls:
                continue
            if old is None or (is_mutating_class(cls) and not is_mutating_class(old)):
                merged[tool] = cls
                changed = True
    if changed:
        # a fresh temporary file (never a name someone could have planted a symlink at), then renamed
        fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(dict(sorted(merged.items())), indent=1) + "\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return merged


def json_source_files(src: Path, what: str) -> list[Path]:
    """The results files under `src` (or `src` itself), without the data sets' side files
    (`tool_classes*.json`, `stats.json`). `what` names the expected file for the error."""
    if not src.is_dir():
        return [src]
    files = sorted(p for p in src.rglob("*.json") if not (p.name.startswith("tool_classes") or p.name == "stats.json"))
    if not files:
        raise bad_input(src, f"holds no {what} (*.json)")
    return files
