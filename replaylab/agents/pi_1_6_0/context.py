"""pi 1.6.0's context rebuild (`buildSessionProjection`, session-manager.js), over replaylab's
entry models.

* The context entries (`buildContextEntries`): the path, or, after a compaction, the newest
  compaction first, then the entries before it from its `firstKeptEntryId` on — system messages
  left out: the compaction carries their replay — then every entry after it. A compaction whose
  `firstKeptEntryId` is its own id (pi 1.6.0 writes that for a compaction keeping nothing) or
  names no earlier entry keeps nothing from before it.
* Context edits: the latest `context_edit` per `targetId` among the context entries (an edit of an
  entry outside them does nothing). `replacement: null` removes the target's messages; a
  replacement swaps the content of a user / assistant / tool-result / custom message (a string
  becomes one text block for an assistant or tool result).
* Per entry (`sessionEntryToContextMessages`): a message (its null or missing content read as `[]`, a
  system message's as `""`); a custom message with its `details` and the entry's time in epoch
  milliseconds (`content` absent: `[]`); a non-empty branch summary; the newest compaction yields
  its stored `systemMessage` (when it has one) and its summary. Older compactions inside the kept
  range, `usage`, `context_edit`, `custom`, labels and the other entries yield nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from replaylab.transcript.context import (
    PathFacts,
    WindowMessage,
    WindowStep,
    first_index_of,
    grown_steps,
    path_facts,
    protected_ids,
    rebuilt_steps,
    restatements_of,
)
from replaylab.transcript.context import custom_message as pi_custom_message
from replaylab.transcript.javascript import date_time_ms
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import (
    BLOCK_ADAPTER,
    MESSAGE_ADAPTER,
    AnyEntry,
    AssistantMessage,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
    CustomMessage,
    CustomMessageEntry,
    MessageEntry,
    TextBlock,
    ToolResultMessage,
    UserMessage,
)
from replaylab.transcript.object_content import written_as_null
from replaylab.upstream.pi_1_6_0 import (
    BLOCK_CONTENT_ROLES,
    CONTEXT_EDIT_TYPE,
    EDITABLE_ROLES,
    SYSTEM_ROLE,
)


@dataclass(frozen=True)
class Projected:
    """One context entry with the messages it yields (`SessionProjection.entries[i]`)."""

    index: int  # its index in the path
    entry: AnyEntry
    messages: tuple[Any, ...]


def extra(model: Any, name: str) -> Any:
    """A field a model does not declare, as read from the file (None when absent)."""
    extras = getattr(model, "__pydantic_extra__", None)
    return extras.get(name) if extras else None


def role_of(message: Any) -> str | None:
    return getattr(message, "role", None)


def is_system_entry(entry: AnyEntry) -> bool:
    return isinstance(entry, MessageEntry) and role_of(entry.message) == SYSTEM_ROLE


def context_entries(path: Sequence[AnyEntry], facts: PathFacts | None = None) -> list[int]:
    """`buildContextEntries`: path indexes of the context entries, in context order."""
    compaction = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), -1)
    if compaction < 0:
        return list(range(len(path)))
    kept_id = path[compaction].first_kept_entry_id  # type: ignore[union-attr]
    found = first_index_of(path, kept_id, compaction, facts)
    kept_from = compaction if found is None else found
    kept = [i for i in range(kept_from, compaction) if not is_system_entry(path[i])]
    return [compaction, *kept, *range(compaction + 1, len(path))]


def entry_messages(entry: AnyEntry) -> list[Any]:
    """`sessionEntryToContextMessages`: what one entry yields before any edit."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if role_of(message) == SYSTEM_ROLE and extra(message, "content") is None:
            return [_with_extra(message, content="")]
        if _null_or_missing_content(message):  # `content == null`: a null the load remembers, or none
            return [message.model_copy(update={"content": []})]
        return [message]
    if isinstance(entry, CustomMessageEntry):
        return [custom_message(entry)]
    if isinstance(entry, BranchSummaryEntry):
        if not entry.summary:
            return []
        return [
            BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=date_time_ms(entry.timestamp))
        ]
    if isinstance(entry, CompactionEntry):
        summary = compaction_summary(entry)
        system = extra(entry, "systemMessage")
        return [MESSAGE_ADAPTER.validate_python(system), summary] if system else [summary]
    return []


def _null_or_missing_content(message: Any) -> bool:
    """A user / assistant / tool-result message whose `content` was written null or not at all."""
    if not isinstance(message, (AssistantMessage, ToolResultMessage, UserMessage)):
        return False
    return "content" not in message.__pydantic_fields_set__ or written_as_null(message.content)


def custom_message(entry: CustomMessageEntry) -> CustomMessage:
    """`createCustomMessage(customType, content ?? [], display, details, timestamp)`: pi 0.73.1's
    message (`transcript.context.custom_message`), a missing content read as `[]`."""
    message = pi_custom_message(entry)
    if "content" not in entry.model_fields_set:
        message.content = []
    return message


