"""Which tool results OpenClaw 2026.9.6 counts as paired with a call (`classifyToolUseResultPairing`,
tool-result-pairing-Bky0eubt.mjs), for the one rule that needs it: a reset keeps, of the entries
from its `firstKeptEntryId` on, the user and assistant messages and only the tool results paired
with a call of that same slice (`selectResetKeptEntries`).

A "frame" is an assistant message with tool calls and the messages up to the next one. Inside
its frame a result claims the first unclaimed call of its id (a result without an id claims the
frame's only call); a result whose id no call of its frame has is looked for, across the frames
seen so far, among the calls still without a real result — claimed only when exactly one fits.
A synthetic "missing tool result" OpenClaw inserted for transcript repair gives way to a real one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.transcript.model import AnyEntry, AssistantMessage, MessageEntry, OpaqueBlock, ToolResultMessage
from replaylab.upstream.openclaw_2026_9_6 import (
    DEFAULT_MISSING_TOOL_RESULT_TEXT,
    SYNTHETIC_MISSING_TOOL_RESULT_DETAIL_KEY,
    TOOL_CALL_BLOCK_TYPES,
    TOOL_RESULT_ID_FIELDS,
)


@dataclass
class _Call:
    id: str
    name: str | None
    #: the index (into the messages) of the result that claimed it, and whether that is synthetic
    result: int | None = None
    synthetic: bool = False


@dataclass
class _Frame:
    calls: list[_Call] = field(default_factory=list)
    unclaimed: list[tuple[int, str | None, bool]] = field(default_factory=list)  # (index, id, synthetic)


def reset_kept_entries(entries: Sequence[AnyEntry]) -> list[AnyEntry]:
    """`selectResetKeptEntries(entries)`: the message entries a reset keeps from its kept slice."""
    messages = [(entry, entry.message) for entry in entries if isinstance(entry, MessageEntry)]
    paired = _paired_results([message for _, message in messages])
    return [
        entry
        for index, (entry, message) in enumerate(messages)
        if message.role in ("user", "assistant") or (message.role == "toolResult" and index in paired)
    ]


def _paired_results(messages: Sequence[Any]) -> set[int]:
    """Indexes of the tool results some call ends up claiming."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage) and _calls_of(m)]
    frames: list[_Frame] = []
    for n, start in enumerate(starts):
        frame = _Frame([_Call(call_id, name) for call_id, name in _calls_of(messages[start])])
        pending: dict[str, list[_Call]] = {}
        for call in frame.calls:
            pending.setdefault(call.id, []).append(call)
        synthetic_by_id: dict[str, list[_Call]] = {}
        end = starts[n + 1] if n + 1 < len(starts) else len(messages)
        for index in range(start + 1, end):
            message = messages[index]
            if getattr(message, "role", None) != "toolResult":
                continue
            result_id = _result_id(message)
            if result_id is None and len(frame.calls) == 1 and _legacy_name_fits(message, frame.calls[0]):
                result_id = frame.calls[0].id  # `normalizeLegacyToolResultId`
            synthetic = _is_synthetic(message)
            queue = pending.get(result_id) if result_id is not None else None
            if queue:
                call = queue.pop(0)
                call.result, call.synthetic = index, synthetic
                if synthetic:
                    synthetic_by_id.setdefault(call.id, []).append(call)
                continue
            if result_id is None or not any(c.id == result_id for c in frame.calls):
                frame.unclaimed.append((index, result_id, synthetic))
                continue
            if not synthetic:  # a duplicate: a real result replaces a synthetic one of the same id
                replaceable = synthetic_by_id.get(result_id)
                if replaceable:
                    call = replaceable.pop(0)
                    call.result, call.synthetic = index, False
        frames.append(frame)
    unresolved: dict[str, list[_Call]] = {}
    for frame in frames:
        for call in frame.calls:
            if call.result is None or call.synthetic:
                unresolved.setdefault(call.id, []).append(call)
        for index, result_id, synthetic in frame.unclaimed:
            candidates = [
                c
                for c in (unresolved.get(result_id, []) if result_id else [])
                if c.result is None or (c.synthetic and not synthetic)
            ]
            if len(candidates) == 1:
                candidates[0].result, candidates[0].synthetic = index, synthetic
    return {call.result for frame in frames for call in frame.calls if call.result is not None}


def _calls_of(message: AssistantMessage) -> list[tuple[str, str | None]]:
    out = []
    for block in message.content:
        data = _block_data(block)
        call_id = data.get("id")
        if data.get("type") in TOOL_CALL_BLOCK_TYPES and isinstance(call_id, str) and call_id:
            name = data.get("name")
            out.append((call_id, name if isinstance(name, str) else None))
    return out


def _block_data(block: Any) -> dict[str, Any]:
    if isinstance(block, dict):
        return block
    if type(block) is OpaqueBlock:  # an item as written: `readToolCall` reads its id and name whatever else it holds
        return block.value if isinstance(block.value, dict) else {}
    data = {
        "type": getattr(block, "type", None),
        "id": getattr(block, "id", None),
        "name": getattr(block, "name", None),
    }
    extra = getattr(block, "__pydantic_extra__", None) or {}
    for key in ("id", "name"):
        if data[key] is None and key in extra:
            data[key] = extra[key]
    return data


def _result_fields(message: Any) -> dict[str, Any]:
    extra = getattr(message, "__pydantic_extra__", None) or {}
    fields = dict(extra)
    if isinstance(message, ToolResultMessage):
        fields["toolCallId"] = message.tool_call_id
    return fields


def _result_id(message: Any) -> str | None:
    """`extractToolResultId`: the first non-blank id of the fields it reads."""
    fields = _result_fields(message)
    for name in TOOL_RESULT_ID_FIELDS:
        value = fields.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _legacy_name_fits(message: Any, call: _Call) -> bool:
    result_name = (getattr(message, "tool_name", None) or "").strip()
    call_name = (call.name or "").strip()
    return not (result_name and call_name and result_name != call_name)


def _is_synthetic(message: Any) -> bool:
    if not getattr(message, "is_error", False):
        return False
    details = getattr(message, "details", None)
    if isinstance(details, dict) and details.get(SYNTHETIC_MISSING_TOOL_RESULT_DETAIL_KEY) is True:
        return True
    content = getattr(message, "content", None)
    return isinstance(content, list) and any(
        getattr(b, "type", None) == "text" and getattr(b, "text", None) == DEFAULT_MISSING_TOOL_RESULT_TEXT
        for b in content
    )
