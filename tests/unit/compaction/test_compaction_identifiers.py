"""Identifier extraction (replaylab/compaction/identifiers.py): OpenClaw's opaque identifiers, the
value tokens, and `TextScans`, which scans each text once and answers for joined texts exactly
what a scan of the joined text gives. The rules themselves (OpenClaw's patterns) are pinned in
test_compaction_summarize.py; here: chunk boundaries, joined texts, memo lifetimes and long runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from replaylab.compaction.identifiers import (
    _OPAQUE_9_6,
    MIN_IDENTIFIER_CHARS,
    TextScans,
    _checked_scan,
    _has_hex_run,
    _identifying_matches_9_6,
    _may_hold_identifier,
    extract_identifiers,
    extract_opaque_identifiers,
    extract_openclaw_identifiers,
    extract_value_tokens,
    is_checked_identifier,
    item_scans,
    sanitize_identifier,
)
from replaylab.scrub import default_scrubber
from replaylab.transcript.memo import ItemMemo
from replaylab.upstream.openclaw_2026_4_12 import OPAQUE_IDENTIFIER_RE
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, OPENCLAW_2026_9_6
from repo_paths import TESTS

#: what the patterns care about: id characters, hex, ':' + digit, ':\\', quotes and brackets, ASCII
#: and Unicode whitespace (NBSP, em space, U+001C, NEL, U+2028), non-ASCII letters and digits
TRICKY = (
    "0123456789abcdefABCDEFghpstxzGHXZ:/.-_@#\\+\"'`()[]{}<>,;!?= \t\r\n\xa0\u2003\x1c\x85\u2028é\u0434\u65e5\u0663"
)
#: pieces that make identifiers of every kind (and near misses), e-mails and separators frequent
PIECES = [
    "deadbeefcafe1234",
    "DEADBEEFCAFE1234",
    "DeadBeefCafe1234",
    "abcdef12",
    "abcdef1",
    "1234567",
    "12345",
    "https://x.example.com/a/b?c=1",
    "http://h",
    "/srv/app/main.py",
    "/a/b.",
    "C:\\Users\\x.txt",
    "C:\\.",
    "10.0.0.1:8080",
    "host.example:99999",
    "a.b:1",
    "ORD-48213",
    "#W2378156",
    "mia_garcia_4516",
    "a@b.example",
    "x.y+z@mail-host.example.org.",
    "bob@example.com)",
    "@",
    "w@x",
    "x" * 130 + "9",
    "off",
    "/minimal/low",
    "/path/to/x.png",
    "C:\\Program",
    "128000",
    "(",
    ")",
    ".",
    ",",
    ";",
    "'",
    '"',
    "`",
    "<",
    ">",
    "[",
    "]",
    ":",
    "::",
    " ",
    "  ",
    "\n",
    "\t",
    "\u00a0",
    "\u2003",
    "the",
    "face",
    "café",
    "日本",
]
texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=24).map("".join), st.text(alphabet=TRICKY, max_size=80))
EXAMPLES = settings(max_examples=300, deadline=None, database=None, derandomize=True)


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, max_size=6), st.booleans())
def test_identifiers_in_texts_are_those_of_the_joined_text(parts, warm):
    """The same identifiers, the same first spellings (hex ones differing only in case across
    texts), the same order — from a fresh `TextScans` and from one that scanned the texts (and
    others) before. Where no secret spans two texts: the scrubber reads a token wrapped over a
    line break as one (`ghp_` ending one text, its hex digits starting the next), and each text is
    a message of its own, scanned with its own secrets masked."""
    mask = default_scrubber().mask
    assume(mask("\n".join(parts)) == "\n".join(map(mask, parts)))
    scans = TextScans()
    if warm:
        for text in parts[::2] + ["deadbeefcafe1234 " + (parts[0] if parts else "")]:
            scans.identifiers(text)
    assert scans.identifiers_in(parts) == extract_identifiers("\n".join(parts))
    assert scans.identifiers_in(iter(parts)) == extract_identifiers("\n".join(parts))


def test_a_token_start_ending_one_text_masks_nothing_of_the_next():
    """The scrubber reads a token wrapped over a line break as one secret; two messages are not one
    token, so the hex id starting the second message is an identifier of it."""
    assert extract_identifiers("ghp_\ndeadbeefcafe1234") == []
    assert TextScans().identifiers_in(["ghp_", "deadbeefcafe1234"]) == ["deadbeefcafe1234"]


def test_identifiers_in_keeps_the_first_spelling_across_texts():
    assert TextScans().identifiers_in(["id DeadBeefCafe1234", "again DEADBEEFCAFE1234 and /srv/app/x"]) == [
        "DeadBeefCafe1234",
        "/srv/app/x",
    ]


@EXAMPLES
@given(st.lists(texts, max_size=6), st.sampled_from([12, None, 1, 3]))
def test_text_scans_equal_the_extract_functions(parts, limit):
    """Per text: the extract functions' results, the second read served from the memo; over a
    list: the joined text's opaque identifiers (any texts, untrimmed or empty)."""
    scans = TextScans()
    for text in parts:
        assert scans.identifiers(text) == tuple(extract_openclaw_identifiers(text))
        assert scans.checked(text) == tuple(extract_identifiers(text))
        assert scans.value_tokens(text) == tuple(extract_value_tokens(text))
        assert scans.identifiers(text) is scans.identifiers(text)
        assert scans.checked(text) is scans.checked(text)
    assert scans.opaque_identifiers(parts, limit) == extract_opaque_identifiers("\n".join(parts), limit)
    assert TextScans().opaque_identifiers(parts, limit) == extract_opaque_identifiers("\n".join(parts), limit)


