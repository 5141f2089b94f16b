"""One finding per mutating event through the whole pipeline: the auto negative control's
MUTATION_DROPPED findings are its lost side effects, each once, located at its call with both
entries, the turn, the tool and the arguments — not one row for the call and another for its
result."""

from __future__ import annotations

import pytest

from replaylab.defects import Code
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.suite import load_suite
from repo_paths import REPO_ROOT

REPO = REPO_ROOT


@pytest.fixture(scope="module")
def auto_results():
    suite = load_suite(REPO / "suites" / "auto.yaml")
    (scenario,) = suite.scenarios
    return {recording.stem: run_item(scenario, recording, RunOptions()) for recording in suite.recordings}


def _lost_in_first_compaction(result):
    """Tool call ids of the ledger's events that the window showed before the first compaction and
    that are missing from it afterwards (the auto mode writes no copies in their place)."""
    before = {w.entry_id for w in result.window_before}
    after = {w.entry_id for w in result.window_after}
    return {
        e.tool_call_id
        for e in result.ledger_before.events
        if any(i in before and i not in after for i in (e.entry_id, e.result_entry_id) if i)
    }


def test_auto_negative_control_counts_each_dropped_event_once(auto_results):
    total = 0
    for name, result in auto_results.items():
        dropped = [d for d in result.defects if d.code == Code.MUTATION_DROPPED]
        ids = [d.where.tool_call_id for d in dropped]
        assert len(ids) == len(set(ids)), f"{name}: an event reported twice: {ids}"
        lost = _lost_in_first_compaction(result)
        if result.compaction is not None and result.compaction.compactions == 1:
            assert set(ids) == lost, name
        else:  # a later compaction can drop more than the first one did
            assert lost <= set(ids), name
        events = {e.tool_call_id: e for e in result.ledger_before.events}
        for d in dropped:
            assert d.where.entry_id == d.detail["call_entry_id"] and d.detail["result_entry_id"], name
            assert d.where.turn is not None and d.detail["arguments"] and d.where.tool, name
            assert set(d.detail["dropped"]) <= {d.detail["call_entry_id"], d.detail["result_entry_id"]}, name
            if d.where.tool_call_id in lost:  # a later compaction's entries are the replay's, not the recording's
                event = events[d.where.tool_call_id]
                assert (event.entry_id, event.result_entry_id, event.tool) == (
                    d.detail["call_entry_id"],
                    d.detail["result_entry_id"],
                    d.where.tool,
                ), name
        total += len(dropped)
    # the run the finding was reported on: 41 rows for these events, one per entry
    assert total == 21


def test_parallel_calls_of_one_message_are_separate_findings(auto_results):
    """parallel-order-overview: two ticket notes made in one assistant message are two events,
    both at that message's entry, each with its own result entry."""
    result = auto_results["parallel-order-overview"]
    dropped = [d for d in result.defects if d.code == Code.MUTATION_DROPPED]
    by_entry: dict[str, list] = {}
    for d in dropped:
        by_entry.setdefault(d.where.entry_id, []).append(d)
    (shared,) = [group for group in by_entry.values() if len(group) > 1]
    assert len({d.where.tool_call_id for d in shared}) == len(shared) == 2
    assert len({d.detail["result_entry_id"] for d in shared}) == 2
    assert shared[0].detail["arguments"] != shared[1].detail["arguments"]


def test_every_report_counts_events(auto_results):
    """Totals, markdown and HTML count one defect per event: as a negative control the 21 are
    expected; with the expectation removed they are 21 unexpected blocking defects, not 41."""
    from replaylab.report.counts import terminal_summary
    from replaylab.report.html import render_html
    from replaylab.report.markdown import render_markdown
    from replaylab.report.run import build_report
    from replaylab.results import RunMeta

    meta = RunMeta(replaylab_version="test")
    items = list(auto_results.values())
    expected = build_report(items, meta)
    assert expected.totals.defects_by_code == {"MUTATION_DROPPED": 21} and expected.totals.blocking_defects == 0
    assert expected.totals.expected_defects == 21
    assert "| 0 | 21 |" in render_markdown(expected)  # unexpected blocking, expected by negative controls
    assert "Found as their suites expect: 21 expected findings of negative controls" in render_markdown(expected)
    assert "Expected findings of negative controls (" in render_html(expected)
    assert terminal_summary(expected.totals).endswith(
        "0 unexpected blocking defects; 21 expected findings of negative controls (as their suites expect)"
    )
    unexpected = build_report([i.model_copy(update={"expected_defects": []}) for i in items], meta)
    assert unexpected.totals.blocking_defects == 21
    assert "21 unexpected blocking defects" in render_markdown(unexpected)
    assert "<b>21</b>unexpected blocking defects" in render_html(unexpected)
