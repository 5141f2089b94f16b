"""HTTP clients of the read-only shell grammar: `curl`, `wget`, HTTPie (`http`, `https`) and xh read
when they only GET a web page or API to standard output.

A GET is HTTP's safe method, and agents fetch with it all the time (`curl -s
"wttr.in/London?format=3"`, `curl -s localhost:3000/health | jq .`). Taking every such fetch for a
write keeps its output in every safeguard window and calls each fetch the compacted run repeats a
side effect. Every other request changes something or writes a file, and stays mutating:

* a method other than GET or HEAD (`-X POST`), a body or a form (`-d`, `--json`, `-F`, `-T`;
  wget's `--post-data`, `--body-file`), except curl's `-G`, which sends `-d` as the query, and
  curl's one body written out on the command line when it only asks (`request_bodies`: a GraphQL
  query, JSON-RPC methods that read, a search API's query), sent as a POST or as the GET it is;
* a file written: `-o`/`-O`/`--output-dir`/`-D`/`-c` (curl) other than standard output or
  `/dev/null`, wget without `-O -` or `--spider` (it saves the download), wget's log files;
* options read from a file (`-K`, wget's `-e`/`-i`), and any option this module does not list;
* a scheme other than http(s) or `file` (curl sends mail with `smtp://` and guesses it from a
  host named `smtp.`…), or a URL whose path or query names a change: a verb that changes
  something wherever it stands (`/sendMessage`, `?action=delete`), or a path segment that starts
  with a verb (`/orders/7/close`), as a tool's name would be read (`verbs.py`), or a GraphQL
  `mutation` in the query; a header that overrides the method (`X-HTTP-Method-Override: DELETE`);
* a word only the running shell knows, except `$NAME` / `${NAME}` inside a double-quoted URL
  whose scheme and host are written out: such a word is one URL, never an option, and the
  variable's name is read like the rest of the URL (`"…/bot$TOKEN/getUpdates"` reads).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from replaylab.safety.request_bodies import body_asks
from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import PLAIN_READ, Inner, Word, one_word, read
from replaylab.safety.verb_words import CHANGE_VERBS, CHANGE_VERBS_IN_VERB_POSITION

#: where a request's output may go without writing a file
_NO_FILE = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})
_READ_METHODS = frozenset({"GET", "HEAD"})
#: options that only print about the client itself
_ABOUT = frozenset({"--version", "--help", "--manual"})
_SCHEMES = frozenset({"http", "https", "file"})
#: host prefixes from which curl guesses a protocol other than HTTP (`smtp.example.com`)
_GUESSED_SCHEMES = ("ftp.", "dict.", "ldap.", "imap.", "smtp.", "pop3.")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
#: a double-quoted URL with its scheme and host written out, expansions only after them (what a
#: `$(…)` in it runs is checked as a command of its own)
_QUOTED_URL = re.compile(r'"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://[^"$`\\/]+(?:[/?][^"`\\]*)?)"')
#: an option's value that only the running shell knows
_UNKNOWN = "\0"
METHOD_OVERRIDE = re.compile(r"x-http-method|method-override", re.IGNORECASE)
_URL_WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class _Options:
    """One client's options: flags, options that take a value, and those refused, with why."""

    flags: frozenset[str]
    values: frozenset[str]
    #: short options, one letter each, that take a value (the rest of a cluster, or the next word)
    short_values: str
    short_flags: str
    #: options whose `--name=value` spelling the client accepts (wget does, curl does not)
    equals: bool
    #: options that change something or write, and what they do
    refused: dict[str, str]


