// OpenClaw 2026.9.6's own runtime rules, called by name: one JSON line in, one JSON line out
// (../serve_lines.mjs); the first line written names the versions that answer. Every function is
// OpenClaw's own, bound by file and name in the pinned build (bind_openclaw.mjs); the few composite
// entries (marked "as …" below) only feed OpenClaw's functions the arguments OpenClaw's own caller
// does.
//
// fn                                  what answers
// truncateToolResultText(text, maxChars, options?)          tool-result-truncation.ts
// truncateToolResultMessage(message, maxChars, options?)     tool-result-truncation.ts
// capToolResultSize(message, maxChars)                       session-tool-result-guard.ts (write time)
// capToolResultForContext(message, contextWindowTokens?)     as guardSessionManager: capToolResultSize(message,
//                                                            resolveMaxToolResultChars({maxToolResultChars:
//                                                            ctx ? resolveLiveToolResultMaxChars({ctx}) : undefined}))
// writeCapChars(contextWindowTokens?)                        the same cap, in chars
// calculateMaxToolResultChars / resolveAutoLiveToolResultMaxChars / resolveToolResultContextMaxChars (ctx)
// contextGuard(messages, contextWindowTokens)                installToolResultContextGuard on an agent whose
//                                                            transformContext is then called with `messages`
// recoveryToolResultPlan(messages, contextWindowTokens)      as the overflow recovery's truncateToolResults:
//                                                            buildRecoveryToolResultReplacementPlan({branch: the
//                                                            messages as entries m0, m1, …, contextWindowTokens,
//                                                            maxCharsOverride: resolveLiveToolResultMaxChars({ctx})})
//                                                            → {maxChars, aggregateBudgetChars, replacements}
// sessionLikelyHasOversizedToolResults(messages, contextWindowTokens)   as the recovery's gate calls it
// hasImportantTail(text) · extractOpaqueIdentifiers(text)
// extractKeywords(text) · hasAskOverlap(summary, latestAsk)  query-expansion.ts, compaction-safeguard-quality.ts
// auditSummaryQuality(params)                                compaction-safeguard-quality.ts
// estimateStringCharsWithMinimumRawWeight(text, options?)    cjk-chars.ts (the estimate's and the truncation's weights)
// isContextOverflow(message, contextWindow?) · matchesContextOverflowMessage(text, scope)   @openclaw/ai
// isContextOverflowError · isLikelyContextOverflowError · classifyFailoverReason · isCompactionFailureError ·
// extractObservedOverflowTokenCount · isRateLimitErrorMessage · isBillingErrorMessage ·
// isProviderRequestSizeCeilingError (text)
// isMutatingToolCall(name, args)
// toolSearchCallArgs(args, entries)                         as `tool_call` reads its arguments:
//                                                            readToolSearchCallArgs(validateToolArguments
//                                                            (tool_call, prepareToolSearchDispatcherArguments
//                                                            (args)), {entries}) → {id, input, schemaRefuses}
// mcpToolName(servers, server, tool)                         as the MCP materializer names a server's tool:
//                                                            buildSafeToolName({serverName: assignSafeServerNames
//                                                            (servers).get(server), toolName: tool, reservedNames: ∅})
// errorFacts(text)                                           which @openclaw/ai overflow scopes match, and the
//                                                            request-size-ceiling / rate-limit / billing predicates
// renderOverflowResetGuidance(attempt) · renderRecoverySideEffectCaution(attempt)
// overflowRecoveryDecision(promptErrorText, attemptCompactionCount)   as the run loop asks
//                                                            recoverEmbeddedRunOverflow after an attempt that
//                                                            failed with that prompt error (a 200,000-token budget,
//                                                            no overflow compaction yet, tool-result truncation
//                                                            already tried) → its decision, where it needs no
//                                                            compaction of its own: {action, kind?, errorText?, userText?}
// finishedReplyOverflow(message, contextWindow, options)    what OpenClaw does with one model reply at the end of an
//                                                            attempt: AgentSessionCompaction.prototype.checkCompaction
//                                                            on a session holding it (options: owner "caller" | "session",
//                                                            autoCompaction: whether the session's auto-compaction is on,
//                                                            reserveTokens), its runAutoCompaction recorded, not run;
//                                                            then recoverEmbeddedRunOverflow as the run loop asks it
//                                                            (its overflow candidate only an `error` or `length` reply,
//                                                            the budget the window, overflow compactions and truncation
//                                                            used up) → {session: {compaction, willRetry, replyDropped,
//                                                            continues}, runLoop: {action, kind?}}
// qualityGuardDefaults()                                     the safeguard runtime OpenClaw's extension factory
//                                                            sets from an empty config, and the resolvers' defaults
// fileOperations(messages, previous?)                        as prepareCompaction's extractFileOperations fills
//                                                            fileOps (`previous`: a compaction entry before the
//                                                            messages, its details through parseCompactionDetails
//                                                            unless fromHook), then computeFileLists and
//                                                            formatFileOperations → {readFiles, modifiedFiles, sections}
import { serveLines } from "../serve_lines.mjs";
import { bindOpenClaw, importOpenClawAi } from "./bind_openclaw.mjs";

