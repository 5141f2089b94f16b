"""Loading a suite file: the YAML read bounded, validated, its recordings expanded and its scenarios
resolved; every problem an `InputError` naming file, line and key."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import (
    ValidationError,
)

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import DIRECTORY, REGULAR, NotAFileError, TooBigError, kind_of, phrase, read_regular
from replaylab.scrub import watch_run_secrets
from replaylab.suite.recording_glob import GlobProblem, expand
from replaylab.transcript.foreign import detect_foreign
from replaylab.yaml_shape import ShapeProblem, load_bounded

if TYPE_CHECKING:
    pass


from replaylab.suite.problems import (
    KeyPath,
    diagnostic,
    model_problems,
    name_problems,
    per_recording_problems,
    tool_classes_problems,
    validation_diagnostic,
)
from replaylab.suite.schema import (
    MAX_RECORDINGS,
    MAX_SUITE_BYTES,
    SUITE_LIMITS,
    CompactionSettings,
    Expectations,
    MatchSettings,
    Scenario,
    ScenarioOverride,
    Suite,
    SuiteFile,
)


def load_suite(path: str | Path) -> Suite:
    """Parse and validate one suite file; raise `InputError` with file:line: key for any problem."""
    path = Path(path)
    text = _read(path)
    try:
        data, node = load_bounded(text, SUITE_LIMITS)
    except ShapeProblem as problem:
        raise InputError([diagnostic(path, problem.line, problem.field, problem.message, code="suite-yaml")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            [
                Diagnostic(
                    code="suite-yaml",
                    file=str(path),
                    line=mark.line + 1 if mark else None,
                    message=f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                )
            ]
        ) from None
    if not isinstance(data, dict):
        raise InputError(
            [
                Diagnostic(
                    code="suite-shape",
                    file=str(path),
                    line=1,
                    message="a suite must be a YAML mapping with at least 'name' and 'recordings'",
                )
            ]
        )
    lines = _key_lines(node)
    duplicates = _duplicate_keys(node)
    if duplicates:  # PyYAML keeps the last value silently; a suite must not change meaning unseen
        raise InputError(
            [
                Diagnostic(
                    code="suite-duplicate-key",
                    file=str(path),
                    line=line,
                    field=key,
                    message=f"key {key.rsplit('.', 1)[-1]!r} appears again (first on line {first}); "
                    "expected each key once",
                )
                for key, line, first in duplicates
            ]
        )
    try:
        suite = SuiteFile.model_validate(data)
    except ValidationError as exc:
        raise InputError([validation_diagnostic(path, lines, err) for err in exc.errors()]) from None
    problems = [
        *name_problems(path, suite, lines),
        *tool_classes_problems(path, suite, lines),
        *model_problems(path, suite, lines),
    ]
    if problems:
        raise InputError(problems)
    recordings = _expand_recordings(path, suite, lines)
    unmatched = per_recording_problems(path, suite, lines, recordings)
    if unmatched:
        raise InputError(unmatched)
    overrides: list[ScenarioOverride | None] = [*suite.scenarios] if suite.scenarios else [None]
    scenarios = [_resolve(path, suite, override, lines) for override in overrides]
    # the values of the variables its model settings read are secrets of the run from now on:
    # every sink redacts them as they are (a 401 body echoing the key into an LLM cassette)
    watch_run_secrets(suite.model_settings.environment())
    return Suite(path=path, name=suite.name, scenarios=scenarios, recordings=recordings)


def _resolve(path: Path, suite: SuiteFile, override: ScenarioOverride | None, lines: dict[KeyPath, int]) -> Scenario:
    base = suite.model_dump(by_alias=True)
    name = suite.compaction.mode if override is None else override.name
    try:
        compaction = CompactionSettings.model_validate(
            {**base["compaction"], **(override.compaction if override else {})}
        )
        match = MatchSettings.model_validate({**base["match"], **(override.match if override else {})})
        expect = Expectations.model_validate({**base["expect"], **(override.expect if override else {})})
        compact_at = override.compact_at if override and override.compact_at else suite.compact_at
        SuiteFile._compact_at(compact_at)
    except ValidationError as exc:  # which override key is wrong: name its line and path
        index = suite.scenarios.index(override) if override else 0
        section = exc.title.removesuffix("Settings").lower().replace("expectations", "expect")
        raise InputError(
            [
                validation_diagnostic(
                    path,
                    lines,
                    {**err, "loc": ("scenarios", index, section, *err["loc"])},
                    prefix=f"scenario {name!r}: ",
                )
                for err in exc.errors()
            ]
        ) from None
    except ValueError as exc:  # compact_at
        index = suite.scenarios.index(override) if override else 0
        line = lines.get(("scenarios", index, "compact_at"), lines.get(("scenarios", index)))
        raise InputError(
            [
                Diagnostic(
                    code="suite-invalid",
                    file=str(path),
                    line=line,
                    field=f"scenarios.{index}.compact_at",
                    message=f"scenario {name!r}: {exc}",
                )
            ]
        ) from None
    # absolute, not resolved: a symbolic link loop is not resolvable, and the file was read already
    tool_classes = Path(os.path.abspath(path.parent / suite.tool_classes)) if suite.tool_classes else None
    return Scenario(
        suite=suite.name,
        name=name,
        suite_file=path,
        tools=suite.tools,
        tool_classes=tool_classes,
        classification=suite.classification,
        live_read_tools=suite.live_read_tools,
        model=(override.model if override and override.model else suite.model),
        model_settings=suite.model_settings,
        llm_cassettes=Path(os.path.abspath(path.parent / suite.llm_cassettes)) if suite.llm_cassettes else None,
        record_mode=suite.record_mode,
        compaction=compaction,
        compactor=(override.compactor if override and override.compactor else suite.compactor),
        compact_at=compact_at,
        context_window=(override.context_window if override and override.context_window else suite.context_window),
        agent=(override.agent if override and override.agent else suite.agent),
        match=match,
        expect=expect,
        per_recording=suite.per_recording,
        repeats=(override.repeats if override and override.repeats else suite.repeats),
    )


def _expand_recordings(path: Path, suite: SuiteFile, lines: dict[KeyPath, int]) -> list[Path]:
    """Every recording the patterns match, each checked to be a regular file: a FIFO, device,
    socket or link loop named `*.jsonl` is refused here, before any item opens it, and so is
    another tool's session log (named with the import that converts it)."""
    patterns = [suite.recordings] if isinstance(suite.recordings, str) else suite.recordings
    found: list[Path] = []
    problems: list[Diagnostic] = []
    for index, pattern in enumerate(patterns):
        line = lines.get(("recordings", index), lines.get(("recordings",))) if len(patterns) > 1 else None
        line = line or lines.get(("recordings",))
        full = pattern if Path(pattern).is_absolute() else str(path.parent / pattern)
        error: str | None
        try:
            matches = sorted(Path(p) for p in expand(full))
        except GlobProblem as exc:
            problems.append(diagnostic(path, line, "recordings", f"{pattern!r} {exc}", code="suite-recordings"))
            continue
        except re.error as exc:
            matches, error = [], str(exc)
        else:
            error = None
        matches = [m for m in matches if m.suffix == ".jsonl" and ".sub-" not in m.name]
        if not matches:
            why = f"is not a valid glob ({error})" if error else "matches no .jsonl transcript"
            problems.append(
                diagnostic(
                    path,
                    line,
                    "recordings",
                    f"{pattern!r} {why} (resolved against {path.parent})",
                    code="suite-recordings",
                )
            )
            continue
        for match in matches:
            kind = kind_of(match)
            if kind != REGULAR:
                problems.append(
                    diagnostic(
                        path,
                        line,
                        "recordings",
                        f"{pattern!r} matches {match}, which {phrase(kind)}; expected .jsonl transcript files",
                        code="suite-recordings",
                    )
                )
            elif (foreign := detect_foreign(match)) is not None:
                problems.append(
                    diagnostic(
                        path,
                        line,
                        "recordings",
                        f"{pattern!r} matches {match}: {foreign.message(match)}",
                        code="foreign-format",
                    )
                )
        found.extend(matches)
        if len(found) > MAX_RECORDINGS:
            problems.append(
                diagnostic(
                    path,
                    line,
                    "recordings",
                    f"the patterns match more than {MAX_RECORDINGS:,} recordings; split the suite",
                    code="suite-recordings",
                )
            )
            break
    if problems:
        raise InputError(problems[:20])
    unique: dict[str, Path] = {}  # one recording matched by two patterns, however spelled, is one recording
    for match in found:
        unique.setdefault(os.path.normpath(os.path.abspath(match)), match)
    return list(unique.values())


