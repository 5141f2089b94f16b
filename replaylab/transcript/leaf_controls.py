"""OpenClaw's leaf controls, read as OpenClaw's load follows them (pi writes none).

OpenClaw 2026.9.6's rewind and branch switch copy a session's history and end it with
`{type: "leaf", parentId: <last id>, targetId}`. Its load
(`SessionEntryNavigation.appendOpaqueNavigationRecord`) then resumes the session at the target
(null: before the first entry). An entry linked to the control continues from the target, and so
does the next entry written to the control's `appendParentId`. replaylab reads this by giving those
entries the target as their parent, so every walk of the tree (eager or lazy, any agent's rules)
takes the path OpenClaw resumes.

A control OpenClaw's schema or references reject, and a `label` whose target is no entry OpenClaw
indexed, are records OpenClaw keeps aside: each keeps its own `parentId`, and neither moves the
load (`appendOpaqueNavigationRecord`, `appendCanonicalNavigationEntry`'s unknown-target label): not
its leaf, not the parent the next entry continues from, not a reset's branch (`aside`: the index's
leaf skips them as it skips side appends). pi writes neither (its `appendLabelChange` refuses an
unknown target), so every file reads them as OpenClaw does.
A control after a reset that is aimed outside the reset's branch is ignored: OpenClaw gives it the
leaf its load stands at as its parent and stays there (`appendOpaqueNavigationRecord`).

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

In the files OpenClaw 2026.9 navigates (`attach_parentless`: its own, and version-3 ones read under
its profile, which it does not migrate), an entry with no `parentId` key at all continues from the
leaf (`appendCanonicalNavigationEntry`'s `!hasParentId`); pi reads it as a root.
There too, an entry OpenClaw's schema keeps aside leaves its load where it stands; when it still
links to a parent (`parseParentLinkedOpaqueEntry`), the entry written next to it continues from
the leaf (`appendCanonicalNavigationEntry`: `parentId === appendParentId` while the leaf is another
entry), wherever the record's own link leads (itself, nowhere, a record kept aside with no link).
"""

from __future__ import annotations

import copy
from collections.abc import Container
from typing import Any

from replaylab.upstream.openclaw_2026_9_6 import RESET_REASONS
from replaylab.upstream.openclaw_2026_9_6_schema import indexes, parent_linked_aside

#: "no new parent": an entry read by its own `parentId`
KEEP = object()


