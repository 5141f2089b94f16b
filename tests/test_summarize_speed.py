"""The safeguard summary's scans are cheaper and shared, with byte-identical results (issue 8).

What changed, and what each change is compared with (the implementations it replaced are kept
below, verbatim, in `Prev`):
* `replaylab.values.identifier_tokens`: one regex pass that yields only the identifier-like
  tokens, instead of every `IDENT_RE` token filtered in Python → `Prev.identifier_tokens`;
* `replaylab.compaction.identifiers`: OpenClaw's opaque-identifier patterns behind a lookahead
  for their first characters, the Windows-path alternative only for texts holding ':\\'
  → `Prev.PATTERNS`;
* `TextScans`: each text scanned once per compaction; the guard's seed (the last 10 messages
  joined) read from the messages' own scans → `extract_*` of the joined text, `Prev.identifier_seed`;
* `summarize.text_of` rebuilt on `_text_parts`, `scan_text` for the scans → `Prev.text_of`;
* the harness: the last window's token sum reused (not summed again), paths resolved only when
  spelled differently.
End to end, `compact()` as it is must give exactly what it gives with every previous
implementation swapped back in (`previous()`): the CompactResult JSON and the written entry
(minus diag id and timestamps), on the helpdesk recordings in every mode and, with
../shared/data, on the real sessions. No timing is asserted: the long runs only have to finish.
"""

from __future__ import annotations

import contextlib
import functools
import re
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest
from loopback import imported_real_sessions
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.compaction import CompactParams, compact, harness, identifiers, summarize
from replaylab.compaction.identifiers import (
    TextScans,
    extract_identifiers,
    extract_opaque_identifiers,
    extract_value_tokens,
)
from replaylab.compaction.summarize import identifier_seed, scan_text, text_of
from replaylab.constants import IDENTIFIER_SEED_MESSAGES
from replaylab.replay.toolpack import load_tool_pack
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript import build_window, load_transcript
from replaylab.transcript.model import MESSAGE_ADAPTER, MessageEntry, TextBlock, message_text
from replaylab.transcript.tokens import estimate_tokens
from replaylab.values import IDENT_RE, MIN_STRING_CHARS, _MARKED, identifier_tokens, is_identifier_like

REPO = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------- the replaced implementations


class Prev:
    """The implementations before this change, copied unchanged (namespaced to keep them apart)."""

    OPAQUE = re.compile(identifiers._OPAQUE_RE, re.ASCII)
    OPAQUE_NO_PORT = re.compile(identifiers._OPAQUE_RE.replace(identifiers._HOST_PORT_ALTERNATIVE, ""), re.ASCII)
    #: `_opaque_matches` used these two for every text
    PATTERNS = {True: (OPAQUE, OPAQUE_NO_PORT), False: (OPAQUE, OPAQUE_NO_PORT)}

    @staticmethod
    def identifier_tokens(text: str) -> list[str]:
        """Identifier-like tokens of a text, in order (duplicates kept)."""
        # `is_identifier_like` inlined: a call per token was a third of the scan (the tests pin the two)
        return [token for token in IDENT_RE.findall(text) if len(token) >= MIN_STRING_CHARS
                and (token.isupper() or not token.isalpha() and _MARKED.search(token) is not None)]

    @staticmethod
    def text_of(message: Any) -> str:
        """OpenClaw `extractMessageText`: trimmed text blocks (or string content), joined by newlines."""
        content = getattr(message, "content", None)
        if isinstance(content, str):
            return content.strip()
        if isinstance(content, list):
            return "\n".join(b.text.strip() for b in content if isinstance(b, TextBlock) and b.text.strip()).strip()
        for attr in ("summary", "output"):
            value = getattr(message, attr, None)
            if isinstance(value, str):
                return value.strip()
        return ""

    @staticmethod
    def identifier_seed(messages: Any, scans: Any = None) -> list[str]:
        """OpenClaw's quality-guard identifiers: ≤ 12 from the last 10 messages' text."""
        text = "\n".join(t for m in messages[-IDENTIFIER_SEED_MESSAGES:] if (t := Prev.text_of(m)))
        return extract_opaque_identifiers(text)


