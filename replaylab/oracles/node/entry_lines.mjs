// The 1-based file line of each entry a pi-family agent kept, in order: pi reads the lines that
// parse, the header first (v1/v2 files get fresh random ids from its migration, so only their
// lines are stable). Shared by the pi oracles and the timing harness (time_cut.mjs).
// Whether a window request names a leaf by its file line, which then needs the lines numbered
// even when the answer leaves the entries out ("entries": false).
export function namesLines(request) {
  return Array.isArray(request.leaves) && request.leaves.some((leaf) => leaf !== null && typeof leaf === "object");
}

export function entryLines(text) {
  const lines = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const value = JSON.parse(line);
      if (value && value.type !== "session") lines.push(i + 1);
    } catch {
      // pi skips it too
    }
  });
  return lines;
}
