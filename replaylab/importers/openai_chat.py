"""Plain OpenAI Chat Completions message lists → v3 sessions.

Accepted files (the shapes people actually keep chat logs in):
* `.json`: a list of messages (one session), `{"messages": [...]}` (one session), or a list of
  such objects (one session each);
* `.jsonl`: one `{"messages": [...]}` per line (the fine-tuning format; one session per line),
  or one message per line (one session).

A conversation object's `tools` (the fine-tuning format's tool definitions, OpenAI's
`{type: function, function: {...}}` or MCP's `{name, inputSchema, annotations}`) give classes
where a definition carries MCP's annotations: `readOnlyHint: true` → `read`, `destructiveHint:
true` or `readOnlyHint: false` → `write` (`tool_classes_from_definitions`); a `tool_classes.json`
beside the source names the rest, and wins where both name a tool.

Roles: `system` / `developer` → a `system-prompt` custom entry (kept, not sent as a message);
`user`; `assistant` with `tool_calls` (JSON-string arguments parsed) or the legacy
`function_call`; `tool` (paired by `tool_call_id`, else in order with the calls of the assistant
message before it) and the legacy `function` (paired with the open call of that name). τ-bench
trajectories are this format, so its importer reuses `add_messages`.

A SWE-agent trajectory (`.traj`: `{"history": [...]}`, each message marked with SWE-agent's
`message_type`) is one session of its `history`; SWE-agent's windowed `open` is declared `read`
(`SWE_AGENT_CLASSES`): a name another agent's tool may also carry (where it may launch a program),
so it is read only where the file says the session is SWE-agent's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    each_source,
    find_tool_classes,
    jsonl_rows,
    parse_arguments,
    provider_for_model,
    read_bytes,
    read_json,
    safe_name,
)

SYSTEM_ROLES = ("system", "developer")

#: SWE-agent's tools that no name rule reads, by their source (SWE-agent/SWE-agent 546df3a5
#: `tools/windowed/bin/open`: `WindowedFile(path).goto(..); print_window()`, and 009062f4
#: `tools/windowed/lib/windowed_file.py`: it reads the file and records the window in SWE-agent's
#: own registry, `CURRENT_FILE` and `FIRST_LINE`; a missing file is an error, nothing is created).
SWE_AGENT_CLASSES = {"open": "read"}


def import_openai_chat(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    files = (
        sorted(p for p in src.rglob("*") if p.suffix in (".json", ".jsonl", ".traj") and not _is_side_file(p))
        if src.is_dir()
        else [src]
    )
    if not files:
        raise bad_input(src, "holds no .json or .jsonl chat log")
    yield from each_source(files, lambda path: _file_sessions(path, tool_classes_path, problems), problems)


def _file_sessions(
    path: Path, tool_classes_path: Path | None, problems: list[Diagnostic] | None
) -> Iterator[ImportedSession]:
    """The file's chats, one session each (with `problems`, a chat that cannot be read is listed
    there and the file's other chats still imported)."""
    classes, _ = find_tool_classes(path, tool_classes_path)
    sessions = list(_sessions_in(path))

    def session_of(numbered: tuple[int, Chat]) -> list[ImportedSession]:
        index, (where, messages, meta) = numbered
        if isinstance(messages, InputError):
            raise messages  # a line of its own that cannot be read: its chat alone is lost
        name = safe_name(path.stem if len(sessions) == 1 else f"{path.stem}-{index}")
        model = meta.get("model") if isinstance(meta.get("model"), str) else None
        builder = SessionBuilder(
            name,
            session_id=str(meta.get("id") or name),
            source={"kind": "openai-chat", "file": str(path), "index": where},
            tool_classes={
                **(SWE_AGENT_CLASSES if where == "history" else {}),
                **tool_classes_from_definitions(meta.get("tools")),
                **classes,
            },
        )
        add_messages(
            builder,
            messages,
            path=path,
            where=where,
            model=model,
            provider=provider_for_model(model),
            api="openai-completions" if model else None,
        )
        return [builder.finish()]

    yield from each_source(enumerate(sessions), session_of, problems)


