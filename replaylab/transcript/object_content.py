"""A message `content` written as neither a list nor what its model reads: a tool result's one
JSON object, an assistant's string, or a null (`null_content`).

OpenClaw 2026.9.6's JSONL reader makes such a content a list before any schema check
(`normalizeLoadedFileEntry`, session-manager-codec-*.mjs): a tool result's object the list of that
one item, which its tool-result schema keeps (`readableMessageSchema`, `content: array(unknown())`),
and an assistant's string one text block. The message stays in its context (a result answers its
call). pi keeps the message as written (it does not validate): its estimate throws on a tool
result's object (`for … of` an object: warned as `pi-unestimable`) and counts nothing of an
assistant's string (`for … of` its characters, none with a `type`). Reading the whole entry as
unreadable instead would unpair a result's call and drop the message from the window.

So the content is read as OpenClaw's list (a block, or an `OpaqueBlock` when no block model reads
it): every reader sees what OpenClaw reads. Only `model.dump_entry` differs: it writes the content
back as written, so a message replaylab restates or writes is the recorded one byte for byte. Made
only by `opaque_content` and `null_content` for an entry that failed validation: no such form
validates as a list.
"""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema


class ObjectContent(list[Any]):
    """A content written as one JSON object, a string or null (`written`), read as the list
    OpenClaw reads it as (a null: the empty list pi 1.6.0 reads it as)."""

    __slots__ = ("written",)

    def __init__(self, items: list[Any], written: dict[str, Any] | str | None) -> None:
        super().__init__(items)
        self.written = written

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # only an instance validates (none is made from JSON). No serializer of its own: a union
        # tries it on every content it dumps, which would cost each tool result's dump more than
        # the dump itself; `model.dump_entry` writes the object back instead
        return core_schema.is_instance_schema(cls)


def written_as_string(content: Any) -> bool:
    """Whether `content` is an assistant's string read as OpenClaw's one text block: pi's estimate
    walks the string's characters and counts none of them."""
    return type(content) is ObjectContent and type(content.written) is str


def written_as_null(content: Any) -> bool:
    """Whether `content` was written as null (`null_content`): OpenClaw's entry schema rejects it."""
    return type(content) is ObjectContent and content.written is None
