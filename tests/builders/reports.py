"""One synthetic run report built from the real model objects, for the report tests.

Passed, failed, error and skipped items and a negative control; defects of several codes and
severities, a divergence with both run traces, windows with protected entries, and ledgers.
`payload` goes into the items' texts and `secret_args` into a mutating call's arguments, so the
escaping and scrubbing tests can plant markup and secrets.
"""

from __future__ import annotations

from replaylab import __version__
from replaylab.defects import Code, Defect
from replaylab.replay.trace import RunTrace, ToolCallTrace, TurnTrace
from replaylab.report.merge import compute_totals
from replaylab.results import (
    CompactionView,
    Divergence,
    ItemResult,
    QualityGuardView,
    RunMeta,
    RunReport,
    WindowItem,
)
from replaylab.safety.ledger import LedgerEvent, LedgerView

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"


def _ledger(ids: list[str]) -> LedgerView:
    events = [
        LedgerEvent(
            event_id=i,
            entry_id=f"e{n + 4}",
            tool_call_id=f"call_{i}",
            tool="update_ticket",
            tool_class="write",
            args_hash=f"{n:064x}",
            result_entry_id=f"e{n + 5}",
        )
        for n, i in enumerate(ids)
    ]
    return LedgerView(replay_safe=not ids, mutated_event_ids=ids, events=events)


def _window(n: int, payload: str, protected: set[str], long_text: int = 0) -> list[WindowItem]:
    roles = ["user", "assistant", "toolResult"]
    out = []
    for i in range(n):
        eid = f"e{i + 1}"
        text = f"{roles[i % 3]} message {eid} {payload}"
        if long_text and i == 1:
            text += " " + "x" * long_text
        out.append(
            WindowItem(
                entry_id=eid,
                role=roles[i % 3],
                text=text,
                tokens=len(text) // 4,
                protected=eid in protected,
                mutating=eid in protected,
            )
        )
    return out


def _trace(label: str, answer: str, args: dict, payload: str) -> RunTrace:
    turns = [
        TurnTrace(
            turn=1,
            user_text="look up ticket T-1001",
            answer="Ticket T-1001 is open.",
            tool_calls=[
                ToolCallTrace(
                    turn=1,
                    step=0,
                    tool_call_id="call_a",
                    tool="get_ticket",
                    arguments={"id": "T-1001"},
                    result='{"status": "open"}',
                )
            ],
        ),
        TurnTrace(
            turn=2,
            user_text=f"close it {payload}",
            answer=answer,
            tool_calls=[
                ToolCallTrace(
                    turn=2,
                    step=0,
                    tool_call_id="call_b",
                    tool="update_ticket",
                    arguments=args,
                    result="ok",
                    mutating=True,
                    source="cassette" if label == "baseline" else "blocked",
                    is_error=label != "baseline",
                )
            ],
        ),
        TurnTrace(turn=3, user_text="thanks", answer="You're welcome."),
        TurnTrace(turn=4, user_text="bye", answer="Bye."),
    ]
    return RunTrace(label=label, turns=turns)


