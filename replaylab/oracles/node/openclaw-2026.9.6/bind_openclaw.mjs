// Binds to one OpenClaw build: openclaw 2026.9.6 (npm) and @openclaw/ai 2026.9.6.
//
// OpenClaw's bundle (rolldown) names its chunks by content hash and its exports by letter, and
// several of the functions replaylab checks itself against are not exported at all (the
// safeguard handler, its runtime setter, the request-time context guard, hasImportantTail,
// extractOpaqueIdentifiers, capToolResultSize). So every function is bound by file and name:
//
//   * `export: "f"`   the chunk's own export letter (checked: the letter must name a function of
//                     that name — rolldown keeps the local name in `export { name as f }`);
//   * `local: true`   a top-level binding the chunk does not export: a module load hook appends
//                     `export { name as __replaylab_name }` to that chunk's source when node loads
//                     it. Nothing else of the source changes and the module stays the one instance
//                     every other chunk imports (same URL), so module state (the safeguard's
//                     runtime registry) is shared with OpenClaw's own callers.
//
// Before anything is imported the binding checks the installed versions, that each chunk file
// exists with the sha256 of the 2026.9.6 build, and that each name is defined in it; otherwise it
// refuses with an error naming the expected and the found versions (and what is missing).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { registerHooks } from "node:module";


export const EXPECTED_VERSION = "2026.9.6";
const NODE_MODULES = new URL("./node_modules/", import.meta.url);
const OPENCLAW = new URL("openclaw/", NODE_MODULES);
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
  "embedded-agent-BaH7wGBd.mjs": "e3cf2c540ae617a766b7f78f56ed252b233839b1f9cf8eef6d7ff8ef37829dd6",
  "session-manager-codec-DW3_Rlj9.mjs": "a471d1ddbf6519d74f26c4acd95e6c44641dba73cdc9bb412150dec93b09b973",
  "session-D9cHHQGH.mjs": "2f571cf4d56b6c80cf60b6a92fbd9a941955f0cf94d3e77658a5e30790e5fa8e",
  "agent-compaction-constants-DmXQuPyL.mjs": "1427b21bacd700537340721c16625455394d34bc457a6c6552af7d95945b6266",
  "agent-core-DG5aPUnb.mjs": "96221c65ea8e15d6499ca9f817e5d7629151b42c6d9742000791f2f48f2cebcd",
};

