// The OpenClaw session oracle: what the real OpenClaw (the version pinned in package-lock.json)
// makes of a transcript — replaylab's window protocol (replaylab/oracles/agent.py) for the
// openclaw@2026.9.6 profile, asked through OpenClaw's public plugin-SDK subpath exports:
//
//   openclaw/plugin-sdk/agent-sessions  parseSessionEntries  the JSONL reader (malformed lines skipped)
//                                       SessionManager       in memory (fromOwnedEntries: migrates
//                                                            v1/v2 in memory, picks the leaf) or on a
//                                                            SQLite store (open(target), on a scratch copy)
//   openclaw/plugin-sdk/agent-core      buildSessionContext  the messages OpenClaw sends to the model
//                                       estimateTokens       OpenClaw's per-message estimate
//                                       estimateContextTokens, prepareCompaction, findCutPoint
// and, for the source entry of each context message only, the hash-named chunk that holds
// buildSessionContext (bound by file and checked: its `t` export must be the public buildSessionContext).
//
// Protocol: one JSON request per stdin line, one JSON answer per stdout line, in order; one node
// process answers many requests. A request names a transcript:
//   {"file": "/path/x.jsonl"}                                    JSONL v1..v4
//   {"store": "/state/agents/main/agent/openclaw-agent.sqlite", "sessionId": "...",
//    "sessionKey"?: "...", "agentId"?: "..."}                    a SQLite store (copied first)
// plus optionally
//   "keepRecentTokens", "reserveTokens"       one compaction setting (as the pi oracle)
//   "settings": [{keepRecentTokens, reserveTokens}, ...]         several settings
//   "leaves": [entryId | {"line": N}, ...]    windows at these leaves (default: the current leaf)
//   "messages": false                         leave the message bodies out of the answer
//   "entries": false                          leave "entries" out (and number no lines but a leaf's)
//   "id": anything                            echoed back
// The answer:
//   {"ok": true, "openclaw", "node", "version" (header version before migration), "migrated",
//    "leafId", "entries": [{"id", "type", "parentId", "role"?, "line"? (1-based file line)}],
//    "opaque": <unrecognized records kept aside>, "skippedLines": <lines that did not parse>,
//    "windows": [{"leafId", "context": [{"entryId", "role", "tokens", "via", "message"?}],
//                 "estimate": estimateContextTokens(context), "prepare": [<one per setting>]}],
//    "context": windows[0].context, "prepare": windows[0].prepare[0].result (pi-oracle shape)}
// where one prepare is
//   {"settings", "refused": null | "empty-path" | "reset-leaf" | "fromHook-leaf" | "nothing-to-summarize"
//                         | "error", "error"?: {"code", "message"},
//    "scale": {"usageTokens", "usageEntryId", "estimatedTokens", "triggerUnitScale",
//              "resetPreludeTokens", "keepRecentTokens" (the effective budget), "tokensBefore"},
//    "result": null | {"firstKeptEntryId", "isSplitTurn", "tokensBefore", "summarize": [ids],
//                      "turnPrefix": [ids], "previousSummary": bool, "previousSummaryChars",
//                      "latestUnresolvedUserRequest"?, "fileOps"},
//    "check": findCutPoint(...) with the scale above gives the same first kept entry (bool)}
// or {"ok": false, "error": "..."} when OpenClaw throws.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { DatabaseSync } from "node:sqlite";
import { namesLines } from "../entry_lines.mjs";
import { CURRENT_SESSION_VERSION, SessionManager, parseSessionEntries } from "openclaw/plugin-sdk/agent-sessions";
import {
  buildSessionContext,
  estimateContextTokens,
  estimateTokens,
  findCutPoint,
  prepareCompaction,
} from "openclaw/plugin-sdk/agent-core";

// The protocol owns stdout: anything OpenClaw's loggers print goes to stderr instead.
const writeAnswer = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);

