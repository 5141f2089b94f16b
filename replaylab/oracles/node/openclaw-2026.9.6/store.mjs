// Make real OpenClaw session stores with OpenClaw's own SessionManager (never by hand).
//
//   node store.mjs <stateDir> <spec.json | -> [--out result.json]
//
// <stateDir> is an `~/.openclaw`-shaped folder; every session of the spec goes to
// <stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite, written by SessionManager through the
// public `openclaw/plugin-sdk/agent-sessions` export (SQLite via node:sqlite; node >= 24.16).
//
// The spec (JSON):
//   {"sessions": [{
//      "name": "fixture-a",                 // label for the output; default session key suffix
//      "agentId": "main",                   // default "main"
//      "sessionKey": "agent:main:fixture-a",// default agent:<agentId>:<name>
//      "sessionId": "...",                  // default: agent-core's uuidv7()
//      "cwd": "/work",                      // header cwd
//      "entries": [ ...see below... ]
//   }]}
// Entries are appended in order; each may carry "ref": "<name>" so later entries can name it.
//   {"type":"message", "message": {role:"user"|"assistant"|"toolResult"|"custom"|"bashExecution", ...}}
//       (timestamp defaults to a fixed clock; an assistant defaults api/provider/model/usage/stopReason)
//   {"type":"compaction", "summary", "firstKept": "<ref>" | "@leaf" (the entry it is appended after),
//        "tokensBefore", "tokensAfter"?, "details"?, "fromHook"?, "metadata"?: {runId|itemId}}
//   {"type":"reset", "reason", "firstKept"?: "<ref>"}      -> SessionManager.appendResetBoundary
//   {"type":"custom_message", "customType", "content", "display"?, "details"?}
//   {"type":"custom", "customType", "data"}
//   {"type":"model_change", "provider", "modelId"} / {"type":"thinking_level_change", "thinkingLevel"}
//   {"type":"session_info", "name"} / {"type":"label", "target": "<ref>", "label"}
//   {"type":"branch", "from": "<ref>"}          -> SessionManager.branch (next append forks there)
//   {"type":"branch_summary", "from": "<ref>" | null, "summary", "details"?, "fromHook"?}
// Output (stdout or --out): what SessionManager wrote, read back through a fresh SessionManager.open.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { resolve, join } from "node:path";
import { SessionManager } from "openclaw/plugin-sdk/agent-sessions";
import { uuidv7 } from "openclaw/plugin-sdk/agent-core";

const MANIFEST = JSON.parse(readFileSync(new URL("./node_modules/openclaw/package.json", import.meta.url), "utf8"));

function usage() {
  process.stderr.write("usage: node store.mjs <stateDir> <spec.json|-> [--out result.json]\n");
  process.exit(2);
}

const args = process.argv.slice(2);
const outIndex = args.indexOf("--out");
const outPath = outIndex >= 0 ? args.splice(outIndex, 2)[1] : undefined;
if (args.length !== 2) usage();
const stateDir = resolve(args[0]);
const spec = JSON.parse(args[1] === "-" ? readFileSync(0, "utf8") : readFileSync(args[1], "utf8"));

// Storage routing is captured from the environment when a target is bound: pin it to <stateDir>.
process.env.OPENCLAW_STATE_DIR = stateDir;

let clock = Date.parse(spec.clock ?? "2026-12-01T12:00:00.000Z");
const tick = () => (clock += 1000);

const DEFAULT_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function completeMessage(message) {
  const m = structuredClone(message);
  m.timestamp ??= tick();
  if (m.role === "assistant") {
    m.api ??= "openai-completions";
    m.provider ??= "replaylab";
    m.model ??= "fixture";
    m.usage ??= structuredClone(DEFAULT_USAGE);
    m.stopReason ??= m.content?.some?.((b) => b.type === "toolCall") ? "toolUse" : "stop";
    if (typeof m.content === "string") m.content = [{ type: "text", text: m.content }];
  }
  if (m.role === "toolResult") {
    if (typeof m.content === "string") m.content = [{ type: "text", text: m.content }];
    m.isError ??= false;
  }
  return m;
}

