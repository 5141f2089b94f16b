"""Opaque identifiers (ids, hashes, URLs, paths, host:port, long numbers) in conversation text.

`extract_opaque_identifiers` is OpenClaw's `extractOpaqueIdentifiers` exactly (compaction-safeguard-
quality.ts, openclaw-internals §3.3 step 9): its quality guard checks that a summary still carries
them. `extract_openclaw_identifiers` applies the same rules to a whole summarized span, uncapped and
in the original spelling: that is what replaylab's summary carries. `extract_identifiers` is the
part of those the QA pipeline checks (`IDENTIFIER_LOST`): OpenClaw's matches less five kinds its
regex takes for identifiers in prose and documentation, which an agent can write again itself —
deliberate differences from OpenClaw's rule, for the check only (`is_checked_identifier`):

* a path fragment of plain words right after a word (`off/minimal/low/medium/high` gives
  `/minimal/low/medium/high`; `Glob/Grep/Read`, `tested/committed`): a list of choices;
* a placeholder path (`/path/to/image.png`);
* a Windows path of one segment without an extension (`C:\\Program` of `C:\\Program Files\\…`,
  cut at the space: not even the path);
* a Windows path whose drive letter ends a word (`d:\\n\\n1` of `"Loaded:\\n\\n1 item"` in
  code: a label before a colon and escaped newlines, no drive);
* a round number (`128000`, `200000`: a limit or size, not an id).

And a match that holds quotes is JSON written into prose (`Links: [{"url":"https://…"},{"title":…`,
one run without whitespace): the check reads the identifiers of the pieces between its quotes.

`extract_value_tokens` is replaylab's addition for the extractive summary only:
argument values and mixed letter/digit tokens (order ids like `#W2378156`, user ids like
`mia_garcia_4516`) that OpenClaw's regex does not see but a replayed call needs verbatim.

No secret is ever an identifier: every scan reads the text with what the scrubber would redact
masked out (`Scrubber.mask`), so the value of `password: "…"`, `api_key=…` or a token never
reaches a summary's "Exact identifiers", and the IDENTIFIER_LOST check, which uses the same
scans, never asks for one.

The scans take the OpenClaw release's rules as a value (`rules`; default 2026.4.12's). From
2026.9.6 on OpenClaw's regex takes a whole token that holds ≥ 8 hex digits or ≥ 6 digits
(`ORD-77138-1` stays out, `ID100000` is taken whole), matches no path or host:port inside a word and
consumes decimal and scientific numbers (`1.5e-3`) without taking them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

import orjson

from replaylab.compaction.js_strings import js_regex
from replaylab.scrub import REDACTED, Scrubber, default_scrubber
from replaylab.transcript.javascript import utf16_length
from replaylab.upstream.openclaw_2026_4_12 import (
    IDENTIFIER_LEADING_STRIP_RE,
    IDENTIFIER_TRAILING_STRIP_RE,
    MAX_EXTRACTED_IDENTIFIERS,
    MIN_IDENTIFIER_CHARS,
    OPAQUE_IDENTIFIER_RE,
    PURE_HEX_IDENTIFIER_RE,
)
from replaylab.upstream.openclaw_2026_9_6 import JS_WHITESPACE
from replaylab.upstream.openclaw_2026_9_6 import OPAQUE_IDENTIFIER_RE as OPAQUE_IDENTIFIER_RE_9_6
from replaylab.upstream.runtime_rules import OPENCLAW_2026_4_12, RuntimeRules
from replaylab.values import identifier_tokens, scalar_value_text

if TYPE_CHECKING:
    from replaylab.transcript.memo import ItemMemo

# Identifiers are matched within whitespace-separated chunks (`\S+`, Unicode whitespace), but in a
# few passes over the whole text rather than a Python loop per chunk (which cost most of the scan):
# no alternative spans whitespace, so a pass over a stretch of chunks finds exactly what matching
# chunk by chunk finds, once `https?://\S+` also stops at Unicode whitespace (`(?u:\S)`).
_URL_ALTERNATIVE = r"https?://\S+"
assert _URL_ALTERNATIVE in OPAQUE_IDENTIFIER_RE
_OPAQUE_RE = OPAQUE_IDENTIFIER_RE.replace(_URL_ALTERNATIVE, r"https?://(?u:\S)+")
# OpenClaw's host:port alternative backtracks quadratically over long runs of word characters
# (V8 does the same). It can only match in a chunk where ':' is followed by a digit, so only
# stretches of such chunks are matched with it; the text between them is matched without it —
# same matches, linear time.
_HOST_PORT_ALTERNATIVE = r"|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5}"
assert _HOST_PORT_ALTERNATIVE in OPAQUE_IDENTIFIER_RE
# Three more exact shortcuts, without which the engine tries every alternative at every
# letter of the text:
# * the Windows-path alternative can only match where ':\' occurs: a text without it is matched
#   without that alternative (the one costliest to try: a letter, then ':');
# * the hex and long-number alternatives can only match in a run of ≥ 6 hex digits (digits are
#   hex digits): a text without one is matched without them. Trying them is most of the scan's
#   cost (a run of hex letters starts at every a-f of a word), and most texts hold no such run;
# * each pattern starts with a lookahead for the characters its alternatives can start with, so
#   most positions (letters g-z, punctuation, whitespace) fail on one class test (without the hex
#   alternatives: no lookahead, the engine's own first-character search over 'h' and '/').
_WINDOWS_PATH_ALTERNATIVE = r"|[A-Za-z]:\\[\w\\.-]+"
assert _WINDOWS_PATH_ALTERNATIVE in OPAQUE_IDENTIFIER_RE and _OPAQUE_RE.startswith("([")
_WINDOWS_PATH_MARK = ":\\"
_HEX_ALTERNATIVE = "[A-Fa-f0-9]{8,}|"
_NUMBER_ALTERNATIVE = r"|\b\d{6,}\b"
assert _OPAQUE_RE.startswith("(" + _HEX_ALTERNATIVE) and _NUMBER_ALTERNATIVE in _OPAQUE_RE
#: the shortest hex run either of them can match in (`\d{6,}`: six digits)
_MIN_HEX_RUN = 6
#: first characters: hex digit | 'h' (URL) | '/' (path) | digit (long number) | letter + ':\'
_STARTS_NO_PORT = r"(?=[0-9A-Fa-fh/]|[A-Za-z]:\\)"
_STARTS_NO_PORT_NO_WINDOWS = r"(?=[0-9A-Fa-fh/])"
_STARTS_NO_PORT_NO_HEX = r"(?=[h/]|[A-Za-z]:\\)"
#: ... and with host:port, any of its host characters
_STARTS_PORT = r"(?=[A-Za-z0-9._/-])"


def _opaque_pattern(starts: str, *, port: bool, windows: bool, hex_runs: bool = True) -> re.Pattern[str]:
    """OpenClaw's alternatives (a non-capturing group: only group 0 is read) behind `starts`."""
    pattern = "(?:" + _OPAQUE_RE[1:]
    if not port:
        pattern = pattern.replace(_HOST_PORT_ALTERNATIVE, "")
    if not windows:
        pattern = pattern.replace(_WINDOWS_PATH_ALTERNATIVE, "")
    if not hex_runs:
        pattern = pattern.replace(_HEX_ALTERNATIVE, "", 1).replace(_NUMBER_ALTERNATIVE, "")
    return re.compile(starts + pattern, re.ASCII)