def test_text_scans_keep_at_most_max_chars():
    """Beyond `max_chars` a text is scanned and answered, not kept (a new tuple at each read)."""
    scans = TextScans(max_chars=20)
    short, long = "ORD-48213 deadbeef01", "x" * 21 + " deadbeef02"
    assert scans.identifiers(short) is scans.identifiers(short)  # kept
    assert scans.identifiers(long) == ("deadbeef02",) and scans.identifiers(long) is not scans.identifiers(long)
    assert scans.value_tokens("JFK") == ("JFK",) and scans.value_tokens("JFK") is not scans.value_tokens("JFK")


def test_text_scans_mask_a_text_once_for_both_scans(monkeypatch):
    """The identifiers and the value tokens of a text read it masked: masked once per scrubber."""
    from replaylab import scrub

    masked: list[str] = []
    mask = scrub.Scrubber.mask
    monkeypatch.setattr(scrub.Scrubber, "mask", lambda self, value: masked.append(value) or mask(self, value))
    scans, text = TextScans(), "ORD-48213 at /srv/app password=hunter2 deadbeef01"
    assert scans.identifiers(text) == tuple(extract_openclaw_identifiers(text))
    assert scans.value_tokens(text) == tuple(extract_value_tokens(text))
    assert masked.count(text) == 3  # the scans' one, then each plain function's own
    again = text + " "
    assert scans.identifiers(again) == tuple(extract_openclaw_identifiers(again))
    scrub.default_scrubber.cache_clear()  # a new scrubber (a suite named a new secret): masked anew
    try:
        assert scans.value_tokens(again) == tuple(extract_value_tokens(again))
        assert masked.count(again) == 4
    finally:
        scrub.default_scrubber.cache_clear()


def test_item_scans_live_as_long_as_the_item():
    """One `TextScans` per item's memo, a new one per memo; a fresh one without a memo."""
    assert item_scans() is not item_scans()
    memo = ItemMemo()
    first = item_scans(memo)
    first.identifiers("deadbeefcafe1234")
    assert item_scans(memo) is first
    assert item_scans(ItemMemo()) is not first and item_scans() is not first