def build_items(payload: str = "", secret_args: dict | None = None) -> list[ItemResult]:
    """Five items: passed, failed (blocking + regressions + divergence), error, skipped, negative control."""
    base_args = {"id": "T-1001", "status": "closed", **(secret_args or {})}
    passed = ItemResult(
        id="helpdesk::alpha::safeguard",
        suite="helpdesk",
        scenario="safeguard",
        recording="recordings/alpha.jsonl",
        outcome="passed",
        ledger_before=_ledger(["e5"]),
        ledger_after=_ledger(["e5"]),
        window_before=_window(9, payload, {"e5", "e6"}),
        window_after=_window(7, payload, {"e5", "e6"}),
        compaction=CompactionView(
            mode="safeguard",
            success=True,
            original_tokens=4000,
            compacted_tokens=1500,
            token_saved=2500,
            protected_entry_ids=["e5", "e6"],
            compaction_event_id="c1",
            summary_text=f"## Decisions\nclose T-1001 {payload}",
            quality_guard=QualityGuardView(ok=True, attempts=1),
        ),
        recording_sha256="a" * 64,
        cassette_sha256="b" * 64,
        duration_s=0.25,
    )
    failed = ItemResult(
        id="helpdesk::beta::aggressive",
        suite="helpdesk",
        scenario="aggressive",
        recording="recordings/beta.jsonl",
        outcome="failed",
        reason="2 blocking defects, 2 regressions",
        defects=[
            Defect.of(
                Code.TOOL_SEQUENCE_DIVERGED,
                f"update_ticket arguments differ {payload}",
                turn=2,
                tool_call_id="call_b",
                tool="update_ticket",
                expected=base_args,
                actual={"id": "<lost>", "status": "closed"},
            ),
            Defect.of(
                Code.MUTATION_DROPPED,
                f"mutating entry e5 is missing from the compacted window {payload}",
                entry_id="e5",
                tool_call_id="call_e5",
                expected="e5 in window",
                actual="absent",
            ),
            Defect.of(
                Code.ANSWER_DIVERGED, "final answer differs", turn=2, expected="Closed T-1001.", actual="Which ticket?"
            ),
            Defect.of(
                Code.SIDE_EFFECT_ESCAPED,
                "update_ticket call with no recorded match was blocked",
                turn=2,
                tool_call_id="call_b",
                expected=base_args,
                actual={"id": "<lost>"},
            ),
        ],
        ledger_before=_ledger(["e5"]),
        ledger_after=_ledger([]),
        window_before=_window(9, payload, {"e5"}, long_text=5000),
        window_after=_window(4, payload, set()),
        compaction=CompactionView(
            mode="aggressive",
            success=True,
            original_tokens=4000,
            compacted_tokens=800,
            token_saved=3200,
            summary_text=f"summary of beta {payload}",
            quality_guard=QualityGuardView(ok=False, attempts=3, reasons=["missing section: Exact identifiers"]),
        ),
        baseline=_trace("baseline", "Closed T-1001.", base_args, payload),
        compacted=_trace("compacted", f"Which ticket? {payload}", {"id": "<lost>", "status": "closed"}, payload),
        first_divergence=Divergence(
            turn=2,
            step=0,
            what="tool call",
            baseline={"tool": "update_ticket", "args": base_args},
            compacted={"tool": "update_ticket", "args": {"id": "<lost>"}},
        ),
        duration_s=0.5,
    )
    error = ItemResult(
        id="helpdesk::gamma::safeguard",
        suite="helpdesk",
        scenario="safeguard",
        recording="recordings/gamma.jsonl",
        outcome="error",
        reason="baseline run does not reproduce the recording",
        defects=[
            Defect.of(
                Code.BASELINE_DRIFT,
                "turn 1: answer differs from the recording",
                turn=1,
                expected="recorded",
                actual="other",
            )
        ],
        duration_s=0.1,
    )
    skipped = ItemResult(
        id="helpdesk::delta::safeguard",
        suite="helpdesk",
        scenario="safeguard",
        recording="recordings/delta.jsonl",
        outcome="skipped",
        reason="not exercised: no compaction happened (window below the budget)",
        window_before=_window(3, payload, set()),
    )
    negative = ItemResult(
        id="helpdesk::epsilon::aggressive",
        suite="helpdesk-negative",
        scenario="aggressive",
        recording="recordings/epsilon.jsonl",
        outcome="passed",
        expected_defects=["MUTATION_DROPPED"],
        defects=[Defect.of(Code.MUTATION_DROPPED, "expected by the negative control", entry_id="e7")],
        compaction=CompactionView(
            mode="aggressive", success=True, original_tokens=3000, compacted_tokens=900, token_saved=2100
        ),
    )
    return [passed, failed, error, skipped, negative]


def build_report(
    payload: str = "", secret_args: dict | None = None, items: list[ItemResult] | None = None
) -> RunReport:
    items = sorted(items if items is not None else build_items(payload, secret_args), key=lambda i: i.id)
    meta = RunMeta(
        replaylab_version=__version__,
        git_sha="0123456789abcdef0123456789abcdef01234567",
        model="replay",
        mode="safeguard",
        started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:01:00+00:00",
        python="3.11",
        argv=["--replaylab", "suites/"],
    )
    return RunReport(
        meta=meta,
        totals=compute_totals(items),
        items=items,
        cassette_hashes={"recordings/alpha.cassette.yaml": "b" * 64},
    )
