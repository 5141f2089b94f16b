"""OpenClaw 2026.9.6's context rebuild (`buildSessionContext`, session-D9cHHQGH.mjs:
packages/agent-core/src/harness/session/session.ts), over replaylab's entry models.

* The entries it indexes: one that fails its entry schema (session-entry-codec) is kept aside,
  off every path (`indexed`) — a timestamp that is there and not a string among the failures,
  which pi, checking no type, does not have.
* The boundary is the last `reset` or `compaction` on the path. Its `firstKeptEntryId` keeps the
  entries from there up to the boundary only when that entry lies before it (a compaction naming
  itself, a later entry or nothing keeps nothing before it).
* A compaction yields its summary first; a reset yields nothing, and of its kept range only the
  user / assistant messages and their paired tool results survive (`pairing`), an
  `excludeFromContext` message among them included.
* Then every later `message` (except one marked `excludeFromContext`), `custom_message` and
  non-empty `branch_summary` entry, in path order. Older boundaries, `custom`, labels and the other
  entries never become messages.
* The messages it makes carry the entry's time as epoch milliseconds; a kept assistant message from
  before the boundary loses a compaction replay checkpoint (`providerReplay`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import Any

from replaylab.agents.openclaw_2026_9_6.pairing import reset_kept_entries
from replaylab.transcript.context import (
    PathFacts,
    WindowMessage,
    WindowStep,
    first_index_of,
    grown_steps,
    path_facts,
    protected_ids,
    read_path_facts,
    rebuilt_steps,
    restatements_of,
)
from replaylab.transcript.javascript import date_time_ms, number_or_none
from replaylab.transcript.leaf_controls import reads_as_reset
from replaylab.transcript.memo import ItemMemo, identity  # not id(): the socket guard's audit hook sees every id()
from replaylab.transcript.model import (
    AnyEntry,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryEntry,
    BranchSummaryMessage,
    CompactionEntry,
    CompactionSummaryMessage,
    CustomEntry,
    CustomMessage,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    OpaqueBlock,
    ResetEntry,
    SessionInfoEntry,
    TextBlock,
    ThinkingLevelChangeEntry,
    ToolResultMessage,
)
from replaylab.transcript.object_content import ObjectContent, written_as_null
from replaylab.transcript.unlinked_parent import written_parent
from replaylab.upstream.openclaw_2026_9_6 import COMPACTION_REPLAY_CHECKPOINT_TYPES, RESET_REASONS


def extra(model: Any, name: str) -> Any:
    """A field a model does not declare, as read from the file (None when absent)."""
    extras = getattr(model, "__pydantic_extra__", None)
    return extras.get(name) if extras else None


def excluded(message: Any) -> bool:
    """`message.excludeFromContext === true`."""
    if isinstance(message, BashExecutionMessage):
        return message.exclude_from_context is True
    return extra(message, "excludeFromContext") is True


def indexed(entry: AnyEntry) -> bool:
    """Whether OpenClaw's entry schema recognizes the entry (`isIndexedSessionEntry`); one it does
    not is kept opaque, on no path and in no context. Asked of every entry of every path walked,
    so it reads as little as it can: the fields set only when a field's value leaves it open
    (without pydantic's property), and a plain message entry (nearly every entry) first. The
    schema's `parentId: string | null` fails only for an entry the load read as a root from a
    parentId of another type (`transcript.unlinked_parent`)."""
    if not entry.id or written_parent(entry):  # `parentId: string | null`: one of another type fails
        return False
    if type(entry.timestamp) is not str and "timestamp" in entry.__pydantic_fields_set__:
        return False  # `timestamp: string().optional()`: absent, or a string (not null, not a number)
    if type(entry) is MessageEntry or isinstance(entry, MessageEntry):
        return _readable_message(entry.message)
    fields = entry.__pydantic_fields_set__
    if isinstance(entry, CompactionEntry):
        return bool(entry.first_kept_entry_id) and number_or_none(entry.tokens_before) is not None
    if isinstance(entry, ResetEntry):
        return reads_as_reset(entry.reason, entry.first_kept_entry_id if "first_kept_entry_id" in fields else "")
    if isinstance(entry, BranchSummaryEntry):
        return isinstance(entry.from_id, str) and "summary" in fields
    if isinstance(entry, CustomEntry):
        return bool(entry.custom_type)
    if isinstance(entry, CustomMessageEntry):
        readable = bool(entry.custom_type) and "content" in fields and isinstance(entry.display, bool)
        return readable and _readable_content(entry.content)
    if isinstance(entry, ModelChangeEntry):
        return bool(entry.provider) and bool(entry.model_id)
    if isinstance(entry, ThinkingLevelChangeEntry):
        return bool(entry.thinking_level)
    if isinstance(entry, LabelEntry):
        return bool(entry.target_id)
    return isinstance(entry, SessionInfoEntry)


def _readable_message(message: Any) -> bool:
    role = getattr(message, "role", None)
    fields = message.__pydantic_fields_set__
    if role == "user" or role == "assistant":
        # `_readable_content` written out: asked of nearly every entry, which holds no opaque item
        content = message.content
        return "content" in fields and (
            type(content) is str
            or (OpaqueBlock not in map(type, content) and not written_as_null(content))
            or _readable_content(content)
        )
    if isinstance(message, ToolResultMessage):
        # `isError: boolean()`: an absent one fails it, though the model reads it as false
        readable = isinstance(message.tool_name, str) and "is_error" in fields and type(message.is_error) is bool
        return readable and "content" in fields and not written_as_null(message.content)
    if role == "custom":
        if "content" not in fields or not _readable_content(message.content):
            return False
        # `normalizePersistedLegacyHookMessage` gives an absent customType (not a null one) "hook"
        return isinstance(message.custom_type, str) or "custom_type" not in fields
    if isinstance(message, BashExecutionMessage):
        return "output" in fields
    return False


def _readable_content(content: Any) -> bool:
    """`readableContentSchema`: a string, or objects each with a string `type` (a tool result's
    content is `array(unknown())`: any item). Only an opaque item (`transcript.opaque_content`)
    can fail it."""
    if written_as_null(content):  # neither a string nor a list
        return False
    if type(content) is str or OpaqueBlock not in map(type, content):  # nearly every message: no scan in Python
        return True
    return all(type(block) is not OpaqueBlock or block.typed for block in content)


def why_kept_aside(entry: AnyEntry) -> str:
    """Which part of OpenClaw's entry schema an entry `indexed` rejects fails, in words (asked
    only of the entries kept aside, for the item's note)."""
    from replaylab.differences import json_type  # its import brings the scrubber: only for the note

    fields = entry.__pydantic_fields_set__
    if not entry.id:
        return "its id is empty"
    if written_parent(entry):
        return "its parentId is neither a string nor null"
    if type(entry.timestamp) is not str and "timestamp" in fields:
        return f"its timestamp is a JSON {json_type(entry.timestamp)}, not a string"
    if isinstance(entry, MessageEntry):
        role = getattr(entry.message, "role", "?")
        if written_as_null(getattr(entry.message, "content", None)):
            return f"its {role} message's content is null"
        if role != "toolResult" and not _readable_content(getattr(entry.message, "content", "")):
            return f"its {role} message's content holds an item that is no object with a string type"
        return f"its {role} message lacks a field OpenClaw reads, or holds one of another type"
    if isinstance(entry, CompactionEntry):
        return "a compaction needs a firstKeptEntryId and a number tokensBefore"
    if isinstance(entry, ResetEntry):
        return f"a reset's reason must be one of {', '.join(sorted(RESET_REASONS))}"
    if isinstance(entry, CustomMessageEntry) and entry.custom_type and type(entry.display) is not bool:
        if "display" not in fields:
            return "a custom message needs a display (a boolean)"
        return f"its display is a JSON {json_type(entry.display)}, not a boolean"
    if entry.type == "leaf":
        return "a leaf control: OpenClaw's navigation record, which chooses the leaf and is no entry of its own"
    return f"its {entry.type} entry lacks a field OpenClaw's schema wants, or holds one of another type"


def indexed_path(path: Sequence[AnyEntry]) -> list[AnyEntry]:
    """The path as OpenClaw walks it: through an entry it keeps opaque, without it."""
    return [entry for entry in path if indexed(entry)]


@dataclass(frozen=True)
class WalkedPath:
    """A path as OpenClaw walks it (`indexed_path`), with where each of its entries stood and its facts."""

    entries: list[AnyEntry]
    #: each walked entry's index in the path it was walked from
    positions: list[int]
    #: the walked path's facts (`transcript.context.path_facts`; None: an id occurs twice on it)
    facts: PathFacts | None


def walked_path(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> WalkedPath:
    """`indexed_path(path)` and its facts, reading each entry once: a long path's entries lie far
    apart in memory, so every pass over them costs more than the work it does. With an item's
    `memo`, each restatement judged once for the item."""
    entries: list[AnyEntry] = []
    positions: list[int] = []
    ids: list[str] = []
    restating = False
    for position, entry in enumerate(path):
        if indexed(entry):
            entries.append(entry)
            positions.append(position)
            ids.append(entry.id)
            restating = restating or entry.restates is not None
    return WalkedPath(entries, positions, read_path_facts(entries, ids, restating, memo))


def boundary_of(path: Sequence[AnyEntry], facts: PathFacts | None = None) -> tuple[int, int]:
    """`resolveSessionContextWindow`: (index of the last reset / compaction or -1, the first kept
    index — its `firstKeptEntryId`'s, when before the boundary, else the boundary's)."""
    boundary = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], (ResetEntry, CompactionEntry))), -1)
    if boundary < 0:
        return -1, -1
    kept_id = path[boundary].first_kept_entry_id  # type: ignore[union-attr]
    first_kept = first_index_of(path, kept_id, boundary, facts) if kept_id else None
    return boundary, boundary if first_kept is None else first_kept