_CURL = _Options(
    flags=frozenset(
        {"--silent", "--show-error", "--fail", "--fail-with-body", "--fail-early", "--location", "--include"}
        | {"--head", "--verbose", "--insecure", "--globoff", "--compressed", "--no-buffer", "--progress-bar"}
        | {"--disable", "--ipv4", "--ipv6", "--http1.0", "--http1.1", "--http2", "--http2-prior-knowledge"}
        | {"--http3", "--get", "--raw", "--no-progress-meter", "--location-trusted", "--no-keepalive"}
        | {"--path-as-is", "--digest", "--basic", "--anyauth", "--ntlm", "--negotiate", "--netrc"}
        | {"--netrc-optional", "--retry-all-errors", "--retry-connrefused", "--tr-encoding", "--ssl-reqd"}
        | {"--tlsv1", "--tlsv1.0", "--tlsv1.1", "--tlsv1.2", "--tlsv1.3", "--no-sessionid", "--no-alpn"}
        | {"--parallel", "--no-progress", "--styled-output", "--no-styled-output", "--next", "--junk-session-cookies"}
        | _ABOUT
    ),
    values=frozenset(
        {"--header", "--user-agent", "--referer", "--user", "--max-time", "--connect-timeout", "--write-out"}
        | {"--proxy", "--proxy-user", "--retry", "--retry-delay", "--retry-max-time", "--range", "--cookie"}
        | {"--resolve", "--connect-to", "--max-redirs", "--cacert", "--capath", "--cert", "--key", "--cert-type"}
        | {"--key-type", "--pass", "--limit-rate", "--speed-time", "--speed-limit", "--interface", "--url"}
        | {"--dns-servers", "--oauth2-bearer", "--aws-sigv4", "--proto", "--proto-redir", "--max-filesize"}
        | {"--expect100-timeout", "--keepalive-time", "--ciphers", "--time-cond", "--noproxy", "--unix-socket"}
        | {"--url-query", "--request", "--output", "--dump-header", "--stderr", "--data", "--data-ascii"}
        | {"--data-raw", "--data-binary", "--data-urlencode", "--parallel-max", "--json"}
    ),
    short_values="HAeumxUrbwyYEzXoDd",
    short_flags="sSfLiIvkgN#q46G0ZVh",
    equals=False,
    refused={
        "--form": "sends a form (a POST)",
        "--form-string": "sends a form (a POST)",
        "--upload-file": "uploads a file",
        "--remote-name": "writes a file",
        "--remote-name-all": "writes files",
        "--remote-header-name": "writes a file",
        "--output-dir": "writes files",
        "--create-dirs": "creates folders",
        "--cookie-jar": "writes a file",
        "--etag-save": "writes a file",
        "--hsts": "writes a file",
        "--alt-svc": "writes a file",
        "--trace": "writes a file",
        "--trace-ascii": "writes a file",
        "--libcurl": "writes a file",
        "--config": "reads its options from a file the command does not show",
        "--mail-rcpt": "sends mail",
        "--mail-from": "sends mail",
    },
)
_CURL_SHORT_LONG = {
    "H": "--header", "A": "--user-agent", "e": "--referer", "u": "--user", "m": "--max-time", "x": "--proxy",
    "U": "--proxy-user", "r": "--range", "b": "--cookie", "w": "--write-out", "y": "--speed-time",
    "Y": "--speed-limit", "E": "--cert", "z": "--time-cond", "X": "--request", "o": "--output",
    "D": "--dump-header", "d": "--data", "G": "--get", "I": "--head", "V": "--version", "h": "--help",
    "F": "--form", "T": "--upload-file", "O": "--remote-name", "J": "--remote-header-name", "c": "--cookie-jar",
    "K": "--config",
}  # fmt: skip
_CURL_DATA = frozenset({"--data", "--data-ascii", "--data-raw", "--data-binary", "--data-urlencode", "--json"})
#: the data options whose value is the body as written, unless it starts with `@` (a file's); the
#: rest encode it
_CURL_LITERAL_BODY = {"--data": True, "--data-ascii": True, "--data-binary": True, "--json": True, "--data-raw": False}
#: options whose value decides whether the request reads: an expansion there is refused
_DECIDING = _CURL_DATA | {"--request", "--output", "--dump-header", "--stderr", "--write-out", "--url"}
_DECIDING |= {"--method", "--output-document"}

