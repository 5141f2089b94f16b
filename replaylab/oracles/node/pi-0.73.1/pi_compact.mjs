// pi's own compaction as a compactor under test: the seed contract over stdin / stdout.
//
// AgentHarnessCompactParams JSON on stdin (sessionFile: the working copy); pi compacts it the
// way its agent session does (agent-session.js, `compact()`), with nothing of replaylab's:
//
//   SessionManager.open   the working copy itself (pi appends to it; it would rewrite a v1/v2 file,
//                         which replaylab reports as a rewrite)
//   branch(leafId)        the path the contract names (default: the file's leaf)
//   prepareCompaction     pi's cut point, with pi's settings from the params' budget:
//                         reserveTokens = max(reserveTokens, reserveTokensFloor),
//                         keepRecentTokens = keepRecentTokens (pi's DEFAULT_COMPACTION_SETTINGS when absent)
//   compact               pi's summary request(s) with pi's prompts, through pi-ai, to the model
//                         at REPLAYLAB_SUMMARY_BASE_URL (an OpenAI-compatible endpoint on loopback)
//   appendCompaction      the entry as pi persists it (type, id, parentId, timestamp, summary,
//                         firstKeptEntryId, tokensBefore, details: {readFiles, modifiedFiles})
//
// It prints the AgentHarnessCompactResult. pi's compaction result holds no replay-safety claim
// (pi knows no mutating tools), so `replaySafe` and `mutatedEventIds` are left out: the contract's
// defaults apply and replaylab's re-check says whether they hold. `compactedWindow` is the
// context pi itself rebuilds after the append.
//
// It runs once (params on stdin) or as a worker serving every compaction of a replaylab process
// (`--serve`): ../compact_worker.mjs says both. Every socket this process opens must go to a
// loopback address (loopback_only.mjs, imported before pi): the summary model is replaylab's; no key, no internet.
import { loopbackSummaryModel } from "../loopback_only.mjs";
import crypto, { createHash } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { compactedAnswer, runCompactor } from "../compact_worker.mjs";

// pi names its entries with random UUIDs (generateId). Under test they derive from the entry
// compacted at (ids are stable across runs, timestamps are not), so a run gives the same ids every
// time (reproducible reports and golden results); pi only needs them unique in its file, and
// generateId still draws again on a collision.
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

const PI = "./node_modules/@mariozechner/pi-coding-agent/dist/core";
const { DEFAULT_COMPACTION_SETTINGS, compact, prepareCompaction } = await import(`${PI}/compaction/compaction.js`);
const { SessionManager } = await import(`${PI}/session-manager.js`);

const MODEL_ID = "replaylab-extractive";
// the version that answers, named in the worker's first line
const PACKAGE = new URL("./node_modules/@mariozechner/pi-coding-agent/package.json", import.meta.url);
const VERSION = JSON.parse(readFileSync(PACKAGE, "utf8")).version;

const fail = (error) => ({ success: false, error });

const summaryModel = (baseUrl, contextTokens) =>
  loopbackSummaryModel({ id: MODEL_ID, name: "replaylab extractive summarizer (loopback)", baseUrl, contextTokens });

async function compactOnce(params, baseUrl, log, cwd) {
  seedIds(params.leafId);
  if (!baseUrl) return fail("REPLAYLAB_SUMMARY_BASE_URL is not set: no summary model to ask");
  const model = summaryModel(baseUrl, params.contextTokens);

  const file = params.sessionFile;
  // pi writes every line with its newline and appends `entry + "\n"`; a file that lacks the last
  // newline (replaylab's recordings) gets it first, or pi's entry would join the last line
  const text = readFileSync(file, "utf8");
  if (text && !text.endsWith("\n")) appendFileSync(file, "\n");
  const sm = SessionManager.open(file, undefined, cwd);
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
  const result = await compact(preparation, model, "loopback", undefined, undefined, undefined, undefined);
  const id = sm.appendCompaction(result.summary, result.firstKeptEntryId, result.tokensBefore, result.details, false);

  const entries = new Map(sm.getBranch().map((e) => [e.id, e]));
  const window = [];
  const byMessage = new Map([...entries.values()].filter((e) => e.type === "message").map((e) => [e.message, e.id]));
  for (const message of sm.buildSessionContext().messages) {
    const entryId = message.role === "compactionSummary" ? id : (byMessage.get(message) ?? null);
    window.push({ entryId, role: message.role });
  }
  return compactedAnswer({ id, result, preparation, before, window, log });
}

await runCompactor(compactOnce, { header: { ready: true, pi: VERSION }, prefix: "pi-compact" });
