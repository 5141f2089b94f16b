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


def migrate_v1(stream: Iterator[Item]) -> Iterator[Item]:
    """v1 → v2: give each entry a stable id (from its line) and chain parentId in file order.

    pi assigns random ids; we derive them from the line so a diagnostic or defect can be traced
    back to the file. `firstKeptEntryIndex` indexes the whole entry array with the header at 0,
    so it may name an entry further down: such a compaction waits (with what follows it) until
    that entry's id is known. Each item's `patch` records what was added, so `load_entries` can
    re-apply it to the re-read line. The objects are the parse pass's own, so they are changed in
    place."""
    ids: list[str] = []
    per_line: dict[int, int] = {}
    previous: str | None = None
    held: deque[Item] = deque()  # a compaction waiting for its kept entry's id, and what follows it
    for lineno, obj, offset, length, sub, _ in stream:
        patch = None
        if "id" not in obj:
            k = per_line.get(lineno, 0)
            per_line[lineno] = k + 1
            obj["id"] = f"l{lineno}" if k == 0 else f"l{lineno}-{k + 1}"
            obj["parentId"] = previous
            patch = {"id": obj["id"], "parentId": previous}
        previous = obj["id"]
        ids.append(obj["id"])
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
    """The `firstKeptEntryIndex` a v1 compaction needs mapped, else None."""
    if obj.get("type") == "compaction" and "firstKeptEntryIndex" in obj and "firstKeptEntryId" not in obj:
        index = obj["firstKeptEntryIndex"]
        if isinstance(index, int):
            return index
    return None


def migrate_v2_obj(obj: dict[str, Any]) -> None:
    """v2 → v3: message role `hookMessage` was renamed `custom`."""
    message = obj.get("message")
    if type(message) is dict and message.get("role") == "hookMessage":
        obj["message"] = {**message, "role": "custom"}
