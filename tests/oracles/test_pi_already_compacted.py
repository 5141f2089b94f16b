"""pi 0.73.1's own `prepareCompaction` returns nothing when the leaf is a compaction, and so does
replaylab's compaction of a pi 0.73.1 item as the pipeline asks for it (`qa.setup.forced_past_guard`:
not forced past the guard), made the agent's refusal (`compactors.outcome.refused_as_pi`).

Without node or the oracle's npm install these tests skip with the reason (under CI=true they fail).
"""

from __future__ import annotations

import os

import pytest

from builders.transcripts import TOOL_CLASSES, helpdesk_session
from replaylab.agents import item_memo
from replaylab.compaction import CompactParams, compact
from replaylab.compactors.outcome import refused_as_pi, refused_by_agent
from replaylab.oracles.agent import AgentOracle, oracle_unavailable
from replaylab.qa.setup import forced_past_guard
from replaylab.transcript import TranscriptWriter
from replaylab.transcript.model import CompactionEntry
from replaylab.upstream.pi_0_73_1 import PROFILE

KEEP = 800
SMALL = dict(context_tokens=6_000, reserve_tokens_floor=1_000, keep_recent_tokens=KEEP, tool_classes=TOOL_CLASSES)


@pytest.fixture(scope="module")
def oracle():
    reason = oracle_unavailable(PROFILE)
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the pi 0.73.1 oracle is required under CI=true: {reason}")
        pytest.skip(reason)
    with AgentOracle(PROFILE) as running:
        yield running


@pytest.mark.parametrize("mode", ["auto", "safeguard", "manual"])
def test_pi_refuses_at_its_compaction_leaf_and_so_does_the_pipelines_compaction(oracle, tmp_path, mode):
    """auto keeps pi's own layout (the compaction is the leaf); safeguard and manual restate entries
    after it, which pi would keep before its entry: pi is asked at the compaction, replaylab at the
    leaf it wrote."""
    recording = helpdesk_session(8).write(tmp_path / "rec.jsonl")
    writer = TranscriptWriter.working_copy(recording, tmp_path / "copy.jsonl")
    memo = item_memo(PROFILE)
    params = CompactParams(session_file=str(writer.path), compaction_mode=mode, **SMALL)
    first = compact(params, writer=writer, memo=memo)
    assert first.success, first.error
    path = writer.transcript().leaf_path()
    compaction = next(e for e in reversed(path) if isinstance(e, CompactionEntry))
    view = oracle.view(writer.path, leaves=[compaction.id], keep_recent_tokens=[KEEP], messages=False)
    ((cut,),) = [w.cuts for w in view.windows]
    assert cut.refused == "already-compacted", cut

    again = compact(params.model_copy(update={"force_compact": forced_past_guard(memo)}), writer=writer, memo=memo)
    refused = refused_as_pi(again, path, PROFILE.label, memo)
    assert refused_by_agent(refused), refused.error
    assert writer.transcript().leaf_path()[-1].id == path[-1].id  # nothing appended
