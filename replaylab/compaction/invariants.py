"""replayCheck: the blocking invariants of DESIGN §9 on a compacted window.

Each check compares the window after a compaction with the recording it came from and returns
`Defect`s; none of them needs the compactor, so the QA pipeline reuses them on any compactor's
output (including the seeded mutants of `replaylab selftest`).

* MUTATION_DROPPED / MUTATION_ALTERED — every entry of a mutating event that the model saw
  before the compaction (the call's message and its result) is in the window afterwards, and
  byte-identical to the recording (compared as dumped JSON). An entry restated after the
  compaction (a new entry id carrying the same tool call) counts as kept only when its message is
  byte-identical; a changed copy is MUTATION_ALTERED.
* PAIR_BROKEN — every call (of a message pi would send) whose result exists in the recording is
  followed by it, with nothing in between that was not between them in the recording; no tool
  result without its call. A copy the compactor wrote holds the recorded calls: its results must
  follow it directly.
* THINKING_ALTERED — thinking blocks of every kept assistant message equal the recording's,
  signature included (providers reject altered signed thinking); a copy the compactor wrote
  (a new entry carrying the same tool calls) is held to the message it restates.
* REPLAY_FLAG_WRONG / MUTATED_IDS_WRONG — what the compactor reports vs the ledger.

Inputs are plain: the recording's root→leaf entries, windows as `WindowMessage`s (or the
`compactedWindow` JSON of a `CompactResult`), and ledger-ish data (a `Ledger`, or a classifier).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from replaylab.defects import Code, Defect
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import (
    MESSAGE_ADAPTER,
    AnyEntry,
    AssistantMessage,
    MessageEntry,
    ThinkingBlock,
    ToolResultMessage,
    dump_entry,
)
from replaylab.transcript.pairing import is_errored, message_calls


def as_window(window: Iterable[Any]) -> list[WindowMessage]:
    """`WindowMessage`s, or `compactedWindow` dicts ({entryId, protected, message})."""
    out = []
    for item in window:
        if isinstance(item, WindowMessage):
            out.append(item)
        elif isinstance(item, Mapping):
            message = item.get("message")
            out.append(
                WindowMessage(
                    item.get("entryId"), MESSAGE_ADAPTER.validate_python(message), bool(item.get("protected"))
                )
            )
        else:
            raise TypeError(f"not a window item: {type(item).__name__}")
    return out


def _dumped(message: Any) -> bytes:
    return orjson.dumps(dump_entry(message), option=orjson.OPT_SORT_KEYS)


def _recorded(path: Sequence[AnyEntry]) -> dict[str, Any]:
    return {e.id: e.message for e in path if isinstance(e, MessageEntry)}


def mutating_entries(items: Iterable[tuple[str | None, Any]], classifier: ToolClassifier) -> dict[str, tuple[str, str]]:
    """entry id → (tool call id, tool) for every entry of a mutating event among `items`
    ((entry id, message) pairs in order): the message holding the call and the result."""
    calls: dict[str, tuple[str, str, bool, str | None]] = {}
    results: dict[str, str | None] = {}
    for entry_id, message in items:
        for call in message_calls(message):
            calls[call.id] = (
                call.name,
                entry_id,
                is_errored(message),
                "mutating" if classifier.is_mutating(call.name, call.arguments) else None,
            )
        if isinstance(message, ToolResultMessage):
            results.setdefault(message.tool_call_id, entry_id)
    out: dict[str, tuple[str, str]] = {}
    for call_id, (tool, entry_id, errored, mutating) in calls.items():
        if not mutating or (errored and call_id not in results):
            continue
        if entry_id:
            out.setdefault(entry_id, (call_id, tool))
        if results.get(call_id):
            out.setdefault(results[call_id], (call_id, tool))  # type: ignore[index]
    return out


def ledger_entries(ledger: Any) -> dict[str, tuple[str, str]]:
    """Same mapping from a `Ledger` (main-session events only: child entry ids are elsewhere)."""
    out: dict[str, tuple[str, str]] = {}
    for event in getattr(ledger, "events", []):
        if getattr(event, "session", ""):
            continue
        for entry_id in (event.entry_id, event.result_entry_id):
            if entry_id:
                out.setdefault(entry_id, (event.tool_call_id, event.tool))
    return out


def _answers(message: Any) -> bool:
    """Whether a message is a tool result (it answers a call) rather than the call's message."""
    return isinstance(message, ToolResultMessage)


