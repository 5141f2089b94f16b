"""`replaylab init DIR`: write a commented suite for a folder of recordings.

The suite covers every pi / OpenClaw transcript under DIR that has its cassette. Files in
another format (Claude Code sessions, τ / τ²-bench results) and transcripts without a cassette
are never put in a suite as they are — replaying them would only give errors. With `--import`
they are converted first by the real importers into a folder of their own (`imported/` next to
the suite, or `--import-to`; the originals are only read, an import already there is kept), and
the suite covers the result; without it the exact `replaylab import` command is printed per file.

Exit status: 0 the suite covers every recording found; 1 the suite was written but something was
left out (a file to import, a file that is not a recording, cassettes that need a tool pack), or
nothing usable was found (no suite written); 2 usage errors (DIR missing or not a folder, the
suite file exists and `--force` was not given).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

from replaylab.commands.init_scan import NeedsImport, Scan, check_folder, scan
from replaylab.commands.init_suite import mutating_phrase, plural, render_suite
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.printable import printable
from replaylab.safety.classify import ToolClassifier
from replaylab.suite import MAX_NAME_CHARS

SUITE_FILE = "replaylab.yaml"
IMPORT_FOLDER = "imported"
#: problems printed one by one; the rest are counted
MAX_PROBLEMS = 50


def add_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("folder", type=Path, metavar="DIR", help="folder of recordings (searched recursively)")
    p.add_argument("--out", type=Path, metavar="FILE", help=f"suite file to write (default: DIR/{SUITE_FILE})")
    p.add_argument("--name", help="the suite's name (default: <DIR's name>-safeguard)")
    p.add_argument("--force", action="store_true", help="overwrite the suite file if it exists")
    p.add_argument(
        "--import",
        dest="do_import",
        action="store_true",
        help="convert foreign files and cassette-less transcripts with `replaylab import` first",
    )
    p.add_argument(
        "--import-to",
        type=Path,
        metavar="DIR",
        help=f"where --import writes, and the --out of the import commands printed without it "
        f"(default: {IMPORT_FOLDER}/ next to the suite file)",
    )
    p.add_argument("--tools", metavar="PACK", help="tool pack the recordings were made with, e.g. examples.helpdesk")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    folder: Path = args.folder
    check_folder(folder)
    if args.name is not None and not 0 < len(args.name) <= MAX_NAME_CHARS:
        raise InputError(
            [
                Diagnostic(
                    code="bad-option",
                    file="--name",
                    message=f"expected a suite name of 1 to {MAX_NAME_CHARS} characters",
                )
            ]
        )
    suite_path: Path = args.out if args.out is not None else folder / SUITE_FILE
    _check_target(suite_path, args.force)
    import_to: Path = args.import_to if args.import_to is not None else suite_path.parent / IMPORT_FOLDER
    if args.do_import:
        _check_under_folders(import_to, "--import-to", folder=True)
    base = _base_classifier(args.tools)

    found = scan(folder, base)
    imported_from: set[Path] = set()
    if args.do_import and found.needs_import:
        imported_from = _import_all(found.needs_import, import_to, found.problems)
        found = _rescan(folder, import_to, base, problems=found.problems)
        found.needs_import = [n for n in found.needs_import if n.path not in imported_from]

    _print_left_out(found, import_to, args.do_import)
    if not found.recordings:
        _print_nothing_usable(folder, found, _again_with_import(args))
        return 1
    name = (
        args.name
        if args.name is not None
        else f"{folder.resolve().name[: MAX_NAME_CHARS - 20] or 'recordings'}-safeguard"
    )
    text = render_suite(found, suite_path=suite_path, name=name, source=folder, tools=args.tools)
    _write_checked(suite_path, text)
    _print_summary(found, suite_path, args.tools)
    needs_pack = not args.tools and any(r.needs_tool_pack for r in found.recordings)
    return 1 if found.needs_import or found.problems or needs_pack else 0


def _check_under_folders(path: Path, option: str, *, folder: bool = False) -> None:
    """What `path` would be made under (and `path` itself when it is to be a `folder`) must be
    folders: a file there fails every write."""
    above = next((p for p in ([path] if folder else []) + list(path.parents) if p.exists()), None)
    if above is not None and not above.is_dir():
        raise InputError(
            [
                Diagnostic(
                    code="cannot-write",
                    file=str(path),
                    message=f"cannot be written: {above} is not a folder; choose another {option}",
                )
            ]
        )


def _check_target(suite_path: Path, force: bool) -> None:
    _check_under_folders(suite_path, "--out")
    if suite_path.is_dir():
        raise InputError(
            [Diagnostic(code="not-a-file", file=str(suite_path), message="is a folder; --out names the suite file")]
        )
    if suite_path.suffix not in (".yaml", ".yml"):
        # `pytest --replaylab` collects suites by their suffix: any other name would run nothing
        raise InputError(
            [
                Diagnostic(
                    code="not-a-suite-name",
                    file=str(suite_path),
                    message="--out names the suite file, which must end in .yaml or .yml for `pytest --replaylab` "
                    f"to collect it (e.g. --out {suite_path.with_suffix('.yaml')})",
                )
            ]
        )
    if suite_path.exists() and not force:
        raise InputError(
            [
                Diagnostic(
                    code="output-exists",
                    file=str(suite_path),
                    message="already exists; replaylab init does not overwrite it (pass --force, or --out another "
                    "file)",
                )
            ]
        )


def _base_classifier(tools: str | None) -> ToolClassifier:
    if not tools:
        return ToolClassifier()
    from replaylab.replay.tools.pack_data import pack_data_or_input_error

    return ToolClassifier.from_tool_pack(pack_data_or_input_error(tools, source="--tools"))


def _import_all(files: list[NeedsImport], import_to: Path, problems: list[Diagnostic]) -> set[Path]:
    """Run the importer of each file into `import_to`; the sources whose sessions are all there
    afterwards. A session file an earlier run wrote is kept (never overwritten); one this run
    wrote already, from another source with a session of the same name, is a problem."""
    from replaylab.importers import SessionNames, import_sessions, write_session

    done: set[Path] = set()
    written_now: dict[str, Path] = {}
    names = SessionNames()
    for item in files:
        written = kept = 0
        known = len(problems)
        try:
            # a store or a results file whose one session cannot be read still gives the others
            for session in import_sessions(item.kind, item.path, problems=problems):
                try:
                    transcript, _ = write_session(names.claim(session, item.path), import_to)
                except InputError as exc:
                    if not all(d.code == "output-exists" for d in exc.diagnostics):
                        raise
                    clash = next((written_now[d.file] for d in exc.diagnostics if d.file in written_now), None)
                    if clash is not None:
                        raise InputError([_name_clash(item.path, exc.diagnostics[0], clash)]) from None
                    kept += 1
                else:
                    written_now[str(transcript)] = item.path
                    written += 1
        except InputError as exc:
            problems.extend(exc.diagnostics)  # listed with the other problems, file and line first
            continue
        except OSError as exc:  # the import folder cannot be made or written: no later file can be either
            raise InputError(
                [
                    Diagnostic(
                        code="cannot-write",
                        file=str(import_to),
                        message=f"cannot be written: {exc.strerror or exc}; choose another --import-to",
                    )
                ]
            ) from None
        if len(problems) == known:
            done.add(item.path)
        already = f", {kept} already there (kept)" if kept else ""
        print(printable(f"imported {item.path} ({item.kind}): {plural(written, 'session')} into {import_to}{already}"))
    return done


def _name_clash(source: Path, existing: Diagnostic, first: Path) -> Diagnostic:
    return Diagnostic(
        code="import-name-clash",
        file=str(source),
        message=f"holds a session named like the one just imported from {first} ({existing.file}); "
        "import this file into a folder of its own (replaylab import ... --out OTHER)",
    )


def _rescan(folder: Path, import_to: Path, base: ToolClassifier, *, problems: list[Diagnostic]) -> Scan:
    """DIR again without the import folder, then the import folder (wherever it is); the problems
    found before (files that could not be imported) are kept."""
    found = scan(folder, base, skip=import_to)
    if import_to.is_dir():
        found.absorb(scan(import_to, base))
    seen = {str(d) for d in found.problems}
    found.problems += [d for d in problems if str(d) not in seen]
    return found


def _write_checked(suite_path: Path, text: str) -> None:
    """Write the suite through a temporary file beside it, loaded by the real loader first: a
    suite init writes and the loader refuses would be a bug, and is never left behind."""
    from replaylab.suite import load_suite

    try:
        suite_path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".replaylab-init-", suffix=".yaml", dir=suite_path.parent)
    except OSError as exc:
        raise InputError(
            [
                Diagnostic(
                    code="cannot-write",
                    file=str(suite_path),
                    message=f"cannot be written: {exc.strerror or exc}; choose another --out",
                )
            ]
        ) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        try:
            load_suite(temporary)
        except InputError as exc:
            raise RuntimeError(f"the suite init wrote does not load: {exc.diagnostics[0]}") from None
        os.replace(temporary, suite_path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _import_command(item: NeedsImport, import_to: Path) -> str:
    return f"replaylab import --from {item.kind} {shlex.quote(str(item.path))} --out {shlex.quote(str(import_to))}"


def _print_left_out(found: Scan, import_to: Path, did_import: bool) -> None:
    """What is not in the suite, and why: files that hold no session, files to import (with the
    command, unless the import was tried and its problem is listed below), then the problems,
    file and line first."""
    for path, why in found.skipped[:MAX_PROBLEMS]:
        print(printable(f"skipped {path}: {why}"), file=sys.stderr)
    if len(found.skipped) > MAX_PROBLEMS:
        print(f"… {len(found.skipped) - MAX_PROBLEMS} more skipped", file=sys.stderr)
    if found.needs_import and did_import:
        names = ", ".join(str(item.path) for item in found.needs_import[:MAX_PROBLEMS])
        print(printable(f"{plural(len(found.needs_import), 'file')} could not be imported: {names}"), file=sys.stderr)
    elif found.needs_import:
        print(
            printable(f"{plural(len(found.needs_import), 'file')} to import first (or run init again with --import):"),
            file=sys.stderr,
        )
        for item in found.needs_import:
            print(printable(f"  {item.path}: {item.why}"), file=sys.stderr)
            print(printable(f"    {_import_command(item, import_to)}"), file=sys.stderr)
    if found.problems:
        print(printable(f"{plural(len(found.problems), 'problem')}; left out of the suite:"), file=sys.stderr)
        for diagnostic in found.problems[:MAX_PROBLEMS]:
            print(printable(f"  {diagnostic}"), file=sys.stderr)
        if len(found.problems) > MAX_PROBLEMS:
            print(f"  … {len(found.problems) - MAX_PROBLEMS} more", file=sys.stderr)


def _again_with_import(args: argparse.Namespace) -> str:
    """This command line again, with --import."""
    words = ["replaylab", "init", str(args.folder)]
    for flag, value in (("--out", args.out), ("--name", args.name), ("--tools", args.tools)):
        if value is not None:
            words += [flag, str(value)]
    if args.force:
        words.append("--force")
    return shlex.join([*words, "--import"])


def _print_nothing_usable(folder: Path, found: Scan, again: str) -> None:
    if found.needs_import:
        hint = f"run the commands above, or `{again}`"
    else:
        hint = (
            "expected pi / OpenClaw transcripts (*.jsonl with <name>.cassette.yaml), Claude Code sessions "
            "or τ / τ²-bench results files"
        )
    print(printable(f"replaylab init: no usable recording in {folder}; no suite written — {hint}"), file=sys.stderr)


def _print_summary(found: Scan, suite_path: Path, tools: str | None) -> None:
    recordings = found.recordings
    turns = sum(r.user_turns for r in recordings)
    calls = sum(r.tool_calls for r in recordings)
    mutating = sum(r.mutating_calls for r in recordings)
    by_sub_agents = sum(r.sub_agent_mutating for r in recordings)
    print(
        printable(
            f"wrote {suite_path}: {plural(len(recordings), 'recording')}, {plural(turns, 'user turn')}, "
            f"{plural(calls, 'tool call')} ({mutating_phrase(mutating, by_sub_agents)})"
        )
    )
    protected = sorted(((t.mutating, n) for n, t in found.tools.items() if t.mutating), reverse=True)
    if protected:
        shown = ", ".join(f"{name} {n:,}" for n, name in protected[:8])
        more = f", … {len(protected) - 8} more" if len(protected) > 8 else ""
        print(printable(f"  mutating calls safeguard keeps: {shown}{more}"))
    within = sum(1 for r in recordings if r.turns < 2 and not r.nothing_to_compact)
    if within:
        print(
            f"  {plural(within, 'recording')} with one user turn or none: compacted within the run, before a reply "
            "after its tool results"
        )
    single = sum(1 for r in recordings if r.nothing_to_compact)
    if single:
        print(
            f"  {plural(single, 'recording')} with one user turn or none and no reply after a tool result: reported "
            "not exercised (nothing to compact)"
        )
    if not tools and any(r.needs_tool_pack for r in recordings):
        print(
            "  the cassettes recorded a service's HTTP: pass --tools PACK (the pack that recorded them), "
            "else every tool call is CASSETTE_MISSING",
            file=sys.stderr,
        )
    print(printable(f"next: pytest --replaylab {shlex.quote(str(suite_path))}"))
