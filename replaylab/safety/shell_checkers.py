"""Code checkers in the read-only shell grammar: a checker asked only to report reads.

Agents check their work all the time (`tsc --noEmit`, `black --check .`, `ruff format --diff`).
These checkers run no code of the project, and in the modes below they write nothing but their
own caches; in any other mode they rewrite files, so they stay program runners:

* `tsc` with `--noEmit` or `--showConfig`, never building (`-b`), watching, `--init` or writing a
  trace (`npx tsc …` runs the project's own `tsc`, and decides the same way), and `tsgo`, the
  TypeScript compiler's native port (`@typescript/native-preview`), which takes its options;
* `black` and `isort` with `--check` or `--diff` (`isort --check-only`);
* `ruff format --check|--diff`, `ruff check --diff` or `--no-fix` (a project's configuration may
  set `fix = true`, which makes a bare `ruff check` rewrite files), `ruff rule`, `ruff version`.

Linters that load the project's code or configuration as code (`eslint`, `prettier` with a
`.js` configuration, `mypy` plugins, `cargo check` build scripts) stay program runners.
"""

from __future__ import annotations

from collections.abc import Sequence

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Inner, Word, known_values, read

#: `tsc` options that build, watch, create a configuration or write a trace or profile
_TSC_WRITES = frozenset({"-b", "--build", "-w", "--watch", "--init", "--generateTrace", "--generateCpuProfile"})
_TSC_READS = frozenset({"--noEmit", "--showConfig", "--listFilesOnly"})
#: options that make `ruff` write files or run forever, whatever its subcommand
_RUFF_WRITES = frozenset(
    {"--fix", "--fix-only", "--unsafe-fixes", "--add-noqa", "--watch", "-w", "--output-file", "-o"}
)


def _runner(name: str) -> ShellVerdict:
    if name in ("tsc", "tsgo"):
        return ShellVerdict(False, f"`{name}` compiles and writes its output (only `--noEmit` or `--showConfig` reads)")
    return ShellVerdict(False, f"`{word(name)}` rewrites files in this mode (only a check or a diff reads)")


def _tsc(name: str, args: Sequence[Word], inner: Inner) -> ShellVerdict:
    values = known_values(args)
    if values is None or not values:
        return _runner(name)
    options = {v.split("=", 1)[0] for v in values if v.startswith("-")}
    # a flag takes `false` after it: `tsc --noEmit false` emits
    turned_off = any(v == "false" and values[at - 1] in _TSC_READS for at, v in enumerate(values) if at)
    if options & _TSC_WRITES or not options & _TSC_READS or turned_off or any(v.endswith("=false") for v in values):
        if values in (["-v"], ["--version"], ["-h"], ["--help"]):
            return read(f"{name} {values[0]}")
        return _runner(name)
    return read(f"{name} {min(options & _TSC_READS)}")


def _black(name: str, args: Sequence[Word], inner: Inner) -> ShellVerdict:
    values = known_values(args)
    checks = {"--check", "--diff"} | ({"--check-only", "-c"} if name == "isort" else set())
    if values is None or not checks & set(values):
        return _runner(name)
    return read(f"{name} {min(checks & set(values))}")


def _ruff(name: str, args: Sequence[Word], inner: Inner) -> ShellVerdict:
    values = known_values(args)
    if values is None:
        return _runner(name)
    if any(v.split("=", 1)[0] in _RUFF_WRITES for v in values):
        return _runner(name)
    # ruff's global `--config` takes a value (a file or `key = value`), which is no subcommand:
    # `ruff --config version check` checks (and fixes, as the file may say)
    words = [v for at, v in enumerate(values) if not (at and values[at - 1] == "--config")]
    command = next((v for v in words if not v.startswith("-")), None)
    reads = {
        "format": {"--check", "--diff"},
        "check": {"--diff", "--no-fix"},
    }
    if command in ("rule", "version", "linter", "config") or values in (["--version"], ["-V"], ["--help"]):
        return read(f"{name} {command or values[0]}")
    if command in reads and reads[command] & set(values):
        return read(f"{name} {command} {min(reads[command] & set(values))}")
    if command == "check":  # what a reader of the verdict would ask first: "but it only checks"
        return ShellVerdict(
            False,
            f"`{word(name)} check` fixes files when the project's configuration sets `fix = true` "
            "(only `--no-fix` or `--diff` reads)",
        )
    return _runner(name)


def _npx(name: str, args: Sequence[Word], inner: Inner) -> ShellVerdict:
    """`npx tsc …`: the project's own checker, decided as itself (where the project has none, npx
    fetches the `tsc` package, a TypeScript compiler, which decides the same way; `tsgo` is the
    project's `@typescript/native-preview`); any other package is a program the command does not
    show."""
    rest = list(args)
    while rest and rest[0].value in ("--no-install", "--no", "-y", "--yes", "--offline", "-q", "--quiet"):
        rest = rest[1:]
    checker = CHECKERS.get(rest[0].value or "") if rest else None
    if checker is not None:
        return checker(str(rest[0].value), rest[1:], inner)
    return ShellVerdict(False, f"`{word(name)}` runs programs whose effects the command does not show")


#: the checkers whose mode decides, by the name they run as
CHECKERS = {"tsc": _tsc, "tsgo": _tsc, "black": _black, "isort": _black, "ruff": _ruff}
#: the checkers, and the package runner that runs a project's own
CHECKER_COMMANDS = {**CHECKERS, "npx": _npx}
