"""A tool result whose `content` is one JSON object (neither a list nor a string).

OpenClaw 2026.9.6's JSONL reader makes such a content a list of that one item before any schema
check (`normalizeLoadedFileEntry`, session-manager-codec-*.mjs), and its tool-result schema keeps
any item (`readableMessageSchema`, `content: array(unknown())`): the result stays in its context
and answers its call. pi keeps the message as written (it does not validate), and its estimate
throws on it (`for … of` an object): that is warned as `pi-unestimable`. Reading the whole entry as
unreadable instead would unpair its call and drop the result from the window.

So the content is read as that one item (a block, or an `OpaqueBlock` when no block model reads
it): every reader sees what OpenClaw reads. Only `model.dump_entry` differs: it writes the object
back as written, so a result replaylab restates or writes is the recorded one byte for byte. Made only by
`opaque_content` for an entry that failed validation: a JSON object never validates as one.
"""

from __future__ import annotations

from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema


class ObjectContent(list[Any]):
    """A tool result's content written as one JSON object (`written`), read as the list of that
    one item OpenClaw reads it as."""

    __slots__ = ("written",)

    def __init__(self, items: list[Any], written: dict[str, Any]) -> None:
        super().__init__(items)
        self.written = written

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # only an instance validates (none is made from JSON). No serializer of its own: a union
        # tries it on every content it dumps, which would cost each tool result's dump more than
        # the dump itself; `model.dump_entry` writes the object back instead
        return core_schema.is_instance_schema(cls)
