"""What a redirection opens, and a `$` the parser reads otherwise than bash, beyond a file
written (`shell_grammar`).

* bash's `/dev/tcp/…` / `/dev/udp/…` open a socket, in either direction;
* `{a[x]}>…` stores the descriptor bash picks in a subscript it evaluates (`x='b[$(cmd)]'`);
* a file opened on a descriptor other than 0 (`3<f`, `1<f`, `{v}<f`) can be written: Linux reopens
  the file behind `/dev/stdout` or `/dev/fd/N` for writing, whatever mode the shell opened it in
  (`echo x 1<f >/dev/stdout` overwrites `f`); `>&0` makes the input, a file or a socket, an output;
* in `"$ $(cmd)"` the parser takes `$ $` for one expansion and `(cmd)` for text, while bash prints
  `$ ` and runs `cmd`;
* the parser leaves as text a backtick inside `${x:-…}` (`${x:-`cmd`}`), a `$(cmd)` between single
  quotes that bash does not take as quotes (`"${x:-'$(cmd)'}"`), and a `$⏎(cmd)` that bash joins
  first: bash runs each (`misread_expansion`).
"""

from __future__ import annotations

import re
from typing import Any

from replaylab.safety.shell import ShellVerdict, word

#: bash's own network paths: a redirection from or to one opens a TCP or UDP socket, read and write
_NETWORK_PATH = re.compile(r"/dev/(?:tcp|udp)/")
#: `{name}` (or `{name[i]}`) just before a redirection: a descriptor bash picks (10 and up), stored
#: in `name`; the parser reads it as the command's last word
_NAMED_DESCRIPTOR = re.compile(rb"\{[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\}$")


def opened_verdict(
    operator: str, descriptor: str | None, target: str | None, destination: Any = None, source: bytes = b""
) -> ShellVerdict | None:
    """What a redirection `[descriptor]operator target` opens that writes, or None; `destination`,
    the target's node in `source`, tells what an expansion in it could open."""
    if target is not None and _NETWORK_PATH.match(target):
        # `cat </dev/tcp/host/port` connects; `… 0</dev/tcp/host/port 1>&0` sends the output
        return ShellVerdict(False, f"`{operator}` redirection opens a network connection (`{word(target)}`)")
    if target is None and operator == "<" and destination is not None and _may_name_socket(destination, source):
        # `x=/dev/tcp/127.0.0.1/6379; cat <"$x"`, `< "$d/6379"`, `< /dev/{t..t}cp/…`, `< $'/dev/tcp/…'`
        shown = source[destination.start_byte : destination.end_byte].decode("utf-8", "replace")
        return ShellVerdict(False, f"`<` redirection from `{word(shown)}`, which may be bash's `/dev/tcp/…` (a socket)")
    if descriptor is not None and descriptor.startswith("{") and "[" in descriptor:
        # `{a[x]}>/dev/null`: bash evaluates the subscript, and x's value with it (`b[$(cmd)]`)
        return ShellVerdict(False, f"`{word(descriptor)}{operator}`: bash evaluates the subscript it stores in")
    if target is not None and target.isascii() and target.isdigit():
        target = str(int(target))  # `>&00` is `>&0`, `3<&01` is `3<&1`
    copies_an_output = operator == "<&" and target in ("1", "2")  # `3<&1`: stdout again
    if operator in ("<", "<&") and descriptor not in (None, "0") and not copies_an_output:
        # `3<f >/dev/fd/3`, `1<f >/dev/stdout`, `{v}<f >/dev/fd/10`
        return ShellVerdict(
            False, f"`{descriptor}{operator}` opens a file on a descriptor that `/dev/fd/…` reopens to write"
        )
    if operator in (">&", "<&") and target == "0" and descriptor != "0":
        # `<f >&0 >/dev/stdout`, `0</dev/tcp/… 1>&0`: the output goes where the input comes from
        return ShellVerdict(False, f"`{operator}0` makes standard input, a file or a socket, an output")
    return None


def descriptor(redirect: Any, source: bytes) -> str | None:
    """The descriptor a redirection names (`3<f`: `3`; `{v}<f`: `{v}`, which the parser reads as
    the command's last word), None when it uses the operator's own (`<f` is 0, `>f` is 1)."""
    given = next((c for c in redirect.children if c.type == "file_descriptor"), None)
    if given is not None:
        return source[given.start_byte : given.end_byte].decode("utf-8", "replace")
    start = redirect.start_byte
    named = _NAMED_DESCRIPTOR.search(source[max(0, start - 256) : start])
    return named.group().decode("utf-8", "replace") if named is not None else None


#: what bash takes as a `$NAME` expansion: a name, one digit, or one special parameter
_SIMPLE_EXPANSION = re.compile(rb"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]|[-*@#?$!_])")


#: nodes whose text the parser left as text: bash may still find a backtick or `$(` in them
_TEXT_LEAVES = frozenset({"word", "raw_string", "regex", "extglob_pattern"})
#: what a `'…'` inside of is no quote to bash (`"${x:-'$(cmd)'}"`, an unquoted here-document re-read
#: as a string), and what it is one inside of again
_DOUBLE_QUOTED = frozenset({"string", "translated_string", "heredoc_body"})
_COMMANDS = frozenset({"command_substitution", "process_substitution", "program"})


