"""OpenClaw's leaf controls, read as OpenClaw's load follows them (pi writes none).

OpenClaw 2026.9.6's rewind and branch switch copy a session's history and end it with
`{type: "leaf", parentId: <last id>, targetId}`. Its load
(`SessionEntryNavigation.appendOpaqueNavigationRecord`) then resumes the session at the target
(null: before the first entry). An entry linked to the control continues from the target, and so
does the next entry written to the control's `appendParentId`. replaylab reads this by giving those
entries the target as their parent, so every walk of the tree (eager or lazy, any agent's rules)
takes the path OpenClaw resumes.

A control OpenClaw's schema or references reject keeps its own `parentId`, as OpenClaw reads it.
One after a reset that is aimed outside the reset's branch is ignored: OpenClaw gives it the leaf
its load stands at as its parent and stays there (`appendOpaqueNavigationRecord`).

Once a reset is read, an entry whose parent is no descendant of the latest reset (an entry written
on a branch taken from before it) is attached to the leaf OpenClaw's load stands at: the entry
read just before it, or a followed control's target
(`SessionEntryNavigation.appendCanonicalNavigationEntry`, session-entry-navigation-neBcvf-5.mjs of
openclaw@2026.9.6). History before a reset can no longer be branched from; an entry appended with
`appendMode: "side"` keeps its parent.

A side append (a transcript rewrite's copies, written with `appendMode: "side"`) does not move the
load's leaf, and the entry OpenClaw writes next, whose `parentId` is the side entry, continues from
that leaf (`appendCanonicalNavigationEntry`, and `SessionManager.adoptPersistedEntry` as it writes):
the side entries stay off the path. A file that ends with side appends resumes at the last entry
before them (`side`: the index's leaf skips them).

In OpenClaw 2026.9's own files (`attach_parentless`), an entry with no `parentId` key at all
continues from the leaf (`appendCanonicalNavigationEntry`'s `!hasParentId`); pi reads it as a root.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from replaylab.upstream.openclaw_2026_9_6 import RESET_REASONS

#: "no new parent": an entry read by its own `parentId`
KEEP = object()


class LeafControls:
    """The navigation state of one file read in order: `parent_of` before each entry is
    validated, `read` after it is placed."""

    def __init__(self, *, attach_parentless: bool = False) -> None:
        #: an entry with no `parentId` key continues from the leaf (OpenClaw 2026.9's files only)
        self.attach_parentless = attach_parentless
        #: the side appends read (a file's leaf is the last entry that is none)
        self.side: set[str] = set()
        #: the latest reset and the entries on its branch after it (None: no reset read yet)
        self.after_reset: set[str] | None = None
        #: a followed control's (appendParentId, target), until the next entry
        self.appended_to: tuple[object, object] | None = None
        #: where OpenClaw's load stands: the last entry read that is no side append or control,
        #: or the target of a control it followed
        self.leaf: str | None = None

    def parent_of(self, obj: dict[str, Any], seen: Container[str]) -> object:
        """The parent OpenClaw's load gives this entry, where it is not its own `parentId`; else
        KEEP. `seen`: the ids read before it."""
        if obj.get("type") == "leaf":
            self.appended_to = None
            if not self.readable(obj, seen):
                return KEEP
            target = obj["targetId"]
            if self.after_reset is not None and target not in self.after_reset:
                return self.leaf  # ignored: the load stays at its leaf, the control under it
            self.appended_to = (obj.get("appendParentId", target), target)
            self.leaf = target
            return KEEP if obj["parentId"] == target else target
        appended_to, self.appended_to = self.appended_to, None
        if self.attach_parentless and "parentId" not in obj:
            return self.leaf
        if self.after_reset is not None and obj.get("appendMode") != "side":
            parent = obj.get("parentId")
            if parent is None or parent not in self.after_reset:
                return self.leaf  # a branch from before the latest reset: continued where the load stands
        side = obj.get("appendMode") == "side"  # a side append keeps its parent
        if appended_to is not None and not side and obj.get("parentId") == appended_to[0] != appended_to[1]:
            return appended_to[1]
        return KEEP

    def read(self, entry_id: str, kind: str, parent: str | None, obj: dict[str, Any]) -> None:
        """Note an entry placed under `parent`: a reset starts a branch, its descendants join it; a
        side append leaves the load where it stands, and the entry written next to it continues
        from there."""
        if kind == "reset" and _openclaw_reset(obj):
            self.after_reset = {entry_id}
        elif self.after_reset is not None and parent in self.after_reset:
            self.after_reset.add(entry_id)
        if kind == "leaf":
            return  # a control: `parent_of` placed the load, a side one's included
        if obj.get("appendMode") == "side":
            self.appended_to = (entry_id, self.leaf)
            self.side.add(entry_id)
        else:
            self.side.discard(entry_id)  # a later entry with the same id wins
            self.leaf = entry_id

    def readable(self, obj: dict[str, Any], seen: Container[str]) -> bool:
        """A control OpenClaw's schema reads (`parentId` and `targetId` strings or null,
        `appendParentId` absent, a string or null, `appendMode` absent or `side`), whose target and
        append parent were read before it or are null."""
        if "targetId" not in obj or "parentId" not in obj or obj.get("appendMode", "side") != "side":
            return False
        target, link, append = obj["targetId"], obj["parentId"], obj.get("appendParentId")
        known = all(ref is None or (isinstance(ref, str) and ref in seen) for ref in (target, append))
        return known and (link is None or isinstance(link, str))


def _openclaw_reset(obj: dict[str, Any]) -> bool:
    """A reset OpenClaw's entry schema reads (`timestamp` absent or a string): one its load starts a
    branch at."""
    return reads_as_reset(obj.get("reason"), obj.get("firstKeptEntryId", "")) and isinstance(
        obj.get("timestamp", ""), str
    )


def reads_as_reset(reason: object, first_kept_entry_id: object) -> bool:
    """OpenClaw's schema for a reset's own fields: a reason it knows, and `firstKeptEntryId` absent
    (pass "") or a string."""
    return reason in RESET_REASONS and isinstance(first_kept_entry_id, str)
