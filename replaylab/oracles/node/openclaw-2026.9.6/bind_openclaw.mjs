// Binds to one OpenClaw build: openclaw 2026.9.6 (npm) and @openclaw/ai 2026.9.6 — where each
// function lives in that build (how the binding works, and what it checks before it imports
// anything: ../bind_chunks.mjs).
import { BindingError, binder } from "../bind_chunks.mjs";

export const EXPECTED_VERSION = "2026.9.6";
const NODE_MODULES = new URL("./node_modules/", import.meta.url);
const OPENCLAW_AI = new URL("@openclaw/ai/", NODE_MODULES);

/** chunk → its sha256 in openclaw 2026.9.6 (`dist/`) */
export const CHUNKS = {
  "builtin-openclaw-q1hiFm14.mjs": "e4504516aef56cd293e11369e420148c5ad60c80e60128ed64bfb57fb7239e25",
  "tool-result-truncation-Cy0wmrxC.mjs": "69f1c096c1aa4bfbc5a7a15c718694f278ec480addd2063182afdb1007362927",
  "tool-result-limits-B-fhY8wF.mjs": "a114d8c16bdf4d694e3abf65cc2d9e4af9e3039ca8dfa14ed9566a1c9c3901a6",
  "resource-loader-B1DeXClE.mjs": "5a44e24ac53be932e5b4875171fecf739b06bf0992ed6ffd0314899d4b05e867",
  "resource-loader-v8341X6T.mjs": "6c560f0d721601c1fe84f297f26f23e82e0bc6d29c5da05126a75b2b92719083",
  "compaction-CAzwgOuQ.mjs": "a6257cb0493e75a5beff7574aab9797b05053ce12792f3755c3a3b21d16cdc6e",
  "session-manager-DjC09C_X.mjs": "d32aa85337df0bbb2492e2f84922475e948ce9e55f22f32326c6aa63704df574",
  "classify-Ds2AuCvN.mjs": "67e724f2e6598b46da6888ad57776057bbfb5fbf249f01674f458d8346e0c1da",
  "embedded-agent-helpers-BFS05UdI.mjs": "3230a5673d19f643436d6bf55cd6e76b445a70acab4cda2a38bdb86c5934a6ba",
  "message-patterns-D0mFl7L8.mjs": "fd2036dd3b738452492f65081cd7f6682ba7f5f4bae28473c5a7680cdbe58858",
  "tool-mutation-BV25PrZA.mjs": "378bfa0bf5a35b43eed8f484c520c7d4f3a30897f16e1b0a735d36681108dd81",
  "agent-bundle-mcp-names-38ksiKnf.mjs": "0a3ffb3581f22433372fd9e3a0b0f36efa4614f3cda821a5b2e1d52e4ba5b823",
  "embedded-agent-BaH7wGBd.mjs": "e3cf2c540ae617a766b7f78f56ed252b233839b1f9cf8eef6d7ff8ef37829dd6",
  "session-manager-codec-DW3_Rlj9.mjs": "a471d1ddbf6519d74f26c4acd95e6c44641dba73cdc9bb412150dec93b09b973",
  "session-D9cHHQGH.mjs": "2f571cf4d56b6c80cf60b6a92fbd9a941955f0cf94d3e77658a5e30790e5fa8e",
  "agent-compaction-constants-DmXQuPyL.mjs": "1427b21bacd700537340721c16625455394d34bc457a6c6552af7d95945b6266",
  "agent-core-DG5aPUnb.mjs": "96221c65ea8e15d6499ca9f817e5d7629151b42c6d9742000791f2f48f2cebcd",
  "cjk-chars-6ld30jSx.mjs": "684e5efca72e3fefeb81c0adebcd0770632c574088da9b9e2a29022dac152cb9",
  "query-expansion-XZx6aBHC.mjs": "d48759a9dbc11a4d0462032921013f15613c91038ed7c00a2a57a952966bd754",
  "local-model-lean-CHSAjCEl.mjs": "1111590e403cf1411211bf2a7c27a0635ededa569e7018a5850af39064b68860",
  "validation-Dw7cb6BV.mjs": "0c959e4ae3e862eb75c64c833ba11c890fd99cc67a709b916f310404c275fc0c",
};

