"""`CompactParams` / `CompactResult`: the harness contract (seed `AgentHarnessCompactParams` /
`AgentHarnessCompactResult`), snake_case attributes with camelCase JSON aliases.

The JSON names of the seed contract are kept exactly (`sessionId, sessionFile, compactionMode,
contextTokens, reserveTokensFloor, modelProvider, replayCheck, forceCompact,
allowMutatingEventTruncate` → `success, originalTokenCount, compactedTokenCount, tokenSaved,
replaySafe, mutatedEventIds, compactedWindow, compactionEventId, summaryText, error`); everything
else is an optional extra documented on its field, so a seed client ignores it safely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from replaylab.defects import Defect
from replaylab.upstream.openclaw_2026_4_12 import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MAX_HISTORY_SHARE,
    DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR,
    DEFAULT_QUALITY_GUARD_MAX_RETRIES,
    DEFAULT_RECENT_TURNS_PRESERVE,
    MAX_COMPACTION_SUMMARY_CHARS,
    MAX_QUALITY_GUARD_MAX_RETRIES,
    MAX_RECENT_TURNS_PRESERVE,
)
from replaylab.upstream.pi_0_73_1 import PI_KEEP_RECENT_TOKENS, SUMMARIZE_RETRY_ATTEMPTS, SUMMARIZE_RETRY_MIN_DELAY_MS

Mode = Literal["safeguard", "auto", "aggressive", "manual"]
#: why the agent compacts (`CompactParams.trigger`): pi's `compaction_start` reasons
#: (pi-coding-agent's `AgentSession.compact` / `_runAutoCompaction`: `manual` — asked for,
#: `threshold` — the window crossed the budget, `overflow` — the model refused the request or its
#: usage exceeded the window) and the one OpenClaw's run loop adds, `timeout_recovery` (a timed-out
#: attempt whose prompt filled most of the window; OpenClaw calls pi's `threshold` `budget`)
Trigger = Literal["manual", "threshold", "overflow", "timeout_recovery"]
#: why a compaction did not happen (`CompactResult.failure`); `CompactResult.error` says it in words
CompactFailure = Literal[
    "nothing_to_compact",  # no entries, or none after the previous compaction's boundary
    "already_compacted",  # the leaf is a compaction and forceCompact is off
    "no_budget",  # the reserve leaves no room for the window
    "protected_too_large",  # safeguard's protected entries and the smallest summary exceed the budget
    "nothing_to_gain",  # the compacted window would hold at least as many tokens as the current one
    "agent_refuses",  # the agent's own prepareCompaction returns nothing here (OpenClaw: nothing to summarize)
    "cancelled",  # the compactor under test declined (OpenClaw's safeguard: its quality guard)
]

#: replaylab's own choice (no upstream value): the tail `aggressive` keeps, in tokens. Small on
#: purpose — aggressive is the negative control that must lose mutating events.
AGGRESSIVE_KEEP_RECENT_TOKENS = 2_000


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, extra="forbid")


class SummarizerOptions(_Camel):
    """How the summary is produced. Defaults: extractive unless `CompactParams.model_provider`."""

    quality_guard: bool = Field(True, description="audit sections / identifiers / latest ask, retry with feedback")
    max_retries: int = Field(
        DEFAULT_QUALITY_GUARD_MAX_RETRIES,
        ge=0,
        le=MAX_QUALITY_GUARD_MAX_RETRIES,
        description="quality-guard retries (total attempts = maxRetries + 1)",
    )
    call_retries: int = Field(
        SUMMARIZE_RETRY_ATTEMPTS, ge=1, le=10, description="attempts per summarizer call on errors (retryAsync)"
    )
    retry_delay_s: float = Field(
        SUMMARIZE_RETRY_MIN_DELAY_MS / 1000, ge=0, description="first back-off delay between call retries"
    )
    mock_responses: list[str] | None = Field(
        None,
        description="litellm `mock_response` per call, in order (offline tests); a value such as "
        "'litellm.InternalServerError' makes that call raise",
    )
    api_base: str | None = None
    timeout_s: float = Field(120.0, gt=0)
    max_summary_chars: int = Field(MAX_COMPACTION_SUMMARY_CHARS, ge=200)
    custom_instructions: str | None = None
    identifier_instructions: str | None = Field(None, description="used when identifierPolicy is 'custom'")


class CompactParams(_Camel):
    """Input of `compact()`. `model_dump(by_alias=True)` is the seed JSON."""

    session_id: str | None = None
    session_file: str
    compaction_mode: Mode = "safeguard"
    context_tokens: int = Field(DEFAULT_CONTEXT_TOKENS, gt=0)
    reserve_tokens_floor: int = Field(DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR, ge=0)
    model_provider: str | None = Field(
        None, description="litellm model (e.g. 'openai/gpt-4.1-mini'); None = extractive"
    )
    replay_check: bool = True
    force_compact: bool = Field(False, description="compact even when the leaf already is a compaction")
    allow_mutating_event_truncate: bool = False
    max_history_share: float = Field(DEFAULT_MAX_HISTORY_SHARE, ge=0.1, le=0.9)
    identifier_policy: Literal["strict", "off", "custom"] = "strict"
    recent_turns_preserve: int = Field(DEFAULT_RECENT_TURNS_PRESERVE, ge=0, le=MAX_RECENT_TURNS_PRESERVE)
    keep_recent_tokens: int | None = Field(
        None, gt=0, description=f"pi keepRecentTokens (default {PI_KEEP_RECENT_TOKENS}, clamped to the budget)"
    )
    # --- replaylab extras ---
    reserve_tokens: int | None = Field(None, ge=0, description="pi reserveTokens; effective reserve = max(this, floor)")
    working_copy: str | None = Field(
        None, description="where to write the working copy (must not exist); default: a temp file"
    )
    leaf_id: str | None = Field(None, description="compact the path ending at this entry (default: the file's leaf)")
    tool_classes: dict[str, str] | str | None = Field(None, description="{tool: class} or a tool_classes.json path")
    child_sessions_dir: str | None = Field(
        None,
        description="where sub-agent transcripts named by "
        "details.replaylab.childSession live (default: next to sessionFile; "
        "pass the recording's folder when sessionFile is a working copy)",
    )
    boundary_rule: Literal["0.66.1", "0.58.3"] = Field(
        "0.66.1", description="pi version of the chained-compaction boundary"
    )
    trigger: Trigger = Field(
        "manual",
        description="why the agent compacts: manual (asked for: a fixed compaction point), threshold (the "
        "window crossed the budget), overflow (the recovery chain after a context overflow), "
        "timeout_recovery (the chain after a timed-out attempt)",
    )
    summarizer: SummarizerOptions = Field(default_factory=SummarizerOptions)
    summarizer_failures: int = Field(0, ge=0, description="test hook: the first N summarizer calls raise")


class QualityGuardResult(_Camel):
    ok: bool = True
    attempts: int = 0
    reasons: list[str] = Field(default_factory=list)
    enabled: bool = True


class CutPointInfo(_Camel):
    first_kept_entry_id: str | None = None
    first_kept_index: int | None = None
    #: the entry pi's cut keeps from (the first of the tail; a compaction that keeps nothing itself
    #: restates the tail from it on), None when the tail is empty
    tail_entry_id: str | None = None
    boundary_start_entry_id: str | None = None
    turn_start_entry_id: str | None = None
    is_split_turn: bool = False
    keep_recent_tokens: int = 0
    boundary_rule: str = "0.66.1"


class CompactResult(_Camel):
    """Output of `compact()`. `model_dump(by_alias=True)` is the seed JSON plus extras."""

    success: bool
    original_token_count: int = 0
    compacted_token_count: int = 0
    token_saved: int = 0
    replay_safe: bool = True
    mutated_event_ids: list[str] = Field(default_factory=list)
    compacted_window: list[dict[str, Any]] = Field(default_factory=list)
    compaction_event_id: str | None = None
    summary_text: str = ""
    error: str | None = None
    # --- replaylab extras ---
    failure: CompactFailure | None = Field(None, description="why the compaction did not happen (None when it did)")
    mode: Mode = "safeguard"
    first_kept_entry_id: str | None = None
    leaf_id: str | None = Field(
        None,
        description="the working copy's leaf right after the compaction: its entry, or the last entry it "
        "restated after itself (the window is the context rebuilt there)",
    )
    protected_entry_ids: list[str] = Field(
        default_factory=list,
        description="the recorded entries safeguard restated verbatim after its summary (on a failure: every "
        "entry it would have to keep)",
    )
    working_copy: str | None = None
    session_file: str | None = None
    recording_sha256: str | None = None
    findings: list[Defect] = Field(default_factory=list)
    quality_guard: QualityGuardResult = Field(default_factory=QualityGuardResult)
    summarizer: str = "extractive"
    summary_attempts: int = 0
    cut_point: CutPointInfo = Field(default_factory=CutPointInfo)
    tokens_before: int = Field(0, description="pi tokensBefore: last usable usage + estimates after it")
    budget_tokens: int = 0
    fits_budget: bool = True
    protected_over_budget: bool = Field(
        False,
        description="(a `protected_too_large` failure) the entries safeguard must keep verbatim exceed the "
        "budget on their own, none of their results truncated: a compaction of any window that holds them "
        "all fails the same way",
    )
    needed_budget: int = Field(
        0,
        description="(a `protected_too_large` failure) the tokens the protected entries and the smallest "
        "summary need: a budget (contextTokens − reserve) above it lets safeguard compact there",
    )
    diag_id: str | None = None
    notes: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    """A compaction that does not happen: its kind and the words `CompactResult.error` gets."""

    kind: CompactFailure
    error: str
    #: `CompactResult.protected_over_budget`
    protected_over_budget: bool = False
    #: `CompactResult.needed_budget`
    needed_budget: int = 0
