"""Every agent profile's `window_steps` gives, at every end, exactly the window its `window` builds
from the root (`transcript.rules.AgentRules`): the steps only save the rebuilding.

Checked at every end of random sessions made of everything that makes a window more than the
entries after it — resets with and without kept entries, compactions keeping a range, nothing or
an unknown id, context edits of earlier and later entries, excluded messages, replay checkpoints,
branch summaries (empty too), custom messages, entries OpenClaw does not index, safeguard
restatements (true, false and chained) and duplicate ids — then at every end of the bundled
recordings and of their safeguard working copies, and (under CI=true) at every turn start of every
real session of ../shared/data.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import orjson
import pytest

from replaylab.agents import rules_of
from replaylab.compaction import CompactParams, compact
from replaylab.replay.tools.pack import load_tool_pack
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import load_transcript, loads_transcript
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import AnyEntry, MessageEntry, UserMessage
from repo_paths import REPO_ROOT

PROFILES = ("pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6")
HELPDESK = sorted(p for p in (REPO_ROOT / "recordings" / "helpdesk").glob("*.jsonl") if ".sub-" not in p.name)
TIME = "2026-12-01T12:00:00.000Z"


def stepped(rules, path: Sequence[AnyEntry], ends: list[int]) -> list[list[WindowMessage]]:
    windows: list[list[WindowMessage]] = []
    current: list[WindowMessage] = []
    for step in rules.window_steps(path, ends):
        current = list(step.messages) if step.replaced else [*current, *step.messages]
        windows.append(current)
    return windows


def assert_steps_are_windows(rules, path: Sequence[AnyEntry], ends: list[int], where: str) -> int:
    windows = stepped(rules, path, ends)
    assert len(windows) == len(ends), where
    for end, window in zip(ends, windows):
        assert window == rules.window(path[:end]), f"{rules.name}: {where} at end {end}"
    return len(ends)


def _text(rnd: random.Random) -> str:
    return " ".join(rnd.choice(["refund", "order", "ok", "日本", "🙂", "x" * rnd.randint(1, 40)]) for _ in range(5))


def random_session(rnd: random.Random, length: int) -> bytes:
    """A linear session of `length` entries of every kind a window rule looks at."""
    lines: list[dict] = [{"type": "session", "version": rnd.choice([3, 4]), "id": "s", "timestamp": TIME, "cwd": "/w"}]
    written: list[dict] = []
    calls: list[str] = []
    parent = None
    for n in range(1, length + 1):
        entry_id = f"e{n}" if rnd.random() > 0.03 or not written else rnd.choice(written)["id"]  # a duplicate
        earlier = rnd.choice(written)["id"] if written else entry_id
        kind = rnd.random()
        body: dict
        if kind < 0.22:
            extra = {"excludeFromContext": True} if rnd.random() < 0.1 else {}
            body = {"type": "message", "message": {"role": "user", "content": _text(rnd), **extra}}
        elif kind < 0.42:
            content: list[dict] = [{"type": "text", "text": _text(rnd)}]
            if rnd.random() < 0.5:
                calls.append(f"c{n}")
                content.append(
                    {"type": "toolCall", "id": f"c{n}", "name": rnd.choice(["read", "refund"]), "arguments": {}}
                )
            message: dict = {"role": "assistant", "content": content}
            if rnd.random() < 0.15:
                message["providerReplay"] = {"type": "anthropic-compaction", "data": "x"}
            if rnd.random() < 0.3:
                message["usage"] = {"input": rnd.randint(0, 4000), "output": 10, "totalTokens": rnd.randint(0, 5000)}
            body = {"type": "message", "message": message}
        elif kind < 0.6:
            message = {
                "role": "toolResult",
                "toolCallId": rnd.choice(calls) if calls else "c0",
                "content": rnd.choice([_text(rnd), [{"type": "text", "text": _text(rnd)}]]),
                "isError": False,
            }
            if rnd.random() > 0.05:
                message["toolName"] = "read"  # without it OpenClaw does not index the entry
            body = {"type": "message", "message": message}
        elif kind < 0.66:
            body = {
                "type": "compaction",
                "summary": _text(rnd),
                "firstKeptEntryId": rnd.choice([earlier, entry_id, "nowhere"]),
                "tokensBefore": rnd.randint(0, 9000),
            }
            if rnd.random() < 0.5 and written:
                ids = [rnd.choice(written)["id"] for _ in range(3)]
                body["details"] = {"replaylab": {"protectedEntryIds": ids}}
        elif kind < 0.7:
            body = {"type": "reset", "reason": rnd.choice(["reset", "new"])}
            if rnd.random() < 0.5:
                body["firstKeptEntryId"] = earlier
        elif kind < 0.75:
            target = rnd.choice([earlier, f"e{n + rnd.randint(1, 5)}"])  # an edit of a later entry too
            body = {"type": "context_edit", "targetId": target, "replacement": rnd.choice([None, {"content": "[cut]"}])}
        elif kind < 0.8:
            body = {"type": "branch_summary", "fromId": earlier, "summary": rnd.choice(["", _text(rnd)])}
        elif kind < 0.84:
            body = {"type": "custom_message", "customType": "note", "content": _text(rnd), "display": True}
        elif kind < 0.87:
            body = {"type": "custom", "customType": "state", "data": {"n": n}}
        elif kind < 0.9:
            body = {"type": "label", "targetId": earlier, "label": "x"}
        else:
            # a restatement: a byte copy (or, now and then, a changed one) of an earlier entry
            source = rnd.choice(written) if written else None
            if source is None or source["type"] not in ("message", "custom_message"):
                body = {"type": "message", "message": {"role": "user", "content": _text(rnd)}}
            else:
                body = {k: v for k, v in source.items() if k not in ("id", "parentId", "restates")}
                if rnd.random() < 0.2:
                    body["timestamp"] = "2026-12-01T12:00:01.000Z"
                body["restates"] = source.get("restates", source["id"])
        entry = {"id": entry_id, "parentId": parent, "timestamp": TIME, **body}
        written.append(entry)
        lines.append(entry)
        parent = entry_id
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@pytest.mark.parametrize("name", PROFILES)
def test_steps_equal_the_window_at_every_end_of_random_sessions(name: str) -> None:
    rules = rules_of(name)
    rnd = random.Random(f"window-steps-{name}")
    checked = replaced = 0
    for round_ in range(120):
        transcript = loads_transcript(random_session(rnd, rnd.randint(1, 60)))
        path = transcript.leaf_path()
        ends = sorted(rnd.sample(range(len(path) + 1), k=min(len(path) + 1, rnd.randint(1, 25))))
        checked += assert_steps_are_windows(rules, path, ends, f"random session {round_}")
        replaced += sum(step.replaced for step in rules.window_steps(path, ends))
    assert checked > 1_000
    assert replaced < checked  # the steps must also grow windows, or nothing was saved


@pytest.mark.parametrize("name", PROFILES)
def test_steps_equal_the_window_at_every_end_of_the_recordings_and_their_safeguard_copies(
    name: str, tmp_path: Path
) -> None:
    rules = rules_of(name)
    classifier = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))
    restated = 0
    for recording in HELPDESK:
        path = load_transcript(recording).leaf_path()
        assert_steps_are_windows(rules, path, list(range(len(path) + 1)), recording.name)
        copy = tmp_path / recording.name
        params = CompactParams(
            session_file=str(recording),
            compaction_mode="safeguard",
            context_tokens=1_600,
            reserve_tokens_floor=400,
            keep_recent_tokens=300,
            working_copy=str(copy),
        )
        if compact(params, classifier=classifier).success:
            copied = load_transcript(copy).leaf_path()
            restated += any(entry.restates for entry in copied)
            assert_steps_are_windows(rules, copied, list(range(len(copied) + 1)), f"{recording.name} (safeguard)")
    assert restated >= 3


def turn_starts(path: Sequence[AnyEntry]) -> list[int]:
    return [i for i, e in enumerate(path) if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)]


@pytest.mark.realdata
@pytest.mark.slow
def test_steps_equal_the_window_at_every_turn_start_of_the_real_sessions(
    shared_data: Path, swept_sessions: list
) -> None:
    files = [Path(s.path) for s in swept_sessions]
    files += sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))
    assert len(files) >= 450
    for name in PROFILES[1:]:
        rules = rules_of(name)
        for file in files:
            path = load_transcript(file).leaf_path()
            assert_steps_are_windows(rules, path, [*turn_starts(path), len(path)], file.name)
