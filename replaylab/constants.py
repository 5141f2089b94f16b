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
IMAGE_CHARS = 4800  # each image in toolResult/custom content counts 4800 chars (≈1200 tokens)

# --- pi compaction defaults (compaction.ts DEFAULT_COMPACTION_SETTINGS) -------------------
PI_RESERVE_TOKENS = 16_384
PI_KEEP_RECENT_TOKENS = 20_000
TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT = 2_000  # compaction/utils.ts serializeConversation

# --- OpenClaw compaction (src/agents/pi-settings.ts, src/agents/compaction.ts) -------------
DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR = 20_000  # pi-settings.ts
DEFAULT_CONTEXT_TOKENS = 200_000  # src/agents/defaults.ts
SAFETY_MARGIN = 1.2  # src/agents/compaction.ts
BASE_CHUNK_RATIO = 0.4
MIN_CHUNK_RATIO = 0.15
SUMMARIZATION_OVERHEAD_TOKENS = 4096
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
COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"

# --- tool-result size control (src/agents/pi-embedded-runner/tool-result-truncation.ts) ---
MAX_TOOL_RESULT_CONTEXT_SHARE = 0.3
DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS = 40_000
HARD_MAX_TOOL_RESULT_CHARS = DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS
MIN_KEEP_CHARS = 2_000
RECOVERY_MIN_KEEP_CHARS = 0
CONTEXT_LIMIT_TRUNCATION_NOTICE = "more characters truncated"  # tool-result-context-guard.ts
MIDDLE_OMISSION_MARKER = "\n\n⚠️ [... middle content omitted — showing head and tail ...]\n\n"

# --- request-time guard (tool-result-context-guard.ts, tool-result-char-estimator.ts) -----
CHARS_PER_TOKEN_ESTIMATE = 4
TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE = 2
SINGLE_TOOL_RESULT_CONTEXT_SHARE = 0.5
PREEMPTIVE_OVERFLOW_RATIO = 0.9
PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE = "Context overflow: estimated context size exceeds safe threshold during tool loop."
PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER = "[compacted: tool output removed to free context]"

# --- overflow recovery (src/agents/pi-embedded-runner/run.ts, run/attempt.ts) --------------
MAX_OVERFLOW_COMPACTION_ATTEMPTS = 3
MAX_TIMEOUT_COMPACTION_ATTEMPTS = 2
TIMEOUT_COMPACTION_PROMPT_SHARE = 0.65
COMPACTION_RETRY_AGGREGATE_TIMEOUT_MS = 60_000
OVERFLOW_USER_TEXT = (
    "Context overflow: prompt too large for the model. Try /reset (or /new) to start a fresh session, "
    "or use a larger-context model."
)
PREEMPTIVE_OVERFLOW_ERROR_TEXT = "Context overflow: prompt too large for the model (precheck)."

# --- OpenClaw transcript repair (src/agents/session-transcript-repair.ts) -----------------
SYNTHETIC_MISSING_RESULT_TEXT = (
    "[openclaw] missing tool result in session history; inserted synthetic error result for transcript repair."
)

# --- replay safety (src/agents/tool-mutation.ts) ------------------------------------------
MUTATING_TOOL_NAMES = frozenset({
    "write", "edit", "apply_patch", "exec", "bash", "process", "message", "sessions_spawn",
    "sessions_send", "cron", "gateway", "canvas", "nodes", "session_status",
})
READ_ONLY_ACTIONS = frozenset({
    "get", "list", "read", "status", "show", "fetch", "search", "query", "view", "poll", "log",
    "inspect", "check", "probe",
})
RETRY_SAFE_TOOLS = frozenset({"read", "search", "find", "grep", "glob", "ls"})  # run/incomplete-turn.ts
