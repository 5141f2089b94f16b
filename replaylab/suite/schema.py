"""Suite files: YAML in `suites/`, validated by pydantic, errors naming file, line and key.

A suite says which recordings to replay, with which tool pack and model, how to compact, where
to compact, how strictly to compare, and what to expect. Each (recording × scenario) becomes one
pytest item. A negative control lists the defects replaylab must find; missing one fails it.

    name: helpdesk-safeguard
    recordings: ../recordings/helpdesk/*.jsonl     # relative to the suite file
    tools: examples.helpdesk                        # or tool_classes: path/to/tool_classes.json
    classification: {read_only_commands: [git status]}   # optional: docs/classification.md
    live_read_tools: false                         # true: read tools' own code runs, network-isolated
    model: replay                                  # or litellm/<provider>/<model>
    #   model_settings: {api_base: http://127.0.0.1:8080/v1, api_key_env: OPENAI_API_KEY, max_tokens: 256}
    #   llm_cassettes: cassettes/                  # where its LLM cassettes live (default: beside each recording)
    #   record_mode: none                          # none | once | new_episodes | all (the option wins)
    compaction: {mode: safeguard, contextTokens: 6000, reserveTokensFloor: 1000}   # contextTokens: auto (default)
    #   compactor: {command: [node, my-compactor.mjs], timeout_s: 60}   # or {python: pkg.mod:fn}; default replaylab's
    #   compactor: pi                                  # or a bundled one: pi's own compaction (or openclaw)
    compact_at: auto                               # auto | turn:N | every:N
    #   context_window: {tokens: 9000, overflow: error, provider: anthropic}   # the agent's model's window
    #   agent: openclaw@2026.9.6                   # whose rules apply; default per session (upstream.profiles)
    match: {tools: strict, answer: normalized}
    #   args: {edit: {grounding: {newText: off}}}   # per tool / argument: off | values (default) | strict
    expect: {defects: []}
    scenarios:                                     # optional variants of the above
      - {name: tight, compaction: {contextTokens: 4000}}
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from replaylab.compactors.spec import CompactorSetting, NamedSpec
from replaylab.defects import Code
from replaylab.local_model import pins as LM
from replaylab.safety.overrides import ClassificationOverrides
from replaylab.upstream import openclaw_2026_4_12 as OC
from replaylab.upstream.provider_overflow import DEFAULT_PROVIDER, PROVIDER_OVERFLOW_TEXTS
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6
from replaylab.values import GROUNDING_LEVELS, GroundingLevel
from replaylab.yaml_shape import Limits

if TYPE_CHECKING:
    from replaylab.replay.agent.candidate import GroundingRules

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
        description="unset: scaled with an auto contextTokens, else OpenClaw's floor within a quarter of the window",
    )
    keep_recent_tokens: int | None = Field(None, alias="keepRecentTokens", gt=0, le=MAX_TOKENS)
    max_history_share: float = Field(OC.DEFAULT_MAX_HISTORY_SHARE, alias="maxHistoryShare", ge=0.1, le=0.9)
    identifier_policy: Literal["strict", "off", "custom"] = Field("strict", alias="identifierPolicy")
    allow_mutating_event_truncate: bool = Field(False, alias="allowMutatingEventTruncate")
    recent_turns_preserve: int = Field(
        OC.DEFAULT_RECENT_TURNS_PRESERVE, alias="recentTurnsPreserve", ge=0, le=OC.MAX_RECENT_TURNS_PRESERVE
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
        if self.context_tokens != "auto" and self.reserve(self.context_tokens) >= self.context_tokens:
            raise ValueError(
                f"contextTokens {self.context_tokens} leaves no budget after reserveTokensFloor "
                f"{self.reserve(self.context_tokens)}; expected contextTokens above it — lower "
                "reserveTokensFloor, or leave contextTokens to auto"
            )
        return self

    def reserve(self, context_tokens: int) -> int:
        """The reserve of a set `context_tokens` (the suite's, or the command line's over it): the
        suite's, else OpenClaw's floor within a quarter of the window, as OpenClaw 2026.9.6 caps
        it (`resolveEffectiveCompactionReserveTokens`): a small window keeps a budget."""
        if self.reserve_tokens_floor is not None:
            return self.reserve_tokens_floor
        return OPENCLAW_2026_9_6.turn_start.trigger_reserve(context_tokens, 0)


class ContextWindow(Strict):
    """The agent's model's context window in the compacted run: a request over `tokens` (by the
    agent profile's token estimate) is answered as the provider would — its overflow error
    (`error`), or a reply whose usage states the oversize prompt (`usage`, a silent overflow), or
    by the model itself (`model`: a real model served with this window, the local model's server
    when recording, whose own refusal its LLM cassette keeps) — and the run goes through the
    profile's recovery chain (replay.overflow)."""

    tokens: int = Field(gt=0, le=MAX_TOKENS)
    overflow: Literal["error", "usage", "model"] = "error"
    provider: str = Field(DEFAULT_PROVIDER, description="whose overflow error answers (upstream.provider_overflow)")
    faults: list[
        Literal[
            "compact_past_limit",
            "compact_twice",
            "skip_truncation",
            "cut_mutating",
            "mid_compaction_snapshot",
            "retry_silent_overflow",
        ]
    ] = Field(
        default_factory=list,
        description="test hook: a broken recovery chain for negative controls — one compaction attempt "
        "past the release's limit, a compaction after pi compacted in the attempt, no truncation, "
        "the guard and truncation cutting mutating results under safeguard, (with "
        "compaction_timeout) going on from a snapshot taken mid-compaction, or pi's compact-and-retry "
        "of a finished reply over the window where the release keeps it",
    )
    mid_turn_precheck: bool = Field(
        False,
        description="the agent's config enables OpenClaw 2026.9.6's mid-turn precheck "
        "(agents.defaults.compaction.midTurnPrecheck.enabled; off by default): a call after the turn's "
        "tool results fails before it is sent when OpenClaw's token pressure exceeds the window less "
        "its compaction reserve",
    )
    compaction_timeout: bool = Field(
        False,
        description="test hook: a compaction in the attempt (pi's, on a silent overflow; under OpenClaw "
        "2026.9.6, which keeps such a reply, only with the retry_silent_overflow fault) times out — the "
        "attempt ends timed out during compaction and the run goes on from the pre-compaction snapshot",
    )

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str) -> str:
        if value not in PROVIDER_OVERFLOW_TEXTS:
            known = ", ".join(sorted(PROVIDER_OVERFLOW_TEXTS))
            raise ValueError(f"unknown provider {value!r}; expected one of: {known}")
        return value


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
        from replaylab.replay.agent.candidate import GroundingRules

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
LOCAL_MODEL_SPEC = f"litellm/openai/{LM.LOCAL_MODEL_NAME}"


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


