// OpenClaw 2026.9.6's own compaction as a compactor under test: the seed contract in JSON.
//
// AgentHarnessCompactParams in (sessionFile: the working copy, a session JSONL file), an
// AgentHarnessCompactResult out. OpenClaw compacts the way its agent session does on `/compact`
// (src/agents/sessions/agent-session-compaction.ts, AgentSession.compact → runCompactionWork,
// mode "manual"), with nothing of replaylab's:
//
//   SessionManager.fromEntries  the working copy's entries, in memory (2026.9.6 keeps runtime
//                               transcripts in SQLite; JSONL is its import / archive form)
//   branch(leafId)              the path the contract names (default: the file's leaf)
//   preflightManualSessionCompaction
//                               agent-core's prepareCompaction with OpenClaw's settings (reserve
//                               capped at a quarter of the window); when it finds nothing to
//                               summarize, again with keepRecentTokens 0
//   compactionMode "safeguard"  the real `compactionSafeguardExtension` handler
//                               (session_before_compact), its runtime set as OpenClaw's extension
//                               factory sets it: quality guard on, identifier policy strict (the
//                               params may say otherwise), summarizeInStages, fitCompactionSummary.
//                               A cancel leaves the file untouched and answers
//                               {"success": false, "cancelled": true, "reason": …}
//   any other mode              agent-core's plain `compact` (OpenClaw's "default" mode)
//   capCompactionSummary        then appendCompaction(summary, firstKeptEntryId, tokensBefore,
//                               details, fromExtension, {itemId}, tokensAfter): the entry is
//                               appended to the working copy as one JSON line
//
// Two ways to run it:
//   node openclaw_compact.mjs          params JSON on stdin, the result JSON on stdout, the summary
//                                      model at REPLAYLAB_SUMMARY_BASE_URL
//   node openclaw_compact.mjs --serve  a worker: first a line naming the versions that answer
//                                      ({"ready": true, …} or {"ready": false, "refused": true,
//                                      "error": …}), then one line in, one line out:
//                                      {"params": {…}, "summaryBaseUrl": …} →
//                                      {"result": {…}, "log": [...]}. Loading OpenClaw's modules
//                                      takes seconds, a compaction a fraction of one: replaylab
//                                      keeps one worker for a run.
//
// Entry ids (the itemId and the entry's id) are OpenClaw's `randomUUID()` draws made
// deterministic: derived from the entry compacted at, as pi_compact.mjs does, so a compaction gives
// the same entry on every run. OpenClaw's logger is silenced (OPENCLAW_LOG_LEVEL=silent) unless
// REPLAYLAB_OPENCLAW_LOG_LEVEL names a level (it then also writes /tmp/openclaw/openclaw-<date>.log).
// The summary model is an OpenAI-compatible endpoint on loopback, called through @openclaw/ai's
// streamSimple ("openai-completions"); every socket of this process must go to loopback
// (loopback_only.mjs, imported first).
import { loopbackSummaryModel } from "../loopback_only.mjs";
import crypto, { createHash } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { BindingError, bindOpenClaw, importOpenClawAi } from "./bind_openclaw.mjs";
import { serveRequests } from "../compact_worker.mjs";

const MODEL_ID = "replaylab-summary";
// OpenClaw's subsystem logger writes every warning to stderr and to a rolling file under
// /tmp/openclaw; under test it stays silent unless REPLAYLAB_OPENCLAW_LOG_LEVEL asks otherwise
process.env.OPENCLAW_LOG_LEVEL = process.env.REPLAYLAB_OPENCLAW_LOG_LEVEL ?? "silent";

const NEEDED = [
  "parseSessionEntries",
  "SessionManager",
  "preflightManualSessionCompaction",
  "DEFAULT_COMPACTION_SETTINGS",
  "resolveEffectiveCompactionReserveTokens",
  "compact",
  "capCompactionSummary",
  "estimateContextTokens",
  "buildSessionContext",
  "iterateSessionContextEntries",
  "projectSessionEntryMessage",
  "sanitizeCompactionReplayMessages",
  "compactionSafeguardExtension",
  "setCompactionSafeguardRuntime",
  "consumeCompactionSafeguardCancellation",
  "openClawAgentCoreRuntime",
];

