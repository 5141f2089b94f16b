"""Secret scrubbing for everything replaylab writes: cassettes, reports, printed failures.

Transcripts and tool output carry real secrets. One scrubber serves the recorder (before a
cassette is written) and every report (before HTML / JSON / markdown / JUnit are written), so
what is scrubbed in one place is scrubbed in all (promptfoo#9698: reports leak when redaction
is not the same code).

Rules are configurable: `Scrubber(extra_patterns=[...], extra_headers=[...])`, or the
`REPLAYLAB_SCRUB_PATTERNS` environment variable (regexes separated by newlines).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

from replaylab.diagnostics import Diagnostic, InputError

REDACTED = "[REDACTED]"

#: request/response headers never written (deps.md §3: vcrpy writes Authorization by default)
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-auth-token",
        "openai-organization",
        "anthropic-api-key",
    }
)

DEFAULT_PATTERNS: tuple[str, ...] = (
    # OpenAI / Anthropic / Stripe-style keys; not inside a word ("task-output-…" in Claude Code logs)
    r"(?<![A-Za-z0-9])sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",
    r"(?i)bearer\s+[A-Za-z0-9._~+/\-]{12,}=*",  # bearer tokens
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"(?i)aws_secret_access_key\s*[=:]\s*\S{20,}",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",  # Google API key
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",  # GitHub tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b",  # Slack tokens
    # `password: "…"`, `"api_key": "…"`, `API_KEY=…1…`: a quoted value, or an unquoted one with a digit
    # (unquoted digit-free values are code: `apiKey = options.getApiKey` is common in the real sessions),
    # never the name of an environment variable (`"apiKey": "OLLAMA_API_KEY"`)
    # (base64 values: `/`, `+` and `=` belong to the value, so no tail of a secret is left behind)
    r"(?i)(api[_-]?key|secret|password|access[_-]?token)(\s*[=:]\s*[\"']|[\"']\s*[=:]\s*[\"']|\s*[=:]\s*(?=[\w.\-/+=]*\d))"
    r"(?-i:(?![A-Z0-9]*_[A-Z0-9_]*(?![\w.\-/+=])))[A-Za-z0-9._\-/+=]{12,}",
)


@dataclass
class Scrubber:
    extra_patterns: Iterable[str] = ()
    extra_headers: Iterable[str] = ()
    _regex: re.Pattern[str] = field(init=False, repr=False)
    headers: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        env = [p for p in os.environ.get(ENV_PATTERNS, "").splitlines() if p.strip()]
        _check_patterns(list(self.extra_patterns), "extra_patterns")
        _check_patterns(env, ENV_PATTERNS)
        patterns = [*DEFAULT_PATTERNS, *self.extra_patterns, *env]
        try:
            self._regex = re.compile("|".join(_scoped(p) for p in patterns))
        except re.error as exc:  # each compiles alone: named groups or backreferences clash when joined
            raise InputError(
                [
                    Diagnostic(
                        code="scrub-pattern",
                        file=ENV_PATTERNS if env else "extra_patterns",
                        message=f"the scrub patterns cannot be combined ({exc}); expected patterns "
                        "without named groups or backreferences",
                    )
                ]
            ) from None
        self.headers = SECRET_HEADERS | {h.lower() for h in self.extra_headers}
        # what `json_is_clean` searches a whole data blob for, all at once: the hints, the header
        # names and the case specials
        self._blob_needles = _needles([h.encode() for h in (*_HINTS, *self.headers)] + list(_CASE_SPECIALS_UTF8))
        # Fast path: every default pattern contains one of these literal hints; a string without
        # any cannot match, so the big alternation runs only on candidates. Custom patterns
        # have no known hint, so they disable the fast path.
        self._cheap = not (list(self.extra_patterns) or env)

    def text(self, value: str) -> str:
        if not value or (self._cheap and not _has_hint(value)):
            return value
        return self._regex.sub(self._replace, value)

    @staticmethod
    def _replace(match: re.Match[str]) -> str:
        # keep "api_key=" style prefixes readable: replace only the value part when present
        groups = [g for g in match.groups() if g is not None]
        if len(groups) >= 2 and match.group(0).startswith(groups[0]):
            return groups[0] + groups[1] + REDACTED
        return REDACTED

    def data(self, value: Any) -> Any:
        """Scrub every string inside JSON-like data (dicts, lists); header-like keys are blanked.

        A string under a secret-named key (`api_key`, `password`, ...) is scrubbed as the text
        rule `api_key=VALUE` would scrub it, so scrubbing the data and scrubbing its JSON text
        agree (an imported cassette body must equal the scrubbed arguments to match on replay)."""
        if isinstance(value, str):
            return self.text(value)
        if self._cheap and isinstance(value, (dict, list)) and self._clean(value):
            return value  # nothing inside can match: the same data, uncopied
        if isinstance(value, dict):
            return {
                k: (REDACTED if isinstance(k, str) and k.lower() in self.headers else self._value(k, v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value

    def _clean(self, value: dict | list) -> bool:
        """True when no string or key inside `value` holds a hint or a secret header name, read
        off its JSON text in one pass (a report is megabytes of strings, nearly all clean: walking
        them one by one would be most of the time to write it). Hints cannot be split by JSON escaping
        (they are letters, digits, `-` and `_`); a hint that only appears across two strings
        makes this say "not clean", which costs a walk, never a leak. Data JSON cannot encode
        (non-string keys, other types) is walked."""
        try:
            blob = orjson.dumps(value)
        except TypeError:
            return False
        return self.json_is_clean(blob)

    def json_is_clean(self, blob: bytes) -> bool:
        """True when the UTF-8 JSON text `blob` holds no string or key this scrubber could change
        (the test `_clean` makes): data whose JSON is clean can be written as that JSON, unwalked.
        Always False with custom patterns, which have no known hint."""
        if not self._cheap:
            return False
        # bytes.lower() folds ASCII only: the hints and header names are ASCII, and the UTF-8 of
        # the case specials (all bytes ≥ 0x80) is left as it is
        return not self._blob_needles.find_matches_as_indexes(blob.lower())

    def _value(self, key: Any, value: Any) -> Any:
        value = self.data(value)
        if isinstance(key, str) and isinstance(value, str) and SECRET_KEY.search(key):
            value = SECRET_VALUE.sub(REDACTED, value, count=1)
        return value


#: environment variable with extra patterns (one regular expression per line)
ENV_PATTERNS = "REPLAYLAB_SCRUB_PATTERNS"
#: key names whose string values are secrets (the key part of the last default pattern)
SECRET_KEY = re.compile(r"(?i)(api[_-]?key|secret|password|access[_-]?token)")
SECRET_VALUE = re.compile(r"^(?![A-Z0-9]*_[A-Z0-9_]*(?![\w.\-/+=]))[A-Za-z0-9._\-/+=]{12,}")
_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


#: lower-case literals, one of which every default pattern's match contains
_HINTS = (
    "sk-",
    "bearer",
    "akia",
    "aws_secret",
    "aiza",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "xox",
    "api_key",
    "api-key",
    "apikey",
    "secret",
    "password",
    "access_token",
    "access-token",
    "accesstoken",
)


#: the non-ASCII letters Python's IGNORECASE matches to ASCII ones (`re` docs: İ ı ſ and the Kelvin
#: sign): `ſecret=…` matches `(?i)secret` without holding the hint, so such texts are always scanned
_CASE_SPECIALS = ("\u0130", "\u0131", "\u017f", "\u212a")
_CASE_SPECIALS_UTF8 = tuple(c.encode() for c in _CASE_SPECIALS)


def _needles(needles: list[bytes]) -> BytesAhoCorasick:
    """One automaton that finds any of `needles` in a single pass.

    Why not `needle in text` per needle: each such scan reads the whole text, and a report item
    needs one per hint, which would be the largest cost of writing it. The automaton reads it
    once. The same technique as secret scanners' keyword
    pre-filters (TruffleHog's): a text without any keyword cannot match, so only the rest is scanned
    with the patterns themselves."""
    return BytesAhoCorasick(sorted(set(needles)))


#: `_HINTS` as one automaton over texts (`_needles`: one pass instead of a substring scan per hint)
_HINT_NEEDLES = AhoCorasick(list(_HINTS))


def _has_hint(value: str) -> bool:
    if _HINT_NEEDLES.find_matches_as_indexes(value.lower()):
        return True
    if value.isascii():
        return False
    for special in _CASE_SPECIALS:  # not lowered: str.lower() folds İ and the Kelvin sign away
        if special in value:
            return True
    return False


def _scoped(pattern: str) -> str:
    """Make leading inline flags (`(?i)`, `(?s)`, ...) local to their alternative so patterns can
    be joined (Python 3.11 rejects global flags anywhere but at the very start)."""
    flags = _GLOBAL_FLAGS.match(pattern)
    if flags:
        return f"(?{flags.group(1)}:{pattern[flags.end() :]})"
    return f"(?:{pattern})"


def _check_patterns(patterns: list[str], source: str) -> None:
    """A user's pattern that does not compile is a user error naming it, not a traceback."""
    problems = []
    for index, pattern in enumerate(patterns, 1):
        try:
            re.compile(pattern)  # first alone, so the error's position is in the user's text
            re.compile(_scoped(pattern))
        except re.error as exc:
            problems.append(
                Diagnostic(
                    code="scrub-pattern",
                    file=source,
                    line=index if source == ENV_PATTERNS else None,
                    field=f"pattern {index}",
                    message=f"{pattern!r} is not a valid regular "
                    f"expression ({exc}); expected one Python regex per line",
                )
            )
    if problems:
        raise InputError(problems)


_default: Scrubber | None = None


def default_scrubber() -> Scrubber:
    global _default
    if _default is None:
        _default = Scrubber()
    return _default


def scrub_text(value: str) -> str:
    return default_scrubber().text(value)


#: texts cut for display are scrubbed this far past the cut, so a secret the cut splits is still
#: recognised (every default pattern matches within 50 characters)
SCRUB_MARGIN = 96


def scrub_prefix(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, scrubbed; only `limit + SCRUB_MARGIN` characters
    are ever scanned (a report shows excerpts of megabytes of tool output)."""
    return scrub_text(text[: limit + SCRUB_MARGIN])[:limit]


def scrub_data(value: Any) -> Any:
    return default_scrubber().data(value)
