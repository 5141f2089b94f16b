"""Anthropic's text editor tool: which of its commands only read.

Source: Anthropic's tool-use documentation, "Text editor tool"
(docs.anthropic.com/en/docs/agents-and-tools/tool-use/text-editor-tool), tool types
`text_editor_20241022` and `text_editor_20250124` (named `str_replace_editor`) and
`text_editor_20250429` / `text_editor_20250728` (named `str_replace_based_edit_tool`). Its
`command` argument is `view` (a file's lines or a folder's listing), `create`, `str_replace`,
`insert` or `undo_edit`. OpenHands and SWE-agent give their editors the same name and commands.
"""

from __future__ import annotations

VERSIONS = "text_editor_20241022, text_editor_20250124, text_editor_20250429, text_editor_20250728"

#: the names the tool takes, spelled as the API requires
TEXT_EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool"})
#: the commands that only read
TEXT_EDITOR_READ_COMMANDS = frozenset({"view"})
#: the commands that change a file
TEXT_EDITOR_WRITE_COMMANDS = frozenset({"create", "str_replace", "insert", "undo_edit"})