const EXPECTED_VERSION = "2026.9.6";
const MANIFEST = JSON.parse(readFileSync(new URL("./node_modules/openclaw/package.json", import.meta.url), "utf8"));
// packages/agent-core/src/harness/session/session.ts of the 2026.9.6 build: exports
// t = buildSessionContext, n = iterateSessionContextEntries, i = projectSessionEntryMessage.
const SESSION_CHUNK = "./node_modules/openclaw/dist/session-D9cHHQGH.mjs";

function refuse(why) {
  const message = `openclaw_oracle needs openclaw ${EXPECTED_VERSION} (found ${MANIFEST.version}): ${why}`;
  process.stderr.write(`${message}\n`);
  writeAnswer(`${JSON.stringify({ ok: false, error: message })}\n`, () => process.exit(3));
  return new Promise(() => {});
}
if (MANIFEST.version !== EXPECTED_VERSION) await refuse("version mismatch");
if (!existsSync(new URL(SESSION_CHUNK, import.meta.url))) await refuse(`${SESSION_CHUNK} is absent`);
const chunk = await import(new URL(SESSION_CHUNK, import.meta.url));
const iterateSessionContextEntries = chunk.n;
const projectSessionEntryMessage = chunk.i;
if (chunk.t !== buildSessionContext || typeof iterateSessionContextEntries !== "function"
    || typeof projectSessionEntryMessage !== "function") {
  await refuse(`${SESSION_CHUNK} does not export buildSessionContext as t, iterateSessionContextEntries as n `
    + "and projectSessionEntryMessage as i");
}

function errorText(error) {
  return String(error && error.message ? error.message : error);
}

function tokensOf(message) {
  try {
    return estimateTokens(message);
  } catch (error) {
    return { error: errorText(error) };
  }
}

// ---------------------------------------------------------------- loading

// parseSessionEntries' own split (session-manager-codec: content.trim().split("\n"), blank lines
// skipped, a line that does not parse skipped), kept here only to number the lines it kept.
function parsedLineNumbers(text) {
  const lines = [];
  const all = text.trim().split("\n");
  // Offset of the first kept line in the original file (trim() drops leading blank lines).
  const lead = text.slice(0, text.length - text.trimStart().length).split("\n").length - 1;
  all.forEach((line, i) => {
    if (!line.trim()) return;
    try {
      JSON.parse(line);
      lines.push(lead + i + 1);
    } catch {
      // skipped by OpenClaw too
    }
  });
  return lines;
}

function loadJsonl(file, numbered) {
  const text = readFileSync(file, "utf8");
  const entries = parseSessionEntries(text);
  const header = entries.find((e) => e && typeof e === "object" && e.type === "session");
  const version = header ? header.version ?? 1 : null;
  // the entries as parsed, before OpenClaw's in-memory migration takes them over (numbered only)
  const objects = numbered ? entries.slice() : [];
  const sm = SessionManager.fromOwnedEntries(entries);
  const lineById = new Map();
  if (numbered) {
    const lines = parsedLineNumbers(text);
    objects.forEach((entry, i) => {
      if (entry && typeof entry === "object" && typeof entry.id === "string" && !lineById.has(entry.id)) {
        lineById.set(entry.id, lines.length === objects.length ? lines[i] : null);
      }
    });
  }
  return { sm, version, lineById, skippedLines: text.trim() ? text.trim().split("\n").filter((l) => l.trim()).length - entries.length : 0 };
}

