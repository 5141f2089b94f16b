"""Reading a `tool_classes.json` ({tool: class}): every problem an `InputError` naming the file,
the line and the tool (`classify.ToolClassifier.from_json` / `from_text`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import NotAFileError, phrase, read_regular

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


def _error(
    source: str, line: int | None, field: str | None, message: str, *, code: str = "bad-tool-classes"
) -> InputError:
    return InputError([Diagnostic(code=code, file=source, line=line, field=field, message=message)])
