"""An item's plan: its scenario and the command line's overrides, resolved once into one value.

Every setting an item's run reads — compaction mode, model, LLM cassette record mode, agent
profile, the budget as given, the compactor under test and what the report calls it — is "the
command line's, else the suite's". That choice is made here, once per item, and everything
downstream reads the plan's fields instead of deciding again from a `(scenario, options)` pair.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from replaylab.cassette import REPLAY_BASE_URL
from replaylab.checks.agent_window import VerifyWithPi
from replaylab.compactors.spec import CompactorSpec, OpenClawCompactor, PiCompactor
from replaylab.suite import Scenario
from replaylab.upstream.profiles import AgentProfile, profile_named

if TYPE_CHECKING:
    from replaylab.defects import Defect
    from replaylab.qa.progress import Progress
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.writer import FileState


@dataclass
class RunOptions:
    """Command-line overrides of the suite settings (and the in-process hooks of selftest)."""

    model: str | None = None
    mode: str | None = None
    #: the LLM cassette record mode over every suite's (None: the suite's, else none)
    record_mode: str | None = None
    strict: bool = False
    work_dir: Path | None = None
    #: where pack tools point during replay. Replay runs no tool's code (live read tools only inside
    #: a network namespace), so this only matters as a trap: point it at a live service
    #: (REPLAYLAB_TOOL_BASE_URL) and its request counter proves that nothing escaped. Default: the
    #: loopback discard port, where nothing listens.
    tool_base_url: str = field(default_factory=lambda: os.environ.get("REPLAYLAB_TOOL_BASE_URL", REPLAY_BASE_URL))
    #: the compactor under test, `compact(params, *, classifier, writer) -> CompactResult` (default
    #: `replaylab.compaction.compact`; `replaylab selftest` passes seeded mutants). Whichever it is,
    #: the pipeline re-checks its output itself (`replaylab.compactors.recheck`), never trusting it.
    compactor: Callable[..., Any] | None = None
    #: the compactor under test as the user named it (`compactors.spec`: the command line's or a
    #: pytest hook's), over the suite's `compactor:`; `compactor` above wins over both
    compactor_spec: CompactorSpec | None = None
    #: classifier → classifier, applied to the suite's classifier (selftest: a write tool declared read)
    classifier_override: Callable[[ToolClassifier], ToolClassifier] | None = None
    #: compare every compacted window with the context the item's agent itself builds (`checks.agent_window`)
    verify_with_pi: VerifyWithPi = "auto"
    #: the agent profile over every suite's (`--replaylab-agent`; None: the suite's, else each session's own)
    agent: str | None = None
    #: the budget over every suite's (None: the suite's): a number or "auto" (`qa.auto_budget`)
    context_tokens: int | Literal["auto"] | None = None
    reserve_tokens_floor: int | None = None
    keep_recent_tokens: int | None = None
    #: where a long run reports its phases and turns (`qa.progress`); None: nowhere
    progress: Progress | None = None
    #: which repeat of an item this run is (0: the first); a real model's repeats each get their
    #: own LLM cassettes, so that replayed repeats keep the variance they were recorded with
    repeat: int = 0
    #: the run's check of every session file after an item (`checks.run_files.RunFiles.after_item`):
    #: what another item's code changed is found too, not only this item's own files
    after_item: Callable[[Path], list[Defect]] | None = None
    #: the state the run last hashed a session file in (`checks.run_files.RunFiles.state_of`): an
    #: item takes its files' state from there while their status vouches for it, not hashing again
    known_states: Callable[[Path], FileState | None] | None = None
    #: wraps the compactor the item compacts with, whichever it is, to watch it (the real-data
    #: sweep's figures): the wrapper must change nothing it returns
    observe_compactor: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None


@dataclass(frozen=True)
class BudgetRequest:
    """The budget as given, before `auto` is chosen from the recording: each setting the command
    line's, else the suite's (None: the suite leaves it to its default or to `auto`)."""

    context_tokens: int | Literal["auto"]
    reserve_tokens_floor: int | None
    keep_recent_tokens: int | None
    #: "command line" when any of the three came from it, else "suite"
    source: Literal["command line", "suite"]


@dataclass(frozen=True)
class CompactorChoice:
    """The compactor under test: an in-process callable (selftest's mutants), a named spec (a
    Python callable, a command, the bundled pi), or neither (replaylab's own)."""

    given: Callable[..., Any] | None
    spec: CompactorSpec | None
    #: what every report calls it
    label: str

    def unavailable(self, environ: Mapping[str, str] | None = None, profile: AgentProfile | None = None) -> str | None:
        """Why a bundled compactor (pi's, OpenClaw's) cannot run on this machine (its node modules
        are not installed; for pi: those of the pi an item of `profile` compacts with), so that its
        items are skipped with the install command — except under `CI=true`, where the item runs
        and its missing compactor is the error it should be."""
        environ = os.environ if environ is None else environ
        if environ.get("CI") == "true":
            return None
        if isinstance(self.spec, PiCompactor):
            from replaylab.oracles.agent import oracle_unavailable
            from replaylab.oracles.pi import compactor_profile

            reason = oracle_unavailable(compactor_profile(profile))
        elif isinstance(self.spec, OpenClawCompactor):
            from replaylab.oracles.openclaw import oracle_unavailable as openclaw_unavailable

            reason = openclaw_unavailable()
        else:
            return None
        return None if reason is None else f"the bundled {self.spec.name()} compactor cannot run here: {reason}"


@dataclass(frozen=True)
class ItemPlan:
    """One item's settings, each resolved once: read its fields, never the scenario's own
    settings that the command line can override."""

    scenario: Scenario
    recording: Path
    #: the compaction mode (safeguard | auto | aggressive | manual)
    mode: str
    #: the model both runs use (`replay`, `scripted`, `litellm/...`)
    model_spec: str
    #: the LLM cassette record mode
    record_mode: str
    #: the agent whose rules apply (`upstream.profiles`)
    profile: AgentProfile
    budget: BudgetRequest
    compactor: CompactorChoice
    strict: bool
    verify_with_pi: VerifyWithPi
    work_dir: Path | None
    tool_base_url: str
    classifier_override: Callable[[ToolClassifier], ToolClassifier] | None
    progress: Progress | None
    repeat: int
    after_item: Callable[[Path], list[Defect]] | None = None
    known_states: Callable[[Path], FileState | None] | None = None
    observe_compactor: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None

    @property
    def suite_folder(self) -> Path:
        return Path(self.scenario.suite_file).parent


def plan_item(scenario: Scenario, recording: Path, options: RunOptions) -> ItemPlan:
    """The item's plan: the command line's setting where it gives one, else the suite's."""
    return ItemPlan(
        scenario=scenario,
        recording=Path(recording),
        mode=options.mode or scenario.compaction.mode,
        model_spec=(options.model or scenario.model or "replay").strip(),
        record_mode=options.record_mode or scenario.record_mode or "none",
        profile=item_profile(scenario, Path(recording), options),
        budget=_budget_request(scenario, options),
        compactor=_compactor_choice(scenario, options),
        strict=options.strict,
        verify_with_pi=options.verify_with_pi,
        work_dir=options.work_dir,
        tool_base_url=options.tool_base_url,
        classifier_override=options.classifier_override,
        progress=options.progress,
        repeat=options.repeat,
        after_item=options.after_item,
        known_states=options.known_states,
        observe_compactor=options.observe_compactor,
    )


def item_profile(scenario: Scenario, recording: Path, options: RunOptions) -> AgentProfile:
    """The command line's agent, else the suite's (or its scenario's), else the one that claims
    the recording's session (`upstream.profiles`: OpenClaw's sessions are OpenClaw's)."""
    named = options.agent or scenario.agent
    if named:
        return profile_named(named)
    from replaylab.agents import profile_of_recording

    return profile_of_recording(recording)


def _budget_request(scenario: Scenario, options: RunOptions) -> BudgetRequest:
    suite = scenario.compaction

    def given(option: Any, setting: Any) -> Any:
        return setting if option is None else option

    options_given = (options.context_tokens, options.reserve_tokens_floor, options.keep_recent_tokens)
    return BudgetRequest(
        context_tokens=given(options.context_tokens, suite.context_tokens),
        reserve_tokens_floor=given(options.reserve_tokens_floor, suite.reserve_tokens_floor),
        keep_recent_tokens=given(options.keep_recent_tokens, suite.keep_recent_tokens),
        source="command line" if any(value is not None for value in options_given) else "suite",
    )


def _compactor_choice(scenario: Scenario, options: RunOptions) -> CompactorChoice:
    given = options.compactor
    if given is not None:  # selftest's in-process mutant replaces whatever is named
        function = getattr(given, "func", given)  # a functools.partial names what it wraps
        qualname = getattr(function, "__qualname__", type(function).__name__)
        return CompactorChoice(given, None, f"python:{getattr(function, '__module__', '?')}:{qualname}")
    spec = options.compactor_spec or scenario.compactor
    return CompactorChoice(None, spec, spec.name() if spec is not None else "replaylab")
