"""What safeguard's guarantee costs: its savings against auto on the same cuts, verified by pi.

    python -m bench.safeguard_savings [--shared ../shared/data]

Safeguard keeps every mutating event where pi keeps anything: its cut moves back before the first
protected entry it would otherwise summarize. So it saves less than auto (pi's plain compaction)
wherever a mutation happens early. Measured here on real sessions, at the same settings for both
modes:

* the five real Claude Code compactions (`claude-code-spotter`): each session compacted at the
  point where Claude Code itself compacted it, with OpenClaw's defaults (contextTokens 200,000,
  reserve 20,000, keepRecentTokens 20,000);
* every τ²-bench session, at the real-session sweep's scenario (`replaylab.qa.sweep`).

Per row: tokens before and after, protected entries kept, whether pi's own context of the working
copy equals replaylab's `compactedWindow` ("pi ✓"), and the failure when a mode did not compact.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

from replaylab.compaction import CompactParams, compact
from replaylab.oracles.compare import message_as_pi_holds_it
from replaylab.oracles.pi import PiOracle, oracle_unavailable
from replaylab.qa.sweep import import_shared_data, sweep_scenario
from replaylab.transcript import load_transcript
from replaylab.transcript.model import CompactionEntry
from replaylab.upstream.openclaw_2026_4_12 import DEFAULT_CONTEXT_TOKENS, DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR
from replaylab.upstream.pi_0_73_1 import PI_KEEP_RECENT_TOKENS

REPO = Path(__file__).resolve().parents[1]
MODES = ("auto", "safeguard")


def pi_agrees(pi: PiOracle | None, result: Any) -> bool | None:
    if pi is None or not result.success:
        return None
    view = pi.view(Path(result.working_copy))
    ours = [(i["entryId"], message_as_pi_holds_it(i["message"])) for i in result.compacted_window]
    return ours == [(m.entry_id, message_as_pi_holds_it(m.message)) for m in view.context]


def run(params: dict[str, Any], folder: Path, pi: PiOracle | None) -> dict[str, dict[str, Any]]:
    out = {}
    for mode in MODES:
        copy = Path(tempfile.mkdtemp(dir=folder)) / Path(params["session_file"]).name
        result = compact(CompactParams(**params, compaction_mode=mode, working_copy=str(copy)))
        out[mode] = {
            "before": result.original_token_count,
            "after": result.compacted_token_count if result.success else None,
            "protected": len(result.protected_entry_ids),
            "pi": pi_agrees(pi, result),
            "failure": result.failure,
        }
    return out


def claude_code_rows(imported: Path, folder: Path, pi: PiOracle | None) -> list[tuple[str, dict]]:
    rows = []
    for path in sorted((imported / "claude-code").glob("*.jsonl")):
        transcript = load_transcript(path)
        compactions = [e for e in transcript.entries if isinstance(e, CompactionEntry)]
        if not compactions or ".sub-" in path.name:
            continue
        params = {
            "session_file": str(path),
            "leaf_id": compactions[0].parent_id,  # where Claude Code compacted the session itself
            "context_tokens": DEFAULT_CONTEXT_TOKENS,
            "reserve_tokens_floor": DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR,
            "keep_recent_tokens": PI_KEEP_RECENT_TOKENS,
        }
        rows.append((path.name[:8], run(params, folder, pi)))
    return rows


def tau2_rows(imported: Path, folder: Path, pi: PiOracle | None) -> list[tuple[str, dict]]:
    rows = []
    for path in sorted((imported / "tau2-bench").glob("*.jsonl")):
        scenario, *_ = sweep_scenario(path, "tau2-bench")
        if scenario is None:
            continue
        c = scenario.compaction
        transcript = load_transcript(path)
        point = int(scenario.compact_at.split(":")[1]) - 1
        from replaylab.replay import split_turns

        turns = split_turns(transcript.leaf_path())
        leaf = transcript.leaf_path()[transcript.leaf_path().index(turns[point].inputs[0]) - 1].id
        params = {
            "session_file": str(path),
            "leaf_id": leaf,
            "context_tokens": c.context_tokens,
            "reserve_tokens_floor": c.reserve_tokens_floor,
            "keep_recent_tokens": c.keep_recent_tokens,
        }
        rows.append((path.stem[-8:], run(params, folder, pi)))
    return rows


def cell(mode: dict[str, Any]) -> str:
    if mode["after"] is None:
        return f"— ({mode['failure']})"
    saved = 1 - mode["after"] / mode["before"] if mode["before"] else 0
    pi = {True: " pi ✓", False: " pi ✗", None: ""}[mode["pi"]]
    return f"{mode['before']:,} → {mode['after']:,} ({saved:.0%}){pi}"


def print_tau2(rows: list[dict[str, dict[str, Any]]]) -> None:
    both = [r for r in rows if all(r[m]["after"] is not None for m in MODES)]
    print(f"| τ²-bench, {len(rows)} sessions at the sweep's budgets | auto | safeguard |")
    print("|---|---|---|")
    print("| compacted | " + " | ".join(str(sum(r[m]["after"] is not None for r in rows)) for m in MODES) + " |")
    medians = [statistics.median(1 - r[m]["after"] / r[m]["before"] for r in both) if both else 0.0 for m in MODES]
    print(f"| median saving where both compacted ({len(both)}) | " + " | ".join(f"{x:.1%}" for x in medians) + " |")
    print(
        "| pi's context = compactedWindow | "
        + " | ".join(
            f"{sum(1 for r in rows if r[m]['pi'])}/{sum(r[m]['after'] is not None for r in rows)}" for m in MODES
        )
        + " |"
    )
    print("| protected entries kept | 0 | " + str(sum(r["safeguard"]["protected"] for r in rows)) + " |")
    failures = [
        ", ".join(
            f"{kind}: {n}"
            for kind, n in sorted(
                {f: sum(1 for r in rows if r[m]["failure"] == f) for f in {r[m]["failure"] for r in rows} if f}.items()
            )
        )
        or "none"
        for m in MODES
    ]
    print("| not compacted | " + " | ".join(failures) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args(argv)
    reason = oracle_unavailable()
    pi = PiOracle() if reason is None else None
    if reason:
        print(f"(pi not verified: {reason})")
    with tempfile.TemporaryDirectory(prefix="replaylab-savings-") as scratch:
        folder = Path(scratch)
        import_shared_data(args.shared, folder / "imported")
        print("| Claude Code session | auto: tokens before → after | safeguard: tokens before → after | protected |")
        print("|---|---|---|---|")
        for name, row in claude_code_rows(folder / "imported", folder, pi):
            print(f"| {name} | {cell(row['auto'])} | {cell(row['safeguard'])} | {row['safeguard']['protected']} |")
        tau2 = [row for _, row in tau2_rows(folder / "imported", folder, pi)]
        print()
        print_tau2(tau2)
    if pi is not None:
        pi.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