def _by_call(window: Sequence[WindowMessage]) -> dict[tuple[str, bool], WindowMessage]:
    """(tool call id, is a result) → the first window message carrying that call or answering it."""
    out: dict[tuple[str, bool], WindowMessage] = {}
    for item in window:
        message = item.message
        if isinstance(message, ToolResultMessage):
            out.setdefault((message.tool_call_id, True), item)
        else:
            for call in message_calls(message):
                out.setdefault((call.id, False), item)
    return out


def check_mutations_kept(
    recording_path: Sequence[AnyEntry],
    before: Sequence[WindowMessage],
    after: Sequence[WindowMessage],
    mutating: Mapping[str, tuple[str, str]],
) -> list[Defect]:
    """MUTATION_DROPPED / MUTATION_ALTERED for the mutating entries visible before compaction."""
    recorded = _recorded(recording_path)
    after_by_id = {item.entry_id: item for item in after if item.entry_id}
    restated = _by_call(after)
    defects = []
    for item in before:
        if item.entry_id not in mutating:
            continue
        call_id, tool = mutating[item.entry_id]
        kept = after_by_id.get(item.entry_id) or restated.get((call_id, _answers(item.message)))
        if kept is None:
            defects.append(
                Defect.of(
                    Code.MUTATION_DROPPED,
                    f"mutating event {tool} ({call_id}): entry {item.entry_id} is missing from the compacted window",
                    expected="kept verbatim",
                    actual="dropped",
                    entry_id=item.entry_id,
                    tool_call_id=call_id,
                    tool=tool,
                )
            )
            continue
        original = recorded.get(item.entry_id, item.message)
        # the very object is the same bytes: a working copy's parse may share the recording's messages
        if kept.message is original or _dumped(kept.message) == _dumped(original):
            continue
        defects.append(
            Defect.of(
                Code.MUTATION_ALTERED,
                f"mutating event {tool} ({call_id}): entry {item.entry_id} differs from the recording",
                expected=dump_entry(original),
                actual=dump_entry(kept.message),
                entry_id=item.entry_id,
                tool_call_id=call_id,
                tool=tool,
            )
        )
    return defects


def check_pairs(recording_path: Sequence[AnyEntry], after: Sequence[WindowMessage]) -> list[Defect]:
    """PAIR_BROKEN: call without its result, orphan result, or something in between."""
    index = {e.id: i for i, e in enumerate(recording_path)}
    recorded_calls: dict[str, str] = {}
    # (call entry id, call id) → index of the first result after that call: keyed by occurrence,
    # because a provider may reuse a call id later in a session
    result_at: dict[tuple[str, str], int] = {}
    pending: dict[str, str] = {}
    for i, entry in enumerate(recording_path):
        if not isinstance(entry, MessageEntry):
            continue
        for call in message_calls(entry.message):
            recorded_calls[call.id] = entry.id
            pending[call.id] = entry.id
        if isinstance(entry.message, ToolResultMessage) and entry.message.tool_call_id in pending:
            result_at[(pending.pop(entry.message.tool_call_id), entry.message.tool_call_id)] = i

    answered = {call_id for _, call_id in result_at}
    defects: list[Defect] = []
    reported: set[str] = set()

    def broken(call_id: str, message: str, entry_id: str | None, **extra: Any) -> None:
        if call_id in reported:
            return
        reported.add(call_id)
        defects.append(Defect.of(Code.PAIR_BROKEN, message, entry_id=entry_id, tool_call_id=call_id, **extra))

    open_calls: dict[str, str | None] = {}
    seen_calls: set[str] = set()
    for item in after:
        message = item.message
        if isinstance(message, ToolResultMessage):
            call_id = message.tool_call_id
            if call_id in open_calls:
                del open_calls[call_id]
            elif call_id in seen_calls:
                broken(
                    call_id,
                    f"tool result {item.entry_id} is separated from its call {call_id}",
                    item.entry_id,
                    expected="directly after its call",
                    actual="separated",
                )
            elif call_id in recorded_calls:
                broken(
                    call_id,
                    f"orphan tool result {item.entry_id}: its call {call_id} "
                    f"(entry {recorded_calls[call_id]}) is not in the window",
                    item.entry_id,
                    expected=f"call in entry {recorded_calls[call_id]}",
                    actual="missing",
                )
            continue
        if open_calls:
            position = index.get(item.entry_id or "", -1)
            for call_id, call_entry in list(open_calls.items()):
                start = index.get(call_entry or "", -1)
                if not (start < position < result_at.get((call_entry or "", call_id), -1)):
                    broken(
                        call_id,
                        f"entry {item.entry_id or '(summary)'} sits between call {call_id} and its result",
                        item.entry_id,
                        expected="results directly after the call",
                        actual="interleaved",
                    )
                    del open_calls[call_id]
        if is_errored(message):
            continue
        copy = item.entry_id not in index  # a copy the compactor wrote: its calls are the recorded calls
        for call in message_calls(message):
            seen_calls.add(call.id)
            if (item.entry_id or "", call.id) in result_at or (copy and call.id in answered):
                open_calls[call.id] = item.entry_id
    for call_id, entry_id in open_calls.items():
        broken(
            call_id,
            f"tool call {call_id} (entry {entry_id}) has no result in the window although the recording has one",
            entry_id,
            expected="its result",
            actual="missing",
        )
    return defects


