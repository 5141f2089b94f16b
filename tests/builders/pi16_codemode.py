"""pi 1.6.0's `codemode` turns as pi writes them: the model's `codemode {code}` call, and its
toolResult carrying codemode's own rows of the script's calls (`details.calls`,
extensions/codemode/execute.js `executeCodemode`) and the record of the calls the script made
(`nestedCalls`, core/nested-tool-calls.js `NestedCallRecorder.snapshot`, set on the result by
core/agent-session.js `_handleAgentEvent`; absent when the script called no tool)."""

from __future__ import annotations

from typing import Any

from builders.transcripts import Session

#: a nested call: (tool name, its arguments; None: the record left them out, past its size limits)
Nested = tuple[str, "dict[str, Any] | None"]


def codemode_turn(
    session: Session,
    code: str,
    nested: list[Nested],
    *,
    output: str = "done",
    complete: bool | None = None,
    models: int = 0,
) -> tuple[str, str, str]:
    """(call entry, result entry, call id) of one codemode call whose script made the `nested`
    calls (and `models` `models.classify()` calls); `complete`: the record's flag (default: every
    call's arguments kept)."""
    entry, [call_id] = session.assistant(None, [("codemode", {"code": code})])
    rows: list[dict[str, Any]] = [
        {"id": f"{call_id}/{n}", "name": name, "args": "{…}", "status": "ok", "durationMs": 3.5}
        for n, (name, _) in enumerate(nested, 1)
    ]
    rows += [
        {"id": f"{call_id}/models.classify/{n}", "name": "models.classify", "args": "typesafe/jev-latest"}
        | {"status": "ok", "durationMs": 40.0}
        for n in range(1, models + 1)
    ]
    message: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "codemode",
        "content": [
            {"type": "text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"},
            {"type": "text", "text": output},
        ],
        "details": {"calls": rows},
        "isError": False,
        "durationMs": 120,
        "timestamp": 1775811600000 + session.n,
    }
    if nested:
        message["nestedCalls"] = nested_record(call_id, nested, complete)
    return entry, session.raw({"message": message}), call_id


def nested_record(call_id: str, nested: list[Nested], complete: bool | None = None) -> dict[str, Any]:
    """`nestedCalls` as pi writes it for the calls `call_id`'s tool made (ids `<callId>/<n>`)."""
    calls = []
    for n, (name, args) in enumerate(nested, 1):
        call: dict[str, Any] = {"id": f"{call_id}/{n}", "name": name, "status": "ok"}
        call |= {"arguments": args} if args is not None else {"argumentsBytes": 9000}
        calls.append(call | {"durationMs": 3})
    whole = all(args is not None for _, args in nested)
    return {"calls": calls, "complete": whole if complete is None else complete}


def extension_turn(session: Session, name: str, args: dict[str, Any], nested: list[Nested]) -> tuple[str, str, str]:
    """(call entry, result entry, call id) of a call of an extension's tool that called other tools
    through `ctx.executeTool()`: pi records them on its result as on codemode's."""
    entry, [call_id] = session.assistant(None, [(name, args)])
    result = session.result(call_id, name, "done")
    session.lines[-1]["message"]["nestedCalls"] = nested_record(call_id, nested)
    return entry, result, call_id


def pi16_session(session_id: str = "pi16-codemode") -> Session:
    """A session pi 1.6.0 writes: its prompt state as a `system` message before the first request
    (the record that claims the session for the profile)."""
    session = Session(session_id)
    session.raw(
        {
            "message": {
                "role": "system",
                "content": "You are a test assistant.",
                "timestamp": 1775811600000,
            }
        }
    )
    return session
