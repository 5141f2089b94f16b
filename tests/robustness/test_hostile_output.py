"""Output that cannot be forged: what replaylab prints and writes holds no raw line break, control
character or bidi override from its input, and its report files cannot be redirected or left
half-written.

* `printable` is the one escaping function; its spellings are checked here.
* A real `pytest --replaylab` run on a recording whose file name, entry ids and scenario name hold
  a line break that forges a result line, ESC sequences, NUL and a right-to-left override: the
  terminal, the markdown report and JUnit show every one of them escaped, and no forged line.
* The report writer: symbolic links planted at the temporary names the writer used to use, and
  in place of a report itself, redirect nothing; SIGTERM and SIGINT in the middle of writing
  leave no temporary file behind (real signals to a real process).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from builders.pytest_runs import run_pytest
from builders.reports import build_report
from replaylab.printable import printable
from replaylab.report import REPORT_FILES, write_reports
from replaylab.report.atomic import temporary_path
from repo_paths import REPO_ROOT, TESTS

REPO = REPO_ROOT
#: what must never reach the output raw
RAW = ("\x1b", "\x00", "\u202e", "\u2066", "\x85", "\u2028")


@pytest.mark.parametrize(
    "text, shown",
    [
        ("plain → text, é 😀", "plain → text, é 😀"),
        ("a\nb\r\nc\td", "a\\nb\\r\\nc\\td"),
        ("\x1b[2Jred\x00", "\\x1b[2Jred\\x00"),
        ("\x7f \x85 \x9b", "\\x7f \\x85 \\x9b"),
        ("abc\u202eevil", "abc<U+202E>evil"),
        ("\u2066x\u2069 \u200f \u061c", "<U+2066>x<U+2069> <U+200F> <U+061C>"),
        ("line\u2028sep\u2029", "line<U+2028>sep<U+2029>"),
        ("\ufeffbom\u200b", "<U+FEFF>bom<U+200B>"),
        ("lone \ud800 half", "lone <U+D800> half"),
    ],
)
def test_printable_spells_what_would_forge_or_hide_output(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(shown) == shown


# ---------------------------------------------------------------- a hostile run, end to end

HOSTILE_ID = "e-evil\nPASSED suites/ok.yaml::all::fine\x1b[2J\x00\u202e"
HOSTILE_NAME = "tight\nFAKE: 0 failed\x1b]0;owned\x07\u202eevil"
HOSTILE_FILE = "cancel\nPASSED fake\x1b[31m"


def hostile_project(tmp_path: Path) -> Path:
    """cancel-two-orders under a hostile file name, every entry id of its mutating calls made
    hostile (parent links kept), replayed by a negative control that must fail (aggressive mode
    finds MUTATION_DROPPED, the suite expects PAIR_BROKEN), so the failure story and the
    markdown tables print those ids."""
    root = tmp_path / "project"
    (root / "rec").mkdir(parents=True)
    (root / "suites").mkdir()
    source = REPO / "recordings" / "helpdesk" / "cancel-two-orders"
    lines = [json.loads(line) for line in source.with_suffix(".jsonl").read_text().splitlines()]
    renamed = {}
    for entry in lines[1:]:
        content = entry.get("message", {}).get("content")
        if isinstance(content, list) and any(b.get("type") == "toolCall" for b in content):
            renamed[entry["id"]] = f"{entry['id']}{HOSTILE_ID}"
    for entry in lines[1:]:
        entry["id"] = renamed.get(entry["id"], entry["id"])
        entry["parentId"] = renamed.get(entry.get("parentId"), entry.get("parentId"))
    (root / "rec" / f"{HOSTILE_FILE}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    shutil.copy(Path(f"{source}.cassette.yaml"), root / "rec" / f"{HOSTILE_FILE}.cassette.yaml")
    shutil.copytree(REPO / "examples", root / "examples")
    (root / "suites" / "s.yaml").write_text(
        "name: hostile\nrecordings: ../rec/*.jsonl\ntools: examples.helpdesk\n"
        "compaction: {mode: aggressive, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}\n"
        "expect: {defects: [PAIR_BROKEN]}\n"
        f"scenarios:\n  - name: {json.dumps(HOSTILE_NAME)}\n"
    )
    return root


def test_ids_names_and_file_names_reach_no_output_raw(tmp_path: Path) -> None:
    root = hostile_project(tmp_path)
    done = run_pytest(
        root, "-rA", "--replaylab", "suites", "--junitxml", "junit.xml", "--replaylab-report", "out", pythonpath=[root]
    )
    assert done.returncode == 1, done.stdout[-3000:]
    markdown = (root / "out" / "replaylab.md").read_text()
    junit = (root / "junit.xml").read_text()
    for name, text in (("stdout", done.stdout + done.stderr), ("markdown", markdown), ("junit", junit)):
        found = [char for char in RAW if char in text]
        assert not found, f"{name} holds {found!r} raw"
    forged = [line for line in done.stdout.splitlines() if line.startswith(("PASSED suites/ok.yaml", "FAKE:"))]
    assert forged == [], "a line from the input was printed as a line of its own"
    # the input is shown escaped, not dropped: the item's id and the story name what is there
    node_id = "::".join(["suites/s.yaml", printable(HOSTILE_FILE), printable(HOSTILE_NAME)])
    assert f"FAILED {node_id}" in done.stdout
    assert "e-evil\\nPASSED suites/ok.yaml::all::fine\\x1b[2J\\x00<U+202E>" in done.stdout
    assert "e-evil\\\\nPASSED" in markdown  # markdown escapes the backslash itself
    (case,) = ET.fromstring(junit).iter("testcase")
    assert printable(HOSTILE_NAME) in case.get("classname") + "::" + case.get("name")


def test_inspect_prints_hostile_ids_on_one_line(tmp_path: Path) -> None:
    root = hostile_project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "inspect", f"rec/{HOSTILE_FILE}.jsonl"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert not [char for char in RAW if char in done.stdout]
    assert not [line for line in done.stdout.splitlines() if line.startswith(("PASSED", "FAKE"))]
    assert f"== rec/{printable(HOSTILE_FILE)}.jsonl" in done.stdout


# ---------------------------------------------------------------- the report writer


def test_planted_links_redirect_no_report(tmp_path: Path) -> None:
    """Links at the names the writer once used (`.<report>.<pid>.tmp`, predictable) and a report
    replaced by a link to another file: the victims keep their bytes, each report is a new
    regular file, and the planted links are left as they were."""
    out = tmp_path / "reports"
    out.mkdir()
    victims = {}
    for name in REPORT_FILES.values():
        victim = tmp_path / f"victim-{name}"
        victim.write_bytes(b"keep me\n")
        victims[name] = victim
        (out / f".{name}.{os.getpid()}.tmp").symlink_to(victim)
    (out / "replaylab.md").symlink_to(tmp_path / "victim-replaylab.md")
    write_reports(build_report(), out)
    assert all(victim.read_bytes() == b"keep me\n" for victim in victims.values())
    for name in REPORT_FILES.values():
        status = os.lstat(out / name)
        assert stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o644
        assert (out / f".{name}.{os.getpid()}.tmp").is_symlink()
    assert json.loads((out / "replaylab.json").read_bytes())["totals"]["items"] == len(build_report().items)


def test_temporary_names_cannot_be_guessed(tmp_path: Path) -> None:
    target = tmp_path / "replaylab.json"
    names = {temporary_path(target).name for _ in range(50)}
    assert len(names) == 50 and all(n.startswith(".replaylab.json.") and n.endswith(".tmp") for n in names)


SIGNAL_WRITER = """\
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from builders.reports import build_items, build_report
from replaylab.report import write_reports
items = [item.model_copy(update={"id": f"{item.id}-{n}"}) for n in range(400) for item in build_items("x" * 2000)]
report = build_report(items=items)
try:
    while True:  # long writes, one after the other: the signal lands in one of them
        write_reports(report, Path(sys.argv[1]))
