"""Recordings in another tool's format, recognised from the first bytes of the file.

A Claude Code session log, a Codex rollout (of any of its layouts), an OpenHands trajectory or a
τ-bench / τ²-bench results file read as a pi transcript yields no entries (or a diagnostic per
line) and so looks like a harmless, replay-safe session. Callers
ask `detect_foreign` first and point the user at `replaylab import` instead. Only the head of
the file is read, so the check costs the same on a 1 KB file and a 1 GB one.

This module sits in `transcript` so the loader's layer can use it; it names the import kinds as
plain strings because `transcript` must not import `importers` (a test keeps them in step).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: how much of a file is looked at: enough for the first records of every format recognised
HEAD_BYTES = 64 * 1024
#: complete lines of a JSONL head that are parsed
HEAD_LINES = 5
#: Claude Code's record fields where pi has `id` / `parentId`
CLAUDE_CODE_FIELDS = frozenset({"uuid", "parentUuid", "sessionId"})
CLAUDE_CODE_TYPES = frozenset({"file-history-snapshot", "summary"})
#: Claude Code's conversation records: `type` names the speaker, `message` holds the API message
CLAUDE_CODE_TALK = frozenset({"user", "assistant"})

_OBJECT_START = re.compile(r"\A\s*\{")
_ARRAY_OF_OBJECTS = re.compile(r"\A\s*\[\s*\{")
_TAU2_KEYS = re.compile(r'"(?:simulations|environment_info|agent_info|user_info)"\s*:')
#: the fields of one τ²-bench simulation written on its own (they come before its messages)
_TAU2_SIMULATION = re.compile(r'"(?:termination_reason|reward_info)"\s*:')
_TAU2_SIMULATION_NEEDS = (re.compile(r'"task_id"\s*:'), re.compile(r'"messages"\s*:\s*\['))
_TAU_TRAJECTORY = re.compile(r'"traj"\s*:')
_TAU_RECORD = re.compile(r'"task_id"\s*:')
_TAU_FIELDS = re.compile(r'"(?:traj|trial|reward)"\s*:')
#: Codex's rollout lines (`RolloutItem`, `{timestamp, type, payload}`)
CODEX_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})
#: the first line of an early codex-rs rollout: its session meta itself, with no `type`
#: (`SessionMeta {id, timestamp, instructions?}`, then with `git`, `cwd`, `originator`, `cli_version`)
CODEX_EARLY_META = frozenset({"id", "timestamp", "instructions", "git", "cwd", "originator", "cli_version"})
#: the TypeScript Codex CLI's session document, `{session: {timestamp, id, instructions}, items}`
_CODEX_CLI_SESSION = re.compile(r'\A\s*\{\s*"session"\s*:\s*\{\s*"timestamp"\s*:')
#: an OpenHands event (`event_to_dict`): who caused it, and the action or observation it is
_OPENHANDS_SOURCE = re.compile(r'"source"\s*:\s*"(?:agent|user|environment)"')
_OPENHANDS_KIND = re.compile(r'"(?:action|observation)"\s*:\s*"[a-z_]+"')
_OPENHANDS_HISTORY = re.compile(r'"history"\s*:\s*\[\s*\{')


@dataclass(frozen=True)
class ForeignFormat:
    """A recognised format: its `replaylab import --from` name and how to name it to a reader."""

    kind: str
    what: str

    def import_command(self, path: Path | str) -> str:
        return f"replaylab import --from {self.kind} {shlex.quote(str(path))} --out imported"

    def message(self, path: Path | str) -> str:
        return (
            f"this is {self.what}, not a pi / OpenClaw transcript — run `{self.import_command(path)}` "
            "and use the .jsonl it writes"
        )


CLAUDE_CODE = ForeignFormat("claude-code", "a Claude Code session")
TAU2_BENCH = ForeignFormat("tau2-bench", "a τ²-bench results file")
TAU_BENCH = ForeignFormat("tau-bench", "a τ-bench results file")
CODEX = ForeignFormat("codex", "a Codex CLI rollout")
CODEX_EARLY = ForeignFormat("codex", "an early Codex CLI rollout (session meta first, then bare response items)")
CODEX_CLI_JSON = ForeignFormat("codex", "a session of the TypeScript Codex CLI ({session, items})")
OPENHANDS = ForeignFormat("openhands", "an OpenHands trajectory")
FORMATS = (CLAUDE_CODE, TAU2_BENCH, TAU_BENCH, CODEX, CODEX_EARLY, CODEX_CLI_JSON, OPENHANDS)


def detect_foreign(path: Path | str) -> ForeignFormat | None:
    """The foreign format `path` is in, or None (a pi transcript, or nothing recognised).
    An unreadable file is None: the loader then reports it the way it always does."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None
    # a pi transcript (nearly every recording) says so on its first line: then the rest of the
    # head is neither decoded nor searched (cut after a line break, the UTF-8 decodes alike)
    lines = head[: _end_of_lines(head, HEAD_LINES)].decode("utf-8", errors="replace")
    first = _first_record(lines)
    if first is not None and first.get("type") == "session":
        return None
    return detect_foreign_head(head.decode("utf-8", errors="replace"))


