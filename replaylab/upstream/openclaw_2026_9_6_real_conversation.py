"""OpenClaw 2026.9.6's real-conversation test (npm `openclaw@2026.9.6`, `dist/builtin-openclaw-q1hiFm14.mjs`:
src/agents/compaction-real-conversation.ts and the safeguard, `compactionSafeguardExtension`), the
openclaw@2026.9.6 profile's `real_conversation`.

The safeguard writes its fixed fallback summary only when `containsRealConversation` finds no real
message in the span and the split turn's prefix (`preparation.messagesToSummarize` and
`.turnPrefixMessages`), nor in the whole session context (`collectSessionContextMessages`:
`buildSessionContext` of the branch, its compaction summary and kept tail included), each list first
stripped of its runtime-context custom messages (`stripRuntimeContextCustomMessages`).
`isRealConversationMessage` reads a user, assistant, custom, bashExecution, branchSummary or
compactionSummary message by `hasMeaningfulConversationContent`, and a tool result as real when one
of the 20 messages before it is such a message (not an assistant) with meaningful content.

Before that, OpenClaw's own compaction run (compact-lmmQAHsq.mjs `compactEmbeddedAgentSessionDirectOnce`,
behind every trigger but agent-core's threshold compaction in its default mode) does not compact at all
when `containsRealConversationMessages(session.messages)` finds no real message in the session's
context, runtime-context custom messages included: it logs `[compaction] skipping — no real
conversation messages` and returns `{ok: true, compacted: false, reason: NO_REAL_CONVERSATION_REASON}`
(`compaction_run_skip`).

The messages it asks about are not the context as the session holds it: the run first passes them
through `sanitizeSessionHistory` (builtin-openclaw-q1hiFm14.mjs, replay-history.ts),
`validateReplayTurns`, `dedupeDuplicateUserMessagesForCompaction`, `limitHistoryTurns` and the
tool-use/result pairing repair, into `session.agent.state.messages`. Three of its steps change the
answer (`compaction_run_history`):

* `annotateInterSessionUserMessages`: a user message with `provenance.kind: "inter_session"` gets the
  header `[Inter-session message] … isUser=false` before its first text block's text when that text
  is not blank (`annotateInterSessionPromptText`), or a text block `Inter-session content follows.`
  with the header when it has none: a `NO_REPLY` from another session is real to the run.
* `normalizeAssistantReplayContent`: an assistant message written for the transcript only
  (transcript-only-openclaw-assistant-CVgy4bjA.mjs `isTranscriptOnlyOpenClawAssistantMessage`:
  provider `openclaw` with model `delivery-mirror` or `gateway-injected`, or an
  `openclawDeliveryMirror` marker of a known kind) is dropped, and so are an assistant's
  `MANAGED_DISPLAY_BLOCK_TYPES` blocks (attachment, attachment_error, audio, image, video): a
  delivery mirror, or an assistant's image, is not real to the run.

The others change no answer: a dropped duplicate user message leaves its first copy, pairing repair
adds or drops tool results only (a tool result is real only after an anchor that is real itself),
reasoning is never real, `limitHistoryTurns` needs a channel's history limit (replaylab replays no
channel). Not mirrored: `stripInternalMetadataForDisplay` of an assistant's text, the stream-error
fallback turn and provider plugins' own sanitizing and turn validation.

When the span and the prefix hold nothing real, the safeguard first reads
`collectPreparationRangeMessages`: the context (`buildSessionContext`) of the branch before
`firstKeptEntryId`, less its `compactionSummary` message, stripped alike, and summarizes that range
when it holds a real message. Its `prepareCompaction` starts the span at the previous boundary's
`firstKeptEntryId` and projects each entry as the context does (`getMessageFromEntryForCompaction`),
so on the branch it prepared from the range is the span and the prefix again: replaylab, whose span
is the agent's own, needs no rule for it.
"""

from __future__ import annotations

from replaylab.upstream.profiles import RealConversationRules, RunHistoryRules

