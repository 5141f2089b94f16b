"""The suite YAML: its schema (`schema`), loading it (`load`), the problems it can have beyond its
schema (`problems`), and the recordings its globs name (`recording_glob`). Every problem is an
`InputError` naming file, line and key."""

from replaylab.suite.load import find_suite_files, load_suite
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
