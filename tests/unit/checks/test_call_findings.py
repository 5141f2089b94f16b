"""Findings about one mutating call: each names the classification rule that made the call
mutating (`checks.classified`), and a call blocked only because an earlier blocked call's
result never came is folded into that call's finding (`checks.cascades`)."""

from __future__ import annotations

import orjson

from replaylab.checks.cascades import fold_cascades
from replaylab.checks.classified import with_classification
from replaylab.defects import Code, Defect
from replaylab.replay.agent.model_protocol import LostRecord
from replaylab.replay.trace import RunTrace, ToolCallTrace, TurnTrace
from replaylab.safety import ToolClassifier
from replaylab.transcript.load import loads_transcript


def _blocked(call_id: str, tool: str, arguments: dict, turn: int = 2) -> Defect:
    return Defect.of(
        Code.SIDE_EFFECT_ESCAPED,
        f"mutating call {tool} has no recorded match (blocked, never executed)",
        expected={"tool": tool, "arguments": {}},
        actual={"tool": tool, "arguments": arguments},
        turn=turn,
        tool_call_id=call_id,
        tool=tool,
    )


def test_every_call_finding_names_the_rule_that_made_the_call_mutating() -> None:
    dropped = Defect.of(
        Code.MUTATION_DROPPED,
        "mutating event Bash dropped",
        detail={"arguments": {"command": "npm run build > out.log"}},
        tool="Bash",
        tool_call_id="t1",
    )
    escaped = _blocked("t2", "create_reservation", {"room": "⟨lost:1⟩"})
    other = Defect.of(Code.ANSWER_DIVERGED, "answer differs")
    found = with_classification([dropped, escaped, other], ToolClassifier())
    assert found[0].detail["classification"] == {
        "class": "exec",
        "rule": "agent-builtin",
        "reason": "Claude Code `Bash` runs a shell command; `npm run` changes something or runs scripts",
    }
    assert found[0].message.endswith(
        "[mutating by `agent-builtin`: Claude Code `Bash` runs a shell command; `npm run` changes something or runs scripts]"
    )
    assert found[1].detail["classification"]["rule"] == "unknown-tool"
    assert "holds `create`" in found[1].message
    assert found[2] == other  # not about a call
    assert with_classification(found, ToolClassifier()) == found  # once


def _transcript():
    lines = [{"type": "session", "version": 3, "id": "s"}]
    for i, (role, body) in enumerate(
        [
            ("toolResult", {"toolCallId": "a", "content": [{"type": "text", "text": "booking HX1234"}]}),
            ("toolResult", {"toolCallId": "b", "content": [{"type": "text", "text": "seat 22C9X1"}]}),
            ("user", {"content": "my card is 4242-0000-1111"}),
        ]
    ):
        lines.append(
            {
                "type": "message",
                "id": f"e{i}",
                "parentId": f"e{i - 1}" if i else None,
                "message": {"role": role, **body},
            }
        )
    return loads_transcript(b"\n".join(orjson.dumps(line) for line in lines))


def _trace(*blocked: str) -> RunTrace:
    calls = [
        ToolCallTrace(turn=2, step=i, tool_call_id=c, tool="book", source="blocked") for i, c in enumerate(blocked)
    ]
    return RunTrace(label="compacted", turns=[TurnTrace(turn=2, tool_calls=calls)])


def _lost(marker: str, seen: str) -> LostRecord:
    return LostRecord(turn_index=1, entry_id="x", value="v", marker=marker, kind="arg", seen_entry_id=seen)


def test_a_call_blocked_for_want_of_a_blocked_calls_result_is_folded_into_its_finding() -> None:
    """`a` is blocked (its own lost value); `b` lost only what `a`'s recorded result held, `c` only
    what `b`'s held (a chain: folded into `a`); `d` lost a value the user gave: a finding of its own."""
    a = _blocked("a", "book", {"who": "⟨lost:1⟩"})
    b = _blocked("b", "pay", {"booking": "⟨lost:2⟩"})
    c = _blocked("c", "seat", {"seat": "⟨lost:3⟩"})
    d = _blocked("d", "charge", {"card": "⟨lost:4⟩", "booking": "⟨lost:2⟩"})
    lost = [_lost("⟨lost:1⟩", "e9"), _lost("⟨lost:2⟩", "e0"), _lost("⟨lost:3⟩", "e1"), _lost("⟨lost:4⟩", "e2")]
    folded = fold_cascades([a, b, c, d], _trace("a", "b", "c", "d"), lost, _transcript())
    assert [f.where.tool_call_id for f in folded] == ["a", "d"]
    assert folded[0].detail["cascade"] == [
        {"tool_call_id": "b", "tool": "pay", "turn": 2},
        {"tool_call_id": "c", "tool": "seat", "turn": 2},
    ]
    assert folded[0].message.endswith("blocked with it, for want of its result: 2 later calls")
    assert folded[1] == d


def test_a_call_whose_source_was_not_blocked_stays_a_finding() -> None:
    b = _blocked("b", "pay", {"booking": "⟨lost:2⟩"})
    lost = [_lost("⟨lost:2⟩", "e0")]
    # `a` answered from the recording (not blocked): `b`'s loss is compaction's, not a cascade
    assert fold_cascades([b], _trace("b", "z"), lost, _transcript()) == [b]
    # a finding with no marker, or a single blocked call, is left as it is
    plain = _blocked("x", "pay", {"booking": "HX1234"})
    assert fold_cascades([plain], _trace("x", "y"), lost, _transcript()) == [plain]
    assert fold_cascades([b], _trace("b"), lost, _transcript()) == [b]