def context_entries(path: Sequence[AnyEntry], facts: PathFacts | None = None) -> list[tuple[AnyEntry, str]]:
    """`iterateSessionContextEntries`: (entry, "current" | "retained" | "reset-retained") in
    context order, the boundary first (a reset among them yields no message)."""
    boundary, first_kept = boundary_of(path, facts)
    reset_kept: set[int] | None = None
    if boundary >= 0 and isinstance(path[boundary], ResetEntry):
        reset_kept = {identity(e) for e in reset_kept_entries(path[first_kept:boundary])}
    out: list[tuple[AnyEntry, str]] = [(path[boundary], "current")] if boundary >= 0 else []
    # nothing before the first kept entry is in the context: a long session's window is read from there
    for index in range(first_kept if boundary >= 0 else 0, len(path)):
        entry = path[index]
        retained = index < boundary
        if index == boundary or (
            retained and (index < first_kept or (reset_kept is not None and identity(entry) not in reset_kept))
        ):
            continue
        if not isinstance(entry, (MessageEntry, CustomMessageEntry, BranchSummaryEntry)):
            continue
        kept_by_reset = reset_kept is not None and identity(entry) in reset_kept
        if isinstance(entry, MessageEntry) and not kept_by_reset and excluded(entry.message):
            continue
        out.append((entry, "reset-retained" if kept_by_reset else "retained" if retained else "current"))
    return out


