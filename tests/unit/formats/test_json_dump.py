"""JSON text at any depth (`replaylab.json_dump`): orjson's text wherever orjson prints it, and
the same text, from a stack of its own, where a transcript nests deeper than orjson prints."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.json_dump import compact_json


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
        max_leaves=20,
    ),
    st.integers(0, 1_000),
)
def test_compact_json_prints_as_orjson_at_any_depth(value, depth) -> None:
    """What orjson prints, orjson's way; nested deeper than orjson prints (or Python recurses),
    the same text from a stack of the encoder's own, sorted keys included."""

    for sort_keys in (False, True):
        shallow = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
        assert compact_json(value, sort_keys=sort_keys) == shallow
        nested: object = value
        for _ in range(depth):
            nested = [nested]
        assert compact_json(nested, sort_keys=sort_keys) == "[" * depth + shallow + "]" * depth
