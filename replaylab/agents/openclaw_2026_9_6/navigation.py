"""OpenClaw 2026.9.6's load-time navigation (`SessionEntryNavigation.appendCanonicalNavigationEntry`,
session-entry-navigation-*.mjs): once its load has read a `reset` entry, an entry later in the
file whose parent is no descendant of that reset is attached to the entry read just before it
(its "logical parent"), whatever its `parentId` says. A leaf control aimed before the reset is
ignored the same way. History before a reset can no longer be branched from.

What replaylab appends to a working copy continues from an earlier entry (the start point of a
compaction). When the recording holds a reset after that entry which is not on its path, OpenClaw
would read the appended entries as following the file's last entry. The copy then holds the file
only up to the start point's line: the file as it stood when the agent was there, since a
session file is only ever appended to.
"""

from __future__ import annotations

from replaylab.agents.openclaw_2026_9_6.context import indexed
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry, ResetEntry


def is_reset(entry: AnyEntry) -> bool:
    """A reset OpenClaw reads as one: its schema keeps a reset it rejects (an unknown reason) aside."""
    return isinstance(entry, ResetEntry) and indexed(entry)


def lines_to_copy(transcript: Transcript, leaf_id: str, memo: ItemMemo | None = None) -> int | None:
    """How many of the file's lines a working copy continued from `leaf_id` holds so that
    OpenClaw keeps what is appended on that leaf's path (None: every line)."""
    by_id = transcript.by_id
    reset_id = next(
        (i for i in reversed(transcript.ids_of_type("reset")) if i in by_id and is_reset(by_id[i])),
        None,
    )
    if reset_id is None:
        return None
    leaf_line = transcript.line_of.get(leaf_id)
    reset_line = transcript.line_of.get(reset_id)
    if leaf_line is None or reset_line is None or reset_line < leaf_line:
        # no reset after the leaf: OpenClaw's load attaches appended entries where they say
        return None
    if any(entry.id == reset_id for entry in transcript.path_to(leaf_id, memo)):
        return None
    return leaf_line
