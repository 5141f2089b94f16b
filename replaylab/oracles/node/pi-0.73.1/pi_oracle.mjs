// The pi oracle: what the real pi (the version pinned in package-lock.json) makes of a transcript.
//
// replaylab's guarantees are only worth something where the agent runs, and pi rebuilds its
// context with its own code. This program asks pi itself, through its public modules:
//
//   SessionManager.open   parse, migrate v1/v2 (on a scratch copy: pi rewrites a migrated file),
//                         pick the leaf
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

import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

// pi's own modules, by file: `prepareCompaction` is not in the package's exports map.
const PI = "./node_modules/@mariozechner/pi-coding-agent/dist/core";
const { estimateTokens, prepareCompaction } = await import(`${PI}/compaction/compaction.js`);
const { SessionManager } = await import(`${PI}/session-manager.js`);

const PI_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@mariozechner/pi-coding-agent/package.json", import.meta.url), "utf8"),
).version;

// The entry a context message came from. Message entries give their own message object;
// custom messages, branch summaries and the compaction summary are made anew by pi, so they are
// matched to the path entries of their kind in path order.
function sourceIds(path, messages) {
  const byMessage = new Map();
  const made = { custom: [], branchSummary: [], compactionSummary: [] };
  for (const entry of path) {
    if (entry.type === "message") byMessage.set(entry.message, entry.id);
    else if (entry.type === "custom_message") made.custom.push(entry.id);
    else if (entry.type === "branch_summary") made.branchSummary.push(entry.id);
    else if (entry.type === "compaction") made.compactionSummary.push(entry.id);
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

function answer(request) {
  const scratch = mkdtempSync(join(tmpdir(), "pi-oracle-"));
  try {
    const copy = join(scratch, "session.jsonl");
    copyFileSync(request.file, copy);
    const before = readFileSync(copy, "utf8");
    const firstLine = before.split("\n", 1)[0];
    let version = null;
    try {
      version = JSON.parse(firstLine).version ?? 1;
    } catch {
      version = null;
    }
    const sm = SessionManager.open(copy, scratch);
    const migrated = readFileSync(copy, "utf8") !== before;
    const path = sm.getBranch();
    const { messages } = sm.buildSessionContext();
    const ids = sourceIds(path, messages);
    const context = messages.map((message, i) => ({
      entryId: ids[i],
      role: message.role,
      tokens: tokensOf(message),
      message,
    }));
    let prepare = null;
    if (request.keepRecentTokens !== undefined) {
      const settings = {
        enabled: true,
        reserveTokens: request.reserveTokens ?? 16384,
        keepRecentTokens: request.keepRecentTokens,
      };
      const prepared = prepareCompaction(path, settings);
      if (prepared) {
        prepare = {
          firstKeptEntryId: prepared.firstKeptEntryId,
          isSplitTurn: prepared.isSplitTurn,
          tokensBefore: prepared.tokensBefore,
          summarize: entryOfMessageIds(path, prepared.messagesToSummarize),
          turnPrefix: entryOfMessageIds(path, prepared.turnPrefixMessages),
          previousSummary: prepared.previousSummary !== undefined,
        };
      }
    }
    return {
      ok: true,
      pi: PI_VERSION,
      version,
      migrated,
      leafId: sm.getLeafId(),
      entries: sm.getEntries().map((e) => ({ id: e.id, type: e.type, parentId: e.parentId ?? null })),
      context,
      prepare,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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
