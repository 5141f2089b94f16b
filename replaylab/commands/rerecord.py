"""`replaylab rerecord`: re-record every bundled session from its script, or check that doing so
would give the same recordings.

The bundled recordings (`recordings/helpdesk/*.jsonl` + `*.cassette.yaml`) are made by the recorder
from the scripts in `<folder>/scripts/*.yaml`, never edited by hand. This command is how they are
made and how anyone can verify they still come out the same:

* `replaylab rerecord --force` re-records every top-level script (a script that another one names
  as its `child:` is recorded as that session's sub-agent, not on its own) with a freshly seeded
  service per session, into a temporary folder next to the bundled one (a copy of everything that
  is not a recording, scripts included), then swaps the folders. Nothing is replaced unless every
  session recorded; `--force` is required because recordings are never overwritten silently.
* `replaylab rerecord --out DIR` records into another folder (it must not hold recordings), with a
  copy of the scripts, so the folder is a complete bundle that compares equal to the bundled one.
* `replaylab rerecord --check` records into a temporary folder and compares with the bundled one,
  modulo what legitimately changes between two recordings of the same script — timestamps,
  session and entry ids, the header's `cwd`, and the loopback port of the service — and exits 1,
  printing each difference, when anything else differs.

Why ids and timestamps are allowed to differ: pi's entry ids are random and its timestamps are the
wall clock; everything else (messages, tool-call ids, tool results, usage estimates, the service's
logical clock and ids, HTTP bodies) is a function of the script and the seed.

Exit status: 0 recorded / no differences, 1 differences found (`--check`), 2 usage error.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replaylab.cassette import CASSETTE_SUFFIX, canonical_json, load_cassette
from replaylab.diagnostics import Diagnostic, InputError

DEFAULT_FOLDER = Path("recordings") / "helpdesk"
DEFAULT_TOOLS = "examples.helpdesk"
SCRIPTS_DIR = "scripts"
SCRIPT_SUFFIXES = (".yaml", ".yml")
#: how many differing lines / interactions are shown per file
MAX_SHOWN_PER_FILE = 5

_LOOPBACK_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=DEFAULT_FOLDER,
        metavar="DIR",
        help=f"the bundled recordings folder; its scripts are DIR/{SCRIPTS_DIR}/*.yaml (default: {DEFAULT_FOLDER})",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="record into this folder (with a copy of the scripts) instead of replacing the bundled "
        "one; it must hold no recordings",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="record into a temporary folder and compare with the bundled recordings; exit 1 on differences",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the bundled recordings (the whole folder is swapped only after every session recorded)",
    )
    p.add_argument("--tools", default=DEFAULT_TOOLS, metavar="PACK", help=f"tool pack (default: {DEFAULT_TOOLS})")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    scripts = top_level_scripts(folder / SCRIPTS_DIR)
    if args.check:
        if args.out is not None or args.force:
            raise _usage("--check compares with the bundled folder; it takes neither --out nor --force")
        differences = check(folder, tools=args.tools)
        for line in differences:
            print(line)
        if differences:
            print(f"rerecord --check: {len(differences)} difference(s) between {folder} and a fresh recording")
            return 1
        print(
            f"rerecord --check: {len(scripts)} sessions re-recorded, identical to {folder} "
            "(modulo timestamps, ids, cwd and port)"
        )
        return 0
    if args.out is not None and Path(args.out).resolve() != folder.resolve():
        out = Path(args.out)
        existing = recording_files(out) if out.is_dir() else []
        if existing:
            raise InputError(
                [
                    Diagnostic(
                        code="output-exists",
                        file=str(existing[0]),
                        message=f"{out} already holds recordings; replaylab never overwrites a "
                        "recording (choose an empty --out)",
                    )
                ]
            )
        _copy_non_recordings(folder, out)  # a self-contained bundle: the scripts travel with it
        _print_recorded(record_all(top_level_scripts(out / SCRIPTS_DIR), out, tools=args.tools))
        return 0
    if recording_files(folder) and not args.force:
        raise InputError(
            [
                Diagnostic(
                    code="output-exists",
                    file=str(folder),
                    message="already holds recordings; replaylab never overwrites a recording "
                    "silently: pass --force to replace the whole folder (swapped only after "
                    "every session recorded), --out DIR to record elsewhere, or --check",
                )
            ]
        )
    _print_recorded(replace_folder(folder, tools=args.tools))
    return 0


# ---------------------------------------------------------------- recording


def top_level_scripts(scripts_dir: Path) -> list[Path]:
    """The scripts to record on their own: every script in the folder except those another
    script names as a sub-agent (`child:`), which are recorded inside their parent."""
    from replaylab.replay.agent.script import load_script

    if not scripts_dir.is_dir():
        raise InputError(
            [
                Diagnostic(
                    code="missing-scripts",
                    file=str(scripts_dir),
                    message="no such folder; expected the session scripts (*.yaml) there",
                )
            ]
        )
    paths = sorted(p for p in scripts_dir.iterdir() if p.suffix in SCRIPT_SUFFIXES and p.is_file())
    if not paths:
        raise InputError([Diagnostic(code="missing-scripts", file=str(scripts_dir), message="holds no *.yaml script")])
    children = {
        call.child.resolve()
        for path in paths
        for turn in load_script(path).turns
        for step in turn.steps
        for call in step.tool_calls
        if call.child is not None
    }
    return [p for p in paths if p.resolve() not in children]


def record_all(scripts: list[Path], out: Path, *, tools: str = DEFAULT_TOOLS) -> list[Any]:
    """Record each script (its sub-agents included) into `out`; a fresh service per session."""
    from replaylab.replay.recorder import record_session

    out.mkdir(parents=True, exist_ok=True)
    return [record_session(tools=tools, out_dir=out, script=script) for script in scripts]


def _copy_non_recordings(folder: Path, destination: Path) -> Path:
    """Copy everything in `folder` that is not a recording (scripts, notes) into `destination`."""
    destination.mkdir(parents=True, exist_ok=True)
    recordings = {p.name for p in recording_files(folder)}
    for item in folder.iterdir():
        if item.name in recordings:
            continue
        if item.is_dir():
            shutil.copytree(item, destination / item.name, dirs_exist_ok=True)
        else:
            shutil.copy2(item, destination / item.name)
    return destination


def _staging_copy(folder: Path, staging: Path) -> Path:
    """A new `staging` folder holding everything of `folder` but its recordings."""
    staging.mkdir(parents=True)
    return _copy_non_recordings(folder, staging)


def replace_folder(folder: Path, *, tools: str = DEFAULT_TOOLS) -> list[Any]:
    """Re-record every script of `folder` into a staging folder beside it, then swap the two
    folders (rename, rename, delete): a failed recording leaves the bundled folder untouched."""
    folder = folder.resolve()
    staging = folder.parent / f".{folder.name}.rerecord-{os.getpid()}"
    retired = folder.parent / f".{folder.name}.retired-{os.getpid()}"
    for leftover in (staging, retired):
        if leftover.exists():
            shutil.rmtree(leftover)
    _staging_copy(folder, staging)
    try:
        recorded = record_all(top_level_scripts(staging / SCRIPTS_DIR), staging, tools=tools)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    os.rename(folder, retired)
    os.rename(staging, folder)
    shutil.rmtree(retired)
    return [_relocated(r, staging, folder) for r in recorded]


def _relocated(recorded: Any, old: Path, new: Path) -> Any:
    for attr in ("transcript", "cassette"):
        setattr(recorded, attr, new / Path(getattr(recorded, attr)).relative_to(old))
    for child in recorded.children:
        _relocated(child, old, new)
    return recorded


def check(folder: Path, *, tools: str = DEFAULT_TOOLS) -> list[str]:
    """Re-record `folder`'s scripts into a temporary folder and compare (see `compare_folders`)."""
    with tempfile.TemporaryDirectory(prefix="replaylab-rerecord-") as tmp:
        staging = _staging_copy(Path(folder), Path(tmp) / "recordings")
        record_all(top_level_scripts(staging / SCRIPTS_DIR), staging, tools=tools)
        return compare_folders(Path(folder), staging)


