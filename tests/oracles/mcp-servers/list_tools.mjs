// Each pinned MCP server, started over stdio in a scratch folder, and its own tools/list answer:
// one JSON line per server, {server, package, version, tools: [{name, annotations}]}. Listing
// tools runs none: no browser is launched, no file is read or written, nothing is fetched.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const modules = join(here, "node_modules");
const scratch = mkdtempSync(join(tmpdir(), "replaylab-mcp-servers-"));

// the key each server's README registers it under, its package, and how it is started
const servers = [
  // every capability, so that every tool the server has over MCP is listed
  ["playwright", "@playwright/mcp", ["cli.js", "--headless", "--isolated", "--caps", "vision,pdf,devtools,network,storage,testing,config"]],
  ["filesystem", "@modelcontextprotocol/server-filesystem", ["dist/index.js", scratch]],
  ["memory", "@modelcontextprotocol/server-memory", ["dist/index.js"]],
  ["sequential-thinking", "@modelcontextprotocol/server-sequential-thinking", ["dist/index.js"]],
  ["chrome-devtools", "chrome-devtools-mcp", ["build/src/bin/chrome-devtools-mcp.js", "--headless", "--isolated", "--no-usage-statistics", "--no-performance-crux"]],
];

try {
  for (const [server, pkg, [entry, ...args]] of servers) {
    const { version } = JSON.parse(readFileSync(join(modules, pkg, "package.json"), "utf8"));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(modules, pkg, entry), ...args],
      cwd: scratch,
      stderr: "ignore",
      // offline: chrome-devtools-mcp sends usage statistics unless told not to (flag and variable)
      env: {
        PATH: process.env.PATH ?? "",
        HOME: scratch,
        MEMORY_FILE_PATH: join(scratch, "memory.jsonl"),
        CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: "1",
      },
    });
    const client = new Client({ name: "replaylab-mcp-servers-oracle", version: "1" });
    await client.connect(transport);
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      tools.push(...page.tools.map((tool) => ({ name: tool.name, annotations: tool.annotations ?? null })));
      cursor = page.nextCursor;
    } while (cursor);
    await client.close();
    process.stdout.write(JSON.stringify({ server, package: pkg, version, tools }) + "\n");
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