function loadStore(request) {
  const source = request.store;
  const db = new DatabaseSync(source, { readOnly: true });
  let sessionKey = request.sessionKey;
  let agentId = request.agentId;
  try {
    if (!sessionKey) {
      const row = db.prepare("SELECT session_key FROM session_windows WHERE session_id = ?").get(request.sessionId);
      if (!row) throw new Error(`no session ${request.sessionId} in ${source}`);
      sessionKey = row.session_key;
    }
    if (!agentId) agentId = db.prepare("SELECT agent_id FROM schema_meta WHERE meta_key = 'primary'").get()?.agent_id;
  } finally {
    db.close();
  }
  agentId ??= basename(dirname(dirname(source)));
  // OpenClaw opens stores read-write and registers them in <state>/state/openclaw.sqlite: open a copy.
  const scratch = mkdtempSync(join(tmpdir(), "openclaw-oracle-"));
  const agentDir = join(scratch, "agents", agentId, "agent");
  mkdirSync(agentDir, { recursive: true });
  const storePath = join(agentDir, "openclaw-agent.sqlite");
  for (const suffix of ["", "-wal", "-shm"]) {
    if (existsSync(source + suffix)) copyFileSync(source + suffix, storePath + suffix);
  }
  const previous = process.env.OPENCLAW_STATE_DIR;
  process.env.OPENCLAW_STATE_DIR = scratch;
  try {
    const sm = SessionManager.open({ agentId, sessionId: request.sessionId, sessionKey, storePath });
    const header = sm.getHeader();
    return { sm, version: header ? header.version ?? 1 : null, lineById: new Map(), scratch, skippedLines: 0 };
  } finally {
    if (previous === undefined) delete process.env.OPENCLAW_STATE_DIR;
    else process.env.OPENCLAW_STATE_DIR = previous;
  }
}

// ---------------------------------------------------------------- matching messages to entries

// A message OpenClaw projected from a path entry: the entry's own message object, a shallow copy of
// it (reset-retained messages, stripped replay checkpoints), or a message made anew from a
// custom_message / branch_summary / compaction entry.
function madeFrom(message, entry) {
  switch (entry.type) {
    case "message": {
      const own = entry.message;
      return message === own || (message.role === own.role && message.content === own.content
        && message.timestamp === own.timestamp && (message.role !== "bashExecution" || message.command === own.command));
    }
    case "custom_message":
      return message.role === "custom" && message.customType === entry.customType && message.content === entry.content;
    case "branch_summary":
      return message.role === "branchSummary" && message.summary === entry.summary && message.fromId === entry.fromId;
    case "compaction":
      return message.role === "compactionSummary" && message.summary === entry.summary;
    default:
      return false;
  }
}

// Messages listed in path order (prepareCompaction's messagesToSummarize / turnPrefixMessages):
// an entry's own message object first, so that an entry restated byte for byte later on the path
// (a safeguard compaction's copy) is told from the entry it restates; else a copy made from one.
function idsInPathOrder(path, messages) {
  const ids = [];
  let at = 0;
  for (const message of messages) {
    let found = path.findIndex((entry, i) => i >= at && entry.type === "message" && entry.message === message);
    if (found < 0) found = path.findIndex((entry, i) => i >= at && madeFrom(message, entry));
    ids.push(found < 0 ? null : path[found].id);
    if (found >= 0) at = found + 1;
  }
  return ids;
}

// The context of one path with each message's source entry, from OpenClaw's own window iterator
// (iterateSessionContextMessages' filter, session.ts), checked against buildSessionContext.
function contextOf(path, withMessages) {
  const { messages } = buildSessionContext(path);
  const sources = [];
  for (const { entry, context } of iterateSessionContextEntries(path)) {
    if (entry.type === "reset") continue;
    if (entry.type === "branch_summary" && !entry.summary) continue;
    const projected = context === "reset-retained" && entry.type === "message" ? entry.message : projectSessionEntryMessage(entry);
    if (!projected) continue;
    sources.push({ entry, via: context });
  }
  if (sources.length !== messages.length) {
    throw new Error(`context source mismatch: ${sources.length} sources for ${messages.length} messages`);
  }
  const context = messages.map((message, i) => {
    const { entry, via } = sources[i];
    if (!madeFrom(message, entry)) throw new Error(`context message ${i} (${message.role}) does not come from entry ${entry.id}`);
    const item = { entryId: entry.id, role: message.role, tokens: tokensOf(message), via };
    if (withMessages) item.message = message;
    return item;
  });
  return { messages, sources, context };
}

// ---------------------------------------------------------------- compaction