def _print_recorded(recorded: list[Any]) -> None:
    def show(item: Any, indent: str = "") -> None:
        calls = sum(len(t.tool_calls) for t in item.trace.turns)
        print(
            f"{indent}recorded {item.transcript} ({len(item.trace.turns)} turns, {calls} tool calls, "
            f"{item.interactions} HTTP interactions)"
        )
        for child in item.children:
            show(child, indent + "  sub-agent: ")

    for item in recorded:
        show(item)


# ---------------------------------------------------------------- comparison


def recording_files(folder: Path) -> list[Path]:
    """Transcripts and cassettes directly in `folder`, sorted by name."""
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if p.is_file() and (p.suffix == ".jsonl" or p.name.endswith(CASSETTE_SUFFIX))
    )


@dataclass
class _IdMap:
    """Replaces ids by their order of first appearance, so two recordings compare equal when
    their ids differ but point at the same things."""

    prefix: str
    ids: dict[str, str]

    def __call__(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return self.ids.setdefault(value, f"<{self.prefix}{len(self.ids) + 1}>")


def normalize_transcript(text: str) -> list[str]:
    """The transcript's lines as canonical JSON with timestamps, session / entry ids and the
    header's cwd replaced by placeholders (a line that is not JSON is kept as it is)."""
    sessions, entries = _IdMap("session", {}), _IdMap("entry", {})
    out: list[str] = []
    for line in text.splitlines():
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(line)
            continue
        if not isinstance(data, dict):
            out.append(line)
            continue
        if data.get("type") == "session":
            data["id"] = sessions(data.get("id"))
            data["cwd"] = "<cwd>" if "cwd" in data else data.get("cwd")
        else:
            for key in ("id", "parentId", "firstKeptEntryId", "targetId", "fromId"):
                if data.get(key) is not None:
                    data[key] = entries(data[key])
        if "timestamp" in data:
            data["timestamp"] = "<timestamp>"
        message = data.get("message")
        if isinstance(message, dict) and "timestamp" in message:
            message["timestamp"] = "<timestamp>"
        out.append(canonical_json(data))
    return out


def normalize_cassette(path: Path) -> list[str]:
    """Each interaction as canonical JSON, with the service's loopback port replaced."""
    out = []
    for item in load_cassette(path):
        text = canonical_json(item)
        out.append(_LOOPBACK_PORT.sub(r"\1:<port>", text))
    return out


def _first_difference(a: str, b: str) -> str:
    """A short description of where two canonical JSON lines differ (the differing keys)."""
    try:
        left, right = orjson.loads(a), orjson.loads(b)
    except orjson.JSONDecodeError:
        return "the line differs"
    paths: list[str] = []

    def walk(x: Any, y: Any, where: str) -> None:
        if len(paths) >= 3:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y)):
                walk(x.get(key), y.get(key), f"{where}.{key}" if where else str(key))
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{where}[{i}]")
        elif x != y:
            shown = lambda v: (repr(v)[:80] + "…") if len(repr(v)) > 80 else repr(v)  # noqa: E731
            paths.append(f"{where or '<root>'}: {shown(x)} != {shown(y)}")

    walk(left, right, "")
    return "; ".join(paths) or "the line differs"


