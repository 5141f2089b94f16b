"""pi 1.6.0's constants (`@earendil-works/pi-coding-agent@1.6.0`, the package pi moved to after
0.73.1), read from its npm tarball's `dist/` and checked by running that code
(`replaylab/oracles/node/pi-1.6.0/pi_oracle.mjs`). Paths are relative to
`node_modules/@earendil-works/pi-coding-agent/dist/core/` unless they name `pi-ai`.

The session format is still version 3 (`session-manager.js` CURRENT_SESSION_VERSION), so no header
claims a session for this profile. Its records do: pi 1.6.0 writes a `system` message (its prompt
sections, `AgentSession._preparePromptAndToolLoadout`, persisted on `message_end`) before its
first request, and `context_edit` and `usage` entries, none of which pi 0.73.1 or OpenClaw
2026.9.6 writes. A session holding none of them is named by a suite or the command line
(`agent: pi@1.6.0`).
"""

from __future__ import annotations

from replaylab.upstream.profiles import AgentProfile, UnestimableRules

# --- session format (session-manager.js) -------------------------------------------------
CURRENT_SESSION_VERSION = 3
#: entries that never become context messages themselves (`sessionEntryToContextMessages` → [])
CONTEXT_EDIT_TYPE = "context_edit"  # {targetId, replacement: null | {content}}: edits a message in context
USAGE_ENTRY_TYPE = "usage"  # session usage totals only
#: the key of the record, on a model-issued call's toolResult message, of the calls its tool made
#: through `ctx.executeTool()` (agent-session.js `_handleAgentEvent` on a toolResult's message_start;
#: nested-tool-calls.js `NestedCallRecorder.snapshot`): `{calls: [{id, name, status, arguments? |
#: argumentsBytes, durationMs?, error?}], complete}`, nested calls of nested calls in the same record;
#: none is written when the tool called nothing
NESTED_CALLS_KEY = "nestedCalls"
#: extensions/codemode/tool.js: the tool that runs the model's JavaScript (`{code}`), whose
#: `tools.<name>(args)` reach any tool of the agent through `ctx.executeTool()`; on by default
#: (settings-defaults.js `codemode.mode: "on"`)
CODEMODE_TOOL_NAME = "codemode"
#: extensions/codemode/execute.js `createModelGlobals`: codemode's own rows (`details.calls`) of its
#: `models.*` calls (non-LLM models: classifiers, image generation) start so; a tool call's row is
#: named by the tool
CODEMODE_MODEL_ROW_PREFIX = "models."
#: the message role of prompt state (`{role: "system", content, sections?, toolsAdded?, toolsRemoved?}`)
SYSTEM_ROLE = "system"

