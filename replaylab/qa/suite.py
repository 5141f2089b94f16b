"""Suite files: YAML in `suites/`, validated by pydantic, errors naming file, line and key.

A suite says which recordings to replay, with which tool pack and model, how to compact, where
to compact, how strictly to compare, and what to expect. Each (recording × scenario) becomes one
pytest item. A negative control lists the defects replaylab must find; missing one fails it.

    name: helpdesk-safeguard
    recordings: ../recordings/helpdesk/*.jsonl     # relative to the suite file
    tools: plugins.helpdesk                        # or tool_classes: path/to/tool_classes.json
    classification: {read_only_commands: [git status]}   # optional: docs/classification.md
    live_read_tools: false                         # true: read tools' own code runs, network-isolated
    model: replay                                  # or litellm/<provider>/<model>
    #   model_settings: {api_base: http://127.0.0.1:8080/v1, api_key_env: OPENAI_API_KEY, max_tokens: 256}
    #   llm_cassettes: cassettes/                  # where its LLM cassettes live (default: beside each recording)
    #   record_mode: none                          # none | once | new_episodes | all (the option wins)
    compaction: {mode: safeguard, contextTokens: 6000, reserveTokensFloor: 1000}   # contextTokens: auto (default)
    #   compactor: {command: [node, my-compactor.mjs], timeout_s: 60}   # or {python: pkg.mod:fn}; default replaylab's
    #   compactor: pi                                  # or the bundled one: pi's own compaction
    compact_at: auto                               # auto | turn:N | every:N
    match: {tools: strict, answer: normalized}
    #   args: {edit: {grounding: {newText: off}}}   # per tool / argument: off | values (default) | strict
    expect: {defects: []}
    scenarios:                                     # optional variants of the above
      - {name: tight, compaction: {contextTokens: 4000}}
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from replaylab import constants as C
from replaylab.defects import Code
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import DIRECTORY, REGULAR, NotAFileError, TooBigError, kind_of, phrase, read_regular
from replaylab.model_spec import is_litellm, model_spec_problem
from replaylab.qa.compactor_spec import CompactorSetting, NamedSpec
from replaylab.qa.recording_glob import GlobProblem, expand
from replaylab.safety.overrides import ClassificationOverrides
from replaylab.transcript.foreign import detect_foreign
from replaylab.values import GROUNDING_LEVELS, GroundingLevel
from replaylab.yaml_shape import Limits, ShapeProblem, load_bounded

if TYPE_CHECKING:
    from replaylab.replay.grounding import GroundingRules

SUITE_SUFFIXES = (".yaml", ".yml")
COMPACT_AT = re.compile(r"^(auto|turn:\d{1,6}|every:\d{1,6})$")
#: bounds on what a suite may ask for, so that no value from a file can make a run unbounded
MAX_SUITE_BYTES = 1 << 20
MAX_TOKENS = 100_000_000  # far above any model's context window
MAX_REPEATS = 100
MAX_SCENARIOS = 200
MAX_PATTERNS = 100
MAX_RECORDINGS = 10_000
MAX_NAME_CHARS = 200
#: what a suite's YAML may expand to: a suite needs a few hundred values
SUITE_LIMITS = Limits(values=20_000, depth=32, kind="a suite is a short, shallow mapping")
#: pytest joins the parts of an item's node id with it, so no scenario name may hold it
NODE_ID_SEPARATOR = "::"
UNION_LABEL = re.compile(r"^(str|int|float|bool|none|(list|dict|tuple|set|literal)\[.*\]|function-.*)$", re.I)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class CompactionSettings(Strict):
    """The `compact()` parameters a suite may set (camelCase, as in the seed contract)."""

    mode: Literal["safeguard", "auto", "aggressive", "manual"] = "safeguard"
    context_tokens: int | Literal["auto"] = Field(
        "auto",
        alias="contextTokens",
        description="the model's context window; auto: chosen per recording from its own windows (qa.auto_budget)",
    )
    reserve_tokens_floor: int | None = Field(
        None,
        alias="reserveTokensFloor",
        ge=0,
        le=MAX_TOKENS,
        description="unset: scaled with an auto contextTokens, else OpenClaw's floor",
    )
    keep_recent_tokens: int | None = Field(None, alias="keepRecentTokens", gt=0, le=MAX_TOKENS)
    max_history_share: float = Field(C.DEFAULT_MAX_HISTORY_SHARE, alias="maxHistoryShare", ge=0.1, le=0.9)
    identifier_policy: Literal["strict", "off", "custom"] = Field("strict", alias="identifierPolicy")
    allow_mutating_event_truncate: bool = Field(False, alias="allowMutatingEventTruncate")
    recent_turns_preserve: int = Field(
        C.DEFAULT_RECENT_TURNS_PRESERVE, alias="recentTurnsPreserve", ge=0, le=C.MAX_RECENT_TURNS_PRESERVE
    )
    model_provider: str | None = Field(None, alias="modelProvider", max_length=MAX_NAME_CHARS)
    summarizer_failures: int = Field(
        0, alias="summarizerFailures", ge=0, le=100, description="test hook: the summarizer fails this many times first"
    )

    @field_validator("context_tokens", mode="before")
    @classmethod
    def _context_tokens(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TOKENS:
            raise ValueError(f"expected a number of tokens from 1 to {MAX_TOKENS:,}, or auto")
        return value

    @model_validator(mode="after")
    def _budget_left(self) -> CompactionSettings:
        """A set contextTokens must leave a budget after the reserve (pi compacts when the window
        passes contextTokens − reserve): caught here, not as a failed compaction mid-run."""
        if self.context_tokens != "auto" and self.reserve() >= self.context_tokens:
            default = "" if self.reserve_tokens_floor is not None else " (OpenClaw's default floor)"
            raise ValueError(
                f"contextTokens {self.context_tokens} leaves no budget after reserveTokensFloor "
                f"{self.reserve()}{default}; expected contextTokens above it — set reserveTokensFloor, "
                "or leave contextTokens to auto"
            )
        return self

    def reserve(self) -> int:
        """The reserve of a set contextTokens: the suite's, else OpenClaw's floor."""
        if self.reserve_tokens_floor is not None:
            return self.reserve_tokens_floor
        return C.DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR


class ArgRule(Strict):
    """How one tool's calls are compared, and how the `replay` model grounds their arguments."""

    ignore: list[str] = Field(default_factory=list, description="argument keys not compared")
    numeric_tolerance: float = Field(0.0, ge=0.0, allow_inf_nan=False)
    grounding: GroundingLevel | dict[str, GroundingLevel] = Field(
        "values",
        description="off (the recorded value is kept) | values (whole learned leaves and the opaque ids "
        "inside composed text) | strict (every identifier-like token too); one level or one per argument",
    )

    @field_validator("grounding", mode="before")
    @classmethod
    def _grounding_level(cls, value: Any) -> Any:
        """One message for a bad level (not one per shape the field allows); YAML reads a bare
        `off` as false, which here can only mean the level `off`."""
        if isinstance(value, dict):
            return {key: _level(item, f"{key}: ") for key, item in value.items()}
        return _level(value, "")


