"""The text a model reads from a message, which grounding looks values up in (`grounding_text`),
and the leaves of tool-call arguments it reads them from (`iter_leaves`, `leaf_text`). Rules:
`replaylab.replay.agent.grounding`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from replaylab.transcript.model import ToolCallBlock, message_text
from replaylab.values import scalar_value_text

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo

SEP = "\x00"


def grounding_text(message: Any, memo: ItemMemo | None = None) -> str:
    """All text a model reads from one message, with raw tool-call argument leaves added (the
    JSON form escapes quotes and newlines, the raw form is what a value check compares). With an
    item's `memo`, the message's text is the item's."""
    text = message_text(message) if memo is None else memo.text(message)
    content = getattr(message, "content", None)
    if isinstance(content, list):
        leaves: list[str] = []
        for block in content:
            if isinstance(block, ToolCallBlock):
                _leaf_texts(block.arguments, leaves)
        if leaves:
            text = text + "\n" + "\n".join(leaves)
    return text


def _leaf_texts(value: Any, out: list[str]) -> None:
    """The non-empty `leaf_text`s of `value`'s leaves in `iter_leaves` order, without the paths
    (`grounding_text` runs over every message of a recording: no tuple per leaf)."""
    stack = [value]  # a stack of its own: arguments may nest deeper than Python's recursion limit
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        else:
            text = leaf_text(item)
            if text:
                out.append(text)


def iter_leaves(value: Any, path: tuple = ()) -> Iterable[tuple[tuple, Any]]:
    """(path, leaf) of each leaf of `value`, in document order (with a stack of its own: arguments
    may nest deeper than Python's recursion limit)."""
    stack: list[tuple[tuple, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([(where + (key,), child) for key, child in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(where + (index,), child) for index, child in enumerate(item)]))
        else:
            yield where, item


def leaf_text(value: Any) -> str | None:
    """The comparable text of a leaf, or None when the leaf never counts as a learned value."""
    return scalar_value_text(value)
