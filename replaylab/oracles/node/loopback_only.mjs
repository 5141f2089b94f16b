// Loopback only: every TCP socket of this node process must go to a loopback address.
//
// Imported first by the bundled compactors (pi-0.73.1/ and pi-1.6.0/pi_compact.mjs, openclaw-2026.9.6/
// openclaw_compact.mjs: the compaction under test must reach nothing but the summary endpoint
// replaylab serves on 127.0.0.1): any other destination is refused before the socket
// connects, whatever library opens it (node's fetch, the OpenAI client, a provider SDK), since
// they all end in net.Socket.prototype.connect. Unix sockets (a path) stay local by nature.
import net from "node:net";

const LOOPBACK_NAMES = new Set(["localhost", "::1"]);

export function isLoopback(host) {
  const name = String(host ?? "localhost").replace(/^\[|\]$/g, "");
  return LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name) || name === "::ffff:127.0.0.1";
}

export function loopbackOnly(host) {
  if (!isLoopback(host)) {
    throw new Error(`loopback only: refused a connection to ${host}`);
  }
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function loopbackConnect(...args) {
  const [first, second] = args;
  const options = Array.isArray(first) ? first[0] : first;
  if (options && typeof options === "object") {
    if (!options.path) loopbackOnly(options.host);
  } else if (typeof options === "number" || /^\d+$/.test(String(options))) {
    loopbackOnly(typeof second === "string" ? second : undefined);
  }
  return connect.apply(this, args);
};

/** The summary model of a bundled compactor: an OpenAI-compatible endpoint at `baseUrl`, which
 * must be on loopback (replaylab serves it for the call); no key, no cost. */
export function loopbackSummaryModel({ id, name, baseUrl, contextTokens }) {
  loopbackOnly(new URL(baseUrl).hostname);
  return {
    id,
    name,
    api: "openai-completions",
    provider: "replaylab",
    baseUrl,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: contextTokens,
    maxTokens: contextTokens,
  };
}
