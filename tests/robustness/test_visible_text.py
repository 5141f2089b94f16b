"""Route 6, what a report shows: text from somebody else's code shows what it holds.

A compactor's stderr and its `error`, and a live read tool's stderr, reached the HTML report raw:
ESC starts a terminal sequence when the page's text is copied to a terminal, BEL rings, a
right-to-left override turns the rest of a line around, so what is read is not what is there. And
invisible characters (a word joiner, a zero-width joiner, tag characters) made two tools print as
one: `issue_refund` and `issue⁠_refund` looked alike in every report.

One run of `pytest --replaylab` over three suites plants them; the tests hold that no raw control,
invisible or direction-changing character reaches the HTML, the markdown or the terminal, that
each is spelled out where it was (`\\x1b`, `<U+202E>`), and that the two tools print apart.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from builders.pytest_runs import run_replaylab
from builders.transcripts import Session
from replaylab.cassette import recorded_tool_interaction, write_cassette
from repo_paths import REPO_ROOT

HOSTILE = "\x1b[2J\x1b]0;owned\x07 \u202eevil\u2066 zero\u200bwidth"
RAW = ("\x1b", "\x07", "\u202e", "\u2066", "\u200b", "\u2060", "\U000e0041")
JOINED = "issue\u2060_refund"  # prints as issue_refund
TAGGED = "issue_refund\U000e0041"  # a tag character after it: prints as issue_refund

COMPACTOR = textwrap.dedent(
    f"""\
    import json, sys
    sys.stdin.read()
    sys.stderr.write({HOSTILE!r} + " from stderr\\n")
    print(json.dumps({{"success": False, "error": {HOSTILE!r} + " in error"}}))
    """
)

LIVE_PACK = textwrap.dedent(
    f"""\
    import os, sys
    from replaylab import ToolOutput, ToolSpec

    def noisy(args, ctx):
        sys.stderr.write({HOSTILE!r} + " from a tool\\n")
        sys.stderr.flush()
        os._exit(3)

    TOOLS = [ToolSpec("noisy", "reads", {{"type": "object", "properties": {{}}}}, "read", noisy)]
    """
)


#: a long lookup, so that compacting the first turn gains something
LOOKUP = json.dumps({"order": "W1001", "ticket": "TCK-998877", "history": ["shipped, delivered, checked"] * 80})


def _session(rec: Path, name: str, calls: list[tuple[str, dict]], cassette: bool = True) -> None:
    rec.mkdir(parents=True, exist_ok=True)
    session = Session(name)
    session.user("Look everything up in detail. " + "Please be thorough about it. " * 40)
    session.tool_turn("lookup", {"order": "W1001"}, LOOKUP)
    session.assistant("Found it. " + "Everything is in order. " * 120)
    session.user("Now go on.")
    for tool, args in calls:
        session.tool_turn(tool, args, '{"ok": true}')
    session.assistant("Done.")
    session.write(rec / f"{name}.jsonl")
    interactions = [
        recorded_tool_interaction("lookup", {"order": "W1001"}, '{"order": "W1001", "ticket": "TCK-998877"}')
    ]
    interactions += [recorded_tool_interaction(tool, args, '{"ok": true}') for tool, args in calls]
    write_cassette(rec / f"{name}.cassette.yaml", interactions if cassette else [])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("visible")
    suites = root / "suites"
    suites.mkdir()
    _session(root / "rec-compactor", "quiet", [("lookup", {"order": "W1002"})])
    (root / "compactor.py").write_text(COMPACTOR, encoding="utf-8")
    (suites / "compactor.yaml").write_text(
        "name: noisy-compactor\nrecordings: ../rec-compactor/*.jsonl\ncompaction: {mode: manual}\ncompact_at: turn:2\n"
        f"compactor: {{command: [{sys.executable}, ../compactor.py], timeout_s: 60}}\n",
        encoding="utf-8",
    )
    _session(root / "rec-live", "live", [("noisy", {})], cassette=False)
    (root / "rl_noisy_pack.py").write_text(LIVE_PACK, encoding="utf-8")
    (suites / "live.yaml").write_text(
        "name: noisy-tool\nrecordings: ../rec-live/*.jsonl\ntools: rl_noisy_pack\nlive_read_tools: true\n"
        "compaction: {mode: manual}\ncompact_at: turn:2\n",
        encoding="utf-8",
    )
    # both calls need the ticket only the dropped lookup showed: both are blocked, each named
    calls = [("issue_refund", {"ticket": "TCK-998877"}), (JOINED, {"ticket": "TCK-998877"})]
    _session(root / "rec-names", "names", calls)
    (suites / "names.yaml").write_text(
        "name: lookalikes\nrecordings: ../rec-names/*.jsonl\ncompaction: {mode: aggressive}\ncompact_at: turn:2\n",
        encoding="utf-8",
    )
    done = run_replaylab(root, "suites", "-rA", "-v", pythonpath=[root, REPO_ROOT])
    reports = root / "reports"
    return {
        "printed": done.stdout + done.stderr,
        "html": (reports / "replaylab.html").read_text(encoding="utf-8"),
        "markdown": (reports / "replaylab.md").read_text(encoding="utf-8"),
        "json": json.loads((reports / "replaylab.json").read_text(encoding="utf-8")),
        "junit": (reports / "junit.xml").read_text(encoding="utf-8"),
    }


@pytest.mark.parametrize("sink", ["printed", "html", "markdown", "junit"])
def test_no_control_invisible_or_direction_changing_character_reaches_a_report(run: dict, sink: str) -> None:
    assert [hex(ord(c)) for c in RAW if c in run[sink]] == []


def test_the_compactors_stderr_and_error_and_the_tools_stderr_are_spelled_out_in_the_html(run: dict) -> None:
    items = {item["suite"]: item for item in run["json"]["items"]}
    failed = items["noisy-compactor"]["defects"][0]
    assert (
        failed["code"] == "COMPACTION_FAILED" and "in error" in failed["message"] and "from stderr" in failed["message"]
    )
    [tool_failed] = [d for d in items["noisy-tool"]["defects"] if d["code"] == "TOOL_FAILED"]
    assert "from a tool" in tool_failed["message"]
    html = run["html"]
    assert html.count("\\x1b[2J\\x1b]0;owned\\x07 &lt;U+202E&gt;evil&lt;U+2066&gt; zero&lt;U+200B&gt;width") >= 2
    assert "from a tool" in html and "in error" in html


def test_two_tools_that_differ_by_an_invisible_character_print_apart(run: dict) -> None:
    shown = "issue&lt;U+2060&gt;_refund"
    assert shown in run["html"] and "issue_refund" in run["html"]
    assert "issue&lt;U+2060&gt;\\_refund" in run["markdown"] and "issue\\_refund" in run["markdown"]
    assert "issue<U+2060>_refund" in run["printed"]


def test_printable_names_every_default_ignorable_character() -> None:
    from replaylab.printable import printable, visible

    assert printable(TAGGED) == "issue_refund<U+E0041>" != printable("issue_refund")
    for char in ("\u00ad", "\u034f", "\u180e", "\u200d", "\u2060", "\u2064", "\ufe0f", "\u3164", "\U000e0020"):
        assert char not in printable(f"a{char}b") and char not in visible(f"a{char}b\nc")
    assert visible("one\ntwo\tthree") == "one\ntwo\tthree" and visible("bell\x07") == "bell\\x07"
