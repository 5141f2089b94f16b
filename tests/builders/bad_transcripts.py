"""One small hand-made bad transcript per loader diagnostic and what that diagnostic must say, and
the line builders they are made of."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"}


def line(obj: Any) -> bytes:
    return orjson.dumps(obj) + b"\n"


def user(entry_id: str, parent: str | None, text: str = "hi") -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": {"role": "user", "content": text},
    }


def assistant(entry_id: str, parent: str | None, calls: list[tuple[str, str]] = ()) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "ok"}]
    content += [{"type": "toolCall", "id": cid, "name": name, "arguments": {}} for cid, name in calls]
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": {"role": "assistant", "content": content, "stopReason": "toolUse" if calls else "stop"},
    }


def result(entry_id: str, parent: str | None, call_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": "r"}],
            "isError": False,
        },
    }


def clean_body() -> bytes:
    return line(HEADER) + line(user("u1", None)) + line(assistant("a1", "u1"))


# Each case: file bytes, and what the one expected diagnostic must say.
CASES: dict[str, tuple[Callable[[], bytes], dict[str, Any]]] = {
    "line-does-not-parse": (
        lambda: (
            line(HEADER) + line(user("u1", None)) + b'{"type": "message", "id": oops}\n' + line(assistant("a1", "u1"))
        ),
        {"code": "invalid-json", "line": 3, "words": ["does not parse", "skipped"]},
    ),
    "truncated-last-line": (
        lambda: clean_body() + b'{"type":"message","id":"a2","parentId":"a1","message":{"role":"us',
        {"code": "invalid-json", "line": 4, "words": ["last line is truncated"]},
    ),
    "missing-header": (
        lambda: line(user("u1", None)) + line(assistant("a1", "u1")),
        {"code": "missing-header", "line": 1, "field": "type", "words": ["expected a 'session' header"]},
    ),
    "wrong-header-no-id": (
        lambda: line({"type": "session", "version": 3, "cwd": "/w"}) + line(user("u1", None)),
        {"code": "bad-header", "line": 1, "field": "id", "words": ["no string 'id'"]},
    ),
    "header-field-of-another-type": (
        lambda: line({**HEADER, "cwd": 5}) + line(user("u1", None)) + line(assistant("a1", "u1")),
        {"code": "header-field-type", "line": 1, "field": "cwd", "words": ["valid string", "read as it is"]},
    ),
    "assistant-usage-of-another-type": (
        lambda: (
            line(HEADER)
            + line(user("u1", None))
            + line({**(a1 := assistant("a1", "u1")), "message": {**a1["message"], "usage": "n/a"}})
        ),
        {
            "code": "usage-type",
            "line": 3,
            "entry_id": "a1",
            "field": "message.usage",
            "words": ["JSON string", "read as written"],
        },
    ),
    "unknown-version": (
        lambda: line({**HEADER, "version": 5}) + line(user("u1", None)),
        {"code": "unknown-version", "line": 1, "field": "version", "words": ["version 5", "newer"]},
    ),
    "version-written-as-a-string": (
        lambda: line({**HEADER, "version": "1.0"}) + line(user("u1", None)) + line(assistant("a1", "u1")),
        {"code": "bad-version", "line": 1, "field": "version", "words": ["'1.0'", "read as version 1"]},
    ),
    "version-1-entries-with-links-of-their-own": (
        lambda: (
            line({k: v for k, v in HEADER.items() if k != "version"})
            + line(user("u1", None))
            + line(assistant("a1", "nowhere"))
        ),
        {"code": "v1-relinked", "line": 3, "field": "parentId", "words": ["pi's migration", "lines 3"]},
    ),
    "duplicate-ids": (
        lambda: line(HEADER) + line(user("u1", None)) + line(assistant("a1", "u1")) + line(user("u1", "a1")),
        {"code": "duplicate-id", "line": 4, "entry_id": "u1", "words": ["line 2"]},
    ),
    "dangling-parent": (
        lambda: line(HEADER) + line(user("u1", None)) + line(assistant("a1", "nope")),
        {"code": "dangling-parent", "line": 3, "entry_id": "a1", "field": "parentId", "words": ["'nope'"]},
    ),
    "cycle": (
        lambda: line(HEADER) + line(user("x", "y")) + line(assistant("y", "x")) + line(user("z", "y")),
        {"code": "cycle", "entry_id": "x", "line": 2, "field": "parentId", "words": ["cycle", "x", "y"]},
    ),
    "tool-result-without-call": (
        lambda: (
            line(HEADER) + line(user("u1", None)) + line(result("r1", "u1", "call_x")) + line(assistant("a1", "r1"))
        ),
        {
            "code": "orphan-tool-result",
            "line": 3,
            "entry_id": "r1",
            "field": "message.toolCallId",
            "words": ["'call_x'"],
        },
    ),
    "call-without-result": (
        lambda: (
            line(HEADER)
            + line(user("u1", None))
            + line(assistant("a1", "u1", [("call_1", "read")]))
            + line(user("u2", "a1"))
        ),
        {"code": "missing-tool-result", "line": 3, "entry_id": "a1", "words": ["'call_1'", "no tool result"]},
    ),
    "invalid-utf8": (
        lambda: line(HEADER) + line(user("u1", None)).replace(b"hi", b"h\xff\xfei"),
        {"code": "invalid-utf8", "line": 2, "words": ["not valid UTF-8", "byte"]},
    ),
    "glued-lines": (
        lambda: (
            line(HEADER) + line(user("u1", None)).rstrip(b"\n") + line(assistant("a1", "u1")) + line(user("u2", "a1"))
        ),
        {
            "code": "glued-lines",
            "line": 2,
            "words": ["2 JSON objects", "glued", "'u1'", "'a1'", "pi drops the whole line"],
        },
    ),
    "empty-file": (
        lambda: b"\n  \n",
        {"code": "empty-file", "line": None, "words": ["no JSON object", "session header"]},
    ),
    "not-an-object": (
        lambda: clean_body() + b"[1, 2]\n",
        {"code": "not-an-object", "line": 4, "words": ["JSON list", "expected an object"]},
    ),
    "entry-without-id": (
        lambda: clean_body() + line({"type": "message", "parentId": "a1", "message": {"role": "user", "content": "x"}}),
        {"code": "missing-id", "line": 4, "field": "id", "words": ["no string 'id'"]},
    ),
    "entry-fails-validation": (
        lambda: (
            clean_body()
            + line({"type": "message", "id": "m9", "parentId": "a1", "message": {"role": "assistant", "content": 7}})
        ),
        {
            "code": "invalid-entry",
            "line": 4,
            "entry_id": "m9",
            "field": "message.content",
            "words": ["valid list", "got 7", "stays on the path"],
        },
    ),
    "content-block-fails-validation": (
        lambda: (
            clean_body()
            + line(
                {
                    "type": "message",
                    "id": "m9",
                    "parentId": "a1",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": "{}"}],
                    },
                }
            )
        ),
        {  # the message is kept, the block as written (`transcript.opaque_content`)
            "code": "opaque-content",
            "line": 4,
            "entry_id": "m9",
            "field": "message.content.0.arguments",
            "words": ["valid dictionary", "kept as written in its message"],
        },
    ),
}
