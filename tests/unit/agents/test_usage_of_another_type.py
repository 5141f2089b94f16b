"""An assistant message whose `usage` is neither an object nor null: no agent's schema checks it, so
the message is read and sent as written, and each profile reads the usage as its agent does. The
figures were measured by running each agent's own code on these sessions (`prepareCompaction`'s
`tokensBefore`, its `estimateContextTokens`)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from replaylab.agents import rules_of
from replaylab.compaction.error_classes import is_context_overflow
from replaylab.compaction.recovery import pi_is_context_overflow
from replaylab.transcript import load_transcript
from replaylab.transcript.model import AssistantMessage, MessageEntry, dump_entry
from replaylab.transcript.tokens import usage_context_tokens

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}
USAGE = {"input": 100, "output": 10, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 110}
#: a usage of each JSON type but an object: JavaScript reads its token counts as undefined
TRUTHY = [5, -1.5, "n/a", [1], [], True]
#: ones `if (usage)` refuses: no agent reads them as usage at all
FALSY = [0, "", False]
PROFILES = ["pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6"]


def _entry(entry_id: str, parent: str | None, message: dict) -> dict:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": message,
    }


def _session(tmp_path: Path, usage, *, api: str = "x", lazy: bool = False):
    """A turn with a usage, then a call whose message's usage is `usage`, its result and a question."""
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
    lines = [
        HEADER,
        _entry("u1", None, {"role": "user", "content": "hello there"}),
        _entry(
            "a1",
            "u1",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "x" * 40}],
                "usage": USAGE,
                "stopReason": "stop",
                "api": "x",
            },
        ),  # fmt: skip
        _entry("u2", "a1", {"role": "user", "content": "again"}),
        _entry(
            "a2",
            "u2",
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "y" * 80}, call],
                "usage": usage,
                "stopReason": "toolUse",
                "api": api,
            },
        ),  # fmt: skip
        _entry(
            "r1",
            "a2",
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "z" * 20}],
            },
        ),  # fmt: skip
        _entry("u3", "r1", {"role": "user", "content": "more"}),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return load_transcript(path, lazy=lazy)


def _context_tokens(name: str, transcript) -> float:
    rules = rules_of(name)
    window = rules.window(transcript.leaf_path())
    return rules.context_tokens([item.message for item in window], rules.tokens)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("usage", [*TRUTHY, *FALSY])
def test_the_message_is_read_with_its_text_and_call_and_a_warning_at_its_line(tmp_path, usage, lazy) -> None:
    transcript = _session(tmp_path, usage, lazy=lazy)
    entry = transcript.by_id["a2"]
    assert isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
    assert entry.message.usage == usage and type(entry.message.usage) is type(usage)
    assert entry.message.text() == "y" * 80 and [c.id for c in entry.message.tool_calls()] == ["c1"]
    (warning,) = transcript.diagnostics
    assert (warning.code, warning.severity, warning.line, warning.field) == (
        "usage-type",
        "warning",
        5,
        "message.usage",
    )
    assert warning.entry_id == "a2" and warning.file.endswith("s.jsonl") and "not an object" in warning.message


def test_a_null_usage_is_no_warning(tmp_path) -> None:
    transcript = _session(tmp_path, None)
    assert transcript.diagnostics == [] and transcript.by_id["a2"].message.usage is None


@pytest.mark.parametrize("usage", [*TRUTHY, *FALSY])
def test_writing_the_message_back_keeps_its_usage_as_written(tmp_path, usage) -> None:
    written = dump_entry(_session(tmp_path, usage).by_id["a2"])
    assert written["message"]["usage"] == usage and type(written["message"]["usage"]) is type(usage)


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("usage", [*TRUTHY, *FALSY])
def test_every_profile_sends_the_message(tmp_path, usage, name) -> None:
    rules = rules_of(name)
    window = rules.window(_session(tmp_path, usage).leaf_path())
    assert "a2" in [item.entry_id for item in window]


@pytest.mark.parametrize("usage", TRUTHY)
def test_pi_0_73_1_takes_a_truthy_usage_as_the_last_one(tmp_path, usage) -> None:
    """`getAssistantUsage` takes any truthy usage: only the messages after it are estimated (pi's
    `calculateContextTokens` of it is NaN, so its own count is NaN; replaylab's usage part is 0)."""
    assert _context_tokens("pi@0.73.1", _session(tmp_path, usage)) == 6


@pytest.mark.parametrize("usage", FALSY)
def test_pi_0_73_1_skips_a_falsy_usage(tmp_path, usage) -> None:
    assert _context_tokens("pi@0.73.1", _session(tmp_path, usage)) == 142


@pytest.mark.parametrize("usage", [*TRUTHY, *FALSY])
@pytest.mark.parametrize(("name", "tokens"), [("pi@1.6.0", 142), ("openclaw@2026.9.6", 137)])
def test_pi_1_6_0_and_openclaw_skip_the_usage_for_the_one_before(tmp_path, usage, name, tokens) -> None:
    """`getAssistantUsage`'s `calculateContextTokens(usage) > 0` is false for a NaN."""
    assert _context_tokens(name, _session(tmp_path, usage)) == tokens


@pytest.mark.parametrize("usage", TRUTHY)
def test_openclaw_reads_a_truthy_usage_of_a_cli_reply_as_a_barrier(tmp_path, usage) -> None:
    """`isUnavailableContextBarrier`: `api === "cli"` and `usage.contextUsage === undefined`, so no
    earlier usage is trusted and every message is estimated."""
    assert _context_tokens("openclaw@2026.9.6", _session(tmp_path, usage, api="cli")) == 40


@pytest.mark.parametrize("usage", FALSY)
def test_openclaw_reads_no_barrier_at_a_falsy_usage(tmp_path, usage) -> None:
    assert _context_tokens("openclaw@2026.9.6", _session(tmp_path, usage, api="cli")) == 137


@pytest.mark.parametrize("usage", [*TRUTHY, *FALSY])
def test_no_overflow_rule_reads_such_a_usage_as_a_count(usage) -> None:
    message = AssistantMessage(content=[], usage=usage, stop_reason="stop")
    assert usage_context_tokens(usage) is None
    assert not pi_is_context_overflow(message, 1)
    assert not is_context_overflow(message, 1)
