"""The summary of one plan: what the plan alone fixes of it, then the summarizer calls (the pruned
history's, the split turn's prefix, the quality-guarded body), the sections after the body and the
cap.

safeguard and manual write OpenClaw's safeguard summary (history-share pruning, recent turns
preserved verbatim, tool failures, bounded file lists, the split-turn section after the body);
auto and aggressive write pi's (the split-turn section merged into the body, whole file lists).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from replaylab.compaction.job import Job
from replaylab.compaction.plan import Plan
from replaylab.compaction.safeguard import prune_history_for_context_share
from replaylab.compaction.summary.cap import cap_summary, cap_summary_preserving_suffix
from replaylab.compaction.summary.extractive import ExtractiveSummarizer
from replaylab.compaction.summary.fallback import (
    FallbackSummarizer,
    build_structured_fallback_summary,
)
from replaylab.compaction.summary.file_ops import (
    FileOps,
    collect_file_ops,
    format_file_operations,
)
from replaylab.compaction.summary.guard import (
    FailureInjector,
    GuardSettings,
    SummaryOutcome,
    call_with_retries,
    summarize_with_guard,
)
from replaylab.compaction.summary.llm import LiteLLMSummarizer
from replaylab.compaction.summary.messages import identifier_seed, latest_user_ask
from replaylab.compaction.summary.real_conversation import compaction_has_real_conversation
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.compaction.summary.sections import merge_split_turn, split_turn_section
from replaylab.compaction.summary.suffix import (
    assemble_suffix,
    collect_tool_failures,
    format_preserved_turns_section,
    format_tool_failures_section,
    split_preserved_recent_turns,
)
from replaylab.compaction.summary.summarizer import Summarizer
from replaylab.transcript.javascript import js_truthy
from replaylab.transcript.pairing import message_calls
from replaylab.upstream.openclaw_2026_4_12 import SAFETY_MARGIN


@dataclass
class SummaryInputs:
    """The summary's parts that the plan alone fixes (`summary_inputs`)."""

    span: list[Any]
    previous: str | None
    read_files: list[str]
    modified_files: list[str]
    real: bool  # a real conversation to summarize, as the agent decides: False ⇒ the fixed fallback, no summarizer call
    messages: list[Any]  # the summarizer's input: after history pruning, without the preserved turns
    pruned_dropped: list[Any] | None = None  # history pruned away (summarized on its own first), if any
    preserved: list[Any] = field(default_factory=list)
    preserved_section: str = ""
    failures_section: str = ""
    #: call ids of the protected messages restated after the summary: a short outcome line each
    kept_calls: frozenset[str] = frozenset()
    #: the split turn's prefix summary, when a deterministic summarizer wrote it ahead (the same
    #: text whether its call succeeds or `summarize_plan` falls back to it)
    prefix_text: str | None = None
    #: (split-turn section, the summary's suffix around it) as `summary_suffix` last made it
    suffix: tuple[str, str] | None = None


@dataclass
class PlanSummary:
    """The summary text as the entry holds it, how it came about, and the entry's file lists (None:
    the agent's entry holds none, `FileOpsRules.lists_with_fallback`)."""

    text: str
    outcome: SummaryOutcome
    read_files: list[str] | None
    modified_files: list[str] | None


@dataclass(frozen=True)
class KnownAnswer(Summarizer):
    """A summarizer whose answer is already written (`SummaryInputs.prefix_text`): the call still
    goes through `call_with_retries`, so injected failures and call counts are what they would be."""

    text: str

    name = "known answer"
    deterministic = True
    calls_model = False

    def summarize(self, request: SummaryRequest) -> str:
        return self.text


def summarizer_for(job: Job) -> Summarizer:
    """The litellm summarizer when a model is configured, else the extractive one. A new one for
    each plan: a model's mock answers are handed out from the first again."""
    options = job.params.summarizer
    if job.params.model_provider:
        return LiteLLMSummarizer(
            job.params.model_provider,
            api_base=options.api_base,
            timeout_s=options.timeout_s,
            mock_responses=options.mock_responses,
        )
    return ExtractiveSummarizer(job.scans, identifier_text_of=job.identifier_text)


def summary_request(job: Job, inputs: SummaryInputs, messages: list[Any], **extra: Any) -> SummaryRequest:
    """A summarizer request of this compaction (the summary's, the pruned history's, the prefix's)."""
    params, options = job.params, job.params.summarizer
    # the request's fields in common; `extra` sets the others and overrides these
    base: dict[str, Any] = dict(
        identifier_policy=params.identifier_policy,
        include_tool_results=job.mode != "aggressive",
        kept_call_ids=inputs.kept_calls,
        budget_chars=job.summary_chars,
        custom_instructions=options.custom_instructions,
        identifier_instructions=options.identifier_instructions,
        max_tokens=job.summary_max_tokens,
    )
    base.update(extra)
    return SummaryRequest(messages=messages, **base)