#: the agent profile of pi 1.6.0
PROFILE = AgentProfile(
    name="pi@1.6.0",
    agent="pi",
    version="1.6.0",
    npm_package="@earendil-works/pi-coding-agent",
    oracle_folder="pi-1.6.0",
    constants_module=__name__,
    runtime_rules="openclaw@2026.4.12",
    rules_module="replaylab.agents.pi_1_6_0",
    oracle_entry="pi_oracle.mjs",
    # the package declares node >= 22.19, but everything the oracle and the compactor import runs
    # under node 20 (session-manager.js, compaction/*.js, pi-ai's openai-completions provider)
    node_minimum=(20, 6),
    entry_types=frozenset({CONTEXT_EDIT_TYPE, USAGE_ENTRY_TYPE}),
    message_roles=frozenset({SYSTEM_ROLE}),
    # core/agent-session.js: `prepareNextTurnWithContext` runs `_compactBeforeNextAssistantResponse`
    # before every reply of a run, which compacts when `shouldCompact` holds for the projection
    compacts_before_replies=True,
    # core/compaction/utils.js `extractFileOpsFromMessage`: a toolResult's `nestedCalls.calls` feed the
    # read / write / edit lists as an assistant's toolCalls do (pi 0.73.1 reads assistants only)
    file_ops_from_nested_calls=True,
    # compaction/utils.js `computeFileLists`: each list `.sort()`, JavaScript's default order, as 0.73.1
    file_lists_order="utf16-units",
    # core/compaction/compaction.js `prepareCompaction`: nothing when the last entry is a compaction;
    # agent-session.js: manual "Already compacted", auto and overflow end without one
    refuses_after_compaction_leaf=True,
    unestimable=UnestimableRules(
        # core/compaction/compaction.js `prepareCompaction` → `estimateProjectedContextTokens`,
        # `findProjectedCutPoint` (every entry the projection gives messages); agent-session.js
        # `_runAutoCompaction` catches before `compaction_start`, `compact()` rethrows; the check before
        # each reply (`_exceedsCompactionThreshold`) is not caught: agent.js `handleRunFailure`
        throw_outcome=(
            "its prepareCompaction throws; threshold and overflow compaction catch it and end without one "
            "(the session goes on uncompacted), /compact fails with the error"
        ),
        context_check_outcome=(
            "the threshold check before each reply estimates the same messages and throws first, which "
            "ends the run with an error"
        ),
        cut_walk_types=frozenset({"message", "custom_message", "branch_summary"}),
        nan_outcome=(
            "findProjectedCutPoint's sum is NaN, never reaches keepRecentTokens, so its cut falls on the first "
            "valid cut point: nothing is left to summarize and prepareCompaction returns nothing "
            "(auto and overflow end without a compaction, /compact says `Nothing to compact`)"
        ),
        nan_failure="agent_refuses",
        # compaction/utils.js `serializeConversation` (compaction.js `generateSummary`), as 0.73.1's
        serializer_outcome=(
            "its summarizer's serializeConversation throws, caught and rethrown as a failure of its estimate is"
        ),
    ),
)

# --- context projection (session-manager.js buildSessionProjection) --------------------------
#: roles whose content a context edit replaces (`projectContextEntry`); a string replacement of
#: an assistant or tool-result message becomes one text block
EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
BLOCK_CONTENT_ROLES = frozenset({"assistant", "toolResult"})
#: roles whose `content: null` the projection reads as [] (a system message's as "")
NULLABLE_CONTENT_ROLES = frozenset({"user", "assistant", "toolResult"})

# --- token estimate (compaction/compaction.js estimateTokens) --------------------------------
CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800  # ESTIMATED_IMAGE_CHARS: user images count too (0.73.1 counted them 0)

# --- cut (compaction/compaction.js findProjectedCutPoint, prepareCompaction) -------------------
CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
#: a cut at one of these does not split a turn (0.73.1: only at a user message)
TURN_START_ROLES = frozenset({"user", "bashExecution", "custom", "branchSummary", "compactionSummary"})

# --- summary requests (compaction/compaction.js compact, generateTurnPrefixSummary;
#     compaction/utils.js SUMMARIZATION_SYSTEM_PROMPT) ----------------------------------------
#: the history prompts (first request) are 0.73.1's, byte for byte: `<conversation>` tags
PI_CONVERSATION_TAGS = ("<conversation>\n", "\n</conversation>")
#: the turn prefix (second request, after the history's) was rewritten: markdown headings, no tags
TURN_PREFIX_CONVERSATION_HEADING = "# Conversation\n"
TURN_PREFIX_INSTRUCTIONS_HEADING = "\n\n# Instructions\n"
TURN_PREFIX_PROMPT_START = (
    "The messages above are earlier context from an ongoing conversation. "
    "Later messages are stored separately and do not need to be reconstructed."
)
#: the sections of the turn-prefix summary pi asks for
TURN_PREFIX_SECTIONS = ("Original Request", "Progress So Far", "Context Needed to Continue")
SUMMARIZATION_SYSTEM_PROMPT_START = (
    "You are a context summarization assistant. Your task is to read a conversation between a user and an AI assistant"
)
#: pi 1.6.0 sends no output cap of its own (pi-ai fills maxTokens from the model): the history and
#: turn-prefix summaries are not limited to 0.8 / 0.5 × reserveTokens as in 0.73.1
SUMMARY_MAX_TOKENS_SHARE = None
#: serializeConversation leaves out thinking (0.73.1 wrote `[Assistant thinking]:` parts)
SERIALIZES_THINKING = False
