// The rules harnesses' protocol (openclaw-<release>/openclaw_rules.mjs): one JSON line in, one out.
//
//   {"id": …, "fn": "<name>", "args": [...]}  →  {"id": …, "ok": <value>}   (undefined → "undefined": true)
//                                            or  {"id": …, "error": "<message>"}
//
// The first line written names the versions that answer. Lines in must be ASCII JSON: node's
// readline also ends a line at U+2028 / U+2029. Answers go out `batch` lines at a time (and all at
// the end of stdin): a client that waits for each answer before its next request asks for 1.
import { createInterface } from "node:readline";

/** Answer every line of stdin with `fns[request.fn](...request.args)`, in order. */
export async function serveLines(fns, versions, { batch = 256 } = {}) {
  const out = [];
  const flush = () => out.length && process.stdout.write(out.splice(0).join(""));
  out.push(`${JSON.stringify(versions)}\n`);
  if (out.length >= batch) flush();
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let answer;
    let id = null;
    try {
      const request = JSON.parse(line);
      id = request.id ?? null;
      const fn = fns[request.fn];
      if (!fn) throw new Error(`unknown fn ${request.fn}`);
      const value = await fn(...(request.args ?? []));
      answer = value === undefined ? { id, ok: null, undefined: true } : { id, ok: value };
    } catch (error) {
      answer = { id, error: String(error?.message ?? error) };
    }
    out.push(`${JSON.stringify(answer)}\n`);
    if (out.length >= batch) flush();
  }
  flush();
}
