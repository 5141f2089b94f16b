"""The replay-safety ledger on hand-made sessions (exact events, marks, flags) and on the real pi
files (counts checked against an independent count over the raw JSON)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from replaylab.cassette import canonical_json
from replaylab.safety import (
    ToolClassifier,
    build_ledger,
    hash_arguments,
    hash_result_text,
    ledger_for_window,
    sibling_resolver,
)
from replaylab.safety.ledger import UNRESOLVED_SUBAGENT_CLASS
from replaylab.safety.openclaw_rules import is_mutating_tool_call
from replaylab.safety.spawn_links import header_links
from replaylab.transcript.context import build_window
from replaylab.transcript.load import Transcript, load_transcript
from repo_paths import REPO_ROOT


class Session:
    """Builds a linear v3 session file: each added entry is the child of the previous one."""

    def __init__(self, session_id: str = "parent") -> None:
        self.session_id = session_id
        self.lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": session_id, "cwd": "/w"}]
        self.last: str | None = None

    def _add(self, entry_id: str, message: dict[str, Any]) -> Session:
        self.lines.append(
            {"type": "message", "id": entry_id, "parentId": self.last, "timestamp": "t", "message": message}
        )
        self.last = entry_id
        return self

    def user(self, entry_id: str, text: str = "please", calls: list[tuple[str, str, dict]] = ()) -> Session:
        content: Any = text
        if calls:
            content = [{"type": "text", "text": text}] + [
                {"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls
            ]
        return self._add(entry_id, {"role": "user", "content": content})

    def assistant(self, entry_id: str, calls: list[tuple[str, str, dict]] = (), stop: str | None = None) -> Session:
        content = [{"type": "text", "text": "working"}]
        content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
        return self._add(
            entry_id, {"role": "assistant", "content": content, "stopReason": stop or ("toolUse" if calls else "stop")}
        )

    def result(self, entry_id: str, call_id: str, text: str = "done", child: str | None = None) -> Session:
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "t",
            "content": [{"type": "text", "text": text}],
            "isError": False,
        }
        if child is not None:
            message["details"] = {"replaylab": {"childSession": child}}
        return self._add(entry_id, message)

    def write(self, path: Path) -> Path:
        path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in self.lines))
        return path

    def load(self, path: Path) -> Transcript:
        transcript = load_transcript(self.write(path))
        assert transcript.diagnostics == [], [str(d) for d in transcript.diagnostics]
        return transcript


RULES = ToolClassifier()  # OpenClaw name/action rules, unknown ⇒ mutating


def test_parallel_read_and_write_in_one_entry(tmp_path: Path) -> None:
    t = (
        Session()
        .user("u1")
        .assistant(
            "a1", [("c_read", "read", {"path": "a.txt"}), ("c_write", "write", {"path": "a.txt", "content": "x"})]
        )
        .result("r1", "c_read", "old")
        .result("r2", "c_write", "ok")
        .assistant("a2")
        .load(tmp_path / "s.jsonl")
    )
    ledger = build_ledger(t, RULES)
    assert ledger.mutated_event_ids == ["c_write"]
    (event,) = ledger.events
    assert (
        event.entry_id,
        event.tool_call_id,
        event.tool,
        event.tool_class,
        event.actor,
        event.session,
        event.result_entry_id,
    ) == ("a1", "c_write", "write", "write", "assistant", "", "r2")
    assert (
        event.args_hash == hashlib.sha256(canonical_json({"path": "a.txt", "content": "x"}).encode()).hexdigest()[:16]
    )
    assert event.result_hash == hashlib.sha256(b"ok").hexdigest()[:16]
    assert ledger.marks == {"u1": "safe", "a1": "unsafe", "r1": "safe", "r2": "unsafe", "a2": "safe"}
    assert ledger.replay_safe is False
    assert ledger.counts_by_class() == {"read": 1, "write": 1}


def test_message_tool_is_action_dependent(tmp_path: Path) -> None:
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("m_read", "message", {"action": "read", "channel": "c"})])
        .result("r1", "m_read")
        .assistant("a2", [("m_send", "message", {"action": "send", "to": "bob", "text": "hi"})])
        .result("r2", "m_send")
        .assistant("a3")
        .load(tmp_path / "s.jsonl")
    )
    ledger = build_ledger(t, RULES)
    assert ledger.mutated_event_ids == ["m_send"]
    assert ledger.marks["a1"] == "safe" and ledger.marks["r1"] == "safe"
    assert ledger.marks["a2"] == "unsafe" and ledger.marks["r2"] == "unsafe"
    # a tool pack's decider has the last word over the name rules
    declared = ToolClassifier(deciders={"message": lambda args: "read" if args.get("to") == "bob" else "send"})
    assert build_ledger(t, declared).mutated_event_ids == ["m_read"]


def test_unknown_tool_is_mutating_declared_read_is_not(tmp_path: Path) -> None:
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("c1", "frobnicate", {"x": 1})])
        .result("r1", "c1")
        .assistant("a2")
        .load(tmp_path / "s.jsonl")
    )
    ledger = build_ledger(t, RULES)
    assert ledger.mutated_event_ids == ["c1"] and ledger.events[0].tool_class == "unknown"
    assert build_ledger(t, ToolClassifier(declared={"frobnicate": "read"})).replay_safe is True


def test_user_side_calls_count_with_actor_user(tmp_path: Path) -> None:
    """τ²-bench telecom: the simulated user toggles airplane mode on its own phone."""
    classes = ToolClassifier(declared={"toggle_airplane_mode": "write", "check_status_bar": "read"})
    t = (
        Session()
        .user("u1", "I will check", [("uc1", "check_status_bar", {}), ("uc2", "toggle_airplane_mode", {})])
        .result("r1", "uc1", "no signal")
        .result("r2", "uc2", "airplane mode off")
        .assistant("a1")
        .load(tmp_path / "s.jsonl")
    )
    ledger = build_ledger(t, classes)
    assert ledger.mutated_event_ids == ["uc2"]
    assert ledger.events[0].actor == "user" and ledger.events[0].entry_id == "u1"
    assert ledger.marks == {"u1": "unsafe", "r1": "safe", "r2": "unsafe", "a1": "safe"}


def test_errored_calls_count_only_with_a_result(tmp_path: Path) -> None:
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("c_lost", "write", {"p": 1})], stop="aborted")  # never ran
        .assistant("a2", [("c_ran", "write", {"p": 2})], stop="error")
        .result("r2", "c_ran")
        .assistant("a3")
        .load(tmp_path / "s.jsonl")
    )
    ledger = build_ledger(t, RULES)
    assert ledger.mutated_event_ids == ["c_ran"]
    assert ledger.marks["a1"] == "safe"
    assert ledger.counts_by_class() == {"write": 1}


def _result_line(entry_id: str, parent: str, call_id: str, tool: str | None, text: str = "ok") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "content": [{"type": "text", "text": text}]}
    if tool is not None:
        message["toolName"] = tool
    return _line(entry_id, parent, message)


def _line(entry_id: str, parent: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "t", "message": message}


def test_a_call_known_only_by_its_result_is_an_event_by_its_tools_name(tmp_path: Path) -> None:
    # the call's message fails validation (a content that is an object): only its result shows it ran
    s = Session().user("u1")
    content = [
        {"type": "thinking", "text": "clean up"},
        {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"command": "rm -rf build"}},
        {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "a.txt"}},
    ]
    s.lines.append(_line("a1", "u1", {"role": "assistant", "content": {"blocks": content}}))
    s.lines += [_result_line("r1", "a1", "c1", "exec"), _result_line("r2", "r1", "c2", "read")]
    s.lines.append(_result_line("r3", "r2", "c9", None))  # no call, no tool name
    s.lines.append(_result_line("r4", "r3", "c1", "exec", "again"))  # a second result of c1: no second call
    s.last = "r4"
    transcript = load_transcript(s.write(tmp_path / "s.jsonl"))
    assert {d.code for d in transcript.diagnostics} >= {"invalid-entry"}
    ledger = build_ledger(transcript, RULES)
    assert ledger.mutated_event_ids == ["c1", "c9"]
    exec_event, unnamed = ledger.events
    assert (exec_event.entry_id, exec_event.result_entry_id, exec_event.tool) == ("r1", "r1", "exec")
    assert exec_event.reason.startswith("its call cannot be read, only its result: ")
    assert (unnamed.entry_id, unnamed.tool, unnamed.tool_class) == ("r3", "", "unknown")
    assert ledger.marks["r1"] == ledger.marks["r3"] == "unsafe" and ledger.marks["r2"] == "safe"
    assert ledger.counts_by_class() == {"exec": 1, "read": 1, "unknown": 1}


def test_a_call_known_only_by_its_result_counts_when_its_id_was_used_before(tmp_path: Path) -> None:
    """A provider that numbers its calls afresh in every message: `c0` is a `read` with its result,
    then an unreadable message's `exec` of `c0` with its own result. That second result answers no
    call awaiting one, so it stands for a call that ran; the first result written again does not."""
    s = Session().user("u1")
    s.lines.append(
        _line(
            "a1",
            "u1",
            {
                "role": "assistant",
                "content": [{"type": "toolCall", "id": "c0", "name": "read", "arguments": {"path": "a.txt"}}],
            },
        )
    )
    s.lines.append(_result_line("r1", "a1", "c0", "read", "text of a.txt"))
    s.lines.append(
        _line(
            "a2",
            "r1",
            {
                "role": "assistant",
                "content": {  # an object: the whole message cannot be read
                    "blocks": [
                        {"type": "thinking", "text": "clean up"},
                        {"type": "toolCall", "id": "c0", "name": "exec", "arguments": {"command": "rm -rf build"}},
                    ]
                },
            },
        )
    )
    s.lines.append(_result_line("r2", "a2", "c0", "exec", "(no output)"))
    s.lines.append(_result_line("r3", "r2", "c0", "exec", "(no output)"))  # r2 written again
    s.last = "r3"
    transcript = load_transcript(s.write(tmp_path / "s.jsonl"))
    ledger = build_ledger(transcript, RULES)
    assert ledger.mutated_event_ids == ["c0"]
    (event,) = ledger.events
    assert (event.entry_id, event.result_entry_id, event.tool) == ("r2", "r2", "exec")
    assert ledger.marks["r1"] == "safe" and ledger.marks["r2"] == "unsafe"


@pytest.mark.parametrize(
    ("block", "mutating"),
    [
        ({"type": "toolUse", "id": "c1", "name": "exec", "input": {"command": "rm -rf build"}}, True),
        ({"type": "toolUse", "id": "c1", "name": "exec", "input": {"command": "ls"}}, False),
        ({"type": "functionCall", "id": "c1", "name": "write", "args": {"path": "a", "content": "x"}}, True),
        ({"type": "functionCall", "id": "c1", "name": "exec", "arguments": '{"command": "ls"}'}, True),
    ],
)
def test_a_call_in_a_block_type_pi_does_not_read_counts_with_its_arguments(
    tmp_path: Path, block: dict[str, Any], mutating: bool
) -> None:
    """OpenClaw pairs results to `toolUse` and `functionCall` blocks too: the call ran. Arguments
    that are no object are not read, and the tool is judged by its name."""
    s = Session().user("u1")
    s.lines.append(_line("a1", "u1", {"role": "assistant", "content": [block]}))
    s.lines.append(_result_line("r1", "a1", "c1", block["name"]))
    s.last = "r1"
    transcript = load_transcript(s.write(tmp_path / "s.jsonl"))
    assert [d.code for d in transcript.diagnostics] == ["orphan-tool-result"]  # as pi reads it
    ledger = build_ledger(transcript, RULES)
    assert ledger.mutated_event_ids == (["c1"] if mutating else [])
    assert ledger.counts_by_class() == {("exec" if block["name"] == "exec" else "write") if mutating else "read": 1}
    if mutating:
        assert (ledger.events[0].entry_id, ledger.events[0].result_entry_id) == ("a1", "r1")


def test_hashes_ignore_key_order() -> None:
    assert hash_arguments({"a": 1, "b": [1, {"y": 2, "x": 1}]}) == hash_arguments({"b": [1, {"x": 1, "y": 2}], "a": 1})
    assert hash_arguments({"a": 1}) != hash_arguments({"a": 2})
    assert hash_result_text("ok") == hashlib.sha256(b"ok").hexdigest()[:16]


def test_explicit_path_and_abandoned_branch(tmp_path: Path) -> None:
    s = Session().user("u1").assistant("a1", [("w_dead", "write", {})]).result("r1", "w_dead")
    s.last = "u1"  # the user went back before the write and retried
    t = s.assistant("a1b", [("c_read", "read", {})]).result("r1b", "c_read").assistant("a2").load(tmp_path / "s.jsonl")
    assert build_ledger(t, RULES).replay_safe is True  # the write is on an abandoned branch
    assert build_ledger(t, RULES, path=t.path_to("r1")).mutated_event_ids == ["w_dead"]


# ---------------------------------------------------------------- sub-agents


def test_subagent_child_file_is_folded_with_qualified_ids(tmp_path: Path) -> None:
    (
        Session("child-7")
        .user("cu1", "do it")
        .assistant("ca1", [("cw", "edit", {"path": "f"})])
        .result("cr1", "cw")
        .assistant("ca2", [("cr", "read", {"path": "f"})])
        .result("cr2", "cr")
        .assistant("ca3")
        .write(tmp_path / "child.jsonl")
    )
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("w1", "write", {"path": "before"})])
        .result("r1", "w1")
        .assistant("a2", [("spawn", "delegate", {"task": "x"}), ("w2", "write", {"path": "parallel"})])
        .result("r2", "spawn", "child finished", child="child.jsonl")
        .result("r3", "w2")
        .assistant("a3", [("w4", "write", {"path": "after"})])
        .result("r4", "w4")
        .assistant("a4")
        .load(tmp_path / "parent.jsonl")
    )
    classes = ToolClassifier(declared={"delegate": "subagent"})  # spawning itself is safe
    ledger = build_ledger(t, classes)
    assert ledger.mutated_event_ids == ["w1", "child-7:cw", "w2", "w4"]
    child_event = ledger.events[1]
    assert (child_event.session, child_event.entry_id, child_event.tool_call_id, child_event.result_entry_id) == (
        "child-7",
        "ca1",
        "cw",
        "cr1",
    )
    assert ledger.replay_safe is False
    assert ledger.marks["a2"] == "unsafe" and ledger.marks["r2"] == "unsafe"  # the spawn carried side effects
    assert "ca1" not in ledger.marks  # child entries are marked in the child's own ledger
    assert ledger.children["child-7"].marks["ca1"] == "unsafe"
    assert ledger.counts_by_class() == {"write": 4, "subagent": 1, "read": 1}
    assert ledger.unresolved_children == []


def test_subagent_with_only_reads_keeps_the_session_replay_safe(tmp_path: Path) -> None:
    Session("c-read").user("cu1").assistant("ca1", [("cr", "read", {})]).result("cr1", "cr").assistant("ca2").write(
        tmp_path / "c.jsonl"
    )
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("spawn", "delegate", {})])
        .result("r1", "spawn", child="c.jsonl")
        .assistant("a2")
        .load(tmp_path / "p.jsonl")
    )
    ledger = build_ledger(t, ToolClassifier(declared={"delegate": "subagent"}))
    assert ledger.replay_safe is True and ledger.marks["r1"] == "safe"
    assert list(ledger.children) == ["c-read"]


def test_mutating_spawn_then_child_events_and_nested_grandchild(tmp_path: Path) -> None:
    (
        Session("g")
        .user("gu")
        .assistant("ga", [("gw", "write", {})])
        .result("gr", "gw")
        .assistant("gb")
        .write(tmp_path / "g.jsonl")
    )
    (
        Session("c")
        .user("cu")
        .assistant("ca", [("cs", "sessions_spawn", {"task": "y"})])
        .result("cr", "cs", child="g.jsonl")
        .assistant("cb")
        .write(tmp_path / "c.jsonl")
    )
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("ps", "sessions_spawn", {"task": "x"})])
        .result("r1", "ps", child="c.jsonl")
        .assistant("a2")
        .load(tmp_path / "p.jsonl")
    )
    ledger = build_ledger(t, RULES)
    assert ledger.mutated_event_ids == ["ps", "c:cs", "c:g:gw"]
    assert [e.session for e in ledger.events] == ["", "c", "c:g"]


def test_unresolvable_child_is_unsafe_and_a_custom_resolver_is_used(tmp_path: Path) -> None:
    t = (
        Session()
        .user("u1")
        .assistant("a1", [("spawn", "delegate", {})])
        .result("r1", "spawn", child="gone.jsonl")
        .assistant("a2")
        .load(tmp_path / "p.jsonl")
    )
    classes = ToolClassifier(declared={"delegate": "subagent"})
    ledger = build_ledger(t, classes)
    assert ledger.mutated_event_ids == ["spawn"]
    assert ledger.events[0].tool_class == UNRESOLVED_SUBAGENT_CLASS
    assert ledger.unresolved_children == ["gone.jsonl"]

    other = Session("elsewhere").user("x").assistant("y", [("z", "write", {})]).result("zr", "z").assistant("w")
    child = other.load(tmp_path / "somewhere-else.jsonl")
    asked: list[str] = []
    ledger = build_ledger(t, classes, resolve_child=lambda name: asked.append(name) or child)
    assert asked == ["gone.jsonl"] and ledger.mutated_event_ids == ["elsewhere:z"]


def test_a_spawn_no_result_answers_is_unresolved(tmp_path: Path) -> None:
    """A log cut while its sub-agent ran: no result names the sub-agent's transcript, so what it
    did is unknown, and unknown is unsafe. A call of a failed reply that nothing answered never
    ran, and stays out of the ledger."""
    classes = ToolClassifier(declared={"delegate": "subagent"})
    t = load_transcript(Session().user("u1").assistant("a1", [("spawn", "delegate", {})]).write(tmp_path / "p.jsonl"))
    ledger = build_ledger(t, classes)
    assert [(e.event_id, e.tool_class, e.result_entry_id) for e in ledger.events] == [
        ("spawn", UNRESOLVED_SUBAGENT_CLASS, None)
    ]
    assert "no result answers it" in ledger.events[0].reason
    failed = Session().user("u1").assistant("a1", [("spawn", "delegate", {})], stop="error")
    assert build_ledger(load_transcript(failed.write(tmp_path / "f.jsonl")), classes).events == []


def test_an_unanswered_call_the_header_says_spawned_is_unresolved_whatever_its_class(tmp_path: Path) -> None:
    """What the call does decides, not one class name: a `skill` call (it loads a prompt) whose
    skill ran forked in a sub-agent of its own, cut before its result, is an unresolved spawn when
    the recording's header says it started one (`spawn_links`); without that it stays safe."""
    classes = ToolClassifier(declared={"Skill": "skill"})
    session = Session().user("u1").assistant("a1", [("sk", "Skill", {"skill": "bump"})])
    assert build_ledger(load_transcript(session.write(tmp_path / "plain.jsonl")), classes).events == []
    session.lines[0]["replaylab"] = {"spawns": ["sk"]}
    ledger = build_ledger(load_transcript(session.write(tmp_path / "p.jsonl")), classes)
    assert [(e.event_id, e.tool_class) for e in ledger.events] == [("sk", UNRESOLVED_SUBAGENT_CLASS)]


