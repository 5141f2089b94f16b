"""Which compactor an item puts under test: the suite key `compactor:`, the option
`--replaylab-compactor`, or a callable a pytest hook gives (absent: replaylab's own).

    compactor: {python: package.module:callable}          # option: python:package.module:callable
    compactor: {command: [node, my-compactor.mjs], timeout_s: 60}   # option: command:node my-compactor.mjs
    compactor: pi                                         # option: pi (bundled: pi's own compaction)
    compactor: openclaw                                   # option: openclaw (bundled: OpenClaw 2026.9.6's own)

The spec is only a name here; `qa.external_compactor` runs it. It is checked when the suite
loads (a bad one is a usage error naming file, line and field), not when an item first needs it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag, field_validator

#: `package.module:callable` (dotted attribute path after the colon allowed: `module:Class.method`)
PYTHON_TARGET = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
MAX_ARGV = 200
MAX_ARG_CHARS = 4000
#: the longest an external compactor may run per compaction, in seconds (an hour: a bound, not a budget)
MAX_TIMEOUT_S = 3600.0
DEFAULT_TIMEOUT_S = 60.0
#: the bundled compactors, by the name a suite or the command line gives them
BUNDLED = ("pi", "openclaw")
SHAPE = "expected {python: package.module:callable} or {command: [argv...], timeout_s: 60}, or pi, or openclaw"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


SpecT = TypeVar("SpecT", bound=_Spec)


class PythonCompactor(_Spec):
    """A callable imported by path: `callable(params: CompactParams, working_copy: Path)` returning
    a `CompactResult` or a dict in its JSON shape; it appends its compaction entry itself."""

    python: str = Field(max_length=MAX_ARG_CHARS)

    @field_validator("python")
    @classmethod
    def _target(cls, value: str) -> str:
        if not PYTHON_TARGET.match(value.strip()):
            raise ValueError(f"{value!r} is not an import path; expected package.module:callable")
        return value.strip()

    def name(self) -> str:
        return f"python:{self.python}"


class CommandCompactor(_Spec):
    """An external process speaking the seed contract as JSON: params on stdin, result on stdout."""

    command: list[Annotated[str, Field(max_length=MAX_ARG_CHARS)]] = Field(min_length=1, max_length=MAX_ARGV)
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)

    @field_validator("command")
    @classmethod
    def _program(cls, value: list[str]) -> list[str]:
        if not value[0].strip():
            raise ValueError("the program (argv[0]) is empty; expected e.g. [node, my-compactor.mjs]")
        return value

    def name(self) -> str:
        return f"command:{shlex.join(self.command)}"


class PiCompactor(_Spec):
    """pi's own compaction, bundled: the pinned pi of the oracle compacts the working copy
    (`pi_oracle/node/pi_compact.mjs`), its summary model replaylab's extractive summarizer served
    on 127.0.0.1 for the call (`qa.summary_endpoint`)."""

    pi: Literal[True] = True
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)

    def name(self) -> str:
        return "pi"


class OpenClawCompactor(_Spec):
    """OpenClaw 2026.9.6's own compaction, bundled: the pinned OpenClaw compacts the working copy
    (`oracles/node/openclaw-2026.9.6/openclaw_compact.mjs`, run by `compactors.openclaw`) in
    safeguard mode (its safeguard handler, quality guard on) or, for any other compaction mode,
    in its default mode; its summary model is replaylab's extractive summarizer served on
    127.0.0.1 for the call. A quality-guard cancel is a finding of its own (COMPACTION_CANCELLED)."""

    openclaw: Literal[True] = True
    timeout_s: float = Field(DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)

    def name(self) -> str:
        return "openclaw"


@dataclass(frozen=True)
class GivenCompactor:
    """A python-kind callable given directly (by `pytest_replaylab_compactor`), not imported by path."""

    function: Callable[..., Any]
    source: str = "pytest_replaylab_compactor"

    def name(self) -> str:
        module = getattr(self.function, "__module__", None) or "?"
        qualname = getattr(self.function, "__qualname__", None) or type(self.function).__name__
        return f"python:{module}:{qualname} (from {self.source})"


CompactorSpec = PythonCompactor | CommandCompactor | PiCompactor | OpenClawCompactor | GivenCompactor
NamedSpec = PythonCompactor | CommandCompactor | PiCompactor | OpenClawCompactor
#: the spec model of each key a suite's mapping may hold
_MODELS: dict[str, type[NamedSpec]] = {
    "python": PythonCompactor,
    "command": CommandCompactor,
    "pi": PiCompactor,
    "openclaw": OpenClawCompactor,
}


def parse_option(text: str) -> NamedSpec:
    """`pi`, `openclaw`, `python:package.module:callable` or `command:ARGV` (shell-lexed);
    ValueError says what is wrong."""
    if text.strip() in BUNDLED:
        return PiCompactor() if text.strip() == "pi" else OpenClawCompactor()
    kind, colon, rest = text.strip().partition(":")
    if not colon or kind not in ("python", "command") or not rest.strip():
        raise ValueError(f"{text!r}: expected python:package.module:callable or command:ARGV, or pi, or openclaw")
    if kind == "python":
        return _checked(PythonCompactor, {"python": rest})
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise ValueError(f"{text!r}: the command does not lex as shell words ({exc})") from None
    return _checked(CommandCompactor, {"command": argv})


def _checked(model: type[SpecT], data: dict[str, Any]) -> SpecT:
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(first["msg"].removeprefix("Value error, ")) from None


def _from_text(value: Any) -> Any:
    """A suite may spell the spec as the option does (`compactor: "python:pkg.mod:fn"`)."""
    if isinstance(value, str):
        spec = parse_option(value)
        return spec.model_dump()
    return value


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return next((f"dict[{key}]" for key in _MODELS if key in value), None)
    if isinstance(value, _Spec):
        return f"dict[{next(k for k in _MODELS if k in type(value).model_fields)}]"
    return None


#: the suite key's type. The tags read as pydantic's own union labels, so an error's field is
#: `compactor.command.0`, not the tag (`qa.suite.validation_diagnostic` drops such labels)
CompactorSetting = Annotated[
    Annotated[PythonCompactor, Tag("dict[python]")]
    | Annotated[CommandCompactor, Tag("dict[command]")]
    | Annotated[PiCompactor, Tag("dict[pi]")]
    | Annotated[OpenClawCompactor, Tag("dict[openclaw]")],
    Discriminator(_kind, custom_error_type="compactor_shape", custom_error_message=SHAPE),
    BeforeValidator(_from_text),
]


def from_hook(value: Any) -> CompactorSpec | None:
    """What a `pytest_replaylab_compactor` implementation returned, as a spec: a callable, a spec
    string as the option takes it, a suite-style mapping, or a spec. ValueError for anything else."""
    if value is None or isinstance(value, _Spec | GivenCompactor):
        return value  # type: ignore[return-value]
    if isinstance(value, str):
        return parse_option(value)
    if isinstance(value, dict):
        model = next((m for key, m in _MODELS.items() if key in value), CommandCompactor)
        return _checked(model, value)
    if callable(value):
        return GivenCompactor(value)
    raise ValueError(f"returned {type(value).__name__}; expected a callable, a spec string or None")
