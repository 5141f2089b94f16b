// One scratch folder for all of a process's requests, emptied before each: creating and removing
// a folder is a journaled metadata change, on some file systems (mounted with `discard`) several
// times what the request's own file costs; the folder goes when node exits.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const folders = new Map();

export function scratchFolder(prefix) {
  let folder = folders.get(prefix);
  if (folder === undefined) {
    folder = mkdtempSync(join(tmpdir(), prefix));
    folders.set(prefix, folder);
    process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
  }
  emptied(folder); // a request that failed midway leaves nothing to the next one
  return folder;
}

export function emptied(folder) {
  for (const name of readdirSync(folder)) rmSync(join(folder, name), { recursive: true, force: true });
}
