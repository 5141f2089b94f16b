// OpenClaw 2026.9.6's own load of a JSONL transcript (parseSessionEntries, then
// SessionManager.fromOwnedEntries: in memory, as session_oracle.mjs reads one) and agent-core's
// prepareCompaction at the file's leaf, timed (protocol: ../time_cut.mjs).
import { readFileSync } from "node:fs";
import { serveCuts } from "../time_cut.mjs";

// OpenClaw's loggers may print: the protocol owns stdout
const writeLine = process.stdout.write.bind(process.stdout);

await serveCuts(async () => {
  process.stdout.write = process.stderr.write.bind(process.stderr);
  const { SessionManager, parseSessionEntries } = await import("openclaw/plugin-sdk/agent-sessions");
  const { prepareCompaction } = await import("openclaw/plugin-sdk/agent-core");
  const { version } = JSON.parse(readFileSync(new URL("./node_modules/openclaw/package.json", import.meta.url), "utf8"));
  process.stdout.write = writeLine;
  return {
    agent: { package: "openclaw", version },
    load: (file) => SessionManager.fromOwnedEntries(parseSessionEntries(readFileSync(file, "utf8"))),
    entries: (sm) => sm.getEntries(),
    cut: (sm, settings) => {
      const leaf = sm.getLeafId();
      const path = leaf === null ? [] : sm.getBranch(leaf);
      const prepared = prepareCompaction(path, settings);
      if (!prepared.ok) return { refused: `error: ${prepared.error?.message ?? prepared.error}` };
      if (prepared.value === undefined) return { refused: "nothing-to-summarize" };
      return { firstKeptEntryId: prepared.value.firstKeptEntryId };
    },
  };
});
