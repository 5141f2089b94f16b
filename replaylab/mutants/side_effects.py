"""Replay safety: a repeated side effect, a write declared read, and wrong replay flags."""

from __future__ import annotations

from typing import Any

from replaylab.defects import Code
from replaylab.safety.classify import ToolClassifier
from replaylab.selftest import Mutant
from replaylab.transcript.model import MessageEntry
from replaylab.transcript.pairing import message_calls

from ._kit import Ctx, edited


def _retry_send(ctx: Ctx) -> str | None:
    """The compaction timed out and was retried; the retry replayed the turn that had already
    sent, so the send runs again (a new call, same tool and arguments) where pi shows it. Both
    sends are in what pi shows."""
    results = ctx.result_entries()
    for entry in reversed(ctx.path):
        if not (isinstance(entry, MessageEntry) and ctx.is_mutating_call_entry(entry)):
            continue
        calls = [c for c in message_calls(entry.message) if ctx.classifier.is_mutating(c.name, c.arguments)]
        call = next((c for c in calls if c.id in results), None)
        if call is None:
            continue
        result = results[call.id]
        retry_id = f"{call.id}-retry"
        message = entry.message.model_copy(update={"content": [call.model_copy(update={"id": retry_id})]})
        answer = result.message.model_copy(update={"tool_call_id": retry_id})
        ctx.show(
            [
                entry.model_copy(update={"id": f"{entry.id}r", "message": message}),
                result.model_copy(update={"id": f"{result.id}r", "message": answer}),
            ]
        )
        return f"{call.name} ({call.id}) sent again by the compaction retry as {retry_id}"
    return None


DUPLICATE = Mutant(
    name="duplicate-send-after-compaction-retry",
    issue="openclaw/openclaw#126707 (#84139, #74370)",
    expected=(Code.DUPLICATE_SIDE_EFFECT,),
    what="a compaction retry replays the turn: the send that already ran runs again",
    compactor=edited(_retry_send),
)


#: tools this process's classifier override declared read, and the classifier before (for `applies`)
_MISLABELLED: set[str] = set()
_ORIGINAL: list[ToolClassifier] = []


def _declare_writes_read(classifier: ToolClassifier) -> ToolClassifier:
    """Every tool declared `write` is declared `read` instead (a copy-paste in tool_classes.json)."""
    names = {n for n, c in classifier.declared.items() if c == "write"} | {
        n for n, decide in classifier.deciders.items() if _decides_write(decide)
    }
    _MISLABELLED.update(names)
    _ORIGINAL[:] = [classifier]
    return ToolClassifier(
        {**classifier.declared, **dict.fromkeys(names, "read")},
        {n: d for n, d in classifier.deciders.items() if n not in names},
        overrides=classifier.overrides,  # the suite's own classification still applies
    )


def _decides_write(decide: Any) -> bool:
    try:
        return bool(decide({}) == "write" or decide({"action": "add"}) == "write")
    except Exception:
        return False


def _calls_mislabelled(result: Any) -> bool:
    """A replayed call of a mislabelled tool that really writes (by the original classes)."""
    original = _ORIGINAL[0] if _ORIGINAL else ToolClassifier()
    return any(
        c.tool in _MISLABELLED and original.is_mutating(c.tool, c.arguments)
        for t in (result.baseline.turns if result.baseline else [])
        for c in t.tool_calls
    )


MISLABELLED = Mutant(
    name="write-tool-mislabelled-read",
    issue="DESIGN §5 evidence check (tau2 `mutates_state` declared, never verified)",
    expected=(Code.MISLABELLED_TOOL,),
    what="the tool classes declare the write tools `read`: nothing protects them, replay would run them",
    classifier_override=_declare_writes_read,
    applies=_calls_mislabelled,
    needs="a replayed call of a declared write tool whose cassette shows its HTTP write",
)


def _replay_safe_true(ctx: Ctx) -> str | None:
    if ctx.result.replay_safe:
        return None
    ctx.result.replay_safe = True
    ctx.ours["replaySafe"] = True
    return f"replaySafe left true although {len(ctx.result.mutated_event_ids)} mutating event(s) ran"


REPLAY_SAFE = Mutant(
    name="replay-safe-left-true",
    issue="openclaw replay-state.ts `replaySafe` (QA scenario compaction-retry-mutating-tool)",
    expected=(Code.REPLAY_FLAG_WRONG,),
    what="replaySafe stays true after a write",
    compactor=edited(_replay_safe_true),
)


def _drop_child_ids(ctx: Ctx) -> str | None:
    ids = list(ctx.result.mutated_event_ids)
    kept = [i for i in ids if ":" not in i]  # qualified ids `<childSession>:<toolCallId>` are sub-agents'
    if kept == ids:
        return None
    ctx.result.mutated_event_ids = kept
    ctx.ours["mutatedEventIds"] = kept
    return f"{len(ids) - len(kept)} sub-agent event id(s) left out of mutatedEventIds"


SUBAGENT = Mutant(
    name="subagent-write-missing-from-mutated-ids",
    issue="openclaw sessions_spawn side effects (replay-state.ts hadPotentialSideEffects)",
    expected=(Code.MUTATED_IDS_WRONG,),
    what="mutatedEventIds lists the main session's writes but not the sub-agent's",
    compactor=edited(_drop_child_ids),
    needs="a sub-agent that mutated",
)

MUTANTS = [DUPLICATE, MISLABELLED, REPLAY_SAFE, SUBAGENT]
