// The pi 1.6.0 oracle: what the real pi 1.6.0 (`@earendil-works/pi-coding-agent`, the version
// pinned in package-lock.json) makes of a transcript, asked of pi itself through its own modules:
//
//   SessionManager.open      parse, migrate v1/v2, pick the file's leaf (on a scratch copy: pi
//                            rewrites a migrated file, and appends a missing final newline)
//   buildSessionProjection   the messages pi sends to the model, each with its source entry (pi
//                            keeps the provenance itself: a compaction yields its stored system
//                            message and its summary, both named by the compaction)
//   estimateTokens           pi's per-message token estimate
//   estimateProjectedContextTokens   pi's context size (its compaction trigger and tokensBefore)
//   prepareCompaction        pi's cut of a compaction at a leaf
//
// Protocol: replaylab's window protocol (replaylab/oracles/agent.py), one JSON request per stdin
// line, one JSON answer per stdout line, in order:
//   {"file": "/abs/x.jsonl", "leaves": [entryId | {"line": N}, ...]?,
//    "settings": [{"keepRecentTokens", "reserveTokens"?}, ...]?, "messages": false?,
//    "entries": false? (leave "entries" out, and number no lines but a leaf's)}
// answers
//   {"ok": true, "agent": {"package", "version"}, "version" (the header's, before migration),
//    "migrated" (pi rewrote the file beyond appending its final newline), "newlineAppended",
//    "leafId", "entries": [{"id", "type", "parentId", "line"}],
//    "windows": [{"leafId", "context": [{"entryId", "role", "tokens", "message"?}],
//                 "estimate": estimateProjectedContextTokens,
//                 "prepare": [{"settings", "refused", "result": null | {"firstKeptEntryId",
//                              "isSplitTurn", "tokensBefore", "summarize", "turnPrefix",
//                              "previousSummary"}}]}]}
// or {"ok": false, "error": "..."}. "refused": null, "already-compacted" (the leaf is a
// compaction), "nothing-to-summarize" (#4811: the cut would summarize no message), "no-entries",
// or "error" with "error": {"message"} when pi throws. A v1 file's entries get fresh ids from pi's
// migration (randomUUID, drawn here from a hash of the file's bytes: the same ids every run):
// name its leaves by file line.

import crypto, { createHash } from "node:crypto";
import { copyFileSync, readFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { entryLines, namesLines } from "../entry_lines.mjs";
import { emptied, scratchFolder } from "../scratch_folder.mjs";

let seed = "pi-oracle";
let drawn = 0;
crypto.randomUUID = () => {
  const h = createHash("sha256").update(`${seed}:${drawn++}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
syncBuiltinESMExports();

// pi's own modules, by file: `prepareCompaction` and the projection are not in the exports map.
const PACKAGE = "@earendil-works/pi-coding-agent";
const PKG = new URL(`./node_modules/${PACKAGE}/`, import.meta.url);
const PI = new URL("dist/core/", PKG);
const { estimateTokens, estimateProjectedContextTokens, prepareCompaction } = await import(
  new URL("compaction/compaction.js", PI).href
);
const { SessionManager, buildSessionProjection } = await import(new URL("session-manager.js", PI).href);

const PI_VERSION = JSON.parse(readFileSync(new URL("package.json", PKG), "utf8")).version;
const DEFAULT_RESERVE = 16384;

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

// The context of one leaf: pi's projection, message by message, with its source entries.
function contextOf(projection, withMessages) {
  const context = [];
  for (const { sourceEntry, messages } of projection.entries) {
    for (const message of messages) {
      const item = { entryId: sourceEntry.id ?? null, role: message.role, tokens: tokensOf(message) };
      if (withMessages) item.message = message;
      context.push(item);
    }
  }
  return context;
}

// prepareCompaction summarizes the messages of its own projection of the path: the projected
// entries after the newest compaction, compaction entries and system messages left out, in order;
// messagesToSummarize are the first of them and turnPrefixMessages follow at once. The alignment
// is checked message by message (a message entry's own object, or the same JSON for the messages
// pi makes anew on each projection).
function sourcesOf(projection, prepared) {
  const entries = projection.entries;
  const previous = entries.findIndex((e) => e.sourceEntry.type === "compaction" && e.messages.length > 0);
  const flat = [];
  for (const { sourceEntry, messages } of entries.slice(previous + 1)) {
    if (sourceEntry.type === "compaction") continue;
    for (const message of messages) if (message.role !== "system") flat.push({ sourceEntry, message });
  }
  const ours = [...prepared.messagesToSummarize, ...prepared.turnPrefixMessages];
  ours.forEach((message, i) => {
    const slot = flat[i];
    const same = slot && slot.message.role === message.role
      && (slot.message === message || JSON.stringify(slot.message) === JSON.stringify(message));
    if (!same) throw new Error(`summarized message ${i} (${message.role}) is not the projection's message ${i}`);
  });
  const ids = flat.slice(0, ours.length).map((slot) => slot.sourceEntry.id ?? null);
  const n = prepared.messagesToSummarize.length;
  return { summarize: ids.slice(0, n), turnPrefix: ids.slice(n) };
}

