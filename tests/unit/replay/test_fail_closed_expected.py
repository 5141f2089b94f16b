"""What a blocked mutating call is reported against: the call the recorded agent made at the same
turn and step (EXPECTED, with its differing leaves), never the recorded call that looks most
alike — that one is a separately labelled hint saying what differs (method, arguments, result).
Real executor, real cassette, a Claude Code-like session (builders/claude_like.py)."""

from __future__ import annotations

from builders.claude_like import CHECKOUT, EDIT, MKDIR, call, executor_for, write_session
from replaylab.defects import Code


def test_expected_is_the_recorded_call_at_the_step_and_the_nearest_call_only_a_hint(tmp_path):
    """`cp` where the recording ran `mkdir`: both Bash calls of the recording are as far from it,
    and the nearest is `git checkout` (turn 1). EXPECTED is still the `mkdir` of turn 2, step 0."""
    executor = executor_for(write_session(tmp_path))
    with executor:
        _, trace = executor.execute(
            call("x1", "Bash", {"command": "cp -r src build", "description": "Copy"}), turn=2, step=0
        )
    assert trace.source == "blocked"
    [escaped] = executor.defects
    assert escaped.code == Code.SIDE_EFFECT_ESCAPED
    assert escaped.expected == {"tool": "Bash", "arguments": MKDIR}
    assert escaped.detail["differences"] == [
        {"path": "command", "expected": "mkdir -p build/assets", "actual": "cp -r src build"},
        {"path": "description", "expected": "Make the folder", "actual": "Copy"},
    ]
    nearest = escaped.detail["nearest"]
    assert nearest["label"] == "nearest recorded call (hint)"
    assert nearest["call"] == {"tool": "Bash", "arguments": CHECKOUT} and nearest["method"] == "same"
    assert [leaf["path"] for leaf in nearest["differences"]] == ["command", "description"]
    assert "the recorded call at this step (Bash) differs at command, description" in escaped.message
    assert "nearest recorded call (hint): method same, arguments differ at command, description" in escaped.message


def test_identical_arguments_of_another_tool_say_the_method_differs_not_the_arguments(tmp_path):
    """A `Write` with exactly the arguments the recording's `Edit` had, at a step where the
    recording made no call: no EXPECTED call, and the hint says the method differs."""
    executor = executor_for(write_session(tmp_path))
    with executor:
        executor.execute(call("x1", "Write", dict(EDIT)), turn=1, step=1)
    [escaped] = executor.defects
    assert escaped.expected == "no recorded call: the recorded agent made no call at turn 1, step 1"
    assert escaped.detail["differences"] == []
    nearest = escaped.detail["nearest"]
    assert nearest["call"] == {"tool": "Edit", "arguments": EDIT}
    assert (nearest["method"], nearest["arguments"], nearest["result"]) == (
        "differs: recorded Edit",
        "identical",
        "recorded",
    )
    assert "the recording has no call at this step" in escaped.message
    assert "method differs: recorded Edit, arguments identical, result recorded" in escaped.message
    assert "differs in" not in escaped.message and "arguments differ" not in escaped.message


def test_identical_arguments_at_the_step_say_it_is_the_method(tmp_path):
    """A `Write` where the recording's `Edit` of the same arguments is: the one differing leaf is `tool`."""
    executor = executor_for(write_session(tmp_path))
    with executor:
        executor.execute(call("x1", "Write", dict(EDIT)), turn=2, step=1)
    [escaped] = executor.defects
    assert escaped.expected == {"tool": "Edit", "arguments": EDIT}
    assert escaped.detail["differences"] == [{"path": "tool", "expected": "Edit", "actual": "Write"}]
    assert "the recorded call at this step (Edit) differs at tool" in escaped.message
    assert "arguments differ" not in escaped.message


def test_a_repeat_of_the_recorded_call_says_its_result_is_used_up(tmp_path):
    """The same `mkdir` twice at one step: the first is the recording's and is served; the second
    has no recorded call at its position, and its hint's arguments are identical — what differs is
    the result, already used."""
    executor = executor_for(write_session(tmp_path))
    with executor:
        _, first = executor.execute(call("x1", "Bash", dict(MKDIR)), turn=2, step=0)
        _, second = executor.execute(call("x2", "Bash", dict(MKDIR)), turn=2, step=0)
    assert (first.source, second.source) == ("cassette", "blocked")
    [escaped] = executor.defects
    assert escaped.expected == "no recorded call: the recorded agent made 1 call at turn 2, step 0"
    nearest = escaped.detail["nearest"]
    assert nearest["call"] == {"tool": "Bash", "arguments": MKDIR}
    assert nearest["arguments"] == "identical" and nearest["differences"] == []
    assert nearest["result"] == "already used by an earlier call of this replay"
    assert "arguments identical, result already used by an earlier call of this replay" in escaped.message
    assert "arguments differ" not in escaped.message


def test_through_the_replay_loop_the_step_is_the_one_the_agent_is_at(tmp_path):
    """The real loop with a scripted agent that copies where the recorded one made the folder:
    the loop's turn and step find the recorded `mkdir` of turn 2 (counted from 1), not the
    `git checkout` of turn 1 that is nearest."""
    from replaylab.replay import make_model, run_turns, split_turns
    from replaylab.transcript.load import load_transcript

    path = write_session(tmp_path)
    script = tmp_path / "agent.yaml"
    script.write_text(
        "turns:\n"
        "  - user: start a refactor branch\n"
        "    steps:\n"
        '      - tool_calls: [{name: Bash, arguments: {command: "git checkout -b refactor", description: "New branch"}}]\n'
        "      - say: On branch refactor.\n"
        "  - user: make the assets folder and fix app.ex\n"
        "    steps:\n"
        '      - tool_calls: [{name: Bash, arguments: {command: "cp -r src build", description: "Copy"}}]\n'
        "      - say: Done.\n",
        encoding="utf-8",
    )
    turns = split_turns(load_transcript(path).leaf_path())
    trace = run_turns([], turns, make_model("scripted", script=script), executor_for(path), label="compacted")
    assert trace.error is None
    assert [(c.tool, c.source) for t in trace.turns for c in t.tool_calls] == [
        ("Bash", "cassette"),
        ("Bash", "blocked"),
    ]
    [escaped] = trace.defects
    assert escaped.code == Code.SIDE_EFFECT_ESCAPED and escaped.where.turn == 2
    assert escaped.expected == {"tool": "Bash", "arguments": MKDIR}
    assert escaped.detail["nearest"]["call"] == {"tool": "Bash", "arguments": CHECKOUT}