def _read(path: Path) -> str:
    try:
        raw = read_regular(path, MAX_SUITE_BYTES)
    except FileNotFoundError:
        raise InputError([Diagnostic(code="suite-missing", file=str(path), message="no such suite file")]) from None
    except NotAFileError as exc:
        what = "is a directory" if exc.kind == DIRECTORY else phrase(exc.kind)
        raise InputError(
            [Diagnostic(code="suite-not-file", file=str(path), message=f"{what}; expected a suite YAML file")]
        ) from None
    except TooBigError as exc:
        raise InputError(
            [Diagnostic(code="suite-too-big", file=str(path), message=f"{exc.strerror}; a suite is a short YAML file")]
        ) from None
    except OSError as exc:
        raise InputError(
            [Diagnostic(code="suite-unreadable", file=str(path), message=f"cannot be read: {exc.strerror or exc}")]
        ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            [Diagnostic(code="suite-utf8", file=str(path), message=f"is not UTF-8 text ({exc.reason})")]
        ) from None


def _key_lines(node: Any, prefix: KeyPath = ()) -> dict[KeyPath, int]:
    """Map each key path (e.g. ('compaction', 'mode')) to its 1-based line in the YAML file."""
    lines: dict[KeyPath, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = prefix + (key.value if isinstance(key, yaml.ScalarNode) else repr(key.value),)
            lines[path] = key.start_mark.line + 1
            lines.update(_key_lines(value, path))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            path = prefix + (index,)
            lines[path] = item.start_mark.line + 1
            lines.update(_key_lines(item, path))
    return lines


def _duplicate_keys(node: Any, prefix: KeyPath = ()) -> list[tuple[str, int, int]]:
    """(key path, line, line of the first occurrence) of every repeated mapping key."""
    out: list[tuple[str, int, int]] = []
    if isinstance(node, yaml.MappingNode):
        first: dict[Any, int] = {}
        for key, value in node.value:
            name = getattr(key, "value", None)
            name = name if isinstance(name, str) else repr(name)
            line = key.start_mark.line + 1
            if name in first:
                out.append((".".join(str(p) for p in (*prefix, name)), line, first[name]))
            first.setdefault(name, line)
            out.extend(_duplicate_keys(value, prefix + (name,)))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            out.extend(_duplicate_keys(item, prefix + (index,)))
    return out
