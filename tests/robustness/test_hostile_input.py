"""No traceback and no hang on any input, beyond the bad-input corpus: every reader refuses every
kind of path that is not a regular file before opening it, every count a suite gives is
bounded, and time is read safely whatever the clock says.

The corpus (`test_bad_inputs.py`) holds one case per input with its exact message; here each
reader meets each kind of special file (a FIFO, a socket, a device, a link loop, a dangling link)
with a real file of that kind, under a timeout a hang would exceed.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from replaylab.cassette import load_cassette
from replaylab.compaction.recovery import create_compaction_diag_id
from replaylab.diagnostics import InputError
from replaylab.report.merge import load_report
from replaylab.safety.classify import read_tool_classes
from replaylab.suite import MAX_TOKENS, load_suite
from replaylab.transcript.load import load_transcript

# ---------------------------------------------------------------- special files


def fifo(path: Path) -> None:
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def device(path: Path) -> None:
    path.symlink_to("/dev/zero")


def link_loop(path: Path) -> None:
    path.symlink_to(path.name)


def dangling(path: Path) -> None:
    path.symlink_to("nowhere/at-all")


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (fifo, "is a FIFO (named pipe)"),
    "socket": (unix_socket, "is a socket"),
    "device": (device, "is a character device"),
    "link-loop": (link_loop, "is a symbolic link loop"),
    "dangling-link": (dangling, "is a symbolic link to a file that does not exist"),
}
READERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "transcript": ("x.jsonl", load_transcript),
    "cassette": ("x.cassette.yaml", load_cassette),
    "suite": ("x.yaml", load_suite),
    "tool classes": ("tool_classes.json", read_tool_classes),
    "report": ("replaylab.json", load_report),
}


def within(seconds: float, call: Callable[[], object]) -> BaseException | None:
    """Run `call` in a thread; the exception it raised (None: none). Fails if it is still running
    after `seconds` (a FIFO's open would block forever)."""
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # what the reader raised is the result under test
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader hung"
    return outcome[0]


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_refuses_every_special_file_without_opening_it(tmp_path: Path, reader: str, kind: str) -> None:
    name, read = READERS[reader]
    make, phrase = KINDS[kind]
    path = tmp_path / name
    make(path)
    error = within(30, lambda: read(path))
    assert isinstance(error, InputError), error
    (diagnostic,) = error.diagnostics
    assert diagnostic.file == str(path) and phrase in diagnostic.message, str(diagnostic)


# ---------------------------------------------------------------- counts from a suite


@pytest.mark.parametrize(
    "line, field",
    [
        (f"compaction: {{contextTokens: {MAX_TOKENS + 1}}}", "compaction.contextTokens"),
        ("compaction: {keepRecentTokens: 1000000000000}", "compaction.keepRecentTokens"),
        ("compaction: {summarizerFailures: 1000000}", "compaction.summarizerFailures"),
        ("compact_at: turn:12345678901234567890", "compact_at"),
        ("repeats: 101", "repeats"),
        ("scenarios: [{name: a, repeats: 0}]", "scenarios.0.repeats"),
        ("match: {args: {t: {numeric_tolerance: .nan}}}", "match.args.t.numeric_tolerance"),
        ("scenarios: [" + ", ".join(f"{{name: s{i}}}" for i in range(201)) + "]", "scenarios"),
        ("scenarios: [{name: ''}]", "scenarios.0.name"),
    ],
)
def test_every_count_and_size_a_suite_gives_is_bounded(tmp_path: Path, line: str, field: str) -> None:
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "a.jsonl").write_text('{"type":"session","version":3,"id":"a"}\n')
    path = tmp_path / "s.yaml"
    path.write_text(f"name: s\nrecordings: rec/*.jsonl\n{line}\n")
    with pytest.raises(InputError) as raised:
        load_suite(path)
    assert field in [d.field for d in raised.value.diagnostics], str(raised.value)


