"""The overflow recovery chain on the real sessions of the shared data folder.

    python -m bench.overflow_sweep [--shared ../shared/data] [--per-source N] [--jobs 2] [--share 0.6]

Each main session (sub-agents left out) runs in the real-data sweep's scenario (safeguard, the
`replay` model, compacted once near 60 % of the session) with the agent's model given a context
window of `--share` of the session's largest request (its whole final window, by the profile's
estimate), so that the replayed agent runs into its limit and the recovery chain (guard, precheck,
compaction up to the profile's attempts, truncation once, give-up) runs. Per source: sessions,
those compacted, those whose chain went past the request-time guard, turns recovered and given up,
sessions that gave up; and every step that touched a mutating event (none may), every
RECOVERY_CHAIN_WRONG and every run error, each named.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: the agent's window as a share of the session's largest request
WINDOW_SHARE = 0.6


def run_one(job: tuple[str, str, float]) -> dict[str, Any]:
    """One session's item with the agent's window at `share` of its largest request."""
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.sweep import sweep_scenario
    from replaylab.replay.loop import window_tokens
    from replaylab.suite.schema import ContextWindow
    from replaylab.transcript import build_window, load_transcript

    source, path, share = job
    scenario, _why, _, _ = sweep_scenario(Path(path), source)
    row: dict[str, Any] = {"source": source, "session": Path(path).name, "outcome": "skipped", "chains": []}
    if scenario is None:
        return row
    largest = window_tokens(build_window(load_transcript(path).leaf_path()))
    window = ContextWindow(tokens=max(1, int(share * largest)))
    result = run_item(scenario.model_copy(update={"context_window": window}), Path(path))
    row["outcome"] = result.outcome
    row["codes"] = [d.code.value for d in result.defects]
    row["error"] = result.compacted.error if result.compacted else None
    row["chains"] = [c.model_dump() for c in (result.compacted.recovery if result.compacted else [])]
    return row


def jobs_for(sessions: list[Any], per_source: int | None, share: float = WINDOW_SHARE) -> list[tuple[str, str, float]]:
    """Every main session, or every n-th of each source up to `per_source`."""
    by_source: dict[str, list[str]] = collections.defaultdict(list)
    for session in sessions:
        if not session.child:
            by_source[session.source].append(session.path)
    jobs = []
    for source, paths in sorted(by_source.items()):
        stride = max(1, len(paths) // per_source) if per_source else 1
        picked = paths[::stride][:per_source] if per_source else paths
        jobs += [(source, p, share) for p in picked]
    return jobs


def sweep(
    sessions: list[Any], *, per_source: int | None = None, jobs: int = 2, share: float = WINDOW_SHARE
) -> list[dict[str, Any]]:
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(run_one, jobs_for(sessions, per_source, share)))


def _past_guard(chain: dict[str, Any]) -> bool:
    return any(step["kind"] != "guard" for step in chain["steps"])


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["source        sessions  compacted  met window  turns recovered  turns gave up  sessions gave up"]
    for source in [*sorted({r["source"] for r in rows}), "all"]:
        mine = [r for r in rows if source in ("all", r["source"])]
        compacted = [r for r in mine if r["outcome"] not in ("skipped", "uncompacted")]
        met = [r for r in compacted if any(_past_guard(c) for c in r["chains"])]
        recovered = sum(1 for r in mine for c in r["chains"] if not c["gave_up"] and _past_guard(c))
        gave_up = sum(1 for r in mine for c in r["chains"] if c["gave_up"])
        sessions_gave_up = sum(1 for r in mine if any(c["gave_up"] for c in r["chains"]))
        lines.append(
            f"{source:13} {len(mine):8}  {len(compacted):9}  {len(met):10}  {recovered:15}  {gave_up:13}  "
            f"{sessions_gave_up:16}"
        )
    return "\n".join(lines)


def touched_mutating(rows: list[dict[str, Any]]) -> list[tuple[str, int, str, list[str]]]:
    """(session, turn, step, mutating entry ids) of every recovery step that touched a mutating event."""
    return [
        (r["session"], c["turn"], s["kind"], s["mutating_entry_ids"])
        for r in rows
        for c in r["chains"]
        for s in c["steps"]
        if s["mutating_entry_ids"]
    ]


def give_up_kinds(rows: list[dict[str, Any]]) -> collections.Counter[str]:
    return collections.Counter(str(c["gave_up"]) for r in rows for c in r["chains"] if c["gave_up"])


def main(argv: list[str] | None = None) -> int:
    from replaylab.qa.sweep import import_shared_data

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--per-source", type=int, default=None, help="at most N sessions per source (default: all)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--share", type=float, default=WINDOW_SHARE, help="the window as a share of the largest request"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="replaylab-overflow-") as scratch:
        sessions = import_shared_data(args.shared, Path(scratch))
        rows = sweep(sessions, per_source=args.per_source, jobs=args.jobs, share=args.share)
    print(table(rows))
    print(f"\ngive-ups by kind: {dict(give_up_kinds(rows))}")
    for title, items in (
        ("steps that touched a mutating event", touched_mutating(rows)),
        ("RECOVERY_CHAIN_WRONG", [r["session"] for r in rows if "RECOVERY_CHAIN_WRONG" in r.get("codes", [])]),
        ("run errors", [f"{r['session']}: {r['error']}" for r in rows if r.get("error")]),
    ):
        print(f"\n{title}: {len(items)}")
        for item in items:
            print(f"- {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
