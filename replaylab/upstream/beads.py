"""beads (`bd`), the issue tracker coding agents keep their work in: which of its commands only read.

Agents that use it call it all the time: `bd ready` to find the next piece of work, `bd show ID`
to read it, `bd list`, `bd blocked`. beads itself says which commands only read: the commands it
opens its database read-only for.

Source: steveyegge/beads, `cmd/bd/main.go`, `readOnlyCommands`, at commit
0147032c524067dc883ba34cb35cac8be80596b6. beads checks the name of the command that runs (cobra's
`cmd.Name()`), so `bd comments ID` reads and `bd comments add ID TEXT`, whose command is `add`,
writes. Its `current` is `bd sync mode current`, a command under a group that writes, and is left
to the rules for any program.

A later beads release adds `bd ready --claim`, which claims the issue it shows. beads keeps
`ready` read-only there, and leaves the flag to its write path. replaylab calls it a write.
"""

from __future__ import annotations

SOURCE = "steveyegge/beads cmd/bd/main.go readOnlyCommands @0147032c"

#: the commands beads opens its database read-only for
READ_ONLY_COMMANDS = frozenset(
    {"list", "ready", "show", "stats", "blocked", "count", "search", "graph", "duplicates", "comments"}
)
#: commands that need no database and print only (`noDbCommands` that change nothing)
PRINTING_COMMANDS = frozenset({"version", "help"})
#: a read-only command's sub-command or flag that writes
WRITES_UNDER = {"comments": frozenset({"add"}), "ready": frozenset({"--claim"})}

#: the global flags that take a value (`--db PATH`)
GLOBAL_VALUE_FLAGS = frozenset({"--db", "--actor", "--lock-timeout", "--dolt-auto-commit"})
#: the global flags that make any command write a file, and what each writes
GLOBAL_WRITING_FLAGS = {
    "--no-db": "writes the issues back to their JSONL after the command",
    "--profile": "writes a CPU profile",
}
