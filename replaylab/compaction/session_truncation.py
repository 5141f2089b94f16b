"""The overflow recovery's rewrite of the tool results (`tool-result-truncation.ts`): the plan —
each result over the per-result cap cut, then the results together over an aggregate budget
trimmed (`recovery_plan`: 2026.4.12 the cap, newest first; 2026.9.6 four caps or half the window,
oldest first, cut then cleared, `fitted_truncation.recovery_plan`) — the recovery's gate
(`session_likely_has_oversized_tool_results`), and `truncateOversizedToolResultsInSession` on a
working copy: the session rewritten by branching from the parent of the first rewritten entry
and re-appending the suffix, append-only, the old entries left as an abandoned branch
(`truncate_oversized_tool_results_in_session`).

Cuts are `compaction.truncation`'s, under the OpenClaw release's rules given (`rules`; default
2026.4.12's).
"""

from __future__ import annotations

import functools
import math
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replaylab.compaction import fitted_truncation as fitted
from replaylab.compaction.truncation import (
    SuffixFactory,
    calculate_max_tool_result_chars,
    format_truncation_notice,
    has_important_tail,
    notice_of,
    tool_result_text_length,
    truncate_tool_result_message,
)
from replaylab.transcript.ids import derived_entry_id
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import (
    AnyEntry,
    CompactionEntry,
    LabelEntry,
    MessageEntry,
    ToolResultMessage,
    dump_entry,
    message_text,
)
from replaylab.transcript.restated import TRUNCATED_FROM, message_sha256
from replaylab.transcript.writer import TranscriptWriter
from replaylab.upstream.openclaw_2026_4_12 import CHARS_PER_TOKEN_ESTIMATE, RECOVERY_MIN_KEEP_CHARS
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, RuntimeRules


def _min_truncated_text_chars(min_keep_chars: int) -> int:
    return min_keep_chars + len(format_truncation_notice(1))


def plan_tool_result_replacements(
    path: Sequence[AnyEntry],
    context_tokens: int,
    *,
    max_chars: int | None = None,
    min_keep_chars: int = RECOVERY_MIN_KEEP_CHARS,
    skip_entry_ids: Iterable[str] = (),
) -> dict[str, ToolResultMessage]:
    """entry id → shortened tool result: every result over the per-result cap, then (with ≥ 2
    results) an aggregate budget of the same size, trimmed newest first."""
    cap = max(1, max_chars if max_chars is not None else calculate_max_tool_result_chars(context_tokens))
    skip = set(skip_entry_ids)
    results = [
        (e.id, e.message)
        for e in path
        if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage) and e.id not in skip
    ]
    return plan_result_replacements(results, cap, min_keep_chars=min_keep_chars)


def plan_result_replacements(
    results: Sequence[tuple[str, ToolResultMessage]],
    cap: int,
    *,
    min_keep_chars: int = RECOVERY_MIN_KEEP_CHARS,
    aggregate: bool = True,
    rules: RuntimeRules = OPENCLAW_2026_4_12,
) -> dict[str, ToolResultMessage]:
    """`plan_tool_result_replacements` over (id, result) pairs in order: each result over `cap`
    cut, then (`aggregate`, with ≥ 2 results) all of them trimmed newest first to `cap` together."""
    cap = max(1, cap)
    cut = functools.partial(truncate_tool_result_message, min_keep_chars=min_keep_chars, rules=rules)
    replacements = {eid: cut(m, cap) for eid, m in results if tool_result_text_length(m) > cap}
    current = [(i, eid, replacements.get(eid, m)) for i, (eid, m) in enumerate(results)]
    sized = [(i, eid, m, n) for i, eid, m in current if (n := tool_result_text_length(m)) > 0]
    if aggregate and len(sized) >= 2:
        remaining = sum(s[3] for s in sized) - cap
        floor_chars = _min_truncated_text_chars(min_keep_chars)
        for _, entry_id, message, length in sorted(sized, key=lambda s: (-s[0], -s[3])):
            if remaining <= 0:
                break
            reducible = max(0, length - floor_chars)
            shortened = cut(message, max(floor_chars, length - min(reducible, remaining))) if reducible > 0 else message
            reduction = length - tool_result_text_length(shortened)
            if reduction > 0:
                replacements[entry_id], remaining = shortened, remaining - reduction
    return replacements


