"""`compact()`: the one entry point of the compaction engine (DESIGN §6).

    load the leaf path → refuse a double compaction (or, as the agent's run does, a context with no
    real conversation) → tokens → pi cut point → protected entries
    (safeguard / manual) → budget check → summary → one `compaction` entry appended to a working
    copy, and after it the entries it restates → window rebuilt exactly as pi does → replayCheck
    → CompactResult

The recording is only read. The entry is appended to a working copy (a fresh byte copy, or the
`writer` the QA pipeline already holds), so the same recording can be compacted many ways; the
recording's sha256 is compared before and after.

Modes:
* `safeguard` (default): the agent's cut point (pi's by default); everything older than the kept
  tail is summarized (OpenClaw's safeguard summary: history-share pruning, recent turns, tool
  failures, file lists, quality guard; each protected call one line of its tool outcomes). When
  the summarized span holds protected entries (mutating calls, their results, pending approvals)
  the compaction keeps nothing itself and restates after itself, byte for byte and in order,
  those entries and then the kept tail (`compaction.plan`, `transcript.restated`): pi 0.73.1 and
  1.x and OpenClaw 2026.9.6 all show every entry after a compaction whose `firstKeptEntryId` is
  its own id, so the agent sees each protected entry verbatim, paired, in order. A tail over the
  budget shrinks; the protected entries and the smallest summary over the budget ⇒
  `compaction_failure` (`protected_too_large`, with the numbers), nothing appended — unless
  `allowMutatingEventTruncate` lets their tool results be truncated (`compaction.safeguard`).
* `auto`: pi's default compaction — summary + recent tail, no protection.
* `aggressive`: a small tail and a summary without tool results — the negative control; it loses
  mutating events on purpose.
* `manual`: OpenClaw's `/compact`, as the item's OpenClaw release runs it
  (`RuntimeRules.manual`): the safeguard summary and its restatements. 2026.4.12 (both pi
  profiles' runtime) then moves the boundary to the leaf (`firstKeptEntryId` = the compaction's
  own id: summary + later entries only; the unsummarized tail is lost, as upstream); 2026.9.6 keeps
  the tail its cut keeps, and where that cut summarizes nothing it cuts again keeping no recent
  tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replaylab.compaction import nothing_to_gain
from replaylab.compaction.entry import compaction_entry, restatements, working_copy_writer
from replaylab.compaction.estimate_failure import Lines, agent_tokens, estimate_failure, failing_items
from replaylab.compaction.job import Job
from replaylab.compaction.outcome import Written, fail, finish
from replaylab.compaction.params import CompactParams, CompactResult, Failure
from replaylab.compaction.plan import (
    Plan,
    initial_keep_recent,
    nothing_after_boundary,
    plan_compaction,
    protect,
    protected_entries,
    run_skips,
    smaller_tail,
)
from replaylab.compaction.plan_summary import (
    PlanSummary,
    summarize_plan,
    summarizer_for,
    summary_inputs,
)
from replaylab.compaction.recovery import create_compaction_diag_id
from replaylab.compaction.restated_leaf import compaction_still_leaf
from replaylab.compaction.safeguard import path_calls
from replaylab.compaction.window import window_tokens
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import UNRESOLVED_SUBAGENT_CLASS, build_ledger, folder_resolver
from replaylab.transcript.context import build_window
from replaylab.transcript.load import Transcript, load_transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry, CompactionEntry, dump_entry
from replaylab.transcript.restated import marked, restated_sources, restates_any, without_mark
from replaylab.transcript.writer import TranscriptWriter, file_sha256
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN, CURRENT_SESSION_VERSION

#: how many times the tail is shrunk when summary + protected + tail exceed the budget
MAX_TAIL_REFITS = 3


def compact(
    params: CompactParams,
    *,
    classifier: ToolClassifier | None = None,
    writer: TranscriptWriter | None = None,
    memo: ItemMemo | None = None,
) -> CompactResult:
    """Compact `params.session_file` (see the module docstring). Raises `InputError` only for
    unusable input (missing file, unknown `leafId`); every other outcome is a `CompactResult`.
    `memo`: the QA pipeline item's (not a parameter of the seed contract: only the pipeline has one)."""
    session_file = Path(params.session_file)
    job = Job(params, classifier or _classifier_from(params.tool_classes, session_file), memo)
    result = CompactResult(
        success=False, mode=job.mode, session_file=str(session_file), diag_id=create_compaction_diag_id()
    )
    if writer is not None and not writer.writes_to(session_file):
        raise ValueError(
            f"writer appends to {writer.path} but sessionFile is {session_file}: "
            "pass the writer's own file as sessionFile"
        )
    result.recording_sha256 = _recording_sha256(session_file, writer)
    # the item's agent reads the file into its own tree (no rules: OpenClaw's files OpenClaw's way)
    navigation = job.profile.navigation if job.rules is not None else None
    transcript = writer.transcript() if writer is not None else load_transcript(session_file, navigation=navigation)
    path = _leaf_path(transcript, params.leaf_id, session_file, memo)
    if memo is None and restates_any(path):
        # its steps read the path again (the ledger, the refusal, the protected ids, the window, the
        # restatements), and each would judge every restated entry on it again; pi 0.73.1's rules,
        # as the plain functions have them. A path that restates nothing has nothing to judge, and
        # a memo of a long one's messages costs more than it saves
        memo = ItemMemo()
        job = replace(job, memo=memo)
    ledger = build_ledger(transcript, job.classifier, path=path, resolve_child=_child_resolver(params), memo=memo)
    result.mutated_event_ids, result.replay_safe = ledger.mutated_event_ids, ledger.replay_safe
    # the spawning calls of a sub-agent that mutated or cannot be loaded: no classification of the
    # call says so; and each restatement of one on the path (a later compaction's copy has its own id)
    spawns = {e.entry_id for e in ledger.events if not e.session and e.tool_class == UNRESOLVED_SUBAGENT_CLASS}
    spawns.update(ledger.mutating_spawns)
    if spawns:
        spawns.update(copy for copy, source in restated_sources(path, memo).items() if source in spawns)
        job = replace(job, unresolved_spawns=frozenset(spawns))
    result.budget_tokens = job.budget
    result.fits_budget = job.budget > 0  # no window fits a budget the reserve has used up
    if not path:
        return fail(result, Failure("nothing_to_compact", "nothing to compact: the session has no entries"))
    before = build_window(path, memo)
    unmarked = {w.entry_id: without_mark(w.message) for w in before if w.entry_id is not None and marked(w.message)}
    if unmarked:
        job = replace(job, unmarked=unmarked)
    before_messages = [w.message for w in before]
    result.original_token_count = sum(map(job.tokens, before_messages))
    result.tokens_before = job.context_tokens(before_messages)
    refused = _refusal(job, path) or run_skips(job, before)
    if refused:
        return fail(result, refused)

    # where the parse read each entry it warned about: a refusal names the line
    read_at = {d.entry_id: (d.file, d.line) for d in transcript.diagnostics if d.entry_id and d.line is not None}
    planned = _fitted_plan(job, result, path, before, read_at)
    if isinstance(planned, _Refused):
        return fail(result, planned.failure, plan=planned.plan, protected=planned.protected)
    compacted, plan, summary, entry = planned

    result.fits_budget = compacted <= job.budget
    if not result.fits_budget:
        result.notes.append(
            f"the compacted window ({compacted} tokens) is still over the budget "
            f"({job.budget}): the kept tail cannot be cut smaller at a valid cut point"
        )
    hopeless = nothing_to_gain.after_summary(compacted, result.original_token_count)
    if hopeless:
        return fail(result, hopeless, plan=plan, summary=summary)
    data = dump_entry(entry)
    data["details"]["replaylab"]["tokensAfter"] = compacted
    if writer is None:  # a working copy made now starts from the parse above (same bytes)
        rules = job.rules
        lines = rules.lines_to_copy(transcript, path[-1].id, memo) if rules is not None else None
        writer = working_copy_writer(params, transcript, result.recording_sha256, lines)
        if rules is not None and lines is not None:
            result.notes.append(
                f"the working copy holds the file's first {lines:,} lines, up to the leaf {path[-1].id}: "
                f"{rules.name} would read an entry appended to the whole file, after a reset later in it, "
                "as following the file's last entry"
            )
    if transcript.source_version < CURRENT_SESSION_VERSION:
        result.notes.append(
            f"the recording is a version {transcript.source_version} session: its working copy is written as "
            "version 3 with replaylab's migrated entry ids, so pi keeps them (pi gives the entries of an older "
            "file fresh random ids, which no compaction entry could name)"
        )
    if plan.shrunk:
        result.notes.append(
            f"allowMutatingEventTruncate: {len(plan.shrunk)} protected tool result(s) restated truncated "
            "(OpenClaw's tool-result truncation) so the protected entries fit the budget: "
            + ", ".join(data["details"]["replaylab"]["truncatedEntryIds"][:10])
        )
    written = [data, *restatements(path, plan, data["id"], job.memo, frozenset(job.unmarked))]
    writer.append_many(written)  # one check of the file before and one seal after, as for one entry
    leaf_id = written[-1]["id"]
    result.working_copy = str(writer.path)
    return finish(job, result, path, before, Written(plan, summary, data, writer, leaf_id), ledger)


