"""Places in JSON text, read without parsing it: the string a byte is in, and what marks a key.

The clean-data check (`Scrubber.json_is_clean`) asks this of a report's JSON at each place a
needle was found: which string holds it, and whether that string is a key.
"""

from __future__ import annotations

import re

#: a `\u` escape of anything but a control character: a letter spelled so holds no needle in
#: the JSON text, but its string does once decoded (orjson and pydantic escape only control
#: characters; JSON from elsewhere may escape any letter)
LETTER_ESCAPE = re.compile(rb"\\u(?!00[01][0-9a-fA-F])")
#: what follows a key's string (and no other string) in JSON text
KEY_END = re.compile(rb"[ \t\r\n]*+:")


def string_around(blob: bytes, pos: int, hit: int) -> tuple[int, int]:
    """(start, end) of the JSON string of `blob` that `hit` is in, quotes included, read from
    `pos` (outside every string); (-1, -1) when `hit` is in none. JSON text has no quote outside
    a string but the strings' own, and a quote inside one follows an odd run of backslashes: the
    quotes before `hit` are counted and the nearest found in C, not scanned string by string."""
    if unescaped_quotes(blob, pos, hit) % 2 == 0:
        return -1, -1
    start = blob.rfind(b'"', pos, hit)
    while start > 0 and blob[start - 1] == 0x5C and is_escaped(blob, start):
        start = blob.rfind(b'"', pos, start)
    end = blob.find(b'"', hit)
    while end > 0 and blob[end - 1] == 0x5C and is_escaped(blob, end):
        end = blob.find(b'"', end + 1)
    return (start, end + 1) if start >= 0 and end >= 0 else (-1, -1)


def unescaped_quotes(blob: bytes, pos: int, end: int) -> int:
    """How many quotes of `blob[pos:end]` open or close a string."""
    quotes, after_backslash = blob.count(b'"', pos, end), blob.count(b'\\"', pos, end)
    if not after_backslash or blob.find(b'\\\\"', pos, end) < 0:
        return quotes - after_backslash  # each quote after a backslash is escaped by it
    # some follow a longer run (an escaped backslash, or JSON inside JSON): each one asked
    escaped, at = 0, blob.find(b'\\"', pos, end)
    while at >= 0:
        escaped += is_escaped(blob, at + 1)
        at = blob.find(b'\\"', at + 2, end)
    return quotes - escaped


def is_escaped(blob: bytes, quote: int) -> bool:
    """Whether the quote at `quote` follows an odd run of backslashes (is escaped by the last)."""
    run = 0
    while quote - run > 0 and blob[quote - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1