class NoScans:
    """What the summary did before `TextScans`: scan every text at every read."""

    def __init__(self, *_: Any, **__: Any):
        pass

    def identifiers(self, text: str) -> tuple[str, ...]:
        return tuple(extract_identifiers(text))

    def value_tokens(self, text: str) -> tuple[str, ...]:
        return tuple(extract_value_tokens(text))


@contextlib.contextmanager
def previous() -> Iterator[None]:
    """Every replaced piece swapped back in (module attributes, restored on exit)."""
    swaps = [(identifiers, "_OPAQUE_PATTERNS", Prev.PATTERNS),
             (identifiers, "identifier_tokens", Prev.identifier_tokens),
             (summarize, "text_of", Prev.text_of),
             (summarize, "scan_text", Prev.text_of),  # the aggressive span scan read text_of
             (summarize, "TextScans", NoScans),
             (harness, "item_scans", NoScans),
             (harness, "identifier_seed", Prev.identifier_seed)]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in swaps]
    try:
        for owner, name, value in swaps:
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


# ---------------------------------------------------------------- generated texts and messages

#: what the regexes care about: id characters (`A-Za-z0-9_.@#:/+-`), hex, ':' + digit, ':\\',
#: quotes and brackets, ASCII and Unicode whitespace, non-ASCII letters and digits
TRICKY = ("0123456789abcdefABCDEFghpstxzGHXZ:/.-_@#\\+\"'`()[]{}<>,;!?= \t\r\n"
          "\xa0\u2003\x1c\x85\u2028é\u0434\u65e5\u0663")
#: pieces that make the rarer cases frequent: short and upper-case tokens, marks at a run's
#: edges, `#` before and after alphanumerics, Windows paths, host:port, URLs, e-mails
FRAGMENTS = ("#", "##", "#a", "#ab", "a#", "ab", "AB", "ID.", "1.", "12", "$30", "e.g.", "A.B", "a.b", "x_", "_x",
             "a_b", "@", "a@b.co", "ORD-48213", "#W2378156", "mia_garcia_4516", "JFK", "M05KNL", "C:\\tmp\\x",
             "c:\\x.y", "x.y:80", "localhost:8080", "http://h.io:8080/p", "https://x.io/a?b=1).", "/usr/lib",
             "deadbeef01", "DEADBEEF01", "1234567", "(abc12345)", "'f00dfeed',", "\xa0", "\n", " ", "é")
TEXTS = st.one_of(st.text(alphabet=TRICKY, max_size=80),
                  st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=TRICKY, max_size=6)), max_size=30)
                  .map("".join))
#: text blocks padded with whitespace: `text_of` trims it, the scans must not care
PADDED = st.tuples(st.sampled_from(["", " ", "\n", "\t ", "\xa0"]), TEXTS,
                   st.sampled_from(["", " ", "\n\n", "\u2003"])).map("".join)
EXAMPLES = settings(max_examples=300, deadline=None, database=None, derandomize=True)


@st.composite
def messages(draw: Any) -> Any:
    """A user, assistant (text, thinking, calls), tool-result, bash or custom message."""
    kind = draw(st.sampled_from(["user", "user-blocks", "assistant", "tool", "tool-blocks", "bash", "custom"]))
    blocks = [{"type": "text", "text": t} for t in draw(st.lists(PADDED, max_size=3))]
    if kind == "user":
        data: dict[str, Any] = {"role": "user", "content": draw(PADDED)}
    elif kind == "user-blocks":
        data = {"role": "user", "content": blocks}
    elif kind == "assistant":
        extra = [{"type": "thinking", "thinking": draw(TEXTS)}] if draw(st.booleans()) else []
        extra += [{"type": "toolCall", "id": f"c{i}", "name": "get_order", "arguments": {"order_id": draw(TEXTS)}}
                  for i in range(draw(st.integers(0, 2)))]
        data = {"role": "assistant", "content": blocks + extra}
    elif kind == "tool":
        data = {"role": "toolResult", "toolCallId": "c0", "toolName": "get_order", "content": draw(PADDED)}
    elif kind == "tool-blocks":
        data = {"role": "toolResult", "toolCallId": "c0", "toolName": "get_order", "content": blocks}
    elif kind == "bash":
        data = {"role": "bashExecution", "command": draw(TEXTS), "output": draw(PADDED)}
    else:
        data = {"role": "custom", "customType": "note", "content": draw(PADDED)}
    return MESSAGE_ADAPTER.validate_python(data)


