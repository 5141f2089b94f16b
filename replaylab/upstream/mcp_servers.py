"""MCP servers agents use most, and which of their tools each server itself annotates read-only.

Each table is the `readOnlyHint` every tool of the pinned server carries in its own `tools/list`
answer (`readOnlyHint` absent is false, as MCP defines it), which is what every client is told.
`tests/oracles/test_mcp_servers_oracle.py` starts each pinned server and holds its table to
that answer. A recording that carries the annotations is read from them (`importers`); these
tables give the same answer for one that carries only the names.

Most servers' names are common words (`click`, `take_screenshot`, `read_file`) that another
server may give a tool of its own, so their table applies only where the tool's namespace names
the server: Claude Code's `mcp__chrome-devtools__take_screenshot` or a plugin's
`mcp__plugin_x_chrome-devtools__…`, OpenClaw's `chrome_devtools__take_screenshot`. Playwright MCP's
names are its own (`browser_snapshot`), so its table (`playwright_mcp.py`) applies by name alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from replaylab.upstream import playwright_mcp as PW


@dataclass(frozen=True)
class McpServer:
    """A pinned MCP server: the key its README registers it under, its package and version, and
    the tools it annotates `readOnlyHint: true` among all it lists."""

    key: str
    package: str
    version: str
    read_only: frozenset[str]
    tools: frozenset[str]
    #: the names are the server's own, so they are read under any namespace
    named_alone: bool = False


SERVERS: tuple[McpServer, ...] = (
    McpServer(
        key="playwright",
        package=PW.VERSION.split()[0],
        version=PW.VERSION.split()[1],
        read_only=frozenset(name for name in PW.TOOL_TYPES if PW.read_only_hint(name)),
        tools=frozenset(PW.TOOL_TYPES),
        named_alone=True,
    ),
    McpServer(
        key="filesystem",
        package="@modelcontextprotocol/server-filesystem",
        version="2026.8.31",
        read_only=frozenset(
            {
                "directory_tree",
                "get_file_info",
                "list_allowed_directories",
                "list_directory",
                "list_directory_with_sizes",
                "read_file",
                "read_media_file",
                "read_multiple_files",
                "read_text_file",
                "search_files",
            }
        ),
        tools=frozenset(
            {
                "create_directory",
                "directory_tree",
                "edit_file",
                "get_file_info",
                "list_allowed_directories",
                "list_directory",
                "list_directory_with_sizes",
                "move_file",
                "read_file",
                "read_media_file",
                "read_multiple_files",
                "read_text_file",
                "search_files",
                "write_file",
            }
        ),
    ),
    McpServer(
        key="memory",
        package="@modelcontextprotocol/server-memory",
        version="2026.8.31",
        read_only=frozenset({"open_nodes", "read_graph", "search_nodes"}),
        tools=frozenset(
            {
                "add_observations",
                "create_entities",
                "create_relations",
                "delete_entities",
                "delete_observations",
                "delete_relations",
                "open_nodes",
                "read_graph",
                "search_nodes",
            }
        ),
    ),
    # `take_screenshot` and `get_network_request` can save what they get to a file the call names,
    # and the server annotates both not read-only
    McpServer(
        key="chrome-devtools",
        package="chrome-devtools-mcp",
        version="1.11.0",
        read_only=frozenset(
            {
                "get_console_message",
                "get_css_styles",
                "list_console_messages",
                "list_network_requests",
                "list_pages",
                "performance_analyze_insight",
                "select_page",
                "wait_for",
            }
        ),
        tools=frozenset(
            {
                "click",
                "close_page",
                "drag",
                "emulate",
                "evaluate_script",
                "fill",
                "fill_form",
                "get_console_message",
                "get_css_styles",
                "get_network_request",
                "handle_dialog",
                "hover",
                "lighthouse_audit",
                "list_console_messages",
                "list_network_requests",
                "list_pages",
                "navigate_page",
                "new_page",
                "performance_analyze_insight",
                "performance_start_trace",
                "performance_stop_trace",
                "press_key",
                "resize_page",
                "screencast_start",
                "screencast_stop",
                "select_page",
                "take_heapsnapshot",
                "take_screenshot",
                "take_snapshot",
                "type_text",
                "upload_file",
                "wait_for",
            }
        ),
    ),
)


def server_of(namespace: str, tool: str) -> McpServer | None:
    """The pinned server whose tool `tool` is, when its names are its own or `namespace` (the part
    of the name before the tool's own: `mcp__chrome-devtools__`, `chrome_devtools__`) names it."""
    spelled = namespace.lower().replace("_", "-")  # OpenClaw's `chrome_devtools__` is `chrome-devtools`
    return next(
        (s for s in SERVERS if tool in s.tools and (s.named_alone or (spelled and s.key in spelled))),
        None,
    )