def _level(value: Any, where: str) -> str:
    if value is False:
        return "off"
    if isinstance(value, str) and value in GROUNDING_LEVELS:
        return value
    raise ValueError(
        f"{where}{value!r} is not a grounding level: expected off, values or strict"
        + ("" if where else ", or a mapping of argument name to level")
    )


class MatchSettings(Strict):
    tools: Literal["strict", "unordered", "subset", "superset"] = "strict"
    args: Annotated[
        Annotated[Literal["exact", "ignore"], Tag("literal[exact|ignore]")]
        | Annotated[dict[str, ArgRule], Tag("dict[str,ArgRule]")],
        Discriminator(lambda value: "dict[str,ArgRule]" if isinstance(value, dict) else "literal[exact|ignore]"),
    ] = "exact"  # a rule's error is reported once, not once more as "not exact or ignore"
    #: `identifiers`: the answers name the same identifiers (ids, codes, order numbers), however
    #: worded; for a real model, which words an answer afresh for every window
    answer: Literal["exact", "normalized", "similarity", "identifiers", "ignore"] = "normalized"
    similarity: float = Field(0.9, ge=0.0, le=1.0)

    def grounding_rules(self) -> GroundingRules:
        """The `replay` model's levels per tool (and argument) from `args.<tool>.grounding`."""
        from replaylab.replay.grounding import GroundingRules

        rules = self.args if isinstance(self.args, dict) else {}
        return GroundingRules({tool: rule.grounding for tool, rule in rules.items() if rule.grounding != "values"})


class Expectations(Strict):
    defects: list[Code] = Field(default_factory=list, description="codes that must be found (negative control)")
    tolerate: list[Code] | Literal["any"] = Field(
        default_factory=list, description="codes that may appear without failing the item"
    )
    replay_safe: bool | None = Field(None, alias="replaySafe")
    mutated_event_ids: list[str] | None = Field(None, alias="mutatedEventIds")


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
ENV_REFERENCE = re.compile(r"\$\{([^}]*)\}")
MAX_HEADERS = 50
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: the model spec of the local test model (`model_settings.local_model`), as its server serves it
LOCAL_MODEL_SPEC = f"litellm/openai/{C.LOCAL_MODEL_NAME}"


