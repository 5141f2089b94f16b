"""The fast identifier/value extraction returns exactly what the chunk-by-chunk implementation did.

`replaylab.compaction.identifiers` and `replaylab.values.identifier_tokens` were rewritten for speed
(issue 8): whole-text regex passes instead of a Python loop per whitespace chunk, and a cheap
filter instead of a call per token. The summary, the quality guard, `IDENTIFIER_LOST` and the
replay model's grounding all depend on these lists, so the old implementations are kept below,
verbatim, as the reference: every test compares old and new, list for list (order, spelling,
dedup), on real message texts, on generated texts rich in the characters the regexes care about,
and on adversarial long runs. No timing is asserted (the bench measures speed); the long-run
tests only have to finish and agree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab import constants as C
from replaylab.compaction.identifiers import extract_identifiers, extract_opaque_identifiers, extract_value_tokens
from replaylab.compaction.summarize import text_of
from replaylab.transcript.model import message_text
from replaylab.values import IDENT_RE, identifier_tokens, is_identifier_like

# ---------------------------------------------------------------- the reference (before issue 8)


class Old:
    """The implementations before the speed-up, copied unchanged (namespaced to keep them apart)."""

    OPAQUE = re.compile(C.OPAQUE_IDENTIFIER_RE, re.ASCII)
    HOST_PORT_ALTERNATIVE = r"|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5}"
    OPAQUE_NO_PORT = re.compile(C.OPAQUE_IDENTIFIER_RE.replace(HOST_PORT_ALTERNATIVE, ""), re.ASCII)
    CHUNK = re.compile(r"\S+")
    COLON_DIGIT = re.compile(r":\d")
    LEAD = re.compile(C.IDENTIFIER_LEADING_STRIP_RE)
    TRAIL = re.compile(C.IDENTIFIER_TRAILING_STRIP_RE)
    HEX = re.compile(C.PURE_HEX_IDENTIFIER_RE)
    EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+", re.ASCII)
    MAX_VALUE_TOKEN_CHARS = 120
    IDENT_RE = re.compile(r"#?[A-Za-z0-9][A-Za-z0-9_.@#:/+\-]*[A-Za-z0-9]")
    MARKED = re.compile(r"[0-9_@#]")

    @staticmethod
    def is_identifier_like(token: str) -> bool:
        return len(token) >= 3 and (token.isupper() or Old.MARKED.search(token) is not None)

    @staticmethod
    def identifier_tokens(text: str) -> list[str]:
        return [m.group(0) for m in Old.IDENT_RE.finditer(text) if Old.is_identifier_like(m.group(0))]

    @staticmethod
    def sanitize_identifier(value: str) -> str:
        return Old.TRAIL.sub("", Old.LEAD.sub("", value.strip()))

    @staticmethod
    def normalize_identifier(value: str) -> str:
        return value.upper() if Old.HEX.match(value) else value

    @staticmethod
    def opaque_matches(text: str) -> Iterable[str]:
        for chunk in Old.CHUNK.finditer(text):
            word = chunk.group(0)
            regex = Old.OPAQUE if Old.COLON_DIGIT.search(word) else Old.OPAQUE_NO_PORT
            for match in regex.finditer(word):
                value = Old.sanitize_identifier(match.group(0))
                if len(value) >= C.MIN_IDENTIFIER_CHARS:
                    yield value

    @staticmethod
    def extract_opaque_identifiers(text: str, limit: int | None = C.MAX_EXTRACTED_IDENTIFIERS) -> list[str]:
        seen: dict[str, None] = {}
        for value in Old.opaque_matches(text):
            seen.setdefault(Old.normalize_identifier(value), None)
            if limit is not None and len(seen) >= limit:
                break
        return list(seen)

    @staticmethod
    def extract_identifiers(text: str) -> list[str]:
        seen: set[str] = set()
        out: list[str] = []
        for value in Old.opaque_matches(text):
            key = Old.normalize_identifier(value)
            if key not in seen:
                seen.add(key)
                out.append(value)
        return out

    @staticmethod
    def extract_value_tokens(text: str) -> list[str]:
        seen: dict[str, None] = {}
        if "@" in text:
            for chunk in Old.CHUNK.finditer(text):
                if "@" in chunk.group(0):
                    for match in Old.EMAIL.finditer(chunk.group(0)):
                        seen.setdefault(Old.sanitize_identifier(match.group(0)), None)
        for token in Old.identifier_tokens(text):
            if len(token) <= Old.MAX_VALUE_TOKEN_CHARS:
                seen.setdefault(token, None)
        return list(seen)


def assert_same(text: str, *, limits: Iterable[int | None] = (None, 2)) -> None:
    """Every extraction function agrees with the reference on `text` (the guard's cap of 12, and
    each of `limits`), and `identifier_tokens` with `is_identifier_like`, which it inlines."""
    assert extract_identifiers(text) == Old.extract_identifiers(text)
    assert extract_opaque_identifiers(text) == Old.extract_opaque_identifiers(text)
    for limit in limits:
        assert extract_opaque_identifiers(text, limit=limit) == Old.extract_opaque_identifiers(text, limit=limit)
    assert extract_value_tokens(text) == Old.extract_value_tokens(text)
    assert identifier_tokens(text) == Old.identifier_tokens(text)
    assert identifier_tokens(text) == [t for t in IDENT_RE.findall(text) if is_identifier_like(t)]


# ---------------------------------------------------------------- generated texts

#: what the regexes care about: ':' + digits (host:port), hex, '/', '.', '-', '_', '@', '#', '\',
#: '+', quotes and brackets (the sanitizer's strip sets), ASCII and Unicode whitespace (chunk
#: boundaries: NBSP, em space, U+001C, NEL, U+2028), Unicode letters and an Arabic-Indic digit
#: (`\d` without re.ASCII), upper case, 'h' 't' 'p' 's' for URLs
TRICKY = ("0123456789abcdefABCDEFghpstxzGHXZ:/.-_@#\\+\"'`()[]{}<>,;!?= \t\r\n"
          "\xa0\u2003\x1c\x85\u2028é\u0434\u65e5\u0663")
#: pieces that make the rarer alternatives match often
FRAGMENTS = ("http://", "https://", "deadbeef", "DEADBEEF01", "123456", "1234567", "C:\\", "c:\\x.y",
             "/usr/", "/a", "x.y:80", "localhost:8080", "a.b:123456", "a@b.co", "x+y@ex-1.com", "@",
             "#W2378156", "mia_garcia_4516", ":1", "ORD-48213", "JFK", "M05KNL", "555-123-2002",
             "e.g.", "(abc12345)", "'f00dfeed',", "https://x.io/a?b=1).", "\xa0", "\n")
EXAMPLES = settings(max_examples=400, deadline=None, database=None, derandomize=True)


@EXAMPLES
@given(st.text(alphabet=TRICKY, max_size=300))
def test_same_as_reference_on_tricky_characters(text):
    assert_same(text)


@EXAMPLES
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet=TRICKY, max_size=8)), max_size=40)
       .map("".join))
def test_same_as_reference_on_identifier_fragments(text):
    assert_same(text)


@EXAMPLES
@given(st.text(max_size=200))
def test_same_as_reference_on_any_unicode(text):
    assert_same(text)


def test_chunk_boundaries_pinned():
    """The cases the whole-text passes had to get right, with the answers spelled out: a URL ends
    at Unicode whitespace (NBSP), host:port only in a chunk with ':' + digit (stretches of such
    chunks next to plain ones), the trailing strip, hex deduplicated case-insensitively, e-mails
    only from chunks holding an '@'."""
    text = "see http://h.io:8080/p\xa0q.r:99 (deadbeef01), DEADBEEF01 C:\\tmp\\x. /usr/lib\u2003mail:a@b.co."
    expected = ["http://h.io:8080/p", "q.r:99", "deadbeef01", "C:\\tmp\\x", "/usr/lib"]
    assert extract_identifiers(text) == Old.extract_identifiers(text) == expected
    assert extract_opaque_identifiers(text) == ["http://h.io:8080/p", "q.r:99", "DEADBEEF01", "C:\\tmp\\x", "/usr/lib"]
    assert extract_value_tokens(text)[:3] == ["a@b.co", "http://h.io:8080/p", "q.r:99"]
    assert extract_value_tokens(text) == Old.extract_value_tokens(text)


# ---------------------------------------------------------------- adversarial long runs

M = 1_000_000
LONG_RUNS = {
    "word chars": "a" * M,
    "word chars then a host:port chunk": "a" * M + " x.y:1",
    "dotted run": "a." * (M // 2),
    "hex run": "0123456789abcdef" * (M // 16),
    "digit run": "7" * M,
    "path run": "/a" * (M // 2),
    "underscores": "_" * M,
    "hashes": "#" * M,
    "long run beside an e-mail": "a" * M + " b@c.de",
    "host:port chunks": "x.y:1 " * (M // 6),
    "URLs split by NBSP": "http://a:1\xa0" * (M // 11),
    "whitespace of every kind": " \t\r\n\xa0\u2003\x1c\x85" * (M // 8),
    "prose with identifiers": "réservation deadbeef ORD-48213 /tmp/x a@b.co " * (M // 45),
    "windows path run": "C:\\" + "a" * M,
}


@pytest.mark.parametrize("name", list(LONG_RUNS))
def test_same_as_reference_on_long_runs(name):
    """1 MB runs: the scans stay linear (the test would hang otherwise) and agree."""
    assert_same(LONG_RUNS[name])


# ---------------------------------------------------------------- real sessions


def _real_texts(shared_data: Path, out: Path) -> tuple[list[str], list[str]]:
    """(each message's texts, each transcript's texts joined) of all real sessions. A message's
    texts: `message_text` (what the summary's span scan reads) and `text_of` (what its value tokens
    and the guard's seed read), and compaction summaries. Joined: as the QA view joins a span for
    IDENTIFIER_LOST. Deduplicated (many messages have one text block: both texts are the same)."""
    from replaylab.importers import import_sessions, write_session
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import MessageEntry

    sources = [("tau-bench", shared_data / "tau-bench" / "airline" / "gpt-4o-airline.json")]
    sources += [("tau2-bench", p) for p in sorted((shared_data / "tau2-bench").glob("*/*.json"))
                if p.name != "tool_classes.json"]
    sources += [("claude-code", shared_data / "claude-code-spotter" / "sessions")]
    sources += [("pi", p) for p in sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))]
    texts: dict[str, None] = {}
    joined: list[str] = []
    for index, (kind, src) in enumerate(sources):
        folder = out / f"{index}-{kind}"
        for session in import_sessions(kind, src):
            write_session(session, folder)
        for path in sorted(folder.glob("*.jsonl")):
            spans = []
            for entry in load_transcript(path).entries:
                message = entry.message if isinstance(entry, MessageEntry) else entry
                texts.update(dict.fromkeys(t for t in (message_text(message), text_of(message)) if t))
                spans.append(message_text(message))
            joined.append("\n".join(spans))
    return list(texts), joined


@pytest.mark.realdata
def test_same_as_reference_on_real_sessions(shared_data, tmp_path):
    """τ-bench, τ²-bench, Claude Code and pi sessions: each message's text, every function; each
    whole transcript, the span scan (`extract_identifiers`)."""
    texts, joined = _real_texts(shared_data, tmp_path)
    assert len(texts) > 5000 and len(joined) > 100
    found = 0
    for text in texts:
        assert_same(text, limits=())
        found += len(extract_identifiers(text))
    assert found > 1000  # the texts hold identifiers: the comparison was not of empty lists
    for text in joined:
        assert extract_identifiers(text) == Old.extract_identifiers(text)
