// The pi oracle: what the real pi (the version pinned in package-lock.json) makes of a transcript.
//
// replaylab's guarantees are only worth something where the agent runs, and pi rebuilds its
// context with its own code. This program asks pi itself, through its public modules:
//
//   SessionManager        parse, migrate v1/v2, pick the leaf: what `SessionManager.open` does,
//                         with pi's writes off (below), so the file is read where it is
//   buildSessionContext   the messages pi sends to the model
//   estimateTokens        pi's per-message token estimate
//   prepareCompaction     pi's cut point for a compaction of the current leaf
//
// Protocol: one JSON request per stdin line, one JSON answer per stdout line, in order, so one
// node process answers a whole test run. A request:
//   {"file": "/path/x.jsonl", "keepRecentTokens": 20000, "reserveTokens": 16384}
// (the two settings only matter for `prepare`). The answer:
//   {"ok": true, "version": <header version before migration>, "migrated": bool,
//    "leafId": "...", "entries": [{"id", "type", "parentId"}...],
//    "context": [{"entryId", "role", "tokens", "message"}...],
//    "prepare": null | {"firstKeptEntryId", "isSplitTurn", "tokensBefore",
//                       "summarize": [entry ids], "turnPrefix": [entry ids], "previousSummary": bool}}
// or {"ok": false, "error": "..."} when pi throws.
//
// The same program speaks replaylab's window protocol (replaylab/oracles/agent.py), which every
// pinned agent's oracle answers: a request may add
//   "leaves": [entryId | {"line": N}, ...]   windows at these leaves (default: the current leaf;
//                                a v1 file's entries get fresh random ids: name them by file line)
//   "settings": [{keepRecentTokens, reserveTokens}, ...]   a cut per leaf and setting
//   "messages": false            leave the message bodies out
//   "entries": false             leave "entries" out (and number no lines but a leaf's)
// and the answer then holds "agent": {"package", "version"} and
//   "windows": [{"leafId", "context": [...], "prepare": [{"settings", "refused", "result"}]}]
// where "refused" is null or why prepareCompaction returned nothing ("already-compacted"), in
// place of "context" and "prepare" (each answer builds only the contexts it was asked for: a
// context carries every message, and the largest sessions' run to megabytes).

import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { entryLines, namesLines } from "../entry_lines.mjs";

// pi's own modules, by file: `prepareCompaction` is not in the package's exports map.
const PI = "./node_modules/@mariozechner/pi-coding-agent/dist/core";
const { estimateTokens, prepareCompaction } = await import(`${PI}/compaction/compaction.js`);
const { SessionManager, buildSessionContext } = await import(`${PI}/session-manager.js`);

// `SessionManager.open(path)` is pi's `loadEntriesFromFile` (for the header's cwd) and then
// `new SessionManager(cwd, dir, path, true)`, whose load rewrites the file when it migrated it (or
// found no session in it), through `_rewriteFile`, pi's only write on that path. The oracle builds
// the same manager with persistence off, so pi writes nothing and no scratch copy is needed (a
// copy, its re-read and its removal were half of a request), and records where pi would have
// rewritten the file: that is the answer's "migrated". Checked on pi's own code at start, so a
// pi that loads or writes otherwise stops the oracle instead of answering wrongly.
class Loaded extends SessionManager {
  _rewriteFile() {
    this.rewritten = true; // no field initializer: the base constructor calls this before one would run
  }
}
for (const [where, code, expected] of [
  ["SessionManager.open", SessionManager.open.toString(), "new SessionManager(cwd, dir, path, true)"],
  ["setSessionFile", SessionManager.prototype.setSessionFile.toString(), "this._rewriteFile()"],
  ["_rewriteFile", SessionManager.prototype._rewriteFile.toString(), "if (!this.persist"],
]) {
  if (!code.includes(expected)) throw new Error(`pi's ${where} no longer holds \`${expected}\`: the oracle cannot load as pi does`);
}

function loaded(file, header) {
  const cwd = header && typeof header.cwd === "string" ? header.cwd : process.cwd(); // as `open` takes it; nothing answered reads it
  return new Loaded(cwd, dirname(file), file, false);
}

const PI_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@mariozechner/pi-coding-agent/package.json", import.meta.url), "utf8"),
).version;

// The entry a context message came from. Message entries give their own message object;
// custom messages, branch summaries and the compaction summary are made anew by pi, so they are
// matched, in path order, to the entries of their kind that pi shows: after the latest compaction
// its kept range and what follows it (an entry the compaction summarized shows nothing, and a
// compaction may restate an earlier entry after itself).
function sourceIds(path, messages) {
  const byMessage = new Map();
  for (const entry of path) if (entry.type === "message") byMessage.set(entry.message, entry.id);
  const made = { custom: [], branchSummary: [], compactionSummary: [] };
  const compactionAt = path.findLastIndex((entry) => entry.type === "compaction");
  let shown = path;
  if (compactionAt >= 0) {
    const compaction = path[compactionAt];
    made.compactionSummary.push(compaction.id);
    const keptAt = path.slice(0, compactionAt).findIndex((entry) => entry.id === compaction.firstKeptEntryId);
    shown = [...path.slice(keptAt >= 0 ? keptAt : compactionAt, compactionAt), ...path.slice(compactionAt + 1)];
  }
  for (const entry of shown) {
    if (entry.type === "custom_message") made.custom.push(entry.id);
    else if (entry.type === "branch_summary" && entry.summary) made.branchSummary.push(entry.id);
  }
  const latestCompaction = made.compactionSummary.at(-1) ?? null;
  return messages.map((message) => {
    if (byMessage.has(message)) return byMessage.get(message);
    if (message.role === "compactionSummary") return latestCompaction;
    const queue = made[message.role];
    return queue && queue.length ? queue.shift() : null;
  });
}

