"""pi's constants and marker strings (`@mariozechner/pi-coding-agent`), checked against pi 0.73.1 by
the pi oracle (`replaylab.oracles.pi`). Each block names its source: pi 0.58.3 (`badlogic/pi-mono`
83378aad), the 0.66.1 npm tarballs OpenClaw 2026.4.12 pins, or the 0.73.1 tarball. Paths are
relative to those packages. A later pi is a new module beside this one, never an edit of it.
"""

from __future__ import annotations

from replaylab.upstream.profiles import AgentProfile, UnestimableRules

#: the agent profile of pi 0.73.1: the rules replaylab judged every session under before profiles
#: were named, and still the fallback of a session no other profile claims
PROFILE = AgentProfile(
    name="pi@0.73.1",
    agent="pi",
    version="0.73.1",
    npm_package="@mariozechner/pi-coding-agent",
    oracle_folder="pi-0.73.1",
    constants_module=__name__,
    runtime_rules="openclaw@2026.4.12",
    rules_module="replaylab.agents.pi_0_73_1",
    oracle_entry="pi_oracle.mjs",
    node_minimum=(20, 6),
    # dist/core/compaction/utils.js `computeFileLists`: each list `.sort()`, JavaScript's default order
    file_lists_order="utf16-units",
    # dist/core/compaction/compaction.js `prepareCompaction`: nothing when the last entry is a
    # compaction; agent-session.js: manual "Already compacted", auto and overflow end without one
    refuses_after_compaction_leaf=True,
    unestimable=UnestimableRules(
        # dist/core/compaction/compaction.js `prepareCompaction` → `estimateContextTokens`,
        # `findCutPoint` (message entries only); agent-session.js `_runAutoCompaction` catches,
        # `compact()` rethrows
        throw_outcome=(
            "its prepareCompaction throws; threshold and overflow compaction catch it "
            "(`Auto-compaction failed` / `Context overflow recovery failed`) and the session goes on "
            "uncompacted, /compact fails with the error"
        ),
        cut_walk_types=frozenset({"message"}),
        nan_outcome=(
            "findCutPoint's sum is NaN, never reaches keepRecentTokens, so its cut keeps every entry after "
            "the boundary: the compaction summarizes nothing and removes nothing"
        ),
        nan_failure="nothing_to_gain",
        # compaction/utils.js `serializeConversation` (compact → generateSummary): `c.type` of a null
        # item, `content.filter` of an object, `Object.entries` of absent or null arguments
        serializer_outcome=("its summarizer's serializeConversation throws in compact(), caught and rethrown as above"),
    ),
)

# --- session format (pi session-manager.ts) ---------------------------------------------
CURRENT_SESSION_VERSION = 3

# --- token estimate (pi compaction/compaction.ts estimateTokens) ------------------------
CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800  # what each image in toolResult/custom content counts as

# --- pi compaction defaults (compaction.ts DEFAULT_COMPACTION_SETTINGS) -------------------
PI_KEEP_RECENT_TOKENS = 20_000
TOOL_RESULT_MAX_CHARS_IN_SUMMARY_INPUT = 2_000  # compaction/utils.ts serializeConversation

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
BASH_OUTPUT_TRUNCATED = "[Output truncated. Full output: {path}]"

# --- provider-side transform (pi packages/ai/src/providers/transform-messages.ts) ---------
ORPHAN_TOOL_RESULT_TEXT = "No result provided"  # synthetic isError result for a call left unanswered

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
#: agent-session.ts `_checkCompaction`: a second overflow after one in-attempt compact-and-retry
PI_OVERFLOW_RECOVERY_FAILED_TEXT = (
    "Context overflow recovery failed after one compact-and-retry attempt. "
    "Try reducing context or switching to a larger-context model."
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

# --- pi split-turn / chunking (compaction.ts, src/agents/compaction.ts) ---------------------
SUMMARY_MAX_TOKENS_SHARE = 0.8  # generateSummary maxTokens = floor(0.8 * reserveTokens)
TURN_PREFIX_MAX_TOKENS_SHARE = 0.5
SUMMARIZE_RETRY_ATTEMPTS = 3  # retryAsync in summarizeChunks
SUMMARIZE_RETRY_MIN_DELAY_MS = 500
SUMMARIZE_RETRY_MAX_DELAY_MS = 5_000
SUMMARIZE_RETRY_JITTER = 0.2
