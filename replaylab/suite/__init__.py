"""The suite YAML: its schema (`schema`), loading it (`load`), the problems it can have beyond its
schema (`problems`), the recordings its globs name (`recording_glob`) and where suite files are
(`files`). Every problem is an `InputError` naming file, line and key.

The names below are imported on first use: finding suite files (every `pytest --replaylab`
start) needs `files` alone, and the schema brings pydantic and the transcript layer with it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replaylab.suite.files import find_suite_files
    from replaylab.suite.load import load_suite
    from replaylab.suite.problems import recording_problems
    from replaylab.suite.schema import (
        LOCAL_MODEL_SPEC,
        MAX_NAME_CHARS,
        MAX_PATTERNS,
        MAX_TOKENS,
        NODE_ID_SEPARATOR,
        ArgRule,
        CompactionSettings,
        Expectations,
        MatchSettings,
        ModelSettings,
        Scenario,
        Suite,
        pattern_matches,
    )

__all__ = [
    "LOCAL_MODEL_SPEC",
    "MAX_NAME_CHARS",
    "MAX_PATTERNS",
    "MAX_TOKENS",
    "NODE_ID_SEPARATOR",
    "ArgRule",
    "CompactionSettings",
    "Expectations",
    "MatchSettings",
    "ModelSettings",
    "Scenario",
    "Suite",
    "find_suite_files",
    "load_suite",
    "pattern_matches",
    "recording_problems",
]
#: each public name's module (imported on first use of one of its names): the schema's, but these
_HOME = {
    name: {"find_suite_files": "files", "load_suite": "load", "recording_problems": "problems"}.get(name, "schema")
    for name in __all__
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
