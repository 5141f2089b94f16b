"""OpenHands event trajectories (a JSON list of serialized events) → v3 sessions.

The format, as OpenHands writes it (All-Hands-AI/OpenHands 04e28400,
`openhands/events/serialization/event.py` `event_to_dict`): each event is `{id, timestamp, source,
message, cause?, action | observation, tool_call_metadata?, llm_metrics?}`; an action's fields are
under `args`, an observation's `content` is top-level and its other fields under `extras`.
`tool_call_metadata {function_name, tool_call_id, model_response, total_calls_in_response}` names
the tool the model called (`openhands/agenthub/codeact_agent/function_calling.py`
`response_to_actions`: `execute_bash` → `CmdRunAction`, `str_replace_editor` → a file action or,
in older versions, `IPythonRunCellAction(code=f'print(file_editor(**{arguments}))')`, `finish` →
`AgentFinishAction`, ...), and `model_response` holds the call's own arguments.

So a call keeps what the model called: the name `function_name` and the arguments of the tool
call with that id in `model_response` (else the action's `args`), which replaylab's classifier
judges as OpenHands' (`execute_bash` through the shell grammar, `str_replace_editor` by its
`command`). An action no model call names (an older trajectory, a user's own action) is named
after what it does (`_UNNAMED`): `run` → `execute_bash {command, is_input}`, `read` →
`str_replace_editor {command: view, path}`, `write` → `str_replace_editor {command: create, path,
file_text}`, `edit` → `str_replace_editor` with its own command (else OpenHands' LLM editor
`edit_file`), `run_ipython` → `execute_ipython_cell`, `browse` → `web_read`, `browse_interactive`
→ `browser`, `think` → `think`, `call_tool_mcp` → the MCP tool it names. A user's action is a
call in a user message (its result's actor `user`), as τ²-bench's user-side calls are.

`message` actions are user / assistant text; `finish` is the assistant's final text (it runs
nothing and no observation answers it); `system` is the system prompt. An observation is the
result of the call of the action it names by `cause` (or the call its `tool_call_metadata`
names); `error` and `user_rejected` results are errors, and so is a result that says it failed
(`success: false`, a command's non-zero exit code, a browser's `error`, an MCP `isError`:
`_failed`). Every other event (`recall`,
`change_agent_state`, `agent_state_changed`, `condensation` — OpenHands' own condensation of the
history —, an observation no action caused) is a custom entry `openhands:<action|observation>`,
kept and never sent to a model; a condensation is named in a note.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic
from replaylab.importers.common import (
    ImportedSession,
    SessionBuilder,
    bad_input,
    each_source,
    find_tool_classes,
    json_source_files,
    parse_arguments,
    provider_for_model,
    read_json,
    safe_name,
)
from replaylab.importers.openai_chat import add_model_fields

CUSTOM_PREFIX = "openhands:"
_ERROR_OBSERVATIONS = frozenset({"error", "user_rejected"})
#: actions that are OpenHands' condensation of the history (its own compaction)
_CONDENSATIONS = frozenset({"condensation", "condense"})


def _unnamed_call(action: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(tool, arguments) of an action no model call names, by what the action does."""
    if action == "run":
        return "execute_bash", {"command": args.get("command", ""), **_only(args, "is_input", "timeout")}
    if action == "read":
        return "str_replace_editor", {"command": "view", "path": args.get("path", ""), **_only(args, "view_range")}
    if action == "write":
        return "str_replace_editor", {
            "command": "create",
            "path": args.get("path", ""),
            "file_text": args.get("content", ""),
        }
    if action == "edit":
        if isinstance(args.get("command"), str) and args["command"]:
            keys = ("file_text", "old_str", "new_str", "insert_line", "view_range")
            return "str_replace_editor", {
                "command": args["command"],
                "path": args.get("path", ""),
                **_only(args, *keys),
            }
        return "edit_file", {"path": args.get("path", ""), **_only(args, "content", "start", "end")}
    if action == "run_ipython":
        return "execute_ipython_cell", {"code": args.get("code", "")}
    if action == "browse":
        return "web_read", {"url": args.get("url", "")}
    if action == "browse_interactive":
        return "browser", {"code": args.get("browser_actions", "")}
    if action == "think":
        return "think", {"thought": args.get("thought", "")}
    if action == "call_tool_mcp" and isinstance(args.get("name"), str):
        inner = args.get("arguments")
        return args["name"], inner if isinstance(inner, dict) else {}
    return None