#: `isSummaryRole`
SUMMARY_ROLES = frozenset({"branchSummary", "compactionSummary"})
#: `isRealConversationMessage`: the roles read by their own content
REAL_ROLES = frozenset({"user", "assistant", "custom", "bashExecution"}) | SUMMARY_ROLES
#: `isToolResultConversationAnchor`
ANCHOR_ROLES = frozenset({"user", "custom", "bashExecution"}) | SUMMARY_ROLES
#: `TOOL_RESULT_REAL_CONVERSATION_LOOKBACK`
TOOL_RESULT_LOOKBACK = 20
#: tool-block-contract-CJH3ADzt.mjs `TOOL_CALL_BLOCK_TYPES`
TOOL_CALL_BLOCK_TYPES = frozenset({"toolCall", "toolUse", "functionCall"})
#: `NON_CONVERSATION_BLOCK_TYPES`
NON_CONVERSATION_BLOCK_TYPES = frozenset({"thinking", "reasoning"})
#: internal-runtime-context-BH-o1oq1.mjs `OPENCLAW_RUNTIME_CONTEXT_CUSTOM_TYPE`
RUNTIME_CONTEXT_CUSTOM_TYPE = "openclaw.runtime-context"
#: tokens-BTKQYTUd.mjs `SILENT_REPLY_TOKEN` (`isSilentReplyText`) and `HEARTBEAT_TOKEN`
#: (heartbeat-vWflpIwS.mjs `stripHeartbeatToken`, its "message" mode)
SILENT_REPLY_TOKEN = "NO_REPLY"
HEARTBEAT_TOKEN = "HEARTBEAT_OK"
#: embedded-agent-BaH7wGBd.mjs `NO_REAL_CONVERSATION_MESSAGES_REASON`, the run's reason for not compacting
NO_REAL_CONVERSATION_REASON = "no real conversation messages"
#: transcript-only-openclaw-assistant-CVgy4bjA.mjs: `OPENCLAW_TRANSCRIPT_ARTIFACT_PROVIDER`,
#: `TRANSCRIPT_ONLY_OPENCLAW_ASSISTANT_MODELS`, `OPENCLAW_DELIVERY_MIRROR_KINDS`
TRANSCRIPT_ONLY_PROVIDER = "openclaw"
TRANSCRIPT_ONLY_MODELS = frozenset({"delivery-mirror", "gateway-injected"})
DELIVERY_MIRROR_MARKER = "openclawDeliveryMirror"
DELIVERY_MIRROR_KINDS = frozenset(
    {"channel-final", "channel-final-suppressed", "message-tool-source-reply", "cron-direct-delivery-context"}
)
#: replay-history.ts `MANAGED_DISPLAY_BLOCK_TYPES`
MANAGED_DISPLAY_BLOCK_TYPES = frozenset({"attachment", "attachment_error", "audio", "image", "video"})
#: input-provenance-C4tQegGN.mjs `hasInterSessionUserProvenance`
INTER_SESSION_PROVENANCE = "inter_session"
#: `buildInterSessionPromptContext`'s header with no source named (`INTER_SESSION_PROMPT_PREFIX_BASE`)
INTER_SESSION_HEADER = "[Inter-session message] isUser=false"

COMPACTION_RUN_HISTORY = RunHistoryRules(
    dropped_assistant_provider=TRANSCRIPT_ONLY_PROVIDER,
    dropped_assistant_models=TRANSCRIPT_ONLY_MODELS,
    dropped_assistant_marker=DELIVERY_MIRROR_MARKER,
    dropped_assistant_marker_kinds=DELIVERY_MIRROR_KINDS,
    dropped_assistant_block_types=MANAGED_DISPLAY_BLOCK_TYPES,
    annotated_user_provenance=INTER_SESSION_PROVENANCE,
    user_annotation=INTER_SESSION_HEADER,
)

REAL_CONVERSATION = RealConversationRules(
    roles=REAL_ROLES,
    anchor_roles=ANCHOR_ROLES,
    tool_result_lookback=TOOL_RESULT_LOOKBACK,
    summary_roles=SUMMARY_ROLES,
    tool_call_block_types=TOOL_CALL_BLOCK_TYPES,
    non_conversation_block_types=NON_CONVERSATION_BLOCK_TYPES,
    ignored_custom_types=frozenset({RUNTIME_CONTEXT_CUSTOM_TYPE}),
    silent_token=SILENT_REPLY_TOKEN,
    heartbeat_token=HEARTBEAT_TOKEN,
    session_context=True,
    compaction_run_skip=NO_REAL_CONVERSATION_REASON,
    compaction_run_history=COMPACTION_RUN_HISTORY,
)