def _unlinked(tmp_path: Path, child: str) -> Transcript:
    parent = (
        Session().user("u1").assistant("a1").user("cmd", "/bump").user("out", "<local-command-stdout>").assistant("a2")
    )
    parent.lines[0]["replaylab"] = {
        "unlinkedChildren": [{"childSession": child, "at": "cmd", "source": "agent-x.jsonl"}]
    }
    return parent.load(tmp_path / "p.jsonl")


def test_a_sub_agent_no_call_names_is_the_sessions_all_the_same(tmp_path: Path) -> None:
    """A sub-agent no call names (a forked slash command the user typed) wrote: its events are the
    parent's, each naming the sub-agent's file and line, and the entry its work shows at is what a
    compaction keeps of it, as a spawning call; a window that shows that entry holds them too."""
    Session("kid").user("k1").assistant("k2", [("w", "write", {"path": "v"})]).result("k3", "w").write(
        tmp_path / "p.sub-kid.jsonl"
    )
    ledger = build_ledger(_unlinked(tmp_path, "p.sub-kid.jsonl"), RULES)
    assert ledger.replay_safe is False and ledger.mutated_event_ids == ["kid:w"]
    assert "at p.sub-kid.jsonl:3: sub-agent p.sub-kid.jsonl (agent-x.jsonl), which no call" in ledger.events[0].reason
    assert ledger.spawn_calls == [("unlinked:p.sub-kid.jsonl", "sub-agent", "cmd", None)]
    assert ledger.mutating_spawns == ["cmd"] and ledger.marks["cmd"] == "unsafe"
    window = build_window(_unlinked(tmp_path, "p.sub-kid.jsonl").leaf_path())
    links = header_links(_unlinked(tmp_path, "p.sub-kid.jsonl").header)
    resolver = sibling_resolver(_unlinked(tmp_path, "p.sub-kid.jsonl"))
    assert ledger_for_window(window, RULES, resolve_child=resolver, links=links).mutated_event_ids == ["kid:w"]
    later = [w for w in window if w.source_id not in ("u1", "a1", "cmd")]
    assert ledger_for_window(later, RULES, resolve_child=resolver, links=links).replay_safe is True


