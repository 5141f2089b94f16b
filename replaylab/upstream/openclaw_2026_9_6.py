"""OpenClaw 2026.9.6's constants (npm `openclaw@2026.9.6`, the release users run), read from its
`dist/` and checked by running its code (`replaylab.oracles.openclaw`).
"""

from __future__ import annotations

# --- replay safety: OpenClaw 2026.9.6 (npm `openclaw`), src/agents/tool-mutation.ts ---------
# (dist/tool-mutation-BV25PrZA.mjs; `isComputerObservationAction` from
# src/agents/tools/computer-tool-shared.ts, `isAutomationsToolName` from
# src/agents/tools/automations-tool-name.ts). replaylab/safety/openclaw_rules.py mirrors the logic.
OPENCLAW_RULES_VERSION = "2026.9.6"
#: `isMutatingToolCall`'s names that always mutate
OPENCLAW_ALWAYS_MUTATING_TOOLS = frozenset(
    {
        "write",
        "edit",
        "apply_patch",
        "sessions_spawn",
        "sessions_send",
        "conversations_send",
        "conversations_turn",
        "create_goal",
        "update_goal",
    }
)
OPENCLAW_SHELL_TOOLS = frozenset({"exec", "bash"})
READ_ONLY_ACTIONS = frozenset(
    {
        "get",
        "list",
        "read",
        "status",
        "show",
        "fetch",
        "search",
        "query",
        "view",
        "poll",
        "log",
        "inspect",
        "check",
        "probe",
        "runs",
    }
)
PROCESS_MUTATING_ACTIONS = frozenset({"write", "send_keys", "submit", "paste", "kill", "clear", "remove"})
PROCESS_REPLAY_SAFE_ACTIONS = frozenset({"list", "log"})
MESSAGE_READ_ONLY_ACTIONS = frozenset(
    {
        "reactions",
        "read",
        "list_pins",
        "permissions",
        "thread_list",
        "search",
        "sticker_search",
        "member_info",
        "role_info",
        "emoji_list",
        "channel_info",
        "channel_list",
        "voice_status",
        "event_list",
    }
)
#: `isReplaySafeToolCall`'s tools that are safe whatever their arguments
REPLAY_SAFE_TOOL_NAMES = frozenset(
    {
        "agents_list",
        "conversations_list",
        "find",
        "get_goal",
        "glob",
        "grep",
        "view_image",
        "ls",
        "memory_get",
        "pdf",
        "read",
        "search",
        "sessions_history",
        "sessions_list",
        "sessions_search",
        "tool_describe",
        "tool_search",
        "web_fetch",
        "web_search",
        "x_search",
    }
)
BROWSER_READ_ONLY_ACTIONS = frozenset({"console", "profiles", "snapshot", "status", "tabs"})
MOBILE_UI_REPLAY_SAFE_ACTIONS = frozenset({"observe"})
GATEWAY_REPLAY_SAFE_ACTIONS = frozenset({"config.get", "config.schema.lookup"})
NODES_REPLAY_SAFE_ACTIONS = frozenset({"status", "describe", "pending"})
COMPUTER_OBSERVATION_ACTIONS = frozenset(
    {
        "screenshot",
        "wait",
        "list_apps",
        "list_windows",
        "get_accessibility_tree",
        "get_cursor_position",
        "get_window_state",
        "zoom",
        "get_browser_state",
        "get_recording_state",
    }
)
AUTOMATIONS_TOOL_NAMES = frozenset({"automations", "cron"})
READ_ONLY_SHELL_COMMANDS = frozenset({"cat", "grep", "head", "ls", "pwd", "rg", "stat", "tail", "wc"})
READ_ONLY_GH_PR_SUBCOMMANDS = frozenset({"checks", "diff", "list", "status", "view"})
READ_ONLY_GH_ISSUE_SUBCOMMANDS = frozenset({"list", "status", "view"})
UNSAFE_RG_FLAGS = frozenset({"--hostname-bin", "--pre", "--pre-glob", "--search-zip", "-z"})
UNSAFE_RG_VALUE_FLAGS = ("--hostname-bin", "--pre", "--pre-glob")
#: a command holding any of these is refused the read-only exemption (`tokenizeSimpleShellCommand`)
SHELL_OPERATOR_CHARS = frozenset(";&|<>\n\r`")
SHELL_EXPANSION_CHARS = ("$", "*", "?", "[", "]", "{", "}", "~")
#: JavaScript's `\\s` and `String.prototype.trim`: WhiteSpace and LineTerminator of ECMA-262
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
