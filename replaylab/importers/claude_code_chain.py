"""How Claude Code links its records back into a conversation: the branches a rewind leaves
behind, and the records a compaction keeps after its summary.

Claude Code does not read a session in file order. It rebuilds the conversation from its newest
leaf along `parentUuid` (@anthropic-ai/claude-code 2.1.100, cli.js: the leaf rule of `Vt`/`Tt`,
the walk `Q36`, its parallel-call recovery `QcY` and its parent fallback `gcY`;
`upstream/claude_code_transcript.py` holds the constants). A rewind (Esc Esc, or editing an
earlier prompt) starts a new branch from an earlier record, and the old branch stays in the file:
its prompts and answers are no longer in the model's context, although its tool calls did run.

`abandoned_positions` finds those branches so the importer can keep them as pi keeps its own: in
the file, off the leaf path. Only a prompt (a user record that answers no tool call) off the
rebuilt conversation whose parent is on it starts such a branch, as a rewind does; a side record
(a hook's `system` note, a `progress` tick) is not a branch and stays where it is.

Where Claude Code stops, replaylab goes on: Claude Code drops everything before the last compact
boundary when it resumes, and replaylab keeps that history (the recording's own compaction is
audited against it). A boundary is followed to its `logicalParentUuid` when that record comes
before it in the file, else to the newest leaf before it; so is 1.0.x's summary, which starts a
chain of its own.

`preserved_uuids` reads what a 2.1.x compact boundary keeps verbatim (`preservedMessages`, or the
older `preservedSegment`): Claude Code relinks those records after the summary (2.1.100 `zrK`,
2.1.332 `kRr`/`wRr`), so the compaction entry keeps them, as pi's `firstKeptEntryId` keeps its own.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from replaylab.importers.claude_code_blocks import has_tool_result, message_id
from replaylab.importers.common import normalize_timestamp
from replaylab.upstream.claude_code_transcript import CONVERSATION_TYPES, PARENT_FALLBACK_SECONDS

Records = list[tuple[int, dict[str, Any]]]


def abandoned_positions(records: Records) -> set[int]:
    """Positions in `records` of the records on a branch a rewind left; empty when the file has
    none, or when its leaf is not its last conversation record (no rebuild to trust)."""
    chain = _Chain(records)
    on_chain = chain.rebuilt()
    if not on_chain:
        return set()
    roots = [
        position
        for position, record in chain.conversation.items()
        if position not in on_chain
        and record["type"] == "user"
        and not has_tool_result(record)
        and chain.parent_position(position) in on_chain
    ]
    if not roots:
        return set()
    abandoned = chain.descendants(roots) - on_chain
    last_conversation = max(chain.conversation)
    if last_conversation in abandoned:
        return set()
    return abandoned


class _Chain:
    """One file's records as Claude Code links them, by position in the file."""

    def __init__(self, records: Records):
        self.records = records
        #: position → record, for the records Claude Code links
        self.conversation: dict[int, dict[str, Any]] = {}
        self.by_uuid: dict[str, int] = {}
        #: position → its parent's uuid, a `progress` record bridged to its own parent as `Vt` does
        self.parent_uuid: dict[int, str | None] = {}
        bridged: dict[str, str | None] = {}
        for position, (_, record) in enumerate(records):
            uuid = record.get("uuid")
            given = record.get("parentUuid")
            parent = given if isinstance(given, str) else None
            if parent is not None and parent in bridged:
                parent = bridged[parent]
            if record.get("type") == "progress" and isinstance(uuid, str):
                bridged[uuid] = parent
            elif isinstance(kind := record.get("type"), str) and kind in CONVERSATION_TYPES and isinstance(uuid, str):
                self.conversation[position] = record
                self.parent_uuid[position] = parent
                self.by_uuid.setdefault(uuid, position)
        self.times: dict[int, datetime | None] = {
            position: normalize_timestamp(record.get("timestamp")) for position, record in self.conversation.items()
        }
        self._by_time: list[tuple[float, int]] | None = None

    def parent_position(self, position: int) -> int | None:
        parent = self.parent_uuid[position]
        return None if parent is None else self.by_uuid.get(parent)

    def leaves(self, before: int | None = None) -> list[int]:
        """The user/assistant records each childless record walks up to (`Vt`'s `leafUuids`)."""
        parents = set(self.parent_uuid.values())
        found: list[int] = []
        for position, record in self.conversation.items():
            if before is not None and position >= before:
                continue
            if record.get("uuid") in parents:
                continue
            seen: set[int] = set()
            current: int | None = position
            while current is not None and current not in seen:
                seen.add(current)
                if self.conversation[current]["type"] in ("user", "assistant"):
                    found.append(current)
                    break
                current = self.parent_position(current)
        return sorted(set(found))

    def newest(self, positions: Iterable[int]) -> int | None:
        """The newest, a tie going to the one later in the file. `Tt` keeps the first of a tie,
        which can resume a session short of its last record (an interrupted turn writes its tool
        results and its interruption at one instant); the later is the one written last."""
        best: int | None = None
        best_time: datetime | None = None
        for position in positions:
            moment = self.times[position]
            if moment is None or self.conversation[position].get("isSidechain"):
                continue
            if best_time is None or moment >= best_time:
                best, best_time = position, moment
        return best

    def rebuilt(self) -> set[int]:
        """The positions of the conversation Claude Code rebuilds, followed past compact boundaries."""
        current = self.newest(self.leaves())
        chain: set[int] = set()
        while current is not None and current not in chain:
            chain.add(current)
            current = self._parent_on_walk(current, chain)
        return chain | self._parallel_records(chain)

    def _parent_on_walk(self, position: int, chain: set[int]) -> int | None:
        record = self.conversation[position]
        parent = self.parent_uuid[position]
        if parent is not None:
            known = self.by_uuid.get(parent)
            return known if known is not None else self._near_in_time(position, chain)
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            logical = record.get("logicalParentUuid")
            known = self.by_uuid.get(logical) if isinstance(logical, str) else None
            # a logical parent written after the boundary (a preserved record relinked after the
            # summary) is not what came before it: the newest leaf before it is
            if known is not None and known < position and known not in chain:
                return known
            return self.newest(self.leaves(before=position))
        if root_compact_summary(record):
            # 1.0.x's compaction, a boundary of its own that names no logical parent
            return self.newest(self.leaves(before=position))
        return None

    def _near_in_time(self, position: int, chain: set[int]) -> int | None:
        """`gcY`: the newest record not yet walked at most `PARENT_FALLBACK_SECONDS` older (the
        first in the file of equals), found in the records sorted by time."""
        moment = self.times[position]
        if moment is None:
            return None
        if self._by_time is None:
            self._by_time = sorted((t.timestamp(), p) for p, t in self.times.items() if t is not None)
        at = moment.timestamp()
        index = bisect.bisect_right(self._by_time, (at, len(self.records)))
        best: tuple[float, int] | None = None
        while index > 0:
            index -= 1
            other_time, other = self._by_time[index]
            if at - other_time > PARENT_FALLBACK_SECONDS or (best is not None and other_time < best[0]):
                break
            if other not in chain:
                best = (other_time, other)  # walking back, an equal time earlier in the file wins
        return None if best is None else best[1]

    def _parallel_records(self, chain: set[int]) -> set[int]:
        """`QcY`: the records of one API response, and the tool results answering them, that the
        single-parent walk left out."""
        message_ids = {message_id(self.conversation[p]) for p in chain if self.conversation[p]["type"] == "assistant"}
        message_ids.discard(None)  # a record with neither id is a response of its own
        assistants = {
            p for p, r in self.conversation.items() if r["type"] == "assistant" and message_id(r) in message_ids
        }
        assistant_uuids = {self.conversation[p].get("uuid") for p in assistants}
        results = {
            p
            for p, r in self.conversation.items()
            if r["type"] == "user" and self.parent_uuid[p] in assistant_uuids and has_tool_result(r)
        }
        return assistants | results

    def descendants(self, roots: list[int]) -> set[int]:
        """`roots` and every record below them, side records (`progress` …) included."""
        children: dict[str, list[int]] = {}
        for position, (_, record) in enumerate(self.records):
            parent = record.get("parentUuid")
            if isinstance(parent, str):
                children.setdefault(parent, []).append(position)
        found = set(roots)
        stack = list(roots)
        while stack:
            uuid = self.records[stack.pop()][1].get("uuid")
            for child in children.get(uuid, []) if isinstance(uuid, str) else []:
                if child not in found:
                    found.add(child)
                    stack.append(child)
        return found


