"""`python -m bench.classification [SHARED_DATA]`: how replaylab classes the real sessions' tool calls.

Every real session of ../shared/data is imported by replaylab's importers into a scratch folder
(as the real-session sweep does, plus the two data sets the sweep leaves out: `EXTRA_SOURCES`)
and every tool call of every entry is classified as a suite
would (`qa.setup.classifier_for`: the data set's `tool_classes.json`, then OpenClaw's rules).
Printed per data set: calls by rule, and for shell calls (`exec` / `bash` / Claude Code's `Bash`)
how many are read-only (OpenClaw's exemption or replaylab's read-only shell grammar) and how many
mutating, with the top commands each way and the top reasons a command was refused. Nothing is
written: the figures are derived from the shared data.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.printable import printable
from replaylab.safety.classify import SHELL_EXEMPTIONS, SHELL_GRAMMAR, Classification, ToolClassifier
from replaylab.safety.openclaw_rules import name_case
from replaylab.safety.shell import js_lower_or_empty, read_shell_command

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
TOP = 10
#: data sets of ../shared/data beyond those `qa.sweep.import_shared_data` reads: name → (importer
#: kind, file or folder under the shared data folder). fasthooks' folder also holds a hook log that
#: is no transcript, so only its session file is named.
EXTRA_SOURCES: dict[str, tuple[str, str]] = {
    "tau2-bench-extra": ("tau2-bench", "tau2-bench-extra"),
    "claude-code-fasthooks": ("claude-code", "claude-code-fasthooks/sessions/sample_main_transcript.jsonl"),
}


@dataclass(frozen=True)
class RealCall:
    source: str
    session: str
    name: str
    args: dict[str, Any]
    classification: Classification

    @property
    def shell(self) -> bool:
        return name_case(js_lower_or_empty(self.name)) == "shell"

    @property
    def command_word(self) -> str:
        """The command's first word as a person would name it (`git`, `ls`, `cd`)."""
        command = read_shell_command(self.args) or ""
        return command.split(None, 1)[0][:30] if command.split() else "(none)"


def extra_sessions(shared: Path, scratch: Path) -> list[tuple[str, Path]]:
    """(data set, transcript) of every session of `EXTRA_SOURCES` present in `shared`, imported
    into `scratch/<data set>/` with its tool classes."""
    from replaylab.importers import import_sessions, write_session

    found: list[tuple[str, Path]] = []
    for source, (kind, relative) in EXTRA_SOURCES.items():
        if not (shared / relative).exists():
            continue
        folder = scratch / source
        for imported in import_sessions(kind, shared / relative):
            write_session(imported, folder)
        found += [(source, path) for path in sorted(folder.glob("*.jsonl"))]
    return found


def real_calls(shared: Path, scratch: Path) -> list[RealCall]:
    """Every tool call of every real session, classified with its data set's declared classes."""
    from replaylab.qa.sweep import import_shared_data
    from replaylab.transcript.load import load_transcript
    from replaylab.transcript.model import MessageEntry
    from replaylab.transcript.pairing import message_calls

    calls: list[RealCall] = []
    classifiers: dict[Path, ToolClassifier] = {}
    swept = [(s.source, Path(s.path)) for s in import_shared_data(shared, scratch)]
    for source, path in swept + extra_sessions(shared, scratch / "extra"):
        if path.parent not in classifiers:
            beside = path.parent / "tool_classes.json"
            classifiers[path.parent] = ToolClassifier.from_json(beside) if beside.is_file() else ToolClassifier()
        classifier = classifiers[path.parent]
        for entry in load_transcript(path).entries:
            if isinstance(entry, MessageEntry):
                for call in message_calls(entry.message):
                    explained = classifier.explain(call.name, call.arguments)
                    calls.append(RealCall(source, path.name, call.name, call.arguments, explained))
    return calls


def table(calls: Iterable[RealCall]) -> dict[str, dict[str, Any]]:
    """Per data set: calls, mutating calls, calls by rule, and the shell figures."""
    out: dict[str, dict[str, Any]] = {}
    for call in calls:
        row = out.setdefault(
            call.source,
            {
                "calls": 0,
                "mutating": 0,
                "by_rule": Counter(),
                "shell": 0,
                "shell_read_only": 0,
                "shell_grammar": 0,
                "shell_mutating": 0,
                "top_read_only": Counter(),
                "top_mutating": Counter(),
                "top_refusals": Counter(),
            },
        )
        row["calls"] += 1
        row["mutating"] += call.classification.mutating
        row["by_rule"][call.classification.rule] += 1
        if not call.shell:
            continue
        row["shell"] += 1
        if call.classification.rule in SHELL_EXEMPTIONS:
            row["shell_read_only"] += 1
            row["shell_grammar"] += call.classification.rule == SHELL_GRAMMAR
            row["top_read_only"][call.command_word] += 1
        else:
            row["shell_mutating"] += 1
            row["top_mutating"][call.command_word] += 1
            row["top_refusals"][call.classification.reason.removeprefix("declared exec; ")] += 1
    return out


def format_table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| data set | tool calls | mutating | shell calls | shell read-only | by the grammar | shell mutating |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for source, row in rows.items():
        share = f" ({row['shell_read_only'] / row['shell']:.0%})" if row["shell"] else ""
        lines.append(
            f"| {source} | {row['calls']} | {row['mutating']} | {row['shell']} | "
            f"{row['shell_read_only']}{share} | {row['shell_grammar']} | {row['shell_mutating']} |"
        )
    for source, row in rows.items():
        lines.append(f"\n{source}: calls by rule: " + ", ".join(f"{k} {v}" for k, v in row["by_rule"].most_common()))
        if not row["shell"]:
            continue
        for title, key in (
            ("read-only commands", "top_read_only"),
            ("mutating commands", "top_mutating"),
            ("why refused", "top_refusals"),
        ):
            top = ", ".join(f"{printable(k)} {v}" for k, v in row[key].most_common(TOP)) or "none"
            lines.append(f"  top {title}: {top}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.classification",
        description="How replaylab classes the tool calls of the shared data's real sessions: calls by rule, "
        "and shell commands read-only or mutating, per data set.",
    )
    parser.add_argument(
        "shared",
        nargs="?",
        type=Path,
        default=SHARED,
        help="the shared data folder, laid out as ../shared/data is (default: %(default)s)",
    )
    shared = parser.parse_args(argv).shared
    if not shared.is_dir():
        print(f"no shared data at {shared}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="replaylab-classification-") as scratch:
        calls = real_calls(shared, Path(scratch))
    print(format_table(table(calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