def compaction_summary(entry: CompactionEntry) -> CompactionSummaryMessage:
    made: dict[str, Any] = {"summary": entry.summary, "timestamp": date_time_ms(entry.timestamp)}
    if "tokens_before" in entry.model_fields_set:
        made["tokens_before"] = entry.tokens_before
    return CompactionSummaryMessage(**made)


def edits_of(path: Sequence[AnyEntry], indexes: Sequence[int]) -> dict[str, AnyEntry]:
    """The latest context edit per target among the context entries."""
    edits: dict[str, AnyEntry] = {}
    for i in indexes:
        entry = path[i]
        if entry.type == CONTEXT_EDIT_TYPE and isinstance(target := extra(entry, "targetId"), str):
            edits[target] = entry
    return edits


def edited(messages: list[Any], edit: AnyEntry | None) -> list[Any]:
    """`projectContextEntry`: the messages with the entry's latest edit applied."""
    if edit is None:
        return messages
    replacement = extra(edit, "replacement")
    if replacement is None:
        return []
    content = replacement.get("content") if isinstance(replacement, dict) else None
    out = []
    for message in messages:
        role = role_of(message)
        if role not in EDITABLE_ROLES:
            out.append(message)
            continue
        if isinstance(content, str) and role in BLOCK_CONTENT_ROLES:
            value: Any = [TextBlock(type="text", text=content)]
        elif isinstance(content, list):
            value = [BLOCK_ADAPTER.validate_python(block) for block in content]
        else:
            value = content
        copy = message.model_copy(update={"content": value})
        copy.__pydantic_fields_set__.add("content")
        out.append(copy)
    return out


def projection(path: Sequence[AnyEntry], facts: PathFacts | None = None) -> list[Projected]:
    """`buildSessionProjection(path)`: each context entry with the messages it yields."""
    indexes = context_entries(path, facts)
    edits = edits_of(path, indexes)
    out = []
    for position, i in enumerate(indexes):
        entry = path[i]
        if isinstance(entry, CompactionEntry) and position > 0:
            messages: list[Any] = []  # an older compaction inside the kept range
        else:
            messages = edited(entry_messages(entry), edits.get(entry.id))
        out.append(Projected(i, entry, tuple(messages)))
    return out


def build_context(
    path: Sequence[AnyEntry], facts: PathFacts | None = None, memo: ItemMemo | None = None
) -> list[WindowMessage]:
    """The context pi 1.6.0 sends for a root → leaf path, each message with its entry. What pi shows
    is its rule alone; replaylab only knows more about the entries its safeguard protected
    (`protectedEntryIds`, marked) and those a compaction restated after itself
    (`transcript.restated`: the recorded entry each one is; with an item's `memo`, each judged once
    for the item)."""
    found = projection(path, facts)
    keep = set(protected_ids(found[0].entry)) if found and isinstance(found[0].entry, CompactionEntry) else set()
    at = found[0].index if keep else -1
    sources, truncated = restatements_of(path, facts, memo)
    window = []
    for item in found:
        source = sources.get(item.entry.id)
        protected = (item.index < at and item.entry.id in keep) or (item.index > at >= 0 and source in keep)
        for message in item.messages:
            window.append(WindowMessage(item.entry.id, message, protected, source, item.entry.id in truncated))
    return window


def context_steps(path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
    """`build_context(path[:end])` for each of the ascending `ends`, as steps: a stretch of the
    path with no compaction and no context edit only adds each of its entries' messages (with an
    earlier edit of it applied); one with either is built whole."""
    facts = path_facts(path)
    if facts is None:
        yield from rebuilt_steps(build_context, path, ends)
        return

    def rebuilt(prefix: Sequence[AnyEntry]) -> tuple[list[WindowMessage], set[str], dict[str, AnyEntry]]:
        indexes = context_entries(prefix, facts)
        first = prefix[indexes[0]] if indexes else None
        keep = set(protected_ids(first)) if isinstance(first, CompactionEntry) else set()
        return build_context(prefix, facts), keep, edits_of(prefix, indexes)

    def messages(entry: AnyEntry, edits: dict[str, AnyEntry]) -> list[Any]:
        return edited(entry_messages(entry), edits.get(entry.id))

    yield from grown_steps(
        path,
        ends,
        facts,
        starts_anew=lambda e: isinstance(e, CompactionEntry) or e.type == CONTEXT_EDIT_TYPE,
        rebuilt=rebuilt,
        messages=messages,
    )


def _with_extra(message: Any, **values: Any) -> Any:
    copy = message.model_copy()
    copy.__pydantic_extra__ = {**(message.__pydantic_extra__ or {}), **values}
    return copy


__all__ = ["Projected", "build_context", "context_entries", "context_steps", "entry_messages", "projection"]