// OpenClaw names entries with `randomUUID()`. Each compaction reseeds these draws from its leaf
// right before the two ids it writes (the itemId, the entry's id): what OpenClaw's libraries draw
// in between, and how often, depends on what the process ran before (a client made once per
// process draws once), so the ids must not depend on the count of draws
let seed = "";
let drawn = 0;
crypto.randomUUID = () => {
  const h = createHash("sha256").update(`${seed}:${drawn++}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
syncBuiltinESMExports();
const reseed = (leafId, purpose) => {
  seed = createHash("sha256").update(`openclaw-compact:${leafId ?? ""}:${purpose}`).digest("hex");
  drawn = 0;
};

const failed = (error, extra = {}) => ({ success: false, error, ...extra });

const summaryModel = (baseUrl, contextTokens) =>
  loopbackSummaryModel({ id: MODEL_ID, name: "replaylab summary model (loopback)", baseUrl, contextTokens });

/** The context OpenClaw rebuilds from a branch, as [{entryId, role}] (iterateSessionContextMessages). */
function windowOf(oc, path) {
  const window = [];
  for (const { entry } of oc.iterateSessionContextEntries(path)) {
    if (entry.type === "reset") continue;
    if (entry.type === "branch_summary" && !entry.summary) continue;
    const message = oc.projectSessionEntryMessage(entry);
    if (message) window.push({ entryId: entry.id, role: message.role });
  }
  return window;
}

/** Loads OpenClaw: { oc, streamFn } or { refused } naming the versions expected and found. */
async function load() {
  let oc;
  try {
    oc = await bindOpenClaw(NEEDED);
  } catch (error) {
    if (error instanceof BindingError) return { refused: error.message };
    throw error;
  }
  const { createLlmRuntime } = await importOpenClawAi("index");
  const { registerBuiltInApiProviders } = await importOpenClawAi("providers");
  const llm = createLlmRuntime();
  registerBuiltInApiProviders(llm.registry);
  return { oc, streamFn: llm.streamSimple };
}

/** One compaction of `params.sessionFile`: the contract's result, and what happened in words. */
async function compactOnce({ oc, streamFn }, params, baseUrl, log) {
  if (!baseUrl) return failed("no summary model to ask: the summary endpoint's base URL is not set");
  const safeguard = (params.compactionMode ?? "safeguard") === "safeguard";

  // --- the working copy, in memory
  const file = params.sessionFile;
  const text = readFileSync(file, "utf8");
  const sm = oc.SessionManager.fromEntries(oc.parseSessionEntries(text));
  if (params.leafId) sm.branch(params.leafId);
  const path = sm.getBranch();
  const leaf = path.at(-1);

  // --- OpenClaw's compaction settings (agent-settings.ts applyAgentCompactionSettingsFromConfig)
  const contextTokens = params.contextTokens ?? 200_000;
  const requestedReserve = Math.max(
    params.reserveTokens ?? oc.DEFAULT_COMPACTION_SETTINGS.reserveTokens,
    params.reserveTokensFloor ?? 20_000,
  );
  const settings = {
    enabled: true,
    reserveTokens: oc.resolveEffectiveCompactionReserveTokens({ contextTokenBudget: contextTokens, reserveTokens: requestedReserve }),
    keepRecentTokens: params.keepRecentTokens ?? oc.DEFAULT_COMPACTION_SETTINGS.keepRecentTokens,
  };
  let preparation;
  try {
    const preflight = oc.preflightManualSessionCompaction(path, settings);
    if (!preflight.compactable) return failed(preflight.reason, { skipped: true });
    preparation = preflight.preparation;
  } catch (error) {
    return failed(`prepareCompaction refused: ${error?.message ?? error}`, { skipped: true });
  }
  if (leaf?.type === "compaction" && !params.forceCompact) {
    // OpenClaw itself re-compacts a leaf compaction that is not fromHook; the contract's
    // forceCompact=false asks not to (replaylab's own compactor answers "already compacted")
    return failed("Already compacted", { skipped: true });
  }

  let model;
  try {
    model = summaryModel(baseUrl, contextTokens);
  } catch (error) {
    return failed(`summary endpoint ${baseUrl}: ${error?.message ?? error}`);
  }
  const auth = { ok: true, apiKey: "loopback", headers: {} };
  const signal = new AbortController().signal;
  reseed(leaf?.id, "item");
  const itemId = crypto.randomUUID();
  let compaction;
  let fromExtension = false;
  let summaryCalls = 0;
  const countingStreamFn = (...args) => {
    summaryCalls += 1;
    return streamFn(...args);
  };

  if (safeguard) {
    const summarizer = params.summarizer ?? {};
    oc.setCompactionSafeguardRuntime(sm, {
      contextWindowTokens: contextTokens,
      identifierPolicy: params.identifierPolicy ?? "strict",
      identifierInstructions: summarizer.identifierInstructions ?? undefined,
      customInstructions: summarizer.customInstructions ?? undefined,
      qualityGuardEnabled: summarizer.qualityGuard ?? true,
      qualityGuardMaxRetries: summarizer.maxRetries ?? undefined,
      maxHistoryShare: params.maxHistoryShare ?? undefined,
      model,
      recentTurnsPreserve: params.recentTurnsPreserve ?? undefined,
      workspaceDir: undefined,
      provider: undefined,
    });
    const handlers = [];
    oc.compactionSafeguardExtension({ on: (event, handler) => event === "session_before_compact" && handlers.push(handler) });
    if (handlers.length !== 1) return failed("compactionSafeguardExtension registered no session_before_compact handler");
    const ctx = { sessionManager: sm, model, modelRegistry: { getApiKeyAndHeaders: async () => auth } };
    const event = {
      type: "session_before_compact",
      preparation,
      branchEntries: path,
      customInstructions: undefined,
      signal,
      thinkingLevel: "off",
      streamFn: countingStreamFn,
    };
    const result = await handlers[0](event, ctx);
    if (result?.cancel) {
      const cancellation = oc.consumeCompactionSafeguardCancellation(sm);
      const reason = cancellation?.reason ?? "compaction safeguard cancelled";
      const cause = cancellation?.error ? String(cancellation.error?.message ?? cancellation.error) : undefined;
      log(`safeguard cancelled after ${summaryCalls} summary request(s): ${reason}${cause ? ` (${cause})` : ""}`);
      return failed(`Compaction cancelled: ${reason}`, {
        cancelled: true,
        reason,
        cause,
        summaryCalls,
        firstKeptEntryId: preparation.firstKeptEntryId,
      });
    }
    if (!result?.compaction) return failed("the safeguard handler returned neither a compaction nor a cancel");
    compaction = result.compaction;
    fromExtension = true;
  } else {
    const runtime = oc.openClawAgentCoreRuntime; // createCompactionRuntime(): OpenClaw's agent-core runtime
    const result = await oc.compact(preparation, model, auth.apiKey, auth.headers, undefined, signal, "off", countingStreamFn, runtime);
    if (!result.ok) return failed(`Compaction failed: ${result.error?.message ?? result.error}`, { code: result.error?.code, summaryCalls });
    compaction = result.value;
  }

  // --- runCompactionWork's commit: cap, project, estimate, append
  const completed = { ...compaction, summary: oc.capCompactionSummary(compaction.summary) };
  const entryShape = { ...completed, type: "compaction", id: itemId, parentId: leaf?.id ?? null, timestamp: new Date().toISOString() };
  const replacement = oc.buildSessionContext([...path, entryShape]).messages;
  const tokensAfter = oc.estimateContextTokens(oc.sanitizeCompactionReplayMessages(replacement)).tokens;
  reseed(leaf?.id, "entry");
  const entryId = sm.appendCompaction(
    completed.summary,
    completed.firstKeptEntryId,
    completed.tokensBefore,
    completed.details,
    fromExtension,
    { itemId },
    tokensAfter,
  );
  const entry = sm.getEntry(entryId);
  if (readFileSync(file, "utf8") !== text) return failed("the working copy changed while OpenClaw compacted it");
  appendFileSync(file, `${text && !text.endsWith("\n") ? "\n" : ""}${JSON.stringify(entry)}\n`);

  const window = windowOf(oc, sm.getBranch());
  log(
    `${safeguard ? "safeguard" : "default"}: cut at ${completed.firstKeptEntryId} (split turn: ${preparation.isSplitTurn}), ` +
      `${preparation.messagesToSummarize.length} messages summarized, ${summaryCalls} summary request(s), ` +
      `context ${windowOf(oc, path).length} -> ${window.length} messages, tokens ${completed.tokensBefore} -> ${tokensAfter}`,
  );
  return {
    success: true,
    originalTokenCount: completed.tokensBefore,
    compactedTokenCount: tokensAfter,
    tokenSaved: completed.tokensBefore - tokensAfter,
    compactionEventId: entryId,
    compactedWindow: window,
    summaryText: completed.summary,
    error: null,
    mode: safeguard ? "safeguard" : "default",
    fromHook: fromExtension,
    firstKeptEntryId: completed.firstKeptEntryId,
    summaryCalls,
    openclaw: oc.versions,
  };
}

async function answer(loaded, params, baseUrl) {
  const lines = [];
  const log = (line) => lines.push(line);
  if (loaded.refused) return { result: failed(loaded.refused, { refused: true }), log: lines };
  try {
    return { result: await compactOnce(loaded, params, baseUrl, log), log: lines };
  } catch (error) {
    return { result: failed(String(error?.stack ?? error), { crashed: true }), log: lines };
  }
}

async function serve() {
  const loaded = await load();
  const header = loaded.refused
    ? { ready: false, refused: true, error: loaded.refused }
    : { ready: true, ...loaded.oc.versions };
  await serveRequests(header, (request) => answer(loaded, request.params ?? {}, request.summaryBaseUrl));
}

async function once() {
  const params = JSON.parse(readFileSync(0, "utf8"));
  const { result, log } = await answer(await load(), params, process.env.REPLAYLAB_SUMMARY_BASE_URL);
  for (const line of log) process.stderr.write(`openclaw-compact: ${line}\n`);
  process.stdout.write(JSON.stringify(result));
  if (result.crashed) process.exitCode = 1;
}

await (process.argv.includes("--serve") ? serve() : once());
// the safeguard's chunk-planning worker pool may keep the event loop alive
setTimeout(() => process.exit(), 50).unref();
