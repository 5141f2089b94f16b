"""Checks of one item outside the diff of its two runs: the recording is valid, its cassette
answers it, the ledger is what the suite expects; and the de-duplication of what they all found."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replaylab.defects import Code, Defect
from replaylab.diagnostics import InputError
from replaylab.differences import differences
from replaylab.replay.tools.pack_data import PackFailure
from replaylab.replay.tools.recorded_results import call_key
from replaylab.replay.trace import RunTrace, ToolCallTrace
from replaylab.safety.ledger import LedgerView
from replaylab.suite import Expectations
from replaylab.transcript.model import UnreadableEntry
from replaylab.transcript.pairing import message_calls
from replaylab.transcript.rules import AgentRules


def recording_invalid(error: InputError) -> Defect:
    return Defect.of(Code.RECORDING_INVALID, "; ".join(str(d) for d in error.diagnostics[:3]))


def pack_failed(failure: PackFailure) -> Defect:
    """TOOL_FAILED: the tool pack's code misbehaved in its own process (`pack_data`); the item
    cannot be judged, and says which pack (and tool) made it so."""
    return Defect.of(
        Code.TOOL_FAILED,
        str(failure),
        expected="the tool pack's module and its class_for answer as data, and leave nothing running",
        actual=failure.kind,
        detail={"pack": failure.pack, "kind": failure.kind},
        tool=failure.tool,
    )


def declared_over_rules(path: Iterable[Any], classifier: Any) -> list[str]:
    """One note per tool whose declared class (the suite's or the recording's tool_classes.json,
    the tool pack) calls safe what an OpenClaw rule calls mutating: the report says it, so a
    `send_email` declared read is a choice someone made, never a silent one."""
    notes: dict[str, str] = {}
    for entry in path:
        message = getattr(entry, "message", None)
        calls = message_calls(message) if message is not None and getattr(message, "role", None) == "assistant" else []
        for call in calls:
            if call.name in notes:
                continue
            why = classifier.explain(call.name, call.arguments)
            if "overriding a mutating rule" in why.reason:
                notes[call.name] = f"tool {call.name}: {why.reason}"
    return list(notes.values())


def unisolated_pack(pack: Any) -> list[str]:
    """A note when the tool pack's module ran without a network namespace of its own (the
    machine allows none: only the socket guard stood between its code and the network)."""
    why = getattr(pack, "unisolated", None)
    return [f"tool pack {pack.name}: its module ran without a network namespace ({why})"] if why else []


def kept_aside(transcript: Any, memo: Any, rules: AgentRules, label: str) -> str | None:
    """A note when the item's agent keeps entries of the path aside as it loads the session (its
    own entry schema: OpenClaw's): they are in none of its contexts, so none of replaylab's either,
    which a user reading only the window's size would not guess."""
    path = transcript.leaf_path(memo)
    # an entry replaylab could not read is in no context either, but that is its own load error
    aside = [(entry, why) for entry, why in rules.kept_aside(path) if not isinstance(entry, UnreadableEntry)]
    if not aside:
        return None
    entry, why = aside[0]
    return (
        f"{label} keeps {len(aside):,} of the path's {len(path):,} entries aside as it loads the session, "
        f"in no context, the path running through them (first: entry {entry.id}, line "
        f"{transcript.line_of.get(entry.id, '?')}: {why})"
    )


