"""`python -c 'script'` in the read-only shell grammar: a script that only computes and prints reads.

Agents pipe JSON into a one-line script all the time (`curl … | python3 -c "import json, sys;
print(json.load(sys.stdin)['id'])"`). Python runs anything, so the script is read as Python
(`ast`) and reads only when all it can reach is an allow-list:

* imports of modules that compute (`json`, `re`, `math`, `datetime`, `collections`, `csv`,
  `base64`, `hashlib`, `urllib.parse` …; `from os.path import …`), never `os`, `subprocess`,
  `shutil`, `pathlib`, `io`, a network module, nor one that evaluates text as code (`typing`'s
  hints, `operator.attrgetter` past the `_` rule) or writes through a method (`xml.etree`);
* `sys` only for its streams, `argv`, `exit` and version facts, and only as `sys.…`;
* `open` only called, with a constant mode that neither writes nor appends (`open(p)`,
  `open(p, "rb")`), never passed around;
* no `exec`, `eval`, `compile`, `__import__`, `getattr` / `setattr` / `delattr`, `globals`,
  `locals`, `vars`, `breakpoint`, `input`, `__builtins__`, and no attribute starting with `_`
  (the way out of every allow-list).

`python -m json.tool [FILE]` reads too (a second operand is the file it writes). Any other
`python` stays a program runner, whose effects the command does not show.
"""

from __future__ import annotations

import ast
import functools

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import interpreted, read

#: modules whose functions compute, parse or format, and write nothing
SAFE_MODULES = frozenset(
    {"json", "sys", "re", "math", "cmath", "statistics", "datetime", "time", "calendar", "collections", "itertools"}
    | {"functools", "textwrap", "string", "base64", "binascii", "hashlib", "hmac", "decimal", "fractions"}
    | {"pprint", "unicodedata", "urllib.parse", "html", "csv", "random", "uuid", "shlex", "difflib", "heapq"}
    | {"bisect", "copy", "ipaddress", "struct", "zlib", "fnmatch", "glob", "tomllib", "ast", "keyword"}
)
#: modules only a `from … import` may name (importing the package would bind its parent: `os`)
SAFE_FROM_MODULES = SAFE_MODULES | {"os.path"}
#: modules a script may import only to read some of their attributes (`os.getcwd()`), each its list
ATTRIBUTE_MODULES = {
    "os": frozenset(
        {"path", "getcwd", "getenv", "environ", "listdir", "scandir", "walk", "stat", "lstat", "sep", "linesep"}
        | {"pathsep", "curdir", "pardir", "devnull", "name", "cpu_count", "getpid", "getppid", "getuid", "uname"}
        | {"get_terminal_size", "access", "fspath", "getlogin"}
    ),
    "os.path": None,  # every function of os.path computes or reads
    "platform": None,  # every function of platform (3.8+, `popen` is gone) reports
}


@functools.cache
def module_valued_attributes() -> frozenset[str]:
    """Attribute names under which the allowed modules hand out a whole module: `glob.os`,
    `fnmatch.os`, `uuid.os`, `calendar.sys`, `os.path.os` — through any of them a script reaches
    `os.remove` or `sys.modules` past the allow-list. Read from the modules themselves, once, when
    a script first needs it (importing them is no cost of loading the plugin)."""
    import importlib
    import inspect

    found: set[str] = {"modules"}  # `sys.modules` however `sys` is reached
    for name in SAFE_FROM_MODULES | set(ATTRIBUTE_MODULES):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found |= {attr for attr in dir(module) if inspect.ismodule(getattr(module, attr, None))}
    return frozenset(found - {"path"})  # `os.path` is read by its own list


@functools.cache
def _own_function(module: str | None, attr: str) -> bool:
    """Whether `module.attr`, read off an allowed module by its own name, is no module (`platform.
    platform()` is a function, though `uuid.platform` is the module)."""
    import importlib
    import inspect

    if module is None or (module not in SAFE_MODULES and module not in ATTRIBUTE_MODULES) or attr == "modules":
        return False
    try:
        return not inspect.ismodule(getattr(importlib.import_module(module), attr, None))
    except ImportError:
        return False


