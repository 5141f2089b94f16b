"""Places in JSON text (`replaylab.scrub.json_text`): the string a byte is in, found from the
quotes before it, as a byte-by-byte read of the text finds it."""

from __future__ import annotations

import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.scrub.json_text import string_around


def _strings_of(blob: bytes) -> list[tuple[int, int]]:
    """(start, end) of every JSON string of `blob`, quotes included, read byte by byte."""
    spans, start, escaped = [], -1, False
    for at, byte in enumerate(blob):
        if start < 0:
            if byte == 0x22:
                start = at
        elif escaped:
            escaped = False
        elif byte == 0x5C:
            escaped = True
        elif byte == 0x22:
            spans.append((start, at + 1))
            start = -1
    return spans


#: texts whose JSON has quotes, backslashes in runs (JSON inside JSON inside JSON), control
#: characters and non-ASCII letters: where a quote opens, closes or is escaped is what is asked
_TRICKY_TEXT = st.text(alphabet='"\\/{}[]:, tokenpath\n\té\u212a\x1b', max_size=12)
_NESTED_TEXT = st.recursive(
    _TRICKY_TEXT,
    lambda inner: st.builds(json.dumps, st.lists(inner, max_size=3) | st.dictionaries(inner, inner, max_size=2)),
    max_leaves=6,
)
_JSON_VALUES = st.recursive(
    st.none() | st.integers(-(2**63), 2**63 - 1) | _NESTED_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_NESTED_TEXT, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(value=_JSON_VALUES, indent=st.booleans())
def test_the_string_a_needle_is_in_is_found_from_its_quotes_alone(value: object, indent: bool) -> None:
    """The clean check finds the string around a needle by counting the quotes before it and
    finding the nearest unescaped ones (`string_around`), not by scanning string by string: at
    every place of JSON text, from its start and from the end of the last string before it, that is
    the string a byte-by-byte read puts the place in, or none outside every string."""
    blob = json.dumps(value, indent=1).encode() if indent else orjson.dumps(value)
    around: list[tuple[int, int] | None] = [(-1, -1)] * len(blob)  # None: a quote, where no needle starts
    last_end = [0] * len(blob)  # the end of the last string before each place
    for start, end in _strings_of(blob):
        around[start] = around[end - 1] = None
        around[start + 1 : end - 1] = [(start, end)] * (end - start - 2)
        last_end[end:] = [end] * (len(blob) - end)
    for at, inside in enumerate(around):
        if inside is not None:
            for pos in {0, last_end[at]}:
                assert string_around(blob, pos, at) == inside, (blob, pos, at)
