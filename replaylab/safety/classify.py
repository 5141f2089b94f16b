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
    def from_json(cls, path: str | Path) -> ToolClassifier:
        """A `tool_classes.json` ({tool: class})."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected an object mapping tool name to class")
        return cls(declared={str(k): str(v) for k, v in data.items()})

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
