// Binds to one OpenClaw build: openclaw 2026.4.12 (npm) — where each function lives in that build
// (how the binding works, and what it checks before it imports anything: ../bind_chunks.mjs).
// Its `isContextOverflow` is pi-ai's (@mariozechner/pi-ai 0.66.1, the version it pins).
import { BindingError, binder } from "../bind_chunks.mjs";

export const EXPECTED_VERSION = "2026.4.12";
const NODE_MODULES = new URL("./node_modules/", import.meta.url);
const PI_AI_OVERFLOW = new URL("@mariozechner/pi-ai/dist/utils/overflow.js", NODE_MODULES);

/** chunk → its sha256 in openclaw 2026.4.12 (`dist/`) */
export const CHUNKS = {
  "model-context-tokens-B-DwLhRz.js": "07f8647754163bdbf5aea8f0151fe3585f3126c875fc556890f4235494c1d657",
  "pi-embedded-helpers-DeRkymp8.js": "4d72cbf45593d87c13c54c0eb9103c62b4d829798a03226a1f09c277525f2f82",
  "sanitize-user-facing-text-DSOE8x7r.js": "48a0fa6c686b077a26fa429ef82e8b7b8cf532037d9a33a1c28864935500f945",
  "tool-mutation-BH2KUmRb.js": "0634f1e6b6eb1c11601dae3b0809abdc3f4c19375718d17f453a6fde20a3a0ae",
};

const TOKENS = "model-context-tokens-B-DwLhRz.js";
const TRUNCATION = "src/agents/pi-embedded-runner/tool-result-truncation.ts";
/** name → where it lives. `src` is the TypeScript source the bundle names in its `//#region`. */
export const FUNCTIONS = {
  // --- tool-result size control ---
  truncateToolResultText: { file: TOKENS, local: true, src: TRUNCATION },
  truncateToolResultMessage: { file: TOKENS, local: true, src: TRUNCATION },
  hasImportantTail: { file: TOKENS, local: true, src: TRUNCATION },
  calculateMaxToolResultChars: { file: TOKENS, local: true, src: TRUNCATION },
  formatContextLimitTruncationNotice: { file: TOKENS, local: true, src: "src/agents/pi-embedded-runner/tool-result-context-guard.ts" },
  capToolResultSize: { file: TOKENS, local: true, src: "src/agents/session-tool-result-guard.ts" },
  DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS: { file: TOKENS, local: true, src: TRUNCATION, kind: "const" },
  installToolResultContextGuard: { file: TOKENS, export: "X", src: "src/agents/pi-embedded-runner/tool-result-context-guard.ts" },
  // --- identifiers / quality guard ---
  extractOpaqueIdentifiers: { file: TOKENS, local: true, src: "src/agents/pi-hooks/compaction-safeguard-quality.ts" },
  resolveQualityGuardMaxRetries: { file: TOKENS, local: true, src: "src/agents/pi-hooks/compaction-safeguard.ts" },
  resolveRecentTurnsPreserve: { file: TOKENS, local: true, src: "src/agents/pi-hooks/compaction-safeguard.ts" },
  buildEmbeddedExtensionFactories: { file: TOKENS, export: "A", src: "src/agents/pi-embedded-runner/extensions.ts" },
  getCompactionSafeguardRuntime: { file: TOKENS, local: true, src: "src/agents/pi-hooks/compaction-safeguard-runtime.ts", kind: "const" },
  compactionSafeguardExtension: { file: TOKENS, local: true, src: "src/agents/pi-hooks/compaction-safeguard.ts" },
  // --- error classifiers ---
  isContextOverflowError: { file: "pi-embedded-helpers-DeRkymp8.js", export: "C", src: "src/agents/pi-embedded-helpers/errors.ts" },
  isLikelyContextOverflowError: { file: "pi-embedded-helpers-DeRkymp8.js", export: "E", src: "src/agents/pi-embedded-helpers/errors.ts" },
  isCompactionFailureError: { file: "pi-embedded-helpers-DeRkymp8.js", export: "S", src: "src/agents/pi-embedded-helpers/errors.ts" },
  extractObservedOverflowTokenCount: { file: "pi-embedded-helpers-DeRkymp8.js", export: "_", src: "src/agents/pi-embedded-helpers/errors.ts" },
  isRateLimitErrorMessage: { file: "sanitize-user-facing-text-DSOE8x7r.js", export: "x", src: "src/agents/pi-embedded-helpers/failover-matches.ts" },
  isBillingErrorMessage: { file: "sanitize-user-facing-text-DSOE8x7r.js", export: "v", src: "src/agents/pi-embedded-helpers/failover-matches.ts" },
  // --- replay safety ---
  isMutatingToolCall: { file: "tool-mutation-BH2KUmRb.js", export: "r", src: "src/agents/tool-mutation.ts" },
};

const { check, bind } = binder({
  nodeModules: NODE_MODULES,
  packages: { openclaw: EXPECTED_VERSION },
  chunks: CHUNKS,
  functions: FUNCTIONS,
});

export { BindingError };
export const checkOpenClaw = check;
export const bindOpenClaw = bind;

/** pi-ai 0.66.1's `isContextOverflow`, which OpenClaw 2026.4.12 calls on an assistant error. */
export async function importPiAiOverflow() {
  return await import(PI_AI_OVERFLOW.href);
}