def records_of_another_agent(transcript: Any, profile: Any) -> str | None:
    """A note when a session holds a record only another pinned agent writes (OpenClaw's `reset`
    and `leaf` entries, pi 1.6.0's `system` messages and its `context_edit` and `usage` entries:
    `upstream.profiles.record_claims`) but is judged under `profile`'s rules: the suite or the
    command line named that profile, and what the writer's context holds is judged by rules that
    do not read those records (pi's ignore a reset)."""
    from replaylab.upstream.profiles import record_claims

    claims = [claim for claim in record_claims() if claim[2].name != profile.name]
    if not claims:
        return None
    types = {value for kind, value, _ in claims if kind == "entry"}
    roles = {value for kind, value, _ in claims if kind == "role"}
    customs = {value for kind, value, _ in claims if kind == "custom"}
    found: dict[tuple[str, str], list[str]] = {}  # one pass over the entries for every record
    for entry in transcript.entries:
        if entry.type in types:
            found.setdefault(("entry", entry.type), []).append(entry.id)
        elif entry.type == "message" and (role := getattr(entry.message, "role", None)) in roles:
            found.setdefault(("role", role), []).append(entry.id)
        elif entry.type == "custom" and (custom := getattr(entry, "custom_type", None)) in customs:
            found.setdefault(("custom", custom), []).append(entry.id)
    for kind, value, owner in claims:
        held = found.get((kind, value))
        if held:
            noun = {"role": ("message", "messages"), "custom": ("custom entry", "custom entries")}.get(
                kind, ("entry", "entries")
            )
            what = f"{len(held):,} {value} {noun[len(held) != 1]}"
            return (
                f"the session holds records only {owner.label} writes ({what}; first: entry {held[0]}, line "
                f"{transcript.line_of.get(held[0], 0)}) but is judged under {profile.label}'s rules: "
                f"`agent: {owner.name}` in the suite (or --replaylab-agent) judges it as {owner.label} ran it"
            )
    return None


def abandoned_branches(transcript: Any, memo: Any = None) -> str | None:
    """What the file holds off the path pi resumes from (its last entry's), or None: a session
    whose leaf sits on a short branch replays that branch alone, and the report says what it left;
    a path that stops at a parent the file does not hold (an entry the loader skipped) says so."""
    off = transcript.abandoned_entries()
    if not off:
        return None
    path = transcript.leaf_path(memo)
    on_path = {entry.id for entry in path}
    users = sum(1 for entry in off if getattr(getattr(entry, "message", None), "role", None) == "user")
    leaf = path[-1] if path else None
    where = f"entry {leaf.id}, line {transcript.line_of.get(leaf.id, '?')}" if leaf is not None else "no entry"
    turns = f"{users} user turn{'' if users == 1 else 's'}"
    root = path[0] if path else None
    if root is not None and root.parent_id is not None:  # the chain stops at a parent the file does not hold
        return (
            f"the path from the file's last entry ({where}) stops at entry {root.id} (line "
            f"{transcript.line_of.get(root.id, '?')}), whose parent {root.parent_id} is not in the file (an entry "
            f"that could not be read, or a line lost; see the diagnostics): {len(off)} entries of the file "
            f"({turns}) are not on it and are not replayed"
        )
    if leaf is not None and leaf.type == "leaf" and leaf.parent_id in on_path:  # followed (`transcript.leaf_controls`)
        return (
            f"the file ends with an OpenClaw leaf control ({where}), which resumes the session at entry "
            f"{leaf.parent_id}: {len(off)} entries of the file ({turns}) are on the branch it left and are not replayed"
        )
    fork = next((entry.parent_id for entry in off if entry.parent_id in on_path), None)
    leaves = f"; an abandoned branch leaves it at entry {fork}" if fork else ""
    return (
        f"the file's last entry ({where}) is the leaf pi resumes from{leaves}: {len(off)} entries of the file "
        f"({turns}) are on abandoned branches and are not replayed"
    )


def cassette_missing(cassette: Path) -> Defect:
    return Defect.of(
        Code.CASSETTE_MISSING,
        f"no cassette next to the recording: {cassette.name}",
        expected=str(cassette),
        actual="missing",
    )