/** name → where it lives. `src` is the TypeScript source the bundle names in its `//#region`. */
export const FUNCTIONS = {
  // --- compaction (agent-core, sessions, safeguard) ---
  prepareCompaction: { file: "compaction-CAzwgOuQ.mjs", export: "h", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  compact: { file: "compaction-CAzwgOuQ.mjs", export: "s", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  capCompactionSummary: { file: "compaction-CAzwgOuQ.mjs", export: "o", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
  estimateContextTokens: { file: "compaction-CAzwgOuQ.mjs", export: "c", src: "packages/agent-core/src/harness/compaction/compaction.ts" },
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
  resolveLiveToolResultMaxChars: { file: "tool-result-limits-B-fhY8wF.mjs", export: "i", src: "src/agents/tool-result-limits.ts" },
  resolveAutoLiveToolResultMaxChars: { file: "tool-result-limits-B-fhY8wF.mjs", export: "r", src: "src/agents/tool-result-limits.ts" },
  resolveToolResultContextMaxChars: { file: "tool-result-limits-B-fhY8wF.mjs", export: "o", src: "src/agents/tool-result-limits.ts" },
  capToolResultSize: { file: "resource-loader-B1DeXClE.mjs", local: true, src: "src/agents/session-tool-result-guard.ts" },
  resolveMaxToolResultChars: { file: "resource-loader-B1DeXClE.mjs", local: true, src: "src/agents/session-tool-result-guard.ts" },
  installToolResultContextGuard: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/embedded-agent-runner/tool-result-context-guard.ts" },
  // --- identifiers / quality guard ---
  extractOpaqueIdentifiers: { file: "builtin-openclaw-q1hiFm14.mjs", local: true, src: "src/agents/agent-hooks/compaction-safeguard-quality.ts" },
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
  // --- overflow give-up texts ---
  renderOverflowResetGuidance: { file: "embedded-agent-BaH7wGBd.mjs", local: true, src: "src/agents/embedded-agent-runner/run/overflow-context-recovery.ts" },
  renderRecoverySideEffectCaution: { file: "embedded-agent-BaH7wGBd.mjs", local: true, src: "src/agents/embedded-agent-runner/run/overflow-context-recovery.ts" },
};

export class BindingError extends Error {
  constructor(message) {
    super(message);
    this.name = "BindingError";
  }
}

function versionOf(dir) {
  try {
    return JSON.parse(readFileSync(new URL("package.json", dir), "utf8")).version ?? "unknown";
  } catch {
    return "absent";
  }
}

const definedRe = (name) => new RegExp(`^(?:async function\\*? ${name}\\(|function\\*? ${name}\\(|const ${name} = |var ${name} = |let ${name} = )`, "m");
const exportRe = (name, letter) => new RegExp(`\\b${name} as ${letter.replace("$", "\\$")}\\b`);

/** Check the install and return the binding plan, or throw BindingError naming what differs. */
export function checkOpenClaw(names) {
  const found = { openclaw: versionOf(OPENCLAW), ai: versionOf(OPENCLAW_AI) };
  const head = `replaylab binds to openclaw ${EXPECTED_VERSION} and @openclaw/ai ${EXPECTED_VERSION}; found openclaw ${found.openclaw}, @openclaw/ai ${found.ai}`;
  if (found.openclaw !== EXPECTED_VERSION || found.ai !== EXPECTED_VERSION) throw new BindingError(`${head}.`);
  const problems = [];
  const locals = new Map();
  for (const name of names) {
    const where = FUNCTIONS[name];
    if (!where) throw new BindingError(`no binding is known for ${name}`);
    const url = new URL(`dist/${where.file}`, OPENCLAW);
    if (!existsSync(url)) {
      const stem = where.file.replace(/-[\w-]{8}\.mjs$/, "");
      const like = readdirSync(new URL("dist/", OPENCLAW)).filter((f) => f.startsWith(`${stem}-`) && f.endsWith(".mjs"));
      problems.push(`${name}: chunk dist/${where.file} is absent (chunks named ${stem}-*: ${like.join(", ") || "none"})`);
      continue;
    }
    const source = readFileSync(url, "utf8");
    const digest = createHash("sha256").update(source).digest("hex");
    if (digest !== CHUNKS[where.file]) {
      problems.push(`${name}: dist/${where.file} has sha256 ${digest.slice(0, 16)}…, not the ${EXPECTED_VERSION} build's ${CHUNKS[where.file].slice(0, 16)}…`);
      continue;
    }
    if (!definedRe(name).test(source)) problems.push(`${name}: not defined in dist/${where.file}`);
    else if (where.export && !exportRe(name, where.export).test(source)) problems.push(`${name}: dist/${where.file} does not export it as "${where.export}"`);
    else if (where.local) locals.set(where.file, [...(locals.get(where.file) ?? []), name]);
  }
  if (problems.length) throw new BindingError(`${head}; the ${EXPECTED_VERSION} build's functions are missing:\n  ${problems.join("\n  ")}`);
  return { found, locals };
}

let hooked = null;

/** Bind `names` (keys of FUNCTIONS): { name: value }, plus `versions`. */
export async function bindOpenClaw(names) {
  const { found, locals } = checkOpenClaw(names);
  const extra = new Map(
    [...locals].map(([file, list]) => [
      new URL(`dist/${file}`, OPENCLAW).href,
      `\n;export { ${list.map((n) => `${n} as __replaylab_${n}`).join(", ")} };\n`,
    ]),
  );
  if (extra.size) {
    if (hooked) {
      for (const [url] of extra) if (!hooked.has(url)) throw new BindingError(`bindOpenClaw: ${url} was not hooked before its first import`);
    } else {
      hooked = extra;
      registerHooks({
        load(url, context, nextLoad) {
          const result = nextLoad(url, context);
          const tail = hooked.get(url);
          if (!tail) return result;
          return { ...result, source: String(result.source) + tail };
        },
      });
    }
  }
  const out = { versions: { openclaw: found.openclaw, "@openclaw/ai": found.ai, node: process.version } };
  const modules = new Map();
  for (const name of names) {
    const where = FUNCTIONS[name];
    const href = new URL(`dist/${where.file}`, OPENCLAW).href;
    if (!modules.has(href)) modules.set(href, await import(href));
    const mod = modules.get(href);
    const value = where.local ? mod[`__replaylab_${name}`] : mod[where.export];
    const kind = where.kind === "class" ? "function" : where.kind === "const" ? undefined : "function";
    if (value === undefined || (kind && typeof value !== kind)) {
      throw new BindingError(`${name}: dist/${where.file} gave ${typeof value} for ${where.local ? "the appended export" : `export "${where.export}"`}`);
    }
    out[name] = value;
  }
  return out;
}

/** `@openclaw/ai` subpath modules (public exports map). */
export async function importOpenClawAi(subpath = "") {
  return await import(new URL(`dist/${subpath || "index"}.mjs`, OPENCLAW_AI).href);
}
