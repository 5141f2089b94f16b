"""Tool calls for a small model that writes them as text.

The local model gets Qwen's tool block through its own chat template, but writes a call as a bare
JSON object `{"name": …, "arguments": {…}}` in the reply's content (a larger sibling wraps it in a
json code fence), never in `<tool_call>` tags, so llama.cpp's `tool_calls` stays empty. Two pure
halves, llama.cpp's own facility first:

(a) `request_fields(tools)`: a `json_schema` for the request body (llama.cpp turns it into a
    grammar) that lets the model write only a call of one declared tool with that tool's
    parameters, or a plain answer as a JSON string. Unguided the model invents tools and
    arguments; guided it cannot.
(b) `adapt_message(message, tools)`: the reply back into an OpenAI assistant message: such a call
    becomes `tool_calls`, the JSON string the plain answer. A reply that names an undeclared tool,
    has arguments its tool does not take, or (given the conversation) repeats a call already made
    stays text and says why in `problem` (`parse_reply`), so a caller can retry it as prose
    rather than run a call nobody declared or loop.
(c) `answer_request(body)`: that retry. The small model, asked again after a tool result, tends
    to repeat the call; a GBNF grammar that admits only prose makes it answer from the result.
    llama.cpp refuses a grammar next to `tools` ("Cannot use custom grammar constraints with
    tools"), so the retry drops `tools` (and the call schema); the calls and results already in
    the messages stay, and the chat template renders them as before.

Call ids are derived from the call itself unless the caller gives one, so a reply replayed from a
cassette gets the same id every time.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: a JSON reply inside a Markdown code fence, as larger models write it
_FENCE = re.compile(r"\A```(?:json)?\s*\n?(?P<body>.*?)\n?```\Z", re.DOTALL)


def declared_tools(tools: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """name → parameters schema, from OpenAI tool entries (`{"type": "function", "function": {…}}`)
    or bare function entries (`{"name": …, "parameters": …}`)."""
    declared: dict[str, dict[str, Any]] = {}
    for tool in tools:
        function = tool.get("function", tool)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"a tool without a name: {json.dumps(tool)[:200]}")
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        declared[name] = dict(parameters)
    return declared


def call_schema(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A JSON schema matching a call of exactly one declared tool, with only that tool's
    parameters (its required ones included), or a plain answer as a JSON string."""
    branches: list[dict[str, Any]] = []
    for name, parameters in declared_tools(tools).items():
        arguments = copy.deepcopy(parameters)
        if arguments.get("type") == "object" and "additionalProperties" not in arguments:
            arguments["additionalProperties"] = False  # no argument the tool does not declare
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"const": name}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    branches.append({"type": "string"})
    return {"anyOf": branches}


def request_fields(tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The fields to add to a chat-completion request body for llama.cpp (via litellm: `extra_body`)."""
    return {"json_schema": call_schema(tools)}


#: GBNF: prose only, starting with a letter, without braces, angle brackets or backticks (no JSON,
#: no tags, no code fence: the ways the model writes a call)
PROSE_GRAMMAR = "root ::= [A-Za-z] [^{}<>`\\x00]*"


def answer_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completion request body asking the same conversation for a plain answer only."""
    retry = {key: value for key, value in body.items() if key not in ("tools", "tool_choice", "json_schema")}
    retry["grammar"] = PROSE_GRAMMAR
    return retry


@dataclass(frozen=True)
class Reply:
    """What a reply's content says: a plain answer (`content`) or calls (`tool_calls`, OpenAI
    shape); `problem` when a JSON call in it could not be taken as one."""

    content: str | None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None


def parse_reply(
    content: str | None,
    tools: Sequence[Mapping[str, Any]],
    *,
    call_id: str | None = None,
    history: Sequence[Mapping[str, Any]] = (),
) -> Reply:
    """Read a reply's content as a call of a declared tool, a plain answer, or text as it is.
    `history`: the request's messages, to tell a call already made (same tool, same arguments)."""
    if not content or not content.strip():
        return Reply(content)
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    try:
        value = json.loads(text)
    except ValueError:
        return Reply(content)  # prose: the plain answer as the model wrote it
    if isinstance(value, str):
        return Reply(value)  # the schema's plain-answer branch
    if not (isinstance(value, dict) and "name" in value and "arguments" in value):
        return Reply(content)
    declared = declared_tools(tools)
    name, arguments = value["name"], value["arguments"]
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return Reply(content, problem=f"the call's arguments are not JSON: {arguments[:200]!r}")
    if name not in declared:
        known = ", ".join(sorted(declared)) or "none"
        return Reply(content, problem=f"the reply calls {name!r}, which is not a declared tool (declared: {known})")
    if not isinstance(arguments, dict):
        return Reply(content, problem=f"the arguments of {name!r} are {type(arguments).__name__}, not an object")
    problem = _arguments_problem(name, arguments, declared[name])
    if problem is not None:
        return Reply(content, problem=problem)
    encoded = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    if (name, encoded) in _calls_made(history):
        return Reply(content, problem=f"the reply repeats the call {name}({encoded}) already made")
    call = {
        "id": call_id or _derived_id(name, encoded),
        "type": "function",
        "function": {"name": name, "arguments": encoded},
    }
    return Reply(None, [call])


def adapt_message(
    message: Mapping[str, Any],
    tools: Sequence[Mapping[str, Any]],
    *,
    call_id: str | None = None,
    history: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """An OpenAI assistant message with a call written as text turned into `tool_calls`; a message
    that already has `tool_calls`, or whose text is no call we take (`parse_reply`), comes back
    unchanged."""
    if message.get("tool_calls"):
        return dict(message)
    return with_reply(message, parse_reply(message.get("content"), tools, call_id=call_id, history=history))


def with_reply(message: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    """`message` as `parse_reply` read its text: the plain answer, or the call as `tool_calls`."""
    adapted = dict(message)
    adapted["content"] = reply.content
    if reply.tool_calls:
        adapted["tool_calls"] = reply.tool_calls
    return adapted


def _arguments_problem(name: str, arguments: dict[str, Any], parameters: Mapping[str, Any]) -> str | None:
    properties = parameters.get("properties") or {}
    missing = [key for key in parameters.get("required") or () if key not in arguments]
    if missing:
        return f"the call of {name!r} lacks its required argument(s) {', '.join(missing)}"
    if parameters.get("additionalProperties", False) is False and properties:
        unknown = sorted(key for key in arguments if key not in properties)
        if unknown:
            return f"the call of {name!r} has argument(s) {', '.join(unknown)} that {name!r} does not declare"
    return None


def _derived_id(name: str, encoded_arguments: str) -> str:
    return "call_" + hashlib.sha256(f"{name}\n{encoded_arguments}".encode()).hexdigest()[:24]


def _calls_made(history: Sequence[Mapping[str, Any]]) -> set[tuple[str | None, str]]:
    """(tool, canonical arguments) of every call the assistant made in `history`."""
    made: set[tuple[str | None, str]] = set()
    for message in history:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            arguments = function.get("arguments")
            try:
                decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
            except ValueError:
                continue
            made.add((function.get("name"), json.dumps(decoded, ensure_ascii=False, sort_keys=True)))
    return made
