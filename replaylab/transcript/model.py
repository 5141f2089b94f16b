"""Pydantic models of the pi / OpenClaw session format, version 3.

Why this shape: real files carry fields we do not know about (OpenClaw adds `provenance`,
`idempotencyKey`, new content blocks appear with each provider). Every model therefore allows
extra fields, and `dump_entry` writes back only what was read (`exclude_unset`), so a load →
dump of any real file gives the same JSON objects. Unknown entry types, roles and content
blocks fall through to `Unknown*` models instead of failing the whole file.

Attribute names are snake_case; the JSON names are camelCase aliases (pi's spelling).
Reference: ../shared/reference/openclaw-internals.md §1.3–§1.4.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, model_serializer
from pydantic.alias_generators import to_camel

from replaylab.json_dump import compact_json
from replaylab.transcript.object_content import ObjectContent
from replaylab.transcript.unlinked_parent import WRITTEN_PARENT


class Model(BaseModel):
    """Base: camelCase aliases, extra fields kept, assignment validated off for speed."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        serialize_by_alias=True,
    )


# ---------------------------------------------------------------- content blocks


class TextBlock(Model):
    type: Literal["text"] = "text"
    text: str
    text_signature: Any = None  # any JSON, as written: only the provider it came from reads it


class ThinkingBlock(Model):
    type: Literal["thinking"] = "thinking"
    thinking: str
    thinking_signature: Any = None  # any JSON, as written: only the provider it came from reads it
    #: any JSON, as written: the agents read its truth (`javascript.js_truthy`); pydantic's lax bool
    #: would fail on 2 or [] and skip the entry, and write "yes" back as true
    redacted: Any = None


class ImageBlock(Model):
    type: Literal["image"] = "image"
    data: str
    mime_type: str


class UnreadableArguments(dict[str, Any]):
    """A call's `arguments` that are no JSON object (a string some providers record, an array,
    null, none at all), read as no arguments: `written` is the value as written (None when absent),
    `why` says what it is. The classifier judges a call holding them mutating unless its tool is
    forced safe (`safety.classify`): what such a call did cannot be read from them."""

    __slots__ = ("why", "written")

    def __init__(self, written: Any, why: str) -> None:
        super().__init__()
        self.written = written
        self.why = why


def _no_arguments() -> dict[str, Any]:
    return UnreadableArguments(None, "none are written")


class ToolCallBlock(Model):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    #: a call written without arguments: none can be read (pi's estimate throws on it, OpenClaw's
    #: repair drops it), so it is judged as one whose arguments are unreadable
    arguments: dict[str, Any] = Field(default_factory=_no_arguments)
    thought_signature: Any = None  # any JSON, as written: only the provider it came from reads it


class UnknownBlock(Model):
    """A content block type we do not model (e.g. OpenClaw's legacy `toolUse`); kept verbatim."""

    type: str


class OpaqueBlock(BaseModel):
    """A content item no block model reads (not an object, an object without a string `type`, a
    block lacking a field its type needs): pi keeps the message as written, and so does OpenClaw
    where its schema allows (`transcript.opaque_content`). Written back exactly as read; no rule
    reads its text. Never made by validation from JSON: `opaque_content` makes it."""

    model_config = ConfigDict(frozen=True)

    value: Any = None

    @property
    def type(self) -> Any:
        """The item's `type` as JavaScript reads `block.type` (undefined: None)."""
        return self.value.get("type") if isinstance(self.value, dict) else None

    @property
    def typed(self) -> bool:
        """An object with a string `type`: what OpenClaw's readable content wants of an item."""
        return isinstance(self.value, dict) and isinstance(self.value.get("type"), str)

    @model_serializer(mode="plain")
    def _as_written(self) -> Any:
        return self.value


_BLOCK_TAGS = {"text", "thinking", "image", "toolCall"}
#: no string a file could hold as a block's type: only an `OpaqueBlock` instance is given it
_OPAQUE_TAG = "\0opaque"


