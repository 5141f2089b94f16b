"""OpenClaw 2026.9.6's own load and context (session_oracle.mjs) on what replaylab reads apart from
a plain path: a reply marked `excludeFromContext: true` that called tools, and a working copy whose
writer appended an entry under one from before a reset. Every window before a user message and at
the leaf, each estimate and each cut must be OpenClaw's (tests/agent_conformance.py), and the
writer's kept parse must be the file as OpenClaw reads it. Needs the OpenClaw oracle; under
CI=true it must run."""

from __future__ import annotations

from pathlib import Path

import orjson

from agent_conformance import KEEPS, Tally, compare_file
from builders.excluded_calls import excluded_call_lines
from replaylab.agents import rules_of
from replaylab.transcript import load_transcript
from replaylab.transcript.writer import TranscriptWriter

PROFILE = "openclaw@2026.9.6"


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def test_an_excluded_reply_that_called_a_tool_leaves_its_result_in_openclaws_context(
    agent_oracles, tmp_path: Path
) -> None:
    """`projectSessionEntryMessage` drops the excluded reply; its tool result stays in the context
    `buildSessionContext` builds, with no call before it: replaylab's window is that context."""
    oracle = agent_oracles(PROFILE)
    path = _write(tmp_path / "excluded-call.jsonl", excluded_call_lines())
    tally = Tally()
    compare_file(oracle, path, tally, KEEPS)
    assert tally.counts["windows"] >= 2 and not tally.differences(), tally.note()
    (theirs,) = oracle.view(path, leaves=["e6"]).windows
    assert [m.entry_id for m in theirs.context] == ["e1", "e2", "e3", "e5", "e6"]
    ours = rules_of(PROFILE).window(load_transcript(path).path_to("e6"))
    assert [w.entry_id for w in ours] == [m.entry_id for m in theirs.context]


def test_a_working_copys_kept_parse_is_the_file_as_openclaw_reads_it(agent_oracles, tmp_path: Path) -> None:
    """An entry appended under one from before the file's reset: OpenClaw's load attaches it where
    it stands (`appendCanonicalNavigationEntry`), and so does the writer's kept parse."""

    def say(entry_id: str, parent: str | None, role: str, text: str, **body: object) -> dict:
        content = text if role == "user" else [{"type": "text", "text": text}]
        message = {"role": role, "content": content, "timestamp": 1796127790000}
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-09-10T10:00:01.000Z",
                "message": message, **body}  # fmt: skip

    header = {"type": "session", "version": 4, "id": "s1", "timestamp": "2026-09-10T10:00:00.000Z", "cwd": "/w"}
    reset = {"type": "reset", "id": "r1", "parentId": "a1", "timestamp": "2026-09-10T10:00:01.000Z", "reason": "reset"}
    recording = _write(
        tmp_path / "rec.jsonl",
        [
            header,
            say("u1", None, "user", "one"),
            say("a1", "u1", "assistant", "1"),
            reset,
            say("u2", "r1", "user", "two"),
        ],
    )
    writer = TranscriptWriter.working_copy(
        recording, tmp_path / "copy" / "rec.jsonl", parsed=load_transcript(recording)
    )
    writer.transcript()
    writer.append(say("a2", "a1", "assistant", "2"))  # its parent is from before the reset
    writer.append(say("u3", "a2", "user", "three"))
    kept = writer.transcript()
    oracle = agent_oracles(PROFILE)
    (theirs,) = oracle.view(writer.path).windows
    assert theirs.leaf_id == kept.leaf_id == "u3"
    assert [w.entry_id for w in rules_of(PROFILE).window(kept.leaf_path())] == [m.entry_id for m in theirs.context]
    assert [m.entry_id for m in theirs.context] == ["u2", "a2", "u3"]


def test_the_replays_window_at_the_next_prompt_is_openclaws_context_there(agent_oracles, tmp_path: Path) -> None:
    """The run of the excluded reply replayed from its start under the profile: the window the
    replay sends at the second prompt holds, entry for entry, the context OpenClaw's own rebuild
    gives there (the excluded reply gone, its tool result kept)."""
    from replaylab.replay import ToolExecutor, make_model, run_turns, split_turns
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.memo import ItemMemo

    oracle = agent_oracles(PROFILE)
    path = _write(tmp_path / "excluded-call.jsonl", excluded_call_lines())
    (theirs,) = oracle.view(path, leaves=["e7"]).windows
    recording = load_transcript(path)
    memo = ItemMemo(rules=rules_of(PROFILE))
    turns = split_turns(recording.leaf_path(), memo)
    model = make_model("replay", recording=recording, memo=memo)
    sent: list[list] = []
    complete = model.complete
    model.complete = lambda window, tools: sent.append(list(window)) or complete(window, tools)  # type: ignore[method-assign]
    executor = ToolExecutor(tmp_path / "none.cassette.yaml", ToolClassifier())
    run_turns([], turns, model, executor, label="baseline", memo=memo)
    results = {call: entry.id for turn in turns for call, entry in turn.results.items()}

    def source(entry_id: str) -> str:  # a replayed message: the recorded entry it stands for
        produced = entry_id.removeprefix("baseline:")
        return results[produced.split(":", 1)[1]] if ":" in produced else produced

    assert [source(w.entry_id) for w in sent[-1]] == [m.entry_id for m in theirs.context]
