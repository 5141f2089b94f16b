"""`replaylab.transcript.javascript` prints and counts exactly as node does.

Node itself is the specification: the values are sent to node as JSON text and node answers with
`JSON.stringify(JSON.parse(text))` and its `.length`; replaylab parses the same text and must give
the same string and length.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess

import pytest

from replaylab.transcript.javascript import js_number, js_string, js_truthy, json_stringify, utf16_length

NODE = shutil.which("node")
SCRIPT = """
const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(Boolean);
for (const line of lines) {
  const s = JSON.stringify(JSON.parse(line));
  process.stdout.write(JSON.stringify([s, s.length]) + '\\n');
}
"""


@pytest.fixture(scope="module")
def node() -> str:
    if NODE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is required under CI=true")
        pytest.skip("node is not on PATH")
    return NODE


def as_node(node: str, texts: list[str]) -> list[tuple[str, int]]:
    out = subprocess.run(
        [node, "-e", SCRIPT], input="\n".join(texts) + "\n", capture_output=True, text=True, check=True
    ).stdout
    return [tuple(json.loads(line)) for line in out.split("\n") if line]  # not splitlines: U+2028, NEL


FLOATS = [
    698.0, 0.0, -0.0, 1e16, 1e21, 1e20, 1e-6, 1e-7, 1.5e-7, 0.1, 0.30000000000000004, 123.456, -5e-324,
    1.7976931348623157e308, 2.5e-5, 12345678.9, 1e300, 100.0, 0.000123,
]  # fmt: skip
INTEGERS = [0, 1, -1, 2**53 - 1, 2**53, 2**53 + 1, 2**64, -(2**63), 10**21, 10**22, 12345678901234567890123]


def test_numbers_print_as_javascript_prints_them(node):
    texts = [repr(f) if "e" in repr(f) or "." in repr(f) else f"{f}.0" for f in FLOATS] + [str(i) for i in INTEGERS]
    answers = as_node(node, texts)
    for text, (expected, length) in zip(texts, answers, strict=True):
        value = json.loads(text)
        assert json_stringify(value) == expected, text
        assert utf16_length(json_stringify(value)) == length, text
    assert js_number(698.0) == "698" and js_number(1e16) == "10000000000000000" and js_number(-0.0) == "0"


_SPECIAL = list('"\\\n\t\r\x08\x0c\x00\x1f\x7f\x85\u2028😀é') + ["\ud800", "\udfff"]
#: keys JavaScript prints first (array indexes) and keys that only look like one
_KEYS = ["k", "k2", "0", "10", "01", "-1", "4294967294", "4294967295", "1.5"]


def random_json(rnd: random.Random, depth: int = 0) -> object:
    """Any JSON value with the numbers and characters JavaScript prints differently."""
    kind = rnd.randrange(7 if depth < 3 else 5)
    if kind == 0:
        return rnd.choice([None, True, False])
    if kind == 1:
        return rnd.choice(INTEGERS + [rnd.randint(-(10**25), 10**25), rnd.randint(-1000, 1000)])
    if kind == 2:
        exponent = rnd.randint(-330, 308)
        return rnd.choice(
            FLOATS + [rnd.uniform(-1e6, 1e6), rnd.random() * 10.0**exponent, float(rnd.randint(0, 10**6))]
        )
    if kind in (3, 4):
        return "".join(rnd.choice(_SPECIAL + list("abc xyz")) for _ in range(rnd.randrange(12)))
    if kind == 5:
        return [random_json(rnd, depth + 1) for _ in range(rnd.randrange(4))]
    return {
        random_json(rnd, 3) if rnd.random() < 0.3 else rnd.choice(_KEYS): random_json(rnd, depth + 1) for _ in range(3)
    }


def test_any_json_prints_and_counts_as_javascript(node):
    rnd = random.Random(20261201)
    values = [random_json(rnd) for _ in range(3000)]
    values = [v if not isinstance(v, dict) else {str(k): x for k, x in v.items()} for v in values]
    texts = [json.dumps(v) for v in values]  # ASCII: the lone surrogates travel escaped
    for text, (expected, length) in zip(texts, as_node(node, texts), strict=True):
        value = json.loads(text)
        assert json_stringify(value) == expected, text
        assert utf16_length(json_stringify(value)) == length, text


def test_deep_and_plain_arguments_print_as_javascript(node):
    """Arguments nested past orjson's depth, and plain ones (strings, integers, lists, objects with
    word keys: what orjson prints), print as node prints them."""
    deep: object = "leaf"
    for depth in range(400):
        deep = [deep] if depth % 2 else {"k": deep, "n": depth}
    plain = [{"path": "src/a.py", "line": 12, "ok": True, "tags": ["x", "é😀"], "none": None}, "plain", 2**53 - 1]
    values = [deep, *plain, {"nested": plain}]
    texts = [json.dumps(v) for v in values]
    for text, (expected, _) in zip(texts, as_node(node, texts), strict=True):
        assert json_stringify(json.loads(text)) == expected, text[:80]


def test_astral_characters_count_two():
    assert utf16_length("a😀b") == 4 and utf16_length("é") == 1 and utf16_length("") == 0


TRUTH_AND_STRING = """
const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(Boolean);
for (const line of lines) {
  const v = JSON.parse(line);
  process.stdout.write(JSON.stringify([v ? true : false, `${v}`]) + '\\n');
}
"""


def test_flags_and_fields_of_any_json_are_read_and_printed_as_javascript_reads_them(node):
    """`js_truthy` is `if (value)` and `js_string` is `${value}`, for what a transcript's flags and
    printed fields (a bash execution's `cancelled`, `exitCode`, an assistant's `errorMessage`) may hold."""
    values = [
        None, True, False, 0, 1, -1, 2, 0.0, -0.0, 1.5, 1e21, 2**53 + 1, 12345678901234567890, "", "0", "false",
        "yes", " ", [], [0], [None, 1, "a", [2, [3]]], [[], {}], {}, {"a": 1}, "ünïcode ☃",
    ]  # fmt: skip
    rnd = random.Random(20261204)
    texts = [json.dumps(v) for v in values] + [json.dumps(random_json(rnd)) for _ in range(1000)]
    out = subprocess.run(
        [node, "-e", TRUTH_AND_STRING], input="\n".join(texts) + "\n", capture_output=True, text=True, check=True
    ).stdout
    answers = [json.loads(line) for line in out.split("\n") if line]
    for text, (truthy, string) in zip(texts, answers, strict=True):
        value = json.loads(text)
        assert (js_truthy(value), js_string(value)) == (truthy, string), text
