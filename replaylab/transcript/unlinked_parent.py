"""An entry whose `parentId` is neither a string nor null (a number, a boolean, an object).

pi does not validate: `SessionManager.getBranch` walks `current.parentId ? byId.get(current.parentId)
: undefined`, which a falsy value ends and a value of another type finds no entry for, so the entry
is the root of every path through it, its message sent. OpenClaw 2026.9.6's entry schema wants
`parentId: string | null` and keeps the entry aside (`indexedSessionEntryBaseShape`,
transcript-payload-*.mjs), its children walked without it.

So the entry is read with no parent, as pi reads it, and keeps the parentId as written under
`WRITTEN_PARENT` (an extra field OpenClaw's rules reject and `model.dump_entry` writes back as the
`parentId`): every reader sees pi's tree, and a line replaylab writes back is the recorded one.
"""

from __future__ import annotations

from typing import Any

#: the extra field holding a parentId of another type, as written
WRITTEN_PARENT = "replaylabWrittenParentId"


def unlinked_parent_patch(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The fields that read an entry whose parentId is of another type as a root (None: it has none)."""
    written = obj.get("parentId")
    if written is None or type(written) is str:
        return None
    return {"parentId": None, WRITTEN_PARENT: written}


def written_parent(entry: Any) -> bool:
    """Whether the entry was written with a parentId of another type (`unlinked_parent_patch`)."""
    extras = entry.__pydantic_extra__
    return bool(extras) and WRITTEN_PARENT in extras


def unlinked_parent_note(written: Any) -> str:
    from replaylab.differences import json_type  # its import brings the scrubber: only for the note

    return (
        f"parentId is a JSON {json_type(written)}, not a string or null: the entry is read as a root, as "
        "pi's getBranch ends its walk there; OpenClaw keeps it aside"
    )
