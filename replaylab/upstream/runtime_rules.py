"""OpenClaw's runtime rules as frozen values, one per OpenClaw release: what replaylab applies
where OpenClaw's run loop (not its compaction) decides — how a tool result is cut and what notice
it gets, how large a result may be written, what the request-time guard does to one call's
window, which texts are identifiers, what the quality guard defaults to and whether it cancels,
which error texts are overflows / rate limits / billing / compaction failures, and the texts the
run gives up with.

Each value is built from its release's constants module (`openclaw_2026_4_12`,
`openclaw_2026_9_6`); the code that applies the rules (`compaction.truncation`, `.recovery`,
`.identifiers`, `.error_classes`) takes a `RuntimeRules` as a parameter, defaulting to
`OPENCLAW_2026_4_12` (replaylab's behaviour before rule sets were named). An agent profile names
the set it runs with (`AgentProfile.runtime_rules`); `runtime_rules_named` looks it up. Where
the releases differ in kind, not only in number, a field says which of the two algorithms applies
(the field's comment names the difference); tests/oracles/test_openclaw_conformance.py checks
each set against its release's own functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from replaylab.errors import ReplaylabError
from replaylab.upstream import openclaw_2026_4_12 as OC412
from replaylab.upstream import openclaw_2026_9_6 as OC96


@dataclass(frozen=True)
class TruncationRules:
    """`truncateToolResultText` / `truncateToolResultMessage` and the write-time cap."""

    #: the notice after a cut text, `{n}` the characters that are gone
    notice: str
    #: the recovery rewrite's notice (2026.4.12: the same as `notice`)
    recovery_notice: str
    min_keep_chars: int
    #: True: lengths are OpenClaw's CJK-weighted estimate over UTF-16 units, the 2,000-char floor
    #: is clamped to the budget and notice + kept text are re-fitted, so a cut text never exceeds
    #: maxChars (2026.9.6); False: plain lengths, the floor wins over the budget (2026.4.12)
    fits_max_chars: bool
    #: a result whose `content` is one string is cut too (2026.4.12); 2026.9.6 leaves it
    cuts_string_content: bool
    #: the write-time cap in chars by the window's size in tokens: ((from tokens, chars), ...)
    write_cap_by_context: tuple[tuple[int, int], ...]
    #: with a known window, the cap never exceeds this share of it (chars, 4 a token); None: no such bound
    write_cap_context_share: float | None
    #: how the overflow recovery's session rewrite trims the tool results together once each one
    #: over the per-result cap was cut: "newest-first" (2026.4.12): newest first, each cut at most
    #: to its floor; "branch-order" (2026.9.6's `buildRecoveryToolResultReplacementPlan` →
    #: `buildAggregateToolResultReplacements`): oldest first, a truncating pass (with the shorter
    #: `recovery_notice` when the budget is under one full notice per result) then a pass that
    #: replaces what is left of the text by the elision marker
    recovery_aggregate_order: Literal["newest-first", "branch-order"]
    #: the results' aggregate text budget is max(per-result cap x this multiplier,
    #: floor(window tokens x 4 x `recovery_aggregate_context_share`)); 2026.4.12: the per-result cap
    recovery_aggregate_cap_multiplier: int
    recovery_aggregate_context_share: float


@dataclass(frozen=True)
class GuardRules:
    """The request-time guard over one call's window (`installToolResultContextGuard`)."""

    #: a single tool result may weigh at most max(GUARD_MIN_CHARS, window tokens x this) chars
    single_result_chars_per_token: float
    min_chars: int
    image_chars: int
    #: a tool result's `details` count towards its weight (2026.4.12)
    counts_details: bool
    #: "budget": 2026.4.12's cut of the joined text to a raw budget (newline snap at 70 %);
    #: "truncate": 2026.9.6's `truncateToolResultText(text, max, {minKeepChars: 0, minimumRawWeight: 2})`
    #: per block, images kept while they fit (the others omitted with a notice)
    single_result_cut: Literal["budget", "truncate"]
    #: over this share of the window older results are replaced by `old_result_placeholder`
    #: (the releases before 2026.4.12's snapshot, kept by replaylab's 2026.4.12 set); None: never
    old_results_headroom_ratio: float | None
    old_result_placeholder: str | None
    #: over this share the guard raises `preemptive_overflow_text`; None: it never raises
    preemptive_overflow_ratio: float | None
    preemptive_overflow_text: str
    #: the release can precheck a call after a new tool result of the turn (2026.9.6's mid-turn
    #: precheck: builtin-openclaw-q1hiFm14.mjs `installToolResultContextGuard` →
    #: settled-turn-finalization-result-C8Oihyzx.mjs `shouldPreemptivelyCompactBeforePrompt`): the
    #: call fails with `preemptive_overflow_text` when the request's token pressure
    #: (`agents.openclaw_2026_9_6.pressure`: OpenClaw's own estimate times its safety margin)
    #: exceeds the window less the attempt's compaction reserve (at most a quarter of the window) —
    #: not when the estimate exceeds the window. It runs only when the agent's config enables it
    #: (`agents.defaults.compaction.midTurnPrecheck.enabled === true`; off by default), for
    #: replaylab a scenario's `context_window.mid_turn_precheck`
    mid_turn_precheck: bool = False