except KeyboardInterrupt:
    sys.exit(42)
"""


@pytest.mark.parametrize("number, status", [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 42)])
def test_a_signal_while_writing_leaves_no_temporary_file(tmp_path: Path, number: int, status: int) -> None:
    """SIGTERM ends the process as it would (its default action) and SIGINT raises
    KeyboardInterrupt as it would, after the temporaries are removed; the reports left are a
    complete set."""
    out = tmp_path / "reports"
    out.mkdir()
    writer = subprocess.Popen([sys.executable, "-c", SIGNAL_WRITER, str(out), str(TESTS)])
    try:
        deadline = time.monotonic() + 300
        while not any(p.name.endswith(".tmp") for p in out.iterdir()):  # a write is under way
            assert writer.poll() is None and time.monotonic() < deadline, "the writer never started writing"
            time.sleep(0.005)
        writer.send_signal(number)
        assert writer.wait(timeout=120) == status
    finally:
        if writer.poll() is None:
            writer.kill()
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []
    if (out / "replaylab.json").exists():
        assert json.loads((out / "replaylab.json").read_bytes())["totals"]["items"] > 0


def test_an_interrupt_inside_a_serializer_callback_still_ends_as_keyboardinterrupt(tmp_path: Path) -> None:
    """SIGINT landing in a Python callback of pydantic's serializer (the report's models have
    some) is turned by pydantic into its own error: the write still ends as KeyboardInterrupt,
    with the temporaries removed, as a SIGINT anywhere else does."""
    import pydantic
    import pydantic_core

    from replaylab.report.atomic import removed_on_signal

    class Interrupted(pydantic.BaseModel):
        value: int = 0

        @pydantic.field_serializer("value")
        def _interrupt(self, value: int) -> int:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)  # the handler runs here, inside pydantic's call
            return value

    pending_file = tmp_path / ".replaylab.json.x.tmp"
    pending_file.write_bytes(b"{")
    with pytest.raises(pydantic_core.PydanticSerializationError):  # what pydantic makes of it alone
        Interrupted().model_dump()
    with pytest.raises(KeyboardInterrupt), removed_on_signal({pending_file}):
        Interrupted().model_dump()
    assert not pending_file.exists()