process.env.OPENCLAW_LOG_LEVEL = process.env.REPLAYLAB_OPENCLAW_LOG_LEVEL ?? "silent";

const oc = await bindOpenClaw([
  "truncateToolResultText",
  "truncateToolResultMessage",
  "capToolResultSize",
  "resolveMaxToolResultChars",
  "resolveLiveToolResultMaxChars",
  "resolveAutoLiveToolResultMaxChars",
  "resolveToolResultContextMaxChars",
  "calculateMaxToolResultChars",
  "installToolResultContextGuard",
  "buildRecoveryToolResultReplacementPlan",
  "sessionLikelyHasOversizedToolResults",
  "hasImportantTail",
  "extractOpaqueIdentifiers",
  "extractKeywords",
  "hasAskOverlap",
  "auditSummaryQuality",
  "estimateStringCharsWithMinimumRawWeight",
  "isContextOverflowError",
  "isLikelyContextOverflowError",
  "classifyFailoverReason",
  "isCompactionFailureError",
  "extractObservedOverflowTokenCount",
  "isRateLimitErrorMessage",
  "isBillingErrorMessage",
  "isProviderRequestSizeCeilingError",
  "isMutatingToolCall",
  "prepareToolSearchDispatcherArguments",
  "readToolSearchCallArgs",
  "createToolSearchTools",
  "validateToolArguments",
  "assignSafeServerNames",
  "buildSafeToolName",
  "renderOverflowResetGuidance",
  "renderRecoverySideEffectCaution",
  "recoverEmbeddedRunOverflow",
  "AgentSessionCompaction",
  "resolveQualityGuardMaxRetries",
  "resolveRecentTurnsPreserve",
  "buildEmbeddedExtensionFactories",
  "getCompactionSafeguardRuntime",
  "compactionSafeguardExtension",
  "createFileOps",
  "mergeSummaryFileOperations",
  "extractFileOpsFromMessage",
  "computeFileLists",
  "formatFileOperations",
  "parseCompactionDetails",
]);
const ai = await importOpenClawAi("internal/runtime");

const writeCapChars = (ctx) =>
  oc.resolveMaxToolResultChars({
    maxToolResultChars: typeof ctx === "number" ? oc.resolveLiveToolResultMaxChars({ contextWindowTokens: ctx }) : undefined,
  });

// the run loop's `recoverEmbeddedRunOverflow` asked about one attempt, with the hooks it calls doing
// nothing: no run of replaylab's is interrupted, retried or re-read by the oracle
function askOverflowRecovery(fields) {
  const noop = () => {};
  return oc.recoverEmbeddedRunOverflow({
    aborted: false,
    signalOwnedInterruption: false,
    genericCompactionRecoveryAllowed: true,
    runParams: { runId: "replaylab-oracle" },
    getActiveSession: () => ({ id: "replaylab-oracle" }),
    assertRecoveryActive: noop,
    markOwnedTranscriptRetry: noop,
    prepareCurrentTranscriptRetry: noop,
    ...fields,
  });
}

