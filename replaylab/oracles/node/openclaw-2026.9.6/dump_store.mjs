// What OpenClaw's own SessionManager reads from a store, for every session in it (the reference
// that read_store.py is checked against).   node dump_store.mjs <openclaw-agent.sqlite> > dump.json
// The store is copied to a scratch state dir first: SessionManager opens stores read-write.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SessionManager } from "openclaw/plugin-sdk/agent-sessions";

const writeOut = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
const source = resolve(process.argv[2]);
const db = new DatabaseSync(source, { readOnly: true });
const agentId = db.prepare("SELECT agent_id FROM schema_meta WHERE meta_key = 'primary'").get()?.agent_id ?? "main";
const sessions = db.prepare("SELECT session_id, session_key FROM session_windows ORDER BY created_at, session_id").all();
db.close();
const scratch = mkdtempSync(join(tmpdir(), "openclaw-dump-"));
const agentDir = join(scratch, "agents", agentId, "agent");
mkdirSync(agentDir, { recursive: true });
const storePath = join(agentDir, "openclaw-agent.sqlite");
for (const suffix of ["", "-wal", "-shm"]) if (existsSync(source + suffix)) copyFileSync(source + suffix, storePath + suffix);
process.env.OPENCLAW_STATE_DIR = scratch;
const out = [];
for (const { session_id: sessionId, session_key: sessionKey } of sessions) {
  try {
    const sm = SessionManager.open({ agentId, sessionId, sessionKey, storePath });
    out.push({
      sessionId, sessionKey,
      header: sm.getHeader(),
      leafId: sm.getLeafId(),
      entries: sm.getEntries(),
      records: sm.getPersistedFileEntries(),
      contextLength: sm.buildSessionContext().messages.length,
    });
  } catch (error) {
    out.push({ sessionId, sessionKey, error: String(error?.message ?? error) });
  }
}
rmSync(scratch, { recursive: true, force: true });
// Exit only once the pipe has taken everything (a pending write is lost on process.exit).
writeOut(`${JSON.stringify({ agentId, sessions: out })}\n`, () => process.exit(0));
