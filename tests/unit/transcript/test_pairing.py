"""The one pairing walk (`pair_path`) the ledger, safeguard, overflow recovery and init share."""

from __future__ import annotations

from replaylab.transcript.model import MESSAGE_ADAPTER, TextBlock, ToolResultMessage, UserMessage
from replaylab.transcript.pairing import message_calls, pair_path, recorded_calls


def _assistant(*calls: tuple[str, str, dict], stop: str = "toolUse", kind: str = "toolCall"):
    content = [{"type": kind, "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return MESSAGE_ADAPTER.validate_python(
        {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 1}
    )


def _result(call_id: str, name: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextBlock(text=text)], is_error=False)


def _shape(pairing):
    return [(c.entry, c.block.name, c.result_entry, c.unread) for c in pairing.calls]


def test_each_call_gets_the_result_that_answers_it_and_a_lone_result_stands_for_its_call():
    items = [
        ("u", UserMessage(content=[TextBlock(text="go")])),
        ("a1", _assistant(("c1", "read", {"path": "x"}))),
        ("r1", _result("c1", "read")),
        ("r9", _result("c9", "bash")),  # its call's message could not be read
    ]
    pairing = pair_path(items)
    assert _shape(pairing) == [("a1", "read", "r1", False), (None, "bash", "r9", True)]
    assert pairing.unread_results() == ["r9"]
    assert [(key, call.block.name) for key, call in pairing.answers] == [("r1", "read"), ("r9", "bash")]


def test_a_result_written_again_answers_its_call_once_and_another_result_of_a_reused_id_is_a_call_of_its_own():
    items = [
        ("a1", _assistant(("call_0", "read", {"path": "x"}))),
        ("r1", _result("call_0", "read", "same")),
        ("r1copy", _result("call_0", "read", "same")),  # a duplicated line: no new call
        ("r2", _result("call_0", "bash", "removed build")),  # a provider reused the id; the call is unreadable
        ("r2more", _result("call_0", "bash", "more")),  # a further result of that unread call
    ]
    pairing = pair_path(items)
    assert _shape(pairing) == [("a1", "read", "r1", False), (None, "bash", "r2", True)]
    assert [(key, call.block.name) for key, call in pairing.answers] == [
        ("r1", "read"),
        ("r1copy", "read"),
        ("r2", "bash"),
        ("r2more", "bash"),
    ]
    assert pairing.unread_results() == ["r2", "r2more"]


def test_errored_replies_and_foreign_blocks_are_calls_a_result_can_answer():
    items = [
        ("a1", _assistant(("c1", "bash", {"command": "ls"}), stop="error")),
        ("a2", _assistant(("c2", "exec", {"command": "rm -rf d"}), kind="toolUse")),
        ("r2", _result("c2", "exec")),
    ]
    pairing = pair_path(items)
    assert [(c.block.id, c.errored, c.result_entry) for c in pairing.calls] == [("c1", True, None), ("c2", False, "r2")]
    assert pairing.unread_results() == []


def test_two_calls_of_one_id_in_one_message_are_answered_in_turn_each_by_its_tools_result():
    """pi answers a message's calls in order: the `rm` keeps its own result, so the ledger pairs it
    and overflow recovery never cuts it."""
    items = [
        ("a", _assistant(("x", "bash", {"command": "rm -rfv build"}), ("x", "read", {"path": "a"}))),
        ("r1", _result("x", "bash", "removed build")),
        ("r2", _result("x", "read", "cfg")),
    ]
    pairing = pair_path(items)
    assert [(c.block.name, c.result_entry) for c in pairing.calls] == [("bash", "r1"), ("read", "r2")]


def test_a_result_of_another_tool_is_no_further_result_of_a_call_known_only_by_its_result():
    items = [("r1", _result("x", "read", "cfg")), ("r2", _result("x", "bash", "removed build"))]
    pairing = pair_path(items)
    assert _shape(pairing) == [(None, "read", "r1", True), (None, "bash", "r2", True)]


def test_an_aborted_call_stops_waiting_once_a_later_message_uses_its_id():
    """The aborted `ls` never ran; the `read` reused its id and has its result; a `bash` result of
    the id, whose call cannot be read, is a call of its own."""
    items = [
        ("a0", _assistant(("x", "bash", {"command": "ls"}), stop="aborted")),
        ("a1", _assistant(("x", "read", {"path": "a"}))),
        ("r1", _result("x", "read", "cfg")),
        ("r2", _result("x", "bash", "removed build")),
    ]
    pairing = pair_path(items)
    assert pairing.unread_results() == ["r2"]
    assert [(c.entry, c.result_entry) for c in pairing.calls] == [("a0", None), ("a1", "r1"), (None, "r2")]


def test_a_messages_recorded_calls_list_its_own_calls_first_then_those_of_foreign_blocks():
    """The order the ledger and safeguard read a message's calls in, whatever the blocks' order."""
    message = MESSAGE_ADAPTER.validate_python(
        {
            "role": "assistant",
            "content": [
                {"type": "toolUse", "id": "f1", "name": "exec", "input": {"command": "rm a"}},
                {"type": "text", "text": "and"},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
                {"type": "functionCall", "id": "f2", "name": "write", "args": {"path": "b"}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls"}},
            ],
            "stopReason": "toolUse",
            "timestamp": 1,
        }
    )
    assert [c.id for c in message_calls(message)] == ["c1", "c2"]
    assert [(c.id, c.name, c.arguments) for c in recorded_calls(message)] == [
        ("c1", "read", {"path": "a"}),
        ("c2", "bash", {"command": "ls"}),
        ("f1", "exec", {"command": "rm a"}),
        ("f2", "write", {"path": "b"}),
    ]