class ModelSettings(Strict):
    """How a litellm model is called. Secrets come only from the environment: the key from
    `api_key_env`, header values from `${NAME}` references; neither is ever written to a cassette."""

    api_base: str | None = Field(None, max_length=2000, description="the OpenAI-compatible base URL")
    api_key_env: str | None = Field(None, description="the environment variable holding the API key")
    temperature: float | None = Field(0.0, ge=0.0, le=2.0, allow_inf_nan=False)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    max_tokens: int | None = Field(None, gt=0, le=MAX_TOKENS)
    headers: dict[str, str] = Field(default_factory=dict, max_length=MAX_HEADERS)
    local_tool_calls: bool = Field(
        False,
        description="the local model (loopback api_base): ask llama.cpp for declared tool calls and read "
        "the calls it writes as text (replaylab.local_model.tool_calls)",
    )
    local_model: bool = Field(
        False,
        description="replaylab's local test model: served on 127.0.0.1 for the run only while an LLM "
        "cassette is recorded (it needs the local-model extra); replaying needs nothing. Implies "
        "local_tool_calls; takes no api_base",
    )

    @field_validator("api_base")
    @classmethod
    def _api_base(cls, value: str | None) -> str | None:
        from urllib.parse import urlsplit

        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http(s) URL; expected e.g. http://127.0.0.1:8080/v1")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _api_key_env(cls, value: str | None) -> str | None:
        if value is not None and not ENV_NAME.match(value):
            raise ValueError(f"{value!r} is not an environment variable name; expected e.g. OPENAI_API_KEY")
        return value

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        from replaylab.scrub import default_scrubber

        scrubber = default_scrubber()
        for name, text in value.items():
            if not re.match(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,200}$", name):
                raise ValueError(f"{name!r} is not an HTTP header name")
            names = ENV_REFERENCE.findall(text)
            bad = [n for n in names if not ENV_NAME.match(n)]
            if bad:
                raise ValueError(f"header {name!r}: ${{{bad[0]}}} does not name an environment variable")
            if not names and (scrubber.is_secret_key(name) or name.lower() in ("authorization", "api-key")):
                raise ValueError(
                    f"header {name!r} carries a secret, so its value must come from the environment; "
                    f"expected e.g. {name}: '${{MY_TOKEN}}'"
                )
        return value

    @model_validator(mode="after")
    def _local_tool_calls(self) -> ModelSettings:
        from urllib.parse import urlsplit

        if self.local_model:
            if self.api_base is not None:
                raise ValueError("local_model serves its own endpoint on 127.0.0.1 for the run; expected no api_base")
            return self
        if self.local_tool_calls and (self.api_base is None or urlsplit(self.api_base).hostname not in LOOPBACK_HOSTS):
            raise ValueError(
                "local_tool_calls is for the local model on this machine; expected a loopback api_base "
                "(http://127.0.0.1:PORT/v1)"
            )
        return self

    def environment(self) -> list[str]:
        """The environment variables these settings read."""
        names = [self.api_key_env] if self.api_key_env else []
        for text in self.headers.values():
            names.extend(ENV_REFERENCE.findall(text))
        return list(dict.fromkeys(names))

    def model_options(self, environ: Mapping[str, str]) -> dict[str, Any]:
        """The litellm model's options, secrets read from `environ` (an unset one: left out, as an
        offline replay from the cassette needs none)."""
        headers = {}
        for name, text in self.headers.items():
            if all(ref in environ for ref in ENV_REFERENCE.findall(text)):
                headers[name] = ENV_REFERENCE.sub(lambda m: environ[m.group(1)], text)
        return {
            "api_base": self.api_base,
            "api_key": environ.get(self.api_key_env) if self.api_key_env else None,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "headers": headers,
            "local_tool_calls": self.local_tool_calls or self.local_model,
        }


class ScenarioOverride(Strict):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    compaction: dict[str, Any] = Field(default_factory=dict)
    compact_at: str | None = None
    match: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] = Field(default_factory=dict)
    model: str | None = Field(None, max_length=MAX_NAME_CHARS)
    repeats: int | None = Field(None, ge=1, le=MAX_REPEATS)
    compactor: CompactorSetting | None = None