function prepareOne(path, projection, settings) {
  const full = { enabled: true, reserveTokens: settings.reserveTokens ?? DEFAULT_RESERVE, keepRecentTokens: settings.keepRecentTokens };
  const out = { settings: full, refused: null, result: null };
  let prepared;
  try {
    prepared = prepareCompaction(path, full);
  } catch (error) {
    out.refused = "error";
    out.error = { message: errorText(error) };
    return out;
  }
  if (!prepared) {
    const last = path.at(-1);
    out.refused = !last || projection.entries.length === 0 ? "no-entries"
      : last.type === "compaction" ? "already-compacted" : "nothing-to-summarize";
    return out;
  }
  out.result = {
    firstKeptEntryId: prepared.firstKeptEntryId,
    isSplitTurn: prepared.isSplitTurn,
    tokensBefore: prepared.tokensBefore,
    ...sourcesOf(projection, prepared),
    previousSummary: prepared.previousSummary !== undefined,
  };
  return out;
}

function windowAt(sm, all, byId, leafId, settingsList, withMessages) {
  try {
    if (leafId !== null && !byId.has(leafId)) throw new Error(`no entry ${leafId}`);
    const path = leafId === null ? [] : sm.getBranch(leafId);
    const projection = buildSessionProjection(all, leafId, byId);
    let estimate;
    try {
      estimate = estimateProjectedContextTokens(projection, path);
    } catch (error) {
      estimate = { error: errorText(error) };
    }
    return {
      leafId,
      pathLength: path.length,
      context: contextOf(projection, withMessages),
      estimate,
      prepare: settingsList.map((s) => prepareOne(path, projection, s)),
    };
  } catch (error) {
    return { leafId, error: errorText(error) };
  }
}

function answer(request) {
  const scratch = scratchFolder("pi16-oracle-");
  try {
    const copy = join(scratch, "session.jsonl");
    copyFileSync(request.file, copy);
    const before = readFileSync(copy);
    seed = createHash("sha256").update(before).digest("hex");
    drawn = 0;
    const text = before.toString("utf8");
    let version = null;
    try {
      version = JSON.parse(text.split("\n", 1)[0]).version ?? 1;
    } catch {
      version = null;
    }
    const sm = SessionManager.open(copy, scratch);
    const after = readFileSync(copy);
    const rewritten = !after.equals(before);
    const newlineAppended = rewritten && after.length === before.length + 1
      && after.subarray(0, before.length).equals(before) && after.at(-1) === 0x0a;
    const all = sm.getEntries();
    const byId = new Map(all.map((e) => [e.id, e]));
    const withEntries = request.entries !== false;
    const lines = withEntries || namesLines(request) ? entryLines(text) : [];
    const lineOf = lines.length === all.length ? new Map(all.map((e, i) => [e.id, lines[i]])) : new Map();
    const idOfLine = new Map([...lineOf].map(([id, line]) => [line, id]));
    const leaves = (Array.isArray(request.leaves) && request.leaves.length ? request.leaves : [sm.getLeafId()])
      .map((leaf) => (leaf && typeof leaf === "object" ? idOfLine.get(leaf.line) ?? `line ${leaf.line}` : leaf));
    const settingsList = Array.isArray(request.settings) ? request.settings : [];
    const withMessages = request.messages !== false;
    return {
      ok: true,
      pi: PI_VERSION,
      agent: { package: PACKAGE, version: PI_VERSION },
      node: process.version,
      version,
      migrated: rewritten && !newlineAppended,
      newlineAppended,
      leafId: sm.getLeafId(),
      ...(withEntries
        ? { entries: all.map((e) => ({ id: e.id, type: e.type, parentId: e.parentId ?? null, line: lineOf.get(e.id) ?? null })) }
        : {}),
      windows: leaves.map((leaf) => windowAt(sm, all, byId, leaf, settingsList, withMessages)),
    };
  } finally {
    emptied(scratch);
  }
}

if (process.argv.includes("--version")) {
  process.stdout.write(`${PI_VERSION}\n`);
  process.exit(0);
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
  if (!line.trim()) continue;
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = { ok: false, error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
