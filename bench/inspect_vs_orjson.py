"""How fast `replaylab inspect` loads a real transcript, against a bare orjson loop (one run).

Target: the largest real pi / OpenClaw transcript in ../shared/data (the largest `*.jsonl` whose
first line is a `session` header; the bigger τ-bench JSON and Claude Code JSONL files are not
v3 transcripts, so inspect cannot load them as such). Pass a path to measure another file.

Three timings over the same bytes, best of N (round-robin) after one warm-up, all in this process:
  floor    : split on b"\\n", `orjson.loads` each non-blank line (what any JSONL reader must do)
  load     : `load_transcript` (parse + migrate + validate + graph and pairing checks)
  inspect  : what `replaylab inspect` does per file (load + leaf path + window + token estimate
             + ledger), i.e. `inspect_transcript`, without printing.
Prints bytes/s for each and the ratios against the floor. No assertion: a benchmark, not a test.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from replaylab.commands.inspect import inspect_transcript
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.load import load_transcript

REPEATS = 15
DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def largest_transcript(root: Path) -> Path:
    candidates = []
    for path in root.resolve().rglob("*.jsonl"):
        with open(path, "rb") as handle:
            first = handle.readline()
        try:
            is_session = orjson.loads(first).get("type") == "session"
        except (orjson.JSONDecodeError, AttributeError):
            is_session = False
        if is_session:
            candidates.append((path.stat().st_size, path))
    if not candidates:
        sys.exit(f"no pi/OpenClaw transcript under {root}")
    return max(candidates)[1]


def best_of(*fns: Callable[[], object]) -> list[float]:
    """Best time of each function, measured round-robin so that load from other processes on a
    shared machine hits all of them alike (the ratio is what matters)."""
    for fn in fns:
        fn()  # warm-up: imports, caches, page cache
    best = [float("inf")] * len(fns)
    for _ in range(REPEATS):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else largest_transcript(DATA)
    size = path.stat().st_size

    def floor() -> object:
        out = []
        for line in path.read_bytes().split(b"\n"):
            if line.strip():
                try:
                    out.append(orjson.loads(line))
                except orjson.JSONDecodeError:  # a glued line: skipped, as pi does (cheaper floor)
                    pass
        return out

    def load() -> object:
        return load_transcript(path)

    def inspect() -> object:
        return inspect_transcript(load_transcript(path), ToolClassifier(), "OpenClaw rules")

    floor_s, load_s, inspect_s = best_of(floor, load, inspect)
    print(f"file     {path} ({size:,} bytes), best of {REPEATS}")
    for label, seconds in (("orjson", floor_s), ("load", load_s), ("inspect", inspect_s)):
        print(f"{label:8} {seconds * 1000:8.1f} ms  {size / seconds / 1e6:8.1f} MB/s")
    print(f"ratio    load/orjson {load_s / floor_s:.2f}x   inspect/orjson {inspect_s / floor_s:.2f}x")


if __name__ == "__main__":
    main()