const FNS = {
  truncateToolResultText: (text, maxChars, options) => oc.truncateToolResultText(text, maxChars, options ?? {}),
  truncateToolResultMessage: (message, maxChars, options) => oc.truncateToolResultMessage(message, maxChars, options ?? {}),
  capToolResultSize: (message, maxChars) => oc.capToolResultSize(message, maxChars),
  capToolResultForContext: (message, ctx) => oc.capToolResultSize(message, writeCapChars(ctx ?? undefined)),
  writeCapChars: (ctx) => writeCapChars(ctx ?? undefined),
  calculateMaxToolResultChars: (ctx) => oc.calculateMaxToolResultChars(ctx),
  resolveAutoLiveToolResultMaxChars: (ctx) => oc.resolveAutoLiveToolResultMaxChars(ctx),
  resolveToolResultContextMaxChars: (ctx) => oc.resolveToolResultContextMaxChars(ctx),
  contextGuard: async (messages, contextWindowTokens) => {
    const agent = { transformContext: undefined };
    const remove = oc.installToolResultContextGuard({ agent, contextWindowTokens });
    try {
      return await agent.transformContext(messages, new AbortController().signal);
    } finally {
      remove();
    }
  },
  recoveryToolResultPlan: (messages, contextWindowTokens) => {
    const branch = messages.map((message, index) => ({
      type: "message",
      id: `m${index}`,
      parentId: index ? `m${index - 1}` : null,
      timestamp: "2026-01-01T00:00:00.000Z",
      message,
    }));
    const { maxChars, aggregateBudgetChars, plan } = oc.buildRecoveryToolResultReplacementPlan({
      branch,
      contextWindowTokens,
      maxCharsOverride: oc.resolveLiveToolResultMaxChars({ contextWindowTokens }),
    });
    return { maxChars, aggregateBudgetChars, replacements: plan.replacements };
  },
  sessionLikelyHasOversizedToolResults: (messages, contextWindowTokens) =>
    oc.sessionLikelyHasOversizedToolResults({
      messages,
      contextWindowTokens,
      maxCharsOverride: oc.resolveLiveToolResultMaxChars({ contextWindowTokens }),
    }),
  hasImportantTail: (text) => oc.hasImportantTail(text),
  extractOpaqueIdentifiers: (text) => oc.extractOpaqueIdentifiers(text),
  extractKeywords: (text) => oc.extractKeywords(text),
  hasAskOverlap: (summary, latestAsk) => oc.hasAskOverlap(summary, latestAsk ?? undefined),
  auditSummaryQuality: (params) => oc.auditSummaryQuality(params),
  estimateStringCharsWithMinimumRawWeight: (text, options) =>
    oc.estimateStringCharsWithMinimumRawWeight(text, options ?? {}),
  isContextOverflow: (message, contextWindow) => ai.isContextOverflow(message, contextWindow ?? undefined),
  matchesContextOverflowMessage: (text, scope) => ai.matchesContextOverflowMessage(text, scope),
  isContextOverflowError: (text) => oc.isContextOverflowError(text),
  isLikelyContextOverflowError: (text) => oc.isLikelyContextOverflowError(text),
  classifyFailoverReason: (text) => oc.classifyFailoverReason(text) ?? null,
  isCompactionFailureError: (text) => oc.isCompactionFailureError(text),
  extractObservedOverflowTokenCount: (text) => oc.extractObservedOverflowTokenCount(text),
  isRateLimitErrorMessage: (text) => oc.isRateLimitErrorMessage(text),
  isBillingErrorMessage: (text) => oc.isBillingErrorMessage(text),
  isProviderRequestSizeCeilingError: (text) => oc.isProviderRequestSizeCeilingError(text),
  isMutatingToolCall: (name, args) => oc.isMutatingToolCall(name, args),
  toolSearchCallArgs: (args, entries) => {
    // agent-core prepares a call's arguments, then validates (and coerces) them against the tool's
    // schema; where the schema refuses them OpenClaw reads nothing (`schemaRefuses`), and the
    // answer is the reader's on the prepared arguments
    const toolCall = oc.createToolSearchTools({ config: {} }).find((tool) => tool.name === "tool_call");
    const prepared = toolCall.prepareArguments(args);
    let validated = prepared;
    let schemaRefuses = false;
    try {
      validated = oc.validateToolArguments(toolCall, { name: toolCall.name, arguments: prepared });
    } catch {
      schemaRefuses = true;
    }
    return { ...oc.readToolSearchCallArgs(validated, { entries }), schemaRefuses };
  },
  mcpToolName: (servers, server, tool) =>
    oc.buildSafeToolName({ serverName: oc.assignSafeServerNames(servers).get(server), toolName: tool, reservedNames: new Set() }),
  errorFacts: (text) => ({
    scopes: Object.fromEntries(
      ["assistant-error", "failover-explicit", "provider-fallback", "failover-hint", "context-window-too-small", "tpm-rate-limit-hint", "rate-limit-hint"].map(
        (scope) => [scope, ai.matchesContextOverflowMessage(text, scope)],
      ),
    ),
    requestSizeCeiling: oc.isProviderRequestSizeCeilingError(text),
    rateLimit: oc.isRateLimitErrorMessage(text),
    billing: oc.isBillingErrorMessage(text),
  }),
  renderOverflowResetGuidance: (attempt) => oc.renderOverflowResetGuidance(attempt),
  renderRecoverySideEffectCaution: (attempt) => oc.renderRecoverySideEffectCaution(attempt),
  overflowRecoveryDecision: (text, attemptCompactionCount) => {
    const promptError = new Error(text);
    return askOverflowRecovery({
      promptError,
      contextTokenBudget: 200000,
      attemptCompactionCount,
      state: { overflowCompactionAttempts: 0, toolResultTruncationAttempted: true },
      attempt: {
        terminal: { kind: "failed", error: promptError, source: "prompt" },
        replayMetadata: { replaySafe: true, hadPotentialSideEffects: false },
      },
      modelSelection: { provider: "replaylab", model: "oracle" },
    });
  },
  finishedReplyOverflow: async (message, contextWindow, options) => {
    const { owner = "caller", autoCompaction = true, reserveTokens = 0 } = options ?? {};
    const compactions = [];
    const session = {
      settingsManager: { getCompactionSettings: () => ({ enabled: autoCompaction, reserveTokens, keepRecentTokens: 0 }) },
      model: { provider: message.provider, id: message.model, contextWindow },
      sessionManager: { getBranch: () => [] },
      contextOverflowRecoveryOwner: owner,
      overflowRecoveryAttempts: 0,
      agent: { state: { messages: [{ role: "user", content: "q", timestamp: 0 }, message] } },
      emit: () => {},
      getContextUsage: () => undefined,
      runAutoCompaction: async (reason, willRetry) => {
        compactions.push({ reason, willRetry });
        return willRetry;
      },
    };
    const continues = await oc.AgentSessionCompaction.prototype.checkCompaction.call(session, message);
    // the run loop's candidate (embedded-agent-BaH7wGBd.mjs): `recoveryAssistant?.stopReason === "error" ||
    // recoveryAssistant?.stopReason === "length" ? recoveryAssistant : void 0`
    const candidate = message.stopReason === "error" || message.stopReason === "length" ? message : undefined;
    const decision = await askOverflowRecovery({
      assistantErrorText: candidate?.errorMessage,
      assistantOverflowCandidate: candidate ? { message: candidate, classification: null } : undefined,
      contextTokenBudget: contextWindow,
      attemptCompactionCount: 0,
      state: { overflowCompactionAttempts: 3, toolResultTruncationAttempted: true },
      attempt: { terminal: { kind: "completed" }, replayMetadata: { replaySafe: true, hadPotentialSideEffects: false } },
      modelSelection: { provider: message.provider, model: message.model },
    });
    const [compaction] = compactions;
    return {
      session: {
        compaction: compaction?.reason ?? null,
        willRetry: compaction?.willRetry ?? false,
        replyDropped: session.agent.state.messages.at(-1) !== message,
        continues,
      },
      runLoop: { action: decision.action, ...(decision.kind ? { kind: decision.kind } : {}) },
    };
  },
  qualityGuardDefaults: () => {
    const sessionManager = {};
    const factories = oc.buildEmbeddedExtensionFactories({
      cfg: { agents: { defaults: { compaction: { mode: "safeguard" } } } },
      sessionManager,
      contextTokenBudget: 200000,
    });
    const runtime = oc.getCompactionSafeguardRuntime(sessionManager);
    return {
      extensionFactory: factories[0]?.name,
      factoryIsTheBoundHandler: factories[0] === oc.compactionSafeguardExtension,
      runtimeFromEmptyConfig: runtime,
      resolveQualityGuardMaxRetries: { undefined: oc.resolveQualityGuardMaxRetries(undefined), "-1": oc.resolveQualityGuardMaxRetries(-1), 99: oc.resolveQualityGuardMaxRetries(99) },
      resolveRecentTurnsPreserve: { undefined: oc.resolveRecentTurnsPreserve(undefined), "-1": oc.resolveRecentTurnsPreserve(-1), 99: oc.resolveRecentTurnsPreserve(99) },
    };
  },
  fileOperations: (messages, previous) => {
    const fileOps = oc.createFileOps();
    if (previous && !previous.fromHook) {
      const details = oc.parseCompactionDetails(previous.details);
      if (details) oc.mergeSummaryFileOperations(fileOps, details);
    }
    for (const message of messages) oc.extractFileOpsFromMessage(message, fileOps);
    const { readFiles, modifiedFiles } = oc.computeFileLists(fileOps);
    return { readFiles, modifiedFiles, sections: oc.formatFileOperations(readFiles, modifiedFiles) };
  },
};

await serveLines(FNS, oc.versions);
