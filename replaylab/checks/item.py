"""Checks of one item outside the diff of its two runs: the recording is valid, its cassette
answers it, the ledger is what the suite expects; and the de-duplication of what they all found."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from replaylab.defects import Code, Defect
from replaylab.diagnostics import InputError
from replaylab.replay.tools.pack_data import PackFailure
from replaylab.replay.trace import RunTrace
from replaylab.safety.ledger import LedgerView
from replaylab.suite import Expectations


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


def cassette_missing(cassette: Path) -> Defect:
    return Defect.of(
        Code.CASSETTE_MISSING,
        f"no cassette next to the recording: {cassette.name}",
        expected=str(cassette),
        actual="missing",
    )


def unanswered_recorded_calls(baseline: RunTrace, cassette: Path) -> list[Defect]:
    """On the full window every call is the recorded one, so the cassette must answer it; a call
    it cannot answer means the cassette is stale or belongs to another session."""
    missing = [c for turn in baseline.turns for c in turn.tool_calls if c.source in ("missing", "blocked")]
    if not missing:
        return []
    first = missing[0]
    return [
        Defect.of(
            Code.CASSETTE_MISSING,
            f"{cassette.name} has no recorded response for {len(missing)} call(s) of the recording "
            f"(first: {first.tool} in turn {first.turn}); is it the cassette of another session?",
            turn=first.turn,
            tool_call_id=first.tool_call_id,
            tool=first.tool,
            expected=f"{cassette.name} answers every recorded call",
            actual=[c.tool for c in missing[:10]],
        )
    ]


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
    seen: set[tuple] = set()
    out = []
    for d in defects:
        key = (d.code, d.message, d.where.entry_id, d.where.turn, d.where.tool_call_id)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