def tool_classes_from_definitions(tools: Any) -> dict[str, str]:
    """{tool: class} of the definitions whose MCP annotations say what the tool does (a hint the
    definition declares; a definition without one says nothing)."""
    classes: dict[str, str] = {}
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        declared = tool.get("function")
        function = declared if isinstance(declared, dict) else tool
        name = function.get("name")
        annotations = tool.get("annotations") or function.get("annotations")
        if not isinstance(name, str) or not isinstance(annotations, dict):
            continue
        if annotations.get("readOnlyHint") is True:
            classes[name] = "read"
        elif annotations.get("destructiveHint") is True or annotations.get("readOnlyHint") is False:
            classes[name] = "write"
    return classes


def _is_side_file(path: Path) -> bool:
    return path.name.startswith("tool_classes") or path.name == "stats.json"


#: (where, its messages or why they cannot be read, its metadata): one conversation of a file
Chat = tuple[str, "list[Any] | InputError", dict[str, Any]]


_EXPECTED = (
    "expected a list of chat messages, {'messages': [...]}, a list of such objects, or JSONL with one of those per line"
)


def _sessions_in(path: Path) -> Iterator[Chat]:
    """(where, messages, metadata) for each conversation in the file. In JSONL of one
    conversation per line, a line that does not parse or holds no conversation is that line's
    problem alone (a log cut off by a crash loses its last line, not the file). A `.json` file of
    one JSON document per line (as published datasets name theirs) is read as JSONL."""
    if path.suffix == ".jsonl":
        yield from _jsonl_sessions(path)
        return
    try:
        data = read_json(path)
    except InputError:
        if not _is_json_lines(path):
            raise
        yield from _jsonl_sessions(path)
        return
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        yield "messages", data["messages"], data
    elif isinstance(data, dict) and _is_swe_agent_history(data.get("history")):
        yield "history", data["history"], {}
    elif isinstance(data, list) and all(isinstance(o, dict) and "role" in o for o in data):
        yield "messages", data, {}
    elif isinstance(data, list) and all(isinstance(o, dict) and isinstance(o.get("messages"), list) for o in data):
        for index, obj in enumerate(data):
            yield f"[{index}]", obj["messages"], obj
    else:
        raise _list_element_error(path, data)


def _list_element_error(path: Path, data: Any) -> InputError:
    """The error of a file that is no chat: for a list whose elements are chat messages or
    conversations but one of them is not, that element's index and the field it lacks."""
    if isinstance(data, list) and data:
        messages = any(isinstance(o, dict) and "role" in o for o in data)
        field = "role" if messages else "messages"
        if messages or any(isinstance(o, dict) and isinstance(o.get("messages"), list) for o in data):
            index, element = next(
                (i, o)
                for i, o in enumerate(data)
                if not (isinstance(o, dict) and ("role" in o if messages else isinstance(o.get("messages"), list)))
            )
            what = f"has no {field!r}" if isinstance(element, dict) else f"is of type {type(element).__name__}"
            expected = "a chat message with a 'role'" if messages else "a conversation with a 'messages' list"
            return bad_input(
                path,
                f"element {index} of the list {what}; expected {expected}, as the other elements are",
                field_name=f"[{index}].{field}",
            )
    return bad_input(path, _EXPECTED)


def _jsonl_sessions(path: Path) -> Iterator[Chat]:
    rows, unparsed = jsonl_rows(path)
    if rows and all(isinstance(o, dict) and "role" in o for _, o in rows):
        if unparsed:  # one conversation, a message per line: a lost line changes it
            raise unparsed[0][1]
        yield "lines", [o for _, o in rows], {}
        return
    if not rows and unparsed:
        raise unparsed[0][1]
    lost = dict(unparsed)
    for lineno, obj in sorted([*rows, *((n, None) for n in lost)], key=lambda row: row[0]):
        if lineno in lost:
            yield f"line {lineno}", lost[lineno], {}
        elif _is_chat(obj):  # a bare list of chat messages per line (Invariant's agent datasets)
            yield f"line {lineno}", obj, {}
        elif not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
            yield f"line {lineno}", bad_input(path, _EXPECTED, line=lineno, field_name="messages"), {}
        else:
            yield f"line {lineno}", obj["messages"], obj


