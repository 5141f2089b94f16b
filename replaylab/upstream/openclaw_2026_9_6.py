"""OpenClaw 2026.9.6's constants (npm `openclaw@2026.9.6`, the release users run), read from its
`dist/` and checked by running its code (`replaylab.oracles.openclaw` for the tool rules,
`replaylab.oracles.agent` with `node/openclaw-2026.9.6/session_oracle.mjs` for the session rules).
Paths are of that build's `dist/` (bundled file names carry a hash).
"""

from __future__ import annotations

from replaylab.upstream.profiles import AgentProfile

#: the agent profile of OpenClaw 2026.9.6: its own fork of pi's session and compaction code
#: (`packages/agent-core`, public as `openclaw/plugin-sdk/agent-core`)
PROFILE = AgentProfile(
    name="openclaw@2026.9.6",
    agent="openclaw",
    version="2026.9.6",
    npm_package="openclaw",
    oracle_folder="openclaw-2026.9.6",
    constants_module=__name__,
    # replaylab's truncation / guard / overflow rules are still 2026.4.12's
    runtime_rules="openclaw@2026.4.12",
    rules_module="replaylab.agents.openclaw_2026_9_6",
    oracle_entry="session_oracle.mjs",
    node_minimum=(24, 16),
    session_versions=frozenset({4}),
    source_kinds=frozenset({"openclaw"}),
)

# --- session format (transcript-payload-qsg5dB6v.mjs, session-entry-codec) --------------------
#: new sessions' header version; no code branches on it (3 and 4 are read alike)
CURRENT_SESSION_VERSION = 4
#: `reset` entries' `reason` (session-entry-codec)
RESET_REASONS = frozenset({"new", "reset", "idle", "daily", "cron-stale"})

# --- context rebuild (session-D9cHHQGH.mjs, packages/agent-core/src/harness/session/session.ts) --
#: `@openclaw/ai` `isCompactionReplayCheckpoint`: provider replay state a retained assistant
#: message loses when rebuilt (`stripCompactionReplayCheckpoint`)
COMPACTION_REPLAY_CHECKPOINT_TYPES = frozenset(
    {"anthropic-compaction", "openai-responses-compaction", "openai-responses-retained-compaction"}
)
#: tool-call block types of an assistant message (tool-result-pairing-Bky0eubt.mjs)
TOOL_CALL_BLOCK_TYPES = ("toolCall", "toolUse", "functionCall")
#: the fields a tool result's call id is read from, in order (`extractToolResultIds`)
TOOL_RESULT_ID_FIELDS = ("toolCallId", "toolUseId", "tool_call_id", "tool_use_id", "callId", "call_id")
#: a synthetic "missing tool result" OpenClaw inserts for transcript repair
SYNTHETIC_MISSING_TOOL_RESULT_DETAIL_KEY = "openclawSyntheticMissingToolResult"
DEFAULT_MISSING_TOOL_RESULT_TEXT = (
    "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair."
)

# --- token estimate (compaction-CAzwgOuQ.mjs estimateTokens, cjk-chars-6ld30jSx.mjs) -----------
CHARS_PER_TOKEN = 4
#: an image block counts as 2,000 tokens (user content included)
IMAGE_BLOCK_CHARS = 2_000 * CHARS_PER_TOKEN
IMAGE_OMISSION_TEXT = "[image data omitted from summary input]"
NON_TEXT_OMISSION_TEXT = "[non-text data omitted from summary input]"
#: what an omission line adds beyond its own text (`omissionText.length + 17`)
OMISSION_EXTRA_CHARS = 17
#: `estimateStringChars`: code point ranges and the characters each adds beyond its UTF-16 length
#: (weight 1: common CJK +3, rare BMP +11, two-token +7, three-token supplementary +10,
#: supplementary +14)
WEIGHTED_CJK_RANGES: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = (
    (3, ((0xB7, 0xB7), (0x3000, 0x319F), (0x4E00, 0x9FA5), (0xAC00, 0xD7AF), (0xFF01, 0xFF60))),
    (
        11,
        (
            (0x1100, 0x11FF),
            (0x2E80, 0x2FFF),
            (0x31A0, 0x4DFF),
            (0x9FA6, 0x9FFF),
            (0xA000, 0xA4BF),
            (0xA700, 0xA707),
            (0xA960, 0xA97F),
            (0xD7B0, 0xD7FF),
            (0xF900, 0xFAFF),
        ),
    ),
    (
        7,
        (
            (0x2C7, 0x2C7),
            (0x2C9, 0x2CB),
            (0x2D9, 0x2D9),
            (0x2EA, 0x2EB),
            (0x305, 0x305),
            (0x323, 0x323),
            (0xFE10, 0xFE4F),
            (0xFF61, 0xFFDC),
            (0xFFE0, 0xFFE6),
        ),
    ),
    (10, ((0x1D360, 0x1D371),)),
    (
        14,
        (
            (0x16FE0, 0x16FFF),
            (0x1AFF0, 0x1AFFF),
            (0x1B000, 0x1B16F),
            (0x1F200, 0x1F2FF),
            (0x20000, 0x2FA1F),
            (0x30000, 0x3344F),
        ),
    ),
)

# --- compaction (compaction-CAzwgOuQ.mjs prepareCompaction / findCutPoint) ---------------------
DEFAULT_KEEP_RECENT_TOKENS = 20_000
DEFAULT_RESERVE_TOKENS = 16_384
#: `stopReason`s whose usage never counts (`getAssistantUsage`)
UNUSABLE_STOP_REASONS = frozenset({"aborted", "error"})

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