def recovery_budgets(context_tokens: int, rules: RuntimeRules = OPENCLAW_2026_4_12) -> tuple[int, int]:
    """`resolveToolResultBudgets` as the recovery calls it: (the per-result cap, the results'
    aggregate text budget) — the latter max(cap x the rules' multiplier, the rules' share of the
    window in chars), which under 2026.4.12 is the per-result cap itself."""
    cap = max(1, calculate_max_tool_result_chars(context_tokens, rules))
    tokens = max(1, math.floor(context_tokens)) if math.isfinite(context_tokens) else 1
    share = math.floor(tokens * CHARS_PER_TOKEN_ESTIMATE * rules.truncation.recovery_aggregate_context_share)
    return cap, max(1, cap * rules.truncation.recovery_aggregate_cap_multiplier, share)


def _recovery_notice_of(rules: RuntimeRules) -> SuffixFactory:
    return lambda n: rules.truncation.recovery_notice.format(n=max(1, math.floor(n)))


def recovery_plan(
    results: Sequence[tuple[str | None, ToolResultMessage]],
    context_tokens: int,
    rules: RuntimeRules,
    *,
    keep: Iterable[str | None] = (),
) -> fitted.RecoveryPlan:
    """The recovery rewrite's plan over a branch's tool results in order (entry id, result) under
    `rules`: 2026.9.6's `buildRecoveryToolResultReplacementPlan` (`fitted_truncation.
    recovery_plan`), or 2026.4.12's per-result cut then newest-first trim
    (`plan_result_replacements`). `keep` (safeguard's protected results) are never cut; under
    2026.9.6 they still count in the aggregate total, under 2026.4.12 they are left out of it."""
    kept = set(keep)
    cap, budget = recovery_budgets(context_tokens, rules)
    if rules.truncation.recovery_aggregate_order == "branch-order":
        return fitted.recovery_plan(
            results,
            cap,
            budget,
            suffix=notice_of(rules),
            compact_suffix=_recovery_notice_of(rules),
            has_important_tail=has_important_tail,
            keep=kept,
        )
    eligible = [(eid, m) for eid, m in results if eid is not None and eid not in kept]
    plan = fitted.RecoveryPlan()
    plan.replacements = plan_result_replacements(eligible, cap, rules=rules)
    return plan


def session_likely_has_oversized_tool_results(
    messages: Iterable[Any], context_tokens: int, rules: RuntimeRules = OPENCLAW_2026_4_12
) -> bool:
    """`sessionLikelyHasOversizedToolResults`: 2026.9.6: the recovery plan over the messages cuts
    a result over the per-result cap or takes chars off for the aggregate budget; 2026.4.12: a
    result over the per-result cap, or (≥ 2 results) results together over the same budget."""
    if rules.truncation.recovery_aggregate_order == "branch-order":
        results = [(f"message-{i}", m) for i, m in enumerate(messages) if isinstance(m, ToolResultMessage)]
        plan = recovery_plan(results, context_tokens, rules)
        return plan.oversized_count > 0 or plan.aggregate_reducible_chars > 0
    cap = calculate_max_tool_result_chars(context_tokens, rules)
    lengths = [tool_result_text_length(m) for m in messages if isinstance(m, ToolResultMessage)]
    lengths = [n for n in lengths if n > 0]
    return any(n > cap for n in lengths) or (len(lengths) >= 2 and sum(lengths) > cap)


@dataclass
class TruncationResult:
    truncated: bool
    truncated_count: int = 0
    working_copy: str | None = None
    leaf_id: str | None = None
    id_map: dict[str, str] = field(default_factory=dict)
    reason: str | None = None


def _remap_compaction(entry: CompactionEntry, id_map: dict[str, str]) -> dict[str, Any]:
    data = dump_entry(entry)
    if entry.first_kept_entry_id in id_map:
        data["firstKeptEntryId"] = id_map[entry.first_kept_entry_id]
    ours = (data.get("details") or {}).get("replaylab") if isinstance(data.get("details"), dict) else None
    if isinstance(ours, dict) and isinstance(ours.get("protectedEntryIds"), list):
        ours["protectedEntryIds"] = [id_map.get(i, i) for i in ours["protectedEntryIds"]]
    return data


