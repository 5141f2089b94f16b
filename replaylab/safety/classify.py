"""Tool classification: is a call mutating (write, send, pay, exec …) or safe to replay?

Order of authority (DESIGN §5):
1. the class a tool pack or a `tool_classes.json` declares (τ²-bench vocabulary), action-aware
   when the pack gives a `class_for(args)`;
2. else OpenClaw's name/action rules (`src/agents/tool-mutation.ts`, openclaw-internals §6);
3. else **mutating**: an unknown tool is unsafe until someone says otherwise.

Chosen rule for `exec` (shell: Claude Code's Bash, pi's bash): mutating, always. A command-by-
command read-only list would be a guess about arbitrary shell text; a wrong "safe" would let a
side effect replay live, a wrong "unsafe" only makes replay stricter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab import caches
from replaylab.constants import MUTATING_TOOL_NAMES, READ_ONLY_ACTIONS
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import NotAFileError, phrase, read_regular

#: classes that never change the outside world. Everything else (write, exec, send, …) mutates.
SAFE_CLASSES = frozenset({"read", "compute", "think", "transfer", "interaction", "mode", "skill", "state", "subagent"})

_MESSAGE_MUTATING_ACTIONS = frozenset({"send", "reply", "thread_reply", "edit", "delete", "react", "pin", "unpin"})
_PROCESS_MUTATING_ACTIONS = frozenset({"write", "send_keys", "submit", "paste", "kill"})
#: shell tools that OpenClaw's rules call mutating are reported as class `exec` (the τ²-bench /
#: tool_classes.json word for "runs commands"), not `write`, so pi's bash and Claude Code's Bash
#: land in the same column of `replaylab inspect`.
_EXEC_TOOL_NAMES = frozenset({"exec", "bash", "process"})


def is_mutating_class(tool_class: str) -> bool:
    return tool_class not in SAFE_CLASSES


def openclaw_is_mutating(name: str, args: Mapping[str, Any] | None) -> bool:
    """OpenClaw's `isMutatingToolCall(name, args)`: name rules refined by the `action` argument."""
    rule = _name_rule(name)
    if rule in (_MUTATING, _SAFE):
        return rule == _MUTATING
    args = args or {}
    action = str(args.get("action", "")).lower() if isinstance(args.get("action"), str) else ""
    if rule == "process":
        return action in _PROCESS_MUTATING_ACTIONS
    if rule == "message":
        return action in _MESSAGE_MUTATING_ACTIONS or isinstance(args.get("content"), str)
    if rule == "subagents":
        return action in {"kill", "steer"}
    if rule == "session_status":
        return "model" in args
    if rule == "nodes":
        return action != "list"
    return action not in READ_ONLY_ACTIONS  # "actions": cron, gateway, canvas, *_actions


_MUTATING, _SAFE = "mutating", "safe"


@caches.lru("safety.name_rule", maxsize=4096)
def _name_rule(name: str) -> str:
    """Which of `openclaw_is_mutating`'s rules a tool name falls under (`_MUTATING` / `_SAFE`: the
    name alone decides). Cached by name: a session calls a few tools many times, and classifying
    each call would read the name again."""
    lowered = name.lower()
    if lowered == "process":
        return "process"
    if lowered == "message" or lowered.startswith("message_"):
        return "message"
    if lowered in ("subagents", "session_status", "nodes"):
        return lowered
    if lowered in {"cron", "gateway", "canvas"} or lowered.endswith("_actions"):
        return "actions"
    if lowered in MUTATING_TOOL_NAMES or "send" in lowered:
        return _MUTATING
    return _SAFE


@caches.lru("safety.openclaw_knows", maxsize=4096)
def openclaw_knows(name: str) -> bool:
    """Whether OpenClaw's rules say anything about this name (else: unknown ⇒ mutating)."""
    lowered = name.lower()
    return (
        lowered in MUTATING_TOOL_NAMES
        or lowered.endswith("_actions")
        or lowered.startswith("message_")
        or "send" in lowered
        or lowered in {"read", "grep", "find", "ls", "glob", "search", "subagents"}
    )


