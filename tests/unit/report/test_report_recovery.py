"""The overflow recovery chain as the reports show it (replaylab/report/recovery.py)."""

from __future__ import annotations

from replaylab.replay.trace import RecoveryStepTrace, RecoveryTrace, RunTrace
from replaylab.report.recovery import recovery_lines

GIVE_UP = "Context overflow: prompt too large for the model."


def _run(steps: int = 3) -> RunTrace:
    chain = RecoveryTrace(
        turn=4,
        context_window=3_200,
        rules="openclaw@2026.9.6",
        steps=[
            RecoveryStepTrace(
                kind="precheck", step=1, tokens_before=3_228, detail="Context overflow: (mid-turn precheck)."
            ),
            RecoveryStepTrace(
                kind="overflow_compaction",
                step=1,
                trigger="overflow",
                tokens_before=3_228,
                tokens_after=1_904,
                diag_id="cmp-abc-1234",
            ),
            RecoveryStepTrace(
                kind="guard",
                step=2,
                tokens_before=2_000,
                tokens_after=1_500,
                entry_ids=["e1"],
                mutating_entry_ids=["e1"],
            ),
        ][:steps],
        attempts=2,
        overflow_compactions=1,
    )
    return RunTrace(label="compacted", recovery=[chain])


def test_each_chain_and_step_is_one_line_with_tokens_trigger_and_diag_id():
    lines = recovery_lines(_run())
    assert lines[0] == (
        "turn 4 (openclaw@2026.9.6, window 3,200 tokens): 2 attempt(s), 1 compaction attempt(s); recovered"
    )
    assert lines[1] == "  call 2: precheck 3,228 tokens — Context overflow: (mid-turn precheck)."
    assert lines[2] == "  call 2: overflow_compaction (trigger overflow) 3,228 → 1,904 tokens cmp-abc-1234"
    assert lines[3] == "  call 3: guard 2,000 → 1,500 tokens entries e1 MUTATING e1"


def test_a_give_up_says_its_kind_diag_id_and_text_and_long_chains_are_capped():
    run = _run()
    run.recovery[0] = run.recovery[0].model_copy(
        update={"gave_up": "context_overflow", "diag_id": "cmp-abc-1234", "user_text": GIVE_UP}
    )
    assert recovery_lines(run)[0].endswith(f"gave up: context_overflow (cmp-abc-1234) — {GIVE_UP}")
    assert recovery_lines(run, max_steps=1)[-1] == "  … 2 more steps in replaylab.json"
    assert recovery_lines(RunTrace(label="compacted")) == [] == recovery_lines(None)


def test_the_html_section_markdown_and_failure_story_show_the_chain():
    from builders.reports import build_items, build_report
    from html_dom import Dom, el_text
    from replaylab.report.html import render_html
    from replaylab.report.markdown import render_markdown
    from replaylab.report.story import failure_story

    items = build_items()
    failed = next(i for i in items if i.outcome == "failed")
    failed.compacted = (failed.compacted or RunTrace(label="compacted")).model_copy(
        update={"recovery": _run().recovery}
    )
    dom = Dom(render_html(build_report(items=items)))
    [section] = dom.find("ul", class_="recovery")
    assert "3,228 → 1,904 tokens cmp-abc-1234" in el_text(section)
    assert "turn 4 (openclaw@2026.9.6, window 3,200 tokens)" in render_markdown(build_report(items=items))
    assert "overflow recovery:" in failure_story(failed) and "call 3: guard" in failure_story(failed)
