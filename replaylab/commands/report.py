"""`replaylab report merge|render`: one report out of CI shards, or re-render a stored report.

    replaylab report merge reports-*/replaylab.json --out reports/   # shell-expanded or quoted glob
    replaylab report render reports/replaylab.json --out /tmp/view/

Both write replaylab.html, replaylab.json and replaylab.md. Every user error (no such file, bad
JSON, another schema version, overlapping shards, a missing shard with `--expect-shards`, an
unwritable --out) is an `InputError`
naming the file or directory: exit 2, no traceback. `merge --check` exits 1 when the merged run
has failed or erroring sessions, and 6 (as the plugin does) when it exercised nothing, unless
`--allow-nothing-exercised`, so the merge job can be the CI gate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import DIRECTORY, MISSING, REGULAR, kind_of, phrase
from replaylab.printable import printable
from replaylab.suite.recording_glob import GlobProblem, expand

GLOB_CHARS = set("*?[")


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description="Merge CI shard reports into one report, or re-render a stored report. "
        "Both write replaylab.html, replaylab.json and replaylab.md.",
    )
    p.set_defaults(run=run)
    sub = p.add_subparsers(dest="report_command", metavar="ACTION")
    sub.required = True
    merge = sub.add_parser(
        "merge",
        help="merge shard reports (replaylab.json files) into one report",
        description="Merge CI shard reports: items sorted by id, totals recomputed, "
        "meta.shards filled. Globs are expanded here too when quoted.",
    )
    merge.add_argument("reports", nargs="+", metavar="JSON", help="shard replaylab.json files or glob patterns")
    merge.add_argument("--out", required=True, type=Path, metavar="DIR", help="directory for the merged reports")
    merge.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when any merged session failed or errored, 6 when none was exercised (a CI gate)",
    )
    merge.add_argument(
        "--allow-nothing-exercised",
        action="store_true",
        help="with --check: a merged run that exercised nothing passes the gate instead of exiting 6",
    )
    merge.add_argument(
        "--expect-shards",
        type=int,
        metavar="N",
        help="fail unless exactly N reports are merged (a crashed shard must not vanish silently)",
    )
    render = sub.add_parser(
        "render",
        help="re-render HTML / JSON / markdown from a replaylab.json",
        description="Re-render a stored replaylab.json (e.g. after a replaylab upgrade "
        "within the same schema version).",
    )
    render.add_argument("report", metavar="JSON", help="a replaylab.json")
    render.add_argument("--out", required=True, type=Path, metavar="DIR", help="directory for the reports")
    return p


def run(args: argparse.Namespace) -> int:
    from replaylab.report import ReportWriteError, write_reports
    from replaylab.report.counts import expected_phrase, unexpected_phrase
    from replaylab.report.merge import MergeError, load_report, merge_reports
    from replaylab.report.run import NOTHING_EXERCISED_EXIT, nothing_exercised

    if args.report_command == "merge":
        paths = expand_inputs(args.reports)
        if args.expect_shards is not None and len(paths) != args.expect_shards:
            raise InputError(
                [
                    Diagnostic(
                        code="REPORT_MERGE",
                        file=" ".join(args.reports),
                        field="--expect-shards",
                        message=f"expected {args.expect_shards} shard reports, found {len(paths)}: "
                        + (", ".join(str(p) for p in paths) or "none"),
                    )
                ]
            )
        reports = [load_report(path) for path in paths]
        try:
            report = merge_reports(reports, labels=[str(p) for p in paths])
        except MergeError as exc:
            raise InputError(
                [Diagnostic(code="REPORT_MERGE", file=", ".join(str(p) for p in paths), message=str(exc))]
            ) from None
        action = f"merged {len(paths)} reports"
    else:
        path = Path(args.report)
        report = load_report(path)
        action = f"re-rendered {path}"
    try:
        written = write_reports(report, args.out)
    except ReportWriteError as exc:
        raise InputError(
            [
                Diagnostic(
                    code="REPORT_WRITE",
                    file=str(exc.directory),
                    field="--out",
                    message=f"cannot write the reports here: {exc.strerror}"
                    + (f" ({exc.cause.filename})" if exc.cause.filename else "")
                    + "; expected a writable directory",
                )
            ]
        ) from None
    t = report.totals
    print(
        printable(
            f"{action}: {t.items} items, {t.passed} passed, {t.failed} failed, {t.error} error, "
            f"{t.uncompacted} cannot compact, {t.skipped} not exercised, "
            f"{unexpected_phrase(t)}" + (f", {expected_phrase(t)}" if t.expected_defects else "")
        )
    )
    for path in written.values():
        print(printable(f"  wrote {path}"))
    if args.report_command != "merge" or not args.check:
        return 0
    if t.failed or t.error or t.uncompacted:
        return 1
    if nothing_exercised(t) and not args.allow_nothing_exercised:
        print(
            printable(
                f"replaylab: NOTHING EXERCISED: none of {t.items} merged sessions was compacted and compared; "
                f"exit status {NOTHING_EXERCISED_EXIT} (allow it with --allow-nothing-exercised)"
            ),
            file=sys.stderr,
        )
        return NOTHING_EXERCISED_EXIT
    return 0


def expand_inputs(patterns: list[str]) -> list[Path]:
    """Existing files as given; patterns with glob characters expanded (sorted, without following
    link loops: `recording_glob`); duplicates dropped."""
    paths: list[Path] = []
    problems: list[Diagnostic] = []
    for pattern in patterns:
        kind = kind_of(pattern)
        if kind == REGULAR:
            matches = [pattern]
        elif kind not in (MISSING, DIRECTORY):
            problems.append(
                Diagnostic(
                    code="REPORT_NOT_FOUND", file=pattern, message=f"{phrase(kind)}; expected a replaylab.json file"
                )
            )
            matches = []
        elif GLOB_CHARS & set(pattern):
            try:
                found = expand(pattern)
            except GlobProblem as exc:
                problems.append(Diagnostic(code="REPORT_NOT_FOUND", file=pattern, message=f"{exc}"))
                found = []
            matches = sorted(m for m in found if kind_of(m) == REGULAR)
            if not matches:
                problems.append(
                    Diagnostic(
                        code="REPORT_NOT_FOUND",
                        file=pattern,
                        message="no file matches this pattern; expected shard replaylab.json files",
                    )
                )
        else:
            what = "is a directory" if Path(pattern).is_dir() else "does not exist"
            problems.append(
                Diagnostic(code="REPORT_NOT_FOUND", file=pattern, message=f"{what}; expected a replaylab.json file")
            )
            matches = []
        for match in matches:
            path = Path(match)
            if path not in paths:
                paths.append(path)
    if problems:
        raise InputError(problems)
    return paths