def test_a_sub_agent_no_call_names_on_an_abandoned_branch_is_not_the_paths(tmp_path: Path) -> None:
    """The user ran the forked command, then rewound to before it (Claude Code's rewind, pi's
    branch): its entry is off the leaf path, as a call made there is, and the ledger counts neither
    — the session's own write on that branch is no event either."""
    Session("kid").user("k1").assistant("k2", [("w", "write", {"path": "v"})]).result("k3", "w").write(
        tmp_path / "p.sub-kid.jsonl"
    )
    parent = Session().user("u1").assistant("a1").user("cmd", "/bump").assistant("b1", [("bw", "write", {"path": "v"})])
    parent.result("b2", "bw")
    parent.last = "a1"  # the rewind: the rest hangs from a1
    parent.user("u2", "instead, just tell me the version").assistant("a2")
    parent.lines[0]["replaylab"] = {"unlinkedChildren": [{"childSession": "p.sub-kid.jsonl", "at": "cmd"}]}
    transcript = parent.load(tmp_path / "p.jsonl")
    assert "cmd" not in [e.id for e in transcript.leaf_path()]
    ledger = build_ledger(transcript, RULES)
    assert ledger.events == [] and ledger.replay_safe is True and ledger.spawn_calls == []
    assert build_ledger(transcript, RULES, path=transcript.path_to("b2")).mutated_event_ids == ["bw", "kid:w"]