def _is_swe_agent_history(history: Any) -> bool:
    """A SWE-agent trajectory's `history`: chat messages each marked with the `message_type`
    SWE-agent gives them (`system_prompt`, `observation`, `action`, ...)."""
    return (
        isinstance(history, list)
        and bool(history)
        and all(isinstance(o, dict) and "role" in o and isinstance(o.get("message_type"), str) for o in history)
    )


def _is_chat(data: Any) -> bool:
    """A list of chat messages."""
    return isinstance(data, list) and bool(data) and all(isinstance(o, dict) and "role" in o for o in data)


def _is_json_lines(path: Path) -> bool:
    """Whether a file that is no one JSON document holds one per line: its first two non-blank
    lines each parse on their own."""
    lines = [line for line in read_bytes(path).split(b"\n", 64) if line.strip()][:2]
    if len(lines) < 2:
        return False
    try:
        for line in lines:
            orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def add_messages(
    builder: SessionBuilder,
    messages: list[Any],
    *,
    path: Path,
    where: str,
    model: str | None = None,
    provider: str | None = None,
    api: str | None = None,
) -> None:
    """Append OpenAI chat messages to `builder`; `sourceId` is the message's index in the list.

    A call without an `id` is given one (`call_<message>_<k>`), and a `tool` reply without a
    `tool_call_id` answers the first call of the last assistant message no reply has answered yet:
    datasets that drop the ids keep each reply after its call, in the calls' order."""
    waiting: list[str] = []  # the last assistant message's calls no reply has answered, in order
    by_position = False
    for index, msg in enumerate(messages):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise bad_input(
                path,
                f"{where} message {index} is not an object with a 'role'; expected an OpenAI chat message",
                field_name="role",
            )
        role = msg["role"]
        timestamp = msg.get("timestamp")
        if role in SYSTEM_ROLES:
            builder.system_prompt(
                _text(msg.get("content")),
                source_id=index,
                timestamp=timestamp,
                extra_data={"role": role} if role != "system" else None,
            )
        elif role == "user":
            builder.message(
                {"role": "user", "content": _user_content(msg.get("content"))}, source_id=index, timestamp=timestamp
            )
        elif role == "assistant":
            calls = [
                call if _given_id(call) else {**call, "id": f"call_{index}_{k}"}
                for k, call in enumerate(
                    tool_call_objects(
                        msg.get("tool_calls"), path, f"{where} message {index}", "tool_calls", function_objects=True
                    )
                )
            ]
            waiting = [str(call["id"]) for call in calls]
            builder.message(
                _assistant(builder, msg, calls, index, model, provider, api), source_id=index, timestamp=timestamp
            )
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            listed = msg.get("tool_call_ids")  # SWE-agent's spelling: a list, one id per reply
            if call_id is None and isinstance(listed, list) and len(listed) == 1:
                call_id = listed[0]
            if not isinstance(call_id, str) or not call_id:
                if not waiting:
                    raise bad_input(
                        path,
                        f"{where} message {index} (role tool) has no string 'tool_call_id' and follows no call "
                        "left unanswered; expected the id of the call it answers",
                        field_name="tool_call_id",
                    )
                call_id, by_position = waiting[0], True
            if call_id in waiting:
                waiting.remove(call_id)
            builder.tool_result(
                call_id,
                _text(msg.get("content")),
                is_error=bool(msg.get("is_error")),
                tool_name=msg.get("name"),
                source_id=index,
                timestamp=timestamp,
            )
        elif role == "function":  # legacy function calling: answers the open call of that name
            name = str(msg.get("name", ""))
            builder.tool_result(
                f"function:{name}",
                _text(msg.get("content")),
                is_error=False,
                tool_name=name,
                source_id=index,
                timestamp=timestamp,
            )
        else:
            raise bad_input(
                path,
                f"{where} message {index} has role {role!r}; expected system, developer, "
                "user, assistant, tool or function",
                field_name="role",
            )
    if by_position:
        builder.notes.append(
            f"{builder.name}: {where}: tool replies without a tool_call_id answer the calls of the assistant "
            "message before them in order"
        )


