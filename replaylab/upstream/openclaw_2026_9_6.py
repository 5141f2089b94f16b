"""OpenClaw 2026.9.6's constants (npm `openclaw@2026.9.6`, the release users run), read from its
`dist/` and checked by running its code (`replaylab.oracles.openclaw` for the tool rules,
`replaylab.oracles.agent` with `node/openclaw-2026.9.6/session_oracle.mjs` for the session rules,
the conformance harness of tests/oracles/test_openclaw_conformance.py for the runtime rules). Chunk
names are those of that build's `dist/`; the TypeScript source each region names is given with it.
"""

from __future__ import annotations

from replaylab.upstream.openclaw_2026_9_6_file_ops import FILE_LISTS_ORDER, FILE_OPS
from replaylab.upstream.openclaw_2026_9_6_real_conversation import REAL_CONVERSATION
from replaylab.upstream.openclaw_2026_9_6_unestimable import UNESTIMABLE
from replaylab.upstream.profiles import AgentProfile

# --- session format (transcript-payload-qsg5dB6v.mjs, session-entry-codec) --------------------
#: new sessions' header version; no code branches on it (3 and 4 are read alike)
CURRENT_SESSION_VERSION = 4
#: entries only OpenClaw writes (`appendResetBoundary`, leaf controls): a session no header claims is its if it has one
RESET_ENTRY_TYPE = "reset"
LEAF_ENTRY_TYPE = "leaf"
#: the custom entry OpenClaw writes with the model of a turn (builtin-openclaw chunk,
#: `MODEL_SNAPSHOT_CUSTOM_TYPE`), also in the version-3 files releases before it wrote
MODEL_SNAPSHOT_CUSTOM_TYPE = "model-snapshot"
#: OpenClaw 2026.9.6's profile: its own fork of pi's session and compaction code (`openclaw/plugin-sdk/agent-core`)
PROFILE = AgentProfile(
    name="openclaw@2026.9.6",
    agent="openclaw",
    version="2026.9.6",
    npm_package="openclaw",
    oracle_folder="openclaw-2026.9.6",
    constants_module=__name__,
    runtime_rules="openclaw@2026.9.6",
    rules_module="replaylab.agents.openclaw_2026_9_6",
    oracle_entry="session_oracle.mjs",
    node_minimum=(24, 16),
    session_versions=frozenset({4}),
    source_kinds=frozenset({"openclaw"}),
    entry_types=frozenset({RESET_ENTRY_TYPE, LEAF_ENTRY_TYPE}),
    custom_types=frozenset({MODEL_SNAPSHOT_CUSTOM_TYPE}),
    # session-D9cHHQGH.mjs `convertToLlm`: `case "bashExecution"` and `case "custom"` both return
    # nothing for a message whose `excludeFromContext` is set (an `openclaw.nested-tool.v1` record
    # of a call Tool Search's code made is one), even in a reset's kept range
    never_shown_when_excluded=frozenset({"bashExecution", "custom"}),
    # session-D9cHHQGH.mjs `projectSessionEntryMessage` / `iterateSessionContextEntries`: a message entry whose
    # `excludeFromContext === true` projects to nothing, whatever its role (a context-free command and its gateway
    # reply, chat-send-handler / chat-transcript-persistence); only a reset's kept range restores such a message
    drops_every_excluded_message=True,
    file_ops=FILE_OPS,  # compaction-CAzwgOuQ.mjs `extractFileOpsFromMessage`, `formatFileOperations`
    file_lists_order=FILE_LISTS_ORDER,  # the same chunk's `computeFileLists`
    real_conversation=REAL_CONVERSATION,  # builtin-openclaw-q1hiFm14.mjs `containsRealConversation`
    refuses_after_compaction_leaf=True,  # compaction-CAzwgOuQ.mjs `prepareCompaction`: a hook's compaction leaf
    unestimable=UNESTIMABLE,  # its own estimate and summarizer where they fail on a message
)

# --- session entries (session-entry-codec) ----------------------------------------------------
#: `reset` entries' `reason` (session-entry-codec)
RESET_REASONS = frozenset({"new", "reset", "idle", "daily", "cron-stale"})