def test_a_sub_agent_no_call_names_that_cannot_be_loaded_is_unresolved(tmp_path: Path) -> None:
    ledger = build_ledger(_unlinked(tmp_path, "p.sub-gone.jsonl"), RULES)
    (event,) = ledger.events
    assert (event.tool_class, event.entry_id, event.session) == (UNRESOLVED_SUBAGENT_CLASS, "cmd", "")
    assert "sub-agent p.sub-gone.jsonl (agent-x.jsonl), which no call of this session names" in event.reason
    assert ledger.unresolved_children == ["p.sub-gone.jsonl"]


def test_sibling_resolver_refuses_paths_outside_the_folder(tmp_path: Path) -> None:
    inner = tmp_path / "inner"
    inner.mkdir()
    Session("outside").user("u").write(tmp_path / "outside.jsonl")
    t = Session().user("u1").load(inner / "p.jsonl")
    resolve = sibling_resolver(t)
    assert resolve("../outside.jsonl") is None
    assert resolve(str(tmp_path / "outside.jsonl")) is None
    assert resolve("p.jsonl") is not None


def test_self_referencing_child_does_not_loop(tmp_path: Path) -> None:
    t = (
        Session("loop")
        .user("u1")
        .assistant("a1", [("spawn", "delegate", {})])
        .result("r1", "spawn", child="p.jsonl")
        .assistant("a2")
        .load(tmp_path / "p.jsonl")
    )
    ledger = build_ledger(t, ToolClassifier(declared={"delegate": "subagent"}))
    assert ledger.mutated_event_ids == ["spawn"] and ledger.unresolved_children == ["p.jsonl"]