def test_a_suite_too_big_to_be_one_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nrecordings: rec/*.jsonl\ndescription: " + "x" * (2 << 20) + "\n")
    with pytest.raises(InputError, match="bytes, more than the 1,048,576 bytes replaylab reads"):
        load_suite(path)


# ---------------------------------------------------------------- time


@pytest.mark.parametrize(
    "now_ms, stamp", [(-1, "-1"), (-31_536_000_000, "-ehjpxc0"), (0, "0"), (1_767_225_600_000, "mjuohs00")]
)
def test_a_diagnostic_id_is_made_for_any_clock(now_ms: int, stamp: str) -> None:
    """A clock before 1970 gives a negative time: written with its sign, as JavaScript's
    `Date.now().toString(36)` writes it (the encoder used to loop forever on it)."""
    assert create_compaction_diag_id(now_ms, "abcd") == f"cmp-{stamp}-abcd"


@pytest.mark.parametrize("when", [-1e12, 1e20, float("nan"), float("inf")])
def test_a_run_stamp_for_a_clock_no_calendar_holds_is_empty_not_a_crash(when: float) -> None:
    from replaylab.pytest_plugin.run_end import _now

    assert _now(when) == ""


# ---------------------------------------------------------------- values nested as deep as a line may hold

#: as deep as a transcript line may nest and still be read (deeper lines are skipped, as pi skips them)
DEEP = 1_000


@pytest.mark.parametrize("agent", ["pi@0.73.1", "openclaw@2026.9.6"])
def test_arguments_and_results_nested_as_deep_as_a_line_may_be_are_judged(tmp_path: Path, agent: str) -> None:
    """orjson prints 254 levels, pydantic serializes about as many and Python recurses about a
    thousand: a write whose arguments, and a JSON result, nest as deep as a line may (and the
    agents read) is replayed, compacted (the write restated verbatim into the working copy),
    checked against the agent's own rebuild and judged — not an item error."""
    import shutil

    import orjson

    from replaylab.cassette import cassette_path_for
    from replaylab.json_dump import compact_json
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from repo_paths import REPO_ROOT

    suite = load_suite(REPO_ROOT / "suites" / "safeguard.yaml")
    scenario = next(s for s in suite.scenarios if s.name == "safeguard").model_copy(update={"agent": agent})
    recording = next(r for r in suite.recordings if r.name == "cancel-two-orders.jsonl")
    deep = "[" * DEEP + '{"url":"https://x.org/deep/1"}' + "]" * DEEP
    lines = recording.read_text(encoding="utf-8").splitlines()
    placed = {"args": False, "result": False}
    for n, line in enumerate(lines):
        entry = orjson.loads(line)
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        calls = [b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"]
        writes = [c for c in calls if c.get("name") == "cancel_order"]  # kept verbatim, restated, checked
        if writes and not placed["args"]:
            writes[0]["arguments"]["note"] = "DEEP"
            lines[n] = orjson.dumps(entry).decode().replace('"DEEP"', deep)
            placed["args"] = True
        elif message.get("role") == "toolResult" and not placed["result"]:
            message["content"] = [{"type": "text", "text": deep}]
            lines[n] = orjson.dumps(entry).decode()
            placed["result"] = True
    assert all(placed.values())
    copy = tmp_path / recording.name
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(cassette_path_for(recording), cassette_path_for(copy))
    item = run_item(scenario, copy, RunOptions(verify_with_pi="on"))
    assert item.outcome == "passed", (item.outcome, item.reason, [d.code for d in item.defects])
    assert compact_json(orjson.loads(deep)) == deep  # printed as read, where orjson refuses


def test_a_call_nested_as_deep_as_a_line_may_be_reaches_a_model_as_its_json() -> None:
    """The LLM summarizer's conversation and a live replay model's messages print a call's
    arguments as JSON: as orjson prints them, also where orjson refuses the depth."""
    import orjson

    from replaylab.compaction.summary.llm import serialize_conversation
    from replaylab.replay.agent.llm_format import to_openai_messages
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.model import MESSAGE_ADAPTER

    deep = "[" * DEEP + '"v"' + "]" * DEEP
    call = {"type": "toolCall", "id": "c1", "name": "cancel_order", "arguments": {"note": orjson.loads(deep)}}
    message = MESSAGE_ADAPTER.validate_python({"role": "assistant", "content": [call]})
    assert f"cancel_order(note={deep})" in serialize_conversation([message])
    sent = to_openai_messages([WindowMessage("e1", message)])[0]  # then pi's synthetic result
    assert sent["tool_calls"][0]["function"]["arguments"] == '{"note":' + deep + "}"
