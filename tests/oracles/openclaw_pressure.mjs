// OpenClaw 2026.9.6's own prompt pressure, for tests/unit/agents/test_openclaw_pressure.py: JSON on
// stdin, a list of {messages, context, reserve, tools}; out, for each, every message's
// estimateMessageTokenPressure, estimateToolSchemaTokens of the tools, and the decision of
// shouldPreemptivelyCompactBeforePrompt (no system prompt, no prompt text) — the functions the
// mid-turn precheck runs, imported from the pinned build's chunks.
//
//   node openclaw_pressure.mjs <openclaw dist folder>
const dist = process.argv[2];
const rl = await import(`${dist}/resource-loader-v8341X6T.mjs`);
const st = await import(`${dist}/settled-turn-finalization-result-C8Oihyzx.mjs`);
// stdin read as a stream: readFileSync(0) fails with EAGAIN on a large piped input
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = input.map(({ messages, context, reserve, tools }) => ({
  each: messages.map((m) => rl.Y(m)),
  tools: tools ? rl.Q(tools) : 0,
  decision: st.m({ messages, prompt: "", contextTokenBudget: context, reserveTokens: reserve, toolResultMaxChars: undefined }),
}));
process.stdout.write(JSON.stringify(out));
