""" "Nothing to gain": the compacted window would hold at least as many tokens as the current one.

Told after the summary from the window it makes — and before it, when the summary's size bounds
already settle it: the same failure, without paying for a summary or a model call.
"""

from __future__ import annotations

import math

from replaylab.compaction.entry import compaction_entry
from replaylab.compaction.job import Job
from replaylab.compaction.params import CompactResult, Failure
from replaylab.compaction.plan import Plan
from replaylab.compaction.plan_summary import (
    PlanSummary,
    SummaryInputs,
    guard_asks,
    summary_request,
    summary_suffix,
)
from replaylab.compaction.summary.cap import cap_summary
from replaylab.compaction.summary.fallback import build_structured_fallback_summary
from replaylab.compaction.summary.guard import SummaryOutcome
from replaylab.compaction.summary.sections import split_turn_section
from replaylab.compaction.summary.summarizer import Summarizer
from replaylab.compaction.window import window_tokens
from replaylab.transcript.model import AnyEntry
from replaylab.upstream.openclaw_2026_4_12 import SPLIT_TURN_SEPARATOR
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN


def summary_floor(job: Job, plan: Plan, inputs: SummaryInputs, summarizer: Summarizer) -> int:
    """The fewest characters `summarize_plan` can return for these inputs, whatever the summarizer
    writes (retries, guard rounds and fallbacks included). The final text always is
    `cap(body, suffix, max_chars)`, of length min(len(body) + len(suffix), max_chars) when the
    suffix is whole — so floor = min(body floor + the suffix's fixed part, max_chars):
    * no real conversation: the fixed fallback text, exactly;
    * body: what the summarizer can tell of its own answer (`Summarizer.summary_floor`; a model
      may answer anything, a guard that keeps failing keeps the last answer ⇒ 0). The guard may
      fall back when a call can fail (`summarizerFailures`) or a previous summary could make it
      reject the answer as an empty skeleton (one, or pruned history summarized into one);
      otherwise the body is the answer to the very request `summarize_plan` sends (its
      identifier sources and pinned identifiers only add identifier lines, which a floor
      counts as empty);
    * the split-turn section: when a deterministic summarizer wrote it ahead
      (`inputs.prefix_text`: a failed call falls back to the same text), it is counted exactly;
      a model's is left out (it only lengthens the summary);
    * suffix (safeguard, manual): the split-turn, preserved-turns, tool-failures and file
      sections, as `summarize_plan` assembles them;
    * suffix (auto, aggressive): the file lists, fixed by the plan; the split-turn section goes
      into the body after `SPLIT_TURN_SEPARATOR` (`merge_split_turn`: a body with a floor is
      never blank)."""
    max_chars = job.summary_chars
    if not inputs.real:
        return len(cap_summary(build_structured_fallback_summary(inputs.previous), max_chars))
    split_section = split_turn_section(inputs.prefix_text)
    may_fall_back = bool(
        job.params.summarizer_failures or (inputs.previous or "").strip() or inputs.pruned_dropped is not None
    )
    _, pinned = guard_asks(plan, inputs)
    request = summary_request(job, inputs, inputs.messages, previous_summary=inputs.previous, pinned_asks=pinned)
    body = summarizer.summary_floor(request, may_fall_back=may_fall_back)
    suffix = summary_suffix(job, inputs, split_section)
    if not job.safeguard_like and body and split_section:
        body += len(SPLIT_TURN_SEPARATOR) + len(split_section)
    return min(body + len(suffix), max_chars)


def before_summary(
    job: Job, result: CompactResult, path: list[AnyEntry], plan: Plan, inputs: SummaryInputs, summarizer: Summarizer
) -> Failure | None:
    """The "nothing to gain" failure, decided before paying for a summary — or None when a
    summary could still make the compaction worth it.

    The compacted window = the summary message (ceil(len(summary) / `CHARS_PER_TOKEN`) tokens) +
    what does not depend on the summary (protected entries, kept tail: measured on this very
    plan's entry with an empty summary). With floor ≤ len(summary) ≤ max_chars (`summary_floor`;
    every path of `summarize_plan` ends in a cap at the job's summary size), the window holds
    between `low` and `high` tokens. It fires only when `low` ≥ the current window (so the full
    path would fail the same way) and `high` ≤ the budget (so safeguard's tail refit would not
    start: this plan is the last one, and `fitsBudget`/notes are what the full path gives)."""
    original = result.original_token_count
    if original > job.budget:
        return None  # low ≥ original > budget ≥ high cannot both hold
    empty = PlanSummary("", SummaryOutcome(text="", source=""), inputs.read_files, inputs.modified_files)
    fixed = window_tokens(
        path, plan, compaction_entry(job, result, path, plan, empty), job.tokens, job.unmarked
    )  # an empty summary: 0 tokens
    # as estimate_tokens counts it
    floor_tokens = math.ceil(summary_floor(job, plan, inputs, summarizer) / CHARS_PER_TOKEN)
    low, high = fixed + floor_tokens, fixed + math.ceil(job.summary_chars / CHARS_PER_TOKEN)
    if low < original or high > job.budget:
        return None
    return Failure(
        "nothing_to_gain",
        (
            f"compaction_failure: nothing to gain — the compacted window would hold at least {low} tokens "
            f"(kept tail and protected entries {fixed}, the summary's fixed parts ≥ {floor_tokens}), the "
            f"current one {original} (decided before summarizing: the cut point keeps almost everything, "
            "or there is no real conversation to summarize)"
        ),
    )


def after_summary(window: int, original: int) -> Failure | None:
    """The "nothing to gain" failure of a summarized plan whose window holds `window` tokens."""
    if window < original:
        return None
    return Failure(
        "nothing_to_gain",
        (
            f"compaction_failure: nothing to gain — the compacted window would hold {window} "
            f"tokens, the current one {original} (the cut point keeps almost "
            "everything, or there is no real conversation to summarize)"
        ),
    )
