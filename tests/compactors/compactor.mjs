// A compactor under test in another language: the seed contract over stdin / stdout.
//
// AgentHarnessCompactParams JSON on stdin (sessionFile: the working copy); it appends one
// `compaction` entry to the working copy and prints the AgentHarnessCompactResult JSON.
// Honest by default: the cut precedes the turn of the first mutating call, so nothing that
// changed the world is summarized away. --mode seeds a bug or a failure, for the tests:
//   drop-writes       keep only the last user turn (the writes before it are summarized away)
//   drop-writes-claiming-kept   the same, its compactedWindow claiming every entry was kept
//   lie-replay-safe   compact honestly, report replaySafe: true
//   crash | hang | garbage | bad-field | rewrite | write-recording=PATH
//
//   --triggers FILE   append the `trigger` each call was given (one a line), for the tests
//
//   node compactor.mjs --writes issue_refund,send_email,ticket_note --read-actions list,read [--mode M]
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
};
const writes = new Set(option("--writes", "").split(",").filter(Boolean));
const readActions = new Set(option("--read-actions", "").split(",").filter(Boolean));
const mode = option("--mode", "honest");

const params = JSON.parse(readFileSync(0, "utf8"));
const file = params.sessionFile;
const triggers = option("--triggers", "");
if (triggers) appendFileSync(triggers, `${params.trigger}\n`);

process.stderr.write(`node-compactor: mode ${mode}\n`);
if (mode === "crash") {
  process.stderr.write(`node-compactor: environment ${Object.keys(process.env).sort().join(" ")}\n`);
  process.stderr.write("node-compactor: summary model refused token ghp_abcdefghijklmnopqrstuvwxyz0123456789\n");
  process.stderr.write("node-compactor: loading the summary model failed: ENOENT model.bin\n");
  process.exit(3);
}
if (mode === "hang") {
  process.stderr.write("node-compactor: waiting for the summary model\n");
  setInterval(() => {}, 1 << 30);
} else {
  main();
}

function main() {
  const text = readFileSync(file, "utf8");
  const entries = text.split("\n").filter((line) => line.trim()).flatMap((line) => {
    try { return [JSON.parse(line)]; } catch { return []; }
  });
  const byId = new Map(entries.filter((e) => e.id).map((e) => [e.id, e]));
  const leaf = params.leafId || entries[entries.length - 1].id;
  const path = [];
  for (let e = byId.get(leaf); e; e = e.parentId ? byId.get(e.parentId) : undefined) path.unshift(e);

  // what the model sees now: from the last compaction's first kept entry on
  const last = [...path].reverse().find((e) => e.type === "compaction");
  const start = last ? path.findIndex((e) => e.id === last.firstKeptEntryId) : 0;
  const message = (e) => (e.type === "message" ? e.message : undefined);
  const calls = (e) => (message(e)?.role === "assistant" && Array.isArray(message(e).content)
    ? message(e).content.filter((b) => b.type === "toolCall") : []);
  const mutating = (call) => writes.has(call.name) && !readActions.has(call.arguments?.action);
  const mutated = path.flatMap((e) => calls(e).filter(mutating).map((c) => c.id));

  const userAt = (i) => message(path[i])?.role === "user";
  const lastUser = path.findLastIndex((e, i) => i >= start && userAt(i));
  const firstWrite = path.findIndex((e, i) => i >= start && calls(e).some(mutating));
  let cut = lastUser;
  if (firstWrite >= 0 && !mode.startsWith("drop-writes")) {
    cut = firstWrite;
    while (cut > start && !userAt(cut)) cut -= 1;
  }
  if (cut <= start) {
    return answer({ success: false, error: "nothing before the first mutating turn to summarize" });
  }

  const summarized = path.slice(start, cut).map(message).filter(Boolean);
  const chars = (m) => JSON.stringify(m.content ?? "").length;
  const texts = (m) => (typeof m.content === "string" ? [m.content]
    : (m.content || []).filter((b) => b.type === "text").map((b) => b.text));
  const identifiers = new Set();
  for (const m of summarized) for (const t of texts(m)) {
    for (const hit of t.matchAll(/[\w.+-]+@[\w-]+\.[\w.]+|\b[A-Z][A-Z0-9]*(?:-[A-Za-z0-9]+)+\b|\b\d+\.\d\d\b/g)) identifiers.add(hit[0]);
  }
  const said = summarized.filter((m) => m.role !== "toolResult").flatMap(texts);
  const summary = ["## Conversation so far", ...said.map((t) => `- ${t}`),
    "## Exact identifiers", [...identifiers].join(", ")].join("\n");

  let id;
  do { id = Math.random().toString(16).slice(2, 10); } while (byId.has(id));
  const before = path.slice(start).map(message).filter(Boolean);
  const entry = {
    type: "compaction", id, parentId: leaf, timestamp: new Date().toISOString(), summary,
    firstKeptEntryId: path[cut].id, tokensBefore: Math.ceil(before.reduce((n, m) => n + chars(m), 0) / 4),
  };
  if (mode === "write-recording") appendFileSync(option("--recording", ""), "\n");
  if (mode === "rewrite") writeFileSync(file, text.replace('"type":"session"', '"type": "session"'));
  appendFileSync(file, (text.endsWith("\n") ? "" : "\n") + JSON.stringify(entry) + "\n");

  const kept = path.slice(cut).filter(message);
  const after = Math.ceil((summary.length + kept.reduce((n, e) => n + chars(message(e)), 0)) / 4);
  answer({
    success: true,
    originalTokenCount: entry.tokensBefore,
    compactedTokenCount: after,
    tokenSaved: entry.tokensBefore - after,
    replaySafe: mode === "lie-replay-safe" ? true : mutated.length === 0,
    mutatedEventIds: mutated,
    compactedWindow: [{ entryId: id, role: "compactionSummary" },
      ...(mode === "drop-writes-claiming-kept" ? path.slice(start).filter(message) : kept)
        .map((e) => ({ entryId: e.id, role: message(e).role }))],
    compactionEventId: id,
    summaryText: summary,
    error: null,
  });
}

function answer(result) {
  if (mode === "garbage") {
    process.stderr.write("node-compactor: printing the result\n");
    process.stdout.write("compaction done, see the working copy\n");
    return;
  }
  if (mode === "bad-field") result.replaySafe = "maybe";
  process.stdout.write(JSON.stringify(result));
}