def _block_tag(value: Any) -> str:
    if isinstance(value, dict):
        kind = value.get("type")
    elif isinstance(value, OpaqueBlock):
        return _OPAQUE_TAG
    else:
        kind = getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _BLOCK_TAGS else "unknown"  # a list is unhashable


ContentBlock = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ThinkingBlock, Tag("thinking")]
    | Annotated[ImageBlock, Tag("image")]
    | Annotated[ToolCallBlock, Tag("toolCall")]
    | Annotated[UnknownBlock, Tag("unknown")]
    | Annotated[OpaqueBlock, Tag(_OPAQUE_TAG)],
    Discriminator(_block_tag),
]


# ---------------------------------------------------------------- messages


class UserMessage(Model):
    role: Literal["user"] = "user"
    content: ObjectContent | str | list[ContentBlock] = Field(union_mode="left_to_right")  # as the assistant's
    #: pi's number, when the message was made: kept whatever it holds; a numeric one orders a typed
    #: input against the results it follows (`replay.turns.continues_run`)
    timestamp: Any = None


class AssistantMessage(Model):
    role: Literal["assistant"] = "assistant"
    #: an `ObjectContent` only from the load (a content written as a string or null), as a tool result's
    content: ObjectContent | list[ContentBlock] = Field(default_factory=list, union_mode="left_to_right")
    #: any JSON, as written (no agent checks them; OpenClaw compares `api === "cli"`)
    api: Any = None
    provider: Any = None
    model: Any = None
    usage: Any = None  # any JSON, as written (no agent checks it); only an object is read as usage
    #: any JSON, as pi and OpenClaw keep it; only its string values mean anything (`== "error"`)
    stop_reason: Any = None
    #: any JSON, as written (both agents keep the entry); the overflow rules match its JavaScript string
    error_message: Any = None
    timestamp: Any = None  # pi's number, read by no rule: kept whatever it holds (`EntryBase.timestamp`)

    def tool_calls(self) -> list[ToolCallBlock]:
        return [b for b in self.content if isinstance(b, ToolCallBlock)]

    def text(self) -> str:
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


class ToolResultMessage(Model):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str | None = None
    #: an `ObjectContent` only from the load (a content written as one object or null); tried first,
    #: in order: an instance check, which fails at once for what JSON gives
    content: ObjectContent | str | list[ContentBlock] = Field(default_factory=list, union_mode="left_to_right")
    details: Any = None
    #: any JSON, as written: pydantic's lax bool would write 0 or "false" back as false, which no agent holds
    is_error: Any = False
    #: pi's number, when the result was made: kept whatever it holds (`replay.turns.continues_run`)
    timestamp: Any = None


class BashExecutionMessage(Model):
    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    #: these four are any JSON, as written: the agents test their truth and print them as JavaScript
    #: does (`transcript.context.bash_execution_text`); pydantic would fail on a null `cancelled` and skip the entry
    exit_code: Any = None
    cancelled: Any = False
    truncated: Any = False
    full_output_path: Any = None
    #: any JSON: pi leaves a truthy one out of the LLM's context, OpenClaw only `true`
    exclude_from_context: Any = None
    timestamp: Any = None  # pi's number, read by no rule: kept whatever it holds (`EntryBase.timestamp`)


class CustomMessage(Model):
    role: Literal["custom"] = "custom"
    custom_type: str | None = None
    content: str | list[ContentBlock] = ""
    display: Any = None  # any JSON, as written: only the UI reads it
    details: Any = None
    timestamp: Any = None  # pi's number, read by no rule: kept whatever it holds (`EntryBase.timestamp`)


class CompactionSummaryMessage(Model):
    """Synthesized at context build from a `compaction` entry; never stored as a message."""

    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: Any = None  # the compaction entry's, as the agent's message holds it
    timestamp: Any = None


class BranchSummaryMessage(Model):
    """Synthesized at context build from a `branch_summary` entry."""

    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str | None = None
    timestamp: Any = None


class UnknownMessage(Model):
    role: str