def _end_of_lines(head: bytes, count: int) -> int:
    """Where the first `count` lines of `head` end (after the last line break among them; the
    whole head when it has fewer)."""
    end = -1
    for _ in range(count):
        found = head.find(b"\n", end + 1)
        if found < 0:
            return len(head)
        end = found
    return end + 1


def detect_foreign_head(head: str) -> ForeignFormat | None:
    """`detect_foreign` on the first `HEAD_BYTES` of a file, already decoded."""
    first = _first_record(head)
    if first is not None:
        if first.get("type") == "session":  # a pi header: whatever follows, it is pi's
            return None
        if _is_claude_code(first):
            return CLAUDE_CODE
        kind = first.get("type")
        codex = isinstance(kind, str) and kind in CODEX_TYPES
        if codex and isinstance(first.get("payload"), dict) and "id" not in first:
            return CODEX
        if _is_codex_early_meta(first):
            return CODEX_EARLY
        if isinstance(first.get("session"), dict) and isinstance(first.get("items"), list) and kind is None:
            return CODEX_CLI_JSON  # the document written on one line
        # a whole results object on one line is also a JSON object with no `type`
    if _CODEX_CLI_SESSION.match(head):
        return CODEX_CLI_JSON
    if _OBJECT_START.match(head) and (_TAU2_KEYS.search(head) or _is_tau2_simulation(head)):
        return TAU2_BENCH
    if _ARRAY_OF_OBJECTS.match(head) and _is_tau2_simulation(head) and not _TAU_TRAJECTORY.search(head):
        return TAU2_BENCH  # τ²-bench simulations written as a list (τ-bench's records hold a `traj`)
    if _ARRAY_OF_OBJECTS.match(head) and _TAU_RECORD.search(head) and _TAU_FIELDS.search(head):
        return TAU_BENCH
    starts = _ARRAY_OF_OBJECTS.match(head) or (_OBJECT_START.match(head) and _OPENHANDS_HISTORY.search(head))
    if starts and _OPENHANDS_SOURCE.search(head) and _OPENHANDS_KIND.search(head):
        return OPENHANDS
    return None


def _is_codex_early_meta(record: dict[str, Any]) -> bool:
    return (
        "type" not in record
        and isinstance(record.get("id"), str)
        and isinstance(record.get("timestamp"), str)
        and record.keys() <= CODEX_EARLY_META
    )


def _is_tau2_simulation(head: str) -> bool:
    """A τ²-bench simulation written on its own: its task, its messages and how it ended (a
    file of statistics about simulations names the last alone)."""
    return bool(_TAU2_SIMULATION.search(head)) and all(needed.search(head) for needed in _TAU2_SIMULATION_NEEDS)


def _first_record(head: str) -> dict[str, Any] | None:
    """The first JSON object among the head's first complete lines (a line cut off by the head's
    end is not complete)."""
    start = 0
    for _ in range(HEAD_LINES):
        end = head.find("\n", start)
        if end < 0:
            return None  # what is left is cut off by the head's end, or nothing
        line, start = head[start:end], end + 1
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def _is_claude_code(record: dict[str, Any]) -> bool:
    if not isinstance(record.get("type"), str) or "id" in record:
        return False
    return (
        bool(CLAUDE_CODE_FIELDS & record.keys())
        or (record["type"] in CLAUDE_CODE_TYPES and ("messageId" in record or "leafUuid" in record))
        # a log stripped of its chain fields (a viewer's test fixture): still Claude Code's records,
        # which the importer reads
        or (record["type"] in CLAUDE_CODE_TALK and isinstance(record.get("message"), dict))
    )