def _given_id(call: dict[str, Any]) -> bool:
    return isinstance(call.get("id"), str) and bool(call["id"])


def _assistant(
    builder: SessionBuilder,
    msg: dict[str, Any],
    calls: list[dict[str, Any]],
    index: int,
    model: str | None,
    provider: str | None,
    api: str | None,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    text = _text(msg.get("content"))
    if text:
        content.append({"type": "text", "text": text})
    for call in calls:
        function = call["function"]
        arguments, problem = parse_arguments(function.get("arguments"))
        if problem:
            builder.notes.append(f"{builder.name}: message {index} call {call.get('id')!r}: {problem}")
        content.append(
            {
                "type": "toolCall",
                "id": str(call.get("id")),
                "name": str(function.get("name", "")),
                "arguments": arguments,
            }
        )
    legacy = msg.get("function_call")
    if isinstance(legacy, dict):
        arguments, problem = parse_arguments(legacy.get("arguments"))
        if problem:
            builder.notes.append(f"{builder.name}: message {index} function_call: {problem}")
        name = str(legacy.get("name", ""))
        content.append({"type": "toolCall", "id": f"function:{name}", "name": name, "arguments": arguments})
    has_calls = any(b["type"] == "toolCall" for b in content)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "stopReason": "toolUse" if has_calls else "stop",
    }
    add_model_fields(message, api=api, provider=provider, model=model, usage=msg.get("usage"))
    return message


def add_model_fields(
    message: dict[str, Any],
    *,
    api: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    usage: Any = None,
) -> None:
    """Who produced an imported assistant message (pi's `api`/`provider`/`model`) and its usage in
    pi's shape; fields the source does not know are left out, not written as null."""
    for key, value in (("api", api), ("provider", provider), ("model", model), ("usage", openai_usage(usage))):
        if value:
            message[key] = value


def openai_usage(usage: Any) -> dict[str, int] | None:
    """OpenAI `{prompt_tokens, completion_tokens}` → pi `{input, output, cacheRead, cacheWrite, totalTokens}`;
    None (left out) when neither count is a number: a usage nobody can read is not one of zero."""
    if not isinstance(usage, dict) or (
        _count(usage, "prompt_tokens") is None and _count(usage, "completion_tokens") is None
    ):
        return None
    prompt = _count(usage, "prompt_tokens") or 0
    completion = _count(usage, "completion_tokens") or 0
    details = usage.get("prompt_tokens_details")
    cached = (_count(details, "cached_tokens") or 0) if isinstance(details, dict) else 0
    total = usage.get("total_tokens")
    return {
        "input": prompt - cached,
        "output": completion,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": int(total) if isinstance(total, int) else prompt + completion,
    }


def tool_call_objects(
    value: Any, path: Path | str, where: str, field_name: str, *, function_objects: bool = False
) -> list[dict[str, Any]]:
    """A message's `tool_calls`: absent, null or a list of objects (each with a `function` object
    when `function_objects`, OpenAI's shape); anything else is an input error naming the field."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad_input(
            path, f"{where} has tool_calls of type {type(value).__name__}; expected a list", field_name=field_name
        )
    for index, call in enumerate(value):
        if not isinstance(call, dict) or (function_objects and not isinstance(call.get("function"), dict)):
            shape = "an object with a 'function' object" if function_objects else "an object"
            raise bad_input(
                path, f"{where} has tool call {index} of another shape; expected {shape}", field_name=field_name
            )
    return value


def _count(usage: dict[str, Any], key: str) -> int | None:
    """A token count: a number, or a string of digits (as some providers write it)."""
    value = usage.get(key)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(content: Any) -> str:
    """Text of an OpenAI content value (string, null, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    if not isinstance(content, list):
        return _text(content)
    blocks: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
                blocks.append({"type": "image", "data": data, "mimeType": mime})
            else:
                blocks.append({"type": "text", "text": f"[image {url}]"})
    return blocks