def rewrite_branch(
    append: Callable[[dict[str, Any]], None],
    branch: Sequence[AnyEntry],
    replacements: dict[str, Any],
    taken: set[str],
) -> tuple[str | None, dict[str, str]]:
    """OpenClaw's `rewriteTranscriptEntriesInSessionManager` on an append-only transcript: the
    branch (root → leaf entries) taken again from the parent of the first entry whose message
    `replacements` changes, every entry from there on appended once more (`append`) with a new id
    not in `taken` — a replaced message in place of its own — so the old entries stay in the file,
    off the new path. A compaction's `firstKeptEntryId` and replaylab `protectedEntryIds`, a
    restatement's source and a label's target follow their entries' new ids; a restated result
    that is cut stays its source's entry, as a declared truncation of it (`truncatedFrom`).
    Returns the new leaf and the id map (None and {}: nothing to replace, nothing written)."""
    first = next(
        (
            index
            for index, entry in enumerate(branch)
            if isinstance(entry, MessageEntry)
            and entry.id in replacements
            and dump_entry(replacements[entry.id]) != dump_entry(entry.message)
        ),
        None,
    )
    if first is None:
        return None, {}
    parent = branch[first].parent_id
    id_map: dict[str, str] = {}
    for entry in branch[first:]:
        new_id = derived_entry_id(taken, parent or "", entry.id, "rewritten")
        data = _remap_compaction(entry, id_map) if isinstance(entry, CompactionEntry) else dump_entry(entry)
        if isinstance(entry, LabelEntry) and entry.target_id in id_map:
            data["targetId"] = id_map[entry.target_id]
        if data.get("restates") in id_map:
            data["restates"] = id_map[data["restates"]]
        if isinstance(entry, MessageEntry) and entry.id in replacements:
            data["message"] = dump_entry(replacements[entry.id])
            if "restates" in data and TRUNCATED_FROM not in data:
                recorded = entry.message
                data[TRUNCATED_FROM] = {"chars": len(message_text(recorded)), "sha256": message_sha256(recorded)}
        data["id"], data["parentId"] = new_id, parent
        append(data)
        id_map[entry.id] = parent = new_id
    return parent, id_map


def truncate_oversized_tool_results_in_session(
    session_file: str | Path,
    context_tokens: int,
    *,
    writer: TranscriptWriter | None = None,
    working_copy: str | Path | None = None,
    leaf_id: str | None = None,
    max_chars: int | None = None,
    skip_entry_ids: Iterable[str] = (),
) -> TruncationResult:
    """OpenClaw's recovery rewrite, on a working copy, append-only.

    The path (to `leaf_id`, default the file's leaf) is planned with the recovery minimum keep (0).
    From the first rewritten entry on, the whole suffix is re-appended with fresh ids, chained from
    that entry's parent, with the replacements applied; compaction `firstKeptEntryId`, replaylab
    `protectedEntryIds`, restated entries' `restates` and label targets are remapped. The old
    entries remain as an abandoned branch and the new leaf is the last line. `writer` appends to an
    existing working copy; otherwise a copy of `session_file` is made at `working_copy` (default: a
    temp file)."""
    transcript = load_transcript(session_file)
    path = transcript.path_to(leaf_id) if leaf_id else transcript.leaf_path()
    if not path:
        return TruncationResult(False, reason="empty session")
    replacements = plan_tool_result_replacements(
        path, context_tokens, max_chars=max_chars, skip_entry_ids=skip_entry_ids
    )
    if not replacements:
        return TruncationResult(False, reason="no oversized or aggregate tool results")
    if writer is None:
        destination = (
            Path(working_copy)
            if working_copy
            else Path(tempfile.mkdtemp(prefix="replaylab-truncate-")) / Path(session_file).name
        )
        writer = TranscriptWriter.working_copy(session_file, destination)
    leaf, id_map = rewrite_branch(writer.append, path, replacements, set(transcript.by_id))
    if leaf is None:
        return TruncationResult(False, reason="the plan changes no tool result")
    return TruncationResult(
        True, truncated_count=len(replacements), working_copy=str(writer.path), leaf_id=leaf, id_map=id_map
    )