def preserved_uuids(meta: dict[str, Any], records: Records) -> list[str]:
    """The records a compact boundary keeps verbatim after its summary, head first: its
    `preservedMessages.uuids`, else its `preservedSegment` walked from `tailUuid` to `headUuid`
    along `parentUuid` (2.1.x `wRr`; a walk that never reaches the head keeps nothing, as there)."""
    listed = meta.get("preservedMessages")
    if isinstance(listed, dict):
        uuids = listed.get("uuids")
        if isinstance(uuids, list) and all(isinstance(u, str) for u in uuids):
            return list(uuids)
    segment = meta.get("preservedSegment")
    if not isinstance(segment, dict):
        return []
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    by_uuid = {r.get("uuid"): r for _, r in records if isinstance(r.get("uuid"), str)}
    walked: list[str] = []
    current = by_uuid.get(tail) if isinstance(tail, str) else None
    while current is not None and current["uuid"] not in walked:
        walked.append(current["uuid"])
        if current["uuid"] == head:
            return walked[::-1]
        parent = current.get("parentUuid")
        current = by_uuid.get(parent) if isinstance(parent, str) else None
    return []


def root_compact_summary(record: dict[str, Any]) -> bool:
    """1.0.x's compaction: no boundary; its summary starts a chain (`parentUuid: null`), as 1.0.56's
    `insertMessageChain` starts every chain it writes."""
    return record["type"] == "user" and record.get("isCompactSummary") is True and record.get("parentUuid") is None