class SuiteFile(Strict):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    recordings: str | list[str] = Field(max_length=MAX_PATTERNS)
    tools: str | None = Field(None, max_length=MAX_NAME_CHARS)
    tool_classes: str | None = None
    classification: ClassificationOverrides = Field(
        default_factory=ClassificationOverrides,
        description="read_only_commands / mutating / safe: this suite's own classification (docs/classification.md)",
    )
    live_read_tools: bool = Field(
        False,
        description="run the tool pack's read tools' own code in replay (in a network namespace of their "
        "own, HTTP from the cassette) instead of answering them from the recording; mutating tools never run",
    )
    model: str = Field("replay", max_length=MAX_NAME_CHARS)
    model_settings: ModelSettings = Field(default_factory=ModelSettings)
    llm_cassettes: str | None = Field(
        None, min_length=1, max_length=4000, description="folder of the LLM cassettes (default: beside each recording)"
    )
    record_mode: Literal["none", "once", "new_episodes", "all"] | None = Field(
        None, description="LLM cassette record mode (--replaylab-record-mode wins; default none)"
    )
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    compactor: CompactorSetting | None = Field(
        None, description="the compactor under test (qa.compactor_spec); unset: replaylab's own"
    )
    compact_at: str = "auto"
    match: MatchSettings = Field(default_factory=MatchSettings)
    expect: Expectations = Field(default_factory=Expectations)
    per_recording: dict[str, Expectations] = Field(
        default_factory=dict, description="glob on the recording file name → expectations"
    )
    repeats: int = Field(1, ge=1, le=MAX_REPEATS)
    scenarios: list[ScenarioOverride] = Field(default_factory=list, max_length=MAX_SCENARIOS)
    description: str = ""

    @field_validator("compact_at")
    @classmethod
    def _compact_at(cls, value: str) -> str:
        if not COMPACT_AT.match(value):
            raise ValueError("expected 'auto', 'turn:N' or 'every:N'")
        return value


class Scenario(BaseModel):
    """One fully resolved scenario of a suite (suite settings + one override)."""

    suite: str
    name: str
    suite_file: Path
    tools: str | None
    tool_classes: Path | None
    classification: ClassificationOverrides = Field(default_factory=ClassificationOverrides)
    live_read_tools: bool = False
    model: str
    model_settings: ModelSettings = Field(default_factory=ModelSettings)
    #: the folder of the litellm model's cassettes (None: beside each recording)
    llm_cassettes: Path | None = None
    record_mode: str | None = None
    compaction: CompactionSettings
    #: the compactor under test (`qa.compactor_spec`); None: replaylab's own
    compactor: NamedSpec | None = None
    compact_at: str
    match: MatchSettings
    expect: Expectations
    per_recording: dict[str, Expectations]
    repeats: int

    def expectations_for(self, recording: Path) -> Expectations:
        for pattern, expectations in self.per_recording.items():
            if pattern_matches(pattern, recording):
                return expectations
        return self.expect


def pattern_matches(pattern: str, recording: Path) -> bool:
    """A `per_recording` key names this recording: a glob on its path or on its file name."""
    return Path(recording).match(pattern) or fnmatch.fnmatch(Path(recording).name, pattern)


class Suite(BaseModel):
    path: Path
    name: str
    scenarios: list[Scenario]
    recordings: list[Path]


def load_suite(path: str | Path) -> Suite:
    """Parse and validate one suite file; raise `InputError` with file:line: key for any problem."""
    path = Path(path)
    text = _read(path)
    try:
        data, node = load_bounded(text, SUITE_LIMITS)
    except ShapeProblem as problem:
        raise InputError([_diagnostic(path, problem.line, problem.field, problem.message, code="suite-yaml")]) from None
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
        raise InputError([_validation_diagnostic(path, lines, err) for err in exc.errors()]) from None
    problems = [
        *_name_problems(path, suite, lines),
        *_tool_classes_problems(path, suite, lines),
        *_model_problems(path, suite, lines),
    ]
    if problems:
        raise InputError(problems)
    recordings = _expand_recordings(path, suite, lines)
    unmatched = _per_recording_problems(path, suite, lines, recordings)
    if unmatched:
        raise InputError(unmatched)
    scenarios = [_resolve(path, suite, override, lines) for override in (suite.scenarios or [None])]
    return Suite(path=path, name=suite.name, scenarios=scenarios, recordings=recordings)