@dataclass(frozen=True)
class _Refused:
    """A compaction that does not happen, with what its result should name."""

    failure: Failure
    plan: Plan | None = None
    protected: list[str] | None = None


def _fitted_plan(
    job: Job, result: CompactResult, path: list[AnyEntry], before: list[Any], lines: Lines
) -> tuple[int, Plan, PlanSummary, CompactionEntry] | _Refused:
    """(window tokens, plan, summary, entry) of the compaction to write: pi's cut, then — while the
    window is over the budget — smaller tails (`smaller_tail`), the smallest window kept; or why
    there is none (nothing after the boundary, the protected entries over the budget, nothing to
    gain)."""
    calls = path_calls(path)  # the whole path's calls, whatever tail each refit keeps
    protected = protected_entries(job, path, before, calls)
    shrunk: dict[str, Any] = {}
    keep_recent = initial_keep_recent(job)
    best: tuple[int, Plan, PlanSummary, CompactionEntry] | None = None
    for attempt in range(MAX_TAIL_REFITS + 1):
        # the agent cuts once, at its own tail, with its own estimate where that is NaN
        failing = failing_items(job, path) if attempt == 0 else None  # one pass for both
        tokens = agent_tokens(job, path, before, failing) if attempt == 0 else None
        plan = plan_compaction(job, path, before, keep_recent, calls, tokens)
        refused = nothing_after_boundary(job, plan, path)
        if refused and attempt == 0 and job.manual is not None and job.manual.retries_keeping_nothing:
            # the agent's `/compact` asks its cut once more keeping no recent tokens
            keep_recent = 0
            plan = plan_compaction(job, path, before, keep_recent, calls, tokens)
            refused = nothing_after_boundary(job, plan, path)
        if attempt == 0 and (not refused or tokens is not None):
            refused = estimate_failure(job, path, before, plan, lines, failing) or refused
        if refused:
            return best or _Refused(refused)
        summarizer = summarizer_for(job)
        inputs = summary_inputs(job, plan, summarizer, result.tokens_before)
        if attempt == 0 and protected:
            floor = math.ceil(nothing_to_gain.summary_floor(job, plan, inputs, summarizer) / CHARS_PER_TOKEN)
            refused, shrunk = protect(job, protected, floor)
            if refused:
                return _Refused(refused, protected=_source_ids(path, protected, job.memo))
        restated = {e.id for e in plan.restated}
        plan.shrunk = {i: m for i, m in shrunk.items() if i in restated}
        hopeless = nothing_to_gain.before_summary(job, result, path, plan, inputs, summarizer)
        if hopeless:
            return best or _Refused(hopeless, plan=plan)
        summary = summarize_plan(job, plan, inputs, summarizer)
        entry = compaction_entry(job, result, path, plan, summary)
        compacted = window_tokens(path, plan, entry, job.tokens, job.unmarked)
        # a smaller tail can leave pi no cut point within it, and pi then keeps everything: the
        # smallest window any refit made is the one written
        if best is None or compacted < best[0]:
            best = (compacted, plan, summary, entry)
        smaller = smaller_tail(job, plan, path, summary.text, compacted)
        if smaller is None:
            break
        keep_recent = smaller
    assert best is not None  # the first attempt returns or makes one
    return best