#: (with host:port, without) for texts with ':\\' and for texts without it
_OPAQUE_PATTERNS = {
    True: (
        _opaque_pattern(_STARTS_PORT, port=True, windows=True),
        _opaque_pattern(_STARTS_NO_PORT, port=False, windows=True),
    ),
    False: (
        _opaque_pattern(_STARTS_PORT, port=True, windows=False),
        _opaque_pattern(_STARTS_NO_PORT_NO_WINDOWS, port=False, windows=False),
    ),
}
#: the same for texts without a run of ≥ 6 hex digits
_HEX_FREE_PATTERNS = {
    True: (
        _opaque_pattern(_STARTS_PORT, port=True, windows=True, hex_runs=False),
        _opaque_pattern(_STARTS_NO_PORT_NO_HEX, port=False, windows=True, hex_runs=False),
    ),
    False: (
        _opaque_pattern(_STARTS_PORT, port=True, windows=False, hex_runs=False),
        _opaque_pattern("", port=False, windows=False, hex_runs=False),
    ),
}
#: hex digits → 'x', every other byte → ' ' (a UTF-8 byte of a non-ASCII character is ≥ 0x80,
#: never a hex digit: runs of hex digits are the same in the text and in its UTF-8 bytes)
_HEX_BYTES = bytes(ord("x") if chr(b) in "0123456789abcdefABCDEF" else ord(" ") for b in range(256))
_HEX_RUN = b"x" * _MIN_HEX_RUN