_WGET = _Options(
    flags=frozenset(
        {"--quiet", "--no-verbose", "--verbose", "--server-response", "--spider", "--inet4-only", "--inet6-only"}
        | {"--no-check-certificate", "--no-cache", "--no-cookies", "--no-proxy", "--content-on-error", "-nv"}
        | _ABOUT
    ),
    values=frozenset(
        {"--output-document", "--timeout", "--tries", "--user-agent", "--header", "--user", "--password"}
        | {"--max-redirect", "--wait", "--read-timeout", "--connect-timeout", "--dns-timeout", "--referer"}
        | {"--method", "--limit-rate"}
    ),
    short_values="OTtUw",
    short_flags="qvS46Vh",
    equals=True,
    refused={
        "--post-data": "sends a body (a POST)",
        "--post-file": "sends a body (a POST)",
        "--body-data": "sends a body",
        "--body-file": "sends a body",
        "--output-file": "writes its log to a file",
        "--append-output": "writes its log to a file",
        "--execute": "runs wgetrc commands the command holds",
        "--input-file": "reads its URLs from a file the command does not show",
        "--recursive": "saves pages to files",
        "--mirror": "saves pages to files",
        "--continue": "writes a file",
    },
)
_WGET_SHORT_LONG = {
    "O": "--output-document", "U": "--user-agent", "S": "--server-response", "q": "--quiet", "V": "--version",
    "h": "--help", "o": "--output-file", "a": "--append-output", "e": "--execute", "i": "--input-file",
    "r": "--recursive", "m": "--mirror", "c": "--continue",
}  # fmt: skip


@dataclass
class _Request:
    """What one command line asks for, as far as reading it went."""

    urls: list[str]
    options: list[tuple[str, str | None]]


def _parse(name: str, args: list[Word], spec: _Options, short_long: dict[str, str]) -> _Request | ShellVerdict:
    """The URLs and the options (long names, with their values); a verdict when a word is an
    option the module does not list, or one only the running shell knows where an option could be."""
    urls: list[str] = []
    options: list[tuple[str, str | None]] = []
    index = 0
    operands_only = False
    while index < len(args):
        current = args[index]
        value = current.value
        index += 1
        if value is None:
            quoted = _quoted_url(current.text)
            if quoted is None:
                return ShellVerdict(
                    False, f"`{name}` with a word known only when the shell runs (it could be an option that writes)"
                )
            urls.append(quoted)
            continue
        if operands_only or not value.startswith("-") or value == "-":
            urls.append(value)
            continue
        if value == "--":
            operands_only = True
            continue
        if value.startswith("--") or (value in spec.flags | spec.values):
            option, _, attached = value.partition("=") if spec.equals else (value, "", "")
            if option in spec.flags and not attached:
                options.append((option, None))
                continue
            if option not in spec.values:
                return _refused(name, option, value, spec)
            if attached or "=" in value:
                options.append((option, attached))
                continue
            taken = _value(args, index, name, value)
            if isinstance(taken, ShellVerdict):
                return taken
            options.append((option, taken))
            index += 1
            continue
        for at, letter in enumerate(value[1:], start=1):
            if letter in spec.short_values:
                rest = value[at + 1 :]
                long = short_long.get(letter, f"-{letter}")
                if rest:
                    options.append((long, rest))
                else:
                    taken = _value(args, index, name, f"-{letter}")
                    if isinstance(taken, ShellVerdict):
                        return taken
                    options.append((long, taken))
                    index += 1
                break
            if letter not in spec.short_flags:
                return _refused(name, short_long.get(letter, f"-{letter}"), f"-{letter}", spec)
            options.append((short_long.get(letter, f"-{letter}"), None))
    for option, given in options:
        if given == _UNKNOWN and option in _DECIDING:
            return ShellVerdict(False, f"`{word(name)} {option}` with a value known only when the shell runs")
    return _Request(urls, options)


def _refused(name: str, option: str, spelled: str, spec: _Options) -> ShellVerdict:
    what = spec.refused.get(option)
    if what is None:
        return ShellVerdict(False, f"`{word(name)} {word(spelled)}` is an option the grammar does not read")
    return ShellVerdict(False, f"`{word(name)} {word(spelled)}` {what}")


