"""`compact()`: the one entry point of the compaction engine (DESIGN §6).

    load the leaf path → refuse a double compaction → tokens → pi cut point → protected entries
    (safeguard / manual) → budget check → summary → one `compaction` entry appended to a working
    copy → window rebuilt exactly as pi does → replayCheck → CompactResult

The recording is only read. The entry is appended to a working copy (a fresh byte copy, or the
`writer` the QA pipeline already holds), so the same recording can be compacted many ways; the
recording's sha256 is compared before and after.

"Nothing to gain" (the compacted window would hold at least as many tokens as the current one) is
decided before the summary when the summary's size bounds already settle it
(`_Compaction._nothing_to_gain`): the same failure, without paying for a summary or a model call.

Modes:
* `safeguard` (default): pi's cut point; every protected entry of the removed part stays verbatim
  (`details.replaylab.protectedEntryIds`); OpenClaw's safeguard summary (history-share pruning,
  recent turns, tool failures, file lists, quality guard); the tail shrinks if summary + protected
  + tail would not fit; protected entries alone over the budget ⇒ `compaction_failure`, nothing
  appended — unless `allowMutatingEventTruncate`, the only way their payloads may shrink.
* `auto`: pi's default compaction — summary + recent tail, no protection.
* `aggressive`: a 2,000-token tail and a summary without tool results — the negative control; it
  loses mutating events on purpose.
* `manual`: OpenClaw's `/compact`: the safeguard summary, then the manual boundary
  (`firstKeptEntryId` = the compaction's own id: summary + later entries only; the unsummarized
  tail is lost, as upstream — openclaw#57410); protected entries still survive.
"""

from __future__ import annotations

import datetime as _dt
import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab.compaction.cutpoint import CutPoint, compute_cut_point
from replaylab.compaction.identifiers import item_scans
from replaylab.compaction.invariants import replay_check
from replaylab.compaction.recovery import create_compaction_diag_id
from replaylab.compaction.params import (
    AGGRESSIVE_KEEP_RECENT_TOKENS,
    CompactParams,
    CompactResult,
    CutPointInfo,
    QualityGuardResult,
    ShrunkEntry,
)
from replaylab.compaction.safeguard import (
    Protection,
    Shrink,
    answered_call_ids,
    message_calls,
    prune_history_for_context_share,
    select_protected,
    shrink_protected,
)
from replaylab.compaction.summarize import (
    ExtractiveSummarizer,
    FailureInjector,
    FileOps,
    LiteLLMSummarizer,
    SummaryOutcome,
    SummaryRequest,
    assemble_suffix,
    build_structured_fallback_summary,
    call_with_retries,
    cap_summary,
    cap_summary_preserving_suffix,
    collect_file_ops,
    collect_tool_failures,
    explicit_constraints,
    extractive_summary_floor,
    format_file_operations,
    format_preserved_turns_section,
    format_tool_failures_section,
    has_real_conversation,
    identifier_seed,
    latest_user_ask,
    merge_split_turn,
    split_preserved_recent_turns,
    summarize_with_guard,
)
from replaylab.constants import (
    CHARS_PER_TOKEN,
    PI_KEEP_RECENT_TOKENS,
    REQUIRED_SUMMARY_SECTIONS,
    SAFETY_MARGIN,
    SPLIT_TURN_HEADING,
    SUMMARY_MAX_TOKENS_SHARE,
    TURN_PREFIX_MAX_TOKENS_SHARE,
)
from replaylab.defects import Code, Defect
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import build_ledger, folder_resolver
from replaylab.transcript.ids import derived_entry_id
from replaylab.transcript.context import WindowMessage, build_window, entry_to_message, protected_ids
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import AnyEntry, CompactionEntry, CompactionSummaryMessage, MessageEntry, dump_entry
from replaylab.transcript.tokens import estimate_context_tokens, estimate_tokens
from replaylab.transcript.writer import TranscriptWriter, file_sha256

#: how many times the tail is shrunk when summary + protected + tail exceed the budget
MAX_TAIL_REFITS = 3
#: decide "nothing to gain" before summarizing when no summary could make it otherwise
#: (`_Compaction._nothing_to_gain`); False = always summarize first (the tests compare the two)
EARLY_NOTHING_TO_GAIN = True
#: the least a summary of the extractive summarizer (or its fallbacks) can hold: the five
#: required headings, each on a line of its own (so at least four line breaks between them)
_HEADINGS_FLOOR_CHARS = sum(len(s) for s in REQUIRED_SUMMARY_SECTIONS) + len(REQUIRED_SUMMARY_SECTIONS) - 1
#: floor of the summary size limit, so a tiny reserve still leaves room for the five sections
MIN_SUMMARY_CHARS = 800
REPLAYLAB_DETAILS_VERSION = 1