def _has_hex_run(text: str) -> bool:
    """Whether `text` holds ≥ 6 hex digits in a row (two C passes over its bytes, no regex)."""
    return _HEX_RUN in text.encode("utf-8", "surrogatepass").translate(_HEX_BYTES)


def _may_hold_identifier(text: str) -> bool:
    """False only when `text` holds none of what every match of OpenClaw's regex holds, in
    2026.4's and in 2026.9.6's (whose number alternative yields nothing): a '/' (paths, URLs), a
    ':' (Windows paths, host:port) or a run of ≥ 6 hex digits (hex ids, long numbers). Masking a
    text only puts spaces where its secrets were, and no match holds whitespace, so each match in
    the masked text is a piece of `text`: a text failing this test has no match, masked or not."""
    return "/" in text or ":" in text or _has_hex_run(text)


_COLON_DIGIT = re.compile(r":[0-9]")
_AT = re.compile("@")
_WHITESPACE = re.compile(r"\s")
_NON_WHITESPACE = re.compile(r"\S")
_UP_TO_LAST_WHITESPACE = re.compile(r"(?s:.*)\s")
_LEAD = re.compile(IDENTIFIER_LEADING_STRIP_RE)
_TRAIL = re.compile(IDENTIFIER_TRAILING_STRIP_RE)
#: the characters `_TRAIL` strips (a class of ASCII literals): `rstrip` of them is the same strip
_TRAIL_CHARS = "".join(c for c in map(chr, range(128)) if _TRAIL.fullmatch(c))
_HEX = re.compile(PURE_HEX_IDENTIFIER_RE)
#: replaylab: e-mail addresses (identifier-like tokens come from replaylab.values)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+", re.ASCII)
MAX_VALUE_TOKEN_CHARS = 120  # longer runs are blobs (base64, minified code), not ids
MAX_ARGUMENT_VALUE_CHARS = 200


def sanitize_identifier(value: str) -> str:
    return _TRAIL.sub("", _LEAD.sub("", value.strip()))


def is_pure_hex(value: str) -> bool:
    return bool(_HEX.match(value))


def normalize_identifier(value: str) -> str:
    """OpenClaw compares pure-hex identifiers case-insensitively (upper-cases them)."""
    return value.upper() if is_pure_hex(value) else value


def summary_includes_identifier(summary: str, identifier: str, *, upper_summary: str | None = None) -> bool:
    if is_pure_hex(identifier):
        return identifier.upper() in (upper_summary if upper_summary is not None else summary.upper())
    return identifier in summary