@dataclass(frozen=True)
class IdentifierRules:
    """`extractOpaqueIdentifiers` (the quality guard's and replaylab's IDENTIFIER_LOST)."""

    #: "4.12": the hex / digit run inside a token; "9.6": the whole token holding one, no path or
    #: host:port inside a word, decimal and scientific numbers consumed
    pattern: Literal["4.12", "9.6"]
    max_identifiers: int
    min_chars: int


@dataclass(frozen=True)
class QualityGuardRules:
    #: OpenClaw's safeguard audits the summary when its config says nothing
    enabled_by_default: bool
    default_max_retries: int
    max_retries: int
    default_recent_turns_preserve: int
    max_recent_turns_preserve: int
    #: a summary still failing after the retries cancels the compaction (2026.9.6); else it is kept
    cancels_on_failure: bool
    #: the reason OpenClaw gives when it cancels so (None: it never does)
    cancel_reason: str | None


@dataclass(frozen=True)
class GiveUpTexts:
    """What the run says when overflow recovery is exhausted."""

    overflow_user_text: str
    #: appended when the attempt may have had side effects ("" : never)
    side_effect_caution: str
    #: a preflight compaction that failed (None: the release has no preflight compaction)
    preflight_failed_user_text: str | None
    max_overflow_compaction_attempts: int
    max_timeout_compaction_attempts: int
    #: an overflow whose text is a provider's request-size ceiling (a per-minute token limit the
    #: request alone exceeds) is surfaced at once, neither compacted nor truncated: no smaller
    #: context brings one request under it (2026.9.6's `recoverEmbeddedRunOverflow` →
    #: `isProviderRequestSizeCeilingError`, embedded-agent-BaH7wGBd.mjs); 2026.4.12 reads no such
    #: text as an overflow
    surfaces_request_size_ceiling: bool = False


@dataclass(frozen=True)
class ManualCompactionRules:
    """What OpenClaw's `/compact` (replaylab's `manual` mode) does around the compaction it asks for."""

    #: the written compaction's boundary is moved to the leaf: its `firstKeptEntryId` becomes its own
    #: id, so the unsummarized tail after the cut is gone (2026.4.12's `hardenManualCompactionBoundary`,
    #: manual-compaction-boundary.ts); False: the tail its cut keeps stays (2026.9.6 has no such step)
    boundary_at_leaf: bool
    #: a cut that summarizes nothing is asked for once more keeping no recent tokens (2026.9.6's
    #: `preflightManualSessionCompaction`, resource-loader-v8341X6T.mjs)
    retries_keeping_nothing: bool


