"""The bad-input corpus: every case gives a clear message, the right exit status, no traceback,
and leaves its input byte-identical.

The corpus files live in `tests/data/bad/` (small, each named after its case; the 50 MB single
line is generated into tmp_path). `CASES` is the single table: each row names its input, the
command or call that reads it, the exit status, and the exact message line(s) it must print
(paths are relative to the working directory the case runs in; the plugin's absolute paths
are shown relative to it). `tests/data/bad/README.md` is
generated from this table (`PYTHONPATH=tests python tests/robustness/test_bad_inputs.py --write-readme`) and a test keeps it
in sync, so the README lists what each case really prints.

How a case runs: its input files are copied into a fresh tmp_path (the corpus itself is never
handed to the code under test), every file there is hashed, the command runs with that folder
as its working directory, and afterwards every file that existed before must hash the same.
CLI cases run in a subprocess (`python -m replaylab.cli ...`, or `python -m pytest --replaylab`
for the plugin), so the exit status and stderr are the real ones.

To add a case: drop the file in tests/data/bad/, add a row to CASES, regenerate the README.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from builders.pytest_runs import CHILD_PLUGINS
from replaylab.cassette import load_cassette
from replaylab.diagnostics import InputError
from replaylab.printable import printable
from replaylab.suite import load_suite
from repo_paths import TESTS

BAD = TESTS / "data" / "bad"
README = BAD / "README.md"
PYTHON = sys.executable
OK = "transcript-ok.jsonl"  # the clean transcript cases run next to (suites glob rec/*.jsonl)


@dataclass(frozen=True)
class Case:
    name: str
    area: str  # transcript | cassette | suite | tool pack | CLI
    run: str  # "cli": replaylab argv | "pytest": pytest argv | "load_cassette" / "load_suite": a call
    args: tuple[str, ...]  # argv (cli / pytest) or (path,) for a call
    exit: int | None  # exit status (None for calls: they must raise InputError)
    messages: tuple[str, ...]  # exact lines the output must contain (str(Diagnostic) for calls)
    inputs: tuple[str, ...] = ()  # corpus files copied into the working directory
    setup: Callable[[Path], None] | None = None  # generates more input there
    generated: str = ""  # README: what `setup` generates
    env: dict[str, str] = field(default_factory=dict)
    xfail: str = ""  # strict xfail reason (a fix that belongs to another module's owner)

    @property
    def command(self) -> str:
        if self.run == "cli":
            return "replaylab " + " ".join(self.args)
        if self.run == "pytest":
            return "pytest " + " ".join(self.args)
        return f"{self.run}({self.args[0]!r})"


# ---------------------------------------------------------------- generated inputs


def fifty_mb_line(path: Path, *, truncated: bool) -> None:
    """Header + one user message whose text is 50 MB, written as a single line."""
    header = b'{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    head = (
        b'{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        b'"message":{"role":"user","content":"'
    )
    with open(path, "wb") as handle:
        handle.write(header + head)
        chunk = b"0123456789abcdef" * 65536  # 1 MiB
        for _ in range(50):
            handle.write(chunk)
        if not truncated:
            handle.write(b'"}}\n')


def make_dir(name: str) -> Callable[[Path], None]:
    return lambda root: (root / name).mkdir()


def make_pack(module: str, source: str) -> Callable[[Path], None]:
    """A tiny tool pack module in the working directory (PYTHONPATH=. for the subprocess)."""
    return lambda root: (root / f"{module}.py").write_text(source, encoding="utf-8")


def pipeline_recording(root: Path, cassette_from: str | None) -> None:
    """rec/sess.jsonl (6 turns, each a get_order read) + suites/s.yaml compacting before turn 4;
    the cassette is the corpus file `cassette_from` (None: no cassette at all)."""
    (root / "rec").mkdir()
    (root / "suites").mkdir()
    lines = [{"type": "session", "version": 3, "id": "sess", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None
    for turn in range(6):
        for message in (
            {"role": "user", "content": f"Where is order 100{turn}? " + "Context. " * 30},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {
                        "type": "toolCall",
                        "id": f"c{turn}",
                        "name": "get_order",
                        "arguments": {"order_id": f"100{turn}"},
                    },
                ],
                "stopReason": "toolUse",
            },
            {
                "role": "toolResult",
                "toolCallId": f"c{turn}",
                "toolName": "get_order",
                "content": [{"type": "text", "text": f"order 100{turn}: delivered"}],
                "isError": False,
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"100{turn} was delivered."}],
                "stopReason": "stop",
            },
        ):
            entry_id = f"e{len(lines)}"
            lines.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": "2026-01-01T00:00:01.000Z",
                    "message": message,
                }
            )
            parent = entry_id
    (root / "rec" / "sess.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (root / "rec" / "tool_classes.json").write_text('{"get_order": "read"}\n', encoding="utf-8")
    if cassette_from is not None:
        shutil.copy(BAD / cassette_from, root / "rec" / "sess.cassette.yaml")
    (root / "suites" / "s.yaml").write_text(
        "name: corpus\nrecordings: ../rec/*.jsonl\ncompact_at: turn:4\n"
        "compaction: {mode: safeguard, contextTokens: 4000, "
        "reserveTokensFloor: 500}\n",
        encoding="utf-8",
    )


def imported_once(root: Path) -> None:
    """An earlier import into out/ (the case then imports the same session again)."""
    from replaylab.importers import import_sessions, write_session

    for session in import_sessions("openai-chat", BAD / "import-openai-chat-ok.json"):
        write_session(session, root / "out")


def recordings_dir(root: Path) -> None:
    (root / "rec").mkdir()
    shutil.copy(BAD / OK, root / "rec" / OK)


def make_fifo(name: str) -> Callable[[Path], None]:
    """A FIFO (named pipe) at `name`: opening it for reading would wait for a writer forever."""
    return lambda root: os.mkfifo(root / name)


def make_link(name: str, target: str) -> Callable[[Path], None]:
    """A symbolic link `name` → `target` (a device, itself, a folder above it, or nothing)."""

    def make(root: Path) -> None:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / name)

    return make


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        for step in steps:
            step(root)

    return make


# ---------------------------------------------------------------- the table

T, C, S, P, CLI = "transcript", "cassette", "suite", "tool pack", "CLI"
PYTEST = ("-p", "no:cacheprovider", "-q", "--replaylab")
PIPELINE_SUITE = ("suites", "--replaylab-report", "out")
TRUNCATED = (
    "suites/../rec/sess.cassette.yaml:14: error[cassette-invalid] field 'version': 'version: 1' is missing: "
    "the file is probably truncated (vcrpy writes it last)"
)

CASES: list[Case] = [
    # -- transcripts, through `replaylab inspect` (exit 1: diagnostics found; 2: usage error)
    Case(
        "transcript-truncated-last-line",
        T,
        "cli",
        ("inspect", "transcript-truncated-last-line.jsonl"),
        1,
        (
            "transcript-truncated-last-line.jsonl:5: error[invalid-json]: last line is truncated: Unterminated string "
            "starting at column 57; the line was skipped (pi skips it too)",
        ),
    ),
    Case(
        "transcript-glued-lines",
        T,
        "cli",
        ("inspect", "transcript-glued-lines.jsonl"),
        1,
        (
            "transcript-glued-lines.jsonl:2: error[glued-lines]: holds 2 JSON objects glued together without a newline "
            "(message (user) 'u1', message (assistant) 'a1'); pi drops the whole line, so replaylab drops it too: these "
            "entries are not in the context the agent sees (recover_glued_lines reads each one, differing from pi)",
        ),
    ),
    Case(
        "transcript-missing-header",
        T,
        "cli",
        ("inspect", "transcript-missing-header.jsonl"),
        1,
        (
            "transcript-missing-header.jsonl:1: error[missing-header] field 'type': line 1 is a 'message' entry; expected "
            "a 'session' header first (pi would discard this file); entries read without a header",
        ),
    ),
    Case(
        "transcript-header-without-id",
        T,
        "cli",
        ("inspect", "transcript-header-without-id.jsonl"),
        1,
        ("transcript-header-without-id.jsonl:1: error[bad-header] field 'id': session header has no string 'id'",),
    ),
    Case(
        "transcript-unknown-version",
        T,
        "cli",
        ("inspect", "transcript-unknown-version.jsonl"),
        1,
        (
            "transcript-unknown-version.jsonl:1: warning[unknown-version] field 'version': session version 5 is newer "
            "than 4, the newest replaylab knows; reading it as version 3",
        ),
    ),
    Case(
        "transcript-duplicate-ids",
        T,
        "cli",
        ("inspect", "transcript-duplicate-ids.jsonl"),
        1,
        (
            "transcript-duplicate-ids.jsonl:6: error[duplicate-id] entry u1: id also used on line 2; the later entry "
            "wins (as in pi)",
        ),
    ),
    Case(
        "transcript-parent-cycle",
        T,
        "cli",
        ("inspect", "transcript-parent-cycle.jsonl"),
        1,
        (
            "transcript-parent-cycle.jsonl:2: error[cycle] entry u1 field 'parentId': parentId links form a cycle "
            "(u1 → a2 → r1 → a1 → u1); the path is cut there",
        ),
    ),
    Case(
        "transcript-orphan-tool-result",
        T,
        "cli",
        ("inspect", "transcript-orphan-tool-result.jsonl"),
        1,
        (
            "transcript-orphan-tool-result.jsonl:3: error[orphan-tool-result] entry r9 field 'message.toolCallId': "
            "tool result for call 'call_9' has no matching tool call earlier on the path",
        ),
    ),
    Case(
        "transcript-call-without-result",
        T,
        "cli",
        ("inspect", "transcript-call-without-result.jsonl"),
        1,
        (
            "transcript-call-without-result.jsonl:3: error[missing-tool-result] entry a1 field 'message.content': tool "
            "call 'call_1' has no tool result later on the path",
        ),
    ),
    Case(
        "transcript-dangling-parent",
        T,
        "cli",
        ("inspect", "transcript-dangling-parent.jsonl"),
        1,
        (
            "transcript-dangling-parent.jsonl:5: error[dangling-parent] entry a2 field 'parentId': parentId 'gone' "
            "names no entry in the file; the path stops here",
        ),
    ),
    Case(
        "transcript-invalid-utf8",
        T,
        "cli",
        ("inspect", "transcript-invalid-utf8.jsonl"),
        1,
        (
            "transcript-invalid-utf8.jsonl:2: error[invalid-utf8]: is not valid UTF-8 (byte 122); undecodable bytes "
            "were replaced with U+FFFD",
        ),
    ),
    Case(
        "transcript-empty",
        T,
        "cli",
        ("inspect", "transcript-empty.jsonl"),
        1,
        ("transcript-empty.jsonl: error[empty-file]: holds no JSON object; expected a session header on line 1",),
    ),
    Case(
        "transcript-invalid-entry-field",
        T,
        "cli",
        ("inspect", "transcript-invalid-entry-field.jsonl"),
        1,
        (
            "transcript-invalid-entry-field.jsonl:5: error[invalid-entry] entry a2 field 'message.content': Input "
            "should be a valid list (got 7); the entry stays on the path (the agents' paths run through it) with "
            "no message: pi would send what it holds, which replaylab cannot read; OpenClaw keeps it aside when its "
            "own schema rejects it too",
        ),
    ),
    Case(
        "transcript-not-an-object-line",
        T,
        "cli",
        ("inspect", "transcript-not-an-object-line.jsonl"),
        1,
        ("transcript-not-an-object-line.jsonl:6: error[not-an-object]: holds a JSON list, expected an object",),
    ),
    Case(
        "transcript-utf8-bom",
        T,
        "cli",
        ("inspect", "transcript-utf8-bom.jsonl"),
        1,
        (
            "transcript-utf8-bom.jsonl:1: error[utf8-bom]: starts with a UTF-8 byte-order mark (bytes EF BB BF), which "
            "pi's JSON.parse rejects; replaylab read the line without it (save the file as UTF-8 without BOM)",
        ),
    ),
    Case(
        "transcript-nan-literal",
        T,
        "cli",
        ("inspect", "transcript-nan-literal.jsonl"),
        1,
        (
            "transcript-nan-literal.jsonl:5: error[invalid-json]: line does not parse as JSON: NaN is not a JSON value; "
            "the line was skipped (pi skips it too)",
        ),
    ),
    Case(
        "transcript-deeply-nested",
        T,
        "cli",
        ("inspect", "transcript-deeply-nested.jsonl"),
        1,
        (
            "transcript-deeply-nested.jsonl:6: error[invalid-json]: line does not parse as JSON: nested too deeply for "
            "a JSON parser (about 1000 levels of arrays / objects or more); the line was skipped (pi skips it too)",
        ),
    ),
    Case(
        "transcript-random-bytes",
        T,
        "cli",
        ("inspect", "transcript-random-bytes.jsonl"),
        1,
        (
            "transcript-random-bytes.jsonl:1: error[invalid-utf8]: is not valid UTF-8 (byte 1); undecodable bytes were "
            "replaced with U+FFFD",
            "transcript-random-bytes.jsonl: error[empty-file]: holds no JSON object; expected a session header on "
            "line 1",
        ),
    ),
    Case(
        "transcript-deep-arguments",
        T,
        "cli",
        ("inspect", "transcript-deep-arguments.jsonl"),
        0,
        ("  replaySafe   false  (1 mutating events)",),
    ),
    Case(
        "transcript-50mb-single-line",
        T,
        "cli",
        ("inspect", "big.jsonl"),
        0,
        (
            "  context      ~13,107,200 tokens over 1 window messages "
            "(pi@0.73.1's estimate of the leaf window, what compaction triggers on)",
        ),
        setup=lambda root: fifty_mb_line(root / "big.jsonl", truncated=False),
        generated="big.jsonl: header + one 50 MiB user message on a single line",
    ),
    Case(
        "transcript-50mb-single-line-truncated",
        T,
        "cli",
        ("inspect", "big.jsonl"),
        1,
        (
            "big.jsonl:2: error[invalid-json]: last line is truncated: Unterminated string starting at column 119; "
            "the line was skipped (pi skips it too)",
        ),
        setup=lambda root: fifty_mb_line(root / "big.jsonl", truncated=True),
        generated="big.jsonl: the same line cut off inside the 50 MiB string",
    ),
    Case(
        "transcript-is-a-directory",
        T,
        "cli",
        ("inspect", "session.jsonl"),
        2,
        (
            "session.jsonl: error[no-transcripts]: is a folder with no .jsonl transcript (nor a session to import) in it or its sub-folders",
        ),
        setup=make_dir("session.jsonl"),
        generated="session.jsonl/: a directory",
    ),
    Case(
        "transcript-missing-file",
        T,
        "cli",
        ("inspect", "nowhere.jsonl"),
        2,
        ("nowhere.jsonl: error[missing-file]: no such file",),
    ),
    Case(
        "transcript-strict-rejects",
        T,
        "cli",
        ("inspect", "--strict", "transcript-dangling-parent.jsonl"),
        2,
        (
            "transcript-dangling-parent.jsonl:5: error[dangling-parent] entry a2 field 'parentId': parentId 'gone' "
            "names no entry in the file; the path stops here",
        ),
        inputs=("transcript-dangling-parent.jsonl",),
    ),
    Case(
        "transcript-lone-surrogate",
        T,
        "cli",
        ("inspect", "transcript-lone-surrogate.jsonl"),
        1,
        (
            "transcript-lone-surrogate.jsonl:2: error[lone-surrogate] field 'message.content': holds 1 lone surrogate "
            "escape(s) (\\uD800-\\uDFFF without its pair), which is not Unicode text; replaylab read each as U+FFFD "
            "(pi's JSON.parse keeps them)",
        ),
    ),
    Case(
        "transcript-number-beyond-float",
        T,
        "cli",
        ("inspect", "transcript-number-beyond-float.jsonl"),
        1,
        (
            "transcript-number-beyond-float.jsonl:3: error[invalid-json]: line cannot be read as JSON: the number 1e400 "
            "is beyond a 64-bit float; pi's JSON.parse reads it as Infinity, which JSON cannot hold (column 142); the "
            "line was skipped (pi would read it)",
        ),
    ),
    Case(
        "transcript-integer-past-64-bits",
        T,
        "cli",
        ("inspect", "transcript-integer-past-64-bits.jsonl"),
        0,
        ("  diagnostics  none",),
    ),
    Case(
        "transcript-control-characters",
        T,
        "cli",
        ("inspect", "transcript-control-characters.jsonl"),
        1,
        (
            "transcript-control-characters.jsonl:3: error[dangling-parent] entry a1\\nforged.jsonl:1: error[fake]: all "
            "clear field 'parentId': parentId 'gone\\x1b[2J' names no entry in the file; the path stops here",
            "!forged.jsonl:1: error[fake]: all clear\n",
            "!\x1b",
        ),
    ),
    Case(
        "transcript-first-kept-not-earlier",
        T,
        "cli",
        ("inspect", "transcript-first-kept-not-earlier.jsonl"),
        1,
        (
            "transcript-first-kept-not-earlier.jsonl:5: error[first-kept-later] entry c1 field 'firstKeptEntryId': 'u3' "
            "names an entry after the compaction on its branch (line 6); pi's buildSessionContext looks for it only "
            "before the compaction, so no message from before the compaction is kept (only the summary and what "
            "follows it), and pi's next compaction on this path starts its summary at that entry (prepareCompaction "
            "looks along the whole path)",
            "transcript-first-kept-not-earlier.jsonl:7: error[first-kept-other-branch] entry c2 field "
            "'firstKeptEntryId': 'b1' names an entry on another branch (line 3), not one before the compaction on its "
            "path; pi's buildSessionContext looks for it only before the compaction, so no message from before the "
            "compaction is kept (only the summary and what follows it)",
            "transcript-first-kept-not-earlier.jsonl:8: warning[first-kept-itself] entry c3 field 'firstKeptEntryId': "
            "names the compaction itself (a way to keep nothing); pi's buildSessionContext looks for it only before "
            "the compaction, so no message from before the compaction is kept (only the summary and what follows it)",
            "transcript-first-kept-not-earlier.jsonl:9: error[first-kept-unknown] entry c4 field 'firstKeptEntryId': "
            "'gone' names no entry in the file; pi's buildSessionContext looks for it only before the compaction, so "
            "no message from before the compaction is kept (only the summary and what follows it)",
            "transcript-first-kept-not-earlier.jsonl:10: error[first-kept-missing] entry c5 field 'firstKeptEntryId': "
            "the compaction names no first kept entry; pi's buildSessionContext looks for it only before the "
            "compaction, so no message from before the compaction is kept (only the summary and what follows it)",
        ),
    ),
    Case(
        "transcript-is-a-fifo",
        T,
        "cli",
        ("inspect", "pipe.jsonl"),
        2,
        (
            "pipe.jsonl: error[not-a-file]: is a FIFO (named pipe), not a file: reading it would wait for a writer; "
            "expected a .jsonl transcript file",
        ),
        setup=make_fifo("pipe.jsonl"),
        generated="pipe.jsonl: a FIFO (named pipe)",
    ),
    Case(
        "transcript-links-to-a-device",
        T,
        "cli",
        ("inspect", "zero.jsonl"),
        2,
        ("zero.jsonl: error[not-a-file]: is a character device, not a file; expected a .jsonl transcript file",),
        setup=make_link("zero.jsonl", "/dev/zero"),
        generated="zero.jsonl → /dev/zero",
    ),
    Case(
        "transcript-link-loop",
        T,
        "cli",
        ("inspect", "loop.jsonl"),
        2,
        (
            "loop.jsonl: error[not-a-file]: is a symbolic link loop (the links never reach a file); expected a .jsonl "
            "transcript file",
        ),
        setup=make_link("loop.jsonl", "loop.jsonl"),
        generated="loop.jsonl → loop.jsonl",
    ),
    # -- cassettes: `load_cassette` (the replay engine and the pipeline read them through it)
    Case(
        "cassette-truncated",
        C,
        "load_cassette",
        ("cassette-truncated.cassette.yaml",),
        None,
        (
            "cassette-truncated.cassette.yaml:14: error[cassette-invalid] field 'version': 'version: 1' is missing: the "
            "file is probably truncated (vcrpy writes it last)",
        ),
    ),
    Case(
        "cassette-invalid-yaml",
        C,
        "load_cassette",
        ("cassette-invalid-yaml.cassette.yaml",),
        None,
        (
            "cassette-invalid-yaml.cassette.yaml:8: error[cassette-invalid]: is not valid YAML (did not find expected "
            "',' or ']'); expected a vcrpy cassette",
        ),
    ),
    Case(
        "cassette-not-a-mapping",
        C,
        "load_cassette",
        ("cassette-not-a-mapping.cassette.yaml",),
        None,
        (
            "cassette-not-a-mapping.cassette.yaml:1: error[cassette-invalid] field 'interactions': not a vcrpy "
            "cassette: expected a mapping with an 'interactions' list and 'version: 1'",
        ),
    ),
    Case(
        "cassette-interaction-without-request",
        C,
        "load_cassette",
        ("cassette-interaction-without-request.cassette.yaml",),
        None,
        (
            "cassette-interaction-without-request.cassette.yaml:2: error[cassette-invalid] field "
            "'interactions[0].request': expected a mapping with method, uri, body and headers",
        ),
    ),
    Case(
        "cassette-status-not-a-number",
        C,
        "load_cassette",
        ("cassette-status-not-a-number.cassette.yaml",),
        None,
        (
            "cassette-status-not-a-number.cassette.yaml:2: error[cassette-invalid] field "
            "'interactions[0].response.status.code': expected an integer HTTP status code",
        ),
    ),
    Case(
        "cassette-request-without-body",
        C,
        "load_cassette",
        ("cassette-request-without-body.cassette.yaml",),
        None,
        (
            "cassette-request-without-body.cassette.yaml:2: error[cassette-invalid] field "
            "'interactions[0].request.body': missing; vcrpy's request has method, uri, body and headers",
        ),
    ),
    Case(
        "cassette-wrong-version",
        C,
        "load_cassette",
        ("cassette-wrong-version.cassette.yaml",),
        None,
        (
            "cassette-wrong-version.cassette.yaml:18: error[cassette-invalid] field 'version': 'version: 1' is 2; "
            "replaylab reads vcrpy cassette format version 1",
        ),
    ),
    Case(
        "cassette-control-characters",
        C,
        "load_cassette",
        ("cassette-control-characters.cassette.yaml",),
        None,
        (
            "cassette-control-characters.cassette.yaml:11: error[cassette-invalid]: is not valid YAML (unacceptable "
            "character #x0000: control characters are not allowed); expected a vcrpy cassette",
        ),
    ),
    Case(
        "cassette-missing",
        C,
        "load_cassette",
        ("nowhere.cassette.yaml",),
        None,
        ("nowhere.cassette.yaml: error[cassette-missing]: no such cassette file",),
    ),
    Case(
        "cassette-is-a-directory",
        C,
        "load_cassette",
        ("rec.cassette.yaml",),
        None,
        ("rec.cassette.yaml: error[cassette-invalid]: is a directory; expected a vcrpy cassette file",),
        setup=make_dir("rec.cassette.yaml"),
        generated="rec.cassette.yaml/: a directory",
    ),
    Case(
        "cassette-odd-header-types",
        C,
        "load_cassette",
        ("cassette-odd-header-types.cassette.yaml",),
        None,
        (
            "cassette-odd-header-types.cassette.yaml:2: error[cassette-invalid] field "
            "'interactions[0].response.headers.X-Retry': expected a string or a list of strings, got int 3",
        ),
    ),
    Case(
        "cassette-alias-bomb",
        C,
        "load_cassette",
        ("cassette-alias-bomb.cassette.yaml",),
        None,
        (
            "cassette-alias-bomb.cassette.yaml:10: error[cassette-invalid] field 'notes.6.4': expands to more than "
            "5,000,000 values at alias *f (an alias repeats all it names); a cassette holds recorded HTTP "
            "interactions; expected a vcrpy cassette",
        ),
    ),
    Case(
        "cassette-is-a-fifo",
        C,
        "load_cassette",
        ("rec.cassette.yaml",),
        None,
        (
            "rec.cassette.yaml: error[cassette-invalid]: is a FIFO (named pipe), not a file: reading it would wait "
            "for a writer; expected a vcrpy cassette file",
        ),
        setup=make_fifo("rec.cassette.yaml"),
        generated="rec.cassette.yaml: a FIFO (named pipe)",
    ),
    # -- cassettes through the real user path: `pytest --replaylab` (exit 1: the item errors)
    Case(
        "pipeline-cassette-truncated",
        C,
        "pytest",
        (*PYTEST, *PIPELINE_SUITE),
        1,
        (
            "replaylab: 1 items: 0 passed, 0 failed, 1 error, 0 cannot compact, 0 not exercised; 0 unexpected blocking defects",
            f"…(RECORDING_INVALID): {TRUNCATED}",
        ),
        setup=lambda root: pipeline_recording(root, "cassette-truncated.cassette.yaml"),
        generated="rec/sess.jsonl (6 turns) + suites/s.yaml; rec/sess.cassette.yaml = cassette-truncated",
    ),
    Case(
        "pipeline-error-shows-the-story",
        C,
        "pytest",
        (*PYTEST, *PIPELINE_SUITE),
        1,
        (f"ERROR: infrastructure error (RECORDING_INVALID): {TRUNCATED}", "!_pytest/runner.py"),
        setup=lambda root: pipeline_recording(root, "cassette-truncated.cassette.yaml"),
        generated="as pipeline-cassette-truncated",
    ),
    Case(
        "pipeline-cassette-missing",
        C,
        "pytest",
        (*PYTEST, *PIPELINE_SUITE),
        1,
        (
            "replaylab: 1 items: 0 passed, 0 failed, 1 error, 0 cannot compact, 0 not exercised; 0 unexpected blocking defects",
            "…(CASSETTE_MISSING): no cassette next to the recording: sess.cassette.yaml",
        ),
        setup=lambda root: pipeline_recording(root, None),
        generated="rec/sess.jsonl (6 turns) + suites/s.yaml, no cassette",
    ),
    Case(
        "pipeline-cassette-of-another-session",
        C,
        "pytest",
        (*PYTEST, *PIPELINE_SUITE),
        1,
        (
            "replaylab: 1 items: 0 passed, 0 failed, 1 error, 0 cannot compact, 0 not exercised; "
            "0 unexpected blocking defects, 1 unexpected regression",
            "…sess.cassette.yaml",
        ),
        setup=lambda root: pipeline_recording(root, "cassette-of-another-session.cassette.yaml"),
        generated="rec/sess.jsonl (6 get_order calls) + a cassette holding one book_flight call",
    ),
    # -- suites: `load_suite` (the plugin runs it on every suite before collecting)
    Case(
        "suite-unknown-key",
        S,
        "load_suite",
        ("suite-unknown-key.yaml",),
        None,
        ("suite-unknown-key.yaml:5: error[suite-invalid] field 'compaction.contextToken': unknown key 'contextToken'",),
    ),
    Case(
        "suite-glob-matches-nothing",
        S,
        "load_suite",
        ("suite-glob-matches-nothing.yaml",),
        None,
        (
            "suite-glob-matches-nothing.yaml:2: error[suite-recordings] field 'recordings': 'recordings/*.jsonl' "
            "matches no .jsonl transcript (resolved against .)",
        ),
    ),
    Case(
        "suite-bad-glob",
        S,
        "load_suite",
        ("suite-bad-glob.yaml",),
        None,
        (
            "suite-bad-glob.yaml:2: error[suite-recordings] field 'recordings': 'rec/[a-.jsonl' matches no .jsonl "
            "transcript (resolved against .)",
        ),
    ),
    Case(
        "suite-invalid-yaml",
        S,
        "load_suite",
        ("suite-invalid-yaml.yaml",),
        None,
        ("suite-invalid-yaml.yaml:4: error[suite-yaml]: not valid YAML: found character that cannot start any token",),
    ),
    Case(
        "suite-not-a-mapping",
        S,
        "load_suite",
        ("suite-not-a-mapping.yaml",),
        None,
        (
            "suite-not-a-mapping.yaml:1: error[suite-shape]: a suite must be a YAML mapping with at least 'name' and "
            "'recordings'",
        ),
    ),
    Case(
        "suite-duplicate-key",
        S,
        "load_suite",
        ("suite-duplicate-key.yaml",),
        None,
        (
            "suite-duplicate-key.yaml:4: error[suite-duplicate-key] field 'compaction': key 'compaction' appears again "
            "(first on line 3); expected each key once",
        ),
    ),
    Case(
        "suite-bad-value",
        S,
        "load_suite",
        ("suite-bad-value.yaml",),
        None,
        (
            "suite-bad-value.yaml:4: error[suite-invalid] field 'compaction.contextTokens': Value error, expected a "
            "number of tokens from 1 to 100,000,000, or auto (got -5)",
        ),
    ),
    Case(
        "suite-missing-recordings",
        S,
        "load_suite",
        ("suite-missing-recordings.yaml",),
        None,
        (
            "suite-missing-recordings.yaml:1: error[suite-invalid] field 'recordings': required key 'recordings' is "
            "missing",
        ),
    ),
    Case(
        "suite-bad-compact-at",
        S,
        "load_suite",
        ("suite-bad-compact-at.yaml",),
        None,
        (
            "suite-bad-compact-at.yaml:3: error[suite-invalid] field 'compact_at': Value error, expected 'auto', "
            "'turn:N' or 'every:N' (got 'halfway')",
        ),
    ),
    Case(
        "suite-scenario-bad-mode",
        S,
        "load_suite",
        ("suite-scenario-bad-mode.yaml",),
        None,
        (
            "suite-scenario-bad-mode.yaml:6: error[suite-invalid] field 'scenarios.0.compaction.mode': scenario 'wild': "
            "Input should be 'safeguard', 'auto', 'aggressive' or 'manual' (got 'yolo')",
        ),
    ),
    Case(
        "suite-unknown-defect-code",
        S,
        "load_suite",
        ("suite-unknown-defect-code.yaml",),
        None,
        (
            "suite-unknown-defect-code.yaml:4: error[suite-invalid] field 'expect.defects.0': Input should be "
            "'MUTATION_DROPPED', 'MUTATION_ALTERED', 'PAIR_BROKEN', 'REPLAY_FLAG_WRONG', 'MUTATED_IDS_WRONG', "
            "'SIDE_EFFECT_ESCAPED', 'DUPLICATE_SIDE_EFFECT', 'TRANSCRIPT_REWRITTEN', 'MISLABELLED_TOOL', "
            "'THINKING_ALTERED', 'TOOL_SEQUENCE_DIVERGED', 'ANSWER_DIVERGED', 'IDENTIFIER_LOST', 'SUMMARY_INVALID', "
            "'COMPACTION_LOOP', 'COMPACTION_BYPASSED', 'TRANSCRIPT_OVERSIZE', 'BASELINE_DRIFT', 'RECORDING_INVALID', "
            "'CASSETTE_MISSING', 'COMPACTION_FAILED', 'COMPACTION_CANCELLED', 'CANNOT_COMPACT', 'TOOL_FAILED', 'AGENT_CONTEXT_DIFFERS', "
            "'RECOVERY_CHAIN_WRONG', 'OVERFLOW_GAVE_UP', 'RECORDED_MUTATION_DROPPED', 'RECORDED_IDENTIFIER_LOST' or 'RECORDED_SUMMARY_INVALID' (got 'MUTATION_DROPED')",
        ),
    ),
    Case(
        "suite-python-tag",
        S,
        "load_suite",
        ("suite-python-tag.yaml",),
        None,
        (
            "suite-python-tag.yaml:1: error[suite-yaml]: not valid YAML: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object/apply:os.system'",
        ),
    ),
    Case(
        "suite-invalid-utf8",
        S,
        "load_suite",
        ("suite-invalid-utf8.yaml",),
        None,
        ("suite-invalid-utf8.yaml: error[suite-utf8]: is not UTF-8 text (invalid continuation byte)",),
    ),
    Case(
        "suite-is-a-directory",
        S,
        "load_suite",
        ("suites.yaml",),
        None,
        ("suites.yaml: error[suite-not-file]: is a directory; expected a suite YAML file",),
        setup=make_dir("suites.yaml"),
        generated="suites.yaml/: a directory",
    ),
    Case(
        "pytest-invalid-suite",
        S,
        "pytest",
        (*PYTEST, "suite-unknown-key.yaml"),
        4,
        (
            "ERROR: replaylab: invalid suite file(s):",
            "  suite-unknown-key.yaml:5: error[suite-invalid] field 'compaction.contextToken': unknown key "
            "'contextToken'",
        ),
        inputs=("suite-unknown-key.yaml",),
    ),
    Case(
        "suite-alias-bomb",
        S,
        "load_suite",
        ("suite-alias-bomb.yaml",),
        None,
        (
            "suite-alias-bomb.yaml:8: error[suite-yaml] field 'description.4.2': expands to more than 20,000 values "
            "at alias *d (an alias repeats all it names); a suite is a short, shallow mapping",
        ),
    ),
    Case(
        "suite-recursive-alias",
        S,
        "load_suite",
        ("suite-recursive-alias.yaml",),
        None,
        (
            "suite-recursive-alias.yaml:5: error[suite-yaml] field 'scenarios.0.match.args': alias *all is used "
            "inside the value it names: the value would hold itself",
        ),
    ),
    Case(
        "suite-huge-integer",
        S,
        "load_suite",
        ("suite-huge-integer.yaml",),
        None,
        (
            "suite-huge-integer.yaml:3: error[suite-yaml] field 'repeats': an integer of 5,001 digits; expected a "
            "count of at most 30 digits",
        ),
    ),
    Case(
        "suite-empty-per-recording-key",
        S,
        "load_suite",
        ("suite-empty-per-recording-key.yaml",),
        None,
        (
            "suite-empty-per-recording-key.yaml:4: error[suite-invalid] field \"per_recording['']\": '' is not a "
            "pattern; expected a glob on the recording's file name, e.g. 'refund-*'",
        ),
    ),
    Case(
        "suite-per-recording-matches-nothing",
        S,
        "load_suite",
        ("suite-per-recording-matches-nothing.yaml",),
        None,
        (
            "suite-per-recording-matches-nothing.yaml:4: error[suite-invalid] field "
            "\"per_recording['transcript-okk.jsonl']\": 'transcript-okk.jsonl' matches no recording of this "
            "suite; did you mean 'transcript-ok.jsonl'?",
        ),
    ),
    Case(
        "suite-bad-tool-classes",
        S,
        "load_suite",
        ("suite-bad-tool-classes.yaml",),
        None,
        (
            "suite-bad-tool-classes.yaml:3: error[suite-invalid] field 'tool_classes': 'tool-classes-not-json.json' "
            "line 1: does not parse as JSON (Expecting property name enclosed in double quotes at column 2); "
            "expected a JSON object mapping each tool name to its class (read, write, exec, ...)",
        ),
        inputs=("suite-bad-tool-classes.yaml", "tool-classes-not-json.json"),
    ),
    Case(
        "suite-scenario-repeats-unbounded",
        S,
        "load_suite",
        ("suite-scenario-repeats-unbounded.yaml",),
        None,
        (
            "suite-scenario-repeats-unbounded.yaml:4: error[suite-invalid] field 'scenarios.0.repeats': Input should "
            "be less than or equal to 100 (got 1000000000)",
        ),
    ),
    Case(
        "suite-duplicate-scenario-names",
        S,
        "load_suite",
        ("suite-duplicate-scenario-names.yaml",),
        None,
        (
            "suite-duplicate-scenario-names.yaml:6: error[suite-invalid] field 'scenarios.1.name': scenario name "
            "'tight' is used again (first on line 4); expected each scenario name once in a suite (it is the item's id)",
        ),
    ),
    Case(
        "suite-scenario-name-with-separator",
        S,
        "load_suite",
        ("suite-scenario-name-with-separator.yaml",),
        None,
        (
            "suite-scenario-name-with-separator.yaml:4: error[suite-invalid] field 'scenarios.0.name': scenario name "
            "'a::b' holds '::', which separates the parts of a pytest node id; expected a name without it",
        ),
    ),
    Case(
        "suite-glob-meets-a-link-loop",
        S,
        "load_suite",
        ("suite-glob-link-loop.yaml",),
        None,
        (
            "suite-glob-link-loop.yaml:2: error[suite-recordings] field 'recordings': 'rec/**/*.jsonl' meets a "
            "symbolic link loop at rec/sub/up (it leads back to a folder it is in); remove the link or narrow the "
            "pattern",
        ),
        setup=make_link("rec/sub/up", ".."),
        generated="rec/sub/up → .. (a loop under `**`)",
    ),
    Case(
        "suite-recording-is-a-fifo",
        S,
        "load_suite",
        ("suite-ok.yaml",),
        None,
        (
            "suite-ok.yaml:2: error[suite-recordings] field 'recordings': 'rec/*.jsonl' matches rec/pipe.jsonl, which "
            "is a FIFO (named pipe), not a file: reading it would wait for a writer; expected .jsonl transcript files",
        ),
        inputs=("suite-ok.yaml",),
        setup=make_fifo("rec/pipe.jsonl"),
        generated="rec/pipe.jsonl: a FIFO (named pipe)",
    ),
    Case(
        "pytest-duplicate-scenario-names",
        S,
        "pytest",
        (*PYTEST, "suite-duplicate-scenario-names.yaml"),
        4,
        (
            "ERROR: replaylab: invalid suite file(s):",
            "  suite-duplicate-scenario-names.yaml:6: error[suite-invalid] field 'scenarios.1.name': scenario name "
            "'tight' is used again (first on line 4); expected each scenario name once in a suite (it is the item's id)",
        ),
        inputs=("suite-duplicate-scenario-names.yaml",),
        setup=recordings_dir,
        generated="rec/transcript-ok.jsonl",
    ),
    # -- tool packs: `replaylab inspect --tools MODULE` (the pipeline loads packs the same way)
    Case(
        "toolpack-raises-at-import",
        P,
        "cli",
        ("inspect", "--tools", "pack_raises", OK),
        2,
        (
            "--tools: error[toolpack-import] field 'tools': tool pack 'pack_raises' failed to import: RuntimeError: "
            "HELPDESK_URL is not set",
        ),
        setup=make_pack("pack_raises", "import os\nraise RuntimeError('HELPDESK_URL is not set')\n"),
        generated="pack_raises.py: raises RuntimeError at import",
    ),
    Case(
        "toolpack-syntax-error",
        P,
        "cli",
        ("inspect", "--tools", "pack_syntax", OK),
        2,
        (
            "--tools: error[toolpack-import] field 'tools': tool pack 'pack_syntax' failed to import: SyntaxError: "
            "'[' was never closed (pack_syntax.py, line 1)",
        ),
        setup=make_pack("pack_syntax", "TOOLS = [\n"),
        generated="pack_syntax.py: `TOOLS = [`",
    ),
    Case(
        "toolpack-missing-dependency",
        P,
        "cli",
        ("inspect", "--tools", "pack_dep", OK),
        2,
        (
            "--tools: error[toolpack-import] field 'tools': tool pack 'pack_dep' failed to import: ModuleNotFoundError: "
            "No module named 'helpdesk_sdk'",
        ),
        setup=make_pack("pack_dep", "import helpdesk_sdk\nTOOLS = []\n"),
        generated="pack_dep.py: imports a missing module",
    ),
    Case(
        "toolpack-without-tools",
        P,
        "cli",
        ("inspect", "--tools", "pack_empty", OK),
        2,
        ("--tools: error[toolpack-invalid] field 'tools': tool pack 'pack_empty' must define TOOLS: list[ToolSpec]",),
        setup=make_pack("pack_empty", "TOOLS = [{'name': 'get_order'}]\n"),
        generated="pack_empty.py: TOOLS of dicts",
    ),
    Case(
        "toolpack-not-found",
        P,
        "cli",
        ("inspect", "--tools", "no_such_pack", OK),
        2,
        (
            "--tools: error[toolpack-import] field 'tools': tool pack 'no_such_pack' failed to import: "
            "ModuleNotFoundError: No module named 'no_such_pack'",
        ),
    ),
    Case(
        "toolpack-calls-sys-exit",
        P,
        "cli",
        ("inspect", "--tools", "pack_exit", OK),
        2,
        ("--tools: error[toolpack-import] field 'tools': tool pack 'pack_exit' failed to import: SystemExit: 3",),
        setup=make_pack("pack_exit", "import sys\nsys.exit(3)\n"),
        generated="pack_exit.py: sys.exit(3) at import",
    ),
    # -- CLI options and other user input
    Case(
        "cli-import-unknown-from",
        CLI,
        "cli",
        ("import", "--from", "langchain", OK, "--out", "out"),
        2,
        (
            "replaylab import: error: argument --from: invalid choice: 'langchain' (choose from 'tau-bench', "
            "'tau2-bench', 'claude-code', 'pi', 'openai-chat', 'openclaw', 'codex', 'openhands')",
        ),
    ),
    Case(
        "cli-import-without-out",
        CLI,
        "cli",
        ("import", "--from", "pi", OK),
        2,
        ("replaylab import: error: the following arguments are required: --out",),
    ),
    Case(
        "cli-unknown-command",
        CLI,
        "cli",
        ("replay", OK),
        2,
        ("replaylab: error: argument COMMAND: invalid choice: 'replay' (choose from 'init', 'inspect', 'import', …",),
    ),
    Case(
        "cli-import-invalid-json-line",
        CLI,
        "cli",
        ("import", "--from", "openai-chat", "import-openai-chat-invalid-json.jsonl", "--out", "out"),
        2,
        (
            "import-openai-chat-invalid-json.jsonl:2: error[bad-import-source]: line does not parse as JSON (unexpected "
            "end of data); expected one JSON object per line",
        ),
    ),
    Case(
        "cli-import-over-existing-output",
        CLI,
        "cli",
        ("import", "--from", "openai-chat", "import-openai-chat-ok.json", "--out", "out"),
        2,
        (
            "out/import-openai-chat-ok.jsonl: error[output-exists]: already exists; replaylab never overwrites a "
            "transcript or cassette (choose an empty --out folder)",
        ),
        setup=imported_once,
        generated="out/: the same session imported before (must stay byte-identical)",
    ),
    Case(
        "cli-inspect-bad-tool-classes",
        CLI,
        "cli",
        ("inspect", "--tool-classes", "tool-classes-not-json.json", OK),
        2,
        (
            "tool-classes-not-json.json:1: error[bad-tool-classes] field '--tool-classes': does not parse as JSON "
            "(Expecting property name enclosed in double quotes at column 2); expected a JSON object mapping each "
            "tool name to its class (read, write, exec, ...)",
        ),
    ),
    Case(
        "cli-bad-scrub-pattern",
        CLI,
        "cli",
        ("import", "--from", "openai-chat", "import-openai-chat-ok.json", "--out", "out"),
        2,
        (
            "REPLAYLAB_SCRUB_PATTERNS:2: error[scrub-pattern] field 'pattern 2': 'internal-(ticket' is not a valid "
            "regular expression (missing ), unterminated subpattern at position 9); expected one Python regex per line",
        ),
        env={"REPLAYLAB_SCRUB_PATTERNS": "corp-[0-9]{6}\ninternal-(ticket"},
    ),
    Case(
        "cli-report-merge-missing",
        CLI,
        "cli",
        ("report", "merge", "shard-1/replaylab.json", "--out", "merged"),
        2,
        ("shard-1/replaylab.json: error[REPORT_NOT_FOUND]: does not exist; expected a replaylab.json file",),
    ),
    Case(
        "pytest-bless-with-shard",
        CLI,
        "pytest",
        (*PYTEST, "--replaylab-bless", "--replaylab-shard", "1/2", "suite-ok.yaml"),
        4,
        ("ERROR: --replaylab-bless and --replaylab-shard conflict: bless a complete run, not a shard",),
        inputs=("suite-ok.yaml",),
        setup=recordings_dir,
        generated="rec/transcript-ok.jsonl",
    ),
    Case(
        "pytest-shard-out-of-range",
        CLI,
        "pytest",
        (*PYTEST, "--replaylab-shard", "3/2", "suite-ok.yaml"),
        4,
        ("ERROR: --replaylab-shard '3/2': expected 1 <= K <= N",),
        inputs=("suite-ok.yaml",),
        setup=recordings_dir,
        generated="rec/transcript-ok.jsonl",
    ),
    Case(
        "cli-compact-out-dangling-link",
        CLI,
        "cli",
        ("compact", OK, "--out", "copy.jsonl"),
        2,
        (
            "copy.jsonl: error[exists] field 'out': is a symbolic link; the working copy must be a new file, not "
            "written through a link",
        ),
        setup=make_link("copy.jsonl", "elsewhere/copy.jsonl"),
        generated="copy.jsonl → elsewhere/copy.jsonl (nothing there)",
    ),
    Case(
        "cli-compact-out-missing-folder",
        CLI,
        "cli",
        ("compact", OK, "--out", "nowhere/copy.jsonl"),
        2,
        (
            "nowhere/copy.jsonl: error[bad-out] field 'out': its folder nowhere does not exist; expected a path in an "
            "existing folder",
        ),
    ),
]


def _inputs(case: Case) -> tuple[str, ...]:
    """Corpus files the case needs: explicit ones, else the file named in its args, plus the clean transcript."""
    if case.inputs:
        return case.inputs
    named = tuple(a for a in case.args if (BAD / a).is_file())
    return named + ((OK,) if OK not in named and case.area in (P, CLI, S) else ())


# ---------------------------------------------------------------- running a case


def _hashes(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            out[str(path.relative_to(root))] = digest.hexdigest()
    return out


def _prepare(case: Case, root: Path) -> None:
    for name in _inputs(case):
        shutil.copy(BAD / name, root / name)
    if case.area in (S,) and case.run == "load_suite":
        recordings_dir(root)
    if case.setup is not None:
        case.setup(root)


def run_case(case: Case, root: Path) -> tuple[int | None, str]:
    """Run one case in `root`; (exit status or None, everything it printed / its diagnostics)."""
    if case.run in ("cli", "pytest"):
        module = ["-m", "replaylab.cli"] if case.run == "cli" else ["-m", "pytest"]
        env = {**os.environ, "PYTHONPATH": str(root), **CHILD_PLUGINS, **case.env}
        env.pop("REPLAYLAB_FUZZ_EXAMPLES", None)
        done = subprocess.run(
            [PYTHON, *module, *case.args], cwd=root, env=env, capture_output=True, text=True, timeout=600
        )
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        return done.returncode, (done.stdout + done.stderr).replace(f"{root}/", "")  # paths as the user typed them
    function = {"load_cassette": load_cassette, "load_suite": load_suite}[case.run]
    cwd = os.getcwd()
    os.chdir(root)
    try:
        function(case.args[0])
    except InputError as exc:  # anything else propagates: a crash is a failure of the case
        return None, "\n".join(str(d) for d in exc.diagnostics)
    finally:
        os.chdir(cwd)
    raise AssertionError(f"{case.run}({case.args[0]!r}) accepted a bad input")


def has_line(output: str, message: str) -> bool:
    """`message` is one whole line of the output (indentation ignored). Variants: `text…` a line
    starting with text (lists that grow, like the commands argparse offers), `…text` text anywhere
    (inside a longer line), `!text` text nowhere."""
    if message.startswith("!"):
        return message[1:] not in output
    if message.startswith("…"):
        return message[1:] in output
    lines = [line.strip() for line in output.splitlines()]
    if message.endswith("…"):
        return any(line.startswith(message[:-1].strip()) for line in lines)
    return message.strip() in lines


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    if case.name.startswith("transcript-50mb"):
        marks.append(pytest.mark.slow)
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    _prepare(case, tmp_path)
    before = _hashes(tmp_path)
    status, output = run_case(case, tmp_path)
    after = _hashes(tmp_path)
    assert {k: after.get(k) for k in before} == before, "an input file changed"
    assert status == case.exit, output[-3000:]
    for message in case.messages:
        assert has_line(output, message), f"expected:\n{message}\n--- got:\n{output[-4000:]}"


def test_corpus_is_complete_and_small() -> None:
    """≥ 30 cases over every area; every corpus file belongs to a case; corpus files are small."""
    assert len(CASES) >= 30
    assert {c.area for c in CASES} == {T, C, S, P, CLI}
    assert len({c.name for c in CASES}) == len(CASES)
    used = {name for case in CASES for name in _inputs(case)} | {
        "cassette-truncated.cassette.yaml",
        "cassette-of-another-session.cassette.yaml",
        "import-openai-chat-ok.json",
        "transcript-ok.cassette.yaml",
        "README.md",
        "planted-keys.txt",  # the identifier corpus's fake keys (tests/builders/openclaw_corpus.py)
        "planted-scan-secrets.txt",  # the identifier scan's fake secrets (test_compaction_identifiers.py)
    }
    on_disk = {p.name for p in BAD.iterdir()}
    assert on_disk - used == set(), "corpus files no case uses"
    assert used - on_disk == set(), "cases name files missing from the corpus"
    assert max(p.stat().st_size for p in BAD.iterdir()) < 64 * 1024


# ---------------------------------------------------------------- the README


def readme_text() -> str:
    rows = []
    for number, case in enumerate(CASES, 1):
        source = "; ".join(part for part in (", ".join(f"`{n}`" for n in _inputs(case)), case.generated) if part)
        status = "InputError" if case.exit is None else str(case.exit)
        message = "<br>".join(f"`{_cell(m)}`" for m in case.messages)
        if case.xfail:
            message += f"<br>**not yet** (strict xfail): {_cell(case.xfail)}"
        rows.append(
            f"| {number} | {case.name} | {case.area} | {source} | `{_cell(case.command)}` | {status} | {message} |"
        )
    return README_HEAD.format(count=len(CASES)) + "\n".join(rows) + "\n" + README_TAIL


def _cell(text: str) -> str:
    """A table cell: one line (a case's message may hold the control characters it checks for)."""
    return printable(text).replace("|", "\\|").replace("`", "'")


README_HEAD = """# Bad-input corpus

Generated from `CASES` in `tests/robustness/test_bad_inputs.py` by `PYTHONPATH=tests python tests/robustness/test_bad_inputs.py --write-readme`;
`test_readme_matches_the_table` fails when this file and the table disagree. {count} cases.

Every case runs in a fresh temporary folder holding copies of its inputs (paths in the messages are relative
to it). The test asserts the exact message line(s) below (`text…`: a line starting with text, `…text`: text
inside a longer line, `!text`: text must not appear), the exit status (`InputError`: the call raises
`replaylab.diagnostics.InputError` and nothing else), that no traceback is printed (CLI cases run in a
subprocess: `python -m replaylab.cli ...` or `python -m pytest --replaylab ...`), and that every input file is
byte-identical afterwards (sha256 before and after). Exit statuses: `replaylab` 0 clean, 1 diagnostics
found, 2 usage error; `pytest` 1 an item failed or errored, 4 usage error.

Suites glob `rec/*.jsonl`; the test puts `transcript-ok.jsonl` there. Tool-pack cases generate a one-line
module next to the inputs and run with `PYTHONPATH` set to that folder. The 50 MB single line is generated,
never committed; so are the FIFOs and symbolic links (to a device, to themselves, into a loop), which the
case makes in its folder. Rows marked **not yet** are strict xfails: the fix belongs to the module's owner, and the
test starts failing (XPASS) the day it lands, so the marker gets removed.

| # | case | area | input | command | exit | message |
|---|---|---|---|---|---|---|
"""

README_TAIL = """
Fuzzing (hypothesis, `tests/test_fuzz.py`, strategies in `tests/strategies.py`) covers the same readers with
generated input: the loader (eager and lazy), `inspect`, the suite parser, the cassette reader and `compact()`.
CI runs about 4,500 examples (counts per property in `CI_EXAMPLES`); `REPLAYLAB_FUZZ_EXAMPLES=N` runs N per
property with a fresh random seed.

Adding a case: put the (small) file in this folder named after the case, add a `Case(...)` row to `CASES`,
run `PYTHONPATH=tests python tests/robustness/test_bad_inputs.py --write-readme`, and run `pytest tests/robustness/test_bad_inputs.py`.
"""


def test_readme_matches_the_table() -> None:
    assert README.read_text(encoding="utf-8") == readme_text(), (
        "tests/data/bad/README.md is stale: run `PYTHONPATH=tests python tests/robustness/test_bad_inputs.py --write-readme`"
    )


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-readme"]:
        README.write_text(readme_text(), encoding="utf-8")
        print(f"wrote {README} ({len(CASES)} cases)")
    else:
        print("usage: PYTHONPATH=tests python tests/robustness/test_bad_inputs.py --write-readme", file=sys.stderr)
        sys.exit(2)
