"""What a `node -e` script may reach (`shell_node`): the syntax of computing, the globals and
modules that only read or compute with their members, and the names and properties that lead out
of every list."""

from __future__ import annotations

#: the syntax a computing script is made of
SYNTAX = frozenset(
    {"program", "hash_bang_line", "comment", "expression_statement", "empty_statement", "statement_block"}
    | {"lexical_declaration", "variable_declaration", "variable_declarator", "if_statement", "else_clause"}
    | {"for_statement", "for_in_statement", "while_statement", "do_statement", "break_statement"}
    | {"continue_statement", "return_statement", "throw_statement", "try_statement", "catch_clause"}
    | {"finally_clause", "switch_statement", "switch_body", "switch_case", "switch_default"}
    | {"function_declaration", "arrow_function", "function_expression", "formal_parameters", "identifier"}
    | {"property_identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"}
    | {"object_pattern", "array_pattern", "pair_pattern", "assignment_pattern", "object_assignment_pattern"}
    | {"rest_pattern", "string", "string_fragment", "escape_sequence", "template_string"}
    | {"template_substitution", "number", "true", "false", "null", "undefined", "regex", "regex_pattern"}
    | {"regex_flags", "call_expression", "arguments", "member_expression", "subscript_expression"}
    | {"parenthesized_expression", "binary_expression", "unary_expression", "update_expression"}
    | {"ternary_expression", "assignment_expression", "augmented_assignment_expression"}
    | {"sequence_expression", "spread_element", "object", "pair", "array", "await_expression"}
    | {"new_expression", "optional_chain", "method_definition", "computed_property_name"}
)
#: names that reach past any list: code from text, the global object, reflection
FORBIDDEN_NAMES = frozenset(
    {"eval", "Function", "globalThis", "global", "Reflect", "Proxy", "WebAssembly", "module", "exports"}
    | {"Worker", "XMLHttpRequest", "WebSocket", "self", "window", "Deno", "Atomics", "SharedArrayBuffer"}
)
#: properties that lead out of every list (the code behind a value, the loader, the process's own powers)
FORBIDDEN_PROPERTIES = frozenset(
    {"constructor", "__proto__", "prototype", "call", "apply", "bind", "caller", "callee", "__defineGetter__"}
    | {"__defineSetter__", "__lookupGetter__", "__lookupSetter__", "mainModule", "binding", "_linkedBinding"}
    | {"dlopen", "getBuiltinModule", "cache", "main", "extensions", "kill", "chdir", "umask", "setuid"}
    | {"setgid", "setgroups", "seteuid", "setegid", "abort", "reallyExit", "_rawDebug", "permission"}
)
#: the global objects a script may read members of: name → the members (None: any but the forbidden)
GLOBAL_OBJECTS: dict[str, frozenset[str] | None] = {
    # the printing members only: `console._stdout` is `process.stdout` (a socket when piped, which
    # `connect` reopens to any host), `console.Console` makes a console on any stream
    "console": frozenset({"log", "info", "warn", "error", "debug", "dir", "dirxml", "table", "trace", "assert"})
    | frozenset({"time", "timeEnd", "timeLog", "count", "countReset", "group", "groupCollapsed", "groupEnd"}),
    "Math": None,
    "Intl": None,
    "JSON": frozenset({"parse", "stringify"}),
    "Object": frozenset({"keys", "values", "entries", "fromEntries", "assign", "freeze", "isFrozen", "create"})
    | frozenset({"is", "hasOwn", "groupBy"}),
    "Array": frozenset({"isArray", "from", "of"}),
    "Number": frozenset({"isInteger", "isFinite", "isNaN", "isSafeInteger", "parseFloat", "parseInt", "EPSILON"})
    | frozenset({"MAX_SAFE_INTEGER", "MIN_SAFE_INTEGER", "MAX_VALUE", "MIN_VALUE", "POSITIVE_INFINITY", "NaN"})
    | frozenset({"NEGATIVE_INFINITY"}),
    "String": frozenset({"fromCharCode", "fromCodePoint", "raw"}),
    "Date": frozenset({"now", "parse", "UTC"}),
    "Promise": frozenset({"all", "allSettled", "race", "any", "resolve", "reject"}),
    "Buffer": frozenset({"from", "alloc", "byteLength", "concat", "isBuffer", "compare"}),
    "Symbol": frozenset({"iterator", "asyncIterator", "for"}),
    "URL": frozenset({"canParse"}),
    "process": frozenset({"version", "versions", "platform", "arch", "env", "cwd", "argv", "argv0", "exit"})
    | frozenset({"exitCode", "stdout", "stderr", "stdin", "pid", "ppid", "uptime", "hrtime", "memoryUsage"})
    | frozenset({"execPath", "release", "on", "once", "nextTick", "title", "config", "features", "execArgv"}),
    "require": frozenset({"resolve"}),
    "Bun": frozenset({"version", "revision"}),
}
#: what a script may use of `process.stdout` / `stderr` / `stdin`
STREAM_MEMBERS = frozenset({"write", "on", "once", "setEncoding", "resume", "columns", "rows", "isTTY", "fd", "read"})
#: the globals a script may call
CALLABLE_GLOBALS = frozenset(
    {"String", "Number", "Boolean", "BigInt", "Symbol", "Array", "Date", "parseInt", "parseFloat", "isNaN"}
    | {"isFinite", "encodeURIComponent", "decodeURIComponent", "encodeURI", "decodeURI", "structuredClone"}
    | {"atob", "btoa", "Error", "TypeError", "RangeError", "SyntaxError", "clearTimeout", "clearInterval"}
    | {"require", "fetch", "setTimeout", "setInterval", "setImmediate", "queueMicrotask"}
)
#: the globals a script may construct
CONSTRUCTIBLE_GLOBALS = frozenset(
    {"Date", "Map", "Set", "WeakMap", "WeakSet", "URL", "URLSearchParams", "RegExp", "Array", "Error", "TypeError"}
    | {"RangeError", "SyntaxError", "TextEncoder", "TextDecoder", "Uint8Array", "Int32Array", "Uint32Array"}
    | {"Float64Array", "ArrayBuffer", "DataView", "Promise", "Intl"}
)
#: the globals that are values a script may pass around (they compute)
VALUE_GLOBALS = frozenset(
    {"String", "Number", "Boolean", "parseInt", "parseFloat", "isNaN", "isFinite", "encodeURIComponent"}
    | {"decodeURIComponent", "encodeURI", "decodeURI", "undefined", "NaN", "Infinity", "__dirname", "__filename"}
)
#: timers: they run the function they are given, which must be one the script writes
TIMERS = frozenset({"setTimeout", "setInterval", "setImmediate", "queueMicrotask"})
#: the modules a script may load, each with the members that only read or compute (None: all of them)
MODULES: dict[str, frozenset[str] | None] = {
    "fs": frozenset({"readFileSync", "readdirSync", "existsSync", "statSync", "lstatSync", "realpathSync"})
    | frozenset({"accessSync", "readlinkSync", "constants"}),
    "path": None,
    "os": frozenset({"homedir", "platform", "arch", "cpus", "tmpdir", "hostname", "EOL", "type", "release"})
    | frozenset({"totalmem", "freemem", "userInfo", "networkInterfaces", "uptime", "loadavg", "endianness"})
    | frozenset({"version", "machine", "availableParallelism", "constants", "devNull"}),
    "util": frozenset({"inspect", "format", "isDeepStrictEqual", "types", "stripVTControlCharacters"}),
    "crypto": frozenset({"createHash", "createHmac", "randomUUID", "randomBytes", "randomInt", "getHashes"})
    | frozenset({"timingSafeEqual"}),
    "url": None,  # every function of `url` parses or formats
    "querystring": None,
    "string_decoder": None,
    "zlib": frozenset({"gunzipSync", "inflateSync", "inflateRawSync", "brotliDecompressSync", "gzipSync"})
    | frozenset({"deflateSync", "brotliCompressSync", "crc32"}),
}
#: the options `fs`'s readers may be given, by reader (an open flag, `flag: 'w'`, would truncate)
FS_OPTIONS = {
    "readFileSync": frozenset({"encoding"}),
    "readdirSync": frozenset({"encoding", "withFileTypes", "recursive"}),
    "statSync": frozenset({"bigint", "throwIfNoEntry"}),
    "lstatSync": frozenset({"bigint", "throwIfNoEntry"}),
    "realpathSync": frozenset({"encoding"}),
    "readlinkSync": frozenset({"encoding"}),
}
#: the encodings an `fs` reader may be given as its options
ENCODINGS = frozenset({"utf8", "utf-8", "ascii", "latin1", "binary", "base64", "base64url", "hex", "ucs2", "ucs-2"})
ENCODINGS |= {"utf16le", "utf-16le", "buffer"}
#: calls whose arguments become text, a number or a truth value (what a chosen member may flow into)
SINK_CALLS = frozenset({"String", "Number", "Boolean", "parseInt", "parseFloat", "encodeURIComponent", "isNaN"})
SINK_MEMBERS = frozenset({("JSON", "stringify"), ("Object", "keys"), ("Array", "isArray")})
#: operators whose value is one of their operands (any value), not a primitive made of them
PASSING_OPERATORS = frozenset({"||", "&&", "??"})
#: node's built-in modules: `node -e` / `-p` and a script on standard input see each as a global of
#: its name (`fs`, `child_process` …, as the REPL does)
BUILTIN_MODULE_GLOBALS = frozenset(
    {"assert", "async_hooks", "buffer", "child_process", "cluster", "console", "constants", "crypto", "dgram"}
    | {"diagnostics_channel", "dns", "domain", "events", "fs", "http", "http2", "https", "inspector", "module"}
    | {"net", "os", "path", "perf_hooks", "process", "punycode", "querystring", "readline", "repl", "stream"}
    | {"string_decoder", "sys", "timers", "tls", "trace_events", "tty", "url", "util", "v8", "vm", "wasi"}
    | {"worker_threads", "zlib", "test", "sqlite", "sea"}
)
#: members of `process` and of its streams whose call returns the object itself (`process.on(…)` is `process`)
CHAINABLE = frozenset({"on", "once", "addListener", "prependListener", "prependOnceListener", "setEncoding", "resume"})
CHAINABLE |= {"off", "removeListener", "removeAllListeners", "setMaxListeners", "pause"}
#: members that are a module itself, shared with node's own loader (`path.posix` is `path`): a script
#: may call their functions, never hold them as a value (`Object.assign(path.posix, {resolve: …})`
#: would redirect every `require`)
SHARED_MEMBERS = frozenset({"path.posix", "path.win32"})