def _thinking(message: Any) -> list[bytes]:
    if not isinstance(message, AssistantMessage):
        return []
    return [_dumped(b) for b in message.content if isinstance(b, ThinkingBlock)]


def check_thinking(recording_path: Sequence[AnyEntry], after: Sequence[WindowMessage]) -> list[Defect]:
    recorded = _recorded(recording_path)
    restates: dict[str, Any] = {}  # tool call id → the recorded assistant message that made the call
    for message in recorded.values():
        for call in message.tool_calls() if isinstance(message, AssistantMessage) else ():
            restates.setdefault(call.id, message)
    defects = []
    for item in after:
        original = recorded.get(item.entry_id or "")
        if original is None and isinstance(item.message, AssistantMessage):
            # a copy the compactor wrote in place of a recorded message carries its tool calls
            original = next((restates[c.id] for c in item.message.tool_calls() if c.id in restates), None)
        if not isinstance(original, AssistantMessage) or item.message is original:
            continue  # the very object has the very thinking blocks
        before, now = _thinking(original), _thinking(item.message)
        if before != now:
            defects.append(
                Defect.of(
                    Code.THINKING_ALTERED,
                    f"thinking blocks of entry {item.entry_id} differ from the recording "
                    f"({len(before)} recorded, {len(now)} in the window)",
                    expected=len(before),
                    actual=len(now),
                    entry_id=item.entry_id,
                )
            )
    return defects


def check_flags(
    replay_safe: bool | None, mutated_event_ids: Sequence[str] | None, ledger_ids: Sequence[str]
) -> list[Defect]:
    defects = []
    expected_safe = not ledger_ids
    if replay_safe is not None and replay_safe != expected_safe:
        defects.append(
            Defect.of(
                Code.REPLAY_FLAG_WRONG,
                "replaySafe disagrees with the ledger",
                expected=expected_safe,
                actual=replay_safe,
            )
        )
    if mutated_event_ids is not None and list(mutated_event_ids) != list(ledger_ids):
        missing = [i for i in ledger_ids if i not in mutated_event_ids]
        extra = [i for i in mutated_event_ids if i not in ledger_ids]
        what = f"{len(missing)} missing, {len(extra)} extra" if missing or extra else "same ids in a different order"
        defects.append(
            Defect.of(
                Code.MUTATED_IDS_WRONG,
                f"mutatedEventIds: {what}",
                expected=list(ledger_ids),
                actual=list(mutated_event_ids),
                detail={"missing": missing, "extra": extra},
            )
        )
    return defects


def replay_check(
    recording_path: Sequence[AnyEntry],
    before: Iterable[Any],
    after: Iterable[Any],
    *,
    classifier: ToolClassifier | None = None,
    ledger: Any = None,
    replay_safe: bool | None = None,
    mutated_event_ids: Sequence[str] | None = None,
) -> list[Defect]:
    """All blocking invariants of one compaction. Mutating entries come from `ledger` when given,
    else from `classifier` (default rules: OpenClaw's, unknown ⇒ mutating)."""
    before_w, after_w = as_window(before), as_window(after)
    if ledger is not None:
        mutating = ledger_entries(ledger)
        ledger_ids = list(ledger.mutated_event_ids)
    else:
        mutating = mutating_entries(
            ((e.id, e.message) for e in recording_path if isinstance(e, MessageEntry)), classifier or ToolClassifier()
        )
        ledger_ids = None
    defects = check_mutations_kept(recording_path, before_w, after_w, mutating)
    defects += check_pairs(recording_path, after_w)
    defects += check_thinking(recording_path, after_w)
    if ledger_ids is not None:
        defects += check_flags(replay_safe, mutated_event_ids, ledger_ids)
    return defects