class LeafControls:
    """The navigation state of one file read in order: `parent_of` before each entry is
    validated, `read` after it is placed."""

    def __init__(self, *, attach_parentless: bool = False) -> None:
        #: an entry with no `parentId` key continues from the leaf (the files OpenClaw 2026.9 navigates only)
        self.attach_parentless = attach_parentless
        #: the side appends and the records kept aside read (a file's leaf is the last entry that is none)
        self.side: set[str] = set()
        #: the records OpenClaw keeps out of its index (every control, a label of an unknown target)
        #: → the parent it walks on to
        self.opaque: dict[str, object] = {}
        #: the controls OpenClaw rejected: no control may name them
        self.rejected: set[str] = set()
        #: the record `parent_of` just read is kept aside: it leaves the load where it stands
        self.kept_aside = False
        #: the latest reset and the entries on its branch after it (None: no reset read yet)
        self.after_reset: set[str] | None = None
        #: a followed control's (appendParentId, target), until the next entry
        self.appended_to: tuple[object, object] | None = None
        #: where OpenClaw's load stands: the last entry read that is no side append or control,
        #: or the target of a control it followed
        self.leaf: str | None = None
        #: the record read last, when OpenClaw's schema kept it aside with a link: what it appends to
        self.aside_link: str | None = None
        #: the records OpenClaw's schema kept aside with a link → that link
        self.aside_parents: dict[str, object] = {}
        #: how OpenClaw's schema reads the record `place` just read (the files OpenClaw navigates only):
        #: None indexed, "linked" kept aside with a link, "unlinked" kept aside without one
        self.schema_aside: str | None = None

    def copy(self) -> LeafControls:
        """A state of its own, to read further entries into (a working copy's appends)."""
        twin = copy.copy(self)
        twin.side, twin.opaque, twin.rejected = set(self.side), dict(self.opaque), set(self.rejected)
        twin.aside_parents = dict(self.aside_parents)
        twin.after_reset = None if self.after_reset is None else set(self.after_reset)
        return twin

    def place(self, obj: dict[str, Any], seen: Container[str]) -> object:
        """`parent_of` where OpenClaw's navigation may give this entry another parent (else KEEP),
        before the entry is validated; `placed` after it."""
        self.kept_aside = False
        self.schema_aside = None
        # a record written under the load's leaf walks back to it whether kept aside or not, and
        # OpenClaw's walk drops it (`context.indexed`): only one linked elsewhere is asked about
        parent = obj.get("parentId")
        if (
            self.attach_parentless
            and (parent != self.leaf or parent is None)
            and obj.get("type") != "leaf"
            and not indexes(obj)
        ):
            self.schema_aside = "linked" if parent_linked_aside(obj) else "unlinked"
        if (
            self.appended_to is not None
            or self.after_reset is not None
            or obj.get("type") in ("leaf", "label")
            or (self.attach_parentless and "parentId" not in obj)
            or (self.aside_link is not None and obj.get("parentId") == self.aside_link)
        ):
            return self.parent_of(obj, seen)
        return KEEP

    def placed(self, entry_id: str, kind: str, parent: str | None, obj: dict[str, Any]) -> None:
        """Note an entry `place` read, placed under `parent`."""
        if self.schema_aside is not None:
            # kept aside by OpenClaw's schema: the load's leaf stays; a linked record is appended to
            if self.kept_aside:
                self.side.add(entry_id)
            if self.schema_aside == "linked":
                self.aside_link = entry_id
                self.aside_parents[entry_id] = parent
                if self.after_reset is not None and parent in self.after_reset:
                    self.after_reset.add(entry_id)
            return
        if self.kept_aside:
            self.side.add(entry_id)
        elif kind == "reset" or self.after_reset is not None or "appendMode" in obj:
            self.read(entry_id, kind, parent, obj)
        elif kind != "leaf":
            self.leaf = entry_id
        if not self.kept_aside:
            self.aside_link = None  # what the next entry appends to is this entry, or a control's

    def parent_of(self, obj: dict[str, Any], seen: Container[str]) -> object:
        """The parent OpenClaw's load gives this entry, where it is not its own `parentId`; else
        KEEP. `seen`: the ids read before it."""
        kind = obj.get("type")
        if kind == "leaf":
            if not self.readable(obj, seen):
                self._aside(obj)
                self.rejected.add(obj["id"])
                return KEEP
            target = self._canonical(obj["targetId"], seen)
            if self.after_reset is not None and target not in self.after_reset:
                self.appended_to = None
                self.opaque[obj["id"]] = self.leaf
                return self.leaf  # ignored: the load stays at its leaf, the control under it
            self.appended_to = (obj.get("appendParentId", target), target)
            self.opaque[obj["id"]] = self.leaf = target
            return KEEP if obj["parentId"] == target else target
        if kind == "label" and not self.indexed(obj.get("targetId"), seen):
            self._aside(obj)
            return KEEP
        appended_to, self.appended_to = self.appended_to, None
        if self.attach_parentless and "parentId" not in obj:
            return self.leaf
        if self.after_reset is not None and obj.get("appendMode") != "side":
            parent = obj.get("parentId")
            if parent is None or parent not in self.after_reset:
                return self.leaf  # a branch from before the latest reset: continued where the load stands
        side = obj.get("appendMode") == "side"  # a side append keeps its parent
        if self.aside_link is not None and not side and obj.get("parentId") == self.aside_link:
            # written to a record kept aside: continued where the load stands (a walk through the
            # record reaches the same entry unless its own link leads elsewhere)
            return KEEP if self._resolved(self.aside_link) == self.leaf else self.leaf
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
        known = all(
            ref is None or (isinstance(ref, str) and ref in seen and ref not in self.rejected)
            for ref in (target, append)
        )
        return known and (link is None or isinstance(link, str))

    def indexed(self, entry_id: object, seen: Container[str]) -> bool:
        """An id read before that OpenClaw indexed (no record it keeps out of its index)."""
        return isinstance(entry_id, str) and entry_id in seen and entry_id not in self.opaque

    def _aside(self, obj: dict[str, Any]) -> None:
        """A record OpenClaw keeps aside: it keeps its parent and leaves the load where it stands."""
        self.kept_aside = True
        self.opaque[obj["id"]] = obj.get("parentId")

    def _resolved(self, entry_id: object) -> object:
        """The entry a walk reaches from a record kept aside, through such records only
        (`resolveSessionCanonicalParentId`: None where the links loop)."""
        walked: set[object] = set()
        while isinstance(entry_id, str) and entry_id in self.aside_parents:
            if entry_id in walked:
                return None
            walked.add(entry_id)
            entry_id = self.aside_parents[entry_id]
        return entry_id

    def _canonical(self, entry_id: str | None, seen: Container[str]) -> str | None:
        """The entry OpenClaw resolves a record's id to: itself, or the first indexed entry above it
        (None: none, as above an id it never read)."""
        walked: set[str] = set()
        while entry_id is not None and entry_id in self.opaque and entry_id not in walked:
            walked.add(entry_id)
            parent = self.opaque[entry_id]
            entry_id = parent if isinstance(parent, str) else None
        return entry_id if entry_id is None or (entry_id in seen and entry_id not in walked) else None


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
