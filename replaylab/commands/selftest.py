"""`replaylab selftest`: the mutation score — seeded real-world compaction bugs vs replaylab's checks.

Runs the unmodified compactor and every mutant (the seeded ones shipped in `replaylab/mutants` by
default, or `--mutants DIR`) over the bundled recordings (the scenario of `suites/safeguard.yaml`)
and, with `--realdata`, over a sample of the real sessions in `../shared/data` (imported into a
temporary folder, each with the real-session sweep's scenario) — with `--compactor SPEC` on the
output of the user's compactor instead of replaylab's — and prints per mutant the codes
found, the expected ones, and on how many sessions it was caught. Exit status: 0 every mutant
caught and the baseline clean, 1 otherwise, 2 usage error.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic, InputError

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = REPO / "suites" / "safeguard.yaml"
#: real-data scenario step for the selftest: roomy enough that the unmodified compactor is clean on
#: the sampled sessions (the sweep's first, tighter step loses file-read text on some of them)
REALDATA_STEP = (0.75, 1.0)


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "Replay every recording with the unmodified compactor and with each seeded mutant (a real upstream "
            "compaction bug), and print the mutation score: per mutant the defect codes found, the expected ones, "
            "and on how many sessions it was caught. Exit status: 0 all caught and the baseline clean, 1 not, "
            "2 usage error."
        ),
    )
    p.add_argument(
        "--mutants",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of your own mutant modules (default: the seeded mutants shipped with replaylab)",
    )
    p.add_argument(
        "--suite",
        type=Path,
        default=DEFAULT_SUITE,
        metavar="SUITE.yaml",
        help="suite whose first scenario (and recordings) to use (default: suites/safeguard.yaml)",
    )
    p.add_argument(
        "--recordings",
        default=None,
        metavar="GLOB",
        help="replace the suite's recordings by these transcripts (the suite's scenario is kept)",
    )
    p.add_argument(
        "--realdata",
        type=Path,
        default=None,
        metavar="PATH",
        help="also run over real sessions imported from this folder (e.g. ../shared/data)",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=4,
        metavar="N",
        help="real sessions per source: the N largest (default 4; 0 = every session)",
    )
    p.add_argument(
        "--compactor",
        default=None,
        metavar="SPEC",
        help="put your compactor under test: python:package.module:callable, command:ARGV, pi or openclaw (as "
        "--replaylab-compactor); the baseline is it unmodified, each mutant breaks its output",
    )
    p.add_argument("--only", nargs="*", default=None, metavar="NAME", help="run only these mutants")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from replaylab.selftest import format_table, run_selftest

    compactor = compactor_spec(args.compactor)
    items = suite_items(args.suite, args.recordings)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="replaylab-selftest-") as scratch:
        if args.realdata is not None:
            real, note = realdata_items(args.realdata, Path(scratch), args.sample)
            items += real
            notes.append(note)
        report = run_selftest(
            items, mutants_dir=args.mutants, only=args.only, jobs=max(1, args.jobs), compactor=compactor, cwd=Path.cwd()
        )
    report.notes.extend(notes)
    if args.json:
        json.dump(report.model_dump(), sys.stdout, indent=2)
        print()
    else:
        print(format_table(report))
        for row in report.rows:
            for miss in row.missed_on[:5]:
                print(f"  {row.mutant}: {'blocking' if row.status == 'BLOCKING' else 'not caught'} on {miss}")
    return 0 if report.ok else 1


def compactor_spec(text: str | None) -> Any:
    """`--compactor`'s spec (None: replaylab's own); a bad one is a usage error naming it."""
    if text is None:
        return None
    from replaylab.compactors.spec import parse_option

    try:
        return parse_option(text)
    except ValueError as exc:
        raise InputError(
            [Diagnostic(code="selftest-compactor", file=text, field="--compactor", message=str(exc))]
        ) from None


def suite_items(suite_path: Path, recordings: str | None) -> list[tuple[Any, Path]]:
    from replaylab.suite import load_suite

    suite = load_suite(suite_path)
    scenario = suite.scenarios[0]
    files = suite.recordings
    if recordings:
        files = sorted(Path(p) for p in glob.glob(recordings) if p.endswith(".jsonl") and ".sub-" not in p)
        if not files:
            raise InputError(
                [
                    Diagnostic(
                        code="selftest-recordings",
                        file=recordings,
                        field="--recordings",
                        message="matches no .jsonl transcript",
                    )
                ]
            )
    return [(scenario, f) for f in files]


def realdata_items(shared: Path, scratch: Path, sample: int) -> tuple[list[tuple[Any, Path]], str]:
    """The `sample` largest real sessions per source (0: all), each with the sweep's scenario."""
    from replaylab.qa.sweep import import_shared_data, sweep_scenario

    if not shared.is_dir():
        raise InputError(
            [
                Diagnostic(
                    code="selftest-realdata",
                    file=str(shared),
                    field="--realdata",
                    message="no such folder; expected the shared data folder (../shared/data)",
                )
            ]
        )
    sessions = [s for s in import_shared_data(shared, scratch) if not s.child]
    items: list[tuple[Any, Path]] = []
    by_source: dict[str, list] = {}
    for session in sessions:
        by_source.setdefault(session.source, []).append(session)
    for source, group in by_source.items():
        group.sort(key=lambda s: -Path(s.path).stat().st_size)
        for session in group[:sample] if sample else group:
            scenario, _, _, _ = sweep_scenario(Path(session.path), source, REALDATA_STEP)
            if scenario is not None:
                items.append((scenario, Path(session.path)))
    what = "every real session" if not sample else f"a sample: the {sample} largest real sessions per source"
    return items, (
        f"real data: {what} ({len(items)} with a compaction point), budget {REALDATA_STEP[0]:.0%} of the window"
    )