# --- context rebuild (session-D9cHHQGH.mjs, packages/agent-core/src/harness/session/session.ts) --
#: provider replay state a retained assistant loses when rebuilt (`@openclaw/ai` `stripCompactionReplayCheckpoint`)
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
#: OpenClaw's own tools that change nothing outside the session, by their descriptions
#: (`openclaw-tools-*.mjs` `createProgressCardTool` / `createSessionsYieldTool`,
#: `subagent-registry-*.mjs` `structured_output`): class and what each does. `isMutatingToolCall`
#: names none of them (not mutating); `suggest_task`, `dismiss_task` (cards in the operator's UI,
#: through the gateway) and `tts` (audio delivered to the user) act outside it and are not here.
SESSION_OWN_TOOLS: dict[str, tuple[str, str]] = {
    "progress_card": ("state", "maintains the session's own progress card, the status OpenClaw's UIs show beside it"),
    "sessions_yield": ("state", "ends the turn to wait for the session's child runs; it submits nothing"),
    "structured_output": ("interaction", "submits the run's result in its requested JSON schema, once"),
}
#: OpenClaw's tools whose documentation (`docs/tools/*.md`) says what `isMutatingToolCall` does not
#: decide and no name rule can tell: class and what each does. `show_widget` shows a widget on the
#: user's surface, which its name's verb would take for a read; `code_execution` and `llm-task`
#: only compute elsewhere, which their names do not say.
DOCUMENTED_TOOLS: dict[str, tuple[str, str]] = {
    "show_widget": (
        "write",
        "shows an HTML widget on the user's surface, and may pin it to the dashboard or post it to a Discord channel",
    ),
    "code_execution": ("compute", "runs Python in xAI's remote sandbox, which reaches nothing of the user's"),
    "llm-task": ("compute", "runs one JSON-only model call and returns its output"),
    # Tool Search's code mode (`local-model-lean-*.mjs` `createToolSearchTools`): its name's verb
    # says search, but its code calls the catalog's tools (`openclaw.tools.call`), each recorded
    # only as an `openclaw.nested-tool.v1` message excluded from the context
    "tool_search_code": (
        "exec",
        "runs JavaScript whose `openclaw.tools.call(id, args)` calls any tool of the catalog, writes and sends "
        "included (each nested call is recorded only as an `openclaw.nested-tool.v1` message)",
    ),
}
# --- Code Mode's control tools: src/agents/code-mode-control-tools.ts, code-mode-execution.ts
#     (code-mode-control-tools-fvyqQnLi.mjs, tool-surface-bridge-CuOL1qP8.mjs `createCodeModeTools`,
#     `readCode`, `readRunId`, `runWait`). With code mode engaged the model sees only these two:
#     `exec` runs JavaScript whose globals call any catalog tool, writes included; `wait` resumes a
#     cell that returned `waiting` (`runCodeModeExecutor({kind: "resume"})`) to call more of them.
CODE_MODE_EXEC_TOOL_NAME = "exec"
CODE_MODE_WAIT_TOOL_NAME = "wait"
#: `readCode`: the program's key; `command` is its alias, the same JavaScript (never a shell command)
CODE_MODE_CODE_KEY = "code"
#: `readRunId`: the keys `wait` reads the suspended run's id from
CODE_MODE_RUN_ID_KEYS = ("runId", "run_id")
#: src/sessions/nested-tool-activity.ts (nested-tool-activity-Cz_FrJ3z.mjs): the message each
#: completed nested call of a cell persists as, `details.parentToolCallId` naming the cell's call
NESTED_TOOL_CUSTOM_TYPE = "openclaw.nested-tool.v1"
# --- Tool Search's dispatcher: src/agents/tool-search-types.ts, tool-search-request.ts,
#     tool-search-catalog.ts (local-model-lean-CHSAjCEl.mjs `createToolSearchTools`,
#     `prepareToolSearchDispatcherArguments`, `readToolSearchCallArgs`, `makeCatalogId`)
#: `tool_call {id, args}` calls one catalog tool by its result id or name
TOOL_CALL_TOOL_NAME = "tool_call"
#: never in the catalog (`shouldCatalogTool`): `tool_call` cannot call them
TOOL_SEARCH_CONTROL_TOOL_NAMES = frozenset({"tool_search_code", "tool_search", "tool_describe", "tool_call"})
#: `TOOL_SEARCH_SELECTOR_KEYS`, in the order `readToolSearchSelector` reads them
TOOL_SEARCH_SELECTOR_KEYS = ("id", "toolId", "name")
#: a catalog id is `<source>:<sourceName>:<tool name>` (`makeCatalogId`), source one of these
TOOL_SEARCH_CATALOG_SOURCES = frozenset({"openclaw", "mcp", "client"})
#: `validateToolArguments` (packages/llm-core/src/validation.ts, validation-Dw7cb6BV.mjs) runs after
#: `prepareArguments`: `coerceWithJsonSchema` reads a string up to this long (UTF-16, `MAX_JSON_COERCE_LENGTH`)
#: holding a JSON object as that object where the schema wants one (`tool_call`'s `args`, a Record)
JSON_COERCE_MAX_LENGTH = 65536
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

