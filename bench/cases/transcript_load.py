"""Loading a 100 MB transcript: structure, leaf path, diagnostics and window vs a bare orjson pass.

Floor: `orjson.loads` of every line of the same file, read line by line, results discarded —
the least any JSONL reader must do (read every byte, parse every line).

Subject (`load-100mb`, the target): `load_transcript(path, lazy=True)` — the streaming
first pass that parses and validates every line and applies every reading rule — then the leaf
path ids, the diagnostics and the models of the window (`index.window_entries()`), which is
what `inspect`/`compact()` need to rebuild the context. Targets: ≤ 3× the floor's time; peak
RSS added by the load ≤ 1.5× the file size (measured in a child process, see
`common.child_peak_rss`).

Reference (`load-100mb-eager`, no target): the eager `load_transcript(path)` plus `leaf_path()`,
which keeps every entry as a model; printed so the cost of holding everything is visible.
"""

from __future__ import annotations

from typing import Any

import orjson

from bench.cases.common import Context, check, child_peak_rss, result, round_robin
from replaylab.transcript.load import load_transcript

FULL_BYTES = 100_000_000
QUICK_BYTES = 5_000_000
TARGET_RATIO = 3.0
TARGET_RSS = 1.5


def floor_pass(path: Any) -> None:
    loads = orjson.loads
    with open(path, "rb", buffering=1 << 20) as handle:
        for line in handle:
            loads(line)


def lazy_load(path: Any) -> int:
    transcript = load_transcript(path, lazy=True)
    ids = transcript.index.leaf_path_ids()  # type: ignore[attr-defined]
    window = transcript.index.window_entries()  # type: ignore[attr-defined]
    return len(ids) + len(window) + len(transcript.diagnostics)


def eager_load(path: Any) -> int:
    transcript = load_transcript(path)
    return len(transcript.leaf_path()) + len(transcript.diagnostics)


def run(ctx: Context) -> list[dict[str, Any]]:
    info = ctx.transcript(1, target_bytes=QUICK_BYTES if ctx.quick else FULL_BYTES)
    path = info.path
    size = info.bytes
    times = round_robin(
        {"floor": lambda: floor_pass(path), "lazy": lambda: lazy_load(path), "eager": lambda: eager_load(path)},
        ctx.repeats,
    )
    imports = "from bench.cases.transcript_load import floor_pass, lazy_load, eager_load"
    rss_lazy = child_peak_rss(imports, "lazy_load(path)", path)
    rss_eager = child_peak_rss(imports, "eager_load(path)", path)
    rss_floor = child_peak_rss(imports, "floor_pass(path)", path)
    transcript = load_transcript(path, lazy=True)
    details = {
        "file_bytes": size,
        "entries": info.entries,
        "compactions": info.compactions,
        "leaf_path_entries": len(transcript.index.leaf_path_ids()),  # type: ignore[attr-defined]
        "window_entries": len(transcript.index.window_ids()),  # type: ignore[attr-defined]
        "diagnostics": len(transcript.diagnostics),
        "rss_added_bytes": rss_lazy["added_bytes"],
        "rss_floor_added_bytes": rss_floor["added_bytes"],
        "rss_method": "child process: ru_maxrss after the load minus ru_maxrss after imports",
    }
    lazy_rss_ratio = rss_lazy["added_bytes"] / size
    lazy = result(
        "load-100mb",
        f"load {size / 1e6:.0f} MB transcript: index + leaf path + "
        "diagnostics + window models (load_transcript lazy=True)",
        subject=times["lazy"],
        floor=times["floor"],
        floor_what="orjson.loads per line, streamed",
        target=f"≤ {TARGET_RATIO}× floor; peak RSS ≤ {TARGET_RSS}× file",
        checks=[
            check("ratio", statistics_ratio(times["lazy"], times["floor"]), "<=", TARGET_RATIO, "×"),
            check("rss/file", lazy_rss_ratio, "<=", TARGET_RSS, "×"),
        ],
        details=details,
    )
    eager = result(
        "load-100mb-eager",
        f"reference: eager load_transcript + leaf_path() of the same {size / 1e6:.0f} MB (every entry a model)",
        subject=times["eager"],
        floor=times["floor"],
        floor_what="orjson.loads per line, streamed",
        target="none (reference)",
        checks=[],
        details={"rss_added_bytes": rss_eager["added_bytes"], "rss_per_file_byte": rss_eager["added_bytes"] / size},
        info=True,
    )
    return [lazy, eager]


def statistics_ratio(subject: list[float], floor: list[float]) -> float:
    import statistics

    return statistics.median(subject) / statistics.median(floor)