@dataclass
class ToolClassifier:
    """Decides the class of each call. `declared` maps tool name → class; `deciders` map tool
    name → function of the arguments (for tools whose class depends on an action argument)."""

    declared: dict[str, str] = field(default_factory=dict)
    deciders: dict[str, Callable[[dict[str, Any]], str]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, path: str | Path, *, field: str | None = None) -> ToolClassifier:
        """A `tool_classes.json` ({tool: class}). Raises `InputError` naming the file, the line
        and the tool for anything else (`field`: the option or key that named the file)."""
        return cls(declared=read_tool_classes(path, field=field))

    @classmethod
    def from_text(cls, text: str, *, source: str, field: str | None = None) -> ToolClassifier:
        """The same from JSON text given inline (`--tool-classes '{"get_order": "read"}'`)."""
        return cls(declared=parse_tool_classes(text, source=source, field=field))

    @classmethod
    def from_tool_pack(cls, pack: Any) -> ToolClassifier:
        declared = {name: spec.tool_class for name, spec in pack.tools.items()}
        deciders = {name: spec.class_for for name, spec in pack.tools.items() if spec.class_for}
        return cls(declared=declared, deciders=deciders)

    def merged(self, other: ToolClassifier) -> ToolClassifier:
        return ToolClassifier({**self.declared, **other.declared}, {**self.deciders, **other.deciders})

    def classify(self, name: str, args: Mapping[str, Any] | None = None) -> str:
        if name in self.deciders:
            return self.deciders[name](dict(args or {}))
        if name in self.declared:
            return self.declared[name]
        if openclaw_knows(name):
            if not openclaw_is_mutating(name, args):
                return "read"
            return "exec" if name.lower() in _EXEC_TOOL_NAMES else "write"
        return "unknown"

    def is_mutating(self, name: str, args: Mapping[str, Any] | None = None) -> bool:
        return is_mutating_class(self.classify(name, args))

    def source(self, name: str) -> str:
        """Where the class of `name` comes from: declared, openclaw-rules or default-unsafe."""
        if name in self.declared or name in self.deciders:
            return "declared"
        return "openclaw-rules" if openclaw_knows(name) else "default-unsafe"


# ---------------------------------------------------------------- tool_classes.json

#: a classification file is a short JSON object; anything larger is not one
MAX_TOOL_CLASSES_BYTES = 1 << 20
_EXPECTED = "expected a JSON object mapping each tool name to its class (read, write, exec, ...)"


def read_tool_classes(path: str | Path, *, field: str | None = None) -> dict[str, str]:
    """{tool: class} of a `tool_classes.json`; every problem an `InputError` with file and line."""
    source = str(path)
    try:
        raw = read_regular(path, MAX_TOOL_CLASSES_BYTES)
    except FileNotFoundError:
        raise _error(source, None, field, "no such file", code="missing-file") from None
    except NotAFileError as exc:
        raise _error(source, None, field, f"{phrase(exc.kind)}; {_EXPECTED}") from None
    except OSError as exc:
        raise _error(source, None, field, f"cannot be read: {exc.strerror or exc}; {_EXPECTED}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(source, None, field, f"is not UTF-8 text (byte {exc.start}); {_EXPECTED}") from None
    return parse_tool_classes(text, source=source, field=field)


def parse_tool_classes(text: str, *, source: str, field: str | None = None) -> dict[str, str]:
    """{tool: class} of JSON text: an object whose values are non-empty strings, each key once."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            if key in seen:
                duplicates.append(key)
            seen[key] = value
        return seen

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _error(
            source,
            exc.lineno,
            field,
            f"does not parse as JSON ({exc.msg} at column {exc.colno}); {_EXPECTED}",
        ) from None
    except (ValueError, RecursionError) as exc:
        raise _error(source, None, field, f"is not usable JSON ({exc}); {_EXPECTED}") from None
    if not isinstance(data, dict):
        raise _error(source, 1, field, f"holds a JSON {type(data).__name__}; {_EXPECTED}")
    if duplicates:
        raise _error(source, _line_of_key(text, duplicates[0]), field, f"tool {duplicates[0]!r} is listed twice")
    for tool, tool_class in data.items():
        if not isinstance(tool_class, str) or not tool_class.strip():
            raise _error(
                source,
                _line_of_key(text, tool),
                field,
                f"tool {tool!r} has class {tool_class!r}; expected a class name such as 'read' or 'write'",
            )
    return dict(data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _line_of_key(text: str, key: str) -> int | None:
    spelled = json.dumps(key)
    at = text.find(spelled)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _error(source: str, line: int | None, field: str | None, message: str, *, code: str = "bad-tool-classes"):
    return InputError([Diagnostic(code=code, file=source, line=line, field=field, message=message)])
