"""Which identifiers a window shows nowhere (`replaylab.checks.identifiers`): the answer of one
search of the text per value, found in a few passes of one automaton over the text where the
values are many and the text long (the inputs here are sized for that)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaylab.checks.identifiers import MAX_PASSES, absent_from, identifier_defects, invisible_identifiers
from replaylab.transcript import build_window
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import MessageEntry, UserMessage

#: pieces that overlap one another (`abcd` / `bcde`), differ only in case, or repeat one character
PIECES = ["abcd", "bcde", "cdef", "ABCD", "ab", "de", "a", "aaaa", "ß", "SS", "0f3a9c", "0F3A9C", " ", "\n", "é"]
values = st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map("".join)


#: a text this long, and this many values, make the passes of the automaton cheaper than the searches
LONG, MANY = 20_000, 300


def long_text(pieces: list[str]) -> str:
    """The pieces joined and repeated until the text is `LONG`."""
    text = "".join(pieces) or "z"
    return (text * (LONG // len(text) + 1))[:LONG]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(values, min_size=MANY, max_size=MANY + 100), st.lists(st.sampled_from(PIECES), max_size=12))
def test_the_values_a_text_lacks_are_those_no_search_finds(wanted: list[str], pieces: list[str]) -> None:
    """Whatever overlaps whatever, in order and with repeats: as `value not in text` per value,
    and, upper-cased, as IDENTIFIER_LOST's second look."""
    text = long_text(pieces)
    assert absent_from(wanted, text) == [v for v in wanted if v not in text]
    upper = text.upper()
    assert invisible_identifiers(wanted, text) == [v for v in wanted if v not in text and v.upper() not in upper]


def test_a_value_hidden_by_an_overlapping_match_is_found_in_a_later_pass() -> None:
    """`abcd` matches first where `bcde` also occurs: `bcde` is not absent (a first pass alone
    would have reported it lost), and a value that occurs nowhere is."""
    text = "abcde" + "x" * LONG
    missing = [f"missing-{n}" for n in range(MANY)]
    assert absent_from(["abcd", "bcde", "cde", *missing], text) == missing


def test_values_that_overlap_without_end_are_settled_after_the_passes() -> None:
    """Runs of one character, each hiding the next in every pass: more of them than passes, the
    rest are searched one by one, and the longest, longer than the text, are absent."""
    text = "a" * LONG
    wanted = ["a" * n for n in range(1, MAX_PASSES * 40)] + ["a" * (LONG + 1), "b"] + [f"b{n}" for n in range(MANY)]
    assert absent_from(wanted, text) == ["a" * (LONG + 1), "b"] + [f"b{n}" for n in range(MANY)]


def test_an_identifier_shown_only_upper_cased_is_not_lost() -> None:
    text = "order 0F3A9C12 shipped " * 1_000
    missing = [f"id-{n:04d}" for n in range(MANY)]
    assert invisible_identifiers(["0f3a9c12", "0F3A9C12", "deadbeef99", *missing], text) == ["deadbeef99", *missing]


def test_a_path_shown_without_the_slash_a_pattern_put_before_it_is_not_lost() -> None:
    """OpenClaw 2026.4.12's pattern takes `/src/cmd/x_test.go` out of `./src/cmd/x_test.go`: a
    window that writes `src/cmd/x_test.go` shows that file. A one-part path and a path the window
    writes nowhere are still lost."""
    text = "sed -i 's/a/b/' src/cmd/x_test.go && git checkout src/cmd/x_test.go"
    wanted = ["/src/cmd/x_test.go", "/cmd/x_test.go", "/src/other/y.go", "/y_test.go"]
    assert invisible_identifiers(wanted, text) == ["/src/other/y.go", "/y_test.go"]


def _entries(*messages: dict) -> list[MessageEntry]:
    return [
        MessageEntry.model_validate(
            {"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": 1, "message": m}
        )
        for i, m in enumerate(messages)
    ]


def test_identifiers_of_calls_and_json_results_are_judged_value_by_value() -> None:
    """A call's arguments and an API's JSON result hold their identifiers glued by JSON's quotes
    and escapes: a summary that carries the URL, the paths and the id loses nothing, and one that
    drops the path is told so with the path alone."""
    history = _entries(
        {"role": "user", "content": "check the config"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "fetch",
                    "arguments": {"url": "https://x.org/a", "prompt": "Why?"},
                },
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "cd /srv/app\ngit log"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "fetch",
            "content": [
                {"type": "text", "text": '{"url":"https://x.org/b","path":"/srv/app/config.yml","id":"a1b2c3d4e5f6"}'}
            ],
            "isError": False,
        },
    )
    carried = "https://x.org/a https://x.org/b /srv/app a1b2c3d4e5f6"
    for memo in (None, ItemMemo()):
        summary = WindowMessage(None, UserMessage(role="user", content=carried + " /srv/app/config.yml"))
        assert identifier_defects(None, history, [summary], memo) == []  # type: ignore[arg-type]
        summary = WindowMessage(None, UserMessage(role="user", content=carried))
        [lost] = identifier_defects(None, history, [summary], memo)  # type: ignore[arg-type]
        assert lost.actual == ["/srv/app/config.yml"]
    assert [w.entry_id for w in build_window(history)] == ["e0", "e1", "e2"]


def test_a_loss_fails_only_where_the_agent_writes_the_identifier_again() -> None:
    """A listing's ids the recording never names again are a warning (the loss is real, nothing
    after depended on it); an id the agent writes again later, in an answer or a call, fails."""
    history = _entries(
        {"role": "user", "content": "what do you sell?"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Products 1075968781, 7352963235 and 4354588079."}],
        },  # fmt: skip
    )
    summary = [WindowMessage(None, UserMessage(role="user", content="The store sells three products."))]
    asked = _entries({"role": "user", "content": "anything else?"}, {"role": "assistant", "content": [{"type": "text", "text": "No."}]})  # fmt: skip
    [warning] = identifier_defects(None, history, summary, None, lambda: asked)  # type: ignore[arg-type]
    assert warning.severity == "warning" and "never names them again" in warning.message
    # where they were last seen: the summarized answer that listed them
    sources = dict.fromkeys(["1075968781", "7352963235", "4354588079"], "e1")
    assert warning.detail == {"needed_later": 0, "never_named_again": 3, "source_entries": sources}
    assert warning.where.entry_id == "e1"
    bought = _entries(
        {"role": "user", "content": "buy the second one"},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c9", "name": "buy", "arguments": {"product_id": "7352963235"}}],
        },  # fmt: skip
    )
    [regression] = identifier_defects(None, history, summary, None, lambda: bought)  # type: ignore[arg-type]
    assert regression.severity == "regression" and regression.actual == ["7352963235"]
    assert "(and 2 the rest of the recording never names again)" in regression.message
