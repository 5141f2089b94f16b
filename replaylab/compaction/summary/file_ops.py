"""pi's file lists: the files the summarized calls read and modified, and their `<read-files>` /
`<modified-files>` sections (bounded for the safeguard summary, whole for pi's own); an agent whose
profile has its own rules (`FileOpsRules`: OpenClaw 2026.9.6) reads and writes them by those."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.js_strings import Utf16Text
from replaylab.compaction.summary.cap import cap_summary
from replaylab.safety.agent_tools import recorded_attribute
from replaylab.safety.nested_calls import recorded_nested_calls
from replaylab.transcript.javascript import utf16_length, utf16_sort_key
from replaylab.transcript.model import AssistantMessage, OpaqueBlock, ToolResultMessage
from replaylab.transcript.pairing import message_calls
from replaylab.upstream.openclaw_2026_4_12 import MAX_FILE_OPS_LIST_CHARS, MAX_FILE_OPS_SECTION_CHARS
from replaylab.upstream.openclaw_2026_9_6 import JS_WHITESPACE
from replaylab.upstream.openclaw_2026_9_6_file_ops import PATCH_ADDED_KEY, PATCH_MODIFIED_KEY, PATCH_SUMMARY_KEY
from replaylab.upstream.pi_0_73_1 import (
    FILE_OP_EDIT_TOOLS,
    FILE_OP_READ_TOOLS,
    FILE_OP_WRITE_TOOLS,
    MODIFIED_FILES_TAG,
    READ_FILES_TAG,
)
from replaylab.upstream.profiles import FileListsOrder, FileOpsRules


@dataclass
class FileOps:
    """The paths read, written and edited so far."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def lists(self, order: FileListsOrder = "code-points") -> tuple[list[str], list[str]]:
        """(read only, modified): a file both read and modified counts as modified (`computeFileLists`),
        each list in the profile's `order` (`file_lists_order`)."""
        modified = self.edited | self.written
        key = utf16_sort_key if order == "utf16-units" else None
        return sorted(self.read - modified, key=key), sorted(modified, key=key)

    def merge_previous(self, details: Any, rules: FileOpsRules | None = None) -> None:
        """A previous compaction's `details` lists: `readFiles` read, `modifiedFiles` edited. pi's
        `Array.isArray` per list (its string items); an agent's `rules.previous_lists_whole`
        (`parseCompactionDetails`): both lists of strings, else neither counts."""
        details = details if isinstance(details, dict) else {}
        lists = [details.get(key) for key in ("readFiles", "modifiedFiles")]
        if rules is not None and rules.previous_lists_whole:
            if not all(isinstance(x, list) and all(isinstance(f, str) for f in x) for x in lists):
                return
        for files, into in zip(lists, (self.read, self.edited)):
            into.update(x for x in (files if isinstance(files, list) else ()) if isinstance(x, str))


#: replaylab: Claude Code spells the file tools Read / Write / Edit / MultiEdit with `file_path`
_PATH_KEYS = ("path", "file_path", "notebook_path")
#: replaylab: Claude Code's edit tools beyond pi's `edit`
_MORE_EDIT_TOOLS = ("multiedit", "notebookedit")


def collect_file_ops(
    messages: Iterable[Any],
    ops: FileOps | None = None,
    *,
    nested_calls: bool = False,
    rules: FileOpsRules | None = None,
) -> FileOps:
    """pi `extractFileOpsFromMessage`: read / write / edit calls with a string path. `nested_calls`
    (the profile's `file_ops_from_nested_calls`): a tool result's recorded nested calls count too,
    as pi 1.6.0 reads them (a call whose arguments the record omits names no path). `rules` (the
    profile's `file_ops`): the agent's own reading instead (`agent_file_ops`)."""
    ops = ops or FileOps()
    if rules is not None:
        for message in messages:
            agent_file_ops(message, ops, rules)
        return ops
    for message in messages:
        if isinstance(message, AssistantMessage):
            # a call paired from an item no block model reads counts as pi reads it: its arguments
            # are no object, or its name no string, so it names no file
            for call in message_calls(message):
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


