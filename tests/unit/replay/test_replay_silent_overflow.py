"""A finished reply whose usage exceeds the window (a silent overflow) in the replay's recovery
chain: OpenClaw 2026.9.6 keeps it; pi compacts in the attempt and asks again (the path the chain
runs where its rules say so, here `PI_SILENT`, or where the seeded `retry_silent_overflow` fault
makes it), and a compaction in the attempt may time out."""

from __future__ import annotations

import pytest

from replaylab.transcript.model import message_text
from replaylab.upstream.pi_0_73_1 import PI_OVERFLOW_RECOVERY_FAILED_TEXT
from replaylab.upstream.runtime_rules import OPENCLAW_2026_9_6
from unit.replay.test_replay_overflow import PI_SILENT, _run, _session, _summary_compactor, _violations


def test_2026_9_6_keeps_a_finished_reply_over_the_window(tmp_path):
    """OpenClaw 2026.9.6 reads no `stop` reply as an overflow: `AgentSession.checkCompaction` enters
    overflow recovery only for an `error` or `length` reply, and the run loop hands
    `recoverEmbeddedRunOverflow` only such a reply. The reply stands, nothing is compacted or asked
    again; a chain that handles it as pi does (the seeded fault) is caught."""
    calls: list = []
    path = _session(tmp_path, paste=2_400, doc=None)
    trace, _ = _run(path, 1_000, OPENCLAW_2026_9_6, _summary_compactor(calls), overflow="usage")
    assert "in_attempt_compaction" not in [s.kind for c in trace.recovery for s in c.steps]
    assert calls == [] and all(c.gave_up is None for c in trace.recovery)
    (answer,) = trace.turns[1].assistant_messages
    assert answer["usage"]["input"] > 1_000 and trace.turns[1].answer == "Noted."
    faulty, _ = _run(
        path,
        1_000,
        OPENCLAW_2026_9_6,
        _summary_compactor([]),
        overflow="usage",
        faults=frozenset({"retry_silent_overflow"}),
    )
    assert _violations(faulty, OPENCLAW_2026_9_6) == [
        "compacted and asked again for a finished reply over the window, which openclaw@2026.9.6 keeps"
    ]


def test_a_silent_overflow_is_compacted_in_the_attempt_and_the_step_answered_again(tmp_path):
    calls: list = []
    # turn 2's answer is over the window: its usage says so, the provider said nothing
    path = _session(tmp_path, paste=2_400, doc=None)
    trace, _ = _run(path, 1_000, PI_SILENT, _summary_compactor(calls), overflow="usage")
    assert [s.kind for s in trace.recovery[0].steps] == ["in_attempt_compaction"]
    step = trace.recovery[0].steps[0]
    assert step.trigger == "overflow" and step.tokens_before > 1_000 >= step.tokens_after
    # the overflowed answer was discarded: the turn holds the one answered on the compacted window
    assert [m["usage"]["input"] for m in trace.turns[1].assistant_messages] == [step.tokens_after]
    assert trace.turns[1].answer == "Noted." and calls == [("overflow", calls[0][1])]


def test_after_an_in_attempt_compaction_the_run_loop_retries_without_compacting_again(tmp_path):
    calls: list = []
    path = _session(tmp_path, paste=2_400, doc=None)
    trace, _ = _run(path, 1_000, PI_SILENT, _summary_compactor(calls, helps=False), overflow="usage")
    chain = trace.recovery[0]
    kinds = [s.kind for s in chain.steps]
    assert kinds[:3] == ["in_attempt_compaction", "overflow", "retry_after_in_attempt_compaction"]
    assert chain.steps[1].detail == PI_OVERFLOW_RECOVERY_FAILED_TEXT
    assert "overflow_compaction" not in kinds and "compaction_failed" not in kinds
    # pi compacts once in each attempt; the run loop counts three retries, then gives up
    assert kinds.count("retry_after_in_attempt_compaction") == 3 == chain.overflow_compactions
    assert kinds.count("in_attempt_compaction") == chain.attempts == 4 and chain.gave_up == "context_overflow"


def test_an_in_attempt_compaction_that_did_not_happen_leaves_the_compaction_to_the_run_loop(tmp_path):
    calls: list = []
    path = _session(tmp_path, paste=2_400, doc=None)
    trace, _ = _run(path, 1_000, PI_SILENT, _summary_compactor(calls, succeed=False), overflow="usage")
    kinds = [s.kind for s in trace.recovery[0].steps]
    assert kinds[:3] == ["in_attempt_compaction", "overflow", "compaction_failed"]
    assert "retry_after_in_attempt_compaction" not in kinds and kinds[-1] == "give_up"


