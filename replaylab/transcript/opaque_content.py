"""Content items no block model reads, kept in their message as pi and OpenClaw keep them.

pi loads a session without validating it: a message whose `content` holds a number, an object
without a string `type`, a `text` block without a string `text` or a `toolCall` block without an
`id` is in its context as written. OpenClaw 2026.9.6's entry schema (`readableMessageSchema`,
transcript-payload-*.mjs) reads a tool result's content as `array(unknown())`, so such a result is
in its context too; a user, assistant or custom message's content must be a string or objects with
a string `type` (`openclaw_2026_9_6.context.indexed` keeps any other aside). Reading the whole
entry as unreadable instead would unpair its tool call and change the window and its tokens.

So an entry that fails validation only because of such items is read with each of them as an
`OpaqueBlock` holding the item as written (no rule reads its text; it is written back unchanged),
and each is named by a warning. Only entries that failed validation are looked at: a well-formed
session never comes here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replaylab.diagnostics import Diagnostic
from replaylab.transcript.diagnose import diagnostic
from replaylab.transcript.model import (
    BLOCK_ADAPTER,
    ENTRY_ADAPTER,
    AnyEntry,
    OpaqueBlock,
    TextBlock,
    ToolCallBlock,
    UnreadableArguments,
)
from replaylab.transcript.object_content import ObjectContent

#: the message roles whose content is a list of content blocks (`model.ContentBlock`)
BLOCK_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})


def opaque_content_patch(obj: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]] | None:
    """The fields that read an entry's unreadable content items as opaque blocks, and for each
    such item its field (`message.content.2`) and why no block model reads it; None when the
    entry's content holds none."""
    if obj.get("type") == "message":
        message = obj.get("message")
        role = message.get("role") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(role, str) or role not in BLOCK_CONTENT_ROLES:
            return None
        if role == "toolResult" and isinstance(message.get("content"), dict):
            return _object_content(message)
        if role == "assistant" and isinstance(message.get("content"), str):
            return _string_content(message)
        content, notes = _opaque_items(message.get("content"), "message.content")
        return ({"message": {**message, "content": content}}, notes) if notes else None
    if obj.get("type") == "custom_message":
        content, notes = _opaque_items(obj.get("content"), "content")
        return ({"content": content}, notes) if notes else None
    return None