def misread_expansion(root: Any, source: bytes) -> ShellVerdict | None:
    r"""Text bash expands that the parser reads otherwise, in one walk of the tree:

    * a `$NAME` read across what bash keeps apart: in `"$ $(cmd)"` the parser takes `$ $` for one
      expansion and `(cmd)` for text, while bash prints `$ ` and runs `cmd`;
    * a backtick or `$(` / `${` / `$[` the parser left in a word's text: `${x:-`cmd`}` (a backtick
      in a parameter expansion's word), `"${x:-'$(cmd)'}"` (single quotes inside double quotes
      quote nothing), `"$\⏎(cmd)"` (bash drops a backslash-newline first)."""
    cursor = root.walk()
    visited = False
    while True:
        node = cursor.node
        if not visited:
            found = _lone_dollar(node, source) or _hidden(node, source)
            if found is not None:
                return found
            if cursor.goto_first_child():
                continue
        if cursor.goto_next_sibling():
            visited = False
            continue
        if not cursor.goto_parent():
            return None
        visited = True


def _lone_dollar(node: Any, source: bytes) -> ShellVerdict | None:
    if node.type != "simple_expansion":
        return None
    # the node may start at the blanks before its `$`; `"$ b"` (a `$`, then the word) is harmless
    text = source[node.start_byte : node.end_byte].lstrip()
    if _SIMPLE_EXPANSION.fullmatch(text) or b"$" not in text[1:]:
        return None
    shown = text.decode("utf-8", "replace")
    return ShellVerdict(False, f"`{word(shown)}`: the parser reads a lone `$` with what follows it")


def _hidden(node: Any, source: bytes) -> ShellVerdict | None:
    if not _expands(_text_of(node, source)):
        return None
    shown = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
    return ShellVerdict(False, f"`{word(shown)}`: bash expands what the parser reads as text")


def _text_of(node: Any, source: bytes) -> bytes:
    r"""The text the parser left unexpanded in `node`: a leaf's (a `'…'` only where it is no quote);
    a double-quoted string's parts and the `$` signs it keeps apart from them (`"$\⏎(cmd)"`), each
    expansion in it standing as `_`."""
    if node.type in ("string", "translated_string"):
        parts = node.children[1:-1] if node.type == "string" else node.children
        return b"".join(
            source[c.start_byte : c.end_byte] if c.type == "string_content" or not c.is_named else b"_" for c in parts
        )
    if node.type not in _TEXT_LEAVES or node.named_children:
        return b""
    if node.type == "raw_string" and not _double_quoted(node):
        return b""
    return source[node.start_byte : node.end_byte]


def _double_quoted(node: Any) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in _COMMANDS:
        if parent.type in _DOUBLE_QUOTED:
            return True
        parent = parent.parent
    return False


def _expands(text: bytes) -> bool:
    """Whether `text`, with its backslash-newlines dropped, holds an unescaped backtick, or an
    unescaped `$` before `(`, `{` or `[`."""
    chars: list[tuple[int, bool]] = []  # each character left, and whether a backslash escapes it
    at = 0
    while at < len(text):
        if text[at] == 0x5C and at + 1 < len(text):  # a backslash
            if text[at + 1] != 0x0A:
                chars.append((text[at + 1], True))
            at += 2
            continue
        chars.append((text[at], False))
        at += 1
    for index, (char, escaped) in enumerate(chars):
        if escaped:
            continue
        if char == 0x60:  # a backtick
            return True
        if char == 0x24 and index + 1 < len(chars) and not chars[index + 1][1] and chars[index + 1][0] in b"({[":
            return True
    return False


#: the literal parts of a redirection's target (an expansion, an ANSI-C string, a brace: None)
_LITERAL_PARTS = frozenset({"word", "raw_string", "string_content", "number"})
#: what a service name or port number of `/dev/tcp/HOST/PORT` is made of (getaddrinfo, /etc/services)
_SERVICE = re.compile(r"[A-Za-z0-9_-]*")


def _may_name_socket(destination: Any, source: bytes) -> bool:
    """Whether a target known only when bash runs could expand to `/dev/tcp/HOST/PORT` or
    `/dev/udp/…` (bash matches the expanded word against `/dev/tcp/*/*`): not when its known start
    leaves that prefix (`./$f`, `data/$f`), nor when its known end after the last expansion holds,
    after its last `/`, a character no port or service name has (`"${f}.txt"`)."""
    parts: list[str | None] = []
    stack = [destination]
    while stack:
        node = stack.pop()
        if node.type in ("concatenation", "string"):
            stack.extend(reversed([c for c in node.children if c.is_named]))
            continue
        text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if node.type == "raw_string":
            text = text[1:-1]
        elif node.type == "word":
            if "{" in text or "}" in text:  # a brace expansion, or a piece of one
                parts.append(None)
                continue
            text = re.sub(r"\\(.)", r"\1", text)
        parts.append(text if node.type in _LITERAL_PARTS else None)
    if None not in parts:
        return True  # a word the grammar could not read, whole
    start = "".join(p for p in parts[: parts.index(None)] if p is not None)
    if not any(prefix.startswith(start) or start.startswith(prefix) for prefix in ("/dev/tcp/", "/dev/udp/")):
        return False
    end = "".join(p for p in parts[len(parts) - parts[::-1].index(None) :] if p is not None)
    return _SERVICE.fullmatch(end.rsplit("/", 1)[-1]) is not None
