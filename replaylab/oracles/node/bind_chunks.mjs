// Binds to the functions of one OpenClaw build by chunk file and name (each release folder gives
// its table: openclaw-<release>/bind_openclaw.mjs).
//
// OpenClaw's bundle (rolldown) names its chunks by content hash and its exports by letter, and
// several of the functions replaylab checks itself against are not exported at all (the
// safeguard handler, its runtime setter, the request-time context guard, hasImportantTail,
// extractOpaqueIdentifiers, capToolResultSize). So every function is bound by file and name:
//
//   * `export: "f"`   the chunk's own export letter (checked: the chunk must hold `name as f`);
//   * `local: true`   a top-level binding the chunk does not export: a module load hook appends
//                     `export { name as __replaylab_name }` to that chunk's source when node loads
//                     it. Nothing else of the source changes and the module stays the one instance
//                     every other chunk imports (same URL), so module state (the safeguard's
//                     runtime registry) is shared with OpenClaw's own callers.
//
// Before anything is imported the binding checks the installed versions, that each chunk file
// exists with the sha256 of the pinned build, and that each name is defined in it; otherwise it
// refuses with an error naming the expected and the found versions (and what is missing).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { registerHooks } from "node:module";

export class BindingError extends Error {
  constructor(message) {
    super(message);
    this.name = "BindingError";
  }
}

function versionOf(dir) {
  try {
    return JSON.parse(readFileSync(new URL("package.json", dir), "utf8")).version ?? "unknown";
  } catch {
    return "absent";
  }
}

const definedRe = (name) => new RegExp(`^(?:async function\\*? ${name}\\(|function\\*? ${name}\\(|const ${name} = |var ${name} = |let ${name} = )`, "m");
const exportRe = (name, letter) => new RegExp(`\\b${name} as ${letter.replace("$", "\\$")}\\b`);

// chunk URL → the export line appended to it (one load hook per process, for every binder)
const hooked = new Map();
let hookRegistered = false;

function hook(extra) {
  for (const [url, tail] of extra) {
    if (hooked.has(url) && hooked.get(url) !== tail) throw new BindingError(`${url} was bound before with other names`);
    hooked.set(url, tail);
  }
  if (hookRegistered) return;
  hookRegistered = true;
  registerHooks({
    load(url, context, nextLoad) {
      const result = nextLoad(url, context);
      const tail = hooked.get(url);
      return tail ? { ...result, source: String(result.source) + tail } : result;
    },
  });
}

/**
 * A binder for one build: `nodeModules` (URL of the folder holding the packages), `packages`
 * ({name: pinned version}; the first is the one whose `dist/` holds the chunks), `chunks`
 * ({file: sha256}) and `functions` ({name: {file, export | local, src, kind}}).
 */
export function binder({ nodeModules, packages, chunks, functions }) {
  const names = Object.keys(packages);
  const root = new URL(`${names[0]}/`, nodeModules);
  const release = packages[names[0]];

  /** Check the install and return the binding plan, or throw BindingError naming what differs. */
  function check(wanted) {
    const found = Object.fromEntries(names.map((name) => [name, versionOf(new URL(`${name}/`, nodeModules))]));
    const pinned = names.map((name) => `${name} ${packages[name]}`).join(" and ");
    const head = `replaylab binds to ${pinned}; found ${names.map((name) => `${name} ${found[name]}`).join(", ")}`;
    if (names.some((name) => found[name] !== packages[name])) throw new BindingError(`${head}.`);
    const problems = [];
    const locals = new Map();
    for (const name of wanted) {
      const where = functions[name];
      if (!where) throw new BindingError(`no binding is known for ${name}`);
      const url = new URL(`dist/${where.file}`, root);
      if (!existsSync(url)) {
        const stem = where.file.replace(/-[\w-]{8}\.m?js$/, "");
        const like = existsSync(new URL("dist/", root))
          ? readdirSync(new URL("dist/", root)).filter((f) => f.startsWith(`${stem}-`) && /\.m?js$/.test(f))
          : [];
        problems.push(`${name}: chunk dist/${where.file} is absent (chunks named ${stem}-*: ${like.join(", ") || "none"})`);
        continue;
      }
      const source = readFileSync(url, "utf8");
      const digest = createHash("sha256").update(source).digest("hex");
      if (digest !== chunks[where.file]) {
        problems.push(`${name}: dist/${where.file} has sha256 ${digest.slice(0, 16)}…, not the ${release} build's ${chunks[where.file].slice(0, 16)}…`);
        continue;
      }
      if (!definedRe(name).test(source)) problems.push(`${name}: not defined in dist/${where.file}`);
      else if (where.export && !exportRe(name, where.export).test(source)) problems.push(`${name}: dist/${where.file} does not export it as "${where.export}"`);
      else if (where.local) locals.set(where.file, [...(locals.get(where.file) ?? []), name]);
    }
    if (problems.length) throw new BindingError(`${head}; the ${release} build's functions are missing:\n  ${problems.join("\n  ")}`);
    return { found, locals };
  }

  /** Bind `wanted` (keys of `functions`): { name: value }, plus `versions`. */
  async function bind(wanted) {
    const { found, locals } = check(wanted);
    hook(
      [...locals].map(([file, list]) => [
        new URL(`dist/${file}`, root).href,
        `\n;export { ${list.map((n) => `${n} as __replaylab_${n}`).join(", ")} };\n`,
      ]),
    );
    const out = { versions: { ...found, node: process.version } };
    const modules = new Map();
    for (const name of wanted) {
      const where = functions[name];
      const href = new URL(`dist/${where.file}`, root).href;
      if (!modules.has(href)) modules.set(href, await import(href));
      const mod = modules.get(href);
      const value = where.local ? mod[`__replaylab_${name}`] : mod[where.export];
      const kind = where.kind === "class" ? "function" : where.kind === "const" ? undefined : "function";
      if (value === undefined || (kind && typeof value !== kind)) {
        throw new BindingError(`${name}: dist/${where.file} gave ${typeof value} for ${where.local ? "the appended export" : `export "${where.export}"`}`);
      }
      out[name] = value;
    }
    return out;
  }

  return { check, bind };
}
