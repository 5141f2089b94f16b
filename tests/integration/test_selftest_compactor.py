"""`replaylab selftest --compactor SPEC`: the seeded mutants break the output of the user's
compactor instead of replaylab's own, and replaylab's checks must catch them there.

The baseline row is the user's compactor unmodified (itself a check of it: the honest node
compactor of tests/compactors, given the helpdesk write tools, does not count `sessions_spawn`
as one and summarizes away the spawn of a writing sub-agent; pi's own compaction protects nothing). A mutant that finds nothing to break in that compactor's output (its cut leaves no tool
result to orphan, it already claims replaySafe) is `n/a` with the reason, not missed; a defect
the baseline already shows on a session catches no mutant there."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from replaylab.cli import main
from replaylab.compactors.spec import CommandCompactor, OpenClawCompactor, PiCompactor, PythonCompactor
from replaylab.selftest import BASELINE, NOTHING_TO_BREAK, load_mutants, run_selftest
from replaylab.suite import load_suite
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
NODE_COMPACTOR = REPO / "tests" / "compactors" / "compactor.mjs"
WRITES = "issue_refund,update_address,create_ticket,send_email,escalate_ticket,cancel_order,ticket_note"
NODE = CommandCompactor(command=["node", str(NODE_COMPACTOR), "--writes", WRITES, "--read-actions", "list,read"])
#: test_mutants' covering sessions but the sub-agent's (the node compactor does not protect its spawn)
SESSIONS = [
    "refund-approval-pending",
    "handbook-damaged-in-transit",
    "early-identifier-address-change",
    "cancel-two-orders",
    "parallel-order-overview",
]
#: n/a on the node compactor's output, and why
NODE_NOT_APPLICABLE = {
    "thinking-signature-stripped": "signed thinking block",  # helpdesk sessions have none
    "subagent-write-missing-from-mutated-ids": "sub-agent",  # none of these sessions has one
    # its second compaction cuts right after the first: no tool result between them to orphan
    "chained-compaction-orphan": NOTHING_TO_BREAK,
}
OWN_ONLY_MUTANT = """
from replaylab.compaction import compact
from replaylab.defects import Code
from replaylab.selftest import Mutant, applied


def _bookkeeping(params, *, classifier=None, writer=None):
    return applied(compact(params, classifier=classifier, writer=writer), "edits replaylab's bookkeeping")


MUTANTS = [
    Mutant(
        name="own-bookkeeping",
        issue="-",
        expected=(Code.PAIR_BROKEN,),
        what="nothing another compactor writes",
        compactor=_bookkeeping,
        own_compactor_only="edits details.replaylab, which another compactor's entry does not have",
    )
]
"""


def _items(names: list[str]) -> list:
    suite = load_suite(REPO / "suites" / "safeguard.yaml")
    return [(suite.scenarios[0], r) for r in suite.recordings if r.name.removesuffix(".jsonl") in names]


def _row(report, name: str):
    return next(r for r in report.rows if r.mutant == name)


@pytest.fixture(scope="module")
def node_score():
    return run_selftest(_items(SESSIONS), compactor=NODE, cwd=REPO, jobs=2)


def test_the_honest_node_compactor_is_a_clean_baseline(node_score) -> None:
    baseline = node_score.rows[0]
    assert node_score.compactor == NODE.name() and baseline.mutant == BASELINE
    assert baseline.status == "clean" and baseline.sessions == len(SESSIONS), baseline.missed_on
    assert NODE.name() in baseline.what


def test_every_mutant_that_finds_something_in_node_output_is_caught(node_score) -> None:
    not_applicable = {r.mutant: r.needs for r in node_score.rows if r.status == "n/a"}
    assert set(not_applicable) == set(NODE_NOT_APPLICABLE)
    for name, why in NODE_NOT_APPLICABLE.items():
        assert why in (not_applicable[name] or ""), (name, not_applicable[name])
    scored = [r for r in node_score.rows[1:] if r.status != "n/a"]
    assert len(scored) == len(load_mutants()) - len(NODE_NOT_APPLICABLE)
    for row in scored:
        assert row.status == "caught" and row.caught >= 1 and set(row.expected) & set(row.codes), row
    assert node_score.ok


def test_protection_mutants_break_what_the_node_compactor_kept(node_score) -> None:
    """The node entry has no replaylab bookkeeping: what it protected is what its cut kept (the
    writes and the refusal awaiting approval), and the mutants drop or rewrite exactly that: one
    dropped event for each session holding a kept call that awaits approval."""
    pending = _row(node_score, "pending-confirmation-compacted-away")
    assert pending.caught == pending.applied >= 1 and pending.codes == {"MUTATION_DROPPED": pending.applied}
    truncated = _row(node_score, "mutating-result-truncated")
    assert truncated.caught == truncated.applied >= 1 and set(truncated.codes) == {"MUTATION_ALTERED"}


def test_the_node_compactor_does_not_protect_a_sub_agents_writes() -> None:
    """The baseline row checks the compactor itself: node's --writes list does not name
    `sessions_spawn`, so the call that spawned the writing sub-agent is summarized away, and its
    replaySafe / mutatedEventIds leave the sub-agent's writes out."""
    report = run_selftest(_items(["security-lockout"]), compactor=NODE, cwd=REPO, only=["empty-skeleton-summary"])
    baseline = report.rows[0]
    assert baseline.status == "BLOCKING" and not report.ok
    assert {"MUTATION_DROPPED", "MUTATED_IDS_WRONG", "REPLAY_FLAG_WRONG"} <= set(baseline.codes)
    assert baseline.missed_on[0].startswith("security-lockout.jsonl: ")
    # a baseline defect catches no mutant: the summary mutant is caught on its own code only
    row = _row(report, "empty-skeleton-summary")
    assert row.status == "caught" and "SUMMARY_INVALID" in row.codes