def agent_file_ops(message: Any, ops: FileOps, rules: FileOpsRules) -> None:
    """OpenClaw 2026.9.6's `extractFileOpsFromMessage` by `rules`: an assistant's calls of the read /
    write / edit tools with a path (`rules.path_keys`), and the files a result of `rules.patch_tool`
    says it added (written) and modified (edited), on the result and on each of its content blocks;
    tool names as `normalizeFileToolName` reads them (`tool_name`)."""
    if isinstance(message, ToolResultMessage):
        if tool_name(message.tool_name, rules) != rules.patch_tool:
            return
        for holder in (message, *(message.content if isinstance(message.content, list) else ())):
            # an item no block model reads is read as written (OpenClaw reads any object's details)
            if type(holder) is OpaqueBlock:
                details = holder.value.get("details") if isinstance(holder.value, dict) else None
            else:
                details = recorded_attribute(holder, "details")
            summary = details.get(PATCH_SUMMARY_KEY) if isinstance(details, dict) else None
            if isinstance(summary, dict):
                for key, into in ((PATCH_ADDED_KEY, ops.written), (PATCH_MODIFIED_KEY, ops.edited)):
                    files = summary.get(key)
                    into.update(x for x in (files if isinstance(files, list) else ()) if isinstance(x, str))
    elif isinstance(message, AssistantMessage):
        for call in message_calls(message):
            path = next((v for k in rules.path_keys if isinstance(v := call.arguments.get(k), str)), None)
            if not path:
                continue
            name = tool_name(call.name, rules)
            if name in rules.read_tools:
                ops.read.add(path)
            elif name in rules.write_tools:
                ops.written.add(path)
            elif name in rules.edit_tools:
                ops.edited.add(path)


def tool_name(value: Any, rules: FileOpsRules) -> str:
    """`normalizeFileToolName`: lower-cased; a name holding the server separator names its tool
    after the first one (searched past a leading `rules.server_prefix`)."""
    name = value.lower() if isinstance(value, str) else ""
    start = len(rules.server_prefix) if rules.server_prefix and name.startswith(rules.server_prefix) else 0
    at = name.find(rules.server_separator, start) if rules.server_separator else -1
    return name if at < 0 else name[at + len(rules.server_separator) :]


def _bounded_file_list(
    tag: str, files: Sequence[str], max_chars: int, *, length: Callable[[str], int] = len, trim_end: bool = False
) -> str:
    if not files or max_chars <= 0:
        return ""
    open_tag, close_tag = f"<{tag}>\n", f"\n</{tag}>"
    lines: list[str] = []
    used = length(open_tag) + length(close_tag)
    for i, name in enumerate(files):
        line = f"{name}\n"
        remaining = len(files) - i - 1
        overflow = f"...and {remaining} more\n" if remaining else ""
        if used + length(line) + length(overflow) > max_chars:
            overflow = f"...and {len(files) - i} more\n"
            if used + length(overflow) <= max_chars:
                lines.append(overflow)
            break
        lines.append(line)
        used += length(line)
    if not lines:
        return ""
    body = "".join(lines)
    return f"{open_tag}{body.rstrip(JS_WHITESPACE) if trim_end else body}{close_tag}"


def format_file_operations(
    read: Sequence[str], modified: Sequence[str], *, bounded: bool = True, rules: FileOpsRules | None = None
) -> str:
    """`<read-files>` / `<modified-files>` sections; `bounded` (safeguard): each list within
    `MAX_FILE_OPS_LIST_CHARS`, the whole within `MAX_FILE_OPS_SECTION_CHARS`. `rules` (an agent's,
    in every mode): its `formatFileOperations`, sized in UTF-16 units, each list's end trimmed,
    the sections cut at their limit without a marker."""
    if rules is not None:
        found = [
            s
            for tag, files in ((READ_FILES_TAG, read), (MODIFIED_FILES_TAG, modified))
            if (s := _bounded_file_list(tag, files, rules.list_chars, length=utf16_length, trim_end=True))
        ]
        joined = "\n\n" + "\n\n".join(found) if found else ""
        return Utf16Text(joined).slice(0, rules.section_chars) if utf16_length(joined) > rules.section_chars else joined
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
