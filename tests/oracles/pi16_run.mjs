// A session pi 1.6.0 writes in a real run: its own AgentSession (createAgentSession, the SDK's
// entry point) prompted three times, its model a loopback OpenAI-compatible endpoint served here that
// answers the first request of each prompt with a `read` call and the next with text.
//   node pi16_run.mjs <the pi-1.6.0 oracle folder> <out dir>
// Prints the session file's path. Nothing leaves 127.0.0.1 (the endpoint is this process's).
import { createServer } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const folder = resolve(process.argv[2]);
const out = resolve(process.argv[3]);
const PI = pathToFileURL(join(folder, "node_modules/@earendil-works/pi-coding-agent/dist/index.js")).href;
const { createAgentSession, createExtensionRuntime, ModelRuntime, SessionManager, SettingsManager } = await import(PI);

let requests = 0;
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    const request = JSON.parse(body || "{}");
    const last = request.messages?.[request.messages.length - 1];
    requests += 1;
    const id = `chatcmpl-${requests}`;
    const chunk = (delta, finish) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "loopback-1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (last?.role === "user") {
      res.write(chunk({ role: "assistant", tool_calls: [{ index: 0, id: `call_${requests}`, type: "function", function: { name: "read", arguments: JSON.stringify({ path: "notes.txt" }) } }] }, null));
      res.write(chunk({}, "tool_calls"));
    } else {
      res.write(chunk({ role: "assistant", content: `The notes say hello (answer ${requests}). ` + "They say it again. ".repeat(40) }, null));
      res.write(chunk({}, "stop"));
    }
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: "loopback-1", choices: [], usage: { prompt_tokens: 900 + requests, completion_tokens: 12, total_tokens: 912 + requests } })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
});
await new Promise((done) => server.listen(0, "127.0.0.1", done));
const port = server.address().port;

const agentDir = join(out, "agent");
const cwd = join(out, "work");
mkdirSync(agentDir, { recursive: true });
mkdirSync(cwd, { recursive: true });
writeFileSync(join(cwd, "notes.txt"), "hello from the notes\n".repeat(40));
const modelsPath = join(agentDir, "models.json");
writeFileSync(
  modelsPath,
  JSON.stringify({
    providers: {
      loopback: {
        baseUrl: `http://127.0.0.1:${port}/v1`,
        api: "openai-completions",
        apiKey: "loopback-key",
        models: [{ id: "loopback-1", contextWindow: 128000, maxTokens: 4096 }],
      },
    },
  }),
);
const modelRuntime = await ModelRuntime.create({ authPath: join(agentDir, "auth.json"), modelsPath });
const model = modelRuntime.getModel("loopback", "loopback-1");
if (!model) throw new Error("the loopback model was not registered");
const resourceLoader = {
  getExtensions: () => ({ extensions: [], errors: [], runtime: createExtensionRuntime() }),
  getSkills: () => ({ skills: [], diagnostics: [] }),
  getPrompts: () => ({ prompts: [], diagnostics: [] }),
  getThemes: () => ({ themes: [], diagnostics: [] }),
  getAgentsFiles: () => ({ agentsFiles: [] }),
  getSystemPrompt: () => "You are a test assistant. Use read to read files.",
  getSystemPromptSource: () => undefined,
  getAppendSystemPrompt: () => [],
  getAppendSystemPromptSources: () => [],
  extendResources: () => {},
  reload: async () => {},
};
const sessionManager = SessionManager.create(cwd, join(out, "sessions"));
const { session } = await createAgentSession({
  cwd,
  agentDir,
  model,
  thinkingLevel: "off",
  modelRuntime,
  resourceLoader,
  tools: ["read"],
  sessionManager,
  settingsManager: SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } }),
});
try {
  await session.prompt("What do the notes say?");
  await session.prompt("Read them again, please.");
  await session.prompt("And once more: what do they say, word for word?");
} finally {
  session.dispose();
  server.close();
}
console.log(sessionManager.getSessionFile());
