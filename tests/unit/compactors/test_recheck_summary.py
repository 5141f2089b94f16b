"""SUMMARY_INVALID judges a wiped summary only where the item's agent finds a real conversation
to summarize, by that agent's own rule (`AgentProfile.real_conversation`)."""

from __future__ import annotations

from typing import Any

import pytest

from replaylab.agents import item_memo
from replaylab.compaction.summary.fallback import build_structured_fallback_summary
from replaylab.compactors.recheck import summary_defects
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import MESSAGE_ADAPTER, CompactionEntry
from replaylab.upstream.profiles import profile_named


def _message(obj: dict[str, Any]) -> Any:
    return MESSAGE_ADAPTER.validate_python(obj)


#: a shown custom message: real to OpenClaw 2026.9.6, which reads custom messages; OpenClaw
#: 2026.4.12's rule (every other profile's) reads users and assistants only
CUSTOM = {"role": "custom", "customType": "note", "content": "The deploy finished.", "display": True, "timestamp": 1}
#: a punctuated silent reply: OpenClaw 2026.9.6 strips the punctuation and finds only `NO_REPLY`;
#: OpenClaw 2026.4.12 reads text other than the bare token as meaningful
SILENT = {"role": "user", "content": "NO_REPLY.", "timestamp": 1}


def _wiped(span: dict[str, Any], agent: str) -> list[str]:
    """The codes for a compaction of `span` alone whose summary is the fixed fallback (an empty
    skeleton), judged under `agent`'s rules."""
    entry = CompactionEntry(id="c1", parent_id="e1", summary=build_structured_fallback_summary(None))
    before = [WindowMessage("e1", _message(span))]
    after = [WindowMessage("c1", _message({"role": "compactionSummary", "summary": entry.summary, "timestamp": 2}))]
    memo = item_memo(profile_named(agent))
    return [d.code.value for d in summary_defects(entry, before, after, [entry], None, memo)]


@pytest.mark.parametrize(
    ("span", "agent", "wiped"),
    [
        (CUSTOM, "openclaw@2026.9.6", True),
        (CUSTOM, "pi@0.73.1", False),
        (CUSTOM, "pi@1.6.0", False),
        (SILENT, "openclaw@2026.9.6", False),
        (SILENT, "pi@0.73.1", True),
    ],
)
def test_a_fallback_summary_wipes_the_memory_only_where_the_items_agent_finds_a_real_conversation(
    span: dict[str, Any], agent: str, wiped: bool
) -> None:
    assert (_wiped(span, agent) == ["SUMMARY_INVALID"]) is wiped