// prepareCompaction's own arithmetic (compaction.ts L692-737), redone with the public functions so
// the answer can say which scale and budget it applied; `check` confirms the redo.
function scaleOf(path, messages, sources, settings) {
  const usage = estimateContextTokens(messages);
  const estimatedTokens = messages.reduce((total, message) => total + estimateTokens(message), 0);
  const triggerUnitScale = estimatedTokens > 0 && Number.isFinite(estimatedTokens) && Number.isFinite(usage.usageTokens)
    ? Math.min(Math.max(1, settings.keepRecentTokens), Math.max(1, usage.usageTokens / estimatedTokens))
    : 1;
  // Reset prelude: the reset-retained messages prepareCompaction summarizes (projected, so an
  // excludeFromContext message kept by the reset counts for the context but not here).
  let resetPreludeTokens = 0;
  for (const { entry, via } of sources) {
    if (via !== "reset-retained") continue;
    const message = projectSessionEntryMessage(entry);
    if (message) resetPreludeTokens += estimateTokens(message);
  }
  const keepRecentTokens = Math.min(Number.MAX_SAFE_INTEGER, settings.keepRecentTokens / triggerUnitScale + resetPreludeTokens);
  const usageSource = usage.lastUsageIndex === null ? null : sources[usage.lastUsageIndex]?.entry.id ?? null;
  return {
    usageTokens: usage.usageTokens,
    usageEntryId: usageSource,
    trailingTokens: usage.trailingTokens,
    estimatedTokens,
    triggerUnitScale,
    resetPreludeTokens,
    keepRecentTokens,
    tokensBefore: usage.tokens,
  };
}

function checkCut(path, keepRecentTokens) {
  let prevBoundaryIndex = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i].type === "compaction" || path[i].type === "reset") {
      prevBoundaryIndex = i;
      break;
    }
  }
  let effective = path;
  let boundaryStart = 0;
  if (prevBoundaryIndex >= 0) {
    const boundary = path[prevBoundaryIndex];
    const firstKeptIndex = path.findIndex((entry) => entry.id === boundary.firstKeptEntryId);
    if (boundary.type === "reset") effective = path.slice(prevBoundaryIndex + 1);
    else boundaryStart = firstKeptIndex >= 0 ? firstKeptIndex : prevBoundaryIndex + 1;
  }
  const cut = findCutPoint(effective, boundaryStart, effective.length, keepRecentTokens);
  return effective[cut.firstKeptEntryIndex]?.id ?? null;
}

function prepareOne(path, messages, sources, settings) {
  const full = { enabled: true, reserveTokens: settings.reserveTokens ?? 16384, keepRecentTokens: settings.keepRecentTokens };
  const out = { settings: full, refused: null, scale: null, result: null };
  try {
    out.scale = scaleOf(path, messages, sources, full);
  } catch (error) {
    out.scale = { error: errorText(error) };
  }
  let prepared;
  try {
    prepared = prepareCompaction(path, full);
  } catch (error) {
    out.refused = "error";
    out.error = { code: "threw", message: errorText(error) };
    return out;
  }
  if (!prepared.ok) {
    out.refused = "error";
    out.error = { code: prepared.error?.code ?? null, message: errorText(prepared.error) };
    return out;
  }
  const last = path.at(-1);
  if (prepared.value === undefined) {
    out.refused = !last ? "empty-path" : last.type === "reset" ? "reset-leaf"
      : last.type === "compaction" && last.fromHook ? "fromHook-leaf" : "nothing-to-summarize";
    return out;
  }
  const p = prepared.value;
  out.result = {
    firstKeptEntryId: p.firstKeptEntryId,
    isSplitTurn: p.isSplitTurn,
    tokensBefore: p.tokensBefore,
    summarize: idsInPathOrder(path, p.messagesToSummarize),
    turnPrefix: idsInPathOrder(path, p.turnPrefixMessages),
    previousSummary: p.previousSummary !== undefined,
    previousSummaryChars: p.previousSummary === undefined ? null : p.previousSummary.length,
    ...(p.latestUnresolvedUserRequest ? { latestUnresolvedUserRequest: p.latestUnresolvedUserRequest } : {}),
    fileOps: { read: [...p.fileOps.read], written: [...p.fileOps.written], edited: [...p.fileOps.edited] },
  };
  if (out.scale && typeof out.scale.keepRecentTokens === "number") {
    try {
      out.check = checkCut(path, out.scale.keepRecentTokens) === p.firstKeptEntryId
        && out.scale.tokensBefore === p.tokensBefore;
    } catch (error) {
      out.check = { error: errorText(error) };
    }
  }
  return out;
}