/** name → where it lives. `src` is the TypeScript source the bundle names in its `//#region`. */
export const FUNCTIONS = {
  // --- compaction (agent-core, sessions, safeguard) ---
  prepareCompaction: { file: "compaction-CAzwgOuQ.mjs", export: "h", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  compact: { file: "compaction-CAzwgOuQ.mjs", export: "s", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  capCompactionSummary: { file: "compaction-CAzwgOuQ.mjs", export: "o", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  // the compaction's file lists: prepareCompaction's accumulator (extractFileOperations), and both modes' sections
  createFileOps: { file: "compaction-CAzwgOuQ.mjs", export: "y", src: "packages/agent-core/src/harness/compaction/utils.ts" },
  mergeSummaryFileOperations: { file: "compaction-CAzwgOuQ.mjs", export: "C", src: "packages/agent-core/src/harness/compaction/utils.ts" },
  extractFileOpsFromMessage: { file: "compaction-CAzwgOuQ.mjs", export: "b", src: "packages/agent-core/src/harness/compaction/utils.ts" },
  computeFileLists: { file: "compaction-CAzwgOuQ.mjs", export: "v", src: "packages/agent-core/src/harness/compaction/utils.ts" },
  formatFileOperations: { file: "compaction-CAzwgOuQ.mjs", export: "S", src: "packages/agent-core/src/harness/compaction/utils.ts" },
  parseCompactionDetails: { file: "compaction-CAzwgOuQ.mjs", local: true, src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  estimateContextTokens: { file: "compaction-CAzwgOuQ.mjs", export: "c", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  // the session's post-turn check: AgentSessionCompaction.prototype.checkCompaction
  AgentSessionCompaction: { file: "resource-loader-v8341X6T.mjs", local: true, src: "src/agents/sessions/agent-session-compaction.ts", kind: "class" },
  preflightManualSessionCompaction: { file: "resource-loader-v8341X6T.mjs", export: "s", src: "src/agents/sessions/agent-session-compaction.ts" },
  DEFAULT_COMPACTION_SETTINGS: { file: "compaction-CAzwgOuQ.mjs", export: "t", src: "packages/agent-core/src/harness/compaction/compaction.ts", kind: "const" },
  resolveEffectiveCompactionReserveTokens: { file: "agent-compaction-constants-DmXQuPyL.mjs", export: "t", src: "src/agents/agent-compaction-constants.ts" },
  parseSessionEntries: { file: "session-manager-codec-DW3_Rlj9.mjs", export: "l", src: "src/agents/sessions/session-manager-codec.ts" },
  buildSessionContext: { file: "session-D9cHHQGH.mjs", export: "t", src: "packages/agent-core/src/harness/session/session.ts" },
  iterateSessionContextEntries: { file: "session-D9cHHQGH.mjs", export: "n", src: "packages/agent-core/src/harness/session/session.ts", kind: "const" },
  projectSessionEntryMessage: { file: "session-D9cHHQGH.mjs", export: "i", src: "packages/agent-core/src/harness/session/session.ts" },
  sanitizeCompactionReplayMessages: { file: "resource-loader-v8341X6T.mjs", export: "G", src: "src/agents/compaction-replay.ts" },
  openClawAgentCoreRuntime: { file: "agent-core-DG5aPUnb.mjs", export: "r", src: "src/plugin-sdk/agent-core.ts", kind: "const" },
  SessionManager: { file: "session-manager-DjC09C_X.mjs", export: "t", src: "src/agents/sessions/session-manager.ts", kind: "class" },
  compactionSafeguardExtension: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard.ts" },
  setCompactionSafeguardRuntime: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard-runtime.ts", kind: "const" },
  getCompactionSafeguardRuntime: { file: "builtin-openclaw-q1hiFm14.mjs", export: "_", src: "src/agents/agent-hooks/compaction-safeguard-runtime.ts", kind: "const" },
  consumeCompactionSafeguardCancellation: { file: "builtin-openclaw-q1hiFm14.mjs", export: "g", src: "src/agents/agent-hooks/compaction-safeguard-runtime.ts" },
  buildEmbeddedExtensionFactories: { file: "builtin-openclaw-q1hiFm14.mjs", export: "f", src: "src/agents/embedded-agent-runner/extensions.ts" },
  summarizeInStages: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/compaction.ts" },
  // --- tool-result size control ---
  truncateToolResultText: { file: "tool-result-truncation-Cy0wmrxC.mjs", export: "f", src: "src/agents/embedded-agent-runner/tool-result-truncation.ts" },
  truncateToolResultMessage: { file: "tool-result-truncation-Cy0wmrxC.mjs", export: "d", src: "src/agents/embedded-agent-runner/tool-result-truncation.ts" },
  formatContextLimitTruncationNotice: { file: "tool-result-truncation-Cy0wmrxC.mjs", export: "C", src: "src/agents/embedded-agent-runner/context-truncation-notice.ts" },
  hasImportantTail: { file: "tool-result-truncation-Cy0wmrxC.mjs", local: true, src: "src/agents/embedded-agent-runner/tool-result-truncation.ts" },
  calculateMaxToolResultChars: { file: "tool-result-truncation-Cy0wmrxC.mjs", local: true, src: "src/agents/embedded-agent-runner/tool-result-truncation.ts", kind: "const" },
  resolveLiveToolResultAggregateMaxChars: { file: "tool-result-truncation-Cy0wmrxC.mjs", export: "a", src: "src/agents/embedded-agent-runner/tool-result-truncation.ts" },
  buildRecoveryToolResultReplacementPlan: { file: "tool-result-truncation-Cy0wmrxC.mjs", local: true, src: "src/agents/embedded-agent-runner/tool-result-truncation.ts" },
  sessionLikelyHasOversizedToolResults: { file: "tool-result-truncation-Cy0wmrxC.mjs", export: "s", src: "src/agents/embedded-agent-runner/tool-result-truncation.ts" },
  resolveLiveToolResultMaxChars: { file: "tool-result-limits-B-fhY8wF.mjs", export: "i", src: "src/agents/tool-result-limits.ts" },
  resolveAutoLiveToolResultMaxChars: { file: "tool-result-limits-B-fhY8wF.mjs", export: "r", src: "src/agents/tool-result-limits.ts" },
  resolveToolResultContextMaxChars: { file: "tool-result-limits-B-fhY8wF.mjs", export: "o", src: "src/agents/tool-result-limits.ts" },
  capToolResultSize: { file: "resource-loader-B1DeXClE.mjs", local: true, src: "src/agents/session-tool-result-guard.ts" },
  resolveMaxToolResultChars: { file: "resource-loader-B1DeXClE.mjs", local: true, src: "src/agents/session-tool-result-guard.ts" },
  installToolResultContextGuard: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/embedded-agent-runner/tool-result-context-guard.ts" },
  estimateStringCharsWithMinimumRawWeight: { file: "cjk-chars-6ld30jSx.mjs", export: "r", src: "packages/normalization-core/src/cjk-chars.ts" },
  // --- identifiers / quality guard ---
  extractOpaqueIdentifiers: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard-quality.ts" },
  hasAskOverlap: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard-quality.ts" },
  auditSummaryQuality: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard-quality.ts" },
  extractKeywords: { file: "query-expansion-XZx6aBHC.mjs", export: "t", src: "packages/memory-host-sdk/src/host/query-expansion.ts" },
  resolveQualityGuardMaxRetries: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard.ts" },
  resolveRecentTurnsPreserve: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard.ts" },
  // --- error classifiers ---
  isContextOverflowError: { file: "classify-Ds2AuCvN.mjs", export: "i", src: "src/agents/failover/context-overflow.ts" },
  isLikelyContextOverflowError: { file: "classify-Ds2AuCvN.mjs", export: "a", src: "src/agents/failover/context-overflow.ts" },
  classifyFailoverReason: { file: "classify-Ds2AuCvN.mjs", export: "t", src: "src/agents/failover/classify.ts" },
  isCompactionFailureError: { file: "embedded-agent-helpers-BFS05UdI.mjs", export: "v", src: "src/agents/embedded-agent-helpers/errors.ts" },
  extractObservedOverflowTokenCount: { file: "embedded-agent-helpers-BFS05UdI.mjs", export: "_", src: "src/agents/embedded-agent-helpers/errors.ts" },
  isRateLimitErrorMessage: { file: "message-patterns-D0mFl7L8.mjs", export: "d", src: "src/agents/failover/message-patterns.ts" },
  isBillingErrorMessage: { file: "message-patterns-D0mFl7L8.mjs", export: "a", src: "src/agents/failover/message-patterns.ts" },
  isProviderRequestSizeCeilingError: { file: "message-patterns-D0mFl7L8.mjs", export: "u", src: "src/agents/failover/message-patterns.ts" },
  // --- replay safety ---
  isMutatingToolCall: { file: "tool-mutation-BV25PrZA.mjs", export: "n", src: "src/agents/tool-mutation.ts" },
  assignSafeServerNames: { file: "agent-bundle-mcp-names-38ksiKnf.mjs", export: "t", src: "src/agents/agent-bundle-mcp-names.ts" },
  buildSafeToolName: { file: "agent-bundle-mcp-names-38ksiKnf.mjs", export: "n", src: "src/agents/agent-bundle-mcp-names.ts" },
  // Tool Search's dispatcher: how `tool_call` reads its target and the target's arguments
  prepareToolSearchDispatcherArguments: { file: "local-model-lean-CHSAjCEl.mjs", local: true, src: "src/agents/tool-search-request.ts" },
  readToolSearchCallArgs: { file: "local-model-lean-CHSAjCEl.mjs", local: true, src: "src/agents/tool-search-request.ts" },
  createToolSearchTools: { file: "local-model-lean-CHSAjCEl.mjs", export: "o", src: "src/agents/tool-search.ts" },
  validateToolArguments: { file: "validation-Dw7cb6BV.mjs", export: "t", src: "packages/llm-core/src/validation.ts" },
  // --- overflow give-up texts ---
  renderOverflowResetGuidance: { file: "embedded-agent-BaH7wGBd.mjs", local: true, src: "src/agents/embedded-agent-runner/run/overflow-context-recovery.ts" },
  renderRecoverySideEffectCaution: { file: "embedded-agent-BaH7wGBd.mjs", local: true, src: "src/agents/embedded-agent-runner/run/overflow-context-recovery.ts" },
  recoverEmbeddedRunOverflow: { file: "embedded-agent-BaH7wGBd.mjs", local: true, src: "src/agents/embedded-agent-runner/run/overflow-context-recovery.ts" },
};

const { check, bind } = binder({
  nodeModules: NODE_MODULES,
  packages: { openclaw: EXPECTED_VERSION, "@openclaw/ai": EXPECTED_VERSION },
  chunks: CHUNKS,
  functions: FUNCTIONS,
});

export { BindingError };
/** Check the install and return the binding plan, or throw BindingError naming what differs. */
export const checkOpenClaw = check;
/** Bind `names` (keys of FUNCTIONS): { name: value }, plus `versions`. */
export const bindOpenClaw = bind;

/** `@openclaw/ai` subpath modules (public exports map). */
export async function importOpenClawAi(subpath = "") {
  return await import(new URL(`dist/${subpath || "index"}.mjs`, OPENCLAW_AI).href);
}