@dataclass
class _Plan:
    """One candidate compaction: where to cut, what goes away, what is summarized and kept."""

    cut: CutPoint
    keep_recent: int
    first_kept_index: int  # path index of the first kept entry (len(path) for manual)
    dropped: list[AnyEntry]
    messages: list[Any]
    turn_prefix: list[Any]
    previous: CompactionEntry | None
    protection: Protection = field(default_factory=Protection)
    shrinks: list[Shrink] = field(default_factory=list)
    protected_tokens: int = 0
    #: tokens of the compacted window without its summary message (`_Compaction._window_tokens`)
    rest_tokens: int | None = None


@dataclass
class _SummaryInputs:
    """The summary's parts that the plan alone fixes (`_Compaction._summary_inputs`)."""

    span: list[Any]
    previous: str | None
    read_files: list[str]
    modified_files: list[str]
    real: bool  # has_real_conversation(span): False ⇒ the fixed fallback, no summarizer call
    messages: list[Any]  # the summarizer's input: after history pruning, without the preserved turns
    pruned_dropped: list[Any] | None = None  # history pruned away (summarized on its own first), if any
    preserved: list[Any] = field(default_factory=list)
    preserved_section: str = ""
    failures_section: str = ""
    #: call ids of the protected (kept verbatim) messages: their outcomes need no summary line
    kept_calls: frozenset[str] = frozenset()
    #: the split turn's prefix summary, when known before any summarizer call (the extractive
    #: summarizer writes the same text whether its call succeeds or `_summarize` falls back to it)
    prefix_text: str | None = None
    #: (split-turn section, the summary's suffix around it) as `_Compaction._suffix` last made it
    suffix: tuple[str, str] | None = None


@dataclass
class _Summary:
    text: str
    outcome: SummaryOutcome
    read_files: list[str]
    modified_files: list[str]


def compact(params: CompactParams, *, classifier: ToolClassifier | None = None,
            writer: TranscriptWriter | None = None) -> CompactResult:
    """Compact `params.session_file` (see the module docstring). Raises `InputError` only for
    unusable input (missing file, unknown `leafId`); every other outcome is a `CompactResult`."""
    return _Compaction(params, classifier, writer).run()


