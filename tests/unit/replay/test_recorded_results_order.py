"""`RecordedResults.play`/`upcoming` skip a key's played calls once: they must still return the
first unplayed recorded call of the key, as a plain scan of its positions does."""

from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.replay.tools.recorded_results import RecordedResult, RecordedResults, call_key

TOOLS = ("read", "ls")
ARGS = ({}, {"path": "a"})

_ops = st.lists(
    st.tuples(st.sampled_from(("play", "upcoming", "restore", "reset")), st.sampled_from(TOOLS), st.sampled_from(ARGS)),
    max_size=40,
)
_calls = st.lists(st.tuples(st.sampled_from(TOOLS), st.sampled_from(ARGS)), max_size=12)


def _first_unplayed(results: RecordedResults, played: set[int], tool: str, args: dict) -> int | None:
    """The plain rule: the first position of the call's key not in `played`."""
    key = call_key(tool, args)
    return next(
        (p for p, r in enumerate(results.results) if call_key(r.tool, r.arguments) == key and p not in played), None
    )


@settings(max_examples=200, deadline=None)
@given(_calls, _ops)
def test_play_and_upcoming_match_a_plain_scan(calls: list, ops: list) -> None:
    results = RecordedResults(
        RecordedResult(f"c{i}", tool, dict(args), f"r{i}", False) for i, (tool, args) in enumerate(calls)
    )
    played: set[int] = set()
    for op, tool, args in ops:
        if op == "restore":  # a play state restored to what it was: the skipped counts start over
            results = results.restored(results.state())
            continue
        if op == "reset":  # a fresh play state over the same results: every call unplayed again
            results, played = results.restored(), set()
            continue
        expected = _first_unplayed(results, played, tool, args)
        got = results.upcoming(tool, args) if op == "upcoming" else results.play(tool, args)
        assert got is (None if expected is None else results.results[expected])
        if op == "play" and expected is not None:
            played.add(expected)
        assert results.state() == frozenset(played)