def project(entry: AnyEntry) -> Any | None:
    """`projectSessionEntryMessage`: the message an entry stands for (None: none)."""
    if isinstance(entry, MessageEntry):
        return None if excluded(entry.message) else entry.message
    if isinstance(entry, CustomMessageEntry):
        return custom_message(entry)
    if isinstance(entry, BranchSummaryEntry):
        return BranchSummaryMessage(
            summary=entry.summary, from_id=entry.from_id, timestamp=date_time_ms(entry.timestamp)
        )
    if isinstance(entry, CompactionEntry):
        return compaction_summary(entry)
    return None


def custom_message(entry: CustomMessageEntry) -> CustomMessage:
    fields: dict[str, Any] = {"custom_type": entry.custom_type, "content": entry.content}
    if "display" in entry.model_fields_set:
        fields["display"] = entry.display
    if "details" in entry.model_fields_set and entry.details is not None:
        fields["details"] = entry.details
    return CustomMessage(**fields, timestamp=date_time_ms(entry.timestamp))


def compaction_summary(entry: CompactionEntry) -> CompactionSummaryMessage:
    return CompactionSummaryMessage(
        summary=entry.summary,
        tokens_before=number_or_none(entry.tokens_before),  # a number, as its entry schema wants, as written
        timestamp=date_time_ms(entry.timestamp),
    )


#: the customType OpenClaw's file reader gives a `custom` message written without one
#: (`normalizePersistedLegacyHookMessage`, transcript-payload-*.mjs: an older hook message's form)
LEGACY_HOOK_CUSTOM_TYPE = "hook"


def as_loaded(message: Any) -> Any:
    """The message as OpenClaw's JSONL reader holds it (`normalizeLoadedFileEntry`): a tool result
    or assistant message whose content is a string is one text block (an assistant's without its
    compaction replay checkpoint), a tool result whose content is an object a list of it; a
    `custom` message without a customType (`normalizePersistedLegacyHookMessage`) a hook's."""
    if isinstance(message, ToolResultMessage):
        content = message.content
        if isinstance(content, str):
            # `type` given: a block's default is left out of its dump, and OpenClaw's block holds it
            return message.model_copy(update={"content": [TextBlock(type="text", text=content)]})
        if type(content) is ObjectContent:  # its dump is the object as written: OpenClaw's is a list
            return message.model_copy(update={"content": list(content)})
    elif isinstance(message, AssistantMessage) and type(message.content) is ObjectContent:
        # a string content, read as one text block; the reader strips a replay checkpoint with it
        return without_replay_checkpoint(message.model_copy(update={"content": list(message.content)}))
    elif isinstance(message, CustomMessage) and "custom_type" not in message.__pydantic_fields_set__:
        return message.model_copy(update={"custom_type": LEGACY_HOOK_CUSTOM_TYPE})
    return message