def _source_ids(path: list[AnyEntry], entries: list[AnyEntry], memo: ItemMemo | None) -> list[str]:
    """The recorded ids of `entries` (a restated entry is the entry it restates)."""
    sources = restated_sources(path, memo)
    return [sources.get(e.id, e.id) for e in entries]


def _recording_sha256(session_file: Path, writer: TranscriptWriter | None) -> str:
    """Hashed before the parse, so a change after it shows; a missing file is the loader's
    InputError. The writer's own file is known without reading it while its seal holds."""
    sealed = writer.sealed_state() if writer is not None else None
    if sealed:
        return sealed[1]
    return file_sha256(session_file) if session_file.is_file() else ""


def _leaf_path(
    transcript: Transcript, leaf_id: str | None, session_file: Path, memo: ItemMemo | None
) -> list[AnyEntry]:
    """The root → leaf path to compact (the file's leaf unless `leafId`)."""
    if leaf_id and leaf_id not in transcript.by_id:
        raise InputError(
            [
                Diagnostic(
                    code="unknown-leaf",
                    file=str(session_file),
                    entry_id=leaf_id,
                    field="leafId",
                    message=f"no entry with id {leaf_id!r} in the file",
                )
            ]
        )
    return transcript.path_to(leaf_id, memo)


def _refusal(job: Job, path: list[AnyEntry]) -> Failure | None:
    """A compaction refused before planning: a double compaction, or a reserve that leaves no budget."""
    params = job.params
    compacted = just_compacted(path, job.memo)
    if compacted is not None and not params.force_compact:
        what = (
            "already is a compaction"
            if compacted == path[-1].id
            else f"only restates what compaction {compacted} summarized past"
        )
        return Failure(
            "already_compacted",
            (
                f"double compaction refused: the leaf {path[-1].id} {what} "
                "(pi's guard against re-summarizing a summary, openclaw#12170); set forceCompact to override"
            ),
        )
    if job.budget <= 0:
        return Failure(
            "no_budget",
            f"compaction_failure: contextTokens {params.context_tokens} minus the reserve "
            f"{job.reserve} leaves no budget for the window",
        )
    return None


def just_compacted(path: list[AnyEntry], memo: ItemMemo | None = None) -> str | None:
    """The id of the compaction the path ends in — the leaf itself, or a compaction followed only by
    the entries it restated — else None: nothing new reached the model since."""
    index = compaction_still_leaf(path, memo)
    return None if index is None else path[index].id


def _child_resolver(params: CompactParams) -> Any:
    """Sub-agent transcripts from `childSessionsDir`; None = the ledger's default (next to the file)."""
    if not params.child_sessions_dir:
        return None
    return folder_resolver(Path(params.child_sessions_dir))


def _classifier_from(tool_classes: Any, session_file: Path) -> ToolClassifier:
    if isinstance(tool_classes, dict):
        return ToolClassifier(declared={str(k): str(v) for k, v in tool_classes.items()})
    if isinstance(tool_classes, str):
        return ToolClassifier.from_json(tool_classes)
    beside = session_file.parent / "tool_classes.json"
    return ToolClassifier.from_json(beside) if beside.is_file() else ToolClassifier()
