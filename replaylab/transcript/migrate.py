"""v1 and v2 transcripts read as v3, in memory only: the recording on disk is never rewritten.

v1 entries have no ids and no parent links; v2 names a message role `hookMessage` that v3 calls
`custom`. The v1 step works on the stream of parsed objects (it must see them in file order);
the v2 step is per object, so re-reading one entry later applies it again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from replaylab.transcript.jsonl import Item


def migrate_v1(stream: Iterator[Item], relinked: list[int] | None = None) -> Iterator[Item]:
    """v1 → v2 as pi's `migrateV1ToV2` reads a file: every entry follows the one before it in
    file order, whatever `id` and `parentId` the file wrote.

    pi gives every entry a new random id; replaylab keeps an entry's own id when the file gave
    one no earlier entry has (a diagnostic or defect then names what the file says), else derives
    it from the line. So a compaction's `firstKeptEntryId` that the file wrote itself (not from
    `firstKeptEntryIndex`) names no entry after pi's migration: it is dropped, as pi keeps nothing
    before such a compaction. `firstKeptEntryIndex` indexes the whole entry array with the header
    at 0, so it may name an entry further down: such a compaction waits (with what follows it)
    until that entry's id is known. Each item's `patch` records what changed, so `load_entries`
    can re-apply it to the re-read line; `relinked` gets the line of each entry whose id or
    parent was not the file's. The objects are the parse pass's own, so they are changed in place."""
    ids: list[str] = []
    taken: set[str] = set()
    per_line: dict[int, int] = {}
    previous: str | None = None
    held: deque[Item] = deque()  # a compaction waiting for its kept entry's id, and what follows it
    for lineno, obj, offset, length, sub, _ in stream:
        patch: dict[str, Any] | None = None
        own = obj.get("id")
        if isinstance(own, str) and own not in taken:
            new_id = own
        else:
            k = per_line.get(lineno, 0)
            per_line[lineno] = k + 1
            new_id = f"l{lineno}" if k == 0 else f"l{lineno}-{k + 1}"
        taken.add(new_id)
        if new_id != own or obj.get("parentId", None) != previous or "parentId" not in obj:
            if relinked is not None and ("id" in obj or "parentId" in obj):
                relinked.append(lineno)
            obj["id"], obj["parentId"] = new_id, previous
            patch = {"id": new_id, "parentId": previous}
        if obj.get("type") == "compaction" and "firstKeptEntryId" in obj and "firstKeptEntryIndex" not in obj:
            del obj["firstKeptEntryId"]
            patch = {**(patch or {}), "firstKeptEntryId": None}
        previous = new_id
        ids.append(new_id)
        item = (lineno, obj, offset, length, sub, patch)
        if not held and obj.get("type") != "compaction":  # nothing waits and nothing to map
            yield item
            continue
        held.append(item)
        while held:
            index = _first_kept_index(held[0][1])
            if index is not None and index > len(ids):
                break
            yield _released(held.popleft(), index, ids)
    while held:
        item = held.popleft()
        yield _released(item, _first_kept_index(item[1]), ids)


def _released(item: Item, index: int | None, ids: list[str]) -> Item:
    """The item with its compaction's `firstKeptEntryId` set, where its index names an entry."""
    if index is not None and 1 <= index <= len(ids):
        lineno, obj, offset, length, sub, patch = item
        obj["firstKeptEntryId"] = ids[index - 1]
        return lineno, obj, offset, length, sub, {**(patch or {}), "firstKeptEntryId": ids[index - 1]}
    return item


def _first_kept_index(obj: dict[str, Any]) -> int | None:
    """The `firstKeptEntryIndex` a v1 compaction needs mapped (pi maps it whatever else the
    entry says), else None."""
    if obj.get("type") == "compaction" and "firstKeptEntryIndex" in obj:
        index = obj["firstKeptEntryIndex"]
        if isinstance(index, int):
            return index
    return None


def migrate_v2_obj(obj: dict[str, Any]) -> None:
    """v2 → v3: message role `hookMessage` was renamed `custom`."""
    message = obj.get("message")
    if type(message) is dict and message.get("role") == "hookMessage":
        obj["message"] = {**message, "role": "custom"}