def unanswered_recorded_calls(
    baseline: RunTrace, recorded: RunTrace, cassette: Path, *, drifted: bool = False
) -> list[Defect]:
    """On the full window every call is the recorded one, so the cassette must answer it; a
    recorded call it cannot answer means the cassette is stale or belongs to another session.

    A call the recording never made with those arguments (a real model words its own, a replay
    that lost a value) is no cassette's to answer: where the baseline's drift is reported it is
    that drift's consequence and is left to it; otherwise it is reported as what it is."""
    unanswered = [c for turn in baseline.turns for c in turn.tool_calls if c.source in ("missing", "blocked")]
    if not unanswered:
        return []
    made = {_call_key(c.turn, c.tool, c.arguments) for turn in recorded.turns for c in turn.tool_calls}
    as_recorded: list[ToolCallTrace] = []
    not_recorded: list[ToolCallTrace] = []
    for call in unanswered:
        (as_recorded if _call_key(call.turn, call.tool, call.arguments) in made else not_recorded).append(call)
    if drifted:
        not_recorded = []
    defects = []
    if as_recorded:
        first = as_recorded[0]
        defects.append(
            Defect.of(
                Code.CASSETTE_MISSING,
                f"{cassette.name} has no recorded response for {len(as_recorded)} call(s) of the recording "
                f"(first: {first.tool} in turn {first.turn}); is it the cassette of another session?",
                turn=first.turn,
                tool_call_id=first.tool_call_id,
                tool=first.tool,
                expected=f"{cassette.name} answers every recorded call",
                actual=[c.tool for c in as_recorded[:10]],
            )
        )
    if not_recorded:
        first = not_recorded[0]
        defects.append(
            Defect.of(
                Code.CASSETTE_MISSING,
                f"the baseline made {len(not_recorded)} call(s) the recording never made with those arguments "
                f"(first: {first.tool} in turn {first.turn}{_differs_from(first, recorded)}), so {cassette.name} "
                "has no response for them and the baseline is not the recording's",
                turn=first.turn,
                tool_call_id=first.tool_call_id,
                tool=first.tool,
                expected="the recording's calls, which the cassette answers",
                actual=[{"tool": c.tool, "arguments": c.arguments} for c in not_recorded[:10]],
            )
        )
    return defects


def _call_key(turn: int, tool: str, arguments: dict[str, Any]) -> tuple[int, str]:
    return turn, call_key(tool, arguments)


def _differs_from(call: ToolCallTrace, recorded: RunTrace) -> str:
    """Where `call` differs from the recording's call of the same tool in its turn, if it made one."""
    same_tool = [c for t in recorded.turns if t.turn == call.turn for c in t.tool_calls if c.tool == call.tool]
    if not same_tool:
        return ", a tool the recording did not call in that turn"
    leaves = differences(same_tool[0].arguments, call.arguments)
    return f", differs from the recorded call at {leaves.paths()}" if leaves else ""


def expected_flag_defects(ledger: LedgerView | None, expect: Expectations) -> list[Defect]:
    """The recording's replaySafe and mutatedEventIds against the suite's expectations (none
    without a ledger: the recording never got that far)."""
    if ledger is None:
        return []
    defects = []
    if expect.replay_safe is not None and ledger.replay_safe != expect.replay_safe:
        defects.append(
            Defect.of(
                Code.REPLAY_FLAG_WRONG,
                "replaySafe of the recording differs from the suite's expectation",
                expected=expect.replay_safe,
                actual=ledger.replay_safe,
            )
        )
    if expect.mutated_event_ids is not None and ledger.mutated_event_ids != expect.mutated_event_ids:
        defects.append(
            Defect.of(
                Code.MUTATED_IDS_WRONG,
                "mutatedEventIds differ from the suite's expectation",
                expected=expect.mutated_event_ids,
                actual=ledger.mutated_event_ids,
            )
        )
    return defects


def deduplicated(defects: Iterable[Defect]) -> list[Defect]:
    """Each defect once: the same finding reached by two checks (a compactor's own and the
    pipeline's re-check, two repeats) is one defect, in the order first found."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for d in defects:
        key = (d.code, d.message, d.where.entry_id, d.where.turn, d.where.tool_call_id)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