# --- MCP tool names: src/agents/agent-bundle-mcp-names.ts (agent-bundle-mcp-names-38ksiKnf.mjs) ---
#: `buildSafeToolName`: an MCP server's tool reaches the model (and the session) as
#: `<server>__<tool>`, the server's name sanitized to `[A-Za-z0-9_-]` and starting with a letter
#: (`sanitizeServerName`: at most 30 characters, `-N` on a collision)
MCP_TOOL_NAME_SEPARATOR = "__"
MCP_SERVER_NAME_MAX_CHARS = 30

# --- tool-result size control: packages/normalization-core/src/cjk-chars.ts (cjk-chars-6ld30jSx.mjs),
#     src/agents/embedded-agent-runner/tool-result-truncation.ts, context-truncation-notice.ts,
#     src/agents/tool-result-limits.ts (tool-result-truncation-Cy0wmrxC.mjs, tool-result-limits-B-fhY8wF.mjs)
#: `formatContextLimitTruncationNotice(n)`
TRUNCATION_NOTICE = "[... {n} more characters truncated; rerun with narrower args if needed]"
#: the recovery rewrite's notice (`COMPACT_RECOVERY_SUFFIX`): its aggregate phase uses it instead
#: of `TRUNCATION_NOTICE` when the aggregate budget is under one full notice per result
RECOVERY_TRUNCATION_NOTICE = "[... {n} chars truncated; narrow args]"
#: what `clearToolResultText` puts in a result's text blocks (cut to what the budget leaves)
AGGREGATE_ELISION_MARKER = (
    "[tool result elided: aggregate tool-result budget exceeded; rerun the command if the output is needed]"
)
MIN_KEEP_CHARS = 2_000
#: the recovery rewrite's floor (`RECOVERY_MIN_KEEP_CHARS`, buildRecoveryToolResultReplacementPlan)
RECOVERY_MIN_KEEP_CHARS = 0
#: `resolveLiveToolResultAggregateMaxChars` (tool-result-truncation.ts): the results' aggregate text
#: budget is max(per-result cap x `PROMPT_TOOL_RESULT_AGGREGATE_CAP_MULTIPLIER`,
#: floor(window tokens x 4 x `AGGREGATE_TOOL_RESULT_CONTEXT_SHARE`))
PROMPT_TOOL_RESULT_AGGREGATE_CAP_MULTIPLIER = 4
AGGREGATE_TOOL_RESULT_CONTEXT_SHARE = 0.5
#: `estimateStringCharsWithMinimumRawWeight`: each code point in these ranges weighs more than its
#: UTF-16 units, by category: (ranges, extra weight as (constant, times the raw weight subtracted))
CJK_WEIGHT_CATEGORIES: tuple[tuple[tuple[tuple[int, int], ...], int, int], ...] = (
    # common CJK, Hangul syllables, full-width forms: a character weighs 4
    (((0xB7, 0xB7), (0x3000, 0x319F), (0x4E00, 0x9FA5), (0xAC00, 0xD7AF), (0xFF01, 0xFF60)), 4, 1),
    # rare BMP (Hangul jamo, radicals, extension A, Yi, ...): 12
    (
        (
            (0x1100, 0x11FF),
            (0x2E80, 0x2FFF),
            (0x31A0, 0x4DFF),
            (0x9FA6, 0x9FFF),
            (0xA000, 0xA4FF),
            (0xA700, 0xA707),
            (0xA960, 0xA97F),
            (0xD7B0, 0xD7FF),
            (0xF900, 0xFAFF),
        ),
        12,
        1,
    ),
    # "two-token" marks and forms: 8
    (
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
        8,
        1,
    ),
    # counting rod numerals (supplementary, two units): 12
    (((0x1D360, 0x1D371),), 12, 2),
    # supplementary ideographs (two units): 16
    (
        (
            (0x16FE0, 0x16FFF),
            (0x1AFF0, 0x1AFFF),
            (0x1B000, 0x1B16F),
            (0x1F200, 0x1F2FF),
            (0x20000, 0x2FA1F),
            (0x30000, 0x3347F),
        ),
        16,
        2,
    ),
)
#: the write-time cap (`resolveLiveToolResultMaxChars`): chars by window size, never over a share of it (4 chars/token)
LIVE_TOOL_RESULT_MAX_CHARS_BY_CONTEXT = ((0, 16_000), (100_000, 32_000), (200_000, 64_000))
DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS = 16_000
MAX_TOOL_RESULT_CONTEXT_SHARE = 0.3

