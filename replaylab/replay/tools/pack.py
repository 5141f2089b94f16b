"""Tool packs: the tools an agent may call, their class (read / write / ...), and how to run them.

A tool pack is an importable module (e.g. `examples.helpdesk`) with:

* `TOOLS: list[ToolSpec]` — schemas, declared classes, implementations;
* optionally `start_service()` returning a running `Service` (for `replaylab record`).

Implementations make real HTTP calls to `ctx.base_url` (urllib, so vcrpy can record them). They
run when a session is recorded, never in a replay: there each call is answered with the
recording's result (`fail_closed`); only a suite's opt-in `live_read_tools` runs read tools' code,
isolated, with their HTTP served from the cassette.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.transcript.model import TextBlock, ToolCallBlock, ToolResultMessage

READ_CLASSES = frozenset({"read", "compute", "think", "transfer", "interaction", "mode", "skill", "state", "subagent"})


@dataclass(frozen=True)
class ToolOutput:
    text: str
    is_error: bool = False


def result_message(
    call: ToolCallBlock, text: str, is_error: bool, kept: dict[str, Any] | None = None
) -> ToolResultMessage:
    """The tool result message the agent gets for a call, whoever answered it (replay or live).
    `kept`: the fields of the recorded result that answers it which the judgement of the call
    reads (`recorded_results.kept_fields`), carried as the recording wrote them."""
    return ToolResultMessage(
        tool_call_id=call.id, tool_name=call.name, content=[TextBlock(text=text)], is_error=is_error, **(kept or {})
    )


@dataclass(frozen=True)
class ToolContext:
    base_url: str  # e.g. http://127.0.0.1:PORT (live service while recording; any loopback URL in replay)
    session_id: str = ""


class ToolImpl(Protocol):
    def __call__(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput: ...


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments
    tool_class: str  # read | write | exec | send | ... (τ²-bench vocabulary); "args" = see class_for
    call: ToolImpl
    class_for: Callable[[dict[str, Any]], str] | None = None  # class decided by arguments (like `message`)

    def classify(self, args: dict[str, Any]) -> str:
        return self.class_for(args) if self.class_for else self.tool_class

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


@dataclass
class ToolPack:
    name: str
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    module: Any = None

    def declared_classes(self) -> dict[str, str]:
        return {name: spec.tool_class for name, spec in self.tools.items()}


def load_tool_pack(import_path: str, *, source: str = "<suite>") -> ToolPack:
    """Import a tool pack; a pack that fails to import is an `InputError` naming it and why."""
    try:
        module = importlib.import_module(import_path)
    except (Exception, SystemExit) as exc:  # a user's pack may raise anything at import, even exit
        raise InputError(
            [
                Diagnostic(
                    code="toolpack-import",
                    file=source,
                    field="tools",
                    message=f"tool pack {import_path!r} failed to import: {type(exc).__name__}: {exc}",
                )
            ]
        ) from None
    tools = getattr(module, "TOOLS", None)
    if not isinstance(tools, list) or not all(isinstance(t, ToolSpec) for t in tools):
        raise InputError(
            [
                Diagnostic(
                    code="toolpack-invalid",
                    file=source,
                    field="tools",
                    message=f"tool pack {import_path!r} must define TOOLS: list[ToolSpec]",
                )
            ]
        )
    return ToolPack(name=import_path, tools={t.name: t for t in tools}, module=module)
