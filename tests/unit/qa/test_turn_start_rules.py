"""When the item's OpenClaw release compacts before a turn, and with which reserve
(`upstream.runtime_rules.TurnStartRules`), as the pipeline applies it: 2026.9.6's host check
(`runSessionCompactionIfNeeded`) counts the window and the new prompt and compacts on reaching
contextTokens less min(20,000, a quarter of contextTokens), its compaction sizing its budget and
summary with that reserve; 2026.4.12's (which the pi profiles run with) compacts past contextTokens
less the suite's reserveTokensFloor, its first point reading the window alone."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from replaylab.compaction.job import Job
from replaylab.qa.auto_budget import choose_budget
from replaylab.qa.boundaries import Boundary
from replaylab.qa.plan import BudgetRequest
from replaylab.qa.setup import auto_points, budget, compact_params, crosses_budget, resolve_budget
from replaylab.safety.classify import ToolClassifier
from replaylab.suite import CompactionSettings
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AssistantMessage, TextBlock, UserMessage
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6

NEW = OPENCLAW_2026_9_6.turn_start
OLD = OPENCLAW_2026_4_12.turn_start


def scenario(context: int, floor: int) -> Any:
    settings = CompactionSettings.model_validate(
        {"mode": "safeguard", "contextTokens": context, "reserveTokensFloor": floor}
    )
    return SimpleNamespace(
        compaction=settings, compact_at="auto", model_copy=lambda update: SimpleNamespace(compact_at="auto", **update)
    )


@pytest.mark.parametrize(
    ("context", "floor", "reserve"),
    [
        (10_000, 1_000, 2_500),
        (1_600, 200, 400),
        (800, 1_000, 200),
        (200_000, 16_384, 20_000),
        (200_000, 30_000, 20_000),
    ],
)
def test_2026_9_6_keeps_the_least_of_20000_and_a_quarter_of_the_window_whatever_the_floor(
    context: int, floor: int, reserve: int
) -> None:
    assert NEW.trigger_reserve(context, floor) == reserve
    assert OLD.trigger_reserve(context, floor) == floor


def test_2026_9_6_compacts_on_reaching_the_threshold_and_2026_4_12_only_past_it() -> None:
    assert NEW.fires(2_400, 2_400) and not NEW.fires(2_399, 2_400)
    assert OLD.fires(2_401, 2_400) and not OLD.fires(2_400, 2_400)


def four_pairs() -> list[WindowMessage]:
    """Four plain question/answer pairs, 7,884 tokens by pi's and OpenClaw's estimate."""
    window = []
    for i in range(4):
        question = UserMessage(content=[TextBlock(text=f"question {i} " + "lorem ipsum " * 330)])
        answer = AssistantMessage(
            content=[TextBlock(text=f"answer {i} " + "dolor sit amet " * 260)], stop_reason="stop"
        )
        window += [WindowMessage(f"u{i}", question), WindowMessage(f"a{i}", answer)]
    return window


def settled(context: int, floor: int, memo: ItemMemo | None) -> Any:
    rules = (
        memo.runtime_rules if memo is not None and memo.runtime_rules is not None else OPENCLAW_2026_4_12
    ).turn_start
    request = BudgetRequest(context_tokens=context, reserve_tokens_floor=floor, keep_recent_tokens=None, source="suite")
    resolved = resolve_budget(scenario(context, floor), request, [], "safeguard", rules=rules)
    assert resolved is not None
    return resolved


def test_a_window_under_contextTokens_less_the_floor_compacts_under_2026_9_6_whose_reserve_is_larger() -> None:
    """7,884 tokens stay under 10,000 − floor 1,000 but pass 10,000 less 2026.9.6's 2,500; the
    budget line says the floor is a setting 2026.9.6 retired."""
    window, turn = four_pairs(), SimpleNamespace(inputs=[])
    memo = ItemMemo(runtime_rules=OPENCLAW_2026_9_6)
    new, view = settled(10_000, 1_000, memo)
    old, old_view = settled(10_000, 1_000, None)
    assert (budget(new), budget(old)) == (7_500, 9_000)
    assert crosses_budget(window, turn, new, memo)
    assert not crosses_budget(window, turn, old, ItemMemo())
    assert "reserve 2,500" in view.head() and "reserveTokensFloor 1,000 is a setting it retired" in view.head()
    assert old_view.head().startswith("budget 9,000 tokens (contextTokens 10,000 − reserveTokensFloor 1,000")
    assert "reserve_rule" not in old_view.model_dump() and view.model_dump()["reserve_tokens_floor"] == 2_500


def test_the_first_point_counts_the_prompt_and_compacts_at_the_threshold_under_2026_9_6() -> None:
    """A turn start whose window is 2,392 and whose prompt is 8 tokens reaches 2026.9.6's threshold
    in a 3,200 window (2,400); 2026.4.12's first point reads the window alone and needs more than 2,400."""
    starts = [Boundary(1, 4, 1_000, 0, False, inputs=50), Boundary(2, 8, 2_392, 0, False, inputs=8)]
    exact = [Boundary(1, 4, 1_000, 0, False), Boundary(2, 8, 2_400, 0, False)]
    new, _ = settled(3_200, 800, ItemMemo(runtime_rules=OPENCLAW_2026_9_6))
    old, _ = settled(3_200, 800, None)
    assert auto_points(starts, new, NEW) == [2] and auto_points(exact, new, NEW) == [2]
    assert auto_points(starts, old, OLD) == [] and auto_points(exact, old, OLD) == []


