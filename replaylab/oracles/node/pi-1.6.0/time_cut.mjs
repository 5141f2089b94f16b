// pi 1.6.0's own load (SessionManager.open) and prepareCompaction at the file's leaf, timed
// (protocol: ../time_cut.mjs).
import { bindPi, serveCuts } from "../time_cut.mjs";

const PACKAGE = "@earendil-works/pi-coding-agent";
await serveCuts(bindPi(new URL(`./node_modules/${PACKAGE}/`, import.meta.url), PACKAGE, "nothing-to-summarize"));
