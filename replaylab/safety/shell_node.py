"""`node -e 'script'` in the read-only shell grammar: a script that only computes and prints reads.

Agents read a package's version, a JSON file's field or a folder's listing with a one-line script
all the time (`node -e "console.log(require('./package.json').version)"`, `node -p
"process.versions"`, `node -e "const fs=require('fs'); console.log(fs.readdirSync('src'))"`).
Node runs anything, so the script is parsed (tree-sitter's JavaScript grammar) and reads only when
all it can reach is an allow-list:

* the syntax of computing (declarations, functions, loops, conditions, literals, templates); no
  classes, generators, `with`, labels, `this`, `import` or `import()`;
* names it declares, and the globals that compute (`JSON`, `Math`, `console`, `Object.keys`,
  `Array.from`, `Buffer.from`, `Date`, `Map`, `URL` …), never `eval`, `Function`, `globalThis`,
  `Reflect`, `Proxy`, `module`, a name it does not declare, nor a declared name that shadows a
  global it reads;
* `require` only of a literal name: a `.json` file (data), or a module on the list with the
  members that only read or compute (`fs.readFileSync`, `readdirSync`, `existsSync`, `statSync` …
  with no option that could open to write; `path`; `os`'s facts; `crypto`'s hashes; `util.inspect`);
  never `child_process`, `net`, `http`, `vm`, a package (whose code the analysis does not read),
  nor a module passed around as a value;
* `process` for its facts, `env` (its own, as no child can start), `argv`, `exit`, `stdout.write`,
  `stdin`; `fetch` only with one literal URL that names no change (a GET, as for curl);
* no property that leads out of the list: `constructor`, `__proto__`, `prototype`, `call`,
  `apply`, `bind`, `binding`, `mainModule`, `getBuiltinModule` …; a member chosen when the script
  runs (`obj[key]`) only where its value becomes text, a number or a truth value (an operand, a
  template's part, a condition, what `console.log` prints) — elsewhere it could be any of those;
* calls only of functions the script declares, of the globals and members on the list, and of
  methods of the data it holds; timers only with a function the script writes; assignments only
  to what the script declares (and `process.exitCode`, `process.env`).

`node -p` prints the script's value; `node` with a here-document (`node <<'EOF'`, `node -`) reads
the script from it. `bun -e` / `bun -p` read the same way. Any other use stays a program runner.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from replaylab.safety import node_allowlist as NA
from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_http import url_change
from replaylab.safety.shell_words import interpreted, read

#: node's and bun's options that change nothing a script can do
_QUIET_OPTIONS = frozenset({"--no-warnings", "--no-deprecation", "--trace-warnings", "--enable-source-maps"})
_QUIET_OPTIONS |= {"--input-type=commonjs", "--trace-uncaught", "--no-experimental-fetch"}
_SCRIPT_OPTIONS = frozenset({"-e", "--eval", "-p", "--print", "-pe", "-ep"})
#: the runners read by their scripts
NODE_RUNNERS = frozenset({"node", "nodejs", "bun"})


class _Refused(Exception):
    """Why a script may do more than read."""


@functools.cache
def _parser() -> Any:
    """tree-sitter's JavaScript parser, made when a script is first read (no cost at plugin load)."""
    import tree_sitter
    import tree_sitter_javascript

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_javascript.language()))


def node_verdict(name: str, values: list[str], stdin: str | None = None) -> ShellVerdict | None:
    """The verdict on `node -e|-p SCRIPT …` or `node [-]` reading a here-document; None for any
    other use (a script file, the REPL, an option the grammar does not read), which the caller
    keeps calling a program runner."""
    index = 0
    while index < len(values) and values[index] in _QUIET_OPTIONS:
        index += 1
    rest = values[index:]
    if stdin is not None and rest in ([], ["-"]):
        return _script_verdict(name, stdin, "-")
    if not rest:
        return None
    if rest[0] in ("--check", "-c") and all(not value.startswith("-") for value in rest[1:]):
        return read(f"{name} --check")  # the file's syntax is checked, nothing of it runs
    flag, equals, attached = rest[0].partition("=")
    if flag not in _SCRIPT_OPTIONS or (not equals and len(rest) < 2):
        return None
    script, after = (attached, rest[1:]) if equals else (rest[1], rest[2:])
    before_end = after[: after.index("--")] if "--" in after else after
    if any(value.startswith("-") for value in before_end):
        return ShellVerdict(False, f"`{word(name)} {flag}` with an option after the script (it could load code)")
    return _script_verdict(name, script, flag)


