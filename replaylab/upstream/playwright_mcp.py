"""Playwright MCP's browser tools: which of them the server itself annotates read-only.

Source: `@playwright/mcp` 0.0.86, whose tools are those of its pinned `playwright-core`
1.66.0-alpha-2026-11-18 (`packages/playwright-core/src/tools/`). Each tool's schema has a `type`,
and `toMcpTool` (`tools/utils/mcp/tool.ts`) turns it into the MCP annotations every client sees:
`readOnlyHint` is true for the types `readOnly` and `assertion`, and `destructiveHint` is its
opposite. A recording that carries these annotations is read from them (`importers`); this table
gives the same answer for one that carries only the names (Claude Code's
`mcp__playwright__browser_snapshot`, OpenClaw's `playwright__browser_snapshot`).
"""

from __future__ import annotations

VERSION = "@playwright/mcp 0.0.86"

#: the tool types `toMcpTool` annotates `readOnlyHint: true`
READ_ONLY_TYPES = frozenset({"readOnly", "assertion"})

#: every browser tool of the version, by its schema `type`
TOOL_TYPES: dict[str, str] = {
    **dict.fromkeys(
        (
            "browser_annotate", "browser_console_clear", "browser_console_messages", "browser_cookie_get",
            "browser_cookie_list", "browser_find", "browser_generate_locator", "browser_get_config",
            "browser_hide_highlight", "browser_highlight", "browser_localstorage_get", "browser_localstorage_list",
            "browser_network_clear", "browser_network_request", "browser_network_requests", "browser_pdf_save",
            "browser_route_list", "browser_sessionstorage_get", "browser_sessionstorage_list", "browser_snapshot",
            "browser_start_recording", "browser_start_tracing", "browser_start_video", "browser_stop_recording",
            "browser_stop_tracing", "browser_stop_video", "browser_storage_state", "browser_take_screenshot",
            "browser_video_chapter", "browser_video_hide_actions", "browser_video_show_actions",
            "browser_webmcp_list",
        ),
        "readOnly",
    ),
    **dict.fromkeys(
        (
            "browser_verify_element_visible", "browser_verify_list_visible", "browser_verify_text_visible",
            "browser_verify_value", "browser_wait_for",
        ),
        "assertion",
    ),
    **dict.fromkeys(
        (
            "browser_check", "browser_click", "browser_drag", "browser_fill_form", "browser_hover",
            "browser_keydown", "browser_keyup", "browser_mouse_click_xy", "browser_mouse_down",
            "browser_mouse_drag_xy", "browser_mouse_move_xy", "browser_mouse_up", "browser_mouse_wheel",
            "browser_press_key", "browser_press_sequentially", "browser_select_option", "browser_type",
            "browser_uncheck",
        ),
        "input",
    ),
    **dict.fromkeys(
        (
            "browser_close", "browser_cookie_clear", "browser_cookie_delete", "browser_cookie_set", "browser_drop",
            "browser_emulate_media", "browser_evaluate", "browser_file_upload", "browser_handle_dialog",
            "browser_localstorage_clear", "browser_localstorage_delete", "browser_localstorage_set",
            "browser_navigate", "browser_navigate_back", "browser_navigate_forward", "browser_network_state_set",
            "browser_reload", "browser_resize", "browser_resume", "browser_route", "browser_run_code_unsafe",
            "browser_sessionstorage_clear", "browser_sessionstorage_delete", "browser_sessionstorage_set",
            "browser_set_storage_state", "browser_tabs", "browser_unroute", "browser_webmcp_call",
        ),
        "action",
    ),
}  # fmt: skip


def read_only_hint(name: str) -> bool | None:
    """The `readOnlyHint` the server gives the tool named `name` (its bare name, as the server
    lists it), or None for a name it does not have."""
    tool_type = TOOL_TYPES.get(name)
    return None if tool_type is None else tool_type in READ_ONLY_TYPES
