"""Cassettes: vcrpy's YAML format (version 1), canonical JSON bodies, the recorded-tool endpoint.

Why canonical JSON: vcrpy compares raw body bytes unless the request says JSON, so key order and
whitespace would turn a harmless re-serialisation into a cassette miss. Every body replaylab
writes or matches is `canonical_json` (sorted keys, no spaces, UTF-8).

The recorded-tool endpoint (DESIGN §7): tools of imported sessions are replayed as
`POST <REPLAY_BASE_URL>/tools/<name>` with the canonical JSON arguments; the response body is the
recorded result, `TOOL_ERROR_HEADER` says whether it was an error. `REPLAY_BASE_URL` is also the
base URL pack tools get during replay: the loopback discard port, which is never listened on, so
a miss fails closed, it cannot go live.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import yaml

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import NotAFileError, phrase, read_regular
from replaylab.json_dump import compact_json
from replaylab.yaml_shape import LOADER, Limits, ShapeProblem, check_shape

#: base URL of the tools during replay (unless a run names another): loopback port 9 (discard), where nothing listens
REPLAY_BASE_URL = "http://127.0.0.1:9"
RECORDED_TOOL_PATH = "/tools/"
#: response header of a recorded-tool interaction: "true" when the recorded result was an error
TOOL_ERROR_HEADER = "X-Replaylab-Tool-Error"
CASSETTE_SUFFIX = ".cassette.yaml"
#: a cassette is read whole into memory: a bigger file is refused with its size, not a MemoryError
MAX_CASSETTE_BYTES = 512 << 20
#: what a cassette's YAML may expand to (aliases counted at the size of what they name)
CASSETTE_LIMITS = Limits(values=5_000_000, depth=1_000, kind="a cassette holds recorded HTTP interactions")


def canonical_json(value: Any) -> str:
    """Key-order and whitespace insensitive JSON text (`compact_json` with sorted keys)."""
    return compact_json(value, sort_keys=True)


def cassette_path_for(transcript: str | Path) -> Path:
    """`recordings/x.jsonl` → `recordings/x.cassette.yaml`."""
    path = Path(transcript)
    return path.with_name(path.name.removesuffix(".jsonl") + CASSETTE_SUFFIX)


def recorded_tool_uri(tool: str) -> str:
    return REPLAY_BASE_URL + RECORDED_TOOL_PATH + tool


def interaction(
    method: str,
    uri: str,
    body: str | None,
    status: int,
    response_body: str,
    request_headers: dict[str, str] | None = None,
    response_headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One vcrpy interaction dict (the shape vcrpy's yaml serializer writes)."""
    return {
        "request": {
            "body": body,
            "headers": {k: [v] for k, v in (request_headers or {"Content-Type": "application/json"}).items()},
            "method": method,
            "uri": uri,
        },
        "response": {
            "body": {"string": response_body},
            "headers": {k: [v] for k, v in (response_headers or {"Content-Type": "application/json"}).items()},
            "status": {"code": status, "message": "OK" if status < 400 else "Error"},
        },
    }


def recorded_tool_interaction(
    tool: str, arguments: Any, result: str, *, is_error: bool = False, extra_headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """Interaction for one recorded tool call of an imported session."""
    headers = {"Content-Type": "application/json"}
    headers.update(extra_headers or {})
    response_headers = {"Content-Type": "text/plain; charset=utf-8", TOOL_ERROR_HEADER: "true" if is_error else "false"}
    return interaction(
        "POST",
        recorded_tool_uri(tool),
        canonical_json(arguments),
        200,
        result,
        request_headers=headers,
        response_headers=response_headers,
    )


def write_cassette(path: str | Path, interactions: Iterable[dict[str, Any]]) -> Path:
    """Write a cassette vcrpy can load (refuses to overwrite: recordings are never rewritten).

    The file is created private to the user (0600, as transcripts are: a cassette holds what the
    tools saw), exclusively and never through a symlink planted at its name (`create_private`).

    The file is JSON in YAML's flow style, one interaction per line: YAML 1.1 reads it (vcrpy,
    PyYAML's C and pure-Python loaders give the same data), and `load_cassette` reads it back with
    orjson, much faster than libyaml. Interactions holding anything JSON cannot say exactly
    the way YAML reads it (bytes, floats, non-string or very long keys) are written by PyYAML's
    dumper in vcrpy's usual block style instead."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    items = list(interactions)
    data = _json_flow(items)
    if data is None:
        text = yaml.dump(
            {"interactions": items, "version": 1}, Dumper=_dumper(), allow_unicode=True, sort_keys=False, width=1 << 30
        )
        data = text.encode("utf-8")
    with os.fdopen(create_private(path), "wb") as handle:
        handle.write(data)
    return path


def create_private(path: str | Path) -> int:
    """A new file only its owner can read (0600), opened for writing: never an existing file, and
    never through a symlink (`O_EXCL | O_NOFOLLOW`: a link planted at the name is an error)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags, 0o600)