def _script_verdict(name: str, script: str, given: str) -> ShellVerdict:
    return interpreted(name, given, script_change(script))


def script_change(script: str) -> str | None:
    """None when the JavaScript source only reaches the allow-list (module docstring), else why not."""
    tree = _parser().parse(script.encode("utf-8", "surrogatepass"))
    if tree.root_node.has_error:
        return "a script the JavaScript grammar cannot read"
    try:
        _Script(tree.root_node).check()
    except _Refused as why:
        return str(why)
    except RecursionError:
        return "a script nested too deeply to read"
    return None


#: a package's own manifest, as a bare name resolves it (`react/package.json`, `@types/node/package.json`)
_MANIFEST = re.compile(r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*/package\.json")
#: the nodes that name something (an escape in one spells another name)
_NAMES = frozenset({"identifier", "property_identifier", "shorthand_property_identifier"})
_NAMES |= {"shorthand_property_identifier_pattern"}
#: what JavaScript ends a line at besides `\n` (inside a comment tree-sitter does not)
_LINE_ENDS = ("\r", "\u2028", "\u2029")


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _string_value(node: Any) -> str | None:
    """A string literal's value, None when it is no plain literal (an escape, a substitution)."""
    if node.type != "string" or any(child.type == "escape_sequence" for child in node.children):
        return None
    return _text(node)[1:-1]


def _arguments(call: Any) -> list[Any]:
    holder = call.child_by_field_name("arguments")
    return [] if holder is None else [a for a in holder.named_children if a.type != "comment"]


def _operator(node: Any) -> str:
    found = node.child_by_field_name("operator")
    return _text(found) if found is not None else ""


def _binding_names(pattern: Any) -> Iterator[Any]:
    """The identifiers a declaration or parameter pattern binds (not its defaults, not its keys)."""
    if pattern.type in ("identifier", "shorthand_property_identifier_pattern"):
        yield pattern
    elif pattern.type in ("object_pattern", "array_pattern", "formal_parameters"):
        for child in pattern.named_children:
            yield from _binding_names(child)
    elif pattern.type == "pair_pattern":
        yield from _binding_names(pattern.child_by_field_name("value"))
    elif pattern.type in ("assignment_pattern", "object_assignment_pattern"):
        yield from _binding_names(pattern.child_by_field_name("left"))
    elif pattern.type == "rest_pattern":
        for child in pattern.named_children:
            yield from _binding_names(child)


def _whole_script(name: Any) -> bool:
    """Whether `name` is declared by a `const` / `let` at the script's top (bound everywhere)."""
    declarator = name.parent
    return (
        declarator is not None
        and declarator.type == "variable_declarator"
        and declarator.child_by_field_name("name") == name
        and declarator.parent is not None
        and declarator.parent.type == "lexical_declaration"  # `var fs;` keeps node's global `fs`
        and declarator.parent.parent is not None
        and declarator.parent.parent.type == "program"
    )


class _Script:
    """One script's names, by what each is bound to, and the checks over every node."""

    def __init__(self, root: Any):
        self.root = root
        #: name → "data", "function", "json", "module:<m>" or "member:<m>.<name>"
        self.kinds: dict[str, str] = {}
        self.binding_ids: set[int] = set()

    def bind(self, node: Any, kind: str) -> None:
        name = _text(node)
        if name in NA.FORBIDDEN_PROPERTIES:  # `const {constructor} = f` takes what `f.constructor` is
            raise _Refused(f"it takes `{word(name)}` out of a value")
        if (
            name in NA.FORBIDDEN_NAMES
            or name in NA.GLOBAL_OBJECTS
            or name in NA.CALLABLE_GLOBALS
            or name in NA.VALUE_GLOBALS
        ):
            raise _Refused(f"it declares `{word(name)}`, a global the analysis reads by its name")
        if name in NA.BUILTIN_MODULE_GLOBALS and kind != f"module:{name}" and not _whole_script(node):
            # `function f(path) {}` binds `path` only inside `f`, but the names here have no scopes:
            # elsewhere `path` is node's global module, shared with node's own loader (`path.resolve =
            # …` then redirects `require`); a declaration at the top binds it for the whole script
            raise _Refused(f"it binds `{word(name)}`, the name of a module node makes a global")
        if self.kinds.get(name, kind) != kind:
            raise _Refused(f"it binds `{word(name)}` to two kinds of value")
        self.kinds[name] = kind
        self.binding_ids.add(node.id)

    def check(self) -> None:
        for node in _walk(self.root):
            if node.is_named and node.type not in NA.SYNTAX:
                raise _Refused(f"it uses `{word(node.type.replace('_', ' '))}`, which the analysis does not read")
            if node.type in _NAMES and "\\" in _text(node):  # `\u0063onstructor` is `constructor`
                raise _Refused("it spells a name with an escape, which the analysis does not read")
            if node.type in ("pair", "pair_pattern"):
                self._key(node.child_by_field_name("key"))
            if (node.type == "hash_bang_line" or _text(node).startswith("//")) and any(
                end in _text(node) for end in _LINE_ENDS
            ):
                # node ends a `#!` or `//` line at CR, U+2028, U+2029; tree-sitter reads on to `\n`
                raise _Refused("it ends a comment line where the analysis does not, hiding code after it")
            self._bindings_of(node)
        for node in _walk(self.root):
            self._check(node)

    def _key(self, key: Any) -> None:
        """A key written as a string, a number or a computed name is the property it names:
        `{"constructor": c} = f` takes `f.constructor` as surely as `{constructor: c}` does."""
        if key is None or key.type == "property_identifier":
            return
        inner = key.named_children[0] if key.type == "computed_property_name" and key.named_children else key
        named = _string_value(inner) if inner.type == "string" else _text(inner) if inner.type == "number" else None
        if named is None or named in NA.FORBIDDEN_PROPERTIES:
            raise _Refused(f"it names the key `{word(_text(key))}`, which could lead out of the lists")

    def _bindings_of(self, node: Any) -> None:
        kind = node.type
        if kind == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            module = self._required(value) if value is not None else None
            if name.type == "identifier":
                self.bind(name, self._kind_of_value(value, module))
            elif module is not None and module != "json" and name.type == "object_pattern":
                self._bind_members(name, module)
            else:
                for bound in _binding_names(name):
                    self.bind(bound, "data")
        elif kind in ("function_declaration", "function_expression") and node.child_by_field_name("name"):
            self.bind(node.child_by_field_name("name"), "function")
        elif kind in ("formal_parameters", "catch_clause", "arrow_function", "for_in_statement"):
            field = {"catch_clause": "parameter", "arrow_function": "parameter", "for_in_statement": "left"}
            target = node if kind == "formal_parameters" else node.child_by_field_name(field[kind])
            if target is not None and target.type in ("member_expression", "subscript_expression"):
                return  # `for (o.x of …)` assigns: checked as an assignment
            for bound in _binding_names(target) if target is not None else ():
                self.bind(bound, "data")

    def _kind_of_value(self, value: Any, module: str | None) -> str:
        if module is not None:
            return "json" if module == "json" else f"module:{module}"
        if value is not None and value.type in ("arrow_function", "function_expression"):
            return "function"
        return "data"

    def _bind_members(self, pattern: Any, module: str) -> None:
        """`const {readFileSync, join: j} = require(...)`: each name a member of the module."""
        allowed = NA.MODULES[module]
        for child in pattern.named_children:
            if child.type == "shorthand_property_identifier_pattern":
                member, bound = _text(child), child
            elif child.type == "pair_pattern" and child.child_by_field_name("value").type == "identifier":
                member, bound = _text(child.child_by_field_name("key")), child.child_by_field_name("value")
            else:
                raise _Refused(f"it takes `{word(module)}` apart in a way the analysis does not read")
            if member in NA.FORBIDDEN_PROPERTIES or (allowed is not None and member not in allowed):
                raise _Refused(f"it uses `{word(module)}.{word(member)}`, which does more than read or compute")
            self.bind(bound, f"member:{module}.{member}")

    def _required(self, node: Any) -> str | None:
        """`require('fs')` → `fs`, a `.json` file → `json`; None when `node` is no `require` call;
        refused when it loads anything else."""
        if node is None or node.type != "call_expression":
            return None
        callee = node.child_by_field_name("function")
        if callee.type != "identifier" or _text(callee) != "require" or _text(callee) in self.kinds:
            return None
        arguments = _arguments(node)
        spec = _string_value(arguments[0]) if len(arguments) == 1 else None
        if spec is None:
            raise _Refused("it calls `require` with a name known only when it runs")
        if spec.endswith(".json"):
            # a file by its path, or a package's own manifest (`react/package.json`): data when it
            # is there (node falls back to `x.json.js` only when it is not); a bare `x.json` is a
            # package of that name, whose code runs
            if spec.startswith(("./", "../", "/")) or _MANIFEST.fullmatch(spec):
                return "json"
            raise _Refused(f"it loads `{word(spec)}`, a package's code as node resolves the name")
        module = spec.removeprefix("node:")
        if module not in NA.MODULES:
            raise _Refused(f"it loads `{word(spec)}`, whose code or powers the analysis does not read as only reading")
        return module

    # ------------------------------------------------------------------ the checks of each node

    def _check(self, node: Any) -> None:
        kind = node.type
        if kind in ("identifier", "shorthand_property_identifier") and node.id not in self.binding_ids:
            self._reference(node)
        elif kind == "property_identifier" and _text(node) in NA.FORBIDDEN_PROPERTIES:
            raise _Refused(f"it reaches `.{word(_text(node))}`")
        elif kind in ("member_expression", "subscript_expression"):
            self._member(node)
        elif kind == "call_expression":
            self._call(node)
        elif kind == "new_expression":
            self._new(node)
        elif kind in ("assignment_expression", "augmented_assignment_expression", "update_expression"):
            self._assignment(node)
        elif kind == "for_in_statement" and node.child_by_field_name("left").type in (
            "member_expression",
            "subscript_expression",
        ):
            self._target(node.child_by_field_name("left"), "assigns to")
        elif kind == "unary_expression" and _operator(node) == "delete":
            self._target(node.child_by_field_name("argument"), "deletes")
        elif kind == "computed_property_name" and not any(c.type in ("string", "number") for c in node.named_children):
            raise _Refused("it names an object's key only when it runs")

    def _reference(self, node: Any) -> None:
        name = _text(node)
        parent = node.parent
        if name in NA.FORBIDDEN_NAMES:
            raise _Refused(f"it uses `{word(name)}`, which reaches past what the analysis reads")
        kind = self.kinds.get(name)
        is_root = (
            parent.type in ("member_expression", "subscript_expression")
            and parent.child_by_field_name("object") == node
        )
        is_callee = parent.type == "call_expression" and parent.child_by_field_name("function") == node
        is_constructed = parent.type == "new_expression" and parent.child_by_field_name("constructor") == node
        if kind is not None:
            if kind.startswith("module:") and not is_root:
                raise _Refused(f"it passes the module `{word(kind[7:])}` around")
            if kind[7:] in NA.SHARED_MEMBERS and not is_root:
                raise _Refused(f"it passes `{word(kind[7:])}` around (the module itself, shared with node's loader)")
            if kind.startswith("member:fs.") and kind != "member:fs.constants" and not is_callee:
                raise _Refused(f"it passes `{word(kind[7:])}` around (what it is given would go unread)")
            return
        if name in NA.VALUE_GLOBALS:
            return
        if name in NA.GLOBAL_OBJECTS and (is_root or (is_callee and name in NA.CALLABLE_GLOBALS)):
            return
        if (is_callee and name in NA.CALLABLE_GLOBALS) or (is_constructed and name in NA.CONSTRUCTIBLE_GLOBALS):
            return
        if name in NA.GLOBAL_OBJECTS or name in NA.CALLABLE_GLOBALS or name in NA.CONSTRUCTIBLE_GLOBALS:
            raise _Refused(f"it passes `{word(name)}` around")
        raise _Refused(f"it uses `{word(name)}`, a name it does not declare")

    def _chain(self, node: Any) -> tuple[Any, list[str | None]]:
        """(the chain's root node, its member names from the root, None for a member chosen when
        the script runs)."""
        names: list[str | None] = []
        while node.type in ("member_expression", "subscript_expression"):
            if node.type == "member_expression":
                names.append(_text(node.child_by_field_name("property")))
            else:
                index = node.child_by_field_name("index")
                literal = _string_value(index) if index.type == "string" else None
                names.append(literal if literal is not None else _text(index) if index.type == "number" else None)
            node = node.child_by_field_name("object")
        return node, names[::-1]

    def _member(self, node: Any) -> None:
        parent = node.parent
        if (
            parent.type in ("member_expression", "subscript_expression")
            and parent.child_by_field_name("object") == node
        ):
            return  # the outermost member of a chain checks the chain
        root, names = self._chain(node)
        for name in names:
            if name is not None and name in NA.FORBIDDEN_PROPERTIES:
                raise _Refused(f"it reaches `{word(name)}`")
        owner = self._owner(root)
        if owner == "process" and names[:1] in (["stdin"], ["stdout"], ["stderr"]) and len(names) == 1:
            raise _Refused(f"it takes `process.{names[0]}` as a value (a stream can be reopened anywhere)")
        if owner is not None and names:
            self._allowed_member(owner, names)
            called = parent.type == "call_expression" and parent.child_by_field_name("function") == node
            if owner.startswith("module:") and f"{owner[7:]}.{names[-1]}" in NA.SHARED_MEMBERS and not called:
                raise _Refused(f"it takes `{word(owner[7:])}.{word(str(names[-1]))}` as a value (the module itself)")
            if owner == "module:fs" and names[0] != "constants" and not called:
                raise _Refused(f"it passes `fs.{word(str(names[0]))}` around (what it is given would go unread)")
        if None in names and not self._becomes_primitive(node):
            raise _Refused("it uses a member chosen when it runs (`x[key]`) where its value could be anything")

    def _owner(self, root: Any) -> str | None:
        """The global or module a chain starts from, or None for the script's own data."""
        if root.type == "call_expression":
            module = self._required(root)
            return None if module in (None, "json") else f"module:{module}"
        if root.type != "identifier":
            return None
        name = _text(root)
        kind = self.kinds.get(name)
        if kind is not None:
            return kind if kind.startswith("module:") else None
        return name if name in NA.GLOBAL_OBJECTS else None

    def _allowed_member(self, owner: str, names: list[str | None]) -> None:
        first = names[0]
        allowed = NA.MODULES[owner[7:]] if owner.startswith("module:") else NA.GLOBAL_OBJECTS[owner]
        shown = owner.removeprefix("module:")
        if first is None:
            raise _Refused(f"it picks a member of `{word(shown)}` when it runs")
        if allowed is not None and first not in allowed:
            raise _Refused(f"it uses `{word(shown)}.{word(first)}`, which does more than read or compute")
        if owner == "process" and first in ("stdout", "stderr", "stdin") and len(names) > 1:
            if names[1] not in NA.STREAM_MEMBERS:
                raise _Refused(f"it uses `process.{first}.{word(names[1] or '[…]')}`")

    def _becomes_primitive(self, node: Any) -> bool:
        """Whether the value of `node` only becomes text, a number or a truth value where it stands."""
        child, parent = node, node.parent
        while parent.type == "parenthesized_expression":
            child, parent = parent, parent.parent
        kind = parent.type
        if kind == "binary_expression":
            return _operator(parent) not in NA.PASSING_OPERATORS
        if kind == "augmented_assignment_expression":
            return bool(parent.child_by_field_name("right") == child) and _operator(parent) not in ("||=", "&&=", "??=")
        if kind in ("unary_expression", "template_substitution"):
            return True
        if kind in ("if_statement", "while_statement", "do_statement", "for_statement", "ternary_expression"):
            return bool(parent.child_by_field_name("condition") == child)
        if kind == "arguments":
            call = parent.parent
            if call.type != "call_expression":
                return False
            root, names = self._chain(call.child_by_field_name("function"))
            head = _text(root) if root.type == "identifier" and _text(root) not in self.kinds else None
            if head == "console" or (not names and head in NA.SINK_CALLS):
                return True
            return len(names) == 1 and (head, names[0]) in NA.SINK_MEMBERS and parent.named_children[0] == child
        return False

    def _call(self, node: Any) -> None:
        callee = node.child_by_field_name("function")
        if callee.type == "import":
            raise _Refused("it uses `import()`")
        if callee.type == "parenthesized_expression":
            inner = callee.named_children[0] if callee.named_children else None
            if inner is None or inner.type not in ("arrow_function", "function_expression"):
                raise _Refused("it calls a value the analysis cannot follow")
            return
        if callee.type in ("member_expression", "subscript_expression"):
            root, names = self._chain(callee)
            if None in names:
                raise _Refused("it calls a member chosen when it runs")
            owner = self._owner(root)
            if owner is not None and names:
                self._allowed_member(owner, names)
            if owner == "process" and names[-1] in NA.CHAINABLE and node.parent.type != "expression_statement":
                raise _Refused(f"it uses what `process.{'.'.join(map(str, names))}(…)` returns (the object itself)")
            if owner == "module:fs" and len(names) == 1:
                self._fs_options(str(names[0]), node)
            return
        if callee.type != "identifier":
            raise _Refused("it calls what a call returns, which the analysis cannot follow")
        name = _text(callee)
        kind = self.kinds.get(name)
        if kind is not None:
            if kind == "function":
                return
            if kind.startswith("member:"):
                module, _, member = kind[7:].partition(".")
                if module == "fs":
                    self._fs_options(member, node)
                return
            raise _Refused(f"it calls `{word(name)}`, whose value the analysis cannot follow")
        if name == "require":
            loaded = self._required(node)
            if loaded != "json" and node.parent.type not in (
                "variable_declarator",
                "member_expression",
                "subscript_expression",
            ):
                raise _Refused("it passes a module around")
        elif name == "fetch":
            self._fetch(node)
        elif name in NA.TIMERS:
            first = _arguments(node)[:1]
            if not first or not self._is_own_function(first[0]):
                raise _Refused(f"it gives `{name}` something other than a function it writes")

    def _is_own_function(self, node: Any) -> bool:
        if node.type in ("arrow_function", "function_expression"):
            return True
        return node.type == "identifier" and self.kinds.get(_text(node)) == "function"

    def _fs_options(self, member: str, call: Any) -> None:
        """An `fs` reader's options: a literal encoding, or an object of the reader's own keys."""
        allowed = NA.FS_OPTIONS.get(member, frozenset())
        if any(argument.type == "spread_element" for argument in _arguments(call)):
            raise _Refused(f"it spreads what it gives `fs.{word(member)}` (its options go unread)")
        for option in _arguments(call)[1:]:
            if option.type == "string" and "encoding" in allowed and _string_value(option) in NA.ENCODINGS:
                continue
            if option.type == "object" and all(
                pair.type == "pair" and _text(pair.child_by_field_name("key")).strip("'\"") in allowed
                for pair in option.named_children
            ):
                continue
            raise _Refused(f"it calls `fs.{word(member)}` with options that could open a file to write")

    def _fetch(self, call: Any) -> None:
        arguments = _arguments(call)
        url = _string_value(arguments[0]) if len(arguments) == 1 else None
        if url is None:
            raise _Refused("it calls `fetch` with options (a method, a body) or a URL known only when it runs")
        change = url_change(url, guess=False)
        if change is not None:
            raise _Refused(f"it fetches: {change}")

    def _new(self, node: Any) -> None:
        made = node.child_by_field_name("constructor")
        if made.type == "member_expression":
            root, names = self._chain(made)
            if root.type == "identifier" and _text(root) == "Intl" and len(names) == 1:
                return
        if made.type == "identifier" and (
            _text(made) in NA.CONSTRUCTIBLE_GLOBALS or self.kinds.get(_text(made)) == "function"
        ):
            if _text(made) == "Promise":
                first = _arguments(node)[:1]
                if not first or not self._is_own_function(first[0]):
                    raise _Refused("it gives `Promise` something other than a function it writes")
            return
        raise _Refused(f"it constructs `{word(_text(made))}`")

    def _assignment(self, node: Any) -> None:
        target = node.child_by_field_name("left") or node.child_by_field_name("argument")
        self._target(target, "assigns to")

    def _target(self, target: Any, verb: str) -> None:
        if target is None:
            return
        if target.type == "identifier":
            if self.kinds.get(_text(target)) != "data":
                raise _Refused(f"it {verb} `{word(_text(target))}`, which it did not declare as data")
            return
        if target.type in ("object_pattern", "array_pattern"):
            for bound in _binding_names(target):
                self._target(bound, verb)
            return
        if target.type == "parenthesized_expression" and target.named_children:
            self._target(target.named_children[0], verb)
            return
        if target.type not in ("member_expression", "subscript_expression"):
            raise _Refused(f"it {verb} something the analysis does not read")
        root, names = self._chain(target)
        if root.type == "identifier" and _text(root) == "process" and names[:1] in (["exitCode"], ["env"]):
            if names == ["exitCode"] or (len(names) == 2 and names[0] == "env"):
                return  # the process's own exit status and environment: no child can start
        if root.type != "identifier" or self.kinds.get(_text(root)) != "data":
            raise _Refused(f"it {verb} `{word(_text(target))}`, which it did not declare as data")
        if None in names[:-1]:
            raise _Refused(f"it {verb} a member of a member chosen when it runs")
