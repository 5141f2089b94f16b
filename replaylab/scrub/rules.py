"""The scrubber's rules: replaylab's structural ones, token families, and detect-secrets' detectors.

Structural rules know where a secret sits whatever it looks like: after a secret-named key
(`password: "…"`, `api_key=…`), in a header line (`X-Access-Token: …`, `Authorization: Basic …`,
`Cookie: …`), in a URL's query (`?access_token=…`) or userinfo (`https://user:pass@host`), inside
a PEM block. Token families know what a secret looks like wherever it sits (`sk-…`, `ghp_…`,
`github_pat_…`, `xapp-…`, `hf_…`, ...). The detectors of detect-secrets, a maintained scanner, add
the families it knows; only their regular expressions are used (each detector's `denylist`), not
its scanner, which reads line by line and is made for files, not for millions of short strings.

Every rule is a regular expression of its own (so a rule's groups mean what they say) with a
`secret` group: what is redacted.

**Linear time.** A text can be built to make a backtracking pattern try every split of a long run
(`password` and 26,000 spaces) or scan a long run again from each of its starts (`sk-` 15,000
times). So runs are matched possessively (`*+`, `++`: Python 3.11), quantifiers that must
backtrack are bounded, each rule is tried only where one of its hints starts (`anchored`), and a
rule whose tries from every start inside a run end alike says so (`cover`): after a try from a
start fails, the starts its scan covered are skipped. `NEWLINE` spells a line break raw or
JSON-escaped (`\n`, `\r\n`, `\\n`, `\\r\\n`). A rule marked `extend` redacts on to the end of the run of
token characters (detectors match a key's known length, real keys can be longer); a rule marked
`wraps` also redacts the following lines that consist of token characters only (a key wrapped
over two lines in a terminal, a log or a `.env` file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from replaylab import caches
from replaylab.scrub.hints import folded_regex, pattern_hints

#: how a rule's `name` group is checked: a secret name (`names.is_secret_name`) or a header name
#: (`Scrubber.is_secret_key`: the secret names and the secret headers); None: no name group
NameCheck = Literal["name", "query"] | None


@dataclass(frozen=True)
class Rule:
    """One pattern and what of its match is the secret."""

    label: str
    regex: re.Pattern[str]
    #: the group holding the secret (0: the whole match)
    secret: int = 0
    #: the group holding a name that must be secret-named for the match to count
    name: int | None = None
    name_check: NameCheck = None
    #: the name group holds the name from its secret part on: the name starts further left, at
    #: the first character that is not a name character
    name_left: bool = False
    #: the secret must be a value, not a reference to one (`names.is_secret_value`); always so
    #: for rules with a name
    checks_value: bool = False
    extend: bool = False
    wraps: bool = False
    #: a user pattern with two or more groups keeps the first two and redacts the rest
    keep_two_groups: bool = False
    #: a word that must come before the match on its line (`curl ` before `-b …`), or None
    line_needs: str | None = None
    #: where the rule comes from (replaylab, detect-secrets and the detector, a user's setting)
    source: str = "replaylab"
    #: matched at a start where the rule's try failed: every start before its end (less
    #: `cover_backoff`) would fail alike, so the scan skips them (see the module docstring)
    cover: re.Pattern[str] | None = None
    cover_backoff: int = 0
    #: a literal every match holds after its start: starts past its last occurrence are skipped
    needs_after: str | None = None
    #: a pattern every match holds, searched in the text as it is: a text without it is not
    #: searched (the rule's own pattern can start at nearly every place, this one at few)
    needs: re.Pattern[str] | None = None
    #: the `name` group alone (a `name_left` rule): a start whose name is not a secret one is
    #: skipped before the value is read (a rejected name must not cost a scan of its value)
    name_head: re.Pattern[str] | None = None
    #: what an `extend` rule's secret runs on over (None: token characters)
    tail: re.Pattern[str] | None = None
    hints: frozenset[str] | None = field(init=False)
    #: every match starts with a hint: the rule is tried only where a hint starts
    anchored: bool = field(init=False)
    #: the same pattern without IGNORECASE, for lower-cased text (`folded_regex`), or None
    folded: re.Pattern[str] | None = field(init=False)

    def __post_init__(self) -> None:
        hints, anchored = pattern_hints(self.regex)
        object.__setattr__(self, "hints", hints)
        object.__setattr__(self, "anchored", anchored)
        object.__setattr__(self, "folded", folded_regex(self.regex))
        if self.name is not None:
            object.__setattr__(self, "checks_value", True)


def _rule(
    label: str,
    pattern: str,
    flags: int = 0,
    *,
    cover: str | None = None,
    name_head: str | None = None,
    needs: str | None = None,
    **options: object,
) -> Rule:
    covered = re.compile(cover, flags) if cover is not None else None
    head = re.compile(name_head, flags) if name_head is not None else None
    needed = re.compile(needs, flags) if needs is not None else None
    return Rule(label, re.compile(pattern, flags), cover=covered, name_head=head, needs=needed, **options)  # type: ignore[arg-type]


#: a line break, raw or JSON-escaped (`\r` is optional before `\n` in both spellings)
NEWLINE = r"(?:\r?\n|(?:\\r)?\\n)"


# ---------------------------------------------------------------- structural rules

#: the name parts a `name = value` in text must hold (`names.is_secret_name` then decides); bare
#: `auth`, `pass` and `sig` are left to keys and query parameters: as words they are everywhere
_NAME_PARTS = (
    r"password|passwd|passphrase|secret|credential|cookie|authorization|csrf|xsrf|token|jwt"
    r"|[_\-]pass|(?:api|access|private|signing|encryption|master|client|session|license|subscription|account|storage|app|admin|webhook|hmac)[_.\-]?key"
)
#: a name from its secret part on (the part first: a pattern that starts with a literal is found
#: fast); the rest of the name, before the part, is read backwards (`Rule.name_left`)
_NAME = rf"((?:{_NAME_PARTS})[A-Za-z0-9_\-]{{0,24}})"
#: query parameters that are secret though they are not secret names (`?key=AIza…`, `&sig=…`)
QUERY_SECRET_NAMES = frozenset(
    {"key", "sig", "signature", "x-amz-signature", "x-goog-signature", "x-amz-credential", "code_verifier"}
)
#: token characters: what a key, a token or a base64 secret is made of
TOKEN_CHARS = r"A-Za-z0-9_\-+/="
#: a wrapped token's next line: token characters, `=` only as the padding at its end (a line
#: `PORT=3000` after a key that ends its line is the next setting, not the key's rest)
WRAPPED_CONTINUATION = r"[A-Za-z0-9_\-+/]{8,}+=*+"
#: what an `extend` rule's secret runs on over (not a `.`: a sentence's end, a file's suffix)
TOKEN_TAIL = re.compile(rf"[{TOKEN_CHARS}]*")
#: a wrapped secret's next line: token characters alone (after an optional `\` and indentation)
WRAPPED_LINE = re.compile(rf"\\?{NEWLINE}[ \t]*+{WRAPPED_CONTINUATION}[ \t]*+(?={NEWLINE}|[\"']|\Z)")

#: a header line's value: to the end of the line, a quote, a backslash (JSON-escaped text) or a backtick
_HEADER_VALUE = r"([^\s\"'\\`][^\r\n\"'\\`]*+)"
#: what follows a cookie's value where a server sets it (`; Path=/`)
_COOKIE_ATTRIBUTE = r";[ \t]*+(?:path|domain|expires|max-age|httponly|secure|samesite)\b"
#: where a header name may start: not inside a word, but right after a JSON-escaped line break
_HEADER_START = r"(?:(?<![A-Za-z0-9-])|(?<=\\[nrt]))"

STRUCTURAL: tuple[Rule, ...] = (
    # `Authorization: Basic …`, `Cookie: a=b; c=d`, `Set-Cookie: …`: the value to the end of the line
    _rule(
        "secret header line",
        rf"(?i){_HEADER_START}((?:proxy-)?authorization|set-cookie|cookie)(\s*+:[ \t]*+)" + _HEADER_VALUE,
        secret=3,
        checks_value=True,
    ),
    # `X-Access-Token: …`, `Private-Token: …`, `x-api-key: …`, `X-Amz-Security-Token: …`: tried where
    # the secret part of the name starts, the name read back from there (`name_left`)
    _rule(
        "token header line",
        r"(?i)(-(?:token|key|secret|password|auth))(\s*+:[ \t]*+)" + _HEADER_VALUE,
        secret=3,
        name=1,
        name_check="name",
        name_left=True,
        name_head=r"(?i)-(?:token|key|secret|password|auth)",
    ),
    # `password: "…"`, `"client_secret": "…"`, `token='…'` (also JSON-escaped: `\"password\": \"…\"`)
    _rule(
        "secret-named quoted value",
        rf"(?i){_NAME}(\\?[\"']?\s*+[=:]\s*+\\?[\"'])((?![\s,;{{}}\[\]()])[^\"'\\\r\n]++)(?=\\?[\"']|\Z)",
        secret=3,
        name=1,
        name_check="name",
        name_left=True,
        wraps=True,
        # a try that fails stops where the value's run stops (a line break, a backslash that quotes
        # nothing): a name inside the run would need a quote there too
        cover=rf"(?i){_NAME}\\?[\"']?\s*+[=:]\s*+\\?[\"'][^\"'\\\r\n]*+",
        cover_backoff=64,
        name_head=rf"(?i){_NAME}",
    ),
    # `API_KEY=abc123…`: unquoted values need a digit (`apiKey = options.getApiKey` is code); the
    # value is matched up to 512 characters and its run followed after (`extend`)
    _rule(
        "secret-named value",
        # the value on the name's own line: `apiKey =⏎  next.ts:195:` is code, the next line no value
        rf"(?i){_NAME}([ \t]*+[=:][ \t]*+)(?=[A-Za-z._\-/+=~!$^@:%|#*]{{0,512}}+\d)"
        rf"([A-Za-z0-9._\-/+=~!$^@:%|#*]{{8,512}}+)(?![(\[])",
        secret=3,
        name=1,
        name_check="name",
        name_left=True,
        wraps=True,
        extend=True,
        tail=re.compile(r"[A-Za-z0-9._\-/+=~!$^@:%|#*]*+"),
        # a try that fails on its value fails from every name inside the value's run too (a
        # suffix of it); a name just before the run's end may start another value after it
        cover=rf"(?i){_NAME}[ \t]*+[=:][ \t]*+[A-Za-z0-9._\-/+=~!$^@:%|#*]*+",
        cover_backoff=64,
        name_head=rf"(?i){_NAME}",
    ),
    # `the password Hunter-2-vault`, `my passphrase is …`: in prose a value needs a digit and a
    # non-letter to be told from the next word; trailing punctuation (`.`, `)`) is not the value's
    _rule(
        "password in prose",
        r"(?i)\b(?:password|passphrase|passwd)(\s++(?:(?:is|was|=)\s*+)?)(?=\S{0,256}?\d)(?=\S{0,256}?[^A-Za-z\s])"
        r"((?:[^\s\"'`.,;:!?)\]]++|[.,;:!?)\]]++(?=[^\s\"'`]))++)(?<=[^\s\"'`]{6})",
        secret=2,
        checks_value=True,
    ),
    # `?access_token=…`, `&X-Amz-Signature=…`, `;key=…`
    _rule(
        "secret query parameter",
        r"(?i)[?&;]([A-Za-z0-9_.\-\[\]]*?(?:token|key|secret|password|passwd|pwd|auth|sig|signature|credential"
        r"|jwt|code_verifier))=([^&#\s\"'<>\\]++)",
        secret=2,
        name=1,
        name_check="query",
    ),
    _rule("bearer token", r"(?i)\bbearer\s++[A-Za-z0-9._~+/\-]{12,}+=*+", extend=True, wraps=True),
    # curl's cookies and credentials on its command line: `curl -b 'sid=…'`, `--cookie …`, `-u user:pass`
    _rule(
        "curl cookie",
        r"(?<![\w-])(?:-b |--cookie[ =])[\"']?([^\"'\s\\]++)",
        secret=1,
        line_needs="curl ",
        checks_value=True,
    ),
    _rule(
        "curl credentials",
        r"(?<![\w-])(?:-u |--user[ =])[\"']?[^:\s\"'\\]++:([^\"'\s\\]++)",
        secret=1,
        line_needs="curl ",
        checks_value=True,
        # the user's run a failed try scanned holds no `:`: no start inside it finds one either
        cover=r"(?:-u |--user[ =])[\"']?[^:\s\"'\\]*+",
        cover_backoff=8,
    ),
    _rule("AWS secret key", r"(?i)aws_secret_access_key\s*+[=:]\s*+\S{20,}+", wraps=True),
    # a command-line option named for a secret, its value after a space (`--token 8800…`,
    # `--api-key …`, `--client-secret …`): any program, the option's name says what its value is
    # (`--token=…` is a `name=value`); a placeholder (`$TOKEN`, `<token>`) is kept. Spelled to
    # start with its `-` (then "not after a word character or `-`"): a pattern that starts with a
    # literal is searched for that character, one that starts with a lookbehind tries every place
    _rule(
        "secret option value",
        r"(?i)-(?<![\w-]-)-?[a-z0-9-]*?(?:token|password|passwd|passphrase|secret|credential|jwt"
        r"|(?:api|access|private|client|session|auth)-?key)\s++[\"']?([^\"'\s\\-][^\"'\s\\]{7,}+)",
        secret=1,
        checks_value=True,
    ),
    # `name=value; Path=/; HttpOnly`: a cookie as a server sets it, wherever it is quoted (a
    # recorded response body, a log line); its value alone at the start of a quoted string too
    _rule(
        "cookie with attributes",
        rf"(?i)(?:=|(?<=[\"']))([^;\s\"'\\=]{{4,}}+=*+){_COOKIE_ATTRIBUTE}",
        secret=1,
        checks_value=True,
        needs=rf"(?i){_COOKIE_ATTRIBUTE}",
    ),
)


def private_key_rules(marker: str, source: str) -> tuple[Rule, ...]:
    """A PEM (or PuTTY) private key from its marker line to its END line; and, for a cut text
    without an END line, the marker and the lines of key material after it."""
    lines = rf"(?:{NEWLINE}[A-Za-z0-9+/=:,.@_\- ]*+)*+"
    if not marker.startswith("BEGIN "):
        return (_rule("private key", rf"{re.escape(marker)}[^\r\n]*+{lines}", source=source),)
    name = marker[len("BEGIN ") :]
    body = re.escape(name)
    return (
        _rule(
            "private key", rf"BEGIN {body}[ \-]*+[\s\S]*?END {body}[ \-]*+", source=source, needs_after=f"END {name}"
        ),
        _rule("private key", rf"BEGIN {body}[ \-]*+{lines}", source=source),
    )


# ---------------------------------------------------------------- token families

#: where a token may start: not inside a word — but right after a JSON-escaped line break or tab
#: (`\nxapp-…`), where the escape's letter would otherwise read as part of one
_EDGE = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
_EDGE_ = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"  # `_` may come before (`SLACK_TOKEN_xoxb-…`)
FAMILIES: tuple[Rule, ...] = tuple(
    _rule(label, pattern.replace(",}", ",}+"), extend=True, wraps=True)
    for label, pattern in (
        (
            "OpenAI / Anthropic key",
            rf"{_EDGE_}sk-(?:ant-|proj-|live-|test-|svcacct-|admin-)?(?=[A-Za-z_\-]{{0,64}}+\d)[A-Za-z0-9_\-]{{16,}}",
        ),
        ("Google API key", rf"{_EDGE_}AIza[0-9A-Za-z_\-]{{30,}}"),
        ("Google OAuth token", rf"{_EDGE_}ya29\.[0-9A-Za-z_\-]{{20,}}"),
        ("Google OAuth client secret", rf"{_EDGE_}GOCSPX-[0-9A-Za-z_\-]{{20,}}"),
        ("GitHub token", rf"{_EDGE_}gh[pousr]_[A-Za-z0-9]{{30,}}"),
        ("GitHub fine-grained token", rf"{_EDGE_}github_pat_[A-Za-z0-9_]{{22,}}"),
        ("Slack token", rf"{_EDGE_}xox[abposre]-[A-Za-z0-9\-]{{10,}}"),
        ("Slack app token", rf"{_EDGE_}xapp-\d-[A-Za-z0-9\-]{{10,}}"),
        ("Slack webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}"),
        ("Stripe key", rf"{_EDGE}(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{{10,}}"),
        ("Stripe webhook secret", rf"{_EDGE}whsec_[0-9A-Za-z]{{20,}}"),
        ("npm token", rf"{_EDGE}npm_[A-Za-z0-9]{{30,}}"),
        ("Hugging Face token", rf"{_EDGE}hf_[A-Za-z0-9]{{30,}}"),
        ("AWS session token", r"(?:FwoGZXIvYXdz|IQoJb3JpZ2lu|AQoDYXdz|AQoEYXdz)[A-Za-z0-9/+=]{40,}"),
    )
)

#: vendor tokens with a literal prefix (from gitleaks' rules, config/gitleaks.toml): the prefix is the
#: hint, the body the rule's minimum; `extend` takes the rest of the run
VENDOR_FAMILIES: tuple[Rule, ...] = tuple(
    _rule(label, pattern.replace(",}", ",}+"), extend=True, wraps=True)
    for label, pattern in (
        (
            "vendor token",
            rf"{_EDGE}(?:gsk_|pplx-|pnu_|xai-|fo1_|rdme_|ntn_\d{{11}})(?=[a-z_\-]{{0,64}}+[A-Z0-9])[A-Za-z0-9_\-]{{30,}}",
        ),
        (
            "vendor token",
            rf"{_EDGE}(?:lsv2_(?:pt|sk)_|lin_api_|api_org_|glsa_|glc_|sntryu_|sntrys_|rubygems_|shippo_(?:live|test)_|sk_prod_|rk_prod_)[A-Za-z0-9_+/=\-]{{16,}}",
        ),
        (
            "vendor token",
            rf"{_EDGE}(?:shp(?:at|ca|pa|ss)_|dapi|pul-|ico-|p8e-|key-|pubkey-|sgp_(?:[a-fA-F0-9]{{16}}|local)_)[A-Fa-f0-9]{{32,}}",
        ),
        ("vendor token", rf"{_EDGE}do[opr]_v1_[a-f0-9]{{64}}"),
        ("vendor token", rf"{_EDGE}(?:hv[sb]|dp\.pt|dt0c01)\.[A-Za-z0-9_\-.]{{40,}}"),
        (
            "vendor token",
            rf"{_EDGE}(?:pscale_(?:tkn|oauth|pw)_|duffel_(?:test|live)_|tk-us-|fio-u-|glffct-|dnkey-|CLOJARS_|FLWSECK(?:_TEST)?-|FLWPUBK(?:_TEST)?-|fm[12][ar]?_|ops_eyJ|HRKU-AA|ATATT3|AKCp|EZ[AT]K|NRAK-|NRII-|NRJS-|PMAK-|xkeysib-|sq0(?:atp|csp)-|LTAI|AGE-SECRET-KEY-1)[A-Za-z0-9_+/=\-.]{{12,}}",
        ),
        ("vendor token", rf"{_EDGE}sm_(?:aat|pat|sat)_[A-Za-z0-9]{{16,}}"),
        ("vendor token", rf"{_EDGE}[a-z0-9]{{14}}\.atlasv1\.[A-Za-z0-9_\-=]{{60,}}"),
        ("vendor token", rf"{_EDGE}sha256~[A-Za-z0-9_\-]{{43}}"),
        (
            "vendor token",
            r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}(?:0Q~|1Q~|2Q~|3Q~|4Q~|5Q~|6Q~|7Q~|8Q~|9Q~)[A-Za-z0-9_~.\-]{31,34}",
        ),  # Azure AD client secret
        ("webhook URL", r"\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/\-]{40,}|_gitlab_session=[0-9a-z]{32}"),
    )
)

#: a Telegram bot token in the Bot API's URL (`https://api.telegram.org/bot<id>:<secret>/getMe`) or
#: after a name holding `telegram`: only the token is redacted
TELEGRAM = _rule(
    "Telegram bot token",
    r"(?:api\.telegram\.org/(?:file/)?bot|(?i:telegram)[\w .-]{0,24}[=:]\s*+[\"']?)(\d{5,16}:[A-Za-z0-9_\-]{30,}+)",
    secret=1,
)

#: the literal starts of the token families (`sk-`, `ghp_`, `AKIA`, ...)
_PREFIXES = (
    "sk-",
    "AIza",
    "ya29.",
    "GOCSPX-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxa-",
    "xoxb-",
    "xoxe-",
    "xoxo-",
    "xoxp-",
    "xoxr-",
    "xoxs-",
    "xapp-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "whsec_",
    "npm_",
    "hf_",
    "AKIA",
    "ASIA",
)
#: a key wrapped right after its start, too short on its first line for its family's rule: the
#: start at the end of a line and a next line of token characters alone
_STARTS = "|".join(re.escape(p) for p in _PREFIXES)
WRAPPED_START = _rule(
    "token wrapped after its start",
    # `AKIA` / `ASIA` end many a word (`ASIA`, a continent): only with key characters after them
    rf"(?<![A-Za-z0-9])(?:(?:{_STARTS})(?<!AKIA)(?<!ASIA)|(?:AKIA|ASIA)(?=[A-Z0-9]{{4}}))[{TOKEN_CHARS}]*+"
    rf"\\?{NEWLINE}[ \t]*+{WRAPPED_CONTINUATION}[ \t]*+(?={NEWLINE}|[\"']|\Z)",
    wraps=True,
    # every start inside the run of token characters a failed try scanned reaches the same end
    # (`ya29.` ends on a character that is not one: the last few starts are tried again)
    cover=rf"(?:{_STARTS})[{TOKEN_CHARS}]*+",
    cover_backoff=16,
)


# ---------------------------------------------------------------- detect-secrets

#: the detectors whose patterns are used, and the group of each pattern that holds the secret
#: (0: the whole match). Left out: detectors without a pattern (keywords and entropy: the
#: structural rules and the families do that job without flagging every hash), detectors whose
#: patterns hold no literal of three characters (Artifactory, Discord, Telegram, Twilio: they
#: would be run on every string), keyword detectors the secret-named rules cover (Cloudant, IBM,
#: SoftLayer), OpenAI's (its `sk-…` keys are a token family here; its pattern scans back over a
#: key's run from every `sk-`), and public IP addresses, which are not secrets.
DETECTORS: dict[str, int] = {
    "aws.AWSKeyDetector": 1,
    "azure_storage_key.AzureStorageKeyDetector": 0,
    "basic_auth.BasicAuthDetector": 1,
    "github_token.GitHubTokenDetector": 0,
    "gitlab_token.GitLabTokenDetector": 0,
    "jwt.JwtTokenDetector": 0,
    "mailchimp.MailchimpDetector": 0,
    "npm.NpmDetector": 1,
    "pypi_token.PypiTokenDetector": 0,
    "sendgrid.SendGridDetector": 0,
    "slack.SlackDetector": 0,
    "square_oauth.SquareOAuthDetector": 0,
    "stripe.StripeDetector": 0,
}
#: detector patterns that backtrack over a long run from each of their starts, in a form that
#: matches the same secrets in linear time: (pattern, group, cover)
LINEAR_DETECTORS: dict[str, tuple[tuple[str, int, str | None], ...]] = {
    # JWT: each part's run is matched once (a start inside the first part reaches the same dot)
    "jwt.JwtTokenDetector": (
        (r"eyJ[A-Za-z0-9_=-]++\.[A-Za-z0-9_=-]++\.?[A-Za-z0-9_.+/=-]*+", 0, r"eyJ[A-Za-z0-9_=-]*+"),
    ),
    # npm's `//registry/:_authToken=…`: from the token's name on (the registry before it is no secret)
    "npm.NpmDetector": ((r"/:_authToken=\s*+((?:npm_\S++)|[A-Fa-f0-9-]{36})", 1, None),),
    # `scheme://user:password@`: each run once
    "basic_auth.BasicAuthDetector": (
        (
            r"://[^:/\?\#\[\]@!\$\&'\(\)\*\+,;=\s]++:([^/\?\#\[\]@\s\"'<>\\`]++)@",
            1,
            None,
        ),
    ),
}
PRIVATE_KEY_DETECTOR = "private_key.PrivateKeyDetector"


def _detector(path: str) -> type[Any]:
    import importlib

    module, name = path.rsplit(".", 1)
    detector: type[Any] = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
    return detector


@caches.lru("scrub.detector_rules", maxsize=1)
def detector_rules() -> tuple[Rule, ...]:
    """The detect-secrets detectors' patterns as rules (imported once per process, when the first
    scrubber is made: detect-secrets imports `requests`)."""
    rules: list[Rule] = []
    for path, group in DETECTORS.items():
        detector = _detector(path)
        binary_auth = path.startswith("basic_auth")
        patterns = LINEAR_DETECTORS.get(path) or tuple((regex.pattern, group, None) for regex in detector.denylist)
        for pattern, secret, cover in patterns:
            regex = re.compile(pattern)
            rules.append(
                Rule(
                    f"detect-secrets {detector.__name__}",
                    regex,
                    secret=secret if secret <= regex.groups else 0,
                    extend=not binary_auth,
                    wraps=not binary_auth,
                    source=f"detect-secrets {detector.__name__}",
                    cover=re.compile(cover) if cover is not None else None,
                )
            )
    keys = _detector(PRIVATE_KEY_DETECTOR)
    for regex in keys.denylist:
        rules.extend(private_key_rules(regex.pattern, f"detect-secrets {keys.__name__}"))
    return tuple(rules)


def default_rules() -> tuple[Rule, ...]:
    return (*STRUCTURAL, *FAMILIES, *VENDOR_FAMILIES, TELEGRAM, WRAPPED_START, *detector_rules())


def user_rule(pattern: str, source: str) -> Rule:
    compiled = re.compile(pattern)
    return Rule("user pattern", compiled, keep_two_groups=compiled.groups >= 2, source=source)