class _Compaction:
    def __init__(self, params: CompactParams, classifier: ToolClassifier | None, writer: TranscriptWriter | None):
        self.params = params
        self.mode = params.compaction_mode
        self.session_file = Path(params.session_file)
        self.writer = writer
        self.classifier = classifier or _classifier_from(params.tool_classes, self.session_file)
        self.result = CompactResult(success=False, mode=self.mode, session_file=str(self.session_file),
                                    diag_id=create_compaction_diag_id())
        self.reserve = max(params.reserve_tokens or 0, params.reserve_tokens_floor)
        self.budget = params.context_tokens - self.reserve
        self.safeguard_like = self.mode in ("safeguard", "manual")
        self._tokens: dict[str, int] = {}
        #: each text scanned once per compaction (guard seed, summarizer calls, tail refits), and
        #: inside a QA pipeline item once for all its compactions and its identifier check
        self._scans = item_scans()
        self._parsed: Any = None

    # ------------------------------------------------------------ driver

    def run(self) -> CompactResult:
        params, result = self.params, self.result
        if self.writer is not None and not self.writer.writes_to(self.session_file):
            raise ValueError(f"writer appends to {self.writer.path} but sessionFile is {self.session_file}: "
                             "pass the writer's own file as sessionFile")
        # hashed before the parse, so a change after it shows; a missing file is the loader's InputError.
        # The writer's own file is known without reading it while its seal holds.
        sealed = self.writer.sealed_state() if self.writer is not None else None
        result.recording_sha256 = sealed[1] if sealed else (
            file_sha256(self.session_file) if self.session_file.is_file() else "")
        transcript = self.writer.transcript() if self.writer is not None else load_transcript(self.session_file)
        self._parsed = transcript  # a working copy made later starts from this parse (same bytes)
        if params.leaf_id and params.leaf_id not in transcript.by_id:
            raise InputError([Diagnostic(code="unknown-leaf", file=str(self.session_file), entry_id=params.leaf_id,
                                         field="leafId", message=f"no entry with id {params.leaf_id!r} in the file")])
        path = transcript.path_to(params.leaf_id)
        ledger = build_ledger(transcript, self.classifier, path=path, resolve_child=self._child_resolver())
        result.mutated_event_ids, result.replay_safe = ledger.mutated_event_ids, ledger.replay_safe
        result.budget_tokens = self.budget
        if not path:
            return self._fail("nothing to compact: the session has no entries")
        before = build_window(path)
        before_messages = [w.message for w in before]
        result.original_token_count = sum(estimate_tokens(m) for m in before_messages)
        result.tokens_before = estimate_context_tokens(before_messages)
        if isinstance(path[-1], CompactionEntry) and not params.force_compact:
            return self._fail(f"double compaction refused: the leaf {path[-1].id} already is a compaction "
                              "(pi's guard against re-summarizing a summary, openclaw#12170); set forceCompact to override")
        if self.budget <= 0:
            return self._fail(f"compaction_failure: contextTokens {params.context_tokens} minus the reserve "
                              f"{self.reserve} leaves no budget for the window")

        keep_recent = self._initial_keep_recent()
        plan = summary = entry = None
        after_tokens = 0
        for _ in range(MAX_TAIL_REFITS + 1):
            plan = self._plan(path, before, keep_recent)
            if plan.cut.first_kept_index >= len(path) and self.mode != "manual":
                return self._fail("nothing to compact: no entries after the previous compaction's boundary "
                                  "(pi's prepareCompaction returns nothing here)")
            failure = self._protect(plan, path, before)
            if failure:
                return self._fail(failure)
            inputs = self._summary_inputs(plan)
            if EARLY_NOTHING_TO_GAIN:
                hopeless = self._nothing_to_gain(path, plan, inputs)
                if hopeless:
                    return self._fail(hopeless, plan=plan)
            summary = self._summarize(plan, inputs)
            entry = self._entry(path, plan, summary)
            after_tokens = self._window_tokens(path, plan, entry)
            if after_tokens <= self.budget or self.mode != "safeguard":
                break  # only safeguard shrinks the tail to keep reserveTokensFloor free; the others cut like pi
            room = self.budget - plan.protected_tokens - math.ceil(len(summary.text) / 4)
            smaller = max(1, room)
            if smaller >= plan.keep_recent or plan.first_kept_index >= len(path):
                break
            keep_recent = smaller
        assert plan is not None and summary is not None and entry is not None

        compacted = after_tokens  # of the last plan's window
        result.fits_budget = compacted <= self.budget
        if not result.fits_budget:
            result.notes.append(f"the compacted window ({compacted} tokens) is still over the budget "
                                f"({self.budget}): the kept tail cannot be cut smaller at a valid cut point")
        if compacted >= result.original_token_count:
            return self._fail(f"compaction_failure: nothing to gain — the compacted window would hold {compacted} "
                              f"tokens, the current one {result.original_token_count} (the cut point keeps almost "
                              "everything, or there is no real conversation to summarize)", plan=plan, summary=summary)
        data = dump_entry(entry)
        data["details"]["replaylab"]["tokensAfter"] = compacted
        self._append(data)
        return self._finish(path, before, plan, summary, data, ledger)

    def _child_resolver(self) -> Any:
        """Sub-agent transcripts from `childSessionsDir`; None = the ledger's default (next to the file)."""
        if not self.params.child_sessions_dir:
            return None
        return folder_resolver(Path(self.params.child_sessions_dir))

    # ------------------------------------------------------------ planning

    def _initial_keep_recent(self) -> int:
        wanted = self.params.keep_recent_tokens or PI_KEEP_RECENT_TOKENS
        if self.mode == "aggressive":
            wanted = min(wanted, AGGRESSIVE_KEEP_RECENT_TOKENS)
        return max(1, min(wanted, self.budget))

    def _tokens_of(self, entry: AnyEntry) -> int:
        value = self._tokens.get(entry.id)
        if value is None:
            value = estimate_tokens(entry.message) if isinstance(entry, MessageEntry) else 0
            self._tokens[entry.id] = value
        return value

    def _plan(self, path: list[AnyEntry], before: list[WindowMessage], keep_recent: int) -> _Plan:
        cut = compute_cut_point(path, keep_recent, self.params.boundary_rule, self._tokens_of)
        previous = path[cut.previous_compaction_index] if cut.previous_compaction_index >= 0 else None
        history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
        messages = [m for e in path[cut.boundary_start:history_end]
                    if not isinstance(e, CompactionEntry) and (m := entry_to_message(e)) is not None]
        prefix = [m for e in path[cut.turn_start_index:cut.first_kept_index]
                  if not isinstance(e, CompactionEntry) and (m := entry_to_message(e)) is not None] \
            if cut.is_split_turn else []
        first_kept = len(path) if self.mode == "manual" else cut.first_kept_index
        position = {e.id: i for i, e in enumerate(path)}
        dropped = [path[position[w.entry_id]] for w in before
                   if w.entry_id in position and position[w.entry_id] < first_kept
                   and not isinstance(path[position[w.entry_id]], CompactionEntry)]
        return _Plan(cut, keep_recent, first_kept, dropped, messages, prefix,
                     previous if isinstance(previous, CompactionEntry) else None)

    def _protect(self, plan: _Plan, path: list[AnyEntry], before: list[WindowMessage]) -> str | None:
        """Choose the protected entries; return a failure reason when they cannot fit."""
        if not self.safeguard_like:
            return None
        previous = protected_ids(plan.previous) if plan.previous is not None else []
        plan.protection = select_protected(plan.dropped, self.classifier, answered=answered_call_ids(path),
                                           previously_protected=previous)
        by_id = {e.id: e for e in plan.dropped}
        entries = [by_id[i] for i in plan.protection.entry_ids]
        plan.protected_tokens = sum(self._tokens_of(e) for e in entries)
        if plan.protected_tokens <= self.budget:
            return None
        if self.params.allow_mutating_event_truncate:
            reserve_for_summary = min(math.ceil(self._summary_chars() / 4), self.budget // 4)
            plan.shrinks = shrink_protected([e for e in entries if isinstance(e, MessageEntry)],
                                            self.budget - reserve_for_summary)
            shrunk = {s.entry_id: s for s in plan.shrinks}
            plan.protected_tokens = sum(estimate_tokens(shrunk[e.id].message) if e.id in shrunk else self._tokens_of(e)
                                        for e in entries)
            if plan.protected_tokens <= self.budget:
                return None
            return (f"compaction_failure: even with allowMutatingEventTruncate the {len(entries)} protected entries "
                    f"need {plan.protected_tokens} tokens (only tool-result payloads may shrink; calls never do), "
                    f"more than the budget of {self.budget} tokens (contextTokens {self.params.context_tokens} − "
                    f"reserve {self.reserve}); safeguard will not drop them")
        return (f"compaction_failure: the {len(entries)} protected entries (mutating tool calls, their results and "
                f"pending approvals) need {plan.protected_tokens} tokens, more than the budget of {self.budget} tokens "
                f"(contextTokens {self.params.context_tokens} − reserve {self.reserve}); safeguard will not drop them. "
                "Raise contextTokens, lower reserveTokensFloor, or allow allowMutatingEventTruncate to shrink their "
                "tool-result payloads")

    # ------------------------------------------------------------ summary

    def _summarizer(self) -> Any:
        options = self.params.summarizer
        if self.params.model_provider:
            return LiteLLMSummarizer(self.params.model_provider, api_base=options.api_base,
                                     timeout_s=options.timeout_s, mock_responses=options.mock_responses)
        return ExtractiveSummarizer(self._scans)

    def _summary_chars(self) -> int:
        """The summary's size limit: OpenClaw's 16,000 chars, but never more than pi lets the
        summarizer write (maxTokens = 0.8 × reserveTokens, 4 chars per token)."""
        by_reserve = 4 * math.floor(SUMMARY_MAX_TOKENS_SHARE * self.reserve)
        return max(MIN_SUMMARY_CHARS, min(self.params.summarizer.max_summary_chars, by_reserve))

    def _request(self, inputs: _SummaryInputs, messages: list[Any], **extra: Any) -> SummaryRequest:
        """A summarizer request of this compaction (the summary's, the pruned history's, the prefix's)."""
        params, options = self.params, self.params.summarizer
        base = dict(identifier_policy=params.identifier_policy, include_tool_results=self.mode != "aggressive",
                    kept_call_ids=inputs.kept_calls, budget_chars=self._summary_chars(),
                    custom_instructions=options.custom_instructions,
                    identifier_instructions=options.identifier_instructions,
                    max_tokens=max(256, math.floor(SUMMARY_MAX_TOKENS_SHARE * self.reserve)))
        base.update(extra)
        return SummaryRequest(messages=messages, **base)

    def _prefix_request(self, plan: _Plan, inputs: _SummaryInputs) -> SummaryRequest:
        return self._request(inputs, plan.turn_prefix, turn_prefix=True,
                             max_tokens=max(256, math.floor(TURN_PREFIX_MAX_TOKENS_SHARE * self.reserve)))

    def _summary_inputs(self, plan: _Plan) -> _SummaryInputs:
        """Everything of the summary that the plan alone fixes, before any summarizer call: file
        lists, the history left after pruning, the preserved turns and tool failures sections.
        `_summarize` builds on it; `_nothing_to_gain` bounds the summary's size with it."""
        params = self.params
        span = plan.messages + plan.turn_prefix
        previous = plan.previous.summary if plan.previous is not None else None

        ops = FileOps()
        if not self.safeguard_like and plan.previous is not None and not plan.previous.from_hook:
            details = plan.previous.details or {}
            ops.read.update(x for x in details.get("readFiles", []) if isinstance(x, str))
            ops.edited.update(x for x in details.get("modifiedFiles", []) if isinstance(x, str))
        collect_file_ops(span, ops)
        read_files, modified_files = ops.lists()
        inputs = _SummaryInputs(span=span, previous=previous, read_files=read_files, modified_files=modified_files,
                                real=has_real_conversation(span), messages=plan.messages)
        if not inputs.real:
            return inputs  # the fixed fallback: no summarizer call
        protected_set = set(plan.protection.entry_ids)
        inputs.kept_calls = frozenset(c.id for e in plan.dropped if e.id in protected_set
                                      for c in message_calls(getattr(e, "message", None)))
        if plan.cut.is_split_turn and plan.turn_prefix and not params.model_provider:
            inputs.prefix_text = ExtractiveSummarizer().summarize(self._prefix_request(plan, inputs))
        if not self.safeguard_like:
            return inputs
        summarizable_tokens = sum(estimate_tokens(m) for m in span)
        new_content = max(0, self.result.tokens_before - summarizable_tokens)
        messages = plan.messages
        if new_content > math.floor(params.context_tokens * params.max_history_share * SAFETY_MARGIN):
            pruned = prune_history_for_context_share(messages, params.context_tokens, params.max_history_share)
            if pruned.dropped_chunks > 0:
                messages, inputs.pruned_dropped = pruned.kept, pruned.dropped
        inputs.messages, preserved = split_preserved_recent_turns(messages, params.recent_turns_preserve)
        inputs.preserved = preserved
        inputs.preserved_section = format_preserved_turns_section(preserved, max_chars=self._summary_chars() // 3)
        inputs.failures_section = format_tool_failures_section(collect_tool_failures(span))
        return inputs

    def _window_tokens(self, path: list[AnyEntry], plan: _Plan, entry: CompactionEntry) -> int:
        """Tokens of the window `entry` makes (pi's estimate, as `build_window` rebuilds it): its
        summary message + the rest (protected entries, kept tail). The rest depends on the plan
        only (first kept entry, protected ids, shrunk payloads; the summary text is in the first
        message alone), so it is measured once per plan and reused for the next summary."""
        if plan.rest_tokens is None:
            window = build_window(path + [entry])
            plan.rest_tokens = sum(estimate_tokens(w.message) for w in window[1:])
            return estimate_tokens(window[0].message) + plan.rest_tokens
        return estimate_tokens(CompactionSummaryMessage(summary=entry.summary)) + plan.rest_tokens

    def _guard_asks(self, plan: _Plan, inputs: _SummaryInputs) -> tuple[str | None, list[str]]:
        """(the quality guard's latest ask — of the summarized messages and a split turn's prefix —,
        the asks the summary must carry besides the messages' own latest one)."""
        guard_ask = latest_user_ask(inputs.messages + plan.turn_prefix)
        return guard_ask, [guard_ask] if guard_ask and guard_ask != latest_user_ask(inputs.messages) else []

    def _summary_floor(self, plan: _Plan, inputs: _SummaryInputs) -> int:
        """The fewest characters `_summarize` can return for these inputs, whatever the summarizer
        writes (retries, guard rounds and fallbacks included). The final text always is
        `cap(body, suffix, max_chars)`, of length min(len(body) + len(suffix), max_chars) when the
        suffix is whole — so floor = min(body floor + the suffix's fixed part, max_chars):
        * no real conversation: the fixed fallback text, exactly;
        * body, an LLM (`modelProvider`): it may answer anything (a guard that keeps failing keeps
          the last answer) ⇒ 0;
        * body, the extractive summarizer: when no call can fail (no `summarizerFailures`) and no
          previous summary could make the guard reject its answer as an empty skeleton (none, and
          no pruned history summarized into one), the body is its answer to the very request
          `_summarize` sends ⇒ `extractive_summary_floor` of it (the request's identifier sources
          and pinned identifiers only add identifier lines, which that floor counts as empty);
          otherwise the body may be the guard's fallback or the previous summary it falls back
          to, which like the extractive summary hold the five required headings as lines
          ⇒ `_HEADINGS_FLOOR_CHARS`;
        * the split-turn section: when the summarizer is extractive its text is known
          (`inputs.prefix_text`: a failed call falls back to the same extractive text), so the
          section is counted exactly; an LLM's is left out (it only lengthens the summary);
        * suffix (safeguard, manual): the split-turn, preserved-turns, tool-failures and file
          sections, as `_summarize` assembles them;
        * suffix (auto, aggressive): the file lists, fixed by the plan; the split-turn section goes
          into the body after `\\n\\n---\\n\\n` (`merge_split_turn`: the body above is never blank)."""
        max_chars = self._summary_chars()
        if not inputs.real:
            return len(cap_summary(build_structured_fallback_summary(inputs.previous), max_chars))
        split_section = _split_section(inputs.prefix_text)
        if self.params.model_provider:
            body = 0
        elif self.params.summarizer_failures or (inputs.previous or "").strip() or inputs.pruned_dropped is not None:
            body = _HEADINGS_FLOOR_CHARS
        else:
            _, pinned = self._guard_asks(plan, inputs)
            body = extractive_summary_floor(self._request(inputs, inputs.messages, previous_summary=inputs.previous,
                                                          pinned_asks=pinned))
        suffix = self._suffix(inputs, split_section)
        if not self.safeguard_like and body and split_section:
            body += len("\n\n---\n\n") + len(split_section)
        return min(body + len(suffix), max_chars)

    def _suffix(self, inputs: _SummaryInputs, split_section: str) -> str:
        """What follows the summary's body: safeguard, manual — the split-turn, preserved-turns,
        tool-failures and file sections; auto, aggressive — the file lists (unbounded, as pi).
        Made once per split section: the floor and `_summarize` ask for the same one."""
        if inputs.suffix is None or inputs.suffix[0] != split_section:
            if self.safeguard_like:
                suffix = assemble_suffix(split_section, inputs.preserved_section, inputs.failures_section,
                                         format_file_operations(inputs.read_files, inputs.modified_files))
            else:
                suffix = format_file_operations(inputs.read_files, inputs.modified_files, bounded=False)
            inputs.suffix = (split_section, suffix)
        return inputs.suffix[1]

    def _nothing_to_gain(self, path: list[AnyEntry], plan: _Plan, inputs: _SummaryInputs) -> str | None:
        """The "nothing to gain" failure, decided before paying for a summary — or None when a
        summary could still make the compaction worth it.

        The compacted window = the summary message (ceil(len(summary) / 4) tokens) + what does not
        depend on the summary (protected entries, kept tail: measured on this very plan's entry
        with an empty summary). With floor ≤ len(summary) ≤ max_chars (`_summary_floor`; every
        path of `_summarize` ends in a cap at `_summary_chars()`), the window holds between `low`
        and `high` tokens. It fires only when `low` ≥ the current window (so the full path would
        fail the same way) and `high` ≤ the budget (so safeguard's tail refit would not start:
        this plan is the last one, and `fitsBudget`/notes are what the full path gives)."""
        if self.result.original_token_count > self.budget:
            return None  # low ≥ original > budget ≥ high cannot both hold
        empty = _Summary("", SummaryOutcome(text="", source=""), inputs.read_files, inputs.modified_files)
        fixed = self._window_tokens(path, plan, self._entry(path, plan, empty))  # an empty summary: 0 tokens
        floor_tokens = math.ceil(self._summary_floor(plan, inputs) / CHARS_PER_TOKEN)  # as estimate_tokens counts it
        low, high = fixed + floor_tokens, fixed + math.ceil(self._summary_chars() / CHARS_PER_TOKEN)
        original = self.result.original_token_count
        if low < original or high > self.budget:
            return None
        return (f"compaction_failure: nothing to gain — the compacted window would hold at least {low} tokens "
                f"(kept tail and protected entries {fixed}, the summary's fixed parts ≥ {floor_tokens}), the "
                f"current one {original} (decided before summarizing: the cut point keeps almost everything, "
                "or there is no real conversation to summarize)")

    def _summarize(self, plan: _Plan, inputs: _SummaryInputs) -> _Summary:
        params, options = self.params, self.params.summarizer
        max_chars = self._summary_chars()
        summarizer = self._summarizer()
        injector = FailureInjector(params.summarizer_failures)
        span, previous = inputs.span, inputs.previous
        read_files, modified_files = inputs.read_files, inputs.modified_files

        def request(messages: list[Any], **extra: Any) -> SummaryRequest:
            return self._request(inputs, messages, **extra)

        if not inputs.real:
            text = build_structured_fallback_summary(previous)
            outcome = SummaryOutcome(text=text, source="fallback:no-real-conversation", guard_ok=True)
            return _Summary(cap_summary(text, max_chars), outcome, read_files, modified_files)

        messages = inputs.messages
        extra_calls = 0  # summarizer calls outside the main guarded summary (dropped history, split-turn prefix)
        side_errors: list[str] = []
        identifier_sources = list(plan.turn_prefix)
        effective_previous = previous
        if self.safeguard_like:
            if inputs.pruned_dropped is not None:
                text, calls = call_with_retries(summarizer, request(inputs.pruned_dropped, previous_summary=previous),
                                                retries=options.call_retries, delay_s=options.retry_delay_s,
                                                injector=injector, errors=side_errors)
                extra_calls += calls
                effective_previous = text or previous
            # preserved turns are rendered ≤ 600 chars per message, text only: their identifiers
            # (arguments, thinking, long outputs) must still reach ## Exact identifiers
            identifier_sources = inputs.preserved + identifier_sources

        guard_source = messages + plan.turn_prefix
        guard_ask, pinned = self._guard_asks(plan, inputs)
        guard_ids = identifier_seed(guard_source, self._scans)

        prefix_text = ""
        if plan.cut.is_split_turn and plan.turn_prefix:
            prefix_request = self._prefix_request(plan, inputs)
            known = inputs.prefix_text  # the extractive summarizer's answer, already written
            prefix_text, calls = call_with_retries(_Known(known) if known is not None else summarizer, prefix_request,
                                                   retries=options.call_retries, delay_s=options.retry_delay_s,
                                                   injector=injector, errors=side_errors)
            extra_calls += calls
            prefix_text = prefix_text or known or ExtractiveSummarizer().summarize(prefix_request)
        split_section = _split_section(prefix_text)

        suffix = self._suffix(inputs, split_section)
        audit_suffix = f"\n\n{split_section}" if self.safeguard_like and split_section else ""
        body_budget = max(0, max_chars - len(suffix) - (len(split_section) + 8 if not self.safeguard_like
                                                                         and split_section else 0))

        def fallback() -> str:
            return build_structured_fallback_summary(effective_previous, latest_ask=guard_ask,
                                                     identifiers=guard_ids, constraints=explicit_constraints(span))

        if messages or isinstance(summarizer, ExtractiveSummarizer):
            outcome = summarize_with_guard(
                summarizer, request(messages, previous_summary=effective_previous, budget_chars=body_budget,
                                    pinned_asks=pinned, identifier_sources=identifier_sources,
                                    pinned_identifiers=guard_ids),
                guard_identifiers=guard_ids, guard_latest_ask=guard_ask, quality_guard=options.quality_guard,
                max_retries=options.max_retries, call_retries=options.call_retries, retry_delay_s=options.retry_delay_s,
                injector=injector, fallback=fallback, audit_suffix=audit_suffix)
        else:
            text = build_structured_fallback_summary(effective_previous, latest_ask=guard_ask, identifiers=guard_ids)
            outcome = SummaryOutcome(text=text, source="fallback:turn-prefix-only")
        outcome.calls += extra_calls
        outcome.errors[:0] = side_errors
        if self.safeguard_like:
            text = cap_summary_preserving_suffix(outcome.text, suffix, max_chars)
        else:
            body = merge_split_turn(outcome.text, prefix_text) if prefix_text else outcome.text
            text = cap_summary_preserving_suffix(body, suffix, max_chars)
        return _Summary(text, outcome, read_files, modified_files)

    # ------------------------------------------------------------ the entry

    def _entry(self, path: list[AnyEntry], plan: _Plan, summary: _Summary) -> CompactionEntry:
        taken = {e.id for e in path}
        entry_id = derived_entry_id(taken, path[-1].id if path else "", "compaction", self.mode)
        first_kept = entry_id if self.mode == "manual" else path[plan.cut.first_kept_index].id
        ours: dict[str, Any] = {
            "version": REPLAYLAB_DETAILS_VERSION,
            "mode": self.mode,
            "protectedEntryIds": plan.protection.entry_ids,
            "mutatedEventIds": self.result.mutated_event_ids,
            "replaySafe": self.result.replay_safe,
            "tokensBefore": self.result.original_token_count,
            "tokensAfter": None,
            "summaryAttempts": summary.outcome.calls,
            "summarizer": summary.outcome.source,
            "qualityGuard": {"ok": summary.outcome.guard_ok, "rounds": summary.outcome.guard_rounds,
                             "reasons": summary.outcome.reasons},
            "cutPoint": {"keepRecentTokens": plan.keep_recent, "boundaryRule": self.params.boundary_rule,
                         "isSplitTurn": plan.cut.is_split_turn,
                         "piFirstKeptEntryId": path[plan.cut.first_kept_index].id
                         if plan.cut.first_kept_index < len(path) else None},
            "budgetTokens": self.budget,
            "diagId": self.result.diag_id,
        }
        if plan.shrinks:
            ours["shrunkEntries"] = {s.entry_id: {"sha256": s.sha256, "originalChars": s.original_chars,
                                                  "keptChars": s.kept_chars, "message": dump_entry(s.message)}
                                     for s in plan.shrinks}
        data: dict[str, Any] = {
            "type": "compaction", "id": entry_id, "parentId": path[-1].id, "timestamp": _now(),
            "summary": summary.text, "firstKeptEntryId": first_kept, "tokensBefore": self.result.tokens_before,
            "details": {"readFiles": summary.read_files, "modifiedFiles": summary.modified_files, "replaylab": ours},
        }
        if self.safeguard_like:
            data["fromHook"] = True
        return CompactionEntry.model_validate(data)

    def _append(self, data: dict[str, Any]) -> None:
        if self.writer is None:
            destination = Path(self.params.working_copy) if self.params.working_copy else \
                Path(tempfile.mkdtemp(prefix="replaylab-compact-")) / self.session_file.name
            self.writer = TranscriptWriter.working_copy(self.session_file, destination, parsed=self._parsed,
                                                        parsed_sha256=self.result.recording_sha256)
        self.writer.append(data)
        self.result.working_copy = str(self.writer.path)

    # ------------------------------------------------------------ result

    def _finish(self, path: list[AnyEntry], before: list[WindowMessage], plan: _Plan, summary: _Summary,
                data: dict[str, Any], ledger: Any) -> CompactResult:
        result, params = self.result, self.params
        copy = self.writer.transcript()  # type: ignore[union-attr]
        after = build_window(copy.path_to(data["id"]))
        result.success = True
        result.compaction_event_id = data["id"]
        result.first_kept_entry_id = data["firstKeptEntryId"]
        result.protected_entry_ids = list(plan.protection.entry_ids)
        result.summary_text = summary.text
        result.summarizer = summary.outcome.source
        result.summary_attempts = summary.outcome.calls
        result.quality_guard = QualityGuardResult(ok=summary.outcome.guard_ok, attempts=summary.outcome.guard_rounds,
                                                  reasons=list(summary.outcome.reasons),
                                                  enabled=params.summarizer.quality_guard)
        if summary.outcome.errors:
            result.notes.extend(summary.outcome.errors[:5])
        result.compacted_window = [window_item_json(w) for w in after]
        result.compacted_token_count = sum(item["tokens"] for item in result.compacted_window)
        result.token_saved = result.original_token_count - result.compacted_token_count
        result.shrunk_entries = [ShrunkEntry(entry_id=s.entry_id, sha256=s.sha256, original_chars=s.original_chars,
                                             kept_chars=s.kept_chars) for s in plan.shrinks]
        cut = plan.cut
        result.cut_point = CutPointInfo(
            first_kept_entry_id=data["firstKeptEntryId"],
            first_kept_index=cut.first_kept_index,
            boundary_start_entry_id=path[cut.boundary_start].id if cut.boundary_start < len(path) else None,
            turn_start_entry_id=path[cut.turn_start_index].id if cut.is_split_turn else None,
            is_split_turn=cut.is_split_turn, keep_recent_tokens=plan.keep_recent, boundary_rule=params.boundary_rule)
        if params.replay_check:
            result.findings = replay_check(path, before, after, ledger=ledger, replay_safe=result.replay_safe,
                                           mutated_event_ids=result.mutated_event_ids,
                                           shrunk={s.entry_id: s.sha256 for s in plan.shrinks})
            written = data["details"]["replaylab"]
            if written["mutatedEventIds"] != ledger.mutated_event_ids or written["replaySafe"] != ledger.replay_safe:
                result.findings.append(Defect.of(Code.MUTATED_IDS_WRONG, "the compaction entry's details.replaylab "
                                                 "disagree with the ledger", expected=ledger.mutated_event_ids,
                                                 actual=written["mutatedEventIds"], entry_id=data["id"]))
            if self.writer is not None and not self.writer.writes_to(self.session_file) \
                    and file_sha256(self.session_file) != result.recording_sha256:
                result.findings.append(Defect.of(Code.TRANSCRIPT_REWRITTEN, "the recording changed during compact()",
                                                 expected=result.recording_sha256,
                                                 actual=file_sha256(self.session_file)))
        return result

    def _fail(self, error: str, *, plan: _Plan | None = None, summary: _Summary | None = None) -> CompactResult:
        self.result.success = False
        self.result.error = error
        if plan is not None:
            self.result.protected_entry_ids = list(plan.protection.entry_ids)
        if summary is not None:
            self.result.summary_text = summary.text
        self.result.compacted_token_count = self.result.original_token_count
        return self.result


def window_item_json(item: WindowMessage) -> dict[str, Any]:
    """One `compactedWindow` element: entryId, protected flag, role, tokens and the message JSON."""
    message = dump_entry(item.message)
    role = getattr(item.message, "role", None)
    if role and "role" not in message:
        message = {"role": role, **message}
    return {"entryId": item.entry_id, "protected": item.protected, "role": role,
            "tokens": estimate_tokens(item.message), "message": message}


def _classifier_from(tool_classes: Any, session_file: Path) -> ToolClassifier:
    if isinstance(tool_classes, dict):
        return ToolClassifier(declared={str(k): str(v) for k, v in tool_classes.items()})
    if isinstance(tool_classes, str):
        return ToolClassifier.from_json(tool_classes)
    beside = session_file.parent / "tool_classes.json"
    return ToolClassifier.from_json(beside) if beside.is_file() else ToolClassifier()


def _split_section(prefix_text: str | None) -> str:
    """The summary's split-turn section around a prefix summary (none without one)."""
    return f"{SPLIT_TURN_HEADING}\n\n{prefix_text}" if prefix_text else ""


@dataclass
class _Known:
    """A summarizer whose answer is already written (`_SummaryInputs.prefix_text`): the call
    still goes through `call_with_retries`, so injected failures and call counts are the same."""

    text: str
    name: str = "extractive"

    def summarize(self, request: SummaryRequest) -> str:
        return self.text


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
