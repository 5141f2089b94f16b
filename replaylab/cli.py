"""`replaylab` command line: a thin dispatcher over `replaylab.commands.<name>` modules.

Each command module defines `add_parser(subparsers, name, help_text)` and `run(args) -> int`; it is
imported only when its command runs (or for `replaylab --help`), and imports its heavy dependencies
inside `run`, so `replaylab --help` stays fast and never imports litellm.

A command module that cannot be imported is a broken install, not a missing command: the command
and the exception are named on stderr and the exit status says so.
Exit status: 0 clean, 1 problems found, 2 usage error (argparse's convention) or any other error a
user sees (`replaylab.errors.ReplaylabError`: a missing oracle, a model or compactor that failed,
a report that cannot be written — one line says what and what to do), 3 a command's module failed to
import or a command failed in a way no input should cause (pytest's code for an internal error; one
line names the exception and where it was raised, never a traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from replaylab import __version__
from replaylab.diagnostics import InputError
from replaylab.errors import ReplaylabError
from replaylab.printable import printable

BROKEN_INSTALL = 3
#: stdout's reader closed the pipe early: what a command killed by SIGPIPE reports to its shell
READER_GONE = 141
#: an exception no input should cause (a bug): pytest's code for an internal error too
INTERNAL_ERROR = 3

#: command name → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": (
        "replaylab.commands.init",
        "write a commented suite for a folder of recordings (importing them with --import)",
    ),
    "inspect": ("replaylab.commands.inspect", "summarize transcripts: entries, tokens, mutating events, diagnostics"),
    "import": (
        "replaylab.commands.import_",
        "convert τ-bench / τ²-bench / Claude Code / pi / OpenAI chat sessions to v3 + cassettes",
    ),
    "compact": ("replaylab.commands.compact", "run compact() on a working copy of a transcript and print the result"),
    "record": (
        "replaylab.commands.record",
        "run a session live against a tool pack's service and write transcript + cassette",
    ),
    "rerecord": ("replaylab.commands.rerecord", "re-record every bundled session from its script"),
    "report": ("replaylab.commands.report", "merge shard reports (report merge) and re-render them"),
    "selftest": ("replaylab.commands.selftest", "run the seeded mutant compactors and print the mutation score"),
    "serve-local-model": (
        "replaylab.commands.serve_local_model",
        "serve the local test model on 127.0.0.1 (llama.cpp)",
    ),
}


class CommandImportError(ReplaylabError):
    """A command's module raised on import."""

    def __init__(self, command: str, module: str, error: BaseException) -> None:
        super().__init__(
            f"command {command!r} cannot be loaded: importing {module} raised {type(error).__name__}: {error}"
        )
        self.command = command


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command; `only`: import just that command's module (the others get a
    placeholder), so running one command never pays for, or breaks on, the others."""
    parser = argparse.ArgumentParser(
        prog="replaylab",
        description="QA replay and regression testing for LLM agent sessions. "
        "The main job runs under pytest: `pytest --replaylab suites/`.",
    )
    parser.add_argument("--version", action="version", version=f"replaylab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise CommandImportError(name, module_name, exc) from exc
        module.add_parser(sub, name, help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command with its stdout and stderr scrubbed (names, paths and excerpts it prints
    can hold secrets: `replaylab.scrub.stream`)."""
    from replaylab.scrub import default_scrubber
    from replaylab.scrub.stream import ScrubbingStream

    try:
        scrubber = default_scrubber()
    except InputError as exc:  # REPLAYLAB_SCRUB_PATTERNS does not compile: it names only the patterns
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        return 2
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(out, scrubber), ScrubbingStream(err, scrubber)
    try:
        code = _main(argv)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        return code
    except BrokenPipeError:  # the last flush found the reader gone (the streams say so if it was theirs)
        if _reader_gone():
            return READER_GONE
        raise
    finally:
        sys.stdout, sys.stderr = out, err


def _reader_gone() -> bool:
    return any(getattr(stream, "reader_gone", False) for stream in (sys.stdout, sys.stderr))


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # tool packs are the user's own modules beside their suites: found from the current folder,
    # as `python -m replaylab.cli` and pytest's rootdir find them
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    command = next((a for a in argv if not a.startswith("-")), None)
    try:
        parser = build_parser(only=command if command in COMMANDS else None)
    except CommandImportError as exc:
        print(f"replaylab: {exc}", file=sys.stderr)
        return BROKEN_INSTALL
    args = parser.parse_args(argv)
    if not getattr(args, "command", None) or not hasattr(args, "run"):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except InputError as exc:
        for diagnostic in exc.diagnostics:
            print(diagnostic, file=sys.stderr)
        return 2
    except ReplaylabError as exc:
        print(printable(f"replaylab {args.command}: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug, not the user's input: one line naming it and where, no traceback
        if isinstance(exc, BrokenPipeError) and _reader_gone():
            return READER_GONE  # `replaylab inspect … | head -1`: the reader had what it wanted
        print(printable(f"replaylab {args.command}: internal error: {_described(exc)}"), file=sys.stderr)
        return INTERNAL_ERROR


def _described(error: BaseException) -> str:
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    where = f" (raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    message = str(error)
    return f"{type(error).__name__}: {message[:300]}{where}"


if __name__ == "__main__":
    sys.exit(main())
