"""No finding for a call that was blocked only because an earlier call was blocked.

When the compacted run blocks a mutating call (SIDE_EFFECT_ESCAPED), the call never runs and its
recorded result never reaches the replay window. A later call whose lost values (`⟨lost:N⟩`)
the recording last showed in that very result lost them because of the first block, not because
of compaction: it is the same loss seen again. Such a later finding is folded into the one of
the call that was blocked first (`detail.cascade`: the calls it caused to be blocked too), so the
report counts each loss once. A finding with any lost value of its own — one the recording last
showed elsewhere — stays a finding.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from replaylab.defects import Code, Defect
from replaylab.json_dump import compact_json
from replaylab.replay.trace import RunTrace
from replaylab.transcript.load import Transcript
from replaylab.transcript.model import MessageEntry, ToolResultMessage

#: a lost value's marker (`replaylab.replay.agent.grounding.MARKER`)
_MARKER = re.compile(r"⟨lost:\d+⟩")


def fold_cascades(
    defects: Sequence[Defect], compacted: RunTrace, lost: Sequence[Any], transcript: Transcript
) -> list[Defect]:
    """`defects` without the blocked calls whose every lost value only a blocked call's recorded
    result held; each is listed under the finding of the call blocked first instead."""
    blocked = {call.tool_call_id for turn in compacted.turns for call in turn.tool_calls if call.source == "blocked"}
    if len(blocked) < 2:
        return list(defects)
    seen_in = {record.marker: record.seen_entry_id for record in reversed(lost)}  # the first record of each marker
    results = _result_call_ids(transcript, {entry for entry in seen_in.values() if entry})
    index_of_call = {d.where.tool_call_id: i for i, d in enumerate(defects) if d.code == Code.SIDE_EFFECT_ESCAPED}
    parent: dict[int, int] = {}
    for index, defect in enumerate(defects):
        if defect.code == Code.SIDE_EFFECT_ESCAPED:
            source = _source_call(defect, seen_in, results)
            if source in blocked and index_of_call.get(source, index) < index:  # an earlier block
                parent[index] = index_of_call[source]
    caused: dict[int, list[Defect]] = {}
    for index in parent:
        root = parent[index]
        while root in parent:  # a chain of blocks (each parent earlier): fold into the first
            root = parent[root]
        caused.setdefault(root, []).append(defects[index])
    return [_with_cascade(d, caused.get(i, [])) for i, d in enumerate(defects) if i not in parent]


def _source_call(defect: Defect, seen_in: dict[str, str | None], results: dict[str, str]) -> str | None:
    """The call whose recorded result last held every lost value of this finding, or None when
    a lost value came from anywhere else (or the finding lost none)."""
    markers = set(_MARKER.findall(compact_json(defect.actual) if defect.actual is not None else ""))
    sources = {results.get(seen_in.get(marker) or "") for marker in markers}
    return sources.pop() if len(sources) == 1 else None


def _result_call_ids(transcript: Transcript, entry_ids: set[str]) -> dict[str, str]:
    """Entry id → the tool call id it answers, for the given tool result entries."""
    out = {}
    for entry in transcript.entries:
        if entry.id in entry_ids and isinstance(entry, MessageEntry) and isinstance(entry.message, ToolResultMessage):
            out[entry.id] = entry.message.tool_call_id
    return out


def _with_cascade(defect: Defect, caused: list[Defect]) -> Defect:
    if not caused:
        return defect
    cascade = [{"tool_call_id": d.where.tool_call_id, "tool": d.where.tool, "turn": d.where.turn} for d in caused]
    message = f"{defect.message}; blocked with it, for want of its result: {len(caused)} later call" + (
        "s" if len(caused) > 1 else ""
    )
    return defect.model_copy(update={"detail": {**defect.detail, "cascade": cascade}, "message": message})
