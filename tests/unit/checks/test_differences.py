"""replaylab.differences: the differing leaves of two JSON values, by human path, windowed and
scrubbed, capped."""

from __future__ import annotations

import subprocess
import sys

from builders import secret_corpus as corpus
from replaylab.differences import MAX_LEAVES, WINDOW_CHARS, differences, differences_of, human_path, window
from replaylab.scrub import REDACTED
from repo_paths import TESTS


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


def test_leaves_come_in_document_order_whatever_kind_they_are():
    """A reader walks expected, then actual's extra keys; each kind of change is met where it sits."""
    expected = {"z": 1, "a": {"q": [1, 2, {"w": 3}], "gone": 0}, "m": 5, "n": 1}
    actual = {"k": 1, "a": {"q": [1, 9, {"w": "4"}, 7]}, "n": 1.0, "z": 2, "m": 6}
    diffs = differences(expected, actual, limit=100)
    assert [(d.path, d.change) for d in diffs.leaves] == [
        ("z", "changed"),
        ("a.q[1]", "changed"),
        ("a.q[2].w", "type"),
        ("a.q[3]", "extra"),
        ("a.gone", "missing"),
        ("m", "changed"),
        ("n", "changed"),  # 1 and 1.0 differ, but both are JSON numbers: not a type change
        ("k", "extra"),
    ]


def test_every_differing_key_is_named_however_many_differ():
    """Neither the whole object for many differing keys, nor realigned lists, nor skipped `__` keys."""
    diffs = differences({"a": 1, "b": 2}, {"c": 1})
    assert [(d.path, d.change) for d in diffs.leaves] == [("a", "missing"), ("b", "missing"), ("c", "extra")]
    # lists are paired index by index, as a reader pairs them: a shift changes every item
    assert [d.path for d in differences([0, 1, 2], [1, 2, 3]).leaves] == ["[0]", "[1]", "[2]"]
    assert [d.as_dict() for d in differences({"__x": 1}, {"__x": 2}).leaves] == [
        {"path": "__x", "expected": 1, "actual": 2}
    ]


def test_floats_compare_as_canonical_json_spells_them():
    """0.0 and -0.0 differ (wherever they sit, beside other changes or alone); NaN equals NaN."""
    assert [d.as_dict() for d in differences([0.0], [-0.0]).leaves] == [
        {"path": "[0]", "expected": 0.0, "actual": -0.0}
    ]
    assert [d.path for d in differences(-0.0, 0.0).leaves] == ["(root)"]
    assert not differences({"x": [float("nan"), 2.5]}, {"x": [float("nan"), 2.5]})
    assert [d.path for d in differences({"x": float("nan")}, {"x": 1.5}).leaves] == ["x"]


def test_equal_values_are_settled_without_deepdiff():
    """deepdiff is slow even on equal data and slow to import: equal values never reach it."""
    code = (
        "import sys; from replaylab.differences import differences; "
        "value = {f'key{n}': {'n': n, 'f': n / 3, 'tags': ['a', None, True]} for n in range(200)}; "
        "assert not differences(value, {k: dict(v) for k, v in value.items()}); "
        "print('deepdiff' in sys.modules); "
        "assert differences(value, {**value, 'key7': 1}); print('deepdiff' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=TESTS)
    assert out.stdout.split() == ["False", "True"]


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
    [extra] = differences({"a": 1}, {"a": 1, "password": "hunter2-xyz"}).leaves
    assert (extra.path, extra.actual, extra.change) == ("password", REDACTED, "extra")
    key = f"key {corpus.OPENAI}"  # keys in paths are scrubbed text
    [nested] = differences({key: {"n": 1}}, {key: {"n": 2}}).leaves
    assert corpus.OPENAI[:12] not in nested.path and nested.path.endswith(".n") and REDACTED in nested.path


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
    shallow_a: list = []
    shallow_b: list = [1]
    for _ in range(100):
        shallow_a, shallow_b = [shallow_a], [shallow_b]
    [leaf] = differences(shallow_a, shallow_b).leaves
    assert (leaf.path, leaf.actual, leaf.change) == ("[0]" * 101, 1, "extra")