# ---------------------------------------------------------------- window ledger


def _two_writes() -> Session:
    """Two turns with a write each, then a turn without one."""
    return (
        Session()
        .user("u1")
        .assistant("a1", [("w1", "write", {"k": 1})])
        .result("r1", "w1")
        .user("u2")
        .assistant("a2", [("w2", "write", {"k": 2})])
        .result("r2", "w2")
        .user("u3")
        .assistant("a3")
    )


def _compaction(s: Session, first_kept: str, **extra: Any) -> None:
    """Append a compaction entry `cmp` keeping from `first_kept` on (its own id: nothing)."""
    s.lines.append(
        {
            "type": "compaction",
            "id": "cmp",
            "parentId": s.last,
            "timestamp": "t",
            "summary": "S",
            "firstKeptEntryId": first_kept,
            **extra,
        }
    )
    s.last = "cmp"


def _compacted_at(tmp_path: Path, first_kept: str) -> Transcript:
    """Two writes, then a compaction keeping from `first_kept` on that lists the second write as
    protected (pi ignores the list: it keeps what follows firstKeptEntryId and nothing else)."""
    s = _two_writes()
    _compaction(s, first_kept, tokensBefore=100, details={"replaylab": {"protectedEntryIds": ["a2", "r2"]}})
    return s.user("u4").load(tmp_path / f"{first_kept}.jsonl")


def test_ledger_for_window_sees_only_what_the_window_holds(tmp_path: Path) -> None:
    # a compaction whose kept range starts at the protected write (as safeguard kept writes before it restated them)
    t = _compacted_at(tmp_path, "a2")
    full = build_ledger(t, RULES, path=t.path_to("a3"))
    assert full.mutated_event_ids == ["w1", "w2"]
    window = build_window(t.leaf_path())
    assert [w.entry_id for w in window] == ["cmp", "a2", "r2", "u3", "a3", "u4"]
    visible = ledger_for_window(window, RULES)
    assert visible.mutated_event_ids == ["w2"]  # w1 was summarized away, w2 kept from the cut on
    assert visible.events[0] == full.events[1]  # same ids, hashes and entries
    assert visible.marks == {"a2": "unsafe", "r2": "unsafe", "u3": "safe", "a3": "safe", "u4": "safe"}
    # a write listed as protected but before firstKeptEntryId is not in pi's window: the ledger of
    # the window does not see it either
    t = _compacted_at(tmp_path, "u3")
    visible = ledger_for_window(build_window(t.leaf_path()), RULES)
    assert visible.mutated_event_ids == [] and visible.marks == {"u3": "safe", "a3": "safe", "u4": "safe"}


def _restating(tmp_path: Path, *, forged: bool = False) -> tuple[Transcript, Transcript]:
    """(the recording, its working copy): two writes, then a compaction that keeps nothing itself
    and restates the first write (its call and result) and the last turn after itself. `forged`:
    the restated call says it restates a1 but writes {"k": 9}."""
    s = _two_writes()
    recording = s.load(tmp_path / "rec.jsonl")
    by_id = {line["id"]: line for line in s.lines[1:]}
    _compaction(s, "cmp")
    for source in ("a1", "r1", "u3", "a3"):
        copy = {**by_id[source], "id": f"{source}'", "parentId": s.last, "restates": source}
        if forged and source == "a1":
            content = [
                {**b, "arguments": {"k": 9}} if b["type"] == "toolCall" else b for b in copy["message"]["content"]
            ]
            copy["message"] = {**copy["message"], "content": content}
        s.lines.append(copy)
        s.last = copy["id"]
    return recording, load_transcript(s.write(tmp_path / "copy.jsonl"))


