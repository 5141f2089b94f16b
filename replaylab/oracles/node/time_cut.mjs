// An agent's own load of a transcript and its `prepareCompaction` at the file's leaf, timed inside
// node (bench/cases/agents_cut.py sets replaylab's load + cut beside it). Each agent's folder has a
// `time_cut.mjs` that binds its own modules and calls `serveCuts`.
//
// Protocol: `serve_lines.mjs`. The first line names the agent and what was spent before any request
// (`startMs`: node's own start up to this module; `importMs`: importing the agent's modules), so a
// sample is the work alone. Then, per request line
//   {"id", "fn": "time", "args": [{"file", "keepRecentTokens", "reserveTokens", "repeats", "warmup"?}]}
// → {"id", "ok": {"samplesMs": [...], "entries", "refused": null | why, "firstKeptEntryId",
//                 "firstKeptLine": 1-based file line of the first kept entry (v1 files get fresh
//                 ids from the agent's migration: the line is what identifies the entry)}}
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { entryLines } from "./entry_lines.mjs";
import { serveLines } from "./serve_lines.mjs";

// ms since the process began (performance's time origin): node's start and this module's load
const startMs = performance.now();

/**
 * Serve timing requests for one agent. `bind()` imports the agent's modules and returns
 * {agent: {package, version}, load(file, scratchDir) → session, entries(session) → [entry],
 *  cut(session, settings) → {firstKeptEntryId} | {refused}}.
 */
export async function serveCuts(bind) {
  const began = performance.now();
  const agent = await bind();
  const importMs = performance.now() - began;
  const time = (request) => {
    const settings = { enabled: true, reserveTokens: request.reserveTokens, keepRecentTokens: request.keepRecentTokens };
    const scratch = mkdtempSync(join(tmpdir(), "time-cut-"));
    try {
      const samplesMs = [];
      let session;
      let cut;
      const runs = (request.warmup ?? 0) + request.repeats;
      for (let i = 0; i < runs; i++) {
        // pi rewrites a file it migrates: every run reads the original bytes from a fresh copy
        const copy = join(scratch, `run-${i}.jsonl`);
        copyFileSync(request.file, copy);
        session = undefined;
        const start = performance.now();
        session = agent.load(copy, scratch);
        cut = agent.cut(session, settings);
        const spent = performance.now() - start;
        if (i >= (request.warmup ?? 0)) samplesMs.push(spent);
        rmSync(copy, { force: true });
      }
      const entries = agent.entries(session);
      const lines = entryLines(readFileSync(request.file, "utf8"));
      const at = cut.firstKeptEntryId ? entries.findIndex((e) => e.id === cut.firstKeptEntryId) : -1;
      return {
        samplesMs,
        entries: entries.length,
        refused: cut.refused ?? null,
        firstKeptEntryId: cut.firstKeptEntryId ?? null,
        firstKeptLine: at >= 0 && lines.length === entries.length ? lines[at] : null,
      };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  };
  // one answer at a time: the bench waits for each before it times replaylab again
  await serveLines({ time }, { agent: agent.agent, node: process.version, startMs, importMs }, { batch: 1 });
}

/** The bind of a pi release (its package in the calling folder's node_modules): `SessionManager.open`
 * and `prepareCompaction` by file, as its pi_oracle.mjs binds them; `nothing` names the refusal
 * of a path whose leaf is no compaction. */
export function bindPi(pkg, name, nothing) {
  return async () => {
    const { prepareCompaction } = await import(new URL("dist/core/compaction/compaction.js", pkg).href);
    const { SessionManager } = await import(new URL("dist/core/session-manager.js", pkg).href);
    const { version } = JSON.parse(readFileSync(new URL("package.json", pkg), "utf8"));
    return {
      agent: { package: name, version },
      load: (file, dir) => SessionManager.open(file, dir),
      entries: (sm) => sm.getEntries(),
      cut: (sm, settings) => {
        const path = sm.getBranch();
        const prepared = prepareCompaction(path, settings);
        if (prepared) return { firstKeptEntryId: prepared.firstKeptEntryId };
        return { refused: path.at(-1)?.type === "compaction" ? "already-compacted" : nothing };
      },
    };
  };
}
