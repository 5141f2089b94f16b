"""OpenClaw 2026.9.6's compaction file lists (npm `openclaw@2026.9.6`, `dist/compaction-CAzwgOuQ.mjs`:
packages/agent-core/src/harness/compaction/utils.ts and compaction.ts), the openclaw@2026.9.6
profile's `file_ops`. Both of its compactions list them so: agent-core's `compact` and the safeguard
handler (`compactionSafeguardExtension`, builtin-openclaw-q1hiFm14.mjs) read `preparation.fileOps`
through `computeFileLists` and write `formatFileOperations`' sections.
"""

from __future__ import annotations

from typing import Final

from replaylab.upstream.profiles import FileListsOrder, FileOpsRules

#: `extractFileOpsFromMessage`, an assistant's `toolCall` blocks: the path is the first string of
#: `arguments.path`, `.file_path`, `.filePath`; only `read`, `write` and `edit` count
PATH_KEYS = ("path", "file_path", "filePath")
#: `normalizeFileToolName`: lower-cased, the name after its first `__` (past a leading `mcp__`)
SERVER_SEPARATOR = "__"
SERVER_PREFIX = "mcp__"
#: `extractFileOpsFromMessage`, a `toolResult` of this tool (its name normalized): on the message and
#: on each of its content blocks, `details.summary.added` are written and `.modified` edited;
#: `.deleted` counts in no list (core-coding-tools-DiXs0QQ9.mjs `createApplyPatchTool` returns
#: `details: {summary: {added, modified, deleted}}`, a move listed under `modified` by its target)
PATCH_TOOL = "apply_patch"
PATCH_SUMMARY_KEY = "summary"
PATCH_ADDED_KEY = "added"
PATCH_MODIFIED_KEY = "modified"
#: `formatFileOperations`: each list within 900 units and the sections within
#: `MAX_FILE_OPS_SECTION_CHARS` (cut, no marker), as 2026.4.12; each list's last line trimmed at
#: its end (`lines.join("").trimEnd()`), which 2026.4.12 did not do
MAX_FILE_OPS_LIST_CHARS = 900
MAX_FILE_OPS_SECTION_CHARS = 2_000
#: `computeFileLists`: each list `.toSorted()`, JavaScript's default order (the profile's `file_lists_order`)
FILE_LISTS_ORDER: Final[FileListsOrder] = "utf16-units"

FILE_OPS = FileOpsRules(
    path_keys=PATH_KEYS,
    read_tools=frozenset({"read"}),
    write_tools=frozenset({"write"}),
    edit_tools=frozenset({"edit"}),
    server_separator=SERVER_SEPARATOR,
    server_prefix=SERVER_PREFIX,
    patch_tool=PATCH_TOOL,
    # `extractFileOperations` / `parseCompactionDetails`: a previous compaction not `fromHook` adds its
    # `readFiles` (read) and `modifiedFiles` (edited) only when both are arrays of strings; the safeguard
    # reads the same `preparation.fileOps`, so its lists hold them too
    previous_lists_whole=True,
    list_chars=MAX_FILE_OPS_LIST_CHARS,
    section_chars=MAX_FILE_OPS_SECTION_CHARS,
    # builtin-openclaw-q1hiFm14.mjs `compactionSafeguardExtension`: with no real conversation in the
    # span nor in the session's context, its fallback compaction is `{summary, firstKeptEntryId,
    # tokensBefore}`, no `details`; its lists are read only after that return
    lists_with_fallback=False,
)
