// pi 0.73.1's own load (SessionManager.open) and prepareCompaction at the file's leaf, timed
// (protocol: ../time_cut.mjs).
import { bindPi, serveCuts } from "../time_cut.mjs";

const PACKAGE = "@mariozechner/pi-coding-agent";
await serveCuts(bindPi(new URL(`./node_modules/${PACKAGE}/`, import.meta.url), PACKAGE, "nothing"));