def test_an_items_scans_read_identifiers_as_the_openclaw_release_of_its_profile():
    """Pieces of a date and a slash list in prose are identifiers by OpenClaw 2026.4.12's rule
    (which the pi profiles run with), not by 2026.9.6's (`extractOpaqueIdentifiers`, which its
    own profile runs with): an item scans by its profile's release, as the compaction and the
    IDENTIFIER_LOST check of an OpenClaw item must."""
    from replaylab.agents import item_memo
    from replaylab.upstream.profiles import profile_named

    text = "Meeting on 01/05/2026; try Brave/Edge/Chromium, then ORD-48213 at /srv/app/main.py"
    found = {
        name: item_scans(item_memo(profile_named(name))).identifiers(text)
        for name in ("pi@0.73.1", "openclaw@2026.9.6")
    }
    assert found["pi@0.73.1"] == tuple(extract_openclaw_identifiers(text, OPENCLAW_2026_4_12))
    assert found["openclaw@2026.9.6"] == tuple(extract_openclaw_identifiers(text, OPENCLAW_2026_9_6))
    assert "/05/2026" in found["pi@0.73.1"] and "/05/2026" not in found["openclaw@2026.9.6"]
    assert "/srv/app/main.py" in found["openclaw@2026.9.6"]


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789abcdefABCDEFgxz /:é日\udc80\u00a0")), max_size=40))
def test_a_hex_run_is_six_ascii_hex_digits_in_a_row(text):
    """Texts without such a run are scanned without the hex and long-number patterns, which
    cannot match in them: the check must hold whatever else the text holds."""
    assert _has_hex_run(text) == bool(re.search(r"[0-9A-Fa-f]{6}", text, re.ASCII))


#: secrets the scan must mask (next to ids, in URLs, as hex: fake keys, planted only under
#: tests/data/bad), and texts with nothing to find
SECRET_PIECES = [
    *(TESTS / "data" / "bad" / "planted-scan-secrets.txt").read_text(encoding="utf-8").splitlines(),
    "plain words only",
    "naïve café 日本語 token",
]
secret_texts = st.lists(st.sampled_from(PIECES + SECRET_PIECES), max_size=16).map("".join)


def _straightforward_scan(text: str) -> tuple[list[str], list[str]]:
    """The scan without any shortcut: always masked, OpenClaw's whole regex over each
    whitespace-separated chunk, every match sanitized."""
    masked = default_scrubber().mask(text)
    every: list[str] = []
    checked: list[str] = []
    for chunk in re.finditer(r"\S+", masked):
        for match in re.finditer(OPAQUE_IDENTIFIER_RE, chunk.group(), re.ASCII):
            value = sanitize_identifier(match.group())
            if len(value) >= MIN_IDENTIFIER_CHARS:
                start = chunk.start() + match.start()
                every.append(value)
                if '"' in value:  # JSON in prose: the check reads the pieces between the quotes
                    checked.extend(c for piece in value.split('"') for c in _straightforward_scan(piece)[1])
                elif is_checked_identifier(value, masked[start - 1] if start else ""):
                    checked.append(value)
    return every, checked


@settings(max_examples=600, deadline=None, database=None, derandomize=True)
@given(st.one_of(texts, secret_texts))
def test_the_scan_finds_what_the_straightforward_scan_finds(text):
    """Secrets masked, overlapping candidates, Unicode whitespace and letters: the shortcuts
    (no mask where no identifier can be, patterns chosen per text, chunk stretches) change
    nothing; a text the prefilter turns away has no identifier at all."""
    assert _checked_scan(text) == _straightforward_scan(text)
    if not _may_hold_identifier(text):
        assert _straightforward_scan(text) == ([], [])


def _straightforward_scan_9_6(text: str) -> list[str]:
    """2026.9.6's scan without any shortcut: always masked, its whole regex over the text, group 1
    or 2 of each match sanitized, at least the minimum long."""
    masked = default_scrubber().mask(text)
    found = []
    for match in _OPAQUE_9_6.finditer(masked):
        value = match.group(1) if match.group(1) is not None else match.group(2)
        if value is not None and len(value := sanitize_identifier(value)) >= MIN_IDENTIFIER_CHARS:
            found.append(value)
    return found