def compare_folders(expected: Path, actual: Path) -> list[str]:
    """Differences between two folders of recordings, one readable line each: missing or extra
    files, then per file the first differing lines (transcripts) or interactions (cassettes),
    modulo timestamps, ids, cwd and the loopback port."""
    expected, actual = Path(expected), Path(actual)
    want = {p.name: p for p in recording_files(expected)}
    got = {p.name: p for p in recording_files(actual)}
    problems = [f"{expected / name}: missing from the fresh recording" for name in sorted(set(want) - set(got))]
    problems += [f"{actual / name}: recorded now, but not in {expected}" for name in sorted(set(got) - set(want))]
    for name in sorted(set(want) & set(got)):
        if name.endswith(CASSETTE_SUFFIX):
            left, right, unit = normalize_cassette(want[name]), normalize_cassette(got[name]), "interaction"
        else:
            left = normalize_transcript(want[name].read_text(encoding="utf-8"))
            right = normalize_transcript(got[name].read_text(encoding="utf-8"))
            unit = "line"
        shown = 0
        for index in range(max(len(left), len(right))):
            a = left[index] if index < len(left) else None
            b = right[index] if index < len(right) else None
            if a == b:
                continue
            if shown >= MAX_SHOWN_PER_FILE:
                problems.append(f"{want[name]}: … more differences")
                break
            shown += 1
            where = f"{want[name]}:{index + 1}" if unit == "line" else f"{want[name]} interactions[{index}]"
            if a is None or b is None:
                side = "only in the fresh recording" if a is None else "missing from the fresh recording"
                problems.append(f"{where}: {unit} {side}")
            else:
                problems.append(f"{where}: {_first_difference(a, b)}")
    return problems


def _usage(message: str) -> InputError:
    return InputError([Diagnostic(code="bad-option", file="<command line>", message=message)])
