"""The run's own secrets, scrubbed as literals wherever they appear.

The rules know shapes and names; they cannot know a key that has neither (`zq81-Lm5x-owl3`) and
sits in a place without a name (an LLM endpoint's 401 body: "Incorrect API key provided: …", a
tool's stderr). replaylab itself holds some secrets: the values of the environment variables a
suite names (`model_settings.api_key_env`, the `${NAME}` of a header), and every environment
variable with a secret name (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`). Those values are
redacted as they are, JSON-escaped and URL-encoded, by every scrubber made after they are known.

Short values are left out (`MIN_CHARS`): a secret-named flag set to `1` or `true` is no secret,
and redacting every `true` would ruin the reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus

from replaylab.scrub.names import is_secret_name

#: the shortest value redacted as a literal
MIN_CHARS = 8

#: environment variable names whose values are secrets (named by the suites loaded so far)
_WATCHED: set[str] = set()


def watch_environment(names: Iterable[str]) -> bool:
    """Take the values of these environment variables for secrets from now on; whether any name
    was new (then the default scrubber must be made again to know its value)."""
    new = set(names) - _WATCHED
    _WATCHED.update(new)
    return bool(new)


def watched() -> frozenset[str]:
    return frozenset(_WATCHED)


def run_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the watched and the secret-named environment variables, longest first."""
    environ = os.environ if environ is None else environ
    values = {
        value
        for name, value in environ.items()
        if (name in _WATCHED or is_secret_name(name)) and len(value.strip()) >= MIN_CHARS
    }
    return sorted(values, key=lambda v: (-len(v), v))


def spellings(value: str) -> list[str]:
    """How a value can be written out: as it is, JSON-escaped, URL-encoded (both ways)."""
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], quote(value, safe="")}
    forms.add(quote_plus(value, safe=""))
    return sorted(forms, key=lambda f: (-len(f), f))