@settings(max_examples=600, deadline=None, database=None, derandomize=True)
@given(st.one_of(texts, secret_texts))
def test_the_2026_9_6_scan_finds_what_its_straightforward_scan_finds(text):
    """2026.9.6's regex is turned away by the same prefilter: each of its identifier alternatives
    holds a '/', a ':' or a run of six hex digits, so a text with none of them is not masked."""
    assert _checked_scan(text, OPENCLAW_2026_9_6)[0] == _straightforward_scan_9_6(text)
    if not _may_hold_identifier(text):
        assert _straightforward_scan_9_6(text) == []


def _identifying(matches) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in matches if m.group(1) is not None or m.group(2) is not None]


#: 2026.9.6's own pieces: numbers its middle alternative consumes, ids it takes whole, whitespace
#: JavaScript has and Python's `\s` lacks or adds (U+FEFF, U+001C, NEL), lookbehind neighbours
PIECES_9_6 = [
    "1.5e-3",
    ".5",
    "3.",
    "2e10",
    "1e5abc",
    "ID100000",
    "ORD-77138-1",
    "x-deadbeef12",
    "deadbeef",
    "123456",
    "12345",
    "abc/def/ghi",
    "a.b:8080",
    "host.example:65535x",
    "C:\\dir\\f.txt",
    "http://x.y/z",
    "https:",
    "/ab",
    "/a/b",
    "x/",
    ".-/tmp/x",
    "ftp://h",
    "_",
    "-",
    "\ufeff",
    "\x1c",
    "\x85",
    "\u3000",
    "\u2029",
]


@settings(max_examples=800, deadline=None, database=None, derandomize=True)
@given(st.one_of(texts, st.lists(st.sampled_from(PIECES + PIECES_9_6), max_size=24).map("".join)))
def test_2026_9_6_matches_chunk_by_chunk_are_its_whole_text_matches(text):
    """Only chunks with a '/', ':' or hex run are matched: every match that yields an identifier
    is found there, at the same place with the same groups."""
    assert _identifying(_identifying_matches_9_6(text)) == _identifying(_OPAQUE_9_6.finditer(text))


def test_a_2026_9_6_scan_masks_only_a_text_that_may_hold_an_identifier(monkeypatch):
    scrubber = default_scrubber()
    masked: list[str] = []
    monkeypatch.setattr(scrubber, "mask", lambda text: masked.append(text) or text)
    assert _checked_scan("password is hunter2, a number 3.5e10 and nothing else", OPENCLAW_2026_9_6) == ([], [])
    assert _checked_scan("at /srv/app/main.py", OPENCLAW_2026_9_6)[0] == ["/srv/app/main.py"]
    assert masked == ["at /srv/app/main.py"]


def test_a_secret_is_masked_before_the_scan_and_a_text_without_marks_is_not_masked(monkeypatch):
    assert _checked_scan("id deadbeefcafe1234 token=feedface99887766 at /srv/a") == (
        ["deadbeefcafe1234", "/srv/a"],
        ["deadbeefcafe1234", "/srv/a"],
    )
    scrubber = default_scrubber()
    masked: list[str] = []
    monkeypatch.setattr(scrubber, "mask", lambda text: masked.append(text) or text)
    assert _checked_scan("password is hunter2 and nothing else") == ([], [])
    assert _checked_scan("at /srv/a") == (["/srv/a"], ["/srv/a"])
    assert masked == ["at /srv/a"]


# ---------------------------------------------------------------- spelled-out cases