@dataclass(frozen=True)
class TurnStartRules:
    """When the agent compacts before a turn, and the reserve it and its compaction keep free of
    contextTokens (the window whose share the budget is)."""

    #: "floor": the suite's reserveTokensFloor, which the compaction keeps too when it exceeds pi's
    #: reserveTokens (2026.4.12's `ensurePiCompactionReserveTokens` raising pi's `shouldCompact`
    #: reserve); "window": the reserve follows contextTokens alone,
    #: min(`COMPACTION_RESERVE_TOKENS_FLOOR`, ⌊contextTokens × `MAX_COMPACTION_RESERVE_RATIO`⌋):
    #: the check's (2026.9.6's `resolveCompactionThreshold`, agent-runner-memory-DnzQbIgI.mjs, with
    #: memory-core's `buildMemoryFlushPlan`) and the compaction's (pi's default reserveTokens raised
    #: to that floor and capped at that share: `applyAgentCompactionSettingsFromConfig`,
    #: `resolveEffectiveCompactionReserveTokens`); reserveTokensFloor is a setting 2026.9.6 retired
    #: (`RETIRED_AGENT_TUNING_PATHS`)
    reserve: Literal["floor", "window"]
    #: the first turn start counts the turn's prompt too, as every later one does (2026.9.6's host
    #: check, `runSessionCompactionIfNeeded`, adds the prompt's estimate before each run); else the
    #: first point reads the window alone
    counts_prompt_first: bool
    #: the check fires when the count reaches the budget (2026.9.6's `shouldRunPreflightCompaction`:
    #: `>=`); else when it passes it (pi's `shouldCompact`: `>`)
    at_threshold: bool
    #: the prompt's text is estimated without its outer whitespace (2026.9.6's
    #: `estimatePromptTokensForMemoryFlush` trims it, `normalizeOptionalString`)
    trims_prompt: bool = False

    def trigger_reserve(self, context_tokens: int, reserve_tokens_floor: int) -> int:
        """What the check and the compaction keep free of `context_tokens`: the budget is the
        window less it."""
        if self.reserve == "floor":
            return reserve_tokens_floor
        return min(OC96.COMPACTION_RESERVE_TOKENS_FLOOR, math.floor(context_tokens * OC96.MAX_COMPACTION_RESERVE_RATIO))

    def fires(self, count: int, budget: int) -> bool:
        """Whether a count of the window (with the prompt, where counted) compacts at `budget`."""
        return count >= budget if self.at_threshold else count > budget


@dataclass(frozen=True)
class RuntimeRules:
    #: how profiles and the command line name it: `openclaw@<release>`
    name: str
    release: str
    #: where the rules were read
    source: str
    truncation: TruncationRules
    guard: GuardRules
    identifiers: IdentifierRules
    quality_guard: QualityGuardRules
    #: which classifier tables and logic apply (`compaction.error_classes`)
    classifiers: Literal["4.12", "9.6"]
    give_up: GiveUpTexts
    manual: ManualCompactionRules
    #: what the agent does with a finished reply (`stop`) whose usage exceeds the window (a silent
    #: overflow): "compact-and-retry" — pi's session drops it, compacts (`overflow`) and asks again,
    #: once in the attempt (`_checkCompaction` of pi 0.66.1, which 2026.4.12 runs, reads any
    #: overflow, a finished reply's too); "kept" — the reply stands: 2026.9.6's
    #: `AgentSession.checkCompaction` (resource-loader-v8341X6T.mjs) enters overflow recovery only
    #: for an `error` or `length` reply, and the run loop hands `recoverEmbeddedRunOverflow` only
    #: such a reply as its overflow candidate (embedded-agent-BaH7wGBd.mjs)
    silent_overflow: Literal["compact-and-retry", "kept"]
    turn_start: TurnStartRules

    def __str__(self) -> str:
        return self.name