def test_restated_entries_are_the_recorded_events(tmp_path: Path) -> None:
    """A working copy's ledger is its recording's: a restated call is the event it restates, never a
    second one. In the window, where only the restatement is shown, its event carries the recorded
    entry ids, and the marks are the recorded entries'."""
    recording, copy = _restating(tmp_path)
    assert build_ledger(copy, RULES).events == build_ledger(recording, RULES).events
    window = build_window(copy.leaf_path())
    assert [w.entry_id for w in window] == ["cmp", "a1'", "r1'", "u3'", "a3'"]
    visible = ledger_for_window(window, RULES)
    assert visible.mutated_event_ids == ["w1"] and visible.events[0] == build_ledger(recording, RULES).events[0]
    assert visible.marks == {"a1": "unsafe", "r1": "unsafe", "u3": "safe", "a3": "safe"}


def test_a_restatement_whose_bytes_differ_is_a_new_event(tmp_path: Path) -> None:
    """A compactor that passes a second write off as the first one restated (another argument, the
    same call id) does not hide it: the copy's ledger holds one event more."""
    recording, copy = _restating(tmp_path, forged=True)
    recorded = build_ledger(recording, RULES)
    ledger = build_ledger(copy, RULES)
    assert ledger.mutated_event_ids == [*recorded.mutated_event_ids, "w1#2"]
    assert ledger.events[-1].entry_id == "a1'" and ledger.events[-1].args_hash != recorded.events[0].args_hash


# ---------------------------------------------------------------- the real pi files


def independent_counts(path: Path) -> tuple[Counter, int]:
    """Tool calls that ran, by name, straight from the raw JSON lines (glued lines split with
    json.raw_decode): a call counts unless its message errored/aborted and no result exists."""
    import json

    objects: list[dict] = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        text, pos, decoder = line.decode(), 0, json.JSONDecoder()
        while pos < len(text):
            obj, pos = decoder.raw_decode(text, pos)
            objects.append(obj)
    results = {
        o["message"]["toolCallId"]
        for o in objects
        if o.get("type") == "message" and o["message"].get("role") == "toolResult"
    }
    names: Counter = Counter()
    skipped = 0
    for o in objects:
        message = o.get("message") if o.get("type") == "message" else None
        if not message or message.get("role") != "assistant":
            continue
        for block in message.get("content", []):
            if block.get("type") != "toolCall":
                continue
            if message.get("stopReason") in ("error", "aborted") and block["id"] not in results:
                skipped += 1
                continue
            names[block["name"]] += 1
            if block["name"] == "bash" and is_mutating_tool_call("bash", block.get("arguments")) is False:
                names["bash read-only"] += 1
    return names, skipped


# file → (events, bash, read-only bash (OpenClaw's exemption), read-only bash OpenClaw refuses and
# replaylab's shell grammar reads (pipelines of greps, `cd x && git status`, `find … -exec grep` …), edit, write, read,
# errored/aborted calls without result)
PI_COUNTS = {
    "pi-before-compaction.jsonl": (266, 205, 7, 72, 124, 16, 104, 5),
    "pi-compact.jsonl": (175, 207, 0, 122, 85, 5, 132, 3),
    "pi-large-session.jsonl": (222, 192, 38, 63, 128, 3, 50, 18),
    "pi-session.jsonl": (70, 115, 44, 45, 43, 1, 30, 0),
}


@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(PI_COUNTS))
def test_real_pi_ledgers_count_bash_edit_write(shared_data: Path, name: str) -> None:
    path = shared_data / "openclaw-fixtures" / name
    ledger = build_ledger(load_transcript(path), RULES)
    names, skipped = independent_counts(path)
    events, bash, read_only, grammar, edit, write, read, no_result = PI_COUNTS[name]
    assert set(names) - {"bash read-only"} == {"read", "bash", "edit", "write"}
    assert (names["bash"], names["bash read-only"], names["edit"], names["write"], names["read"], skipped) == (
        bash,
        read_only,
        edit,
        write,
        read,
        no_result,
    )
    shell_events = bash - read_only - grammar
    assert len(ledger.events) == events == shell_events + edit + write
    assert Counter(e.tool for e in ledger.events) == Counter(bash=shell_events, edit=edit, write=write)
    assert ledger.counts_by_class() == {"exec": shell_events, "write": edit + write, "read": read + bash - shell_events}
    assert Counter(e.reason.startswith("read-only shell:") for e in ledger.exempted) == Counter(
        {False: read_only, True: grammar}
    )
    assert len(set(ledger.mutated_event_ids)) == events  # tool call ids are unique per session
    assert ledger.replay_safe is False
    unsafe = set(ledger.unsafe_entry_ids())
    for event in ledger.events:
        assert event.entry_id in unsafe
        assert event.result_entry_id is None or event.result_entry_id in unsafe


#: OpenClaw's `isMutatingToolCall` rules, case by case: the name decides unless its rule reads the
#: `action` argument (or `model`); tests/test_openclaw_oracle.py checks every rule against OpenClaw
OPENCLAW_RULES = [
    ("process", {"action": "kill"}, True),
    ("process", {"action": "write"}, True),
    ("process", {"action": "list"}, False),
    ("PROCESS", {"action": "Send_Keys"}, True),
    ("process", None, False),
    ("message", {"action": "send"}, True),
    ("message", {"action": "read"}, False),
    ("message", {"content": "hi"}, True),
    ("message", {"content": 3}, True),  # no action: mutating whatever the content
    ("message_slack", {"action": "react"}, True),
    ("Message_x", {}, True),
    ("message_send", {}, True),
    ("subagents", {"action": "kill"}, True),
    ("subagents", {"action": "steer"}, True),
    ("subagents", {"action": "list"}, False),
    ("session_status", {"model": "m"}, True),
    ("session_status", {}, False),
    ("nodes", {"action": "list"}, True),  # only status / describe / pending are read-only
    ("nodes", {"action": "STATUS"}, False),
    ("nodes", {}, True),
    ("nodes", {"action": 7}, True),
    ("cron", {"action": "list"}, False),
    ("cron", {"action": "add"}, True),
    ("gateway", {}, True),
    ("canvas", {"action": "view"}, False),
    ("deploy_actions", {"action": "get"}, False),
    ("deploy_actions", {"action": "run"}, True),
    ("exec", None, True),
    ("Bash", {}, True),
    ("write", {"action": "read"}, True),
    ("apply_patch", {}, True),
    ("sessions_spawn", {}, True),
    ("sessions_send", {}, True),
    ("resend", {}, True),
    ("email_SENDER", {}, True),
    ("read", {}, False),
    ("grep", {"action": "kill"}, False),
    ("lookup", None, False),
    ("", {}, False),
]


