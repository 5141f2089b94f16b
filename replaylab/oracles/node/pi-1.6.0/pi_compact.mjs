// pi 1.6.0's own compaction as a compactor under test: the seed contract over stdin / stdout.
//
// AgentHarnessCompactParams JSON on stdin (sessionFile: the working copy); pi compacts it the
// way its agent session's manual compaction does (agent-session.js `compact()`, L2335-2402),
// with nothing of replaylab's:
//
//   SessionManager.open   the working copy itself (pi appends to it; it rewrites a v1/v2 file,
//                         and since 1.x appends a missing final newline itself on load)
//   branch(leafId)        the path the contract names (default: the file's leaf)
//   prepareCompaction     pi's cut point, with pi's settings from the params' budget:
//                         reserveTokens = max(reserveTokens, reserveTokensFloor),
//                         keepRecentTokens = keepRecentTokens (pi's DEFAULT_COMPACTION_SETTINGS when absent);
//                         undefined → "Already compacted" (leaf is a compaction) or
//                         "Nothing to compact (session too small)" (1.6.0 also for a compaction
//                         that would summarize no message, #4811) — the texts of agent-session.js
//   compact               pi's summary request(s) with pi's prompts, through pi-ai's completeSimple
//                         (no streamFn), to the model at REPLAYLAB_SUMMARY_BASE_URL (an
//                         OpenAI-compatible endpoint on loopback); no retry policy (one attempt)
//   appendCompaction      the entry as pi 1.6.0 persists it (type, id, parentId, timestamp, summary,
//                         firstKeptEntryId (?? its own id), tokensBefore, details: {readFiles,
//                         modifiedFiles}, usage (the summary request's usage), fromHook: false,
//                         systemMessage when the context holds system messages)
//
// It prints the AgentHarnessCompactResult. `compactedWindow` is the context pi itself rebuilds after
// the append, with each message's source entry from pi's projection (a compaction yields its
// systemMessage, when it has one, and then its summary: both name the compaction entry).
//
// It runs once (params on stdin) or as a worker serving every compaction of a replaylab process
// (`--serve`): ../compact_worker.mjs says both. Every socket this process opens must go to a
// loopback address (loopback_only.mjs, imported before pi): the summary model is replaylab's; no key, no internet.
import { loopbackOnly } from "../loopback_only.mjs";
import crypto, { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { compactedAnswer, runCompactor } from "../compact_worker.mjs";

// pi names its entries with random UUIDs (generateId: randomUUID().slice(0, 8)). Under test they
// derive from the entry compacted at, so a run gives the same ids every time. (pi 1.6.0 also draws a
// uuidv7 routing session id per summary request; with cacheRetention "none" the OpenAI-completions
// provider sends it nowhere.)
let seed = "";
let drawn = 0;
const seedIds = (leafId) => {
  seed = createHash("sha256").update(`pi-compact:${leafId ?? ""}`).digest("hex");
  drawn = 0;
};
crypto.randomUUID = () => {
  const h = createHash("sha256").update(`${seed}:${drawn++}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
syncBuiltinESMExports();

const PI = new URL("./node_modules/@earendil-works/pi-coding-agent/dist/core/", import.meta.url);
const { DEFAULT_COMPACTION_SETTINGS, compact, prepareCompaction } = await import(
  new URL("compaction/compaction.js", PI).href
);
const { SessionManager } = await import(new URL("session-manager.js", PI).href);

const MODEL_ID = "replaylab-extractive";
// the version that answers, named in the worker's first line
const PACKAGE = new URL("./node_modules/@earendil-works/pi-coding-agent/package.json", import.meta.url);
const VERSION = JSON.parse(readFileSync(PACKAGE, "utf8")).version;

const fail = (error) => ({ success: false, error });

function summaryModel(baseUrl, contextTokens) {
  const url = new URL(baseUrl);
  loopbackOnly(url.hostname);
  return {
    id: MODEL_ID,
    name: "replaylab extractive summarizer (loopback)",
    api: "openai-completions",
    provider: "replaylab",
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: contextTokens,
    maxTokens: contextTokens,
  };
}

async function compactOnce(params, baseUrl, log, cwd) {
  seedIds(params.leafId);
  if (!baseUrl) return fail("REPLAYLAB_SUMMARY_BASE_URL is not set: no summary model to ask");
  const model = summaryModel(baseUrl, params.contextTokens);

  // 1.6.0's loadEntriesFromFile appends the missing final newline itself (0.73.1 needed it done here)
  const sm = SessionManager.open(params.sessionFile, undefined, cwd);
  if (params.leafId) sm.branch(params.leafId);
  const path = sm.getBranch();
  const settings = {
    enabled: true,
    reserveTokens: Math.max(params.reserveTokens ?? 0, params.reserveTokensFloor ?? 0),
    keepRecentTokens: params.keepRecentTokens ?? DEFAULT_COMPACTION_SETTINGS.keepRecentTokens,
  };
  const preparation = prepareCompaction(path, settings);
  if (!preparation) {
    const last = path[path.length - 1];
    return fail(last?.type === "compaction" ? "Already compacted" : "Nothing to compact (session too small)");
  }
  const before = sm.buildSessionContext().messages.length;
  // the key only satisfies the OpenAI client; the loopback endpoint takes none
  let result;
  try {
    result = await compact(preparation, model, "loopback", undefined, undefined, undefined, undefined);
  } catch (error) {
    return fail(String(error && error.message ? error.message : error));
  }
  const id = sm.appendCompaction(
    result.summary,
    result.firstKeptEntryId,
    result.tokensBefore,
    result.details,
    false,
    result.usage,
  );

  const window = [];
  for (const { sourceEntry, messages } of sm.buildSessionProjection().entries) {
    for (const message of messages) window.push({ entryId: sourceEntry.id ?? null, role: message.role });
  }
  return compactedAnswer({ id, result, preparation, before, window, log });
}

await runCompactor(compactOnce, { header: { ready: true, pi: VERSION }, prefix: "pi-compact (pi 1.6.0)" });
