"""Detection power: every seeded real-world compaction bug (replaylab/mutants) is caught by the QA
pipeline's own checks with its expected defect code, and the unmodified compactor is clean.

The bundled sessions are a covering subset (sub-agent, refused refund awaiting approval, chained
compactions, parallel calls, an identifier needed later, three cancellations): every mutant that
can apply to helpdesk sessions applies to at least one of them. The thinking-signature mutant
needs signed thinking blocks, which only real sessions have: it runs on one real Claude Code
session (realdata).

A mutant can only break what pi shows (a cut that summarizes protected entries, or copies written
in their place), so the damage each one does is checked against the real pi too."""

from __future__ import annotations

import pytest

from replaylab.cli import main
from replaylab.defects import Code
from replaylab.selftest import BASELINE, load_mutants, run_selftest
from replaylab.suite import load_suite
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
COVERING = [
    "security-lockout",
    "refund-approval-pending",
    "handbook-damaged-in-transit",
    "early-identifier-address-change",
    "cancel-two-orders",
    "parallel-order-overview",
]
#: the upstream bugs the brief names, each must have its mutant
REQUIRED = {
    "openclaw/openclaw#7527",
    "earendil-works/pi#8667",
    "earendil-works/pi#6832",
    "openclaw/openclaw#12170",
    "openclaw/openclaw#127997",
    "openclaw/openclaw#5224",
    "google/adk-python#4740",
    "ToolResultCompactionStrategy",
    "openclaw/openclaw#126707",
}

NOOP_MUTANT = """
from replaylab.defects import Code
from replaylab.selftest import Mutant
from replaylab.compaction import compact
from replaylab.selftest import applied


def _noop(params, *, classifier=None, writer=None):
    return applied(compact(params, classifier=classifier, writer=writer), "claims a change, makes none")


MUTANTS = [Mutant(name="noop", issue="-", expected=(Code.PAIR_BROKEN,), what="nothing", compactor=_noop)]
"""


def _items(names: list[str]) -> list:
    suite = load_suite(REPO / "suites" / "safeguard.yaml")
    return [(suite.scenarios[0], r) for r in suite.recordings if r.name.removesuffix(".jsonl") in names]


@pytest.fixture(scope="module")
def score():
    return run_selftest(_items(COVERING), jobs=2)


def test_the_mutants_cover_the_upstream_bugs():
    mutants = load_mutants()
    issues = " ".join(m.issue for m in mutants)
    assert all(bug in issues for bug in REQUIRED), [b for b in REQUIRED if b not in issues]
    assert len(mutants) >= 14 and len({m.name for m in mutants}) == len(mutants)
    assert all(m.expected and m.what and (m.compactor or m.classifier_override) for m in mutants)


def test_unmodified_compactor_shows_no_blocking_defect(score):
    baseline = score.rows[0]
    assert baseline.mutant == BASELINE and baseline.status == "clean", baseline.missed_on
    assert baseline.sessions == len(COVERING)  # every covering session was compacted


@pytest.mark.parametrize("name", [m.name for m in load_mutants() if m.name != "thinking-signature-stripped"])
def test_every_mutant_is_caught_with_its_expected_code(score, name):
    row = next(r for r in score.rows if r.mutant == name)
    assert row.applied >= 1, f"{name} changed nothing on the covering sessions"
    assert row.status == "caught" and row.caught >= 1, (row.codes, row.missed_on)
    assert set(row.expected) & set(row.codes), row.codes


def test_structural_mutants_are_caught_on_every_session_they_apply_to(score):
    """Except the identifier drop (IDENTIFIER_LOST cannot see helpdesk ids; only a later call that
    needs one shows the loss) and the mislabel (only replayed writes leave HTTP evidence), a mutant
    is caught wherever it changed something."""
    for row in score.rows[1:]:
        if row.mutant not in ("identifiers-dropped-from-summary", "thinking-signature-stripped"):
            assert row.caught == row.applied, (row.mutant, row.missed_on)


#: what each protection mutant does to the covering sessions, and nothing else: a copy that stands
#: in for a recorded entry is neither a repeated side effect nor a broken pair when it is intact
PROTECTION_CODES = {
    "pending-confirmation-compacted-away": {"MUTATION_DROPPED"},
    "mutating-result-truncated": {"MUTATION_ALTERED"},
    # the call message altered, its results gone, so the calls have no results
    "tool-groups-merged": {"MUTATION_ALTERED", "MUTATION_DROPPED", "PAIR_BROKEN"},
}


def test_protection_mutants_are_reported_for_what_they_did_only(score):
    for name, codes in PROTECTION_CODES.items():
        row = next(r for r in score.rows if r.mutant == name)
        assert row.caught == row.applied >= 1 and set(row.codes) == codes, (name, row.codes)


def _pis_view_of_each_compaction(pi, mutant_name: str, recording: str) -> list:
    """Run one covering item with the mutant, asking the real pi about every working copy it wrote:
    pi's context must be the window the pipeline checked. Returns (result, pi's view) pairs."""
    from replaylab.compaction.invariants import as_window
    from replaylab.oracles.compare import context_mismatches
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions

    mutant = next(m for m in load_mutants() if m.name == mutant_name)
    seen = []

    def checked(params, *, classifier=None, writer=None):
        result = mutant.compactor(params, classifier=classifier, writer=writer)
        if result.success:
            view = pi.view(params.session_file)
            assert context_mismatches(as_window(result.compacted_window), view) == []
            seen.append((result, view))
        return result

    ((scenario, path),) = _items([recording])
    run_item(scenario, path, RunOptions(compactor=checked))
    assert seen, f"{mutant_name} compacted nothing on {recording}"
    return seen


