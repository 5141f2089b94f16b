// OpenClaw 2026.4.12's own runtime rules, called by name: one JSON line in, one JSON line out
// (../serve_lines.mjs; the functions are those of ../openclaw-2026.9.6/openclaw_rules.mjs, which
// says what each answers); the first line written names the versions that answer. 2026.4.12 has no
// write cap by window (capToolResultForContext ignores the window, as its session guard does), no
// give-up texts as functions and no @openclaw/ai: `isContextOverflow` is pi-ai 0.66.1's, which it
// calls.
import { serveLines } from "../serve_lines.mjs";
import { bindOpenClaw, importPiAiOverflow } from "./bind_openclaw.mjs";

process.env.OPENCLAW_LOG_LEVEL = process.env.REPLAYLAB_OPENCLAW_LOG_LEVEL ?? "silent";

const oc = await bindOpenClaw([
  "truncateToolResultText",
  "truncateToolResultMessage",
  "hasImportantTail",
  "calculateMaxToolResultChars",
  "capToolResultSize",
  "DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS",
  "installToolResultContextGuard",
  "extractOpaqueIdentifiers",
  "resolveQualityGuardMaxRetries",
  "resolveRecentTurnsPreserve",
  "buildEmbeddedExtensionFactories",
  "getCompactionSafeguardRuntime",
  "compactionSafeguardExtension",
  "isContextOverflowError",
  "isLikelyContextOverflowError",
  "isCompactionFailureError",
  "extractObservedOverflowTokenCount",
  "isRateLimitErrorMessage",
  "isBillingErrorMessage",
  "isMutatingToolCall",
]);
const piAi = await importPiAiOverflow();

const FNS = {
  truncateToolResultText: (text, maxChars, options) => oc.truncateToolResultText(text, maxChars, options ?? {}),
  truncateToolResultMessage: (message, maxChars, options) => oc.truncateToolResultMessage(message, maxChars, options ?? {}),
  capToolResultForContext: (message) => oc.capToolResultSize(message),
  writeCapChars: () => oc.DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS,
  calculateMaxToolResultChars: (ctx) => oc.calculateMaxToolResultChars(ctx),
  contextGuard: async (messages, contextWindowTokens) => {
    const agent = { transformContext: undefined };
    const remove = oc.installToolResultContextGuard({ agent, contextWindowTokens });
    try {
      return await agent.transformContext(messages, new AbortController().signal);
    } finally {
      remove();
    }
  },
  hasImportantTail: (text) => oc.hasImportantTail(text),
  extractOpaqueIdentifiers: (text) => oc.extractOpaqueIdentifiers(text),
  isContextOverflow: (message, contextWindow) => piAi.isContextOverflow(message, contextWindow ?? undefined),
  isContextOverflowError: (text) => oc.isContextOverflowError(text),
  isLikelyContextOverflowError: (text) => oc.isLikelyContextOverflowError(text),
  isCompactionFailureError: (text) => oc.isCompactionFailureError(text),
  extractObservedOverflowTokenCount: (text) => oc.extractObservedOverflowTokenCount(text),
  isRateLimitErrorMessage: (text) => oc.isRateLimitErrorMessage(text),
  isBillingErrorMessage: (text) => oc.isBillingErrorMessage(text),
  isMutatingToolCall: (name, args) => oc.isMutatingToolCall(name, args),
  qualityGuardDefaults: () => {
    const sessionManager = {};
    const factories = oc.buildEmbeddedExtensionFactories({
      cfg: { agents: { defaults: { compaction: { mode: "safeguard" } } } },
      sessionManager,
    });
    return {
      extensionFactory: factories[0]?.name,
      factoryIsTheBoundHandler: factories[0] === oc.compactionSafeguardExtension,
      runtimeFromEmptyConfig: oc.getCompactionSafeguardRuntime(sessionManager),
      resolveQualityGuardMaxRetries: { undefined: oc.resolveQualityGuardMaxRetries(undefined), "-1": oc.resolveQualityGuardMaxRetries(-1), 99: oc.resolveQualityGuardMaxRetries(99) },
      resolveRecentTurnsPreserve: { undefined: oc.resolveRecentTurnsPreserve(undefined), "-1": oc.resolveRecentTurnsPreserve(-1), 99: oc.resolveRecentTurnsPreserve(99) },
    };
  },
};

await serveLines(FNS, oc.versions);