def _only(args: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: args[k] for k in keys if args.get(k) is not None}


def import_openhands(
    src: Path, *, tool_classes_path: Path | None = None, problems: list[Diagnostic] | None = None
) -> Iterator[ImportedSession]:
    files = json_source_files(src, "OpenHands trajectory")
    yield from each_source(files, lambda path: [import_openhands_file(path, tool_classes_path)], problems)


def import_openhands_file(path: Path, tool_classes_path: Path | None = None) -> ImportedSession:
    data = read_json(path)
    events, where = data, ""
    if isinstance(data, dict) and isinstance(data.get("history"), list):  # an evaluation's output record
        events, where = data["history"], "history"
    if not isinstance(events, list) or not events:
        raise bad_input(path, "expected a non-empty JSON list of OpenHands events (or {'history': [...]})")
    for index, event in enumerate(events):
        _check(path, f"{where}[{index}]", event)
    classes, _ = find_tool_classes(path, tool_classes_path)
    name = safe_name(path.stem)
    first = next((e.get("timestamp") for e in events if e.get("timestamp")), None)
    builder = SessionBuilder(
        name,
        session_id=name,
        source={"kind": "openhands", "file": str(path), **({"index": where} if where else {})},
        timestamp=first,
        tool_classes=classes,
    )
    _Trajectory(builder, path, where).add(events)
    return builder.finish()


def _check(path: Path, at: str, event: Any) -> None:
    if not isinstance(event, dict):
        raise bad_input(path, f"event {at} is a {type(event).__name__}; expected an event object", field_name=at)
    kind = "action" if "action" in event else "observation" if "observation" in event else None
    if kind is None or not isinstance(event[kind], str):
        raise bad_input(
            path,
            f"event {at} has no string 'action' or 'observation'; expected an OpenHands event",
            field_name=f"{at}.action",
        )
    fields = "args" if kind == "action" else "extras"
    if event.get(fields) is not None and not isinstance(event[fields], dict):
        raise bad_input(
            path,
            f"event {at} has {fields} of type {type(event[fields]).__name__}; expected an object",
            field_name=f"{at}.{fields}",
        )
    metadata = event.get("tool_call_metadata")
    if metadata is not None and not (isinstance(metadata, dict) and isinstance(metadata.get("tool_call_id"), str)):
        raise bad_input(
            path,
            f"event {at} has a tool_call_metadata without a string 'tool_call_id'",
            field_name=f"{at}.tool_call_metadata.tool_call_id",
        )


