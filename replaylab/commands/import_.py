"""`replaylab import --from KIND SRC... --out DIR`: convert recorded sessions to v3 + cassettes.

Prints one line per session written (its entries and tool calls), the notes an importer made
about its source (broken lines, skipped files, calls without results), each problem as it is found
(a source, or a file of a folder, that cannot be imported; a session whose files exist already:
each with its file and what was expected) and the totals. Every session that can be written is: exit 0 when
everything was, 2 when there was a problem.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from replaylab.importers import KINDS, ImportedSession, SessionNames, import_sessions, write_session
from replaylab.printable import printable


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description="Convert recorded sessions into pi/OpenClaw v3 transcripts (<name>.jsonl) plus a vcrpy "
        "cassette synthesized from the recorded tool results (<name>.cassette.yaml), and merge "
        "the tools' classes into DIR/tool_classes.json. Existing files are never overwritten. A session "
        "is named after its source file; one named like a session an earlier SRC gave is named after "
        "its own folder too (<folder>-<name>), the same way on every run. Every "
        "session that can be imported is: a file of a folder that is not a session of this kind, a bad "
        "record of a results file, a missing SRC and a session whose files exist already are each "
        "printed with file, line and field. Exit 0 when everything was imported, 2 when there was a problem.",
    )
    p.add_argument("--from", dest="kind", required=True, choices=KINDS, help="source format")
    p.add_argument("src", nargs="+", type=Path, metavar="SRC", help="source file or folder")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder (created if missing)")
    p.add_argument(
        "--tool-classes",
        type=Path,
        metavar="FILE",
        help="tool_classes.json to use instead of the one found next to the source",
    )
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Every session the sources hold is written; a source (or a file of a folder) that cannot be
    imported, or a session whose files exist already, is printed as its problem (file, line,
    field) as it is found, and the others still go on, the exit status 2 when there was any."""
    from replaylab.diagnostics import Diagnostic, InputError
    from replaylab.importers.common import load_tool_classes

    if args.tool_classes is not None:
        load_tool_classes(args.tool_classes)  # unreadable: every session would say so; said once
    problems: list[Diagnostic] = []
    shown = 0

    def show_new_problems() -> None:  # as they are found: a long import is not silent about them
        nonlocal shown
        for problem in problems[shown:]:
            print(problem, file=sys.stderr)
        shown = len(problems)

    sessions = entries = calls = 0
    names = SessionNames()
    for src in args.src:
        try:
            for session in import_sessions(args.kind, src, tool_classes=args.tool_classes, problems=problems):
                show_new_problems()
                session = names.claim(session, src)
                try:
                    transcript, _ = write_session(session, args.out)
                except InputError as exc:  # its files exist already: the folder's other sessions still go
                    problems.extend(exc.diagnostics)
                    show_new_problems()
                    continue
                n_entries, n_calls, n_sessions = _counts(session)
                sessions += n_sessions
                entries += n_entries
                calls += n_calls
                children = f" (+{n_sessions - 1} sub-agent sessions)" if n_sessions > 1 else ""
                print(printable(f"wrote {transcript}: {n_entries} entries, {n_calls} tool calls{children}"))
                for note in _notes(session):
                    print(printable(f"  note: {note}"), file=sys.stderr)
        except InputError as exc:  # the source itself: missing, or nothing in it to import
            problems.extend(exc.diagnostics)
        show_new_problems()
    not_imported = f"; {len(problems)} problem{'s' if len(problems) != 1 else ''} (above)" if problems else ""
    print(
        printable(f"imported {sessions} sessions, {entries} entries, {calls} tool calls into {args.out}{not_imported}")
    )
    return 2 if problems else 0


def _counts(session: ImportedSession) -> tuple[int, int, int]:
    entries, calls, sessions = len(session.entries), session.tool_call_count(), 1
    for child in session.children:
        e, c, s = _counts(child)
        entries, calls, sessions = entries + e, calls + c, sessions + s
    return entries, calls, sessions


def _notes(session: ImportedSession) -> list[str]:
    out = list(session.notes)
    for child in session.children:
        out.extend(_notes(child))
    return out