_ROLE_TAGS = {
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "compactionSummary",
    "branchSummary",
}


def _role_tag(value: Any) -> str:
    role = value.get("role") if isinstance(value, dict) else getattr(value, "role", None)
    return role if isinstance(role, str) and role in _ROLE_TAGS else "unknown"


Message = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[ToolResultMessage, Tag("toolResult")]
    | Annotated[BashExecutionMessage, Tag("bashExecution")]
    | Annotated[CustomMessage, Tag("custom")]
    | Annotated[CompactionSummaryMessage, Tag("compactionSummary")]
    | Annotated[BranchSummaryMessage, Tag("branchSummary")]
    | Annotated[UnknownMessage, Tag("unknown")],
    Discriminator(_role_tag),
]


# ---------------------------------------------------------------- entries


class SessionHeader(Model):
    """Line 1. `version` absent means v1."""

    type: Literal["session"] = "session"
    version: int | None = None
    id: str
    timestamp: Any = None  # as `EntryBase.timestamp`: pi reads it only through `new Date(...)`
    cwd: str | None = None
    parent_session: str | None = None


class EntryBase(Model):
    type: str
    id: str
    parent_id: str | None = None
    #: pi writes an ISO string and reads it only through `new Date(...)` (`date_time_ms`), which
    #: takes epoch milliseconds too; pi's loader checks no field's type, so an entry whose
    #: timestamp is of another type is still in its session, and in replaylab's
    timestamp: Any = None
    #: replaylab's: the id of the earlier entry this one restates byte for byte after a safeguard
    #: compaction (`transcript.restated`); pi and OpenClaw ignore it
    restates: str | None = None


class MessageEntry(EntryBase):
    type: Literal["message"] = "message"
    message: Message
    replay_mark: Literal["safe", "unsafe"] | None = None
    #: replaylab's: a restated tool result shortened under allowMutatingEventTruncate declares the
    #: recorded text's length and the recorded message's sha256 (`transcript.restated`)
    truncated_from: dict[str, Any] | None = None
    #: replaylab's: a restated message its window showed although it is marked `excludeFromContext`
    #: (OpenClaw shows such a message only in a reset's kept range) is written without the mark
    #: (`transcript.restated`)
    exclude_from_context_dropped: bool | None = None


class CompactionEntry(EntryBase):
    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str | None = None
    #: any JSON, as written: pydantic read "900" or true as a number, which OpenClaw's entry
    #: schema (`typeof value === "number"`) does not; readers take it only as a number (`number_or_none`)
    tokens_before: Any = None
    #: pi's `details?: T`: any JSON (a hook's compaction writes its own); readers check its shape
    details: Any = None
    from_hook: Any = None  # any JSON, as written: the agents read its truth (`javascript.js_truthy`)


class BranchSummaryEntry(EntryBase):
    type: Literal["branch_summary"] = "branch_summary"
    from_id: str | None = None
    summary: str = ""
    details: Any = None
    from_hook: Any = None  # any JSON, as written: the agents read its truth (`javascript.js_truthy`)


class CustomEntry(EntryBase):
    type: Literal["custom"] = "custom"
    custom_type: str | None = None
    data: Any = None


class CustomMessageEntry(EntryBase):
    type: Literal["custom_message"] = "custom_message"
    custom_type: str | None = None
    content: str | list[ContentBlock] = ""
    #: any JSON, as written: OpenClaw's entry schema wants a boolean (it keeps any other entry aside)
    display: Any = None
    details: Any = None


class ModelChangeEntry(EntryBase):
    type: Literal["model_change"] = "model_change"
    provider: str | None = None
    model_id: str | None = None


class ThinkingLevelChangeEntry(EntryBase):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str | None = None


class LabelEntry(EntryBase):
    type: Literal["label"] = "label"
    target_id: str | None = None
    label: str | None = None


class SessionInfoEntry(EntryBase):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