def test_chunk_boundaries():
    """A URL ends at Unicode whitespace (NBSP), host:port only in a chunk with ':' + digit, the
    trailing strip, hex deduplicated case-insensitively, e-mails only from chunks holding an '@'."""
    text = "see http://h.io:8080/p\xa0q.r:99 (deadbeef01), DEADBEEF01 C:\\tmp\\x. /usr/lib\u2003mail:a@b.co."
    assert extract_identifiers(text) == ["http://h.io:8080/p", "q.r:99", "deadbeef01", "C:\\tmp\\x", "/usr/lib"]
    assert extract_opaque_identifiers(text) == ["http://h.io:8080/p", "q.r:99", "DEADBEEF01", "C:\\tmp\\x", "/usr/lib"]
    assert extract_value_tokens(text)[:3] == ["a@b.co", "http://h.io:8080/p", "q.r:99"]


def test_a_secret_and_the_marker_that_stands_for_one_are_no_value_tokens():
    text = "deploy ORD-77138 with [REDACTED] and GITHUB_TOKEN=ghp_Zq81Lm5xTowl3Zq81Lm5xTowl3Zq81Lm5x"
    assert extract_value_tokens(text) == ["ORD-77138", "GITHUB_TOKEN"]


def test_windows_paths_are_found_where_they_are():
    assert extract_identifiers("copy C:\\tmp\\a.txt and deadbeef01") == ["C:\\tmp\\a.txt", "deadbeef01"]
    assert extract_identifiers("copy C:/tmp/a.txt and deadbeef01") == ["/tmp/a.txt", "deadbeef01"]


def test_what_identifier_lost_checks_of_openclaws_identifiers():
    """The four kinds OpenClaw's regex takes for identifiers in prose and documentation are not
    checked (a choice list after a word, a placeholder path, a Windows path cut at its space, a
    round number); the quality guard's own list keeps them, as OpenClaw does."""
    text = (
        "| `--thinking` | level (off/minimal/low/medium/high) |\n"
        'Git Bash (`C:\\Program Files\\Git\\bin\\bash.exe`), "contextWindow": 128000, '
        "What's in this screenshot? /path/to/image.png Tools: Glob/Grep/Read"
    )
    noise = ["/minimal/low/medium/high", "C:\\Program", "128000", "/path/to/image.png", "/Grep/Read"]
    assert extract_openclaw_identifiers(text) == noise
    assert extract_opaque_identifiers(text) == noise
    assert extract_identifiers(text) == []
    real = (
        "edit lib/spotter_web/live/a.ex and /usr/local/bin, C:\\Users\\me, C:\\boot.ini, order 8003957, "
        "size 128001, /srv/app/x"
    )
    assert (
        extract_identifiers(real)
        == extract_openclaw_identifiers(real)
        == [
            "/spotter_web/live/a.ex",
            "/usr/local/bin",
            "C:\\Users\\me",
            "C:\\boot.ini",
            "8003957",
            "128001",
            "/srv/app/x",
        ]
    )


def test_a_choice_list_is_one_only_after_a_word():
    """The character before decides (a text's start counts as whitespace, so a span's texts scanned
    one by one give what their joined text gives)."""
    assert extract_identifiers("/minimal/low/medium") == ["/minimal/low/medium"]
    assert extract_identifiers("(/minimal/low/medium)") == ["/minimal/low/medium"]
    assert extract_identifiers("off/minimal/low/medium") == []
    assert TextScans().identifiers_in(["off", "/minimal/low/medium"]) == extract_identifiers("off\n/minimal/low/medium")
    assert is_checked_identifier("/minimal/low") and not is_checked_identifier("/minimal/low", before="f")
    assert is_checked_identifier("/src/app.ts", before="c")  # a relative path's file: still checked


def test_json_written_into_prose_is_checked_value_by_value():
    """OpenClaw's regex reads a run of JSON without whitespace as one identifier; the check reads
    the identifiers between its quotes."""
    text = 'Links: [{"title":"Igniter","url":"https://forum.org/t/64181"},{"url":"https://github.com/a/b"}] /srv/a.yml'
    assert extract_openclaw_identifiers(text)[0] == 'https://forum.org/t/64181"},{"url":"https://github.com/a/b"}'
    assert extract_identifiers(text) == ["https://forum.org/t/64181", "https://github.com/a/b", "/srv/a.yml"]