def test_the_compaction_sizes_its_budget_and_summary_with_the_releases_reserve(tmp_path: Path) -> None:
    """contextTokens 1,600 with a 200 floor: the item's 2026.9.6 compaction keeps 400 free (budget
    1,200, summary maxTokens 320), a pi item's keeps the floor (the 256 least lifts pi's 160)."""
    from replaylab.agents import item_memo
    from replaylab.upstream.profiles import profiles

    jobs = []
    for name in ("openclaw@2026.9.6", "pi@1.6.0"):
        memo = item_memo(profiles()[name])
        scenario_settled, _ = settled(1_600, 200, memo)
        params = compact_params(scenario_settled, "safeguard", tmp_path / "copy.jsonl", leaf_id=None)
        jobs.append(Job(params, ToolClassifier(), memo))
    new, old = jobs
    assert (new.reserve, new.budget, new.summary_max_tokens) == (400, 1_200, 320)
    assert (old.reserve, old.budget, old.summary_max_tokens) == (200, 1_400, 256)
    assert new.reserve_follows_window and not old.reserve_follows_window


def test_an_auto_budget_under_2026_9_6_counts_the_prompt_and_keeps_its_own_reserve() -> None:
    """`contextTokens: auto` chooses the budget and reserve as for every agent (the auto window
    stands for a real one, whose 2026.9.6 reserve is the 20,000 floor step 4 scales); a point is
    counted as 2026.9.6's check counts it: a turn start whose window with its prompt reaches the
    budget compacts, unless the window alone cannot gain, and then the budget passes it."""
    starts = [Boundary(1, 4, 5_990, 0, False, inputs=10), Boundary(2, 8, 10_000, 0, False, inputs=10)]
    old = choose_budget(starts, protects=False)
    new = choose_budget(starts, protects=False, rules=NEW)
    assert old is not None and new is not None
    assert (old.budget, old.reserve_tokens_floor) == (new.budget, new.reserve_tokens_floor) == (6_000, 1_000)
    assert (old.turn, new.turn) == (2, 1)  # 5,990 + 10 reach 6,000
    # a tail of 5,300 and a summary of up to 800 leave nothing to gain at 5,990: the budget goes past it
    passed = choose_budget(starts, protects=False, keep_recent_tokens=5_300, rules=NEW)
    assert passed is not None and passed.turn == 2 and passed.budget == 6_100
    assert not NEW.fires(5_990 + 10, passed.budget)


def test_2026_9_6_counts_the_prompt_without_its_outer_whitespace() -> None:
    """The host estimates the prompt's trimmed text (`estimatePromptTokensForMemoryFlush`); pi's
    items count the input as written. An input of several blocks is counted as written."""
    from replaylab.agents import item_memo
    from replaylab.qa.boundaries import prompt_tokens
    from replaylab.transcript.model import MessageEntry
    from replaylab.upstream.profiles import profiles

    def turn(*texts: str) -> Any:
        message = UserMessage(content=[TextBlock(text=t) for t in texts])
        return SimpleNamespace(inputs=[MessageEntry(id="u1", message=message)])

    padded, plain = " " * 40 + "refund ORD-77123, please" + "\n" * 40, "refund ORD-77123, please"
    openclaw, pi = item_memo(profiles()["openclaw@2026.9.6"]), item_memo(profiles()["pi@1.6.0"])
    assert (
        prompt_tokens(turn(padded), openclaw) == prompt_tokens(turn(plain), openclaw) < prompt_tokens(turn(padded), pi)
    )
    several = turn(padded, plain)
    assert prompt_tokens(several, openclaw) == openclaw.estimate(several.inputs[0].message)
