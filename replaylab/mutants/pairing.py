"""Tool-call / tool-result pairing broken by compaction: the orphan-result bug class."""

from __future__ import annotations

from typing import TYPE_CHECKING

from replaylab.compaction import CompactParams, CompactResult
from replaylab.defects import Code
from replaylab.selftest import Mutant
from replaylab.transcript.model import AssistantMessage, MessageEntry, ToolResultMessage
from replaylab.transcript.pairing import message_calls

from ._kit import Ctx, edited, latest_compaction_in, orphan_cut

if TYPE_CHECKING:
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.writer import TranscriptWriter


def _orphan_after_abort(ctx: Ctx) -> str | None:
    return orphan_cut(ctx)


ORPHAN_AFTER_ABORT = Mutant(
    name="orphan-result-after-aborted-call",
    issue="openclaw/openclaw#7527 (#8525, #4739)",
    expected=(Code.PAIR_BROKEN,),
    what="the kept tail starts at a tool result whose call (aborted mid tool_use, or any unprotected one) "
    "was summarized away: the result survives, its tool_use does not",
    compactor=edited(_orphan_after_abort),
)


def _chained_orphan(ctx: Ctx) -> str | None:
    """Only on a chained compaction (an earlier compaction on the path): the new boundary leaves
    an orphan tool result from the part after the previous compaction."""
    previous = latest_compaction_in(ctx.path)
    if previous is None:
        return None
    note = orphan_cut(ctx, after_index=ctx.index()[previous.id])
    return f"chained compaction after {previous.id}: {note}" if note else None


CHAINED_ORPHAN = Mutant(
    name="chained-compaction-orphan",
    issue="earendil-works/pi#6832 (regression of #4570 / #1764)",
    expected=(Code.PAIR_BROKEN,),
    what="a second (chained) compaction cuts after a tool call, so its result survives without the call",
    compactor=edited(_chained_orphan),
)


def _mid_pair(
    params: CompactParams, *, classifier: ToolClassifier | None = None, writer: TranscriptWriter | None = None
) -> CompactResult:
    """The compaction is appended while the last tool call of the path is still in flight: its
    leaf is the assistant message with the call, so the result lands after the compaction and the
    window right after it holds the call without its result."""
    from replaylab.transcript import load_transcript

    path = load_transcript(params.session_file).path_to(params.leaf_id)
    answered = {
        e.message.tool_call_id for e in path if isinstance(e, MessageEntry) and isinstance(e.message, ToolResultMessage)
    }
    in_flight = next(
        (
            e
            for e in reversed(path)
            if isinstance(e, MessageEntry)
            and isinstance(e.message, AssistantMessage)
            and e.message.stop_reason not in ("error", "aborted")
            and any(c.id in answered for c in message_calls(e.message))
        ),
        None,
    )
    if in_flight is None or in_flight.id == path[-1].id:
        return edited(lambda ctx: None)(params, classifier=classifier, writer=writer)
    early = params.model_copy(update={"leaf_id": in_flight.id, "force_compact": True})
    compactor = edited(lambda ctx: f"compaction appended after call {in_flight.id}, before its result")
    return compactor(early, classifier=classifier, writer=writer)


MID_PAIR = Mutant(
    name="compaction-between-call-and-result",
    issue="earendil-works/pi#8667 (openclaw#93320)",
    expected=(Code.PAIR_BROKEN,),
    what="compaction appended while a tool call is in flight: the compaction entry sits between the "
    "toolCall and its toolResult",
    compactor=_mid_pair,
)

MUTANTS = [ORPHAN_AFTER_ABORT, MID_PAIR, CHAINED_ORPHAN]