OPENCLAW_2026_4_12 = RuntimeRules(
    name="openclaw@2026.4.12",
    release="2026.4.12",
    source="openclaw/openclaw 8f8492d1 (2026.4.12-beta.1), ../shared/reference/openclaw-internals.md",
    truncation=TruncationRules(
        notice="[... {n} " + OC412.CONTEXT_LIMIT_TRUNCATION_NOTICE + "]",
        recovery_notice="[... {n} " + OC412.CONTEXT_LIMIT_TRUNCATION_NOTICE + "]",
        min_keep_chars=OC412.MIN_KEEP_CHARS,
        fits_max_chars=False,
        cuts_string_content=True,
        write_cap_by_context=((0, OC412.DEFAULT_MAX_LIVE_TOOL_RESULT_CHARS),),
        write_cap_context_share=None,
        recovery_aggregate_order="newest-first",
        recovery_aggregate_cap_multiplier=1,
        recovery_aggregate_context_share=0.0,
    ),
    guard=GuardRules(
        single_result_chars_per_token=OC412.TOOL_RESULT_CHARS_PER_TOKEN_ESTIMATE
        * OC412.SINGLE_TOOL_RESULT_CONTEXT_SHARE,
        min_chars=OC412.GUARD_MIN_CHARS,
        image_chars=OC412.GUARD_IMAGE_CHARS,
        counts_details=True,
        single_result_cut="budget",
        old_results_headroom_ratio=OC412.CONTEXT_INPUT_HEADROOM_RATIO,
        old_result_placeholder=OC412.PREEMPTIVE_TOOL_RESULT_COMPACTION_PLACEHOLDER,
        preemptive_overflow_ratio=OC412.PREEMPTIVE_OVERFLOW_RATIO,
        preemptive_overflow_text=OC412.PREEMPTIVE_CONTEXT_OVERFLOW_MESSAGE,
    ),
    identifiers=IdentifierRules(
        pattern="4.12", max_identifiers=OC412.MAX_EXTRACTED_IDENTIFIERS, min_chars=OC412.MIN_IDENTIFIER_CHARS
    ),
    quality_guard=QualityGuardRules(
        # OpenClaw's `qualityGuard.enabled ?? false`; replaylab's own safeguard audits its summary
        # by default all the same (`SummarizerOptions.quality_guard`), a choice of its own
        enabled_by_default=False,
        default_max_retries=OC412.DEFAULT_QUALITY_GUARD_MAX_RETRIES,
        max_retries=OC412.MAX_QUALITY_GUARD_MAX_RETRIES,
        default_recent_turns_preserve=OC412.DEFAULT_RECENT_TURNS_PRESERVE,
        max_recent_turns_preserve=OC412.MAX_RECENT_TURNS_PRESERVE,
        cancels_on_failure=False,
        cancel_reason=None,
    ),
    classifiers="4.12",
    give_up=GiveUpTexts(
        overflow_user_text=OC412.OVERFLOW_USER_TEXT,
        side_effect_caution="",
        preflight_failed_user_text=None,
        max_overflow_compaction_attempts=OC412.MAX_OVERFLOW_COMPACTION_ATTEMPTS,
        max_timeout_compaction_attempts=OC412.MAX_TIMEOUT_COMPACTION_ATTEMPTS,
    ),
    manual=ManualCompactionRules(boundary_at_leaf=True, retries_keeping_nothing=False),
    silent_overflow="compact-and-retry",
    turn_start=TurnStartRules(reserve="floor", counts_prompt_first=False, at_threshold=False),
)

