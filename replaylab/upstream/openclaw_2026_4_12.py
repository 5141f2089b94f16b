"""OpenClaw 2026.4.12-beta.1's constants and marker strings (`openclaw/openclaw` 8f8492d1; see
../shared/reference/openclaw-internals.md §0): compaction, the safeguard handler, tool-result
truncation, the request-time guard, overflow detection and recovery. Paths are relative to that
repo. A later OpenClaw is a new module beside this one, never an edit of it.
"""

from __future__ import annotations

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

# --- "real conversation" check (src/agents/compaction-real-conversation.ts) -----------------
SILENT_REPLY_TOKEN = "NO_REPLY"
HEARTBEAT_OK_TOKEN = "HEARTBEAT_OK"
REAL_CONVERSATION_TOOL_RESULT_LOOKBACK = 20

# --- placeholder summaries that wipe the memory (src/agents/compaction.ts summarizeWithFallback;
#     the "context limits" wording is the one reported in OpenClaw's issue tracker) ----------
SUMMARY_UNAVAILABLE_TEXT = (
    "Context contained {messages} messages ({oversized} oversized). Summary unavailable due to size limits."
)
SUMMARY_UNAVAILABLE_MARKERS = ("Summary unavailable due to size limits", "Summary unavailable due to context limits")