def _chunk_stretches(text: str, mark: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of whitespace-separated chunks (`\\S+`) that hold a match of
    `mark`, bounded by whitespace or the text's ends. Each stretch of text between two such chunks
    is read a few times at most: linear."""
    start = end = 0
    found = mark.search(text)
    while found:
        last = _UP_TO_LAST_WHITESPACE.match(text, end, found.start())
        chunk_start = last.end() if last else end
        if end == 0 or _NON_WHITESPACE.search(text, end, chunk_start):  # not right after the last one
            if end:
                yield start, end
            start = chunk_start
        after = _WHITESPACE.search(text, found.end())
        end = after.start() if after else len(text)
        found = mark.search(text, end)
    if end:
        yield start, end


def _opaque_matches(text: str, rules: RuntimeRules = OPENCLAW_2026_4_12) -> Iterator[str]:
    """OpenClaw's matches in order, sanitized, at least `MIN_IDENTIFIER_CHARS` long (lazily: the
    guard stops at `MAX_EXTRACTED_IDENTIFIERS`), in the text with its secrets masked."""
    for _, _, value in _opaque_match_values(text, rules):
        yield value


#: JavaScript's whitespace, as a class body: no match of 2026.9.6's regex holds it
_JS_SPACE_9_6 = "".join(f"\\u{ord(c):04x}" for c in JS_WHITESPACE)
#: 2026.9.6's regex, as JavaScript matches it (`\S`: not JavaScript's whitespace)
_OPAQUE_9_6 = js_regex(OPAQUE_IDENTIFIER_RE_9_6.format(not_space=f"[^{_JS_SPACE_9_6}]"), ignore_case=False)


def _opaque_match_values(
    text: str, rules: RuntimeRules, mask: Callable[[str], str] | None = None
) -> Iterator[tuple[re.Match[str], int, str]]:
    """Each match `_opaque_matches` gives (over the masked text, `match.string`), where its value
    starts, and the value. `mask`: what masks the text's secrets (`default_scrubber().mask` unless
    the caller keeps masked texts: `TextScans`)."""
    if not _may_hold_identifier(text):
        return  # nothing to find: the secrets need not be looked for (the mask is most of a scan)
    if rules.identifiers.pattern == "9.6":
        yield from _opaque_match_values_9_6((mask or default_scrubber().mask)(text), rules)
        return
    text = (mask or default_scrubber().mask)(text)
    patterns = _OPAQUE_PATTERNS if _has_hex_run(text) else _HEX_FREE_PATTERNS
    with_port, without_port = patterns[_WINDOWS_PATH_MARK in text]
    pos = 0
    for start, end in _chunk_stretches(text, _COLON_DIGIT):
        yield from _sanitized(without_port.finditer(text, pos, start))
        yield from _sanitized(with_port.finditer(text, start, end))
        pos = end
    yield from _sanitized(without_port.finditer(text, pos))


def _opaque_match_values_9_6(text: str, rules: RuntimeRules) -> Iterator[tuple[re.Match[str], int, str]]:
    """2026.9.6's `extractOpaqueIdentifiers` scan: group 1 or group 2 of each match (the number
    alternative yields nothing), sanitized, at least the rules' minimum long in UTF-16 units."""
    for match in _identifying_matches_9_6(text):
        group = 1 if match.group(1) is not None else 2
        value = match.group(group)
        if value is None:
            continue
        value = sanitize_identifier(value)
        if utf16_length(value) >= rules.identifiers.min_chars:
            yield match, match.start(group), value


#: a piece every identifying match of 2026.9.6's regex holds: '://' (a URL), ':\\' (a Windows
#: path), ':' and a digit (host:port), a '/' no id character precedes and two path characters
#: follow (a path's start), or a run of hex digits (an id of ≥ 8, a number of ≥ 6). Each leads
#: with its first character as a class, which `re` scans for without trying the rest.
_IDENTIFIER_MARK_OF = {
    hex_runs: re.compile(
        r"[:/" + ("0-9A-Fa-f" if hex_runs else "") + r"](?:(?<=:)(?://|\\|[0-9])"
        r"|(?<=/)(?<![A-Za-z0-9._-]/)[\w.-]{2}"
        + (rf"|(?<=[0-9A-Fa-f])[0-9A-Fa-f]{{{_MIN_HEX_RUN - 1}}}" if hex_runs else "")
        + ")",
        re.ASCII,
    )
    for hex_runs in (False, True)
}
_UP_TO_LAST_JS_SPACE = re.compile(rf"(?s:.*)[{_JS_SPACE_9_6}]")
_JS_SPACE = re.compile(rf"[{_JS_SPACE_9_6}]")


def _identifying_matches_9_6(text: str) -> Iterator[re.Match[str]]:
    """The matches of 2026.9.6's regex in `text`, less number matches in chunks without a mark
    (`_IDENTIFIER_MARK_OF`).

    Why: its regex tries six alternatives at every character, which made it most of an audit of
    a long session; a chunk between JavaScript whitespace without a mark can only give a number
    match, which yields nothing. No match holds JavaScript whitespace and its lookarounds read
    only ASCII letters, digits and `._-` next to it, so matching chunk by chunk (the chunk's end
    as the subject's end) finds what the whole text gives there."""
    mark_of = _IDENTIFIER_MARK_OF[_has_hex_run(text)]
    pos, size = 0, len(text)
    while (mark := mark_of.search(text, pos)) is not None:
        at = mark.start()
        start = max(pos, text.rfind(" ", pos, at) + 1)  # the usual whitespace, found from the mark back
        before = _UP_TO_LAST_JS_SPACE.match(text, start, at)
        start = before.end() if before is not None else start
        after = _JS_SPACE.search(text, mark.end())
        end = after.start() if after is not None else size
        yield from _OPAQUE_9_6.finditer(text, start, end)
        pos = end