@pytest.mark.parametrize("fault", [None, "mid_compaction_snapshot"])
def test_after_a_timeout_during_compaction_the_run_goes_on_from_the_pre_compaction_snapshot(tmp_path, fault):
    """pi's compaction in the attempt (a silent overflow) times out: the attempt ends timed out
    during compaction, the run loop does not compact again, and the run goes on from OpenClaw's
    pre-compaction snapshot (selectCompactionTimeoutSnapshot) — the window before the compaction,
    not the summary the compaction left. A chain that takes its snapshot mid-compaction (the
    seeded fault) goes on from the summary, and the checks catch it."""
    calls: list = []
    path = _session(tmp_path, paste=2_400, doc=None)
    faults = frozenset({fault}) if fault else frozenset()
    compactor = _summary_compactor(calls)
    restored: list = []
    trace, window = _run(
        path,
        1_000,
        PI_SILENT,
        compactor,
        overflow="usage",
        faults=faults,
        compaction_timeout=True,
        restore_session=lambda snapshot: restored.append(list(snapshot)),
    )
    (chain,) = trace.recovery
    assert [s.kind for s in chain.steps] == ["in_attempt_compaction", "compaction_timeout"]
    assert calls == [("overflow", calls[0][1])]  # one compaction, in the attempt; none after the timeout
    assert chain.gave_up == "timeout" and chain.attempts == 1
    timeout = chain.steps[1]
    assert timeout.detail == "pre-compaction" and timeout.tokens_before > 1_000
    summaries = [w for w in window if "Summary:" in message_text(w.message)]
    violations = _violations(trace, PI_SILENT)
    if fault is None:
        assert timeout.tokens_after == timeout.tokens_before and summaries == [] and violations == []
        assert len(window) == calls[0][1]  # the window as the compaction found it
        assert restored == [window]  # the working copy goes back to where that window was written
    else:
        assert restored == []
        assert timeout.tokens_after < timeout.tokens_before and summaries
        assert violations == [
            f"after a timeout during compaction the run went on from a snapshot taken mid-compaction "
            f"({timeout.tokens_after:,} tokens; the window before the compaction held {timeout.tokens_before:,})"
        ]


@pytest.mark.parametrize("fault", [None, "mid_compaction_snapshot"])
def test_a_compaction_timeout_in_the_pipeline_is_reported_and_a_mid_compaction_snapshot_caught(tmp_path, fault):
    """`context_window: {overflow: usage, compaction_timeout: true}` on a bundled session, the chain
    handling a silent overflow as pi does (`retry_silent_overflow`: 2026.9.6 itself keeps the reply,
    so nothing would compact in the attempt): the turn whose first request overflows silently times
    out in pi's compaction (OVERFLOW_GAVE_UP, kind timeout); with the seeded snapshot fault the run
    goes on from the compacted window — RECOVERY_CHAIN_WRONG, for that as well."""
    import shutil

    from replaylab.defects import Code
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.suite import load_suite
    from repo_paths import REPO_ROOT

    name = "refund-cracked-headphones"
    (tmp_path / "recordings").mkdir()
    for suffix in (".jsonl", ".cassette.yaml"):
        shutil.copy(REPO_ROOT / "recordings" / "helpdesk" / f"{name}{suffix}", tmp_path / "recordings")
    shutil.copytree(REPO_ROOT / "examples", tmp_path / "examples")
    faults = f", faults: [retry_silent_overflow{', ' + fault if fault else ''}]"
    (tmp_path / "suite.yaml").write_text(
        f"name: s\nrecordings: recordings/{name}.jsonl\ntools: examples.helpdesk\nmodel: replay\n"
        "agent: openclaw@2026.9.6\ncompaction: {mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, "
        f"keepRecentTokens: 500}}\ncompact_at: turn:3\n"
        f"context_window: {{tokens: 1800, overflow: usage, compaction_timeout: true{faults}}}\n",
        encoding="utf-8",
    )
    scenario = load_suite(tmp_path / "suite.yaml").scenarios[0]
    result = run_item(scenario, tmp_path / "recordings" / f"{name}.jsonl", RunOptions())
    timed_out = [c for c in result.compacted.recovery if c.gave_up == "timeout"]
    assert timed_out and all([s.kind for s in c.steps][-1] == "compaction_timeout" for c in timed_out)
    assert Code.OVERFLOW_GAVE_UP in [d.code for d in result.defects]
    wrong = [d.message for d in result.defects if d.code == Code.RECOVERY_CHAIN_WRONG]
    assert wrong and all("finished reply over the window" in m or "mid-compaction" in m for m in wrong)
    assert any("mid-compaction" in m for m in wrong) == (fault is not None)