def without_replay_checkpoint(message: Any) -> Any:
    """`stripCompactionReplayCheckpoint`: an assistant message kept from before the boundary."""
    replay = extra(message, "providerReplay")
    if isinstance(message, AssistantMessage) and isinstance(replay, dict):
        kind = replay.get("type")
        if isinstance(kind, str) and kind in COMPACTION_REPLAY_CHECKPOINT_TYPES:
            copy = message.model_copy()
            copy.__pydantic_extra__ = {
                k: v for k, v in (message.__pydantic_extra__ or {}).items() if k != "providerReplay"
            }
            return copy
    return message


def build_context(path: Sequence[AnyEntry], memo: ItemMemo | None = None) -> list[WindowMessage]:
    """The context OpenClaw sends for a root → leaf path, each message with its entry (`memo`: an
    item's, to judge each restatement once for the item)."""
    walked = walked_path(path, memo)
    return indexed_context(walked.entries, walked.facts)


def indexed_context(path: Sequence[AnyEntry], facts: PathFacts | None = None) -> list[WindowMessage]:
    """`build_context` of a path already as OpenClaw walks it (`indexed_path`); `facts`: those of
    the walked path it begins, when made once for many windows (`transcript.context.path_facts`)."""
    # what OpenClaw shows is its rule alone; replaylab only knows more about the entries a safeguard
    # compaction restated after itself (`transcript.restated`): the recorded entry each one is
    sources, truncated = restatements_of(path, facts)
    keep = _protected_by_boundary(path)
    window: list[WindowMessage] = []
    for entry, via, message in context_messages(path, facts):
        source = sources.get(entry.id)
        protected = (via == "retained" and entry.id in keep) or (source is not None and source in keep)
        window.append(WindowMessage(entry.id, message, protected, source, entry.id in truncated))
    return window


def context_messages(path: Sequence[AnyEntry], facts: PathFacts | None = None) -> Iterator[tuple[AnyEntry, str, Any]]:
    """The messages of `indexed_context(path, facts)`, each with its entry and how it came in
    (`context_entries`): what the cut reads, without the window's restatements and protection."""
    for entry, via in context_entries(path, facts):
        if via == "current":
            # `context_entries` left out an excluded message entry after the boundary: it stands for its message
            current = as_loaded(entry.message) if type(entry) is MessageEntry else _current_message(entry)
            if current is not None:
                yield entry, via, current
            continue
        message = entry.message if via == "reset-retained" and isinstance(entry, MessageEntry) else project(entry)
        if message is None or (isinstance(entry, BranchSummaryEntry) and not entry.summary):
            continue
        yield entry, via, without_replay_checkpoint(as_loaded(message))


def _protected_by_boundary(path: Sequence[AnyEntry]) -> set[str]:
    """The entries replaylab's safeguard protected at the path's boundary (a compaction's)."""
    boundary = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], (ResetEntry, CompactionEntry))), -1)
    marker = path[boundary] if boundary >= 0 else None
    return set(protected_ids(marker)) if isinstance(marker, CompactionEntry) else set()


def _current_message(entry: AnyEntry) -> Any | None:
    """The message an entry after the boundary (or on a path without one), or the boundary itself,
    adds to the context (None: none)."""
    if isinstance(entry, BranchSummaryEntry) and not entry.summary:
        return None
    message = project(entry)
    return None if message is None else as_loaded(message)


def context_steps(path: Sequence[AnyEntry], ends: Iterable[int]) -> Iterator[WindowStep]:
    """`build_context(path[:end])` for each of the ascending `ends`, as steps: a stretch of the
    path with no reset or compaction only adds what each of its entries yields after the
    boundary (`_current_message`); one with a boundary is built whole."""
    readable = [indexed(entry) for entry in path]
    walked = list(compress(path, readable))  # the path as OpenClaw walks it, indexed once
    walked_before = list(accumulate(readable, initial=0))  # path index → entries of `walked` before it
    facts = path_facts(walked)
    if facts is None:
        yield from rebuilt_steps(build_context, path, ends)
        return

    def rebuilt(prefix: Sequence[AnyEntry]) -> tuple[list[WindowMessage], set[str], None]:
        return indexed_context(prefix, facts), _protected_by_boundary(prefix), None

    def messages(entry: AnyEntry, _: None) -> list[Any]:
        message = _current_message(entry)
        return [] if message is None else [message]

    yield from grown_steps(
        walked,
        [walked_before[end] for end in ends],
        facts,
        starts_anew=lambda e: isinstance(e, (ResetEntry, CompactionEntry)),
        rebuilt=rebuilt,
        messages=messages,
    )