#: names a script may use only as the base of an attribute (`sys.argv`), never pass around
_ATTRIBUTE_ONLY = frozenset({"sys", "urllib", "os", "platform"})
#: modules a script may not import under another name (its attributes are checked by name)
_NO_ALIAS = _ATTRIBUTE_ONLY | frozenset(ATTRIBUTE_MODULES)
#: what `open` may be told besides the file and its mode
_OPEN_KEYWORDS = frozenset({"mode", "encoding", "errors", "newline", "buffering"})
#: what a script may read of `sys`
SYS_ATTRIBUTES = frozenset(
    {"stdin", "stdout", "stderr", "argv", "exit", "version", "version_info", "maxsize", "platform", "byteorder"}
    | {"executable", "path", "prefix", "base_prefix", "exec_prefix", "implementation", "hexversion", "flags"}
    | {"float_info", "getdefaultencoding", "getfilesystemencoding", "getrecursionlimit"}
)
#: builtins that reach past the allow-list or wait for input
FORBIDDEN_NAMES = frozenset(
    {"exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr", "globals", "locals", "vars"}
    | {"breakpoint", "input", "help", "__builtins__", "__loader__", "__spec__"}
    # `type(sys.stdin.buffer.raw)` is `io.FileIO`, which opens files to write; `Formatter` reads
    # `0.__globals__[os]` from a string, past the `_` rule
    | {"type", "object", "super", "Formatter"}
)
_WRITE_MODES = frozenset("wax+")
#: interpreter options that change nothing a script can do
_QUIET_OPTIONS = frozenset({"-I", "-E", "-s", "-S", "-B", "-u", "-q", "-O", "-OO", "-b", "-bb", "-P"})


def python_verdict(name: str, values: list[str], stdin: str | None = None) -> ShellVerdict | None:
    """The verdict on `python -c SCRIPT …`, `python -m json.tool …`, or `python [-] …` reading the
    script `stdin` gives (a here-document); None for any other use (a script file, a module, the
    REPL), which the caller keeps calling a program runner."""
    index = 0
    while index < len(values) and values[index] in _QUIET_OPTIONS:
        index += 1
    if stdin is not None and (index == len(values) or values[index] == "-"):
        return _script_verdict(name, stdin, "-")  # the script a here-document gives
    if index + 1 >= len(values):
        return None
    flag, operand, rest = values[index], values[index + 1], values[index + 2 :]
    if flag == "-m":
        if operand != "json.tool":
            return None
        cut = rest.index("--") if "--" in rest else len(rest)
        files = [v for v in rest[:cut] if not v.startswith("-")] + rest[cut + 1 :]
        if len(files) > 1:
            return ShellVerdict(False, f"`{word(name)} -m json.tool IN OUT` writes its second operand")
        return read(f"{name} -m json.tool")
    if flag != "-c":
        return None
    return _script_verdict(name, operand, "-c")


def _script_verdict(name: str, script: str, given: str) -> ShellVerdict:
    return interpreted(name, given, script_change(script))