class _Trajectory:
    def __init__(self, builder: SessionBuilder, path: Path, where: str):
        self.b = builder
        self.path = path
        self.where = where
        self.call_of_event: dict[Any, str] = {}  # action event id → its call's id
        self.condensations = 0

    def add(self, events: list[dict[str, Any]]) -> None:
        for index, event in enumerate(events):
            source_id = event.get("id", f"{self.where}[{index}]")
            if "action" in event:
                self._action(event, index, source_id)
            else:
                self._observation(event, source_id)
        if self.condensations:
            self.b.notes.append(
                f"{self.b.name}: OpenHands condensed this session's history {self.condensations} time(s); each "
                f"kept as an '{CUSTOM_PREFIX}condensation' custom entry (not a replaylab compaction)"
            )

    def _action(self, event: dict[str, Any], index: int, source_id: Any) -> None:
        action, args = event["action"], event.get("args") or {}
        timestamp, source = event.get("timestamp"), event.get("source")
        metadata = event.get("tool_call_metadata")
        if action == "system":
            self.b.system_prompt(args.get("content", ""), source_id=source_id, timestamp=timestamp)
            return
        if action in ("message", "finish"):
            text = args.get("content") if action == "message" else args.get("final_thought") or args.get("message")
            text = text if isinstance(text, str) else str(event.get("message") or "")
            role = "user" if source == "user" else "assistant"
            message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
            if role == "assistant":
                message["stopReason"] = "stop"
                self._model_fields(message, metadata)
            extra = {"sourceToolCallId": metadata["tool_call_id"]} if metadata else None
            self.b.message(message, source_id=source_id, timestamp=timestamp, extra=extra)
            return
        call = self._call(action, args, metadata)
        if call is None:
            if action in _CONDENSATIONS:
                self.condensations += 1
            self.b.custom(CUSTOM_PREFIX + action, event, source_id=source_id, timestamp=timestamp)
            return
        tool, arguments = call
        call_id = metadata["tool_call_id"] if metadata else f"openhands-{source_id}"
        if "id" in event:
            self.call_of_event[event["id"]] = call_id
        blocks: list[dict[str, Any]] = []
        thought = args.get("thought")
        if isinstance(thought, str) and thought and tool != "think":
            blocks.append({"type": "text", "text": thought})
        blocks.append({"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments})
        if source == "user":
            self.b.message({"role": "user", "content": blocks}, source_id=source_id, timestamp=timestamp)
            return
        message = {"role": "assistant", "content": blocks, "stopReason": "toolUse"}
        self._model_fields(message, metadata)
        self.b.message(message, source_id=source_id, timestamp=timestamp)

    def _call(
        self, action: str, args: dict[str, Any], metadata: dict[str, Any] | None
    ) -> tuple[str, dict[str, Any]] | None:
        if metadata and isinstance(metadata.get("function_name"), str) and metadata["function_name"]:
            sent = _sent_arguments(metadata)
            if sent is not None:
                arguments, problem = parse_arguments(sent)
                if problem:
                    self.b.notes.append(f"{self.b.name}: call {metadata['tool_call_id']!r}: {problem}")
            else:
                arguments = (_unnamed_call(action, args) or ("", dict(args)))[1]
            return metadata["function_name"], arguments
        return _unnamed_call(action, args)

    def _observation(self, event: dict[str, Any], source_id: Any) -> None:
        observation, timestamp = event["observation"], event.get("timestamp")
        metadata = event.get("tool_call_metadata")
        call_id = metadata["tool_call_id"] if metadata else self.call_of_event.get(event.get("cause"))
        if call_id is None or self.b.pending_call_name(call_id) is None:
            self.b.custom(CUSTOM_PREFIX + observation, event, source_id=source_id, timestamp=timestamp)
            return
        content = event.get("content")
        text = content if isinstance(content, str) else "" if content is None else str(content)
        extras = event.get("extras") or {}
        is_error = observation in _ERROR_OBSERVATIONS or _failed(event, observation, extras, text)
        actor = "user" if event.get("source") == "user" else None
        self.b.tool_result(
            call_id,
            text,
            is_error=is_error,
            source_id=source_id,
            timestamp=timestamp,
            actor=actor,
            details={"openhands": {"observation": observation, "extras": extras}} if extras else None,
        )

    def _model_fields(self, message: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        response = metadata.get("model_response") if metadata else None
        model = response.get("model") if isinstance(response, dict) else None
        if isinstance(response, dict) and isinstance(model, str) and model:
            add_model_fields(
                message,
                api="openai-completions",
                provider=provider_for_model(model),
                model=model,
                usage=response.get("usage"),
            )


def _failed(event: dict[str, Any], observation: str, extras: Any, text: str) -> bool:
    """Whether an observation says its action failed, as each OpenHands version writes it: the
    top-level `success` (`event_to_dict`, newer versions); else a command's exit code, under
    `extras.metadata` or, in older trajectories, `extras.exit_code` (`CmdOutputObservation.error`
    is `exit_code != 0`; -1, a command still running or cut off, too); a browser's `extras.error`
    (`BrowserOutputObservation`); an MCP result whose JSON says `isError` (`MCPObservation`'s
    content is the `CallToolResult` dumped as JSON)."""
    if isinstance(event.get("success"), bool):
        return event["success"] is False
    fields = extras if isinstance(extras, dict) else {}
    metadata = fields.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else fields.get("exit_code")
    if observation == "run" and isinstance(code, int) and not isinstance(code, bool):
        return code != 0
    if observation == "browse" and fields.get("error") is True:
        return True
    if observation == "mcp" and text.lstrip().startswith("{"):
        try:
            result = json.loads(text)
        except ValueError:
            return False
        return isinstance(result, dict) and result.get("isError") is True
    return False


def _sent_arguments(metadata: dict[str, Any]) -> Any:
    """The arguments the model sent with the call `metadata` names, from its `model_response`."""
    response = metadata.get("model_response")
    choices = response.get("choices") if isinstance(response, dict) else None
    for choice in choices if isinstance(choices, list) else []:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call.get("id") == metadata["tool_call_id"]:
                function = call.get("function")
                return function.get("arguments") if isinstance(function, dict) else None
    return None