def test_a_python_compactor_is_put_under_test_by_its_import_path() -> None:
    """`delegating` appends replaylab's own entry: as another compactor's, its protection is still
    read off its cut, and the mutants that break it are caught."""
    only = ["pending-confirmation-compacted-away", "mutating-result-truncated", "replay-safe-left-true"]
    spec = PythonCompactor(python="compactors.python_compactors:delegating")
    report = run_selftest(_items(["refund-approval-pending"]), compactor=spec, cwd=REPO, only=only, jobs=1)
    assert report.compactor == "python:compactors.python_compactors:delegating"
    assert report.rows[0].status == "clean", report.rows[0].missed_on
    assert [r.status for r in report.rows[1:]] == ["caught"] * 3, [(r.mutant, r.missed_on) for r in report.rows]


def test_a_mutant_that_needs_replaylabs_own_compactor_is_not_applicable_under_another(tmp_path: Path) -> None:
    (tmp_path / "own.py").write_text(OWN_ONLY_MUTANT, encoding="utf-8")
    items = _items(["cancel-two-orders"])
    theirs = run_selftest(items, mutants_dir=tmp_path, compactor=NODE, cwd=REPO, jobs=1)
    assert theirs.rows[1].status == "n/a" and "details.replaylab" in (theirs.rows[1].needs or "")
    assert theirs.rows[1].applied == 0 and theirs.ok
    ours = run_selftest(items, mutants_dir=tmp_path, jobs=1)  # replaylab's own: it runs, and changes nothing
    assert ours.rows[1].status == "MISSED" and ours.rows[1].applied == 1


def test_pis_own_compaction_is_blocking_where_it_summarizes_writes(pi) -> None:
    """pi's compaction protects nothing: on a session with writes before its cut the baseline is
    BLOCKING (writes summarized away, pi's default replaySafe true) — the finding. Mutants are still
    caught on codes the baseline does not show; the ones whose bug pi already has are n/a."""
    only = ["orphan-result-after-aborted-call", "replay-safe-left-true", "tool-groups-merged"]
    report = run_selftest(_items(["cancel-two-orders"]), compactor=PiCompactor(), cwd=REPO, only=only)
    baseline = report.rows[0]
    assert report.compactor == "pi" and baseline.status == "BLOCKING" and not report.ok
    assert {"MUTATION_DROPPED", "REPLAY_FLAG_WRONG"} <= set(baseline.codes)
    assert _row(report, "orphan-result-after-aborted-call").status == "caught"
    assert _row(report, "tool-groups-merged").status == "caught"
    already = _row(report, "replay-safe-left-true")  # pi claims replaySafe true already
    assert already.status == "n/a" and already.needs == NOTHING_TO_BREAK


def test_openclaws_own_compaction_is_blocking_where_it_summarizes_writes_and_the_mutants_are_caught(
    openclaw: None,
) -> None:
    """OpenClaw's safeguard protects no write either: its baseline is BLOCKING on a session with
    writes before its cut (and its result claims nothing: the default replaySafe true). The
    mutants that break its output are caught on codes the baseline does not show."""
    only = ["orphan-result-after-aborted-call", "replay-safe-left-true", "duplicate-send-after-compaction-retry"]
    report = run_selftest(_items(["cancel-two-orders"]), compactor=OpenClawCompactor(), cwd=REPO, only=only, jobs=1)
    baseline = report.rows[0]
    assert report.compactor == "openclaw" and baseline.status == "BLOCKING" and not report.ok
    assert set(baseline.codes) == {"MUTATION_DROPPED", "REPLAY_FLAG_WRONG", "MUTATED_IDS_WRONG"}
    assert _row(report, "orphan-result-after-aborted-call").status == "caught"
    assert _row(report, "duplicate-send-after-compaction-retry").status == "caught"
    already = _row(report, "replay-safe-left-true")  # the contract's default replaySafe true already
    assert already.status == "n/a" and already.needs == NOTHING_TO_BREAK


def test_cli_names_the_compactor_under_test_and_rejects_a_bad_one(capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)  # a command's relative paths resolve where selftest runs
    recording = str(REPO / "recordings" / "helpdesk" / "cancel-two-orders.jsonl")
    argv = shlex.join(["node", os.path.relpath(NODE_COMPACTOR, REPO), *NODE.command[2:]])
    args = ["selftest", "--compactor", f"command:{argv}", "--only", "replay-safe-left-true"]
    code = main([*args, "--recordings", recording, "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0 and f"compactor under test: command:{argv}" in out
    assert "mutation score: 1/1 mutants caught" in out and "baseline clean" in out
    assert main(["selftest", "--compactor", "python:not a path", "--recordings", recording]) == 2
    err = capsys.readouterr().err
    assert "--compactor" in err and "not a path" in err
