"""`redis-cli` in the read-only shell grammar: a command that only reads keys or the server's state
reads.

Agents look into the caches and queues of the services they run (`redis-cli GET session:42`,
`redis-cli -n 2 KEYS 'job:*'`, `redis-cli INFO memory`). `redis-cli` reads when its command is
one of Redis's read commands (`GET`, `HGETALL`, `LRANGE`, `SCAN`, `TTL`, `INFO`, `DBSIZE` …, and
`CONFIG GET`, `CLIENT LIST`, `SLOWLOG GET` among the commands with a subcommand), with no `STORE`
argument (`SORT … STORE`, `GEOSEARCH … STORE` write the result), or with no command, when
standard input the command shows holds only such commands, one per line; `--scan`, `--bigkeys`,
`--memkeys`, `--stat` and `--latency` only read too.

Everything else stays mutating: any other command (`SET`, `DEL`, `FLUSHALL`, `EVAL`, `SHUTDOWN` …),
`--rdb` / `--functions-rdb` (a dump written to a file), `--pipe` and `-x` (input the command does
not show), `--eval FILE` (a script), a command or option the module does not list, and a word
only known when the shell runs in the command.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_words import Word, one_word, read

#: Redis commands that only read keys or the server's state
READ_COMMANDS = frozenset(
    {"get", "mget", "exists", "ttl", "pttl", "expiretime", "pexpiretime", "type", "keys", "scan", "strlen"}
    | {"getrange", "substr", "bitcount", "bitpos", "getbit", "hget", "hgetall", "hkeys", "hvals", "hlen"}
    | {"hexists", "hmget", "hscan", "hstrlen", "hrandfield", "lrange", "llen", "lindex", "lpos", "smembers"}
    | {"sismember", "smismember", "scard", "sscan", "srandmember", "sinter", "sunion", "sdiff", "sintercard"}
    | {"zrange", "zrangebyscore", "zrangebylex", "zrevrange", "zrevrangebyscore", "zrevrangebylex", "zcard"}
    | {"zscore", "zmscore", "zrank", "zrevrank", "zcount", "zlexcount", "zscan", "zrandmember", "zinter"}
    | {"zunion", "zdiff", "xrange", "xrevrange", "xlen", "xpending", "geopos", "geodist", "geohash"}
    | {"georadius_ro", "georadiusbymember_ro", "geosearch", "pfcount", "dbsize", "info", "ping", "echo"}
    | {"time", "lastsave", "role", "dump", "randomkey", "lcs", "sort_ro", "json.get", "json.type"}
    | {"json.mget", "json.objkeys", "json.objlen", "json.arrlen", "json.strlen", "ft.search", "ft.info"}
    | {"ft._list", "ts.range", "ts.revrange", "ts.get", "ts.info", "monitor", "hello", "lolwut", "sort"}
)
#: commands whose subcommand decides, with the subcommands that only read
READ_SUBCOMMANDS = {
    "config": frozenset({"get"}),
    "client": frozenset({"list", "info", "getname", "id", "trackinginfo"}),
    "slowlog": frozenset({"get", "len"}),
    "memory": frozenset({"usage", "stats", "doctor", "malloc-stats"}),
    "object": frozenset({"encoding", "freq", "idletime", "refcount", "help"}),
    "cluster": frozenset({"info", "nodes", "slots", "shards", "myid", "keyslot", "countkeysinslot"}),
    "command": frozenset({"count", "info", "docs", "list", "getkeys"}),
    "xinfo": frozenset({"stream", "groups", "consumers", "help"}),
    "latency": frozenset({"latest", "history", "doctor", "graph", "histogram"}),
    "acl": frozenset({"whoami", "list", "users", "getuser", "cat"}),
    "pubsub": frozenset({"channels", "numsub", "numpat", "shardchannels", "shardnumsub"}),
    "function": frozenset({"list", "stats", "dump"}),
    "module": frozenset({"list"}),
}
#: options followed by a value that says where to connect or how output prints
_VALUE_OPTIONS = frozenset(
    {"-h", "-p", "-s", "-a", "-u", "-n", "-r", "-i", "-d", "--user", "--pass", "--askpass", "--cacert"}
    | {"--cacertdir", "--cert", "--key", "--tls-ciphers", "--pattern", "--count", "--quoted-pattern"}
    | {"--sni", "-t", "--memkeys-samples"}
)
#: flags that change nothing: output, connection, and the modes that only read
_FLAGS = frozenset(
    {"--raw", "--no-raw", "--csv", "--json", "--quoted-json", "-c", "-e", "-4", "-6", "--tls", "--insecure"}
    | {"--no-auth-warning", "--verbose", "--scan", "--bigkeys", "--memkeys", "--hotkeys", "--keystats"}
    | {"--stat", "--latency", "--latency-history", "--latency-dist", "--intrinsic-latency", "--resp2"}
    | {"--resp3", "-3", "-2", "--version", "-v", "--help"}
)
#: what a `redis-cli` with no command on its line does: its words show it only reads or asks
_MODES = frozenset({"--scan", "--bigkeys", "--memkeys", "--hotkeys", "--keystats", "--stat", "--latency"})


def redis_cli(name: str, args: Sequence[Word], stdin: str | None) -> ShellVerdict:
    """`redis-cli [options] [COMMAND args…]`; with no command, the commands `stdin` gives."""
    index = 0
    modes: list[str] = []
    while index < len(args) and (args[index].value or "").startswith("-"):
        option = str(args[index].value)
        if option in _VALUE_OPTIONS:
            if index + 1 < len(args) and not one_word(args[index + 1]):
                return ShellVerdict(False, f"`{word(name)} {word(option)}` with a value the shell may split")
            index += 2  # the value may be one quoted expansion (`-a "$REDIS_PASSWORD"`)
            continue
        if option not in _FLAGS and not option.startswith(("--latency", "--intrinsic")):
            return ShellVerdict(False, f"`{word(name)} {word(option)}`: an option the grammar does not read")
        modes.append(option)
        index += 1
    if index < len(args) and args[index].value is None:
        return ShellVerdict(False, f"`{word(name)}` with a command known only when the shell runs")
    command = [a.value for a in args[index:]]
    if not command:
        scanning = [m for m in modes if m in _MODES or m.startswith(("--latency", "--intrinsic"))]
        if scanning or modes in (["--version"], ["-v"], ["--help"]):
            return read(f"{name} {(scanning or modes)[0]}")
        if stdin is None:
            return ShellVerdict(
                False, f"`{word(name)}` reads its commands from standard input, which the command does not show"
            )
        return _commands_on_input(name, stdin)
    why = command_change([c if c is not None else "" for c in command], known=all(c is not None for c in command))
    if why is not None:
        return ShellVerdict(False, f"`{word(name)}`: {why}")
    return read(f"{name} {str(command[0]).lower()}")


def _commands_on_input(name: str, stdin: str) -> ShellVerdict:
    for line in stdin.split("\n"):
        try:
            words = shlex.split(line)
        except ValueError:
            return ShellVerdict(False, f"`{word(name)}`: a command on standard input the grammar cannot split")
        if words:
            why = command_change(words, known=True)
            if why is not None:
                return ShellVerdict(False, f"`{word(name)}` (commands on standard input): {why}")
    return read(f"{name} (commands on standard input)")


def command_change(words: list[str], known: bool) -> str | None:
    """None when one Redis command (its words) only reads, else why not. An argument only known
    when the shell runs is harmless unless it could be `STORE` (a key name or a pattern cannot)."""
    verb = words[0].lower()
    subcommands = READ_SUBCOMMANDS.get(verb)
    if subcommands is not None:
        sub = words[1].lower() if len(words) > 1 else ""
        if sub not in subcommands:
            return f"`{word(verb.upper())} {word(sub.upper())}` changes something"
    elif verb not in READ_COMMANDS:
        return f"`{word(verb.upper())}` changes keys or the server"
    if verb in ("sort", "georadius", "geosearch") or verb.startswith("zrange"):
        if not known or any(w.lower() in ("store", "storedist") for w in words[1:]):
            return f"`{word(verb.upper())}` with `STORE` writes its result"
    return None