def _object_content(message: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A tool result's content written as one object, read as OpenClaw reads it: the list of that
    one item (`object_content.ObjectContent`), the item a block or an opaque one."""
    written = message["content"]
    items, inner = _opaque_items([written], "message.content")
    block = items[0] if inner else BLOCK_ADAPTER.validate_python(written)
    why = (
        "a JSON object, not a list: read as a list of that one item, as OpenClaw's JSONL reader "
        "wraps it (normalizeLoadedFileEntry), which keeps the result and pairs its call; pi keeps it "
        "as written"
    )
    if inner:
        why += f"; that item is {inner[0][1]}, no rule reads its text"
    return {"message": {**message, "content": ObjectContent([block], written)}}, [("message.content", why)]


def _string_content(message: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """An assistant's content written as a string, read as OpenClaw reads it: one text block
    (`object_content.ObjectContent`)."""
    written = message["content"]
    why = (
        "a string, not a list: read as one text block, as OpenClaw's JSONL reader reads an assistant's "
        "string (normalizeLoadedFileEntry); pi keeps it as written, and its estimate counts none of it"
    )
    # `type` given: a block's default is left out of its dump, and OpenClaw's block holds it
    block = TextBlock(type="text", text=written)
    return {"message": {**message, "content": ObjectContent([block], written)}}, [("message.content", why)]


def _opaque_items(content: Any, where: str) -> tuple[list[Any], list[tuple[str, str]]]:
    if not isinstance(content, list):
        return [], []
    items: list[Any] = []
    notes: list[tuple[str, str]] = []
    for position, item in enumerate(content):
        try:
            BLOCK_ADAPTER.validate_python(item)
        except ValidationError as exc:
            items.append(OpaqueBlock(value=item))
            why, inner = _why(item, exc)
            notes.append((f"{where}.{position}{inner}", why))
        else:
            items.append(item)
    return items, notes


def _why(item: Any, exc: ValidationError) -> tuple[str, str]:
    """Why no block model reads `item`, and the path of the field that fails within it."""
    if not isinstance(item, dict):
        from replaylab.differences import json_type  # its import brings the scrubber: only for the warning

        return f"a JSON {json_type(item)}, not a content block", ""
    kind = item.get("type")
    if not isinstance(kind, str):
        return "an object without a string 'type'", ".type"
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"][1:])
    why = f"a {kind!r} block whose {field or 'content'!r} is missing or of another type ({error['msg']})"
    if kind == "toolCall" and isinstance(item.get("id"), str):
        why += "; its call is paired with its result by id, as pi and OpenClaw pair it" + (
            "" if isinstance(item.get("arguments"), dict) else ", and judged mutating: its arguments cannot be read"
        )
    return why, (f".{field}" if field else "")


def opaque_diagnostics(name: Path, line: int, entry_id: str, notes: list[tuple[str, str]]) -> list[Diagnostic]:
    """A warning per opaque item (at most 3, the last saying how many more there are)."""
    out = []
    for position, (field, why) in enumerate(notes[:3]):
        more = len(notes) - 3 if position == 2 and len(notes) > 3 else 0
        if field == "message.content":  # the content itself, not one of its items (`_object_content`)
            out.append(diagnostic(name, line, "opaque-content", f"content is {why}", entry_id=entry_id, field=field))
            continue
        message = (
            f"content item is {why}: kept as written in its message, as pi keeps it (and OpenClaw in a "
            "tool result); no rule reads its text, the estimates count it as the agents do"
            + (f" ({more} more such items)" if more else "")
        )
        out.append(diagnostic(name, line, "opaque-content", message, entry_id=entry_id, field=field))
    return out


def read_entry(obj: dict[str, Any]) -> AnyEntry:
    """An entry object (one replaylab wrote back, `dump_entry`) as the load reads it: its
    unreadable content items as opaque blocks. Raises ValidationError as the adapter does."""
    try:
        return ENTRY_ADAPTER.validate_python(obj)
    except ValidationError:
        repair = opaque_content_patch(obj)
        if repair is None:
            raise
        return ENTRY_ADAPTER.validate_python({**obj, **repair[0]})


def opaque_call(block: Any) -> tuple[str, str] | None:
    """The name and `JSON.stringify(arguments)` (`"undefined"` when absent) of an opaque
    `toolCall` item with a string name (one without an id): every agent's estimate counts them
    as a call's. None for any other block."""
    if type(block) is not OpaqueBlock or block.type != "toolCall":
        return None
    value = block.value
    name = value.get("name")
    if not isinstance(name, str):
        return None
    from replaylab.transcript.javascript import json_stringify

    return name, json_stringify(value["arguments"]) if "arguments" in value else "undefined"


def opaque_call_block(block: Any) -> ToolCallBlock | None:
    """The call an opaque `toolCall` item with a string id records: pi pairs a result with it by
    id whatever else it holds (`transformMessages`), and so does OpenClaw (`readToolCall`). Its
    arguments, when they are no object, are `UnreadableArguments` (judged mutating). None for
    any other block."""
    if type(block) is not OpaqueBlock:
        return None
    value = block.value
    if not isinstance(value, dict) or value.get("type") != "toolCall" or not isinstance(value.get("id"), str):
        return None
    name, arguments = value.get("name"), value.get("arguments")
    if not isinstance(arguments, dict):
        if "arguments" in value:
            from replaylab.differences import json_type  # its import brings the scrubber: only for such a call

            arguments = UnreadableArguments(arguments, f"a JSON {json_type(arguments)}, not an object")
        else:
            arguments = UnreadableArguments(None, "none are written")
    # not validated: the arguments stay what they are (validation would make them a plain dict)
    return ToolCallBlock.model_construct(
        id=value["id"], name=name if isinstance(name, str) else "", arguments=arguments
    )


def opaque_list_chars(block: Any, assistant: bool) -> int:
    """What pi's `estimateTokens` counts of an opaque item whose field it reads is a list:
    JavaScript's `.length` of a list is its number of items. In an assistant message a `text`,
    `thinking` or call `name` (the call's `JSON.stringify(arguments)` added); elsewhere a `text`.
    0 for any other item: where pi's estimate throws or gives NaN, `transcript.unestimable` says so."""
    if type(block) is not OpaqueBlock or not isinstance(block.value, dict):
        return 0
    value = block.value
    kind = value.get("type")
    if kind == "text" or (assistant and kind == "thinking"):
        field = value.get(kind)
        return len(field) if isinstance(field, list) else 0
    if assistant and kind == "toolCall" and isinstance(value.get("name"), list) and "arguments" in value:
        from replaylab.transcript.javascript import json_stringify, utf16_length

        return len(value["name"]) + utf16_length(json_stringify(value["arguments"]))
    return 0