# --- request-time guard: src/agents/embedded-agent-runner/tool-result-context-guard.ts,
#     tool-result-char-estimator.ts (builtin-openclaw-q1hiFm14.mjs)
#: a tool result's text weighs at this raw weight (2 chars a token against 4)
GUARD_TEXT_MINIMUM_RAW_WEIGHT = 2
GUARD_IMAGE_CHARS = 16_000  # TOOL_IMAGE_CHARS: IMAGE_CHAR_ESTIMATE 8,000 x 2
GUARD_UNKNOWN_MESSAGE_CHARS = 256
GUARD_MIN_CHARS = 1_024
IMAGE_OMISSION_NOTICE = "[{omitted} image{plural} omitted from context{none_fit}; rerun with fewer images]"
IMAGE_OMISSION_NONE_FIT = "; no images fit the context limit"
PREEMPTIVE_OVERFLOW_ERROR_TEXT = "Context overflow: prompt too large for the model (precheck)."
MID_TURN_PRECHECK_ERROR_TEXT = "Context overflow: prompt too large for the model (mid-turn precheck)."

# --- the prechecks' token pressure: src/agents/embedded-agent-runner/run/preemptive-compaction.ts
#     (`shouldPreemptivelyCompactBeforePrompt`, `resolveCompactionPressureDecision`,
#     settled-turn-finalization-result-C8Oihyzx.mjs), the estimator in resource-loader-v8341X6T.mjs
#     (`estimateMessageTokenPressure`), the reserve in agent-compaction-constants-DmXQuPyL.mjs and
#     agent-settings (`applyAgentCompactionSettingsFromConfig`). The mid-turn precheck runs from the
#     request-time guard (`installToolResultContextGuard`) on a call after a new tool result, only
#     when `agents.defaults.compaction.midTurnPrecheck.enabled` is true
MESSAGE_BOUNDARY_OVERHEAD_TOKENS = 12
CONTENT_BLOCK_OVERHEAD_TOKENS = 6
TOOL_RESULT_CHARS_PER_TOKEN = 2
JSON_PAYLOAD_CHARS_PER_TOKEN = 3
IMAGE_BLOCK_TOKENS = 2_000
PRESSURE_SAFETY_MARGIN = 1.2  # SAFETY_MARGIN, compaction-planning-Cn8w0Co8.mjs
MAX_COMPACTION_RESERVE_RATIO = 0.25
COMPACTION_RESERVE_TOKENS_FLOOR = 20_000  # DEFAULT_AGENT_COMPACTION_RESERVE_TOKENS_FLOOR
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"
MID_TURN_PRECHECK_ENABLED_BY_DEFAULT = False