def _sanitized(matches: Iterable[re.Match[str]]) -> Iterator[tuple[re.Match[str], int, str]]:
    """`sanitize_identifier` for these matches: none starts with a character the leading strip
    removes or holds whitespace, so only the trailing strip can apply (`rstrip` is that strip)."""
    for match in matches:
        value = match.group()
        if value[-1] in _TRAIL_CHARS:
            value = value.rstrip(_TRAIL_CHARS)
        if len(value) >= MIN_IDENTIFIER_CHARS:
            yield match, match.start(), value


_PLAIN_WORDS_PATH = re.compile(r"(?:/[A-Za-z]+)+/?", re.ASCII)
_PLACEHOLDER_PATH = "/path/to/"
_ONE_SEGMENT_WINDOWS_PATH = re.compile(r"[A-Za-z]:\\[\w-]*", re.ASCII)
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:\\", re.ASCII)
_ROUND_NUMBER = re.compile(r"[0-9]+000")


def is_checked_identifier(value: str, before: str = "") -> bool:
    """Whether IDENTIFIER_LOST checks this OpenClaw match (`before`: the character of the text
    right before it, "" at its start): not a list of choices, a placeholder path, a truncated
    Windows path or a round number (module docstring)."""
    if value[0] == "/":
        if _PLACEHOLDER_PATH in value:
            return False
        return not (before.isascii() and before.isalnum() and _PLAIN_WORDS_PATH.fullmatch(value))
    if _WINDOWS_DRIVE.match(value) and before.isascii() and before.isalnum():
        return False
    return not (_ONE_SEGMENT_WINDOWS_PATH.fullmatch(value) or _ROUND_NUMBER.fullmatch(value))


def _checked_scan(
    text: str, rules: RuntimeRules = OPENCLAW_2026_4_12, mask: Callable[[str], str] | None = None
) -> tuple[list[str], list[str]]:
    """(OpenClaw's matches, the checked ones among them), sanitized, in order, from one pass."""
    every: list[str] = []
    checked: list[str] = []
    for match, start, value in _opaque_match_values(text, rules, mask):
        every.append(value)
        if '"' in value:  # JSON in prose (`Links: [{"url":"https://…"},{"title":…`): its values
            checked.extend(_checked_between_quotes(value, rules))
        elif is_checked_identifier(value, match.string[start - 1] if start else ""):
            checked.append(value)
    return every, checked


def _checked_between_quotes(value: str, rules: RuntimeRules) -> list[str]:
    """The checked identifiers of the pieces of a match that holds quotes, each piece scanned on
    its own (a quote starts a value, as a text's start does)."""
    return [found for piece in value.split('"') if piece for found in _checked_scan(piece, rules)[1]]


def extract_opaque_identifiers(
    text: str, limit: int | None = MAX_EXTRACTED_IDENTIFIERS, rules: RuntimeRules = OPENCLAW_2026_4_12
) -> list[str]:
    """OpenClaw `extractOpaqueIdentifiers`: hex upper-cased, deduped, the first `limit`."""
    return _first_keys(_opaque_matches(text, rules), limit)


def _first_keys(values: Iterable[str], limit: int | None) -> list[str]:
    """The first `limit` distinct normalized values (lazily: stops reading at the limit)."""
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(normalize_identifier(value), None)
        if limit is not None and len(seen) >= limit:
            break
    return list(seen)


def extract_openclaw_identifiers(text: str, rules: RuntimeRules = OPENCLAW_2026_4_12) -> list[str]:
    """Every identifier OpenClaw's rules find in `text`, in order, uncapped, spelled as written
    (hex duplicates that differ only in case are kept once)."""
    return _first_spellings(_opaque_matches(text, rules))


