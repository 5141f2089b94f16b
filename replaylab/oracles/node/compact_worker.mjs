// The two ways a bundled pi compactor runs (pi-<release>/pi_compact.mjs; replaylab.compactors.node_worker),
// and the worker's loop every agent's driver serves with (`serveRequests`, also OpenClaw's):
//
//   node pi_compact.mjs          the params JSON on stdin, the result JSON on stdout, its log lines
//                                on stderr, the summary model at REPLAYLAB_SUMMARY_BASE_URL; an
//                                error is the process's own (its stack on stderr, a non-zero status)
//   node pi_compact.mjs --serve  a worker: first the header line, then one line in, one line out:
//                                {"params": {…}, "summaryBaseUrl": …, "cwd"?: …} →
//                                {"result": {…}, "log": [...]}; an error is the compaction's
//                                result, {"success": false, "crashed": true, "error": <its stack>}
//
// `compactOnce(params, summaryBaseUrl, log, cwd)` compacts one working copy and gives the result;
// it must leave nothing behind for the next compaction (each seeds its own entry ids).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

async function answer(compactOnce, request) {
  const log = [];
  try {
    const result = await compactOnce(
      request.params ?? {},
      request.summaryBaseUrl,
      (line) => log.push(line),
      request.cwd ?? process.cwd(),
    );
    return { result, log };
  } catch (error) {
    return { result: { success: false, crashed: true, error: String(error?.stack ?? error) }, log };
  }
}

/** The worker's loop, for every agent's driver: `header` first, then `answerOf(request)` for each
 * request line (`{"result", "log"}`), in order; a line that is no JSON is answered as a failure. */
export async function serveRequests(header, answerOf) {
  const write = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
  write(header);
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (error) {
      write({ result: { success: false, error: `not a JSON request: ${error?.message ?? error}` }, log: [] });
      continue;
    }
    write(await answerOf(request));
  }
}

/** The contract's answer for a pi compaction that appended entry `id` (`result`: pi's
 * CompactionResult, `preparation`: its prepareCompaction, `before` / `window`: the context's
 * messages before and after), the cut written to `log`. Both pinned pis answer alike. */
export function compactedAnswer({ id, result, preparation, before, window, log }) {
  log(
    `cut at ${result.firstKeptEntryId} (split turn: ${preparation.isSplitTurn}), ` +
      `${preparation.messagesToSummarize.length} messages summarized, context ${before} -> ${window.length} messages`,
  );
  return {
    success: true,
    originalTokenCount: result.tokensBefore,
    compactionEventId: id,
    compactedWindow: window,
    summaryText: result.summary,
    error: null,
  };
}

async function once(compactOnce, prefix) {
  const params = JSON.parse(readFileSync(0, "utf8"));
  const log = (line) => process.stderr.write(`${prefix}: ${line}\n`);
  const result = await compactOnce(params, process.env.REPLAYLAB_SUMMARY_BASE_URL, log, process.cwd());
  process.stdout.write(JSON.stringify(result));
}

/** Run as the command line says: a worker (`--serve`, announcing `header`) or one compaction. */
export async function runCompactor(compactOnce, { header, prefix }) {
  await (process.argv.includes("--serve")
    ? serveRequests(header, (request) => answer(compactOnce, request))
    : once(compactOnce, prefix));
}