def test_protection_mutants_do_their_damage_where_pi_shows_it(pi):
    from replaylab.transcript import load_transcript

    recording = REPO / "recordings" / "helpdesk" / "refund-approval-pending.jsonl"
    by_id = {e.id: e for e in load_transcript(recording).entries}
    (result, view), *_ = _pis_view_of_each_compaction(pi, "pending-confirmation-compacted-away", recording.stem)
    shown = {m.entry_id for m in view.context}
    refused = [i for i, e in by_id.items() if getattr(getattr(e, "message", None), "is_error", False)]
    assert refused and not shown & set(refused)  # the refused refund awaiting approval: summarized away
    (result, view), *_ = _pis_view_of_each_compaction(pi, "mutating-result-truncated", "cancel-two-orders")
    assert any("more characters truncated]" in str(m.message) for m in view.context if m.role == "toolResult")
    (result, view), *_ = _pis_view_of_each_compaction(pi, "tool-groups-merged", "cancel-two-orders")
    merged = [m for m in view.context if m.role == "assistant" and "Tool calls:" in str(m.message.get("content"))]
    calls = {b["id"] for m in merged for b in m.message["content"] if b.get("type") == "toolCall"}
    answered = {m.message.get("toolCallId") for m in view.context if m.role == "toolResult"}
    assert merged and calls and not calls & answered


def test_thinking_mutant_is_not_applicable_to_the_bundled_sessions(score):
    row = next(r for r in score.rows if r.mutant == "thinking-signature-stripped")
    assert row.status == "n/a" and row.applied == 0 and row.needs
    assert score.ok  # n/a rows do not fail the score; caught and clean ones make it pass


def test_a_mutant_that_changes_nothing_is_not_caught(tmp_path):
    """The score is not trivially 'caught': a compactor that only claims to mutate is missed, so the
    selftest fails (the checks look at what was written, not at what the mutant says)."""
    (tmp_path / "noop.py").write_text(NOOP_MUTANT, encoding="utf-8")
    report = run_selftest(_items(["cancel-two-orders"]), mutants_dir=tmp_path, jobs=1)
    row = report.rows[1]
    assert row.mutant == "noop" and row.applied == 1 and row.status == "MISSED" and not report.ok


def test_cli_prints_the_table_and_exits_by_the_score(tmp_path, capsys):
    recording = str(REPO / "recordings" / "helpdesk" / "cancel-two-orders.jsonl")
    code = main(["selftest", "--only", "replay-safe-left-true", "--recordings", recording, "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "| replay-safe-left-true |" in out and "REPLAY_FLAG_WRONG" in out
    assert "mutation score: 1/1 mutants caught" in out and "baseline clean" in out
    (tmp_path / "noop.py").write_text(NOOP_MUTANT, encoding="utf-8")
    assert main(["selftest", "--mutants", str(tmp_path), "--recordings", recording, "--jobs", "1"]) == 1
    assert "**NO**" in capsys.readouterr().out
    assert main(["selftest", "--recordings", str(tmp_path / "none-*.jsonl")]) == 2  # usage error, named


@pytest.mark.realdata
def test_thinking_signature_mutant_is_caught_on_a_real_claude_code_session(shared_data, tmp_path):
    """At the selftest's real-data step the window shows signed messages (the kept tail, and the
    protected Bash calls safeguard restates after its summary): the mutant strips their signatures,
    writing them again in their place. The copies of signed Bash calls are altered mutations too
    (the signature is part of the recorded message)."""
    from replaylab.compaction import compact
    from replaylab.importers import import_sessions, write_session
    from replaylab.qa.setup import classifier_for, compact_params
    from replaylab.qa.sweep import sweep_scenario
    from replaylab.replay import split_turns
    from replaylab.transcript import load_transcript

    source = next((shared_data / "claude-code-spotter" / "sessions").glob("4d5611e5*.jsonl"))
    transcript, _ = write_session(next(iter(import_sessions("claude-code", source))), tmp_path)
    scenario, compact_at, _, _ = sweep_scenario(transcript, "claude-code", (0.75, 1.0))
    report = run_selftest([(scenario, transcript)], only=["thinking-signature-stripped"], jobs=1)
    baseline, row = report.rows
    assert baseline.status == "clean", baseline.missed_on
    assert row.applied == 1 and row.status == "caught"
    assert {Code.THINKING_ALTERED.value, Code.MUTATION_ALTERED.value} <= set(row.codes)
    assert Code.DUPLICATE_SIDE_EFFECT.value not in row.codes  # copies of recorded calls are not new calls
    # the same compaction, on its own: what it protected and kept
    path = load_transcript(transcript).leaf_path()
    turn = split_turns(path)[int(compact_at.removeprefix("turn:")) - 1]
    leaf = path[path.index(turn.inputs[0]) - 1].id
    result = compact(
        compact_params(scenario, scenario.compaction.mode, transcript, leaf_id=leaf).model_copy(
            update={"working_copy": str(tmp_path / "copy.jsonl")}
        ),
        classifier=classifier_for(scenario, transcript, None),
    )
    signed = [
        w["entryId"]
        for w in result.compacted_window
        if w["role"] == "assistant" and any(b.get("thinkingSignature") for b in w["message"]["content"])
    ]
    assert result.success and signed