def _value(args: list[Word], index: int, name: str, spelled: str) -> str | ShellVerdict:
    """The value of an option: the next word; an expansion only as one double-quoted word (`-H
    "Authorization: Bearer $TOKEN"`), which the option takes whole, as `_UNKNOWN`."""
    taken = args[index] if index < len(args) else None
    if taken is not None and taken.value is not None:
        return taken.value
    if taken is not None and one_word(taken):
        return _UNKNOWN
    return ShellVerdict(False, f"`{word(name)} {word(spelled)}` without a value it can read")


def _quoted_url(text: str) -> str | None:
    """A double-quoted URL with scheme and host written out, expansions only after them: its text,
    the variables' names read for verbs like the rest."""
    match = _QUOTED_URL.fullmatch(text)
    if match is None:
        return None
    return match.group("url")


def url_change(url: str, guess: bool) -> str | None:
    """Why fetching `url` could change something (a scheme other than http(s) / `file`, a verb in
    its path or query), or None."""
    scheme = _SCHEME.match(url)
    if scheme is not None:
        if scheme.group(1).lower() not in _SCHEMES:
            return f"the `{word(scheme.group(1))}` URL `{word(url)}` is not a web page"
        rest = url[scheme.end() :]
    else:
        if guess and url.lower().startswith(_GUESSED_SCHEMES):
            return f"curl reads `{word(url)}` as a protocol other than HTTP"
        rest = url
    path, _, query = rest.partition("?")
    segments = path.split("/")[1:]
    for segment in segments:
        words = [w.lower() for w in _URL_WORDS.split(segment) if w]
        if words and (words[0] in CHANGE_VERBS_IN_VERB_POSITION or any(w in CHANGE_VERBS for w in words)):
            return f"the URL `{word(url)}` names `{word(segment)}`, which changes something"
    for found in (w.lower() for w in _URL_WORDS.split(query) if w):
        if found in CHANGE_VERBS or found == "mutation":  # a GraphQL mutation sent as a GET
            return f"the URL `{word(url)}` asks `{word(found)}`, which changes something"
    return None


def _request(name: str, args: list[Word], spec: _Options, short_long: dict[str, str]) -> _Request | ShellVerdict:
    """The command line read (`_parse`), refused when a header asks the server to take the GET
    for another method."""
    request = _parse(name, args, spec, short_long)
    if isinstance(request, ShellVerdict):
        return request
    for option, value in request.options:
        if option == "--header" and METHOD_OVERRIDE.search(value or ""):
            return ShellVerdict(False, f"`{name} --header {word(value or '')}` asks for another method")
        if option == "--header" and (value or "").startswith("@") and spec is _CURL:
            return ShellVerdict(False, f"`{name} --header @…` reads its headers from a file the command does not show")
    return request