def load_cassette(path: str | Path) -> list[dict[str, Any]]:
    """The interactions of a cassette file: orjson for the JSON-flow files `write_cassette` makes
    (when the bytes mean the same in JSON and YAML 1.1), PyYAML's C loader for anything else.

    Anything that is not a complete vcrpy cassette is an `InputError` naming the file, the line
    and the field: a corrupt cassette must stop its item with a clear message, never crash the
    replay half-way. vcrpy and `write_cassette` write `version: 1` last, so a file without it
    was cut short."""
    path = Path(path)
    try:
        raw = read_regular(path, MAX_CASSETTE_BYTES)
    except FileNotFoundError:
        raise _cassette_error(path, None, None, "no such cassette file", code="cassette-missing") from None
    except NotAFileError as exc:  # a FIFO would hang the read, a device never end it: refused by stat
        raise _cassette_error(path, None, None, f"{phrase(exc.kind)}; expected a vcrpy cassette file") from None
    except OSError as exc:
        raise _cassette_error(path, None, None, f"cannot be read: {exc.strerror}") from None
    data = _read_json_flow(raw)
    if data is None:
        data = _read_yaml(path, raw)
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise _cassette_error(
            path,
            1,
            "interactions",
            "not a vcrpy cassette: expected a mapping with an 'interactions' list and 'version: 1'",
        )
    if data.get("version") != 1:
        why = (
            "is missing: the file is probably truncated (vcrpy writes it last)"
            if "version" not in data
            else f"is {data['version']!r}; replaylab reads vcrpy cassette format version 1"
        )
        line = _line_of(raw, ("version",)) if "version" in data else raw.rstrip().count(b"\n") + 1
        raise _cassette_error(path, line, "version", f"'version: 1' {why}")
    for index, item in enumerate(data["interactions"]):
        problem = _interaction_problem(item)
        if problem is not None:
            field, message = problem
            raise _cassette_error(
                path, _line_of(raw, ("interactions", index)), f"interactions[{index}]{field}", message
            )
    interactions: list[dict[str, Any]] = data["interactions"]
    return interactions


def _read_yaml(path: Path, raw: bytes) -> Any:
    """The data of a cassette the JSON reading leaves to YAML: its shape checked first (aliases
    expand, nesting, integers: `replaylab.yaml_shape`), then loaded by PyYAML's C loader."""
    try:
        check_shape(raw, CASSETTE_LIMITS)
        return yaml.load(raw, Loader=LOADER)
    except ShapeProblem as problem:
        raise _cassette_error(
            path, problem.line, problem.field, f"{problem.message}; expected a vcrpy cassette"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        if isinstance(exc, yaml.reader.ReaderError):  # a bad byte: no mark, only its position
            line = raw[: exc.position].count(b"\n") + 1
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _cassette_error(path, line, None, f"is not valid YAML ({reason}); expected a vcrpy cassette") from None
    except (ValueError, RecursionError) as exc:  # a value the constructor cannot build
        raise _cassette_error(
            path, None, None, f"holds a value YAML cannot build ({exc}); expected a vcrpy cassette"
        ) from None


def _interaction_problem(item: Any) -> tuple[str, str] | None:
    """(field suffix, what was expected) for an interaction vcrpy could not replay, else None."""
    if not isinstance(item, dict):
        return "", "expected a mapping with 'request' and 'response'"
    request, response = item.get("request"), item.get("response")
    if not isinstance(request, dict):
        return ".request", "expected a mapping with method, uri, body and headers"
    for key in ("method", "uri"):
        if not isinstance(request.get(key), str):
            return f".request.{key}", f"expected a string, got {type(request.get(key)).__name__}"
    for key in ("body", "headers"):  # vcrpy's `Request._from_dict` takes all four (a null body is none)
        if key not in request:
            return f".request.{key}", "missing; vcrpy's request has method, uri, body and headers"
    if not isinstance(request.get("body"), (str, bytes, type(None))):
        return ".request.body", f"expected the request body text, got {type(request.get('body')).__name__}"
    problem = _headers_problem(request.get("headers", {}), ".request.headers", values=_HEADER_SCALARS)
    if problem is not None:
        return problem
    if not isinstance(response, dict):
        return ".response", "expected a mapping with status, headers and body"
    status = response.get("status")
    if not isinstance(status, dict) or type(status.get("code")) is not int or not 100 <= status["code"] <= 999:
        return ".response.status.code", "expected an integer HTTP status code"
    if not isinstance(status.get("message", ""), str):
        return ".response.status.message", f"expected the status text, got {type(status['message']).__name__}"
    body = response.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("string"), (str, bytes)):
        return ".response.body.string", "expected the response body text"
    return _headers_problem(response.get("headers", {}), ".response.headers", values=(str,))