def _agent_name(value: str | None) -> str | None:
    """An agent profile's name (`openclaw@2026.9.6`): one the registry knows."""
    from replaylab.upstream.profiles import UnknownProfile, profile_named

    if value is None:
        return None
    try:
        return profile_named(value).name
    except UnknownProfile as exc:
        raise ValueError(str(exc)) from None


class ScenarioOverride(Strict):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    agent: str | None = Field(None, max_length=MAX_NAME_CHARS, description="the agent profile of this scenario")
    compaction: dict[str, Any] = Field(default_factory=dict)
    compact_at: str | None = None
    match: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] = Field(default_factory=dict)
    model: str | None = Field(None, max_length=MAX_NAME_CHARS)
    repeats: int | None = Field(None, ge=1, le=MAX_REPEATS)
    compactor: CompactorSetting | None = None
    context_window: ContextWindow | None = None

    @field_validator("agent")
    @classmethod
    def _agent(cls, value: str | None) -> str | None:
        return _agent_name(value)


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
    context_window: ContextWindow | None = Field(
        None, description="the agent's model's context window in the compacted run; unset: no limit"
    )
    agent: str | None = Field(
        None,
        max_length=MAX_NAME_CHARS,
        description="the agent whose rules apply (`openclaw@2026.9.6`, `pi@0.73.1`); unset: each session's "
        "own (OpenClaw's sessions openclaw@2026.9.6, others pi@0.73.1); --replaylab-agent wins",
    )
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

    @field_validator("agent")
    @classmethod
    def _agent(cls, value: str | None) -> str | None:
        return _agent_name(value)


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
    #: the agent's model's context window in the compacted run (None: no limit)
    context_window: ContextWindow | None = None
    #: the agent profile the suite (or scenario) names; None: each recording's own
    agent: str | None = None
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
