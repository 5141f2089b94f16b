// OpenClaw's own verdicts, one per JSON line read: {"name": …, "args": …} on stdin gives
// {"mutating": isMutatingToolCall(name, args), "replaySafe": isReplaySafeToolCall(name, args)}
// on stdout, in order. The first line written names the OpenClaw and node versions that answer.
// The module is imported by its file (the package's export map does not expose it); its import
// closure is four sibling modules with no package dependency, which is why the lockfile installs
// openclaw without its dependency tree.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const MODULE = "./node_modules/openclaw/dist/tool-mutation-BV25PrZA.mjs";
const manifest = JSON.parse(readFileSync(new URL("./node_modules/openclaw/package.json", import.meta.url), "utf8"));
const { n: isMutatingToolCall, r: isReplaySafeToolCall } = await import(new URL(MODULE, import.meta.url));
if (typeof isMutatingToolCall !== "function" || typeof isReplaySafeToolCall !== "function") {
  throw new Error(`${MODULE} does not export isMutatingToolCall as n and isReplaySafeToolCall as r`);
}

const out = [];
const flush = () => {
  if (out.length) process.stdout.write(out.splice(0).join(""));
};
out.push(JSON.stringify({ openclaw: manifest.version, node: process.version }) + "\n");
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  let answer;
  try {
    const { name, args } = JSON.parse(line);
    answer = { mutating: isMutatingToolCall(name, args), replaySafe: isReplaySafeToolCall(name, args) };
  } catch (error) {
    answer = { error: String(error && error.message ? error.message : error) };
  }
  out.push(JSON.stringify(answer) + "\n");
  if (out.length >= 512) flush();
}
flush();
