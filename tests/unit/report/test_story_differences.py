"""The failure story prints the differing leaves of a finding (`differs at old_string: expected
"…" / actual "…"`), not two values cut to the same prefix, and the nearest call as a hint."""

from __future__ import annotations

from builders.claude_like import edit_item
from replaylab.defects import Code, Defect
from replaylab.report.story import failure_story
from replaylab.results import ItemResult


def test_an_edit_whose_old_string_differs_deep_inside_shows_the_window_around_the_difference(tmp_path):
    story = failure_story(edit_item(tmp_path))
    [leaf] = [line for line in story.splitlines() if line.startswith("      differs at old_string: ")]
    expected, actual = leaf.split(" / actual ")
    # the 21st line of ~40, far past any prefix a cut would keep, is shown on both sides
    assert "line 020: keep this" in expected and "line 020: KEEP this" in actual
    assert "line 000" not in leaf  # a window, not the text from its start
    assert "      expected: " not in story  # no two cut prefixes for a finding that names its leaves
    assert "nearest recorded call (hint): the recorded call at this step" in story


def test_a_finding_without_leaves_still_shows_expected_and_actual():
    defect = Defect.of(Code.MUTATION_DROPPED, "dropped", expected="kept verbatim", actual="dropped")
    item = ItemResult(id="s::x", suite="s", scenario="x", recording="r.jsonl", outcome="failed", defects=[defect])
    story = failure_story(item)
    assert "      expected: kept verbatim" in story and "      actual:   dropped" in story


def test_the_first_divergence_names_where_the_runs_part():
    from replaylab.results import Divergence

    long_answer = "Your order ships from the north warehouse. " * 10
    item = ItemResult(
        id="s::x",
        suite="s",
        scenario="x",
        recording="r.jsonl",
        outcome="failed",
        first_divergence=Divergence(
            turn=3, what="answer", baseline=long_answer + "Ticket T-1001.", compacted=long_answer + "Ticket T-1002."
        ),
    )
    story = failure_story(item).splitlines()
    start = story.index("  first divergence: turn 3 (answer)")
    [leaf] = [line for line in story[start:] if line.startswith("      differs at (root): ")]
    assert "T-1001" in leaf and "T-1002" in leaf  # past the 240 characters the two cut lines keep
    assert all("T-100" not in line for line in story[start + 1 : start + 3])