def prefix_request(job: Job, plan: Plan, inputs: SummaryInputs) -> SummaryRequest:
    """The request for a split turn's prefix summary."""
    return summary_request(job, inputs, plan.turn_prefix, turn_prefix=True, max_tokens=job.turn_prefix_max_tokens)


def guard_asks(plan: Plan, inputs: SummaryInputs) -> tuple[str | None, list[str]]:
    """(the quality guard's latest ask — of the summarized messages and a split turn's prefix —,
    the asks the summary must carry besides the messages' own latest one)."""
    guard_ask = latest_user_ask(inputs.messages + plan.turn_prefix)
    return guard_ask, [guard_ask] if guard_ask and guard_ask != latest_user_ask(inputs.messages) else []


def _summarizes(job: Job, span: list[Any], plan: Plan) -> bool:
    """Whether the summary is summarized rather than the fixed fallback. An agent whose rule is its
    safeguard extension's (`AgentProfile.real_conversation`) registers that extension in safeguard
    mode only: in its default mode agent-core's plain `compact` summarizes whatever the span holds."""
    rules = job.profile.real_conversation
    if rules is not None and not job.safeguard_like:
        return True
    return compaction_has_real_conversation(rules, span, plan.window)


def summary_inputs(job: Job, plan: Plan, summarizer: Summarizer, tokens_before: int) -> SummaryInputs:
    """Everything of the summary that the plan alone fixes, before any summarizer call: file
    lists, the history left after pruning, the preserved turns and tool failures sections.
    `summarize_plan` builds on it; `nothing_to_gain.summary_floor` bounds the summary's size with it."""
    params = job.params
    span = plan.messages + plan.turn_prefix
    previous = plan.previous.summary if plan.previous is not None else None

    ops, rules = FileOps(), job.profile.file_ops
    # an agent whose safeguard reads the preparation's lists merges the previous ones in every mode
    merges = not job.safeguard_like or (rules is not None and rules.previous_lists_whole)
    if merges and plan.previous is not None and not js_truthy(plan.previous.from_hook):
        ops.merge_previous(plan.previous.details, rules)
    collect_file_ops(span, ops, nested_calls=job.profile.file_ops_from_nested_calls, rules=rules)
    read_files, modified_files = ops.lists(job.profile.file_lists_order)
    inputs = SummaryInputs(
        span=span,
        previous=previous,
        read_files=read_files,
        modified_files=modified_files,
        real=_summarizes(job, span, plan),
        messages=plan.messages,
    )
    if not inputs.real:
        return inputs  # the fixed fallback: no summarizer call
    protected_set = set(plan.protection.entry_ids)
    inputs.kept_calls = frozenset(
        c.id for e in plan.dropped if e.id in protected_set for c in message_calls(getattr(e, "message", None))
    )
    if plan.cut.is_split_turn and plan.turn_prefix and summarizer.deterministic:
        inputs.prefix_text = summarizer.summarize(prefix_request(job, plan, inputs))
    if not job.safeguard_like:
        return inputs
    summarizable_tokens = sum(map(job.tokens, span))
    new_content = max(0, tokens_before - summarizable_tokens)
    messages = plan.messages
    if new_content > math.floor(params.context_tokens * params.max_history_share * SAFETY_MARGIN):
        pruned = prune_history_for_context_share(
            messages, params.context_tokens, params.max_history_share, tokens_of=job.tokens
        )
        if pruned.dropped_chunks > 0:
            messages, inputs.pruned_dropped = pruned.kept, pruned.dropped
    inputs.messages, preserved = split_preserved_recent_turns(messages, params.recent_turns_preserve)
    inputs.preserved = preserved
    inputs.preserved_section = format_preserved_turns_section(preserved, max_chars=job.summary_chars // 3)
    inputs.failures_section = format_tool_failures_section(collect_tool_failures(span))
    return inputs


def summary_suffix(job: Job, inputs: SummaryInputs, split_section: str) -> str:
    """What follows the summary's body: safeguard, manual — the split-turn, preserved-turns,
    tool-failures and file sections; auto, aggressive — the file lists (unbounded, as pi; an agent
    with its own `file_ops` rules bounds them in every mode, as its `formatFileOperations` does).
    Made once per split section: the floor and `summarize_plan` ask for the same one."""
    if inputs.suffix is None or inputs.suffix[0] != split_section:
        rules = job.profile.file_ops
        if job.safeguard_like:
            suffix = assemble_suffix(
                split_section,
                inputs.preserved_section,
                inputs.failures_section,
                format_file_operations(inputs.read_files, inputs.modified_files, rules=rules),
            )
        else:
            suffix = format_file_operations(inputs.read_files, inputs.modified_files, bounded=False, rules=rules)
        inputs.suffix = (split_section, suffix)
    return inputs.suffix[1]


def summarize_plan(job: Job, plan: Plan, inputs: SummaryInputs, summarizer: Summarizer) -> PlanSummary:
    """The summary of `plan`, capped at the job's summary size; every path ends in that cap."""
    params, options = job.params, job.params.summarizer
    max_chars = job.summary_chars
    settings = GuardSettings(
        quality_guard=options.quality_guard,
        max_retries=options.max_retries,
        call_retries=options.call_retries,
        retry_delay_s=options.retry_delay_s,
    )
    injector = FailureInjector(params.summarizer_failures)
    span, previous = inputs.span, inputs.previous
    read_files, modified_files = inputs.read_files, inputs.modified_files

    if not inputs.real:
        text = build_structured_fallback_summary(previous)
        outcome = SummaryOutcome(text=text, source="fallback:no-real-conversation", guard_ok=True)
        rules = job.profile.file_ops
        if job.safeguard_like and rules is not None and not rules.lists_with_fallback:
            return PlanSummary(cap_summary(text, max_chars), outcome, None, None)
        return PlanSummary(cap_summary(text, max_chars), outcome, read_files, modified_files)

    messages = inputs.messages
    extra_calls = 0  # summarizer calls outside the main guarded summary (dropped history, split-turn prefix)
    side_errors: list[str] = []
    identifier_sources = list(plan.turn_prefix)
    effective_previous = previous
    if job.safeguard_like:
        if inputs.pruned_dropped is not None:
            pruned_request = summary_request(job, inputs, inputs.pruned_dropped, previous_summary=previous)
            pruned_text, calls = call_with_retries(summarizer, pruned_request, settings, injector, side_errors)
            extra_calls += calls
            effective_previous = pruned_text or previous
        # preserved turns are rendered text only and cut short: their identifiers (arguments,
        # thinking, long outputs) must still reach ## Exact identifiers
        identifier_sources = inputs.preserved + identifier_sources

    guard_source = messages + plan.turn_prefix
    guard_ask, pinned = guard_asks(plan, inputs)
    guard_ids = identifier_seed(guard_source, job.scans)

    prefix_text = ""
    if plan.cut.is_split_turn and plan.turn_prefix:
        request = prefix_request(job, plan, inputs)
        known = inputs.prefix_text
        model_prefix, calls = call_with_retries(
            KnownAnswer(known) if known is not None else summarizer, request, settings, injector, side_errors
        )
        extra_calls += calls
        # a model's prefix that failed every attempt gives way to the extractive one
        prefix_text = model_prefix or known or ExtractiveSummarizer().summarize(request)
    split_section = split_turn_section(prefix_text)

    suffix = summary_suffix(job, inputs, split_section)
    audit_suffix = suffix if job.safeguard_like else ""
    body_budget = max(
        0, max_chars - len(suffix) - (len(split_section) + 8 if not job.safeguard_like and split_section else 0)
    )

    if messages or not summarizer.calls_model:
        request = summary_request(
            job,
            inputs,
            messages,
            previous_summary=effective_previous,
            budget_chars=body_budget,
            pinned_asks=pinned,
            identifier_sources=identifier_sources,
            pinned_identifiers=guard_ids,
            guard_ask=guard_ask,
            audit_suffix=audit_suffix,
            audit_chars=max_chars if job.safeguard_like else 0,
        )
        fallback = FallbackSummarizer(latest_ask=guard_ask, identifiers=guard_ids, constraint_sources=span)
        outcome = summarize_with_guard(summarizer, request, settings, fallback=fallback, injector=injector)
    else:
        text = build_structured_fallback_summary(effective_previous, latest_ask=guard_ask, identifiers=guard_ids)
        outcome = SummaryOutcome(text=text, source="fallback:turn-prefix-only")
    outcome.calls += extra_calls
    outcome.errors[:0] = side_errors
    if job.safeguard_like:
        text = cap_summary_preserving_suffix(outcome.text, suffix, max_chars)
    else:
        body = merge_split_turn(outcome.text, prefix_text) if prefix_text else outcome.text
        text = cap_summary_preserving_suffix(body, suffix, max_chars)
    return PlanSummary(text, outcome, read_files, modified_files)
