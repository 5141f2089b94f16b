"""What can be wrong in a suite beyond its schema: names, per-recording keys, model settings, tool
classes, and the recordings it names; each a `Diagnostic` with file, line and key."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.model_spec import is_litellm, model_spec_problem

if TYPE_CHECKING:
    pass


from replaylab.suite.schema import LOCAL_MODEL_SPEC, NODE_ID_SEPARATOR, UNION_LABEL, Suite, SuiteFile, pattern_matches

#: where a value is in the suite file: its keys and list indexes from the top (`("compaction", "mode")`)
KeyPath = tuple[str | int, ...]


def name_problems(path: Path, suite: SuiteFile, lines: dict[KeyPath, int]) -> list[Diagnostic]:
    """Scenario names are the last part of each item's node id: each must be unique in its
    suite and hold no `::` (two items with one id would share one result). `per_recording`
    keys are patterns on the recording's path or name: an empty one matches nothing anywhere."""
    out: list[Diagnostic] = []
    first_line: dict[str, int] = {}
    for index, scenario in enumerate(suite.scenarios):
        line = lines.get(("scenarios", index, "name"), lines.get(("scenarios", index), 1))
        field = f"scenarios.{index}.name"
        if NODE_ID_SEPARATOR in scenario.name:
            out.append(
                diagnostic(
                    path,
                    line,
                    field,
                    f"scenario name {scenario.name!r} holds {NODE_ID_SEPARATOR!r}, which separates the parts of a "
                    "pytest node id; expected a name without it",
                )
            )
        if scenario.name in first_line:
            out.append(
                diagnostic(
                    path,
                    line,
                    field,
                    f"scenario name {scenario.name!r} is used again (first on line {first_line[scenario.name]}); "
                    "expected each scenario name once in a suite (it is the item's id)",
                )
            )
        first_line.setdefault(scenario.name, line)
    for pattern in suite.per_recording:
        if not pattern.strip() or "\x00" in pattern:
            out.append(
                diagnostic(
                    path,
                    lines.get(("per_recording", pattern), lines.get(("per_recording",), 1)),
                    f"per_recording[{pattern!r}]",
                    f"{pattern!r} is not a pattern; expected a glob on the recording's file name, e.g. 'refund-*'",
                )
            )
    return out


def per_recording_problems(
    path: Path, suite: SuiteFile, lines: dict[KeyPath, int], recordings: list[Path]
) -> list[Diagnostic]:
    """A `per_recording` key that matches none of the suite's recordings would leave its
    expectations unused without a word (a typo, a renamed file): it is an error, with the
    closest recording name to fix it by."""
    import difflib

    names = sorted({r.name for r in recordings})
    out: list[Diagnostic] = []
    for pattern in suite.per_recording:
        if any(pattern_matches(pattern, r) for r in recordings):
            continue
        close = difflib.get_close_matches(pattern, names, n=1, cutoff=0.4) or difflib.get_close_matches(
            pattern, [n.removesuffix(".jsonl") for n in names], n=1, cutoff=0.4
        )
        hint = f"did you mean {close[0]!r}?" if close else f"its recordings are {', '.join(map(repr, names[:5]))}"
        more = f" (+{len(names) - 5} more)" if not close and len(names) > 5 else ""
        out.append(
            diagnostic(
                path,
                lines.get(("per_recording", pattern), lines.get(("per_recording",), 1)),
                f"per_recording[{pattern!r}]",
                f"{pattern!r} matches no recording of this suite; {hint}{more}",
            )
        )
    return out