# --- identifiers: src/agents/agent-hooks/compaction-safeguard-quality.ts (builtin-openclaw-q1hiFm14.mjs)
#: `extractOpaqueIdentifiers` (one JS regex; group 1 or group 2 is the identifier, the middle
#: alternative consumes decimal and scientific numbers and yields nothing). `{not_space}` stands for
#: JavaScript's `\S` (its whitespace is `JS_WHITESPACE`)
OPAQUE_IDENTIFIER_RE = (
    r"(https?://{not_space}+|(?<![A-Za-z0-9._-])/[\w.-]{{2,}}(?:/[\w.-]+)+|[A-Za-z]:\\[\w\\.-]+"
    r"|(?<![A-Za-z0-9._-])[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{{1,5}})"
    r"|(?:(?:(?:\d+\.\d+|\.\d+)(?:[eE][+-]?\d+)?|\d+\.[eE][+-]?\d+|\d+\.?[eE][+-]\d+"
    r"|(?![A-Fa-f0-9]{{8,}}(?![A-Fa-f0-9]))\d+\.?[eE]\d+)"
    r"(?:(?=[A-Za-z]+(?![A-Za-z0-9]))(?=[A-Za-z]*[G-Zg-z])[A-Za-z]+)?(?![A-Za-z0-9])"
    r"|(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*(?:[A-Fa-f0-9]{{8,}}|\d{{6,}}))([A-Za-z0-9_-]+))"
)
MAX_EXTRACTED_IDENTIFIERS = 12
MIN_IDENTIFIER_CHARS = 4

# --- quality guard and its cancel: src/agents/agent-hooks/compaction-safeguard.ts,
#     embedded-agent-runner/extensions.ts (buildEmbeddedExtensionFactories: `qualityGuard.enabled ?? true`)
QUALITY_GUARD_ENABLED_BY_DEFAULT = True
DEFAULT_QUALITY_GUARD_MAX_RETRIES = 1
MAX_QUALITY_GUARD_MAX_RETRIES = 3
DEFAULT_RECENT_TURNS_PRESERVE = 3
MAX_RECENT_TURNS_PRESERVE = 12
MAX_COMPACTION_SUMMARY_CHARS = 16_000
QUALITY_CHECK_CANCEL_REASON = "Compaction safeguard finalized summary failed quality checks."
QUALITY_CHECK_RETRY_FAILED_CANCEL_REASON = (
    "Compaction safeguard finalized summary failed quality checks and corrective generation failed."
)
REQUIRED_FACTS_OVER_BUDGET_CANCEL_REASON = "Compaction safeguard required facts exceed the finalized summary budget."
SUMMARIZE_FAILED_CANCEL_REASON = "Compaction safeguard could not summarize the session: {error}"