#: what a request header's values may be: vcrpy keeps the first and compares it as it is
_HEADER_SCALARS = (str, int, float, bool)


def _headers_problem(headers: Any, field: str, *, values: tuple[type, ...]) -> tuple[str, str] | None:
    """vcrpy's headers: a mapping of name to a list of values (or one value). A response's are
    strings (vcrpy encodes each into the replayed response); a request's may be any scalar."""
    expected = "expected a mapping of header name to list of values"
    if headers is None:
        return None
    if not isinstance(headers, dict):
        return field, f"{expected}, got {type(headers).__name__}"
    wanted = "a string or a list of strings" if values == (str,) else "a string, a number or a list of them"
    for name, value in headers.items():
        if not isinstance(name, str):
            return f"{field}[{name!r}]", f"header name {name!r} is a {type(name).__name__}; {expected}"
        listed = value if isinstance(value, list) else [value]
        if not listed or not all(isinstance(v, values) for v in listed):
            shown = type(value).__name__ if not isinstance(value, list) else "an empty list" if not value else "a list"
            return f"{field}.{name}", f"expected {wanted}, got {shown} {_short(value)}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _line_of(raw: bytes, key_path: tuple[Any, ...]) -> int | None:
    """1-based line of a key path in a YAML (or JSON-flow) document; composed only on this error path."""
    try:
        node = yaml.compose(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    for part in key_path:
        if isinstance(node, yaml.MappingNode):
            node = next((value for key, value in node.value if key.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            return None
    line: int = node.start_mark.line + 1
    return line


def _cassette_error(
    path: Path, line: int | None, field: str | None, message: str, *, code: str = "cassette-invalid"
) -> InputError:
    return InputError([Diagnostic(code=code, file=str(path), line=line, field=field, message=message)])


def _dumper() -> type[Any]:
    dumper: type[Any] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's when it is built in
    return dumper


# ---------------------------------------------------------------- JSON as YAML 1.1

#: Characters JSON may carry raw inside a string but YAML 1.1 reads differently: NEL, LS, PS are
#: line breaks (folded inside a quoted scalar), DEL / C1 controls / BOM / U+FFFE-F are not
#: printable (PyYAML rejects the file). Written as \uXXXX escapes, they mean the same to both.
_YAML_SPECIAL = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9]|\xef\xbb\xbf|\xef\xbf[\xbe\xbf]")
#: What in JSON text YAML 1.1 would read differently, besides `_YAML_SPECIAL` characters: a tab
#: (JSON whitespace, not always YAML's), the `\/` escape, and escaped surrogates (JSON pairs them,
#: YAML does not). orjson writes none of these; their presence sends a file to the YAML loader.
#: `_yaml_reads_differently` looks for both sets one alternative at a time (the patterns below);
#: `_YAML_SPECIAL` as one alternation serves the writer's escaping.
_ESCAPE_DIFFERENT = re.compile(rb"\\(?:/|u[dD][89a-fA-F])")  # `\/`, `\uD800`-`\uDFFF`
_C1_CONTROL = re.compile(rb"\xc2[\x80-\x9f]")
_LINE_SEPARATOR = re.compile(rb"\xe2\x80[\xa8\xa9]")
_BOM_OR_NONCHARACTER = re.compile(rb"\xef(?:\xbb\xbf|\xbf[\xbe\xbf])")
#: YAML needs an implicit key on one line and within 1024 characters of its spelling
_MAX_KEY = 1000
#: an escape spells one decoded character in at most 12 (`\\ud83d\\ude00`): a key no longer than
#: this decoded is within `_MAX_KEY` however the file spells it
_SHORT_KEY = _MAX_KEY // 12
#: a JSON string as the file spells it, and a key followed by whitespace before its colon
_JSON_STRING = re.compile(rb'"(?:[^"\\]+|\\.)*"')
_SPACED_COLON = re.compile(rb'"[ \t\r\n]+:')


def _json_safe(value: Any) -> bool:
    """True when orjson writes `value` as text that YAML 1.1 reads back as the same value:
    str / int / bool / None / lists / dicts with short string keys. Floats are refused (JSON's
    `1e5` is a string to YAML 1.1), and so is anything orjson would not write (bytes, ...)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(k) is str and len(k) <= _MAX_KEY and _json_safe(v) for k, v in value.items())
    if kind is list:
        return all(_json_safe(v) for v in value)
    return False


def _escape_yaml_special(match: re.Match[bytes]) -> bytes:
    return "\\u{:04x}".format(ord(match.group().decode("utf-8"))).encode("ascii")


def _json_flow(items: list[dict[str, Any]]) -> bytes | None:
    """`{"interactions": [<one interaction per line>], "version": 1}` or None when not JSON-safe."""
    if not _json_safe(items):
        return None
    try:
        lines = [orjson.dumps(item) for item in items]
    except TypeError:  # e.g. a lone surrogate in a string
        return None
    body = b",\n".join(lines)
    body = _YAML_SPECIAL.sub(_escape_yaml_special, body)
    return b'{"interactions": [\n' + body + (b"\n" if lines else b"") + b'], "version": 1}\n'


def _read_json_flow(raw: bytes) -> Any:
    """The data of a JSON-flow cassette, or None when the file is not JSON or its bytes could mean
    something else to YAML 1.1 (then the YAML loader decides). The byte checks come first: they
    are cheaper than parsing and a file they refuse needs no JSON parse."""
    if not raw.lstrip()[:1] == b"{" or _yaml_reads_differently(raw):
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    safety = _loaded_json_safe(data)
    if safety is _UNSAFE:
        return None
    if (safety is _LONG_KEYS or _may_space_a_key(raw)) and not _keys_spelled_within_bound(raw):
        return None
    return data


def _may_space_a_key(raw: bytes) -> bool:
    """Whether whitespace may stand between a key and its colon (orjson writes none): YAML
    needs them on one line and within its bound, so such a file has its keys measured."""
    return (b'" ' in raw or b'"\n' in raw or b'"\r' in raw) and _SPACED_COLON.search(raw) is not None


def _keys_spelled_within_bound(raw: bytes) -> bool:
    """True when every key of the (valid JSON) document is spelled, from its opening quote to
    its colon, on one line and within `_MAX_KEY` characters. YAML bounds an implicit key by its
    spelling in the file, so a key the reader decodes short but the file spells long (escapes)
    or splits over lines is one YAML refuses or reads differently: such a file goes to YAML."""
    size = len(raw)
    for match in _JSON_STRING.finditer(raw):
        end = match.end()
        while end < size and raw[end] in b" \t\r\n":
            end += 1
        if end < size and raw[end] == 0x3A:  # ":" — the string was a key
            spelled = raw[match.start() : end]
            if b"\n" in spelled or b"\r" in spelled or len(spelled.decode("utf-8", "replace")) > _MAX_KEY:
                return False
    return True


def _yaml_reads_differently(raw: bytes) -> bool:
    """True when `raw` holds a `_YAML_SPECIAL` character or a tab, `\\/` or escaped surrogate.

    Same answer as searching the two alternations with `re`, and much faster: `re` has no literal
    prefilter for an alternation and tries every alternative at every byte. Here single bytes are
    found by `bytes in` (memchr), and each longer sequence only when its first byte occurs at all,
    by a pattern that starts with that literal byte (which `re` skips to in a tight loop). The
    multi-byte characters all start with a non-ASCII byte, so ASCII-only text (one C check) holds
    none of them."""
    if b"\t" in raw or b"\x7f" in raw or (b"\\" in raw and _ESCAPE_DIFFERENT.search(raw) is not None):
        return True
    if raw.isascii():
        return False
    return (
        (b"\xc2" in raw and _C1_CONTROL.search(raw) is not None)
        or (b"\xe2" in raw and _LINE_SEPARATOR.search(raw) is not None)
        or (b"\xef" in raw and _BOM_OR_NONCHARACTER.search(raw) is not None)
    )


#: what `_loaded_json_safe` finds: data YAML may read differently; data that reads the same; the
#: same, but with a key long enough that its spelling in the file may pass YAML's bound
_UNSAFE, _SAFE, _LONG_KEYS = "unsafe", "safe", "long keys"


def _loaded_json_safe(data: Any) -> str:
    """`_json_safe` for what `orjson.loads` returns, faster: that data holds only dict, list,
    str, int, float, bool and None, with str keys, and never a cycle, so only floats and keys over
    `_MAX_KEY` need finding (and keys over `_SHORT_KEY`, whose spelling is measured then). An
    explicit stack (no recursion) also takes any depth orjson reads (1,024), where a recursive
    walk would hit Python's recursion limit."""
    stack = [data]
    pop, push = stack.pop, stack.extend
    _dict, _list, _float = dict, list, float  # locals: this loop visits every value of the file
    found = _SAFE
    while stack:
        node = pop()
        kind = type(node)
        if kind is _dict:
            for key in node:
                if len(key) > _SHORT_KEY:
                    if len(key) > _MAX_KEY:
                        return _UNSAFE
                    found = _LONG_KEYS
            push(node.values())
        elif kind is _list:
            push(node)
        elif kind is _float:
            return _UNSAFE
    return found