def extract_identifiers(text: str, rules: RuntimeRules = OPENCLAW_2026_4_12) -> list[str]:
    """The identifiers of `text` IDENTIFIER_LOST checks: `extract_openclaw_identifiers` less
    those `is_checked_identifier` leaves out, in the same order and spelling."""
    return _first_spellings(_checked_scan(text, rules)[1])


def _first_spellings(values: Iterable[str]) -> list[str]:
    """Each distinct normalized value once, in its first spelling, in order."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        key = normalize_identifier(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def extract_value_tokens(text: str, mask: Callable[[str], str] | None = None) -> list[str]:
    """replaylab: e-mail addresses and every identifier-like token (`replaylab.values`, the rule
    the replay model uses to decide what an agent learned), deduped, in order. `mask`: what masks
    the text's secrets (`default_scrubber().mask` unless the caller keeps masked texts: `TextScans`)."""
    seen: dict[str, None] = {}
    # a secret is no value the agent learned, and neither is the marker that stands for one
    # (masked here, or already in a scrubbed recording)
    text = (mask or default_scrubber().mask)(text).replace(REDACTED, " ")
    if "@" in text:  # the e-mail regex backtracks over long runs: run it only on chunks with an '@'
        for start, end in _chunk_stretches(text, _AT):
            # `sanitize_identifier`: an e-mail match holds no whitespace and starts with none of
            # the characters the leading strip removes, so only the trailing strip applies
            seen.update(dict.fromkeys(match.rstrip(_TRAIL_CHARS) for match in _EMAIL.findall(text, start, end)))
    tokens = identifier_tokens(text)
    if tokens and max(map(len, tokens)) > MAX_VALUE_TOKEN_CHARS:  # rare: test each token only then
        tokens = [token for token in tokens if len(token) <= MAX_VALUE_TOKEN_CHARS]
    seen.update(dict.fromkeys(tokens))
    return list(seen)


#: how many characters of texts one `TextScans` remembers results for (beyond: computed, not kept)
MAX_SCANNED_CHARS = 16_000_000


