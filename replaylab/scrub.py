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
from dataclasses import dataclass, field
from typing import Any, Iterable

REDACTED = "[REDACTED]"

#: request/response headers never written (deps.md §3: vcrpy writes Authorization by default)
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie",
    "set-cookie", "x-auth-token", "openai-organization", "anthropic-api-key",
})

DEFAULT_PATTERNS: tuple[str, ...] = (
    r"sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",  # OpenAI / Anthropic / Stripe-style keys
    r"(?i)bearer\s+[A-Za-z0-9._~+/\-]{12,}=*",  # bearer tokens
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"(?i)aws_secret_access_key\s*[=:]\s*\S{20,}",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",  # Google API key
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",  # GitHub tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b",  # Slack tokens
    r"(?i)(api[_-]?key|secret|password|access[_-]?token)([\"']?\s*[=:]\s*[\"']?)[A-Za-z0-9._\-]{12,}",
)


@dataclass
class Scrubber:
    extra_patterns: Iterable[str] = ()
    extra_headers: Iterable[str] = ()
    _regex: re.Pattern[str] = field(init=False, repr=False)
    headers: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        env = [p for p in os.environ.get("REPLAYLAB_SCRUB_PATTERNS", "").splitlines() if p.strip()]
        patterns = [*DEFAULT_PATTERNS, *self.extra_patterns, *env]
        self._regex = re.compile("|".join(_scoped(p) for p in patterns))
        self.headers = SECRET_HEADERS | {h.lower() for h in self.extra_headers}

    def text(self, value: str) -> str:
        if not value:
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
        """Scrub every string inside JSON-like data (dicts, lists); header-like keys are blanked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: (REDACTED if isinstance(k, str) and k.lower() in self.headers else self.data(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value


def _scoped(pattern: str) -> str:
    """Make a leading `(?i)` local to its alternative so patterns can be joined."""
    if pattern.startswith("(?i)"):
        return f"(?i:{pattern[4:]})"
    return f"(?:{pattern})"


_default: Scrubber | None = None


def default_scrubber() -> Scrubber:
    global _default
    if _default is None:
        _default = Scrubber()
    return _default


def scrub_text(value: str) -> str:
    return default_scrubber().text(value)


def scrub_data(value: Any) -> Any:
    return default_scrubber().data(value)