def _curl(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    request = _request(name, args, _CURL, _CURL_SHORT_LONG)
    if isinstance(request, ShellVerdict):
        return request
    as_query = any(option == "--get" for option, _ in request.options)
    if any(option == "--next" for option, _ in request.options) and any(
        option in _CURL_DATA or option in ("--get", "--request") for option, _ in request.options
    ):
        # each transfer after `--next` has options of its own (`-G` before it GETs nothing after it)
        return ShellVerdict(False, "`curl --next` with a body, `-G` or `-X`: each transfer has options of its own")
    methods: list[str] = []  # every one named, whichever curl takes
    bodies: list[tuple[str, str]] = []
    for option, value in request.options:
        if option == "--request":
            methods.append((value or "").upper())
        if option in _CURL_DATA and (option == "--json" or not as_query):
            bodies.append((option, value or ""))
        elif option in _CURL_DATA:
            request.urls.append("/?" + (value or ""))  # `-G`: the data is the query, read for verbs
        if option in ("--output", "--dump-header", "--stderr") and value not in _NO_FILE:
            return ShellVerdict(False, f"`curl {option} {word(value or '')}` writes a file")
        if option == "--write-out" and "%output{" in (value or ""):
            return ShellVerdict(False, "`curl -w %output{…}` writes a file")
        if option == "--url":
            request.urls.append(value or "")
        if option == "--url-query":
            if "@" in (value or ""):
                return ShellVerdict(False, "`curl --url-query …@file` reads the query from a file")
            request.urls.append("/?" + (value or "").lstrip("+"))  # read for verbs, as `-G`'s data
    changing = [method for method in methods if method not in _READ_METHODS]
    asks = _body_asks(bodies, request.urls) if bodies else None
    if changing and (asks is None or changing != ["POST"] * len(changing)):
        return ShellVerdict(False, f"`curl -X {word(changing[0])}` sends a request that changes something")
    if not bodies:
        return _fetches(name, request, guess=True)
    if asks is None:
        return ShellVerdict(False, f"`curl {bodies[0][0]}` sends a body (a POST)")
    return _fetches(name, request, guess=True, what=f"sending only {asks}")


def _body_asks(bodies: list[tuple[str, str]], urls: list[str]) -> str | None:
    """What a request's one body only asks for (`request_bodies`), or None: several bodies are
    joined with `&`, a file's body is not on the command line."""
    if len(bodies) != 1:
        return None
    option, body = bodies[0]
    literal = _CURL_LITERAL_BODY.get(option)
    if literal is None or body == _UNKNOWN or (literal and body.startswith("@")):
        return None
    return body_asks(body, urls)


def _wget(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    request = _request(name, args, _WGET, _WGET_SHORT_LONG)
    if isinstance(request, ShellVerdict):
        return request
    if not request.urls:
        return _fetches(name, request, guess=False)
    given = dict(request.options)
    method = given.get("--method")
    if method is not None and method.upper() not in _READ_METHODS:
        return ShellVerdict(False, f"`wget --method {word(method)}` sends a request that changes something")
    if "--spider" not in given and given.get("--output-document") not in _NO_FILE:
        return ShellVerdict(False, "`wget` saves what it downloads to a file")
    return _fetches(name, request, guess=False)


def _fetches(name: str, request: _Request, guess: bool, what: str = "GET") -> ShellVerdict:
    if not request.urls:
        about = [option for option, _ in request.options if option in _ABOUT]
        if about and len(about) == len(request.options):
            return read(f"{name} {about[0]}")
        return ShellVerdict(False, f"`{name}` without a URL it can read")
    for url in request.urls:
        change = url_change(url, guess)
        if change is not None:
            return ShellVerdict(False, f"`{name}`: {change}")
    if what == "GET":
        return read(f"{name} (GET)")
    return ShellVerdict(True, f"{PLAIN_READ}`{word(name)}` {what}")


_HTTPIE = _Options(
    flags=frozenset(
        {"--json", "--form", "--multipart", "--compress", "--chunked", "--sorted", "--unsorted", "--headers", "--body"}
        | {"--meta", "--verbose", "--all", "--stream", "--quiet", "--ignore-netrc", "--follow", "--check-status"}
        | {"--path-as-is", "--offline", "--ignore-stdin", "--debug", "--traceback", "--https", "--native-tls"}
        | {"--curl", "--curl-long", "-4", "-6"}
        | _ABOUT
    ),
    values=frozenset(
        {"--pretty", "--style", "--print", "--history-print", "--response-charset", "--response-mime", "--auth"}
        | {"--format-options", "--auth-type", "--bearer", "--proxy", "--max-redirects", "--max-headers", "--timeout"}
        | {"--verify", "--ssl", "--ciphers", "--cert", "--cert-key", "--cert-key-pass", "--default-scheme"}
        | {"--session-read-only", "--http-version", "--resolve", "--interface", "--boundary", "--output"}
    ),
    short_values="psPaAo",
    short_flags="jfmxhbvqSFI46",
    equals=True,
    refused={
        "--download": "saves what it downloads to a file",
        "--continue": "writes a file",
        "--session": "saves its session (cookies, headers) to a file",
        "--raw": "sends a body (a POST)",
    },
)
_HTTPIE_SHORT_LONG = {
    "j": "--json", "f": "--form", "m": "--meta", "x": "--compress", "h": "--headers", "b": "--body", "v": "--verbose",
    "q": "--quiet", "S": "--stream", "F": "--follow", "I": "--ignore-stdin", "d": "--download", "c": "--continue",
    "p": "--print", "s": "--style", "P": "--history-print", "a": "--auth", "A": "--auth-type", "o": "--output",
}  # fmt: skip
#: a first word HTTPie takes for the method, when a URL follows it
_HTTPIE_METHOD = re.compile(r"[A-Za-z]+")
#: HTTPie's request-item separators, the longest first where two start at one place
_ITEM_SEPARATORS = (":=@", "=@", ":=", "==", "=", "@", ":", ";")
_ITEM_KINDS = {":": "header", ";": "header", "==": "query"}  # every other separator sends a body


def _item(word_: str) -> tuple[str, str, str] | None:
    """(kind, name, value) of an HTTPie request item: its first unescaped separator decides
    (`a==b` a query, `a:b` a header, `a=b` / `a:=1` / `a@file` a body); None without one."""
    at = 0
    while at < len(word_):
        if word_[at] == "\\":
            at += 2
            continue
        for separator in _ITEM_SEPARATORS:
            if word_.startswith(separator, at):
                return _ITEM_KINDS.get(separator, "data"), word_[:at], word_[at + len(separator) :]
        at += 1
    return None


def _httpie(name: str, args: list[Word], inner: Inner) -> ShellVerdict:
    """HTTPie (`http`, `https`) and xh: `[METHOD] URL [ITEM ...]`. Without a method both send a
    POST when the request has a body, and they read one from standard input whenever it is not a
    terminal, as in an agent's shell (HTTPie's `has_stdin_data`), unless told `--ignore-stdin`."""
    request = _request(name, args, _HTTPIE, _HTTPIE_SHORT_LONG)
    if isinstance(request, ShellVerdict):
        return request
    given = dict(request.options)
    words = list(request.urls)
    if not words:
        return _fetches(name, request, guess=False)
    method: str | None = None
    if len(words) > 1 and _HTTPIE_METHOD.fullmatch(words[0]):
        method, words = words[0].upper(), words[1:]
    url, items = words[0], words[1:]
    if "--offline" in given or "--curl" in given or "--curl-long" in given:
        return read(f"{name} --offline")  # the request is built and printed, never sent
    if method is not None and method not in _READ_METHODS:
        return ShellVerdict(False, f"`{word(name)} {word(method)}` sends a request that changes something")
    read_items = [_item(item) for item in items]
    for item, found in zip(items, read_items):
        if found is None or found[0] == "data":
            return ShellVerdict(False, f"`{word(name)} … {word(item)}`: a request item that sends a body")
        if found[0] == "header" and METHOD_OVERRIDE.search(found[1]):
            return ShellVerdict(False, f"`{word(name)} {word(item)}` asks for another method")
    if method is None and "--ignore-stdin" not in given:
        return ShellVerdict(
            False,
            f"`{word(name)}` with no method sends its standard input as the body of a POST when that is not a "
            "terminal, as in an agent's shell (name GET, or pass --ignore-stdin)",
        )
    output = given.get("--output")
    if output is not None and output not in _NO_FILE:
        return ShellVerdict(False, f"`{word(name)} --output {word(output)}` writes a file")
    queries = [f"{found[1]}={found[2]}" for found in read_items if found is not None and found[0] == "query"]
    return _fetches(name, _Request([url + ("?" + "&".join(queries) if queries else "")], request.options), guess=False)


#: the HTTP clients, by the name they run as
HTTP_CLIENTS: dict[str, Callable[[str, list[Word], Inner], ShellVerdict]] = {
    "curl": _curl,
    "wget": _wget,
    "http": _httpie,
    "https": _httpie,
    "xh": _httpie,
    "xhs": _httpie,
}
