"""OpenClaw's `extractKeywords`, ported: how its compaction safeguard reads the words of a latest
ask and of a summary (`quality.has_ask_overlap`).

Text is trimmed and lower-cased, split at whitespace and punctuation, and each segment tokenized by
its script: Japanese kana runs, Chinese characters one by one and in pairs, Korean words with and
without a trailing particle, anything else whole. Stop words of seven languages are dropped, and
so are two-letter Latin words, bare digit runs and runs of punctuation or symbols
(`upstream.openclaw_query_keywords`). The regular expressions are JavaScript's: `\\s` and `trim()`
are the ECMAScript white space (not Python's), `\\d` is ASCII, `\\p{…}` Unicode's categories
(`regex`, imported when a text is first read). `tests/oracles/test_openclaw_keywords.py` holds
this port to OpenClaw's own function.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from replaylab.upstream import openclaw_query_keywords as KW
from replaylab.upstream.openclaw_2026_9_6 import JS_WHITESPACE

#: ECMAScript's WhiteSpace and LineTerminator: what `\s` and `String.prototype.trim` mean in JavaScript
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_KANA = re.compile("[\u3040-\u30ff]")
_JAPANESE_PARTS = re.compile("[a-z0-9_]+|[\u30a0-\u30ffー]+|[\u4e00-\u9fff]+|[\u3040-\u309f]{2,}")
_HAN = re.compile("[\u4e00-\u9fff]")
_ALL_HAN = re.compile("[\u4e00-\u9fff]+")
_HANGUL = re.compile("[\uac00-\ud7af\u3131-\u3163]")
_HANGUL_SYLLABLE = re.compile("[\uac00-\ud7af]")
_ASCII_WORD = re.compile("[a-z0-9_]+", re.IGNORECASE)
_LATIN = re.compile("[a-zA-Z]+")
_DIGITS = re.compile("[0-9]+")
#: ASCII's punctuation (Unicode category P) and symbols (S, `$ + < = > ^ ` | ~`): an ASCII text is
#: split and checked with these (`re`, fast), the same answers `\p{P}` and `\p{S}` give it
_ASCII_PUNCTUATION = re.escape("!\"#%&'()*,-./:;?@[\\]_{}")
_ASCII_SYMBOLS = re.escape("$+<=>^`|~")
_ASCII_SEPARATORS = re.compile(f"[\t\n\v\f\r {_ASCII_PUNCTUATION}]+")
_ASCII_NOT_LETTER_OR_NUMBER = re.compile("[^A-Za-z0-9]+")
_ASCII_PUNCTUATION_OR_SYMBOLS = re.compile(f"[{_ASCII_PUNCTUATION}{_ASCII_SYMBOLS}]+")
#: any character a script branch of `tokenize` reads: kana, Chinese or Korean (a text without one
#: is all plain segments)
_SCRIPTED = re.compile("[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af\u3131-\u3163]")
STOP_WORDS = KW.STOP_WORDS_EN | KW.STOP_WORDS_ES | KW.STOP_WORDS_PT | KW.STOP_WORDS_AR | KW.STOP_WORDS_ZH
STOP_WORDS |= KW.STOP_WORDS_KO | KW.STOP_WORDS_JA


@cache
def _unicode_patterns() -> tuple[Any, Any, Any]:
    """(segment separators, non-letter-or-number runs, punctuation-or-symbol runs), by `regex`."""
    import regex  # type: ignore[import-untyped]  # no stubs; three compiled patterns

    return (
        regex.compile(f"[{JS_SPACE}\\p{{P}}]+"),
        regex.compile(r"[^\p{L}\p{N}]+"),
        regex.compile(r"[\p{P}\p{S}]+"),
    )


def js_trim(text: str) -> str:
    # the same characters as `JS_SPACE`, stripped one by one: a regex anchored at the end would
    # try every run of white space in the text, and `trim` runs on whole summaries
    return text.strip(JS_WHITESPACE)


def is_query_stop_word(token: str) -> bool:
    """`isQueryStopWordToken`."""
    return token in STOP_WORDS


def _valid_keyword(token: str) -> bool:
    """`isValidKeyword`."""
    if not token or (_LATIN.fullmatch(token) and len(token) < 3) or _DIGITS.fullmatch(token):
        return False
    symbols = _ASCII_PUNCTUATION_OR_SYMBOLS if token.isascii() else _unicode_patterns()[2]
    return symbols.fullmatch(token) is None


def _korean_stem(token: str) -> str | None:
    """`stripKoreanTrailingParticle`: the word without the longest particle it ends in."""
    for particle in KW.KO_TRAILING_PARTICLES:
        if len(token) > len(particle) and token.endswith(particle):
            return token[: -len(particle)]
    return None


def _useful_korean_stem(stem: str) -> bool:
    if _HANGUL_SYLLABLE.search(stem):
        return len(stem) >= 2
    return _ASCII_WORD.fullmatch(stem) is not None


def _pairs(chars: str | list[str]) -> list[str]:
    return [chars[i] + chars[i + 1] for i in range(len(chars) - 1)]


def tokenize(text: str) -> list[str]:
    """`tokenize` (without the trigram option)."""
    text = js_trim(text).lower()
    if text.isascii():  # no kana, Chinese or Korean: every segment is a token
        return list(filter(None, _ASCII_SEPARATORS.split(text)))
    segments = list(filter(None, _unicode_patterns()[0].split(text)))
    if not _SCRIPTED.search(text):  # no kana, Chinese or Korean: every segment is a token
        return segments
    tokens: list[str] = []
    for segment in segments:
        if segment.isascii():  # no kana, Chinese or Korean
            tokens.append(segment)
        elif _KANA.search(segment):
            for part in _JAPANESE_PARTS.findall(segment):
                tokens.append(part)
                if _ALL_HAN.fullmatch(part):
                    tokens.extend(_pairs(part))
        elif _HAN.search(segment):
            chars = _HAN.findall(segment)
            tokens.extend(chars)
            tokens.extend(_pairs(chars))
        elif _HANGUL.search(segment):
            stem = _korean_stem(segment)
            if segment not in KW.STOP_WORDS_KO and not (stem is not None and stem in KW.STOP_WORDS_KO):
                tokens.append(segment)
            if stem and stem not in KW.STOP_WORDS_KO and _useful_korean_stem(stem):
                tokens.append(stem)
        else:
            tokens.append(segment)
    return tokens


def is_keyword(token: str) -> bool:
    """Whether `extract_keywords` keeps a token: no stop word, and a valid keyword."""
    return token not in STOP_WORDS and _valid_keyword(token)


def extract_keywords(text: str) -> list[str]:
    """`extractKeywords`: the tokens that are no stop word and a valid keyword, first spelling each."""
    # each distinct token once, in order of first sight: what `seen` leaves of the tokens
    return [t for t in dict.fromkeys(tokenize(text)) if is_keyword(t)]


def letter_number_runs(text: str) -> list[str]:
    """`text.split(/[^\\p{L}\\p{N}]+/u)` without the empty pieces."""
    runs = _ASCII_NOT_LETTER_OR_NUMBER if text.isascii() else _unicode_patterns()[1]
    return [piece for piece in runs.split(text) if piece]