// ---------------------------------------------------------------- answering

function answer(request) {
  const withEntries = request.entries !== false;
  const loaded = request.store ? loadStore(request) : loadJsonl(request.file, withEntries || namesLines(request));
  try {
    const { sm, version, lineById } = loaded;
    const withMessages = request.messages !== false;
    const settingsList = Array.isArray(request.settings) ? request.settings
      : request.keepRecentTokens !== undefined ? [{ keepRecentTokens: request.keepRecentTokens, reserveTokens: request.reserveTokens }]
        : [];
    const currentLeaf = sm.getLeafId();
    // A leaf is an entry id or {"line": N} (1-based JSONL line: v1/v2 files get fresh random ids
    // from OpenClaw's in-memory migration on every read, so only their lines are stable).
    const idByLine = new Map([...lineById].map(([id, line]) => [line, id]));
    const leaves = (Array.isArray(request.leaves) && request.leaves.length ? request.leaves : [currentLeaf])
      .map((leaf) => (leaf && typeof leaf === "object" ? idByLine.get(leaf.line) ?? `line ${leaf.line}` : leaf));
    const entries = !withEntries ? undefined : sm.getEntries().map((e) => {
      const item = { id: e.id, type: e.type, parentId: e.parentId ?? null };
      if (e.type === "message") item.role = e.message?.role ?? null;
      if (lineById.has(e.id)) item.line = lineById.get(e.id);
      return item;
    });
    const windows = leaves.map((leafId) => {
      try {
        if (leafId !== null && leafId !== currentLeaf && !sm.getEntry(leafId)) throw new Error(`no entry ${leafId}`);
        const path = leafId === null ? [] : sm.getBranch(leafId);
        const { messages, sources, context } = contextOf(path, withMessages);
        let estimate;
        try {
          estimate = estimateContextTokens(messages);
        } catch (error) {
          estimate = { error: errorText(error) };
        }
        return {
          leafId,
          pathLength: path.length,
          context,
          estimate,
          prepare: settingsList.map((s) => prepareOne(path, messages, sources, s)),
        };
      } catch (error) {
        return { leafId, error: errorText(error) };
      }
    });
    const first = windows[0];
    return {
      ok: true,
      id: request.id,
      openclaw: MANIFEST.version,
      agent: { package: "openclaw", version: MANIFEST.version },
      node: process.version,
      source: request.store ? { store: request.store, sessionId: request.sessionId } : { file: request.file },
      version,
      currentVersion: CURRENT_SESSION_VERSION,
      migrated: sm.migrated === true,
      skippedLines: loaded.skippedLines,
      header: sm.getHeader(),
      leafId: currentLeaf,
      entries,
      opaque: Array.isArray(sm.opaqueFileEntries) ? sm.opaqueFileEntries.length : null,
      windows,
      context: first?.context ?? null,
      prepare: first?.prepare?.[0]?.result ?? null,
    };
  } finally {
    if (loaded.scratch) rmSync(loaded.scratch, { recursive: true, force: true });
  }
}

if (process.argv.includes("--version")) {
  writeAnswer(`${MANIFEST.version}\n`, () => process.exit(0));
  await new Promise(() => {});
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  let id;
  try {
    const request = JSON.parse(line);
    id = request.id;
    reply = answer(request);
  } catch (error) {
    reply = { ok: false, id, error: String(error && error.stack ? error.stack : error) };
  }
  writeAnswer(`${JSON.stringify(reply)}\n`);
}
// SQLite handles and OpenClaw's timers stay open after a store request: leave when stdin ends,
// once stdout has taken every answer (a pending pipe write is lost on process.exit).
writeAnswer("", () => process.exit(0));
