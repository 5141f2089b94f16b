"""Which names hold secrets: JSON keys, HTTP headers, query parameters, `name = value` in text.

A value under such a name is redacted whatever it looks like: a password has no shape a pattern
could know. One classifier serves keys, headers and parameters, so `{"X-Access-Token": …}` in a
cassette, `x-access-token: …` in a tool's output and `?access_token=…` in a URL are the same rule.

Names are compared lower-cased, with the four non-ASCII letters a case-insensitive regex takes
for ASCII ones folded too; the clean-data check searches JSON text for `NAME_NEEDLES` and always
walks data holding one of those letters.
"""

from __future__ import annotations

import re

#: headers whose value is always secret, besides the secret-named ones (`is_secret_name`)
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
        "private-token",
        "x-access-token",
        "x-amz-security-token",
        "x-subject-token",
    }
)

#: words that make a name secret wherever they occur in it
_ANYWHERE = ("password", "passwd", "passphrase", "secret", "credential", "cookie", "authorization", "csrf", "xsrf")
#: `<word>key` compounds (`api_key`, `accessKey`, `private-key`, ...): a bare `key` is usually an id
_KEY_WORDS = (
    "api",
    "access",
    "private",
    "signing",
    "encryption",
    "master",
    "client",
    "session",
    "auth",
    "license",
    "subscription",
    "account",
    "storage",
    "app",
    "admin",
    "webhook",
    "hmac",
)
_SEPARATORS = ("", "_", "-", ".")
#: endings that make a name secret (`access_token`, `x-subject-token`, `id_jwt`); not `pwd`,
#: which is as often the working directory
_ENDINGS = ("token", "jwt", "_pass", "-pass")
#: endings of names that are not secrets though they end like one (pagination cursors)
_NOT_ENDINGS = (
    "pagetoken",
    "page_token",
    "page-token",
    "nexttoken",
    "next_token",
    "cursortoken",
    "boarding_pass",
    "boarding-pass",
    "day_pass",
    "season_pass",
)
#: whole names that are secret
_WHOLE = ("auth", "pass", "bearer", "sig", "x-amz-signature", "x-goog-signature")

_SECRET_NAME = re.compile(
    "|".join(
        [
            *_ANYWHERE,
            *(f"{word}{re.escape(sep)}key" for word in _KEY_WORDS for sep in _SEPARATORS),
            *(f"{ending}\\Z" for ending in _ENDINGS),
            *(f"\\A{re.escape(name)}\\Z" for name in _WHOLE),
        ]
    )
)

#: lower-case strings one of which every secret name holds (as JSON text holds it: a whole name
#: between its quotes): data whose JSON text holds none has no secret-named key
NAME_NEEDLES: tuple[str, ...] = (
    *_ANYWHERE,
    *(f"{word}{sep}key" for word in _KEY_WORDS for sep in _SEPARATORS),
    *_ENDINGS,
    *(f'"{name}"' for name in _WHOLE),
)


#: the letters a case-insensitive match takes for ASCII ones, as `str.lower` leaves them
_FOLDS = str.maketrans({"\u017f": "s", "\u0131": "i", "\u0307": None})


def is_secret_name(name: str) -> bool:
    """True for a key, header or parameter name whose value is a secret (`ſecret` and `toKen`
    with a Kelvin sign too: a regex under IGNORECASE would take them for the ASCII words)."""
    lowered = name.lower()
    if not lowered.isascii():
        lowered = lowered.translate(_FOLDS)
    if lowered.endswith(_NOT_ENDINGS):
        return False
    return _SECRET_NAME.search(lowered) is not None


#: values under a secret name that are not secrets: the name of an environment variable
#: (`"apiKey": "OLLAMA_API_KEY"`), a placeholder (`${TOKEN:-}`, `$TOKEN`, `{{ secret }}`,
#: `<apiKey>`, `***`), the redaction itself, the replay's marker of a value it lost (`⟨lost:2⟩`,
#: which a divergence under a secret name shows against the recorded redaction); after an auth
#: scheme (`Bearer <apiKey>`) too
_NOT_A_VALUE = re.compile(
    r"(?:(?i:bearer|basic|token|digest)\s+)?"
    r"(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|\$\{[^{}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^{}]*\}\}|<[A-Za-z0-9_ .-]+>"
    r"|\*+|x+|X+|\.\.\.|…|\[REDACTED\]|⟨lost:\d+⟩)"
)


def is_secret_value(value: str) -> bool:
    """Whether a string found under a secret name is a value to redact (not a reference to one)."""
    stripped = value.strip()
    return bool(stripped) and _NOT_A_VALUE.fullmatch(stripped) is None
