"""replaylab.differences: the differing leaves of two JSON values, by human path, windowed and
scrubbed, capped."""

from __future__ import annotations

from builders import secret_corpus as corpus
from replaylab.differences import MAX_LEAVES, WINDOW_CHARS, differences, differences_of, human_path, window
from replaylab.scrub import REDACTED


def test_human_paths_name_keys_indices_and_the_root():
    assert human_path(["flights", 0, "flight_number"]) == "flights[0].flight_number"
    assert human_path([0, "x"]) == "[0].x"
    assert human_path(["a key", "b"]) == '["a key"].b'
    assert human_path([]) == "(root)"
    diffs = differences({"flights": [{"flight_number": "HAT001"}]}, {"flights": [{"flight_number": "HAT002"}]})
    assert [d.path for d in diffs.leaves] == ["flights[0].flight_number"] and "root[" not in diffs.paths()
    assert differences("a", "b").leaves[0].path == "(root)"


def test_missing_extra_and_type_changes_are_said_as_such():
    diffs = differences({"a": 1, "b": [1, 2], "c": True}, {"a": "1", "b": [1], "c": True, "d": None})
    assert [d.as_dict() for d in diffs.leaves] == [
        {"path": "a", "expected": 1, "actual": "1", "change": "type"},
        {"path": "b[1]", "expected": 2, "actual": None, "change": "missing"},
        {"path": "d", "expected": None, "actual": None, "change": "extra"},
    ]
    assert [d.line() for d in diffs.leaves] == [
        'a: expected 1 / actual "1" (type number → string)',
        "b[1]: expected 2 / actual (no such key)",
        "d: expected (no such key) / actual null",
    ]
    # JSON spells 1, 1.0 and True apart (so does a call's canonical JSON, which decides a match)
    assert [d.path for d in differences({"n": 1, "f": 0.0}, {"n": 1.0, "f": -0.0}).leaves] == ["n", "f"]
    assert not differences({"x": [1, {"y": "z"}]}, {"x": [1, {"y": "z"}]})


def test_a_long_string_is_windowed_around_its_first_difference_at_the_same_offsets():
    text = "".join(f"line {n:03d}\n" for n in range(200))
    changed = text.replace("line 120", "line 12X")
    [leaf] = differences({"old_string": text}, {"old_string": changed}).leaves
    assert leaf.path == "old_string"
    assert leaf.expected.startswith("…") and leaf.expected.endswith("…") and "line 120" in leaf.expected
    assert "line 12X" in leaf.actual and "line 120" not in leaf.actual
    # the same offsets on both sides: the windows differ only where the texts do
    assert len(leaf.expected) == len(leaf.actual) <= 2 * WINDOW_CHARS + 2
    assert leaf.expected.replace("line 120", "line 12X") == leaf.actual
    assert window("short", "shorT") == ("short", "shorT")


def test_secrets_are_scrubbed_before_the_window_is_cut():
    """A secret that straddles a window's edge would no longer be recognised once cut: scrubbing
    comes first. A change only in a secret-named value is still named, with redacted values."""
    before = "x" * 200 + f" token {corpus.OPENAI} " + "y" * 200
    after = "x" * 200 + f" token {corpus.GITHUB} " + "y" * 200
    [leaf] = differences({"note": before}, {"note": after}).leaves
    shown = leaf.expected + leaf.actual
    assert corpus.OPENAI[:12] not in shown and corpus.GITHUB[:12] not in shown
    [secret] = differences({"password": "old-pass-1"}, {"password": "new-pass-2"}).leaves
    assert (secret.path, secret.expected, secret.actual) == ("password", REDACTED, REDACTED)


def test_leaves_are_capped_and_the_rest_counted():
    diffs = differences(list(range(10)), list(range(1, 11)))
    assert len(diffs.leaves) == MAX_LEAVES and diffs.more == 10 - MAX_LEAVES
    assert diffs.paths().endswith(f"(+{10 - MAX_LEAVES} more)")
    detail = diffs.as_detail()
    assert detail["differences_more"] == 10 - MAX_LEAVES and len(detail["differences"]) == MAX_LEAVES
    assert differences_of(detail) == diffs  # read back from a report as it was written
    assert not differences_of({}) and not differences_of(None)


def test_values_nested_deeper_than_python_recurses_are_one_difference():
    deep_a: list = []
    deep_b: list = [1]
    for _ in range(5000):
        deep_a, deep_b = [deep_a], [deep_b]
    diffs = differences(deep_a, deep_b)
    assert [(d.path, d.expected) for d in diffs.leaves] == [("(root)", "(nested too deep to show)")]
