"""Content items no block model reads (`transcript.opaque_content`): the message is kept with each
such item as an opaque block holding it as written, a warning names its line, entry and field,
the tool call stays paired, and each agent's window holds what that agent's load keeps: pi every
such message, OpenClaw 2026.9.6 a tool result whatever its items and a user / assistant message
only when each item is an object with a string type (its `readableMessageSchema`).
tests/oracles/test_openclaw_loader_conformance.py checks the windows against OpenClaw's own."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from builders.linear import linear_jsonl, message
from replaylab.agents import rules_of
from replaylab.transcript import loads_transcript
from replaylab.transcript.model import OpaqueBlock, ToolResultMessage, dump_entry

#: (name, item): each fails every block model
ODD_ITEMS = [
    ("number", 7),
    ("string", "plain"),
    ("null", None),
    ("text-without-text", {"type": "text"}),
    ("text-with-a-number", {"type": "text", "text": 5}),
    ("call-without-id", {"type": "toolCall", "name": "read", "arguments": {"path": "a"}}),
    ("untyped-object", {"text": "hi"}),
    ("image-without-data", {"type": "image"}),
]
#: those OpenClaw's readable content takes (an object with a string type)
TYPED = {"text-without-text", "text-with-a-number", "call-without-id", "image-without-data"}
PROFILES = {"pi@0.73.1": 3, "pi@1.6.0": 3, "openclaw@2026.9.6": 4}
CALL = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}


def _session(version: int, role: str, item: Any) -> bytes:
    header = {"type": "session", "version": version, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    odd = {role: [item]}
    return linear_jsonl(
        header,
        message("user", [{"type": "text", "text": "read a"}, *odd.get("user", [])]),
        message("assistant", [CALL, *odd.get("assistant", [])], stopReason="toolUse"),
        message(
            "toolResult",
            [{"type": "text", "text": "body " * 40}, *odd.get("toolResult", [])],
            toolCallId="c1",
            toolName="read",
            isError=False,
        ),
        message("assistant", [{"type": "text", "text": "done"}], stopReason="stop"),
        message("user", "next"),
    )


@pytest.mark.parametrize("role,at", [("user", "e1"), ("assistant", "e2"), ("toolResult", "e3")])
@pytest.mark.parametrize("name,item", ODD_ITEMS, ids=[n for n, _ in ODD_ITEMS])
def test_an_odd_item_keeps_its_message_with_a_warning_naming_its_field(
    name: str, item: Any, role: str, at: str
) -> None:
    """Before, the entry was read as unreadable: no message, its call or result unpaired (an error)."""
    data = _session(3, role, item)
    for lazy in (False, True):
        transcript = loads_transcript(data, lazy=lazy)
        path = transcript.leaf_path()
        entry = next(e for e in path if e.id == at)
        assert entry.type == "message", (name, lazy)
        [opaque] = [b for b in entry.message.content if isinstance(b, OpaqueBlock)]
        assert opaque.value == item
        inner = {"text-without-text": ".text", "text-with-a-number": ".text", "call-without-id": ".id"}
        inner |= {"untyped-object": ".type", "image-without-data": ".data"}
        # an item pi's own estimate fails on is named once more (`transcript.unestimable`)
        notes = [d for d in transcript.diagnostics if d.code != "pi-unestimable"]
        assert [(d.code, d.severity, d.entry_id, d.line, d.field) for d in notes] == [
            ("opaque-content", "warning", at, int(at[1:]) + 1, "message.content.1" + inner.get(name, ""))
        ], (name, lazy)
        # written back exactly as read
        line = data.splitlines()[int(at[1:])]
        assert dump_entry(entry) == orjson.loads(line)
        assert isinstance(path[2].message, ToolResultMessage)


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("role", ["user", "assistant", "toolResult"])
@pytest.mark.parametrize("name,item", ODD_ITEMS, ids=[n for n, _ in ODD_ITEMS])
def test_each_agents_window_holds_what_its_load_keeps(name: str, item: Any, role: str, profile: str) -> None:
    path = loads_transcript(_session(PROFILES[profile], role, item)).leaf_path()
    window = [w.entry_id for w in rules_of(profile).window(path)]
    aside = profile.startswith("openclaw") and role != "toolResult" and name not in TYPED
    dropped = {"user": "e1", "assistant": "e2"}.get(role) if aside else None
    assert window == [i for i in ["e1", "e2", "e3", "e4", "e5"] if i != dropped]
    kept_aside = [e.id for e, _ in rules_of(profile).kept_aside(path)]
    assert kept_aside == ([dropped] if dropped else [])


def test_openclaw_says_why_it_keeps_such_a_message_aside() -> None:
    path = loads_transcript(_session(4, "assistant", 7)).leaf_path()
    [(entry, why)] = rules_of("openclaw@2026.9.6").kept_aside(path)
    assert (
        entry.id == "e2" and why == "its assistant message's content holds an item that is no object with a string type"
    )


def test_an_entry_unreadable_for_another_reason_too_is_reported_as_before() -> None:
    """A tool result without its toolCallId and with an odd item: unreadable as a whole."""
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    data = linear_jsonl(header, message("user", "hi"), message("toolResult", [7], toolName="read", isError=False))
    transcript = loads_transcript(data)
    assert transcript.leaf_path()[1].type == "unreadable"
    assert {d.code for d in transcript.diagnostics} == {"invalid-entry"}


@pytest.mark.parametrize("role", [["user"], {"r": 1}, 5, None], ids=["list", "object", "number", "null"])
@pytest.mark.parametrize("content", [None, [7]], ids=["null-content", "odd-item"])
@pytest.mark.parametrize("version", [3, 4])
def test_a_role_of_any_json_type_is_an_unreadable_entry_not_a_crash(role: Any, content: Any, version: int) -> None:
    """The repairs tried on an entry that fails validation read its role whatever JSON it holds
    (a list or an object is unhashable: asked whether it is one of the roles, it raised)."""
    header = {"type": "session", "version": version, "id": "s", "timestamp": "2026-12-01T12:00:00.000Z", "cwd": "/w"}
    data = linear_jsonl(
        header, message("user", "hi"), {"type": "message", "message": {"role": role, "content": content}}
    )
    transcript = loads_transcript(data)
    assert transcript.leaf_path()[-1].type == "unreadable"
    [problem] = [d for d in transcript.diagnostics if d.code == "invalid-entry"]
    assert problem.line == 3 and "role" in (problem.field or "")


#: (role, item, pi's own chars for it): JavaScript's `.length` of a list is its number of items
LISTED = [
    ("user", {"type": "text", "text": ["a"] * 13}, 13),
    ("toolResult", {"type": "text", "text": [{"x": 1}, 2] * 5}, 10),
    ("assistant", {"type": "text", "text": [1, 2, 3, 4, 5]}, 5),
    ("assistant", {"type": "thinking", "thinking": ["x"] * 9}, 9),
    ("assistant", {"type": "toolCall", "name": ["a", "b"], "arguments": {"k": "vv"}}, 2 + len('{"k":"vv"}')),
    ("user", {"type": "thinking", "thinking": ["x"] * 9}, 0),  # only an assistant's thinking is read
]


@pytest.mark.parametrize("profile", ["pi@0.73.1", "pi@1.6.0"])
@pytest.mark.parametrize("role,item,chars", LISTED)
def test_pi_counts_a_field_that_is_a_list_by_its_length(profile: str, role: str, item: Any, chars: int) -> None:
    """pi's `estimateTokens` reads `text.length` (`thinking.length`, `name.length`) of a list as
    its number of items, as of any value with a length."""
    rules = rules_of(profile)
    with_item = loads_transcript(_session(3, role, item)).leaf_path()
    without = loads_transcript(_session(3, role, {"type": "video"})).leaf_path()  # a type pi reads nothing of
    at = {"user": 0, "assistant": 1, "toolResult": 2}[role]
    counted = rules.tokens(with_item[at].message) * 4 - rules.tokens(without[at].message) * 4
    assert abs(counted - chars) < 4  # tokens round the chars up to a multiple of 4
