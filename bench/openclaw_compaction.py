"""OpenClaw 2026.9.6's own compaction against replaylab's safeguard, on the same sessions.

    python -m bench.openclaw_compaction [--shared ../shared/data] [--jobs 2] [--sample N] [--out FILE]

Each session goes through the full QA pipeline (`run_item`, `replay` model) twice with one
scenario: once with replaylab's own safeguard compactor, once with `compactor: openclaw` (OpenClaw's
safeguard mode). The helpdesk recordings take the scenario of `suites/openclaw-compaction.yaml`
(its expectations left out: every defect counts); the real sessions of `../shared/data` (imported
into a scratch folder by replaylab's importers; the originals are only read) take the real-session
sweep's (`qa.sweep.sweep_scenario`: compacted before the turn near 60 %, half the window as budget).
Per session: each run's outcome and defect codes, and per OpenClaw compaction whether it compacted,
cancelled (its quality guard), failed or refused, and whether the window OpenClaw reported (its own
rebuild, `iterateSessionContextEntries`) is the one replaylab builds from the working copy. The
table and the totals are printed; the rows go to `--out` (default reports/openclaw-compaction.json).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO / "suites" / "openclaw-compaction.yaml"


@dataclass
class Row:
    source: str
    session: str
    ours: str = ""
    ours_codes: dict[str, int] = field(default_factory=dict)
    openclaw: str = ""
    openclaw_codes: dict[str, int] = field(default_factory=dict)
    #: OpenClaw's compactions: compacted / cancelled / failed (by kind) / skipped
    compactions: dict[str, int] = field(default_factory=dict)
    windows_checked: int = 0
    windows_equal: int = 0
    ours_lost_identifiers: int = 0
    openclaw_lost_identifiers: int = 0
    reason: str = ""
    seconds: float = 0.0


class Observed:
    """The OpenClaw compactor, unchanged, that counts what each of its compactions gave and checks
    the window it reported against the one replaylab builds from the working copy."""

    def __init__(self, cwd: Path):
        from replaylab.compactors.external import ExternalCompactor, SourceStates
        from replaylab.compactors.spec import OpenClawCompactor

        self.compactor = ExternalCompactor(OpenClawCompactor(), SourceStates(()), cwd)
        self.counts: Counter[str] = Counter()
        self.checked = self.equal = 0

    def __call__(self, params: Any, *, classifier: Any = None, writer: Any = None) -> Any:
        from replaylab.transcript import build_window, load_transcript

        result = self.compactor(params, classifier=classifier, writer=writer)
        if result.success:
            self.counts["compacted"] += 1
            path = load_transcript(Path(params.session_file)).path_to(result.compaction_event_id)
            self.checked += 1
            self.equal += [w["entryId"] for w in result.compacted_window] == [w.entry_id for w in build_window(path)]
        elif result.failure == "cancelled":
            self.counts["cancelled"] += 1
        else:
            kinds = [d.detail.get("kind") for d in result.findings]
            self.counts[f"failed:{kinds[0] if kinds else result.failure}"] += 1
        return result


def _lost(result: Any) -> int:
    return sum(len(d.actual or []) for d in result.defects if d.code.value == "IDENTIFIER_LOST")


def compare_one(job: tuple[str, str, Any]) -> Row:
    """One session: replaylab's safeguard, then OpenClaw's, on the same scenario."""
    from replaylab.compactors.spec import OpenClawCompactor
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    source, path_text, scenario = job
    path = Path(path_text)
    started = time.perf_counter()
    row = Row(source=source, session=path.name.removesuffix(".jsonl"))
    if scenario is None:
        from replaylab.qa.sweep import sweep_scenario

        scenario, row.reason, _, _ = sweep_scenario(path, source)
        if scenario is None:
            row.ours = row.openclaw = "skipped"
            return row
    ours = run_item(scenario, path, RunOptions(verify_with_pi="off"))
    observed = Observed(path.parent)
    theirs = run_item(
        scenario.model_copy(update={"compactor": OpenClawCompactor()}),
        path,
        RunOptions(compactor=observed, verify_with_pi="off"),
    )
    row.ours, row.openclaw = ours.outcome, theirs.outcome
    row.ours_codes = dict(Counter(d.code.value for d in ours.defects))
    row.openclaw_codes = dict(Counter(d.code.value for d in theirs.defects))
    row.compactions = dict(observed.counts)
    row.windows_checked, row.windows_equal = observed.checked, observed.equal
    row.ours_lost_identifiers, row.openclaw_lost_identifiers = _lost(ours), _lost(theirs)
    row.reason = "" if theirs.outcome == "passed" else (theirs.reason or "")[:300]
    row.seconds = round(time.perf_counter() - started, 2)
    return row


def jobs_for(shared: Path | None, scratch: Path, sample: int) -> list[tuple[str, str, Any]]:
    from replaylab.suite import Expectations, load_suite

    suite = load_suite(SUITE)
    helpdesk = suite.scenarios[0].model_copy(update={"compactor": None, "expect": Expectations(), "per_recording": {}})
    jobs: list[tuple[str, str, Any]] = [("helpdesk", str(r), helpdesk) for r in suite.recordings]
    if shared is not None:
        from replaylab.qa.sweep import import_shared_data

        sessions = import_shared_data(shared, scratch)
        by_source: dict[str, list[Any]] = {}
        for session in sessions:
            by_source.setdefault(session.source, []).append(session)
        for source, found in by_source.items():
            found.sort(key=lambda s: -Path(s.path).stat().st_size)
            jobs += [(source, s.path, None) for s in (found[:sample] if sample else found)]
    return jobs


def totals(rows: list[Row]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source in dict.fromkeys(r.source for r in rows):
        mine = [r for r in rows if r.source == source]
        compactions: Counter[str] = Counter()
        for row in mine:
            compactions.update(row.compactions)
        out[source] = {
            "sessions": len(mine),
            "ours": dict(Counter(r.ours for r in mine)),
            "openclaw": dict(Counter(r.openclaw for r in mine)),
            "openclaw_compactions": dict(compactions),
            "windows_equal_to_openclaws_rebuild": (
                f"{sum(r.windows_equal for r in mine)}/{sum(r.windows_checked for r in mine)}"
            ),
            "mutation_dropped": {
                "ours": sum(r.ours_codes.get("MUTATION_DROPPED", 0) for r in mine),
                "openclaw": sum(r.openclaw_codes.get("MUTATION_DROPPED", 0) for r in mine),
                "openclaw_sessions": sum(1 for r in mine if r.openclaw_codes.get("MUTATION_DROPPED")),
            },
            "identifiers_lost": {
                "ours": sum(r.ours_lost_identifiers for r in mine),
                "openclaw": sum(r.openclaw_lost_identifiers for r in mine),
                "ours_sessions": sum(1 for r in mine if r.ours_lost_identifiers),
                "openclaw_sessions": sum(1 for r in mine if r.openclaw_lost_identifiers),
            },
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.openclaw_compaction", description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=None, help="also the real sessions of this folder")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=0, help="the N largest sessions per source (0: every one)")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "openclaw-compaction.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="replaylab-openclaw-bench-") as scratch:
        jobs = jobs_for(args.shared, Path(scratch), args.sample)
        if args.jobs > 1:
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                rows = list(pool.map(compare_one, jobs))
        else:
            rows = [compare_one(job) for job in jobs]
    report = {
        "seconds": round(time.perf_counter() - started, 1),
        "totals": totals(rows),
        "rows": [asdict(r) for r in rows],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    for row in rows:
        print(
            f"{row.source:12} {row.session[:40]:40} ours {row.ours:11} {row.ours_codes} | openclaw {row.openclaw:11} "
            f"{row.openclaw_codes} {row.compactions} windows {row.windows_equal}/{row.windows_checked}"
        )
    print(json.dumps(report["totals"], indent=1))
    print(f"{len(rows)} sessions in {report['seconds']} s; rows in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