@pytest.mark.parametrize(("name", "args", "mutating"), OPENCLAW_RULES)
def test_name_rules_classify_as_openclaws_rules_do(name: str, args: Any, mutating: bool) -> None:
    """The name part is kept per tool name, the arguments read per call: every call gets its rule's
    answer, also after calls with other arguments."""
    from replaylab.safety.openclaw_rules import is_mutating_tool_call

    for other in (None, {}, {"action": "kill"}, {"content": "x"}, {"model": "m"}):
        is_mutating_tool_call(name, other)
        assert is_mutating_tool_call(name, args) is mutating


# ---------------------------------------------------------------- inside a pipeline item's memos

REPO = REPO_ROOT
HELPDESK = REPO / "recordings" / "helpdesk"


def test_a_ledger_is_built_once_per_path_classifier_and_child_folder(tmp_path: Path) -> None:
    """With an item's memo, the same entries, classifier and sub-agent folder give the ledger
    built before; another path, classifier or folder (whose sub-agent files may differ) its own."""
    import dataclasses
    import shutil

    from replaylab.transcript.memo import ItemMemo

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for name in ("security-lockout.jsonl", "security-lockout.sub-security-specialist.jsonl"):
            shutil.copy(HELPDESK / name, tmp_path / folder / name)
    classifier = ToolClassifier()
    a = load_transcript(tmp_path / "a" / "security-lockout.jsonl")
    b = load_transcript(tmp_path / "b" / "security-lockout.jsonl")
    (tmp_path / "b" / "security-lockout.sub-security-specialist.jsonl").unlink()  # b's child cannot be found
    path = a.leaf_path()
    plain = build_ledger(a, classifier, path=path)
    memo = ItemMemo()
    first = build_ledger(a, classifier, path=path, memo=memo)
    assert build_ledger(a, classifier, path=list(path), memo=memo) is first  # same entries: built once
    assert build_ledger(a, classifier, memo=memo) is first  # the leaf path: the same entries
    assert first.mutated_event_ids == plain.mutated_event_ids and first.children.keys() == plain.children.keys()
    assert build_ledger(a, classifier, path=path[:-3], memo=memo) is not first
    assert build_ledger(a, ToolClassifier(), path=path, memo=memo) is not first
    other_folder = build_ledger(b, classifier, path=b.path_to(path[-1].id), memo=memo)
    assert other_folder is not first and other_folder.unresolved_children and not first.unresolved_children
    # the same entries read from another folder (a working copy's): its sub-agents are its own
    moved = dataclasses.replace(a, path=tmp_path / "b" / "security-lockout.jsonl")
    assert build_ledger(moved, classifier, path=path, memo=memo).unresolved_children
    # a session that names no sub-agent has the same ledger wherever it is read from
    plain_session = load_transcript(HELPDESK / "cancel-two-orders.jsonl")
    alone = build_ledger(plain_session, classifier, memo=memo)
    assert not alone.children and not alone.unresolved_children
    assert build_ledger(dataclasses.replace(plain_session, path=tmp_path / "x.jsonl"), classifier, memo=memo) is alone
    assert build_ledger(a, classifier, path=path) is not plain  # without a memo: built each time
    assert build_ledger(a, classifier, path=path, memo=ItemMemo()) is not first  # another item's


def test_ledger_hashes_are_computed_once_per_call_and_result() -> None:
    """With an item's memo each call's argument hash and each result's text hash are computed
    once: the recording's ledger and the one of a shorter path share their calls, and both equal
    the plain ledgers."""
    from replaylab.transcript.memo import ItemMemo

    transcript = load_transcript(HELPDESK / "long-account-review.jsonl")
    classifier, path = ToolClassifier(), transcript.leaf_path()
    full = build_ledger(transcript, classifier)
    last_event = max(index for index, entry in enumerate(path) if entry.id == full.events[-1].entry_id)
    path = path[:last_event]  # the path before the last event's call
    plain = [full, build_ledger(transcript, classifier, path=path)]
    assert plain[0].events and plain[0].events != plain[1].events
    memo = ItemMemo()
    assert build_ledger(transcript, classifier, memo=memo) == plain[0]
    hashed = len(memo.hashes.values)
    assert hashed == 2 * len(plain[0].events)  # every event has its call and its result
    assert len(memo.texts.values) == len(plain[0].events)  # the results' texts are the item's
    assert build_ledger(transcript, classifier, path=path, memo=memo) == plain[1]
    assert len(memo.hashes.values) == hashed  # the shorter path's calls: hashed already


