"""pi's file lists: the files the summarized calls read and modified, and their `<read-files>` /
`<modified-files>` sections (bounded for the safeguard summary, whole for pi's own)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.summary.cap import cap_summary
from replaylab.safety.nested_calls import recorded_nested_calls
from replaylab.transcript.model import AssistantMessage, ToolResultMessage
from replaylab.upstream.openclaw_2026_4_12 import MAX_FILE_OPS_LIST_CHARS, MAX_FILE_OPS_SECTION_CHARS
from replaylab.upstream.pi_0_73_1 import (
    FILE_OP_EDIT_TOOLS,
    FILE_OP_READ_TOOLS,
    FILE_OP_WRITE_TOOLS,
    MODIFIED_FILES_TAG,
    READ_FILES_TAG,
)


@dataclass
class FileOps:
    """The paths read, written and edited so far."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def lists(self) -> tuple[list[str], list[str]]:
        """(read only, modified): a file both read and modified counts as modified."""
        modified = self.edited | self.written
        return sorted(self.read - modified), sorted(modified)


#: replaylab: Claude Code spells the file tools Read / Write / Edit / MultiEdit with `file_path`
_PATH_KEYS = ("path", "file_path", "notebook_path")
#: replaylab: Claude Code's edit tools beyond pi's `edit`
_MORE_EDIT_TOOLS = ("multiedit", "notebookedit")


def collect_file_ops(messages: Iterable[Any], ops: FileOps | None = None, *, nested_calls: bool = False) -> FileOps:
    """pi `extractFileOpsFromMessage`: read / write / edit calls with a string path. `nested_calls`
    (the profile's `file_ops_from_nested_calls`): a tool result's recorded nested calls count too,
    as pi 1.6.0 reads them (a call whose arguments the record omits names no path)."""
    ops = ops or FileOps()
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls():
                _add_file_op(call.name, call.arguments, ops)
        elif nested_calls and isinstance(message, ToolResultMessage):
            for name, args in recorded_nested_calls(message):
                _add_file_op(name, args, ops)
    return ops


def _add_file_op(name: str, args: Any, ops: FileOps) -> None:
    if not isinstance(args, dict):
        return
    path = next((args.get(k) for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
    if not path:
        return
    name = name.lower()
    if name in FILE_OP_READ_TOOLS:
        ops.read.add(path)
    elif name in FILE_OP_WRITE_TOOLS:
        ops.written.add(path)
    elif name in FILE_OP_EDIT_TOOLS or name in _MORE_EDIT_TOOLS:
        ops.edited.add(path)


def _bounded_file_list(tag: str, files: Sequence[str], max_chars: int) -> str:
    if not files or max_chars <= 0:
        return ""
    open_tag, close_tag = f"<{tag}>\n", f"\n</{tag}>"
    lines: list[str] = []
    used = len(open_tag) + len(close_tag)
    for i, name in enumerate(files):
        line = f"{name}\n"
        remaining = len(files) - i - 1
        overflow = f"...and {remaining} more\n" if remaining else ""
        if used + len(line) + len(overflow) > max_chars:
            overflow = f"...and {len(files) - i} more\n"
            if used + len(overflow) <= max_chars:
                lines.append(overflow)
            break
        lines.append(line)
        used += len(line)
    return f"{open_tag}{''.join(lines)}{close_tag}" if lines else ""


def format_file_operations(read: Sequence[str], modified: Sequence[str], *, bounded: bool = True) -> str:
    """`<read-files>` / `<modified-files>` sections; `bounded` (safeguard): each list within
    `MAX_FILE_OPS_LIST_CHARS`, the whole within `MAX_FILE_OPS_SECTION_CHARS`."""
    if not bounded:
        parts = [
            f"<{READ_FILES_TAG}>\n" + "\n".join(read) + f"\n</{READ_FILES_TAG}>" if read else "",
            f"<{MODIFIED_FILES_TAG}>\n" + "\n".join(modified) + f"\n</{MODIFIED_FILES_TAG}>" if modified else "",
        ]
        return "".join(f"\n\n{p}" for p in parts if p)
    sections = [
        s
        for s in (
            _bounded_file_list(READ_FILES_TAG, read, MAX_FILE_OPS_LIST_CHARS),
            _bounded_file_list(MODIFIED_FILES_TAG, modified, MAX_FILE_OPS_LIST_CHARS),
        )
        if s
    ]
    if not sections:
        return ""
    return cap_summary("\n\n" + "\n\n".join(sections), MAX_FILE_OPS_SECTION_CHARS)