def script_change(script: str) -> str | None:
    """None when the Python source only reaches the allow-list (module docstring), else why not."""
    try:
        tree = ast.parse(script, mode="exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "a script Python cannot parse"
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    bases = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        why = _node_change(node, called, bases)
        if why is not None:
            return why
    return _shared_state_change(tree)


#: `os.environ` and `sys.path` are shared with what the script runs next: a new `PATH` makes
#: `platform.processor()` run another `uname`, a new `sys.path` entry makes `import calendar` run
#: another file; they may only be read in place
_SHARED_STATE = {("os", "environ"), ("sys", "path")}
_READ_METHODS = frozenset({"get", "keys", "items", "values", "copy", "index", "count"})
_COPYING_CALLS = frozenset({"print", "len", "sorted", "list", "dict", "repr", "str", "tuple", "set", "enumerate"})


def _shared_state_change(tree: ast.AST) -> str | None:
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and (node.value.id, node.attr) in _SHARED_STATE
        ):
            continue
        parent = parents.get(id(node))
        grand = parents.get(id(parent)) if parent is not None else None
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
            continue
        if (
            isinstance(parent, ast.Attribute)
            and parent.attr in _READ_METHODS
            and isinstance(grand, ast.Call)
            and grand.func is parent
        ):
            continue
        if isinstance(parent, ast.Compare) and node in parent.comparators:
            continue
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
            continue
        if (
            isinstance(parent, ast.Call)
            and node in parent.args
            and (
                isinstance(parent.func, ast.Name)
                and parent.func.id in _COPYING_CALLS
                or isinstance(parent.func, ast.Attribute)
                and parent.func.attr in ("dumps", "pformat", "pprint")
                # `json.dumps(os.environ, default=f)` hands the object itself to `f`
                and all(isinstance(k.value, ast.Constant) for k in parent.keywords)
            )
        ):
            continue
        return f"it changes or hands on `{node.value.id}.{node.attr}`, which decides what runs next"
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _node_change(node: ast.AST, called: set[int], bases: set[int]) -> str | None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in SAFE_MODULES and alias.name not in ATTRIBUTE_MODULES:
                return f"it imports `{word(alias.name)}`, which the grammar does not read as computing only"
            if alias.asname is not None and alias.name in _NO_ALIAS:
                return f"it imports `{word(alias.name)}` under another name"
    elif isinstance(node, ast.ImportFrom):
        if node.level or node.module not in SAFE_FROM_MODULES:
            return f"it imports from `{word(node.module or '.')}`, which the grammar does not read as computing only"
        if node.module == "sys" and any(alias.name not in SYS_ATTRIBUTES for alias in node.names):
            return "it imports from `sys` more than its streams, `argv` and `exit`"
        if any(alias.name in FORBIDDEN_NAMES for alias in node.names):
            return f"it imports a name that reaches past the allow-list from `{word(node.module or '.')}`"
        if any(alias.name == "*" or alias.name in module_valued_attributes() for alias in node.names):
            return f"it imports a module or everything from `{word(node.module or '.')}`"
    elif isinstance(node, ast.Name):
        if node.id in FORBIDDEN_NAMES:
            return f"it uses `{word(node.id)}`, which reaches past what the grammar reads"
        if node.id == "open" and id(node) not in called:
            return "it passes `open` around instead of calling it"
        if node.id in _ATTRIBUTE_ONLY and id(node) not in bases:
            return f"it passes `{node.id}` around"
    elif isinstance(node, ast.Attribute):
        if node.attr in ("Formatter", "get_field", "get_value", "vformat", "buffer", "raw"):
            return f"it reads `{word(node.attr)}`, which reaches past the allow-list"
        if node.attr.startswith("_"):
            return f"it reads the attribute `{word(node.attr)}`"
        if _is_name(node.value, "sys") and node.attr not in SYS_ATTRIBUTES:
            return f"it uses `sys.{word(node.attr)}`"
        if _is_name(node.value, "urllib") and node.attr != "parse":
            return f"it uses `urllib.{word(node.attr)}`"
        base = node.value.id if isinstance(node.value, ast.Name) else None
        if node.attr in module_valued_attributes() and not _own_function(base, node.attr):
            return f"it reaches `{word(node.attr)}` (a module, or `sys.modules`) through another module"
        allowed = ATTRIBUTE_MODULES.get(base) if base is not None else None
        if allowed is not None and node.attr not in allowed:
            return f"it uses `{base}.{word(node.attr)}`"
    elif isinstance(node, ast.Call) and _is_name(node.func, "open"):
        return _open_change(node)
    return None


def _open_change(call: ast.Call) -> str | None:
    """An `open` call that may write: a mode that is no constant, or one that writes or appends."""
    mode: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for keyword in call.keywords:
        if keyword.arg not in _OPEN_KEYWORDS:
            return f"it calls `open` with `{word(keyword.arg or '**')}`"
        if keyword.arg == "mode":
            mode = keyword.value
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return "it calls `open` with `*` arguments"
    if mode is None:
        return None
    if not isinstance(mode, ast.Constant) or not isinstance(mode.value, str):
        return "it calls `open` with a mode known only when it runs"
    if _WRITE_MODES & set(mode.value):
        return f"it opens a file to write (mode `{word(mode.value)}`)"
    return None
