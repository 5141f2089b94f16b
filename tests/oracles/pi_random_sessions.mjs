// Seeded random pi sessions, written by pi's own SessionManager (its append* and branch methods):
// turns with tool calls and results (some unanswered, some orphaned), bashExecution (some `!!`),
// custom messages shown and hidden, labels, model / thinking changes, session info, branches from
// older entries and branch summaries (from the root too), leaf resets, reopened files, compactions
// keeping an entry on the path or elsewhere, and on pi 1.6.0 also retain-none compactions, system
// messages, context edits and usage entries. Text mixes in characters whose UTF-16 length or JSON
// escape differs from their Python length; tool arguments hold numbers JSON.stringify prints its
// own way. A fixed clock and seeded ids: the same seed writes the same bytes.
//   node pi_random_sessions.mjs <pi oracle folder> <npm package> <out dir> <first seed> <count>
// (tests/oracles/test_agent_conformance.py; larger runs: more seeds.)
import crypto, { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

let idSeed = "gen";
let drawn = 0;
crypto.randomUUID = () => {
  const h = createHash("sha256").update(`${idSeed}:${drawn++}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
syncBuiltinESMExports();
const RealDate = Date;
let clock = 0;
class FixedDate extends RealDate {
  constructor(...args) { if (args.length === 0) { clock += 1000; super(clock); } else super(...args); }
  static now() { clock += 1000; return clock; }
}
globalThis.Date = FixedDate;

const [folder, pkg, outArg, firstArg, countArg] = process.argv.slice(2);
const PI = new URL(`node_modules/${pkg}/dist/core/`, pathToFileURL(`${resolve(folder)}/`));
const { SessionManager } = await import(new URL("session-manager.js", PI).href);
// pi 1.6.0 writes what 0.73.1 has no method for
const NEW = typeof SessionManager.prototype.appendContextEdit === "function";
const out = resolve(outArg);
mkdirSync(out, { recursive: true });

function mulberry32(a) {
  return () => { a |= 0; a = (a + 0x6d2b79f5) | 0; let t = Math.imul(a ^ (a >>> 15), 1 | a); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}
let rnd;
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const chance = (p) => rnd() < p;
const ODD = ["é", "😀", "𝔘", "中文", "\u2028", "\t", "\"q\"", "\\", "</x>", "\u0000"];
let oddRate = 0;
const words = (n, tag) => Array.from({ length: n }, (_, i) => (rnd() < oddRate ? pick(ODD) : "") + `${tag}${i % 89}`).join(" ");
function oddArgs() {
  const pool = [1.0, 0.1 + 0.2, 1e21, 1e-7, -0, 123456789012345680000, 5e-324, true, null, "😀 x", { b: 1, a: [1, "é", { z: null }] }, [], {}, "\u2028/"];
  const args = {};
  const n = int(0, 4);
  for (let i = 0; i < n; i++) args[pick(["path", "a", "b", "Zeta", "10", "2"])] = pick(pool);
  return args;
}
const size = () => pick([2, 8, 30, 120, 400, 900]);
const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
function usage() {
  if (chance(0.15)) return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost };
  const input = int(100, 20000), output = int(1, 3000), cacheRead = chance(0.3) ? int(0, 5000) : 0, cacheWrite = chance(0.2) ? int(0, 2000) : 0;
  return { input, output, cacheRead, cacheWrite, totalTokens: chance(0.8) ? input + output + cacheRead + cacheWrite : int(0, 30000), cost };
}
const IMAGE = { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", mimeType: "image/png" };
const TOOLS = ["read", "bash", "edit", "write"];

function user(n) {
  const text = `u${n} ${words(size(), "q")}`;
  const content = chance(0.5) ? text : [{ type: "text", text }, ...(chance(0.3) ? [IMAGE] : [])];
  return { role: "user", content, timestamp: Date.now() };
}
function assistant(calls) {
  const content = [];
  if (chance(0.3)) content.push({ type: "thinking", thinking: words(size(), "th"), ...(chance(0.5) ? { thinkingSignature: "sig" } : {}) });
  if (chance(0.05)) content.push({ type: "text", text: "" });
  if (chance(0.05)) content.push({ type: "thinking", thinking: words(size(), "rd"), redacted: true });
  if (chance(0.8) || calls.length === 0) content.push({ type: "text", text: words(size(), "a") });
  for (const c of calls) content.push({ type: "toolCall", id: c.id, name: c.name, arguments: chance(0.3) ? oddArgs() : { path: `/f/${words(int(1, 30), "p")}` } });
  const stopReason = calls.length ? "toolUse" : pick(["stop", "stop", "stop", "length", "error", "aborted"]);
  if (chance(0.03)) content.length = 0;
  if (chance(0.05)) content.push({ type: pick(["audio", "unknown"]), data: words(int(1, 50), "au") });
  for (const block of content) if (chance(0.05)) block[pick(["textSignature", "thoughtSignature", "extra"])] = pick(["sig", 7, null, { n: 1 }]);
  const msg = { role: "assistant", content, api: "openai-completions", provider: pick(["fx", "fy"]), model: pick(["m1", "m2"]), usage: usage(), stopReason, timestamp: Date.now() };
  if (chance(0.03)) delete msg.usage.totalTokens;
  if (chance(0.02)) delete msg.usage;
  if (chance(0.05)) msg[pick(["responseId", "extra", "api"])] = pick(["r1", 3.5, null, { a: [1] }]);
  if (chance(0.02)) msg.usage && (msg.usage.input = msg.usage.input + 0.5);
  if (stopReason === "error") msg.errorMessage = "boom";
  return msg;
}
function toolResult(c) {
  const content = [{ type: "text", text: words(size(), "r") }];
  if (chance(0.1)) content.push(IMAGE);
  const m = { role: "toolResult", toolCallId: c.id, toolName: c.name, content, isError: chance(0.15), timestamp: Date.now() };
  if (chance(0.1)) m.details = { diff: words(int(1, 40), "d") };
  if (chance(0.03)) m.content = words(size(), "rs");
  return m;
}
function bash() {
  const m = { role: "bashExecution", command: `ls ${words(int(1, 5), "c")}`, output: words(size(), "o"), exitCode: pick([0, 1, undefined]), cancelled: chance(0.1), truncated: chance(0.1), timestamp: Date.now() };
  if (chance(0.2)) m.fullOutputPath = "/tmp/full.txt";
  if (chance(0.25)) m.excludeFromContext = true;
  return m;
}

let callNo = 0;
function turn(sm, n) {
  sm.appendMessage(user(n));
  const rounds = int(0, 3);
  for (let r = 0; r < rounds; r++) {
    const calls = Array.from({ length: int(1, 3) }, () => ({ id: `call_${callNo++}`, name: pick(TOOLS) }));
    sm.appendMessage(assistant(calls));
    for (const c of calls) if (chance(0.95)) sm.appendMessage(toolResult(c));
    if (chance(0.1)) return;
  }
  sm.appendMessage(assistant([]));
}

function compactionTarget(sm) {
  const branch = sm.getBranch();
  const last = branch.findLastIndex((e) => e.type === "compaction");
  const after = branch.slice(last + 1);
  if (chance(0.08)) return pick(sm.getEntries()).id;
  if (chance(0.08) && branch.length) return pick(branch).id;
  if (chance(0.03)) return "nonexistent";
  if (after.length === 0) return undefined;
  // mostly a message entry (what pi's own cut picks), sometimes any entry after the last compaction
  const messages = after.filter((e) => e.type === "message" && e.message.role !== "toolResult");
  return chance(0.8) && messages.length ? pick(messages).id : pick(after).id;
}

function build(sm, seed) {
  const dirOf = (f) => f.slice(0, f.lastIndexOf("/"));
  const ops = int(6, 40);
  let n = 0;
  turn(sm, n++); // pi writes its file once an assistant message exists
  for (let i = 0; i < ops; i++) {
    const r = rnd();
    const ids = sm.getEntries().map((e) => e.id);
    if (r < 0.45) turn(sm, n++);
    else if (r < 0.47) sm.appendMessage(bash());
    else if (r < 0.48) sm.appendMessage(toolResult({ id: `orphan_${i}`, name: pick(TOOLS) }));
    else if (r < 0.49) sm.appendMessage({ role: "user", content: pick(["", [], [{ type: "text", text: "" }], [IMAGE]]), timestamp: Date.now() });
    else if (r < 0.5) sm.appendCustomMessageEntry("img", [{ type: "text", text: words(size(), "ci") }, IMAGE], chance(0.5));
    else if (r < 0.55) sm.appendCustomMessageEntry(pick(["note", "hint"]), chance(0.8) ? `cm ${words(size(), "cm")}` : [{ type: "text", text: words(size(), "cmb") }], chance(0.6), chance(0.5) ? { k: i } : undefined);
    else if (r < 0.57) sm.appendMessage({ role: "custom", customType: "inline", content: chance(0.1) ? "" : words(size(), "ic"), display: chance(0.5), timestamp: Date.now() });
    else if (r < 0.6) sm.appendLabelChange(pick(ids), chance(0.8) ? `lab${i}` : undefined);
    else if (r < 0.63) sm.appendModelChange(pick(["fx", "fy"]), pick(["m1", "m2"]));
    else if (r < 0.65) sm.appendThinkingLevelChange(pick(["off", "low", "high"]));
    else if (r < 0.66) sm.appendSessionInfo(`name ${i}`);
    else if (r < 0.67) sm.appendCustomEntry("ext", { i });
    else if (r < 0.675 && sm.getSessionFile()) { const file = sm.getSessionFile(); sm = SessionManager.open(file, dirOf(file)); }
    else if (r < 0.75) {
      const target = NEW && chance(0.15) ? null : compactionTarget(sm);
      if (target !== undefined) {
        if (NEW) sm.appendCompaction(chance(0.05) ? "" : `summary ${i} ${words(size(), "s")}`, target, int(0, 50000), { readFiles: [], modifiedFiles: [] }, chance(0.2), chance(0.5) ? usage() : undefined);
        else sm.appendCompaction(chance(0.05) ? "" : `summary ${i} ${words(size(), "s")}`, target, int(0, 50000), { readFiles: [], modifiedFiles: [] }, chance(0.2));
      }
    } else if (r < 0.83) {
      sm.branch(pick(ids));
    } else if (r < 0.88) {
      sm.branchWithSummary(chance(0.9) ? pick(ids) : null, chance(0.1) ? "" : `branch ${words(size(), "b")}`, { readFiles: [] }, chance(0.2));
    } else if (r < 0.89) {
      sm.resetLeaf();
    } else if (NEW && r < 0.93) {
      sm.appendMessage({ role: "system", content: chance(0.5) ? "" : `sys ${words(size(), "y")}`, ...(chance(0.5) ? { sections: { s: words(size(), "z"), ...(chance(0.3) ? { gone: null, empty: "" } : {}) } } : {}), ...(chance(0.3) ? { toolsAdded: [{ name: pick(TOOLS), description: words(int(1, 30), "td"), parameters: { type: "object" } }] } : {}), ...(chance(0.2) ? { toolsRemoved: [{ name: pick(TOOLS) }] } : {}), timestamp: Date.now() });
    } else if (NEW && r < 0.96) {
      const msgs = sm.getBranch().filter((e) => e.type === "message" || e.type === "custom_message");
      const replacement = pick([null, { content: `edited ${words(int(1, 20), "e")}` }, { content: [] }, { content: "" }, { content: [{ type: "text", text: words(size(), "ea") }, IMAGE] }]);
      const reps = chance(0.2) ? 2 : 1;
      const target = msgs.length ? pick(msgs).id : undefined;
      for (let k = 0; k < reps && target; k++) try { sm.appendContextEdit(target, k ? null : replacement); } catch { /* pi refuses entries that carry no editable content */ }
    } else if (NEW && r < 0.98) {
      sm.appendUsage(pick(["cache_warm", "summary"]), "fx", "m1", usage());
    } else turn(sm, n++);
  }
  // end on a turn most of the time so the file's leaf is a message
  if (chance(0.7)) turn(sm, n++);
  return sm.getSessionFile();
}

const first = Number(firstArg), count = Number(countArg);
for (let s = first; s < first + count; s++) {
  rnd = mulberry32(s * 2654435761);
  oddRate = s % 3 === 0 ? 0.2 : 0;
  idSeed = `gen:${pkg}:${s}`;
  drawn = 0;
  callNo = 0;
  clock = RealDate.parse("2026-11-25T10:00:00.000Z");
  const dir = join(out, `.s${s}`);
  rmSync(dir, { recursive: true, force: true });
  const sm = SessionManager.create("/fixture", dir, { id: `gen-${s}` });
  try {
    const file = build(sm, s);
    writeFileSync(join(out, `s${s}.jsonl`), readFileSync(file));
  } catch (error) {
    process.stderr.write(`seed ${s}: ${error.stack}\n`);
  }
  rmSync(dir, { recursive: true, force: true });
}