async function writeSession(session, index) {
  const agentId = session.agentId ?? "main";
  const name = session.name ?? `session-${index + 1}`;
  const sessionKey = session.sessionKey ?? `agent:${agentId}:${name}`;
  const sessionId = session.sessionId ?? uuidv7();
  const agentDir = join(stateDir, "agents", agentId, "agent");
  mkdirSync(agentDir, { recursive: true });
  const storePath = join(agentDir, "openclaw-agent.sqlite");
  const target = { agentId, sessionId, sessionKey, storePath };
  const sm = SessionManager.open(target, session.cwd ?? "/work");
  const refs = {};
  const idOf = (ref) => {
    if (ref === null || ref === undefined) return ref;
    if (!(ref in refs)) throw new Error(`${name}: unknown ref ${JSON.stringify(ref)}`);
    return refs[ref];
  };
  const appended = [];
  for (const [i, spec] of (session.entries ?? []).entries()) {
    let id;
    switch (spec.type) {
      case "message":
        id = sm.appendMessage(completeMessage(spec.message));
        break;
      case "compaction": {
        // The entry schema requires a non-empty firstKeptEntryId (session-entry-codec); a compaction
        // keeping nothing would name its own id, which appendCompaction generates itself, so a spec
        // can only name an existing entry ("@leaf": the entry it is appended after).
        const firstKept = spec.firstKept === "@leaf" ? sm.getLeafId() : idOf(spec.firstKept);
        id = sm.appendCompaction(spec.summary ?? "", firstKept, spec.tokensBefore ?? 0, spec.details,
          spec.fromHook, spec.metadata, spec.tokensAfter);
        break;
      }
      case "reset":
        id = sm.appendResetBoundary(spec.reason ?? "reset", idOf(spec.firstKept));
        break;
      case "custom_message":
        id = sm.appendCustomMessageEntry(spec.customType, spec.content, spec.display ?? true, spec.details);
        break;
      case "custom":
        id = sm.appendCustomEntry(spec.customType, spec.data);
        break;
      case "model_change":
        id = await sm.appendModelChange(spec.provider, spec.modelId);
        break;
      case "thinking_level_change":
        id = await sm.appendThinkingLevelChange(spec.thinkingLevel);
        break;
      case "session_info":
        id = sm.appendSessionInfo(spec.name);
        break;
      case "label":
        id = sm.appendLabelChange(idOf(spec.target), spec.label);
        break;
      case "branch":
        sm.branch(idOf(spec.from));
        id = null;
        break;
      case "branch_summary":
        id = sm.branchWithSummary(idOf(spec.from), spec.summary, spec.details, spec.fromHook);
        break;
      default:
        throw new Error(`${name}: entry ${i}: unsupported type ${spec.type}`);
    }
    if (spec.ref !== undefined) refs[spec.ref] = id;
    appended.push({ index: i, type: spec.type, ref: spec.ref ?? null, id });
  }
  const written = {
    header: sm.getHeader(),
    leafId: sm.getLeafId(),
    entries: sm.getEntries(),
  };
  // Read back what was persisted, through a fresh manager on the same store.
  const again = SessionManager.open({ agentId, sessionId, sessionKey, storePath }, session.cwd ?? "/work");
  const reread = { header: again.getHeader(), leafId: again.getLeafId(), entries: again.getEntries() };
  const same = JSON.stringify(reread.entries) === JSON.stringify(written.entries) && reread.leafId === written.leafId;
  return {
    name, agentId, sessionKey, sessionId, storePath,
    refs, appended,
    header: reread.header,
    leafId: reread.leafId,
    entries: reread.entries,
    branch: again.getBranch().map((e) => e.id),
    contextLength: again.buildSessionContext().messages.length,
    rereadEqualsWritten: same,
  };
}

const sessions = [];
for (const [i, s] of (spec.sessions ?? []).entries()) sessions.push(await writeSession(s, i));
const result = { openclaw: MANIFEST.version, node: process.version, stateDir, sessions };
const text = `${JSON.stringify(result, null, 1)}\n`;
// SessionManager keeps SQLite handles and timers open; the work is committed, so leave once the
// result is out (a pending pipe write is lost on process.exit).
if (outPath) {
  writeFileSync(outPath, text);
  process.exit(0);
} else process.stdout.write(text, () => process.exit(0));