OPENCLAW_2026_9_6 = RuntimeRules(
    name="openclaw@2026.9.6",
    release="2026.9.6",
    source="npm openclaw@2026.9.6 and @openclaw/ai@2026.9.6 (dist/), run by replaylab/oracles/node/openclaw-2026.9.6",
    truncation=TruncationRules(
        notice=OC96.TRUNCATION_NOTICE,
        recovery_notice=OC96.RECOVERY_TRUNCATION_NOTICE,
        min_keep_chars=OC96.MIN_KEEP_CHARS,
        fits_max_chars=True,
        cuts_string_content=False,
        write_cap_by_context=OC96.LIVE_TOOL_RESULT_MAX_CHARS_BY_CONTEXT,
        write_cap_context_share=OC96.MAX_TOOL_RESULT_CONTEXT_SHARE,
        recovery_aggregate_order="branch-order",
        recovery_aggregate_cap_multiplier=OC96.PROMPT_TOOL_RESULT_AGGREGATE_CAP_MULTIPLIER,
        recovery_aggregate_context_share=OC96.AGGREGATE_TOOL_RESULT_CONTEXT_SHARE,
    ),
    guard=GuardRules(
        single_result_chars_per_token=1.0,  # resolveToolResultContextMaxChars: floor(ctx x 2 x 0.5)
        min_chars=OC96.GUARD_MIN_CHARS,
        image_chars=OC96.GUARD_IMAGE_CHARS,
        counts_details=False,
        single_result_cut="truncate",
        old_results_headroom_ratio=None,
        old_result_placeholder=None,
        preemptive_overflow_ratio=None,
        preemptive_overflow_text=OC96.MID_TURN_PRECHECK_ERROR_TEXT,
        mid_turn_precheck=True,
    ),
    identifiers=IdentifierRules(
        pattern="9.6", max_identifiers=OC96.MAX_EXTRACTED_IDENTIFIERS, min_chars=OC96.MIN_IDENTIFIER_CHARS
    ),
    quality_guard=QualityGuardRules(
        enabled_by_default=OC96.QUALITY_GUARD_ENABLED_BY_DEFAULT,
        default_max_retries=OC96.DEFAULT_QUALITY_GUARD_MAX_RETRIES,
        max_retries=OC96.MAX_QUALITY_GUARD_MAX_RETRIES,
        default_recent_turns_preserve=OC96.DEFAULT_RECENT_TURNS_PRESERVE,
        max_recent_turns_preserve=OC96.MAX_RECENT_TURNS_PRESERVE,
        cancels_on_failure=True,
        cancel_reason=OC96.QUALITY_CHECK_CANCEL_REASON,
    ),
    classifiers="9.6",
    give_up=GiveUpTexts(
        overflow_user_text=OC96.OVERFLOW_USER_TEXT,
        side_effect_caution=OC96.SIDE_EFFECT_CAUTION,
        preflight_failed_user_text=OC96.PREFLIGHT_COMPACTION_FAILED_USER_TEXT,
        max_overflow_compaction_attempts=OC96.MAX_OVERFLOW_COMPACTION_ATTEMPTS,
        max_timeout_compaction_attempts=OC96.MAX_TIMEOUT_COMPACTION_ATTEMPTS,
        surfaces_request_size_ceiling=True,
    ),
    manual=ManualCompactionRules(boundary_at_leaf=False, retries_keeping_nothing=True),
    silent_overflow="kept",
    turn_start=TurnStartRules(reserve="window", counts_prompt_first=True, at_threshold=True, trims_prompt=True),
)

RUNTIME_RULES: dict[str, RuntimeRules] = {r.name: r for r in (OPENCLAW_2026_4_12, OPENCLAW_2026_9_6)}


class UnknownRuntimeRules(ReplaylabError, ValueError):
    """A name no rule set has; its message lists the known ones."""


def runtime_rules_named(name: str) -> RuntimeRules:
    found = RUNTIME_RULES.get(name)
    if found is None:
        raise UnknownRuntimeRules(
            f"unknown OpenClaw runtime rules {name!r}; expected one of: {', '.join(sorted(RUNTIME_RULES))}"
        )
    return found