def _name_problems(path: Path, suite: SuiteFile, lines: dict[tuple, int]) -> list[Diagnostic]:
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
                _diagnostic(
                    path,
                    line,
                    field,
                    f"scenario name {scenario.name!r} holds {NODE_ID_SEPARATOR!r}, which separates the parts of a "
                    "pytest node id; expected a name without it",
                )
            )
        if scenario.name in first_line:
            out.append(
                _diagnostic(
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
                _diagnostic(
                    path,
                    lines.get(("per_recording", pattern), lines.get(("per_recording",), 1)),
                    f"per_recording[{pattern!r}]",
                    f"{pattern!r} is not a pattern; expected a glob on the recording's file name, e.g. 'refund-*'",
                )
            )
    return out


def _per_recording_problems(
    path: Path, suite: SuiteFile, lines: dict[tuple, int], recordings: list[Path]
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
            _diagnostic(
                path,
                lines.get(("per_recording", pattern), lines.get(("per_recording",), 1)),
                f"per_recording[{pattern!r}]",
                f"{pattern!r} matches no recording of this suite; {hint}{more}",
            )
        )
    return out


def _model_problems(path: Path, suite: SuiteFile, lines: dict[tuple, int]) -> list[Diagnostic]:
    """Every model spec is checked now (a bad one is a usage error, not an error in every item),
    and model settings that no litellm model of the suite would read are refused, not ignored."""
    out: list[Diagnostic] = []
    specs = [(("model",), suite.model)]
    specs += [(("scenarios", i, "model"), o.model) for i, o in enumerate(suite.scenarios) if o.model]
    for where, spec in specs:
        problem = model_spec_problem(spec)
        if problem is not None:
            out.append(_diagnostic(path, lines.get(where, 1), ".".join(map(str, where)), problem))
    uses_litellm = any(is_litellm(spec) for _, spec in specs)
    if suite.model_settings.local_model:
        for where, spec in specs:
            if spec.strip() != LOCAL_MODEL_SPEC:
                out.append(
                    _diagnostic(
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
                _diagnostic(
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
                    _diagnostic(
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
                    _diagnostic(
                        suite.path,
                        None,
                        "model_settings",
                        f"scenario {scenario.name!r} records its LLM cassettes (record mode {mode}) and reads "
                        f"${name}, which is not set; expected it in the environment",
                        code="secret-unset",
                    )
                )
    return list({str(d): d for d in out}.values())


def _tool_classes_problems(path: Path, suite: SuiteFile, lines: dict[tuple, int]) -> list[Diagnostic]:
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
            _diagnostic(
                path, line, "tool_classes", f"{suite.tool_classes!r}{f' line {d.line}' if d.line else ''}: {d.message}"
            )
            for d in exc.diagnostics
        ]
    return []


def _diagnostic(
    path: Path, line: int | None, field: str | None, message: str, *, code: str = "suite-invalid"
) -> Diagnostic:
    return Diagnostic(code=code, file=str(path), line=line, field=field, message=message)


def _resolve(path: Path, suite: SuiteFile, override: ScenarioOverride | None, lines: dict[tuple, int]) -> Scenario:
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
                _validation_diagnostic(
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
        match=match,
        expect=expect,
        per_recording=suite.per_recording,
        repeats=(override.repeats if override and override.repeats else suite.repeats),
    )


def _expand_recordings(path: Path, suite: SuiteFile, lines: dict[tuple, int]) -> list[Path]:
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
        try:
            matches = sorted(Path(p) for p in expand(full))
        except GlobProblem as exc:
            problems.append(_diagnostic(path, line, "recordings", f"{pattern!r} {exc}", code="suite-recordings"))
            continue
        except re.error as exc:
            matches, error = [], str(exc)
        else:
            error = None
        matches = [m for m in matches if m.suffix == ".jsonl" and ".sub-" not in m.name]
        if not matches:
            why = f"is not a valid glob ({error})" if error else "matches no .jsonl transcript"
            problems.append(
                _diagnostic(
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
                    _diagnostic(
                        path,
                        line,
                        "recordings",
                        f"{pattern!r} matches {match}, which {phrase(kind)}; expected .jsonl transcript files",
                        code="suite-recordings",
                    )
                )
            elif (foreign := detect_foreign(match)) is not None:
                problems.append(
                    _diagnostic(
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
                _diagnostic(
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


def _key_lines(node: Any, prefix: tuple = ()) -> dict[tuple, int]:
    """Map each key path (e.g. ('compaction', 'mode')) to its 1-based line in the YAML file."""
    lines: dict[tuple, int] = {}
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


def _duplicate_keys(node: Any, prefix: tuple = ()) -> list[tuple[str, int, int]]:
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


def _validation_diagnostic(path: Path, lines: dict[tuple, int], err: dict[str, Any], prefix: str = "") -> Diagnostic:
    loc: tuple = ()
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


def find_suite_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in SUITE_SUFFIXES and q.is_file()))
        elif p.suffix in SUITE_SUFFIXES:
            out.append(p)
    return out