class ResetEntry(EntryBase):
    """OpenClaw 2026.9.6's history boundary (`SessionManager.appendResetBoundary`): its context
    starts afresh after it, keeping at most the user / assistant messages (and their paired tool
    results) from `firstKeptEntryId` on. pi ignores it."""

    type: Literal["reset"] = "reset"
    reason: str | None = None
    first_kept_entry_id: str | None = None


class UnknownEntry(EntryBase):
    """An entry type pi may add later; kept and written back verbatim, never sent to a model."""


class UnreadableEntry(EntryBase):
    """An entry whose fields replaylab cannot read (a message whose `content` is a number): its id
    and link only, so the path runs through it as both agents' paths do. It stands for no message:
    pi would send what it holds, which replaylab cannot (its diagnostic says so), and OpenClaw,
    whose entry schema rejects such an entry too, keeps it aside. Never made by validation (a
    written type `unreadable` is an `UnknownEntry`): `unreadable_entry` makes it."""

    type: Literal["unreadable"] = "unreadable"
    #: the entry's `type` as written
    written_type: Any = None


def unreadable_entry(obj: dict[str, Any]) -> UnreadableEntry | None:
    """The stand-in of an entry object that failed validation, or None when even its link cannot
    be read (an id that is not a string, a parentId neither a string nor null)."""
    entry_id, parent_id = obj.get("id"), obj.get("parentId")
    if not isinstance(entry_id, str) or not (parent_id is None or isinstance(parent_id, str)):
        return None
    return UnreadableEntry(
        id=entry_id, parent_id=parent_id, timestamp=obj.get("timestamp"), written_type=obj.get("type")
    )


_ENTRY_TAGS = {
    "message",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "model_change",
    "thinking_level_change",
    "label",
    "session_info",
    "reset",
}


def _entry_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in _ENTRY_TAGS else "unknown"


Entry = Annotated[
    Annotated[MessageEntry, Tag("message")]
    | Annotated[CompactionEntry, Tag("compaction")]
    | Annotated[BranchSummaryEntry, Tag("branch_summary")]
    | Annotated[CustomEntry, Tag("custom")]
    | Annotated[CustomMessageEntry, Tag("custom_message")]
    | Annotated[ModelChangeEntry, Tag("model_change")]
    | Annotated[ThinkingLevelChangeEntry, Tag("thinking_level_change")]
    | Annotated[LabelEntry, Tag("label")]
    | Annotated[SessionInfoEntry, Tag("session_info")]
    | Annotated[ResetEntry, Tag("reset")]
    | Annotated[UnknownEntry, Tag("unknown")],
    Discriminator(_entry_tag),
]

AnyEntry = (
    MessageEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | LabelEntry
    | SessionInfoEntry
    | ResetEntry
    | UnknownEntry
    | UnreadableEntry
)

ENTRY_ADAPTER: TypeAdapter[AnyEntry] = TypeAdapter(Entry)
MESSAGE_ADAPTER: TypeAdapter[Any] = TypeAdapter(Message)
BLOCK_ADAPTER: TypeAdapter[Any] = TypeAdapter(ContentBlock)


def dump_entry(entry: BaseModel) -> dict[str, Any]:
    """The JSON object for one entry: exactly the fields that were read or set, pi's spelling.
    Without pydantic's warnings: a header read as it is (`header-field-type`) holds a value of
    another type than its field's, which is written back as it was read."""
    try:
        data = entry.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)
    except ValueError:
        # nested deeper than pydantic serializes to JSON: what was read from JSON holds JSON's types only
        data = entry.model_dump(by_alias=True, exclude_unset=True, warnings=False)
    message = entry.__dict__.get("message", entry)
    content = getattr(message, "__dict__", _NO_FIELDS).get("content")
    if type(content) is ObjectContent:  # a content written as an object, a string or null, as written
        (data if message is entry else data["message"])["content"] = content.written
    if WRITTEN_PARENT in data:  # a parentId of another type, read as none (`unlinked_parent`)
        data["parentId"] = data.pop(WRITTEN_PARENT)
    return data


_NO_FIELDS: dict[str, Any] = {}