def model_problems(path: Path, suite: SuiteFile, lines: dict[KeyPath, int]) -> list[Diagnostic]:
    """Every model spec is checked now (a bad one is a usage error, not an error in every item),
    and model settings that no litellm model of the suite would read are refused, not ignored."""
    out: list[Diagnostic] = []
    specs: list[tuple[KeyPath, str]] = [(("model",), suite.model)]
    specs += [(("scenarios", i, "model"), o.model) for i, o in enumerate(suite.scenarios) if o.model]
    for where, spec in specs:
        problem = model_spec_problem(spec, script_given=False)
        if problem is not None:
            out.append(diagnostic(path, lines.get(where, 1), ".".join(map(str, where)), problem))
    uses_litellm = any(is_litellm(spec) for _, spec in specs)
    if suite.model_settings.local_model:
        for where, spec in specs:
            if spec.strip() != LOCAL_MODEL_SPEC:
                out.append(
                    diagnostic(
                        path,
                        lines.get(where, 1),
                        ".".join(map(str, where)),
                        f"model_settings.local_model serves the local test model, and {spec!r} is another "
                        f"model; expected model: {LOCAL_MODEL_SPEC}",
                    )
                )
    for key in ("model_settings", "llm_cassettes"):
        if (key,) in lines and not uses_litellm:
            out.append(
                diagnostic(
                    path,
                    lines[(key,)],
                    key,
                    f"{key} is read only by a litellm model, and this suite's model is {suite.model!r}; "
                    "expected model: litellm/<provider>/<model>, or no " + key,
                )
            )
    return out


def recording_problems(suite: Suite, record_mode: str | None, environ: Mapping[str, str]) -> list[Diagnostic]:
    """What a suite's litellm model needs to record (`record_mode`: the command line's, else each
    scenario's) and lacks: an environment variable that is not set, or the local-model extra. A
    usage error before anything runs rather than a model call without its key. Replaying from
    the cassettes needs neither."""
    out: list[Diagnostic] = []
    for scenario in suite.scenarios:
        mode = record_mode or scenario.record_mode or "none"
        if mode == "none" or not is_litellm(scenario.model):
            continue
        if scenario.model_settings.local_model:
            from replaylab.local_model.extra import missing_extra

            missing = missing_extra()
            if missing is not None:
                out.append(
                    diagnostic(
                        suite.path,
                        None,
                        "model_settings.local_model",
                        f"scenario {scenario.name!r} records its LLM cassettes (record mode {mode}) with the "
                        f"local model: {missing}",
                        code="local-model-missing",
                    )
                )
        for name in scenario.model_settings.environment():
            if name not in environ:
                out.append(
                    diagnostic(
                        suite.path,
                        None,
                        "model_settings",
                        f"scenario {scenario.name!r} records its LLM cassettes (record mode {mode}) and reads "
                        f"${name}, which is not set; expected it in the environment",
                        code="secret-unset",
                    )
                )
    return list({str(d): d for d in out}.values())


def tool_classes_problems(path: Path, suite: SuiteFile, lines: dict[KeyPath, int]) -> list[Diagnostic]:
    """The suite's `tool_classes` file is read now, so a bad one stops the run before it starts."""
    if not suite.tool_classes:
        return []
    from replaylab.safety.classify import ToolClassifier

    target = Path(os.path.abspath(path.parent / suite.tool_classes))
    try:
        ToolClassifier.from_json(target)
    except InputError as exc:
        line = lines.get(("tool_classes",), 1)
        return [
            diagnostic(
                path, line, "tool_classes", f"{suite.tool_classes!r}{f' line {d.line}' if d.line else ''}: {d.message}"
            )
            for d in exc.diagnostics
        ]
    return []


def diagnostic(
    path: Path, line: int | None, field: str | None, message: str, *, code: str = "suite-invalid"
) -> Diagnostic:
    return Diagnostic(code=code, file=str(path), line=line, field=field, message=message)


def validation_diagnostic(
    path: Path, lines: dict[KeyPath, int], err: Mapping[str, Any], prefix: str = ""
) -> Diagnostic:
    loc: KeyPath = ()
    for part in err["loc"]:  # drop pydantic's union-member labels (`str`, `list[str]`): no user wrote them
        if (*loc, part) in lines or not (isinstance(part, str) and UNION_LABEL.match(part)):
            loc = (*loc, part)
    line = None
    for cut in range(len(loc), 0, -1):
        if loc[:cut] in lines:
            line = lines[loc[:cut]]
            break
    key = ".".join(str(p) for p in loc) or None
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        message = f"unknown key {loc[-1]!r}"
    elif err["type"] == "missing":
        message = f"required key {loc[-1]!r} is missing"
    elif "input" in err and err["type"] not in ("missing",):
        message = f"{message} (got {err['input']!r})"
    return Diagnostic(code="suite-invalid", file=str(path), line=line or 1, field=key, message=prefix + message)