# --- error classification: @openclaw/ai packages/ai/src/utils/overflow.ts (internal/runtime.mjs),
#     src/agents/failover/{context-overflow,context-overflow-tables,message-patterns}.ts,
#     embedded-agent-helpers/context-overflow-observation.ts. JavaScript regexes, flag `i` unless
#     the entry says otherwise; a plain string entry of a pattern list is a lower-case substring.
_CONFIGURED_CONTEXT_SIZE = r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?"
CONTEXT_OVERFLOW_PATTERN_SCOPES: dict[str, tuple[str, ...]] = {
    "assistant-error": (
        r"prompt is too long",
        r"request_too_large",
        r"input length and `?max_tokens`? exceed context limit: [\d,]+ \+ [\d,]+ > [\d,]+",
        r"input is too long for requested model",
        r"exceeds the context window",
        r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"input token count.*exceeds the maximum",
        r"maximum prompt length is \d+",
        r"reduce the length of the messages",
        r"maximum context length is \d+ tokens",
        r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"exceeds the limit of \d+",
        r"(?:exceeds the available context size|context size has been exceeded)",
        r"greater than the context length",
        r"context window exceeds limit",
        r"exceeded model token limit",
        r"tokens? in request more than max tokens? allowed",
        r"prompt exceeds max(?:imum)? length",
        r"too large for model with \d+ maximum context length",
        _CONFIGURED_CONTEXT_SIZE,
        r"model_context_window_exceeded",
        r"prompt too long; exceeded (?:max )?context length",
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^413\s*(?:status code)?\s*\(no body\)",
    ),
    "failover-explicit": (
        r"request_too_large",
        r"context_overflow",
        _CONFIGURED_CONTEXT_SIZE,
        r"invalid_argument[\s\S]*maximum number of tokens",
        r"request exceeds the maximum size",
        r"context length exceeded",
        r"maximum context length",
        r"prompt is too long",
        r"prompt too long",
        r"exceeds model context window",
        r"model token limit",
        r"input exceeds[\s\S]*maximum number of tokens",
        r"^(?=[\s\S]*context window)(?=[\s\S]*ran out of (?:room|space))",
        r"request size exceeds[\s\S]*context window",
        r"context overflow:",
        r"exceed context limit",
        r"exceeds the model'?s maximum context",
        r"max_tokens[\s\S]*exceed[\s\S]*context",
        r"input(?: length[\s\S]*exceed[\s\S]*context"
        r"| \([\d,]+\s*tokens?\) is longer than (?:the )?model'?s context length)",
        r"413[\s\S]*too large",
        r"context_window_exceeded",
        r"input length [\d,]+\s+tokens? exceeds the model limit",
        r"上下文过长|上下文超出|上下文长度超|超出最大上下文|请压缩上下文",
    ),
    "provider-fallback": (
        r"\binput token count exceeds the maximum number of input tokens\b",
        r"\binput is too long for this model\b",
        r"\binput exceeds the maximum number of tokens\b",
        r"\bollama error:\s*context length exceeded(?:,\s*too many tokens)?\b",
        r"\btotal tokens?.*exceeds? (?:the )?(?:model(?:'s)? )?(?:max|maximum|limit)",
        r"\b(?:(?:request|prompt) \(\d[\d,]*\s*tokens?\) exceeds (?:the )?available context size"
        r"|context size has been exceeded)\b",
        r"\binput (?:is )?too long for (?:the )?model\b",
    ),
    "failover-hint": (
        r"context.*overflow|context window.*(too (?:large|long)|exceed|over|limit|max(?:imum)?|requested|sent|tokens)"
        r"|prompt.*(too (?:large|long)|exceed|over|limit|max(?:imum)?)"
        r"|(?:request|input).*(?:context|window|length|token).*(too (?:large|long)|exceed|over|limit|max(?:imum)?)",
    ),
    "context-window-too-small": (r"context window.*(too small|minimum is)",),
    "tpm-rate-limit-hint": (r"\btpm\b|tokens per minute",),
    "rate-limit-hint": (
        r"rate limit|too many requests|requests per (?:minute|hour|day)|quota|throttl|429\b|tokens per day",
    ),
}
#: `isContextOverflow`'s exclusions of an assistant error
NON_OVERFLOW_PATTERNS = (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")
#: `isContextOverflow`: a length stop with no output is an overflow at this share of the window
LENGTH_STOP_OVERFLOW_SHARE = 0.99
PROVIDER_CONTEXT_OVERFLOW_SIGNAL_RE = r"\b(?:context|window|prompt|token|tokens|input|request|model)\b"
PROVIDER_CONTEXT_OVERFLOW_ACTION_RE = (
    r"\b(?:too\s+(?:large|long|many)|exceed(?:s|ed|ing)?|overflow|limit|maximum|max)\b"
)
REASONING_CONSTRAINT_SUBSTRINGS = ("reasoning is mandatory", "reasoning is required", "requires reasoning")
#: `isProviderRequestSizeCeilingError`: a TPM limit whose request is larger than the limit
STATED_TOKEN_SIZES_RE = r"(?:\btpm\b|tokens per minute)[^.\n]*?\blimit\s+([\d,]+)[^.\n]*?\brequested\s+([\d,]+)"
PROMPT_TEMPLATE_WORDS = "prompt template"
#: `ERROR_PATTERNS.rateLimit` (matched on the lower-cased, trimmed text)
RATE_LIMIT_PATTERNS = (
    r"rate[_ ]limit|too many requests",
    r"^\s*429\b|\b(?:https?|status(?:[ _-]?code)?|response(?:[ _-]?code)?|http(?:[ _-]?status)?)\b"
    r"[\s:=#\"'(]{0,6}429\b|[\"'](?:status|code)[\"']\s*:\s*429\b"
    r"|\b429\b[\s:)\].,-]*(?:rate[_ -]?limit(?:ed|ing)?|too many requests|resource has been exhausted"
    r"|quota(?:\s+(?:exceeded|exhausted|depleted|reached))?)\b",
    r"too many (?:concurrent )?requests",
    r"\bthrottl(?:ing[_]?exception|ing|ed)\b",
    r"\bconcurrency limit\b.*\b(?:breached|reached)\b",
    "model_cooldown",
    "exceeded your current quota",
    r"\bresource[_ -]?exhausted\b",
    r"\bquota[_ -]?exceeded\b",
    "usage limit",
    r"\btpm\b",
    "tokens per minute",
    "tokens per day",
    "请求过于频繁",
    "调用频率",
    "频率限制",
    "配额不足",
    "配额已用尽",
    "额度不足",
    "额度已用尽",
)
#: `ERROR_PATTERNS.billing`; the last four regexes are case-sensitive where noted
BILLING_PATTERNS = (
    r"[\"']?(?:status|code)[\"']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(?:\s+code)?\s*[:=]?\s*402\b|^\s*402\s+payment",
    r"\b(?:got|returned|received)\s+(?:a\s+)?402\b(?!\s+records\b)",
    "payment required",
    "insufficient credits",
    r"used\s+all\s+available\s+credits",
    r"(?:monthly\s+)?spend(?:ing)?\s+limit",
    r"insufficient[_ ]quota",
    r"\b(?:go|free)usagelimiterror\b",
    "available balance",
    "out of budget",
    "credit balance",
    "plans & billing",
    r"insufficient[_ ]balance",
    r"\binsufficient\s+\w+\s+balance\b",
    "insufficient usd or diem balance",
    r"requires?\s+more\s+credits",
    r"out of extra usage",
    r"draw from your extra usage",
    r"extra usage is required(?: for long context requests)?",
    "余额不足",
    "欠费",
    r"\"code\"\s*:\s*\"InvalidSubscription\"",
    r"\bdoes not have a valid coding\s*plan subscription\b",
    r"(?-i:\"code\"\s*:\s*1311\b)",
    r"\bcurrent\s+subscription\s+plan\b.*\b(?:does\s+not|doesn't|not)\b.*\binclude\s+access\b",
    r"\bmodel\b.*\bnot\s+available\b.*\bcurrent\s+plan\b",
)
BILLING_ERROR_HEAD_RE = (
    r"^(?:error[:\s-]+)?billing(?:\s+error)?(?:[:\s-]+|$)"
    r"|^(?:error[:\s-]+)?(?:credit balance|insufficient credits?|payment required|http\s*402\b)"
)
BILLING_HEAD_WORDS = ("upgrade", "credits", "payment", "purchase", "subscription", "plan")
#: a text with more than one markdown heading (`## `) is a document, not a billing error
MARKDOWN_HEADING_RE = r"(?:^|\n)##\s+\S"
COMPACTION_FAILURE_TERMS = ("summarization failed", "auto-compaction", "compaction failed", "compaction")
#: `extractObservedOverflowTokenCount`: the sums first (N + M), then single counts
OBSERVED_OVERFLOW_TOKEN_SUM_PATTERNS = (
    r"input length(?:\s+and\s+max_tokens)?\s+exceed\s+context(?:\s+limit|\s+window)?"
    r"\s*\(i\.e\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*[\d,]+\)",
    r"input length\s+and\s+`max_tokens`\s+exceed\s+context\s+limit:\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*[\d,]+",
)
OBSERVED_OVERFLOW_TOKEN_PATTERNS = (
    r"prompt is too long:\s*([\d,]+)\s+tokens\s*>\s*[\d,]+\s+maximum",
    r"prompt is too long:\s*([\d,]+)\s*,\s*model maximum context length\s*:\s*[\d,]+",
    r"requested\s+([\d,]+)\s+tokens",
    r"token limit\s*:\s*[\d,]+\s*\(requested\s*:\s*([\d,]+)\)",
    r"resulted in\s+([\d,]+)\s+tokens",
)

# --- giving up: src/agents/embedded-agent-runner/run/overflow-context-recovery.ts (embedded-agent-BaH7wGBd.mjs)
OVERFLOW_USER_TEXT = (
    "Context overflow: prompt too large for the model. Try /reset (or /new) to start a fresh session, "
    "or use a larger-context model."
)
#: appended when the attempt's replay metadata says it had potential side effects
SIDE_EFFECT_CAUTION = " Completed tool actions were not replayed; verify their effects before retrying."
PREFLIGHT_COMPACTION_FAILED_ERROR = "Auto-compaction failed before the next model request: {reason}"
PREFLIGHT_COMPACTION_FAILED_USER_TEXT = (
    "Auto-compaction failed before the next model request. Try again or run /compact."
)
PREFLIGHT_COMPACTION_TIMED_OUT_USER_TEXT = (
    "Auto-compaction timed out before the next model request. Try again or run /compact."
)
MAX_OVERFLOW_COMPACTION_ATTEMPTS = 3
MAX_TIMEOUT_COMPACTION_ATTEMPTS = 2