class TextScans:
    """Each text's identifiers and value tokens, scanned once per compaction.

    One compaction reads the same texts several times: the quality guard's seed (the last
    `IDENTIFIER_SEED_MESSAGES` messages), the summary (every summarized message), each summarizer
    call and each tail refit. The scans are pure functions of the text, so their results are kept
    per text (a `str` keeps its hash; equal texts are equal keys) for as long as this object
    lives — one compaction, or with a QA pipeline item's memo the item (`item_scans`): its owner
    drops it then, so no text is kept alive beyond it, and at most `max_chars` characters of texts
    are remembered. Results are tuples: a caller cannot change what the next one reads."""

    def __init__(self, max_chars: int = MAX_SCANNED_CHARS, rules: RuntimeRules = OPENCLAW_2026_4_12):
        self.max_chars = max_chars
        self.rules = rules
        self._chars = 0
        self._identifiers: dict[str, tuple[str, ...]] = {}
        self._checked: dict[str, tuple[str, ...]] = {}
        self._values: dict[str, tuple[str, ...]] = {}
        # each text with its secrets masked, for the scrubber that masked it: both scans of a text
        # mask it first, and a mask is a pure function of the scrubber and the text (at most
        # `max_chars` characters of texts besides those of the scans)
        self._masked: dict[str, str] = {}
        self._masked_chars = 0
        self._mask_scrubber: Scrubber | None = None

    def _remember(self, table: dict[str, tuple[str, ...]], text: str, found: tuple[str, ...]) -> tuple[str, ...]:
        if self._chars + len(text) <= self.max_chars:
            table[text] = found
            self._chars += len(text)
        return found

    def identifiers(self, text: str) -> tuple[str, ...]:
        """`extract_openclaw_identifiers(text)`."""
        found = self._identifiers.get(text)
        return found if found is not None else self._scan(text)[0]

    def checked(self, text: str) -> tuple[str, ...]:
        """`extract_identifiers(text)`: what IDENTIFIER_LOST checks (from the same scan)."""
        found = self._checked.get(text)
        return found if found is not None else self._scan(text)[1]

    def _mask(self, text: str) -> str:
        """`default_scrubber().mask(text)`, once per text and scrubber (one made anew, when a
        suite names a new secret, masks every text again)."""
        scrubber = default_scrubber()
        if scrubber is not self._mask_scrubber:
            self._masked.clear()
            self._masked_chars = 0
            self._mask_scrubber = scrubber
        masked = self._masked.get(text)
        if masked is None:
            masked = scrubber.mask(text)
            if self._masked_chars + len(text) <= self.max_chars:
                self._masked[text] = masked
                self._masked_chars += len(text)
        return masked

    def _scan(self, text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        every, checked = (tuple(_first_spellings(found)) for found in _checked_scan(text, self.rules, self._mask))
        if self._chars + len(text) <= self.max_chars:
            self._identifiers[text], self._checked[text] = every, checked
            self._chars += len(text)
        return every, checked

    def value_tokens(self, text: str) -> tuple[str, ...]:
        """`extract_value_tokens(text)`."""
        found = self._values.get(text)
        if found is None:
            found = self._remember(self._values, text, tuple(extract_value_tokens(text, self._mask)))
        return found

    def identifiers_in(self, texts: Iterable[str]) -> list[str]:
        """`extract_identifiers("\\n".join(texts))` from each text's own scan (exact, as
        `opaque_identifiers`; a match at a text's start follows a newline in the joined text,
        which `is_checked_identifier` treats as the start): the first spelling of each
        identifier, in order. Each text's secrets are masked on their own: a token the scrubber
        would read across the join (one wrapped over a line break) is no secret of either message."""
        return _first_spellings(chain.from_iterable(map(self.checked, texts)))

    def opaque_identifiers(self, texts: Iterable[str], limit: int | None = MAX_EXTRACTED_IDENTIFIERS) -> list[str]:
        """`extract_opaque_identifiers("\\n".join(texts), limit)` from each text's own scan. Exact:
        no match spans whitespace (see `_chunk_stretches`), so the joined text's matches are the
        texts' matches one after the other, and each text's first spelling of an identifier
        comes in the order of the identifiers' first matches."""
        return _first_keys(chain.from_iterable(map(self.identifiers, texts)), limit)


def item_scans(memo: ItemMemo | None = None) -> TextScans:
    """The `TextScans` of a QA pipeline item (one per `memo`), or a new one without a memo.

    An item scans the same texts in each of its compactions and again in its IDENTIFIER_LOST
    check (`checks.identifiers.identifier_defects`: the summarized span, which the summary scanned message
    by message). The scans are pure functions of the text, so they are shared for the item's
    life and dropped with its memo (kept under this class). They read identifiers by the OpenClaw
    runtime rules the item's profile runs with (`ItemMemo.runtime_rules`)."""
    if memo is None:
        return TextScans()
    rules = memo.runtime_rules or OPENCLAW_2026_4_12
    return memo.kept(TextScans, lambda: TextScans(rules=rules))


def result_values(text: str) -> list[str]:
    """Scalar leaf values of a JSON tool result (names, addresses, dates, ids), by the same rule
    as `argument_values`: what a later call may pass on verbatim. Non-JSON text gives []."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return []
    try:
        data = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return []
    return argument_values(data)


def argument_values(arguments: Any) -> list[str]:
    """Scalar values of tool-call arguments a replayed call would need verbatim (the replay
    model's leaf rule, `replaylab.values.scalar_value_text`), except payloads: strings over 200
    chars or with a newline (file contents, message bodies) are not identifiers; and except
    secrets: nothing under a secret-named key (`password`, `client_secret`), no value that holds
    a secret. A summary is written, shown and sent to models: it must not carry them."""
    out: list[str] = []
    scrubber = default_scrubber()
    stack = [arguments]  # a stack of its own: a value may nest deeper than Python's recursion limit
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(
                item
                for key, item in reversed(list(value.items()))
                if not (isinstance(key, str) and scrubber.is_secret_key(key))
            )
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed(value))
        else:
            text = scalar_value_text(value)
            if text is not None and len(text) <= MAX_ARGUMENT_VALUE_CHARS and "\n" not in text:
                if not scrubber.changes(text):
                    out.append(text.strip())
    return out
