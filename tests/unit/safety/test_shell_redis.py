"""`redis-cli` in the read-only shell grammar: a read command (on its line, or on standard input
the command shows) and the scanning modes read; a command that writes, runs a script or stores
its result, a dump to a file, input the command does not show and an option it does not know
are mutating, each named."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict
from replaylab.safety.shell_redis import READ_COMMANDS, READ_SUBCOMMANDS


@pytest.mark.parametrize(
    "command",
    [
        "redis-cli GET session:42",
        "redis-cli -n 2 KEYS 'job:*'",
        "redis-cli INFO memory | grep used_memory_human",
        'redis-cli -h cache -p 6380 -a "$REDIS_PASSWORD" --no-auth-warning HGETALL "user:$ID"',
        "redis-cli -u redis://localhost:6379/0 --raw LRANGE queue 0 10",
        "redis-cli CONFIG GET maxmemory && redis-cli SLOWLOG GET 10 && redis-cli CLIENT LIST",
        "redis-cli --scan --pattern 'sess:*' | head",
        "redis-cli --bigkeys",
        "redis-cli --raw --latency-history -i 5",
        "redis-cli <<'EOF'\nGET a\nTTL a\nXINFO STREAM events\nEOF",
        "echo 'PING' | redis-cli",
        "docker exec redis redis-cli DBSIZE",
        # quoted: bash would replace an unquoted `weight_*` by the names of the files it matches
        "redis-cli SORT list BY 'weight_*' LIMIT 0 5",
    ],
)
def test_a_redis_command_that_only_reads_reads(command: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert "`redis-cli" in verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("redis-cli DEL session:42", "`DEL` changes keys or the server"),
        ("redis-cli SET k v", "`SET` changes keys"),
        ("redis-cli FLUSHALL", "`FLUSHALL` changes keys"),
        ("redis-cli EVAL 'return 1' 0", "`EVAL` changes keys"),
        ("redis-cli CONFIG SET maxmemory 1gb", "`CONFIG SET` changes something"),
        ("redis-cli CLIENT KILL ID 7", "`CLIENT KILL` changes something"),
        ("redis-cli SORT list BY w STORE dst", "`SORT` with `STORE` writes its result"),
        ('redis-cli SORT list "$MORE"', "`SORT` with `STORE`"),  # the expansion could be STORE
        ("redis-cli <<'EOF'\nGET a\nDEL a\nEOF", "(commands on standard input): `DEL`"),
        ("redis-cli --rdb dump.rdb", "`redis-cli --rdb`: an option the grammar does not read"),
        ("redis-cli --pipe < commands.txt", "`redis-cli --pipe`"),
        ("redis-cli -x SET k < f", "`redis-cli -x`"),
        ("redis-cli --eval script.lua k", "`redis-cli --eval`"),
        ("redis-cli < commands.txt", "reads its commands from standard input, which the command does not show"),
        ('redis-cli "$CMD" k', "a command known only when the shell runs"),
        ("redis-cli SHUTDOWN NOSAVE", "`SHUTDOWN` changes keys or the server"),
    ],
)
def test_what_makes_redis_cli_mutating_is_named(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


def test_no_command_that_writes_is_among_the_reads() -> None:
    """The read lists hold no command of Redis's own write, admin or scripting groups."""
    writes = {"set", "del", "unlink", "expire", "rename", "flushall", "flushdb", "eval", "evalsha", "fcall"}
    writes |= {"hset", "lpush", "rpop", "sadd", "zadd", "xadd", "incr", "setex", "getdel", "getex", "copy", "move"}
    writes |= {"restore", "migrate", "shutdown", "save", "bgsave", "replicaof", "debug", "swapdb", "zrangestore"}
    assert not writes & READ_COMMANDS
    assert not {"set", "rewrite", "resetstat", "kill", "pause", "setname", "reset", "flush"} & set().union(
        *READ_SUBCOMMANDS.values()
    )
