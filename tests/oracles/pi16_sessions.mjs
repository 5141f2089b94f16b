// Sessions that hold what pi 1.6.0 writes and the recordings do not — system messages, context_edit
// and usage entries, compactions carrying systemMessage / usage, retain-none compactions, a
// compaction inside the kept range of a newer one, bashExecution / custom_message / branch_summary
// turn starts, user images, all-zero usage, null content — written by pi 1.6.0's own SessionManager
// (its append* methods) with a fixed clock and seeded ids, so every run writes the same bytes.
// The tests make them at test time (tests/oracles/test_pi_1_6_0.py):
//   node pi16_sessions.mjs <the pi-1.6.0 oracle folder> <out dir>
import crypto, { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

let seed = "fixtures";
let drawn = 0;
crypto.randomUUID = () => {
  const h = createHash("sha256").update(`${seed}:${drawn++}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
syncBuiltinESMExports();

// a fixed clock: every `new Date()` / Date.now() is one second after the previous one
const RealDate = Date;
let clock = RealDate.parse("2026-11-25T10:00:00.000Z");
class FixedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) {
      clock += 1000;
      super(clock);
    } else super(...args);
  }
  static now() {
    clock += 1000;
    return clock;
  }
}
globalThis.Date = FixedDate;

const PI = new URL("node_modules/@earendil-works/pi-coding-agent/dist/core/", pathToFileURL(`${resolve(process.argv[2])}/`));
const { SessionManager } = await import(new URL("session-manager.js", PI).href);

const out = resolve(process.argv[3]);
mkdirSync(out, { recursive: true });

const ZERO = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
function usage(input, output) {
  return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}
function words(n, tag) {
  const w = [];
  for (let i = 0; i < n; i++) w.push(`${tag}${i % 97}`);
  return w.join(" ");
}
const TOOLS = [
  { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } } } },
  { name: "bash", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } },
];
const user = (text, extra) => ({ role: "user", content: extra ? [{ type: "text", text }, ...extra] : text, timestamp: Date.now() });
const assistantText = (text, u = usage(1000, 50), stopReason = "stop") => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-completions",
  provider: "fixture",
  model: "fixture-1",
  usage: u,
  stopReason,
  timestamp: Date.now(),
});
const assistantCall = (id, name, args, u = usage(1000, 20)) => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name, arguments: args }],
  api: "openai-completions",
  provider: "fixture",
  model: "fixture-1",
  usage: u,
  stopReason: "toolUse",
  timestamp: Date.now(),
});
const toolResult = (id, name, text) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: Date.now(),
});
const IMAGE = { type: "image", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", mimeType: "image/png" };

function session(name, build) {
  seed = `fixtures:${name}`;
  drawn = 0;
  const dir = join(out, `.${name}`);
  rmSync(dir, { recursive: true, force: true });
  const sm = SessionManager.create("/fixture", dir, { id: `fixture-${name}` });
  build(sm);
  const file = sm.getSessionFile();
  writeFileSync(join(out, `${name}.jsonl`), readFileSync(file));
  rmSync(dir, { recursive: true, force: true });
}

function turn(sm, n, size = 120) {
  sm.appendMessage(user(`question ${n}: ${words(size / 4, "q")}`));
  const call = `call_${n}`;
  sm.appendMessage(assistantCall(call, "read", { path: `/src/file${n}.ts` }));
  sm.appendMessage(toolResult(call, "read", words(size, "r")));
  sm.appendMessage(assistantText(`answer ${n}: ${words(size / 3, "a")}`));
}

// 1. system messages: a leading one (sections, tools) and a later patch; user images; all-zero usage
session("sys-messages", (sm) => {
  sm.appendMessage({ role: "system", content: "You are a fixture assistant.", sections: { preamble: words(60, "p"), cwd: "/fixture" }, toolsAdded: TOOLS, timestamp: Date.now() });
  for (let n = 0; n < 4; n++) turn(sm, n);
  sm.appendMessage({ role: "system", content: "", sections: { skills: words(40, "s"), cwd: null }, toolsRemoved: [{ name: "bash" }], timestamp: Date.now() });
  sm.appendMessage(user("look at this screenshot", [IMAGE]));
  sm.appendMessage(assistantText(`the screenshot shows ${words(30, "i")}`, ZERO));
  for (let n = 4; n < 7; n++) turn(sm, n);
  sm.appendMessage(user("last question"));
  sm.appendMessage(assistantText("last answer", ZERO));
});

// 2. context edits (a failed attempt omitted, a tool result replaced), usage entries
session("context-edits", (sm) => {
  for (let n = 0; n < 3; n++) turn(sm, n);
  sm.appendMessage(user("please summarize the files"));
  const failed = sm.appendMessage(assistantText("partial answer that hit the output lim", usage(2000, 4000), "length"));
  sm.appendContextEdit(failed, null);
  sm.appendUsage("cache_warm", "fixture", "fixture-1", usage(5000, 0));
  sm.appendMessage(assistantText(`complete answer ${words(50, "c")}`));
  sm.appendMessage(user("and file 1 again?"));
  sm.appendMessage(assistantCall("call_x", "read", { path: "/src/file1.ts" }));
  const big = sm.appendMessage(toolResult("call_x", "read", words(2000, "big")));
  sm.appendContextEdit(big, { content: "[file1.ts: 2000 words omitted]" });
  sm.appendMessage(assistantText(`file 1 holds ${words(20, "f")}`));
  for (let n = 3; n < 5; n++) turn(sm, n);
});

// 3. compactions: one carrying systemMessage and usage with a system patch in its kept range,
//    then a retain-none compaction, then more turns (the older compaction lies before the newest)
session("compactions", (sm) => {
  sm.appendMessage({ role: "system", content: "You are a fixture assistant.", toolsAdded: TOOLS, timestamp: Date.now() });
  for (let n = 0; n < 3; n++) turn(sm, n);
  const kept = sm.getLeafId();
  turn(sm, 3);
  sm.appendMessage({ role: "system", content: "", sections: { note: words(20, "n") }, timestamp: Date.now() });
  turn(sm, 4);
  // keep from the last assistant of turn 2 (kept range holds turn 3, the system patch, turn 4)
  sm.appendCompaction(`## Goal\nfixture summary one ${words(30, "x")}`, kept, 4321, { readFiles: ["/src/file0.ts"], modifiedFiles: [] }, false, usage(900, 100));
  for (let n = 5; n < 7; n++) turn(sm, n);
  sm.appendCompaction(`## Goal\nfixture summary two (retain none) ${words(30, "y")}`, null, 2345, { readFiles: [], modifiedFiles: [] }, false, usage(800, 90));
  for (let n = 7; n < 10; n++) turn(sm, n);
});

// 4. nested: a compaction whose kept range reaches back over an older compaction
session("nested-compaction", (sm) => {
  for (let n = 0; n < 3; n++) turn(sm, n);
  const keepA = sm.getLeafId();
  turn(sm, 3);
  sm.appendCompaction("summary A", keepA, 1000, { readFiles: [], modifiedFiles: [] }, false);
  turn(sm, 4);
  const keepB = sm.getBranch().find((e) => e.type === "message" && e.message.role === "user" && String(e.message.content).startsWith("question 3"))?.id;
  turn(sm, 5);
  sm.appendCompaction("summary B", keepB, 2000, { readFiles: [], modifiedFiles: [] }, false);
  for (let n = 6; n < 9; n++) turn(sm, n);
});

// 5. turn starts and cut points: bashExecution, custom_message, branch_summary, and a long
//    trailing tool result (the fallback to the last cut point)
session("turn-starts", (sm) => {
  turn(sm, 0);
  sm.appendMessage({ role: "bashExecution", command: "ls -la", output: words(300, "ls"), exitCode: 0, cancelled: false, truncated: false, timestamp: Date.now() });
  sm.appendMessage(assistantText(`listing read ${words(200, "b")}`));
  sm.appendMessage(toolResult("orphan", "read", words(10, "o")));
  sm.appendCustomMessageEntry("fixture-note", `note ${words(300, "cm")}`, true, { k: 1 });
  sm.appendMessage(assistantText(`custom read ${words(200, "d")}`));
  const fork = sm.getLeafId();
  turn(sm, 1);
  sm.branchWithSummary(fork, `branch summary ${words(300, "bs")}`, { readFiles: [] }, false);
  sm.appendMessage(assistantText(`after branch ${words(200, "e")}`));
  turn(sm, 2);
  sm.appendMessage(user("read the big log"));
  sm.appendMessage(assistantCall("call_big", "read", { path: "/var/log/big.log" }));
  sm.appendMessage(toolResult("call_big", "read", words(3000, "log")));
});

// 6. null content and a custom_message without content (hand-edited / older files)
session("null-content", (sm) => {
  turn(sm, 0);
  sm.appendMessage({ ...assistantText("x"), content: null });
  sm.appendMessage({ role: "user", content: null, timestamp: Date.now() });
  sm.appendCustomMessageEntry("fixture-empty", undefined, false, undefined);
  turn(sm, 1);
});

process.stdout.write(`sessions written to ${out}\n`);