function entryOfMessageIds(path, messages) {
  const byMessage = new Map();
  for (const entry of path) if (entry.type === "message") byMessage.set(entry.message, entry.id);
  return messages.map((m) => byMessage.get(m) ?? null);
}

function tokensOf(message) {
  try {
    return estimateTokens(message);
  } catch (error) {
    return { error: String(error && error.message ? error.message : error) };
  }
}

function prepareAt(path, settings) {
  const full = { enabled: true, reserveTokens: settings.reserveTokens ?? 16384, keepRecentTokens: settings.keepRecentTokens };
  const prepared = prepareCompaction(path, full);
  if (!prepared) {
    const last = path.at(-1);
    return { settings: full, refused: !last ? "empty-path" : last.type === "compaction" ? "already-compacted" : "nothing", result: null };
  }
  return {
    settings: full,
    refused: null,
    result: {
      firstKeptEntryId: prepared.firstKeptEntryId,
      isSplitTurn: prepared.isSplitTurn,
      tokensBefore: prepared.tokensBefore,
      summarize: entryOfMessageIds(path, prepared.messagesToSummarize),
      turnPrefix: entryOfMessageIds(path, prepared.turnPrefixMessages),
      previousSummary: prepared.previousSummary !== undefined,
    },
  };
}

function windowAt(sm, leafId, settingsList, withMessages) {
  try {
    if (leafId !== null && !sm.getEntry(leafId)) throw new Error(`no entry ${leafId}`);
    const path = leafId === null ? [] : sm.getBranch(leafId);
    const { messages } = buildSessionContext(sm.getEntries(), leafId, new Map(sm.getEntries().map((e) => [e.id, e])));
    const ids = sourceIds(path, messages);
    const context = messages.map((message, i) => {
      const item = { entryId: ids[i], role: message.role, tokens: tokensOf(message) };
      if (withMessages) item.message = message;
      return item;
    });
    return { leafId, pathLength: path.length, context, prepare: settingsList.map((s) => prepareAt(path, s)) };
  } catch (error) {
    return { leafId, error: String(error && error.message ? error.message : error) };
  }
}

function answer(request) {
  const before = readFileSync(request.file, "utf8");
  let header = null;
  try {
    header = JSON.parse(before.split("\n", 1)[0]);
  } catch {
    // no header line pi would read: `version` null, the cwd this process's
  }
  const version = header === null ? null : header.version ?? 1;
  const sm = loaded(request.file, header);
  const migrated = sm.rewritten === true;
  const all = sm.getEntries();
  const withEntries = request.entries !== false;
  const lines = withEntries || namesLines(request) ? entryLines(before) : [];
  const lineOf = lines.length === all.length ? new Map(all.map((e, i) => [e.id, lines[i]])) : new Map();
  const reply = {
    ok: true,
    pi: PI_VERSION,
    agent: { package: "@mariozechner/pi-coding-agent", version: PI_VERSION },
    version,
    migrated,
    leafId: sm.getLeafId(),
  };
  if (withEntries) {
    reply.entries = all.map((e) => ({ id: e.id, type: e.type, parentId: e.parentId ?? null, line: lineOf.get(e.id) ?? null }));
  }
  if (["leaves", "settings", "messages", "entries"].some((key) => key in request)) {
    const settingsList = Array.isArray(request.settings) ? request.settings : [];
    const idOfLine = new Map([...lineOf].map(([id, line]) => [line, id]));
    const leaves = (Array.isArray(request.leaves) && request.leaves.length ? request.leaves : [sm.getLeafId()])
      .map((leaf) => (leaf && typeof leaf === "object" ? idOfLine.get(leaf.line) ?? `line ${leaf.line}` : leaf));
    const withMessages = request.messages !== false;
    reply.windows = leaves.map((leaf) => windowAt(sm, leaf, settingsList, withMessages));
    return reply;
  }
  const path = sm.getBranch();
  const { messages } = sm.buildSessionContext();
  const ids = sourceIds(path, messages);
  reply.context = messages.map((message, i) => ({
    entryId: ids[i],
    role: message.role,
    tokens: tokensOf(message),
    message,
  }));
  reply.prepare = request.keepRecentTokens !== undefined
    ? prepareAt(path, { keepRecentTokens: request.keepRecentTokens, reserveTokens: request.reserveTokens }).result
    : null;
  return reply;
}

if (process.argv.includes("--version")) {
  process.stdout.write(`${PI_VERSION}\n`);
  process.exit(0);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  try {
    reply = answer(JSON.parse(line));
  } catch (error) {
    reply = { ok: false, error: String(error && error.stack ? error.stack : error) };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