def test_a_drive_letter_that_ends_a_word_is_no_windows_path():
    """`"Loaded:\\n\\n1 item"` in code: OpenClaw's regex reads `d:\\n\\n1` as a drive path, which
    the check leaves out; a drive after a space, a parenthesis or a quote is one."""
    text = 'log("Loaded:\\n\\n1 item") at C:\\Users\\x\\y.txt ("D:\\data\\a.csv")'
    assert "d:\\n\\n1" in extract_openclaw_identifiers(text)
    assert extract_identifiers(text) == ["C:\\Users\\x\\y.txt", "D:\\data\\a.csv"]
    assert not is_checked_identifier("d:\\n\\n1", before="e") and is_checked_identifier("d:\\n\\n1", before=" ")


M = 1_000_000
#: runs a careless pattern would backtrack on quadratically (the test would hang), with what they hold
LONG_RUNS = {
    "hex letters": ("a" * M, ["a" * M], []),
    "hex letters then a host:port chunk": ("a" * M + " x.y:1", ["a" * M, "x.y:1"], ["x.y:1"]),
    "hex letters beside an e-mail": ("a" * M + " b@c.de", ["a" * M], ["b@c.de"]),
    "dotted run": ("a." * (M // 2), [], []),
    "hex digits": ("0123456789abcdef" * (M // 16), ["0123456789abcdef" * (M // 16)], []),
    "digits": ("7" * M, ["7" * M], []),
    "path of one-letter segments": ("/a" * (M // 2), [], []),
    "underscores": ("_" * M, [], []),
    "hashes then a token": ("#" * M + "ab", [], ["#ab"]),
    "host:port chunks": ("x.y:1 " * (M // 6), ["x.y:1"], ["x.y:1"]),
    "URLs split by NBSP": ("http://a:1\xa0" * (M // 11), ["http://a:1"], ["http://a:1"]),
    "whitespace of every kind": (" \t\r\n\xa0\u2003\x1c\x85" * (M // 8), [], []),
    "prose with identifiers": (
        "réservation deadbeef ORD-48213 /tmp/x a@b.co C:\\x\\y " * (M // 50),
        ["deadbeef", "/tmp/x", "C:\\x\\y"],
        ["a@b.co", "ORD-48213"],
    ),
    "windows path run": ("C:\\" + "a" * M, ["C:\\" + "a" * M], []),
}


@pytest.mark.parametrize("name", list(LONG_RUNS))
def test_long_runs_are_scanned_in_linear_time(name):
    text, identifiers, value_tokens = LONG_RUNS[name]
    assert extract_openclaw_identifiers(text) == identifiers
    assert extract_identifiers(text) == [i for i in identifiers if is_checked_identifier(i)]
    assert extract_opaque_identifiers(text) == [
        i.upper() if re.fullmatch(r"[0-9a-fA-F]+", i) else i for i in identifiers
    ]
    assert extract_value_tokens(text) == value_tokens


# ---------------------------------------------------------------- real sessions


@pytest.mark.realdata
def test_the_span_scan_of_real_sessions_is_the_joined_texts_scan(real_session_files: list[Path]) -> None:
    """IDENTIFIER_LOST reads a summarized span's identifiers from its messages' own scans: on every
    imported τ-bench, τ²-bench, Claude Code and pi session, the identifiers of all its message
    texts equal the scan of the texts joined, warm or cold."""
    from replaylab.transcript import load_transcript
    from replaylab.transcript.model import MessageEntry, message_text

    paths = real_session_files
    assert len(paths) > 100
    found = 0
    warm = TextScans()
    for path in paths:
        texts = [message_text(e.message) for e in load_transcript(path).entries if isinstance(e, MessageEntry)]
        joined = extract_identifiers("\n".join(texts))
        assert TextScans().identifiers_in(texts) == joined == warm.identifiers_in(texts), path.name
        found += len(joined)
    assert found > 1000
