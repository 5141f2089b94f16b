"""What a recording tells a model besides its steps: the system prompt its session kept
(`system_prompt_of`) and the tools its agent called (`recorded_tool_schemas`)."""

from __future__ import annotations

from collections.abc import Sequence

from replaylab.transcript.model import AnyEntry, AssistantMessage, CustomEntry, MessageEntry

#: custom entry types that hold a session's system prompt (importers: `system-prompt`; recorder: the same)
SYSTEM_PROMPT_TYPES = frozenset({"system-prompt", "replaylab.system-prompt"})


def system_prompt_of(path: Sequence[AnyEntry]) -> str | None:
    """The system prompt a recording keeps in a `system-prompt` custom entry, if any."""
    for entry in path:
        if isinstance(entry, CustomEntry) and entry.custom_type in SYSTEM_PROMPT_TYPES:
            data = entry.data
            if isinstance(data, dict):
                text = data.get("content", data.get("text"))
                if isinstance(text, str):
                    return text
                if isinstance(text, list):
                    return "\n".join(str(b.get("text", "")) for b in text if isinstance(b, dict))
            if isinstance(data, str):
                return data
    return None


def recorded_tool_schemas(path: Sequence[AnyEntry]) -> list[dict]:
    """OpenAI tool entries for the tools a recording's agent called, when no tool pack declares
    them (imported sessions): each tool's name, and the argument names its calls used, untyped."""
    seen: dict[str, dict[str, dict]] = {}
    for entry in path:
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            for call in entry.message.tool_calls():
                properties = seen.setdefault(call.name, {})
                for key in call.arguments if isinstance(call.arguments, dict) else ():
                    properties.setdefault(str(key), {})
    return [
        {
            "type": "function",
            "function": {"name": name, "parameters": {"type": "object", "properties": properties}},
        }
        for name, properties in seen.items()
    ]