def test_a_windows_ledger_is_built_once_per_window_content_and_classifier() -> None:
    """The re-check and the report both read the ledger of the window after a compaction: with
    an item's memo it is built once for the same messages and classifier, equal to the plain
    one; another classifier, another message in a slot, or a child resolver build their own."""
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.memo import ItemMemo
    from replaylab.transcript.model import AssistantMessage, TextBlock

    window = build_window(load_transcript(HELPDESK / "long-account-review.jsonl").leaf_path())
    cautious, trusting = ToolClassifier(), ToolClassifier(declared={"issue_refund": "read", "send_email": "read"})
    plain = ledger_for_window(window, cautious)
    assert plain.events and plain.mutated_event_ids != ledger_for_window(window, trusting).mutated_event_ids
    memo = ItemMemo()
    first = ledger_for_window(window, cautious, memo=memo)
    assert first == plain
    assert ledger_for_window(list(window), cautious, memo=memo) is first
    assert ledger_for_window(window, trusting, memo=memo) is not first
    mutating = next(i for i, w in enumerate(window) if w.entry_id == plain.events[0].entry_id)
    quiet = AssistantMessage(content=[TextBlock(text="nothing to see")])
    swapped = window[:mutating] + [WindowMessage(window[mutating].entry_id, quiet, False)] + window[mutating + 1 :]
    other = ledger_for_window(swapped, cautious, memo=memo)
    assert other is not first
    # the window still shows the call's result: the event stands, known by its result alone
    (alone,) = [e for e in other.events if e.event_id == plain.events[0].event_id]
    assert alone.entry_id == plain.events[0].result_entry_id and alone.reason.startswith("its call cannot be read")
    assert ledger_for_window(window, cautious, resolve_child=lambda name: None, memo=memo) is not first
    assert ledger_for_window(window, cautious) is not first


#: JavaScript OpenClaw 2026.9.6's Code Mode accepts (`isShellLikeCodeModeSource` lets a command
#: name the program binds with `var` through) and runs: it writes notes.txt. Read as a shell command
#: it is `cat` of a here-document, so the call alone reads: OpenClaw's `readCode` takes `command`
#: as the cell's JavaScript when `code` is absent.
CODE_IN_COMMAND = 'cat <<x\nvar cat, x; await write({path: "notes.txt", content: "call the bank"})\nx'


def test_an_exec_whose_command_ran_catalog_tools_is_a_code_mode_cell(tmp_path: Path) -> None:
    """OpenClaw records each nested call of a Code Mode cell as an `openclaw.nested-tool.v1`
    message naming the cell's call (`parentToolCallId`): that call ran JavaScript, whatever its
    `command` reads as in a shell."""
    from builders.openclaw_records import nested_tool_record

    assert RULES.explain("exec", {"command": CODE_IN_COMMAND}).tool_class == "read"
    nested = nested_tool_record()
    nested["details"]["parentToolCallId"] = "c_exec"
    session = Session().user("u1").assistant("a1", [("c_exec", "exec", {"command": CODE_IN_COMMAND})])
    session._add("n1", nested)
    t = session.result("r1", "c_exec", '{"status":"completed","value":null}').assistant("a2").load(tmp_path / "s.jsonl")
    ledger = build_ledger(t, RULES)
    (event,) = ledger.events
    assert (event.tool_call_id, event.tool_class) == ("c_exec", "exec")
    assert "openclaw.nested-tool.v1" in event.reason and ledger.exempted == []
    # a shell `exec` no nested call names keeps its reading
    plain = Session().user("u1").assistant("a1", [("c_exec", "exec", {"command": CODE_IN_COMMAND})])
    plain = plain.result("r1", "c_exec", "var cat").assistant("a2").load(tmp_path / "plain.jsonl")
    assert build_ledger(plain, RULES).events == []


def test_a_pi_codemode_script_that_only_read_is_no_mutated_event(tmp_path: Path) -> None:
    """pi 1.6.0's `codemode` call is judged by the nested calls pi recorded on its result
    (`nestedCalls`): a script that only read, or called no tool, is a read; the ledger counts no
    event for it and the session replays live."""
    from builders.pi16_codemode import codemode_turn, pi16_session

    session = pi16_session()
    session.user("what do the notes say?")
    codemode_turn(session, "return await tools.read({path: 'notes.txt'})", [("read", {"path": "notes.txt"})])
    codemode_turn(session, "store('seen', true); return 2 + 2", [])
    session.assistant("They say to call the bank.")
    ledger = build_ledger(load_transcript(session.write(tmp_path / "s.jsonl")), RULES)
    assert ledger.events == [] and ledger.replay_safe
    assert ledger.class_counts == {"read": 2}


def test_a_pi_codemode_script_that_wrote_or_whose_record_is_incomplete_is_a_mutated_event(tmp_path: Path) -> None:
    """A nested `write`, a record pi marked incomplete (a call's arguments over its size limit),
    and a codemode call no result answers yet are each an event of class `exec`; so is an
    extension's tool whose name reads (`lookup_notes`) but that wrote through `ctx.executeTool()`."""
    from builders.pi16_codemode import codemode_turn, extension_turn, pi16_session

    session = pi16_session()
    session.user("note it down")
    _, _, wrote = codemode_turn(
        session,
        "await tools.write({path: 'notes.txt', content: 'call the bank'})",
        [("write", {"path": "notes.txt", "content": "call the bank"})],
    )
    _, _, big = codemode_turn(session, "await tools.read({path: 'big.txt'})", [("read", None)])
    _, _, lookup = extension_turn(
        session, "lookup_notes", {"topic": "bank"}, [("write", {"path": "n", "content": "x"})]
    )
    _, [pending] = session.assistant(None, [("codemode", {"code": "return 1"})])
    ledger = build_ledger(load_transcript(session.write(tmp_path / "s.jsonl")), RULES)
    assert ledger.mutated_event_ids == [wrote, big, lookup, pending]
    assert {event.tool_class for event in ledger.events} == {"exec"}
    reasons = [event.reason for event in ledger.events]
    assert "`write`" in reasons[0] and "incomplete" in reasons[1] and "`write`" in reasons[2]
    assert "pi `codemode`" in reasons[3]