def message_text(message: Any) -> str:
    """All text a model would read from one message (text, thinking, tool-call arguments)."""
    return _message_text(message, _arguments_json, _as_written)


def identifier_text(message: Any) -> str:
    """`message_text` for replaylab's own identifier scans (IDENTIFIER_LOST, the extractive
    summary's identifiers): each tool call's argument keys and values, and those of a text that is
    a JSON document (a tool result an API gave), one per line as written, not as JSON. JSON's
    escapes and separators hold no whitespace, so a scan of it glues a value to its neighbours
    (`https://x.org/a","path":"/srv/app.yml",…` one identifier, the path lost in it; `d:\\n\\n1`
    read as a drive path) and a value holding a quote or a backslash is never found as written.
    The very string `message_text` gives where neither is in the message (`identifier_text_differs`)."""
    if identifier_text_differs(message):
        return _message_text(message, _json_lines, _json_text_as_lines)
    return message_text(message)


#: a text that may be a JSON document: an object or an array
_JSON_START = re.compile(r"\s*[\[{]")


def identifier_text_differs(message: Any) -> bool:
    """Whether `identifier_text` differs from `message_text`: the message holds a tool call or a
    text that starts as a JSON object or array does."""
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return _JSON_START.match(content) is not None
    if not isinstance(content, list):
        return False
    return any(
        isinstance(block, ToolCallBlock) or (isinstance(block, TextBlock) and _JSON_START.match(block.text) is not None)
        for block in content
    )


def _as_written(text: str) -> list[str]:
    return [text]


def _json_text_as_lines(text: str) -> list[str]:
    import orjson

    if _JSON_START.match(text) is None:
        return [text]
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        return [text]
    return _json_lines(document)


def _arguments_json(arguments: Any) -> list[str]:
    return [compact_json(arguments)]


def _json_lines(value: Any) -> list[str]:
    """Every key and scalar value of a JSON value, in document order, each as written — but no
    value under a secret-named key (`password`, `api_token`): as JSON its name beside it had the
    scrubber mask it, which on a line of its own it would not. Walked with a list of its own: a
    document may nest deeper than Python's recursion limit."""
    from replaylab.scrub import default_scrubber

    scrubber = default_scrubber()
    lines: list[str] = []
    pending: list[tuple[str | None, Any]] = [(None, value)]  # (the key it is under, a value)
    while pending:
        key, item = pending.pop()
        if key is not None:
            lines.append(key)
            if scrubber.is_secret_key(key):
                continue
        if isinstance(item, dict):
            pending.extend((str(k), child) for k, child in reversed(list(item.items())))
        elif isinstance(item, list):
            pending.extend((None, child) for child in reversed(item))
        elif item is not None:
            lines.append(_scalar_line(item))
    return lines


def _scalar_line(value: Any) -> str:
    import orjson

    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return orjson.dumps(value).decode()


def _message_text(message: Any, arguments_text: Callable[[Any], list[str]], text_of: Callable[[str], list[str]]) -> str:
    parts: list[str] = []
    content = getattr(message, "content", None)
    if isinstance(content, str):
        parts.extend(text_of(content))
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, TextBlock):
                parts.extend(text_of(block.text))
            elif isinstance(block, ThinkingBlock):
                parts.append(block.thinking)
            elif isinstance(block, ToolCallBlock):
                parts.append(block.name)
                parts.extend(arguments_text(block.arguments))
    for attr in ("summary", "command", "output"):
        value = _field_or_extra(message, attr)
        if isinstance(value, str):
            parts.append(value)
    return "\n".join(parts)


def _field_or_extra(obj: Any, name: str) -> Any:
    """`getattr(obj, name, None)` without pydantic's slow `__getattr__` miss path (a raised and
    caught AttributeError per call, which dominated `message_text` over a whole transcript)."""
    if isinstance(obj, BaseModel):
        value = obj.__dict__.get(name)
        if value is None and obj.__pydantic_extra__:
            value = obj.__pydantic_extra__.get(name)
        return value
    return getattr(obj, name, None)
