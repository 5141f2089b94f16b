"""RECORDED_*: a compaction the recording itself holds is audited like replaylab's own — what it
summarized away, the identifiers it lost, a summary that wipes the memory — for every item,
exercised or not, in every report and in `replaylab inspect`. And a replay across one: what only
its summary holds, and a compaction point right after it, are no infrastructure errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from builders.transcripts import TOOL_CLASSES, Session
from replaylab.checks.recorded import audit_recorded_compactions
from replaylab.importers import import_sessions, write_session
from replaylab.qa.pipeline import run_item
from replaylab.qa.plan import RunOptions
from replaylab.report.html import render_html
from replaylab.report.markdown import render_markdown
from replaylab.report.merge import compute_totals
from replaylab.report.story import failure_story
from replaylab.results import RunMeta, RunReport
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.ledger import build_ledger
from replaylab.suite import load_suite
from replaylab.transcript import load_transcript

UNAVAILABLE = "Summary unavailable due to size limits"


def production_compaction(summary: str) -> Session:
    """Two writes (a cancel, a refund) in the first two turns, then a compaction written by a hook
    that keeps only the third turn, then a fourth turn."""
    s = Session()
    s.user("Turn 1: please cancel order #W1000001 for user mia_garcia_4501.")
    s.tool_turn("get_order", {"order_id": "#W1000001"}, '{"order_id": "#W1000001", "status": "pending"}')
    s.tool_turn("cancel_order", {"order_id": "#W1000001"}, '{"status": "cancelled", "refund_id": "9f86d081884c7d65"}')
    s.assistant("Order #W1000001 is cancelled (refund 9f86d081884c7d65).")
    s.user("Turn 2: and refund the shipping of #W1000001 too.")
    s.tool_turn("refund", {"order_id": "#W1000001", "amount": 12}, '{"status": "refunded"}')
    s.assistant("Refunded the shipping.")
    kept = s.user("Turn 3: what is the status now?")
    s.assistant("Cancelled and refunded.")
    s.raw(
        {
            "type": "compaction",
            "summary": summary,
            "firstKeptEntryId": kept,
            "tokensBefore": 182_222,
            "fromHook": True,
        }
    )
    s.user("Turn 4: thanks, anything else pending?")
    s.assistant("Nothing else is pending.")
    return s


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("recorded")
    (root / "source").mkdir()
    production_compaction(UNAVAILABLE).write(root / "source" / "unavailable.jsonl")
    production_compaction(
        "The user asked to cancel order #W1000001 (user mia_garcia_4501); it was cancelled with refund "
        "9f86d081884c7d65, and the shipping was refunded."
    ).write(root / "source" / "named.jsonl")
    for source in sorted((root / "source").glob("*.jsonl")):
        for session in import_sessions("pi", source):
            write_session(session, root / "recordings")
    (root / "recordings" / "tool_classes.json").write_text(json.dumps(TOOL_CLASSES))
    return root / "recordings"


def _audit(path: Path):
    transcript = load_transcript(path)
    classifier = ToolClassifier(TOOL_CLASSES)
    return audit_recorded_compactions(transcript, classifier, build_ledger(transcript, classifier))


def test_a_compaction_with_an_unavailable_summary_lost_both_writes_their_ids_and_the_memory(recordings: Path) -> None:
    (audit,) = _audit(recordings / "unavailable.jsonl")
    codes = [d.code.value for d in audit.defects]
    assert codes.count("RECORDED_MUTATION_DROPPED") == 2, codes
    assert "RECORDED_SUMMARY_INVALID" in codes and "RECORDED_IDENTIFIER_LOST" in codes
    assert all(d.severity == "blocking" for d in audit.defects)
    dropped = [d for d in audit.defects if d.code.value == "RECORDED_MUTATION_DROPPED"]
    assert [d.where.tool for d in dropped] == ["cancel_order", "refund"]
    # the ledger's classification rule goes with each finding about a mutating call, as for replaylab's own
    assert all(d.detail.get("classification") for d in dropped), [d.detail for d in dropped]
    lost = next(d for d in audit.defects if d.code.value == "RECORDED_IDENTIFIER_LOST")
    assert "9f86d081884c7d65" in lost.actual
    view = audit.view
    assert (view.tokens_before, view.from_hook, view.summary) == (182_222, True, "unavailable")
    assert [e.tool for e in view.summarized_events] == ["cancel_order", "refund"]
    assert view.line().startswith("compaction ") and "fromHook" in view.line() and "UNAVAILABLE" in view.line()


def test_a_summary_that_names_what_it_summarized_still_drops_the_writes_but_loses_no_identifier(
    recordings: Path,
) -> None:
    (audit,) = _audit(recordings / "named.jsonl")
    codes = sorted({d.code.value for d in audit.defects})
    assert codes == ["RECORDED_MUTATION_DROPPED"], codes
    cancel = audit.view.summarized_events[0]
    assert cancel.tool == "cancel_order" and cancel.named_in_summary == ["#W1000001"]
    assert "its summary still names '#W1000001'" in audit.defects[0].message
    assert audit.view.summary == "ok" and audit.view.lost_identifiers == 0


def test_an_item_not_exercised_still_fails_on_what_its_recording_lost(recordings: Path, tmp_path: Path) -> None:
    suite = tmp_path / "never.yaml"
    suite.write_text(
        f"name: never\nrecordings: {recordings}/unavailable.jsonl\ncompaction: {{mode: safeguard, contextTokens: 900000}}\n"
    )
    scenario = load_suite(suite).scenarios[0]
    result = run_item(scenario, recordings / "unavailable.jsonl", RunOptions(verify_with_pi="off"))
    assert result.outcome == "failed", result.reason
    assert result.reason.startswith("RECORDED_MUTATION_DROPPED: the recording's own compaction")
    assert "the scenario itself was not exercised: never crosses the budget" in result.reason
    assert result.compaction is None and len(result.recorded_compactions) == 1
    # the terminal's story counts the findings under their compaction's line instead of one block each
    story = failure_story(result)
    assert "compactions in the recording: 1" in story and "[blocking] RECORDED_" not in story
    assert "findings: RECORDED_IDENTIFIER_LOST 1, RECORDED_MUTATION_DROPPED 2, RECORDED_SUMMARY_INVALID 1" in story
    # the markdown and HTML reports show the compaction, with what it summarized away
    meta = RunMeta(replaylab_version="0", git_sha=None, model="replay", started_at="", python="3.11", argv=[])
    report = RunReport(meta=meta, items=[result], totals=compute_totals([result]))
    markdown = render_markdown(report)
    assert "### Compactions in the recordings (1)" in markdown and "fromHook" in markdown
    html = render_html(report)
    assert html.count('data-testid="recorded-compaction"') == 1 and "<code>cancel_order</code>" in html
    # tolerated, the same item is simply not exercised
    tolerant = tmp_path / "tolerant.yaml"
    tolerant.write_text(
        suite.read_text()
        + "expect: {tolerate: [RECORDED_MUTATION_DROPPED, RECORDED_IDENTIFIER_LOST, RECORDED_SUMMARY_INVALID]}\n"
    )
    scenario = load_suite(tolerant).scenarios[0]
    result = run_item(scenario, recordings / "unavailable.jsonl", RunOptions(verify_with_pi="off"))
    assert result.outcome == "skipped" and result.cause is not None and result.cause.key == "never-crosses-budget"


def test_inspect_names_each_recorded_compaction_and_exits_1_on_its_losses(recordings: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "inspect", str(recordings / "unavailable.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "compactions  1 in the recording" in done.stdout
    assert "RECORDED_SUMMARY_INVALID" in done.stdout and "tokensBefore 182,222" in done.stdout
    as_json = subprocess.run(
        [sys.executable, "-m", "replaylab.cli", "inspect", "--json", str(recordings / "named.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (report,) = json.loads(as_json.stdout)
    (compaction,) = report["recordedCompactions"]
    assert compaction["fromHook"] is True and len(compaction["summarizedEvents"]) == 2
    assert compaction["summarizedEvents"][0]["namedInSummary"] == ["#W1000001"]
    assert {f["code"] for f in compaction["findings"]} == {"RECORDED_MUTATION_DROPPED"}


def test_a_write_that_copies_what_only_a_later_recorded_summary_holds_replays_without_drift(tmp_path: Path) -> None:
    """The recording's agent refunds with `RFD-2208Q`, which only the summary of its own
    compaction holds (its summarizer wrote it). Replayed from a turn before that compaction, the
    baseline has no such summary: the value is the summarizer's text, as the agent's own would be,
    and is kept. It was marked lost instead, the refund blocked, and the item an error
    (BASELINE_DRIFT, and a CASSETTE_MISSING that named a cassette of another session)."""
    s = Session()
    s.user("Turn 1: look up order #W2000002 for user noah_kim_7710.")
    s.tool_turn("get_order", {"order_id": "#W2000002"}, '{"order_id": "#W2000002", "status": "delivered", "total": 12}')
    s.assistant("Order #W2000002 was delivered.")
    s.user("Turn 2: the item arrived broken.")
    s.tool_turn("search", {"query": "broken item policy"}, '{"policy": "refund the order total"}')
    s.assistant("Broken items are refunded in full.")
    kept = s.user("Turn 3: then please go ahead.")
    s.assistant("I will prepare the refund.")
    s.raw(
        {
            "type": "compaction",
            "summary": "noah_kim_7710 reported #W2000002 broken; the refund was prepared under RFD-2208Q.",
            "firstKeptEntryId": kept,
            "tokensBefore": 9_000,
            "fromHook": True,
        }
    )
    s.user("Turn 4: is it done?")
    s.tool_turn("refund", {"order_id": "#W2000002", "reference": "RFD-2208Q"}, '{"status": "refunded"}')
    s.assistant("Refunded under RFD-2208Q.")
    s.write(tmp_path / "source.jsonl")
    for session in import_sessions("pi", tmp_path / "source.jsonl"):
        write_session(session, tmp_path / "recordings")
    (tmp_path / "recordings" / "tool_classes.json").write_text(json.dumps(TOOL_CLASSES))
    [recording] = sorted((tmp_path / "recordings").glob("*.jsonl"))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"name: later\nrecordings: {recording}\ncompact_at: turn:2\n"
        "compaction: {mode: safeguard, contextTokens: 900000}\n"
        "expect: {tolerate: [RECORDED_MUTATION_DROPPED, RECORDED_IDENTIFIER_LOST, RECORDED_SUMMARY_INVALID]}\n"
    )
    result = run_item(load_suite(suite).scenarios[0], recording, RunOptions(verify_with_pi="off"))
    codes = sorted({d.code.value for d in result.defects})
    assert "BASELINE_DRIFT" not in codes and "CASSETTE_MISSING" not in codes, (codes, result.reason)
    assert result.outcome != "error", result.reason
    refunds = [c for turn in result.baseline.turns for c in turn.tool_calls if c.tool == "refund"]
    assert [(c.source, c.arguments) for c in refunds] == [
        ("cassette", {"order_id": "#W2000002", "reference": "RFD-2208Q"})
    ]


@pytest.mark.parametrize("mode", ["safeguard", "manual"])
def test_compact_at_a_turn_right_after_the_recordings_own_compaction_is_the_agents_refusal(
    recordings: Path, tmp_path: Path, mode: str
) -> None:
    """Turn 4 starts right after the recording's own compaction: pi 0.73.1 does not compact a
    history that ends in one (nothing new reached the model since; manual: `compact()` throws
    "Already compacted"). That is the agent declining the scenario, as when it finds nothing to
    summarize — not exercised, saying why and what to do — not an infrastructure error that told
    the user to set a `forceCompact` no suite has."""
    suite = tmp_path / "right-after.yaml"
    suite.write_text(
        f"name: right-after\nrecordings: {recordings}/named.jsonl\ncompact_at: turn:4\n"
        f"compaction: {{mode: {mode}, contextTokens: 900000}}\n"
        "expect: {tolerate: [RECORDED_MUTATION_DROPPED, RECORDED_IDENTIFIER_LOST, RECORDED_SUMMARY_INVALID]}\n"
    )
    result = run_item(load_suite(suite).scenarios[0], recordings / "named.jsonl", RunOptions(verify_with_pi="off"))
    assert result.agent == "pi@0.73.1"
    assert result.outcome == "skipped", (result.outcome, result.reason)
    assert "COMPACTION_FAILED" not in {d.code.value for d in result.defects}
    assert result.cause is not None and result.cause.key == "agent-refuses"
    assert "would not compact before turn 4: the history ends in the recording's own compaction" in result.reason
    assert "compact_at another turn" in result.reason and "forceCompact" not in result.reason


def test_a_recorded_compactions_findings_number_turns_as_the_items_agent_does(tmp_path: Path) -> None:
    """OpenClaw 2026.9.6 never shows a `custom` message marked `excludeFromContext` (a nested tool
    record, `convertToLlm`), so it starts no turn: the refund a recorded compaction summarized away
    is in turn 2, as the pipeline, `init` and `compact_at: turn:N` count, not in turn 3."""
    from replaylab.agents import item_memo
    from replaylab.replay import split_turns
    from replaylab.upstream.profiles import profile_named

    s = production_compaction(UNAVAILABLE)
    s.lines[0]["version"] = 4  # an OpenClaw 2026.9.6 header
    nested = {"role": "custom", "customType": "openclaw.nested-tool.v1", "display": True,
              "excludeFromContext": True, "content": "", "timestamp": 1775811600001}  # fmt: skip
    s.lines.insert(3, {"type": "message", "id": "nested", "parentId": s.lines[2]["id"],
                       "timestamp": "2026-04-10T09:00:01.500Z", "message": nested})  # fmt: skip
    s.lines[4]["parentId"] = "nested"
    transcript = load_transcript(s.write(tmp_path / "oc.jsonl"))
    classifier = ToolClassifier(TOOL_CLASSES)
    profile = profile_named("openclaw@2026.9.6")
    memo = item_memo(profile)
    turns = split_turns(transcript.leaf_path(memo), memo, agent=profile)
    refund_turn = next(
        t.index + 1 for t in turns for e in t.steps if "refund" in [c.name for c in e.message.tool_calls()]
    )
    (audit,) = audit_recorded_compactions(transcript, classifier, build_ledger(transcript, classifier), memo)
    dropped = {d.where.tool: d.where.turn for d in audit.defects if d.code.value == "RECORDED_MUTATION_DROPPED"}
    assert refund_turn == 2 and dropped == {"cancel_order": 1, "refund": 2}