# ---------------------------------------------------------------- identifier tokens (values.py)


def assert_tokens_same(text: str) -> None:
    assert identifier_tokens(text) == Prev.identifier_tokens(text)
    assert identifier_tokens(text) == [t for t in IDENT_RE.findall(text) if is_identifier_like(t)]


@EXAMPLES
@given(TEXTS)
def test_identifier_tokens_same_as_previous(text):
    assert_tokens_same(text)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.text(max_size=200))
def test_identifier_tokens_same_as_previous_on_any_unicode(text):
    assert_tokens_same(text)


def test_identifier_tokens_pinned():
    """The cases the one-pass regex has to get right, spelled out: a run gives one token from its
    first alphanumeric (or the `#` before it) to its last; 2-char tokens, words with a lower-case
    letter and no digit/_/@/#, and marks outside the token never count; `#` and `_` inside do."""
    text = "ID. 1. $30 e.g. a.b A.B x_ _ab a_b #ab ##a1 a# JFK iPhone ORD-48213 --#W23-- mia@x.io _x_y_"
    expected = ["A.B", "a_b", "#ab", "#a1", "JFK", "ORD-48213", "#W23", "mia@x.io", "x_y"]
    assert identifier_tokens(text) == Prev.identifier_tokens(text) == expected


M = 1_000_000
#: runs that would make a careless pattern backtrack quadratically (each must simply finish)
LONG_RUNS = {
    "lower-case word": "a" * M,
    "dotted word then underscores": "a.b" + "_" * M,
    "underscores then a dotted word": "_" * M + "a.b",
    "hashes then a token": "#" * M + "ab",
    "dashes then digits": "-" * M + "a1",
    "one long token": "aB1_" * (M // 4),
    "alternating a_": "a_" * (M // 2),
    "upper-case dotted": "A." * (M // 2),
    "mixed case then a digit": "Ab" * (M // 2) + "1",
    "lower case after a mark": "x_" + "a" * M + ".",
    "digits": "7" * M,
    "prose with identifiers": "réservation deadbeef ORD-48213 /tmp/x a@b.co C:\\x\\y " * (M // 50),
}


@pytest.mark.parametrize("name", list(LONG_RUNS))
def test_identifier_tokens_same_on_long_runs(name):
    assert_tokens_same(LONG_RUNS[name])


# ---------------------------------------------------------------- opaque identifiers (patterns)


def assert_opaque_same(text: str) -> None:
    """Every extraction agrees with the previous patterns (the per-chunk original is compared
    with in test_identifiers_speed.py)."""
    found = (extract_identifiers(text), extract_opaque_identifiers(text), extract_opaque_identifiers(text, limit=None),
             extract_value_tokens(text))
    with previous():
        assert found == (extract_identifiers(text), extract_opaque_identifiers(text),
                         extract_opaque_identifiers(text, limit=None), extract_value_tokens(text))


@EXAMPLES
@given(TEXTS)
def test_opaque_identifiers_same_as_previous(text):
    assert_opaque_same(text)


@pytest.mark.parametrize("name", ["prose with identifiers", "dotted word then underscores", "digits"])
def test_opaque_identifiers_same_on_long_runs(name):
    assert_opaque_same(LONG_RUNS[name])


def test_windows_paths_found_only_where_they_are():
    """The Windows-path alternative is left out only for texts without ':\\' — where it cannot match."""
    with_path = "copy C:\\tmp\\a.txt and deadbeef01"
    assert extract_identifiers(with_path) == ["C:\\tmp\\a.txt", "deadbeef01"]
    assert extract_identifiers("copy C:/tmp/a.txt and deadbeef01") == ["/tmp/a.txt", "deadbeef01"]


# ---------------------------------------------------------------- TextScans


@EXAMPLES
@given(st.lists(TEXTS, max_size=6), st.sampled_from([12, None, 1, 3]))
def test_text_scans_equal_the_extract_functions(texts, limit):
    """Per text: the extract functions' results, the second read served from the memo; over a
    list: the joined text's opaque identifiers (any texts, untrimmed or empty)."""
    scans = TextScans()
    for text in texts:
        assert scans.identifiers(text) == tuple(extract_identifiers(text))
        assert scans.value_tokens(text) == tuple(extract_value_tokens(text))
        assert scans.identifiers(text) is scans.identifiers(text)
    assert scans.opaque_identifiers(texts, limit) == extract_opaque_identifiers("\n".join(texts), limit)
    assert TextScans().opaque_identifiers(texts, limit) == extract_opaque_identifiers("\n".join(texts), limit)


def test_text_scans_keep_at_most_max_chars():
    """Beyond `max_chars` a text is scanned and answered, not kept (a new tuple at each read)."""
    scans = TextScans(max_chars=20)
    short, long = "ORD-48213 deadbeef01", "x" * 21 + " deadbeef02"
    assert scans.identifiers(short) is scans.identifiers(short)  # kept
    assert scans.identifiers(long) == ("deadbeef02",) and scans.identifiers(long) is not scans.identifiers(long)
    assert scans.value_tokens("JFK") == ("JFK",) and scans.value_tokens("JFK") is not scans.value_tokens("JFK")


# ---------------------------------------------------------------- message texts and the seed


@EXAMPLES
@given(messages())
def test_text_of_and_scan_text(message):
    """`text_of` is unchanged; `scan_text` scans like it; for text-only messages it is the very
    string `message_text` gives (the key the summary's span scan shares)."""
    assert text_of(message) == Prev.text_of(message)
    scanned, trimmed = scan_text(message), Prev.text_of(message)
    assert extract_identifiers(scanned) == extract_identifiers(trimmed)
    assert extract_value_tokens(scanned) == extract_value_tokens(trimmed)
    content = getattr(message, "content", None)
    if isinstance(content, str) or isinstance(content, list) and all(isinstance(b, TextBlock) for b in content):
        assert scanned == message_text(message)


@EXAMPLES
@given(st.lists(messages(), max_size=14))
def test_identifier_seed_same_as_previous(batch):
    """The seed from the messages' own scans is the joined text's, with or without a memo that
    already holds some of them (as when the guard seed follows an earlier summary call)."""
    expected = Prev.identifier_seed(batch)
    assert identifier_seed(batch) == expected
    scans = TextScans()
    for message in batch[::2]:
        scans.identifiers(scan_text(message))
    assert identifier_seed(batch, scans) == expected


# ---------------------------------------------------------------- compact() end to end


def _outcome(params: CompactParams, classifier: ToolClassifier | None, work: Path) -> dict[str, Any]:
    """CompactResult JSON and the written entry, minus diag ids, timestamps and the copy's path."""
    work.mkdir(parents=True, exist_ok=True)
    params = params.model_copy(update={"working_copy": str(work / Path(params.session_file).name)})
    result = compact(params, classifier=classifier)
    entry = None
    if result.success:
        entry = orjson.loads(Path(result.working_copy).read_bytes().splitlines()[-1])
    text = orjson.dumps({"result": result.model_dump(mode="json", by_alias=True), "entry": entry}).decode()
    return _drop(orjson.loads(text.replace(str(work), "<copy>")))


@functools.lru_cache(maxsize=8)
def _transcript(path: str) -> Any:
    return load_transcript(path)


def _check_tokens(params: CompactParams, outcome: dict[str, Any]) -> None:
    """The harness's own change (the last window's token sum reused, the window items' tokens
    summed), checked against estimates made here: `previous()` cannot swap lines inside `run()`."""
    result, entry = outcome["result"], outcome["entry"]
    before = build_window(_transcript(params.session_file).path_to(params.leaf_id))
    assert result["originalTokenCount"] == sum(estimate_tokens(w.message) for w in before)
    if entry is not None:
        items = result["compactedWindow"]
        assert [i["tokens"] for i in items] == [estimate_tokens(MESSAGE_ADAPTER.validate_python(i["message"]))
                                                for i in items]
        assert result["compactedTokenCount"] == sum(i["tokens"] for i in items) == entry["details"]["replaylab"]["tokensAfter"]


def _drop(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop(v) for k, v in value.items() if k not in ("diagId", "timestamp")}
    if isinstance(value, list):
        return [_drop(v) for v in value]
    return value


def assert_compact_same(params: CompactParams, classifier: ToolClassifier | None, work: Path) -> dict[str, Any]:
    now = _outcome(params, classifier, work / "now")
    _check_tokens(params, now)
    with previous():
        before = _outcome(params, classifier, work / "before")
    assert now == before, (params.session_file, params.compaction_mode, params.leaf_id)
    return now


HELPDESK = sorted((REPO / "recordings" / "helpdesk").glob("*.jsonl"))
#: the suites' budget (small: compactions happen, the tail refits, protected entries crowd the window)
SMALL = dict(context_tokens=3200, reserve_tokens_floor=800, keep_recent_tokens=500, max_history_share=0.5)
VARIANTS = {
    "safeguard": dict(compaction_mode="safeguard", **SMALL),
    "safeguard-flaky": dict(compaction_mode="safeguard", summarizer_failures=2, **SMALL),
    "safeguard-no-preserve": dict(compaction_mode="safeguard", recent_turns_preserve=0, identifier_policy="off",
                                  allow_mutating_event_truncate=True, **SMALL),
    "auto": dict(compaction_mode="auto", **SMALL),
    "aggressive": dict(compaction_mode="aggressive", **SMALL),
    "manual": dict(compaction_mode="manual", **SMALL),
    "safeguard-large": dict(compaction_mode="safeguard", context_tokens=12000, reserve_tokens_floor=2000,
                            keep_recent_tokens=1500),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_compact_same_as_previous_on_helpdesk_recordings(variant, tmp_path):
    """Every bundled recording, compacted at its leaf and at every sixth message (force): the
    same results and entries as with the previous implementations."""
    assert len(HELPDESK) >= 10
    classifier = ToolClassifier.from_tool_pack(load_tool_pack("plugins.helpdesk"))
    outcomes = []
    for index, path in enumerate(HELPDESK):
        ids = [e.id for e in load_transcript(path).leaf_path() if isinstance(e, MessageEntry)]
        for leaf in [None, *ids[4::6]]:
            params = CompactParams(session_file=str(path), leaf_id=leaf, force_compact=True, **VARIANTS[variant])
            outcomes.append(assert_compact_same(params, classifier, tmp_path / f"{index}-{leaf}"))
    assert any(o["result"]["success"] for o in outcomes)  # the comparison covered written compactions
    if variant.startswith("safeguard"):
        assert any(o["result"]["summaryText"] and not o["result"]["success"] for o in outcomes)


@pytest.mark.realdata
def test_compact_same_as_previous_on_real_sessions(shared_data, tmp_path):
    """τ-bench, τ²-bench, Claude Code and pi sessions (every third), four ways each."""
    paths = imported_real_sessions(shared_data, tmp_path / "sessions")
    assert len(paths) > 100
    variants = [dict(compaction_mode="safeguard", context_tokens=12000, reserve_tokens_floor=2000,
                     keep_recent_tokens=1500),
                dict(compaction_mode="safeguard", **SMALL),
                dict(compaction_mode="aggressive", context_tokens=12000, reserve_tokens_floor=2000),
                dict(compaction_mode="manual", context_tokens=12000, reserve_tokens_floor=2000)]
    written = 0
    for index, path in enumerate(paths[::3]):
        for number, variant in enumerate(variants):
            params = CompactParams(session_file=str(path), force_compact=True, **variant)
            written += assert_compact_same(params, None, tmp_path / f"{index}-{number}")["result"]["success"]
    assert written > 50
