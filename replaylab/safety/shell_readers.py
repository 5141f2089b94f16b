"""Read-only commands with options that write, run a program or change the system (`sort -o`,
`sed -i`, `awk` printing into a file, `tar` other than `-t`, `tree -o`, `xxd IN OUT` …): each
reads unless such an option is there (`crontab -l`, `ip` showing its objects, `kill -0`, `gzip -c`,
`mount` listing, `iptables -L`, `dmesg` without `-c`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from replaylab.safety.shell import ShellVerdict, word
from replaylab.safety.shell_awk import awk
from replaylab.safety.shell_programs import (
    IP_OBJECTS,
    IP_READ_ACTIONS,
    IP_VALUE_OPTIONS,
    SED_COMMAND,
    UNZIP_READS,
    XXD_VALUE_OPTIONS,
)
from replaylab.safety.shell_words import Inner, OptionCheck, Word, long_option, read, static
from replaylab.upstream import openclaw_2026_9_6 as OC96


def _sort(name: str, values: list[str]) -> ShellVerdict:
    if any(long_option(v, ("--output",)) or re.fullmatch(r"-[^-]*o.*", v) for v in values):
        return ShellVerdict(False, "`sort -o` writes a file")
    if any(long_option(v, ("--compress-program",)) for v in values):
        return ShellVerdict(False, "`sort --compress-program` runs a program")
    if any(long_option(v, ("--temporary-directory",)) or re.fullmatch(r"-[^-]*T.*", v) for v in values):
        # its temporary files stay there when sort is killed (`timeout -s KILL 1 sort -S 64k -T . big`)
        return ShellVerdict(False, "`sort -T` writes its temporary files into the folder it names")
    return read(name)


def _ulimit(name: str, values: list[str]) -> ShellVerdict:
    """`ulimit` shows limits, and sets them for what runs after it on the line: a core size above 0
    lets a crash write a `core` file, and a small stack, CPU time, memory or file size makes the next
    command die of a signal that dumps one (`ulimit -St 1; sha256sum /dev/zero`, `ulimit -s 16; ls`).
    Only the open files (`-n`) and processes (`-u`) may be set (no letter sets the file size)."""
    letters = {c for v in values if re.fullmatch(r"-[A-Za-z]+", v) for c in v[1:]} - {"S", "H"}
    if any(not re.fullmatch(r"-[A-Za-z]+", v) for v in values) and (not letters or letters - {"n", "u"}):
        return ShellVerdict(False, "`ulimit` sets a limit that makes what runs next crash or dump core")
    return read(name)


def _nm(name: str, values: list[str]) -> ShellVerdict:
    """`--plugin` loads a shared library, whose code runs; binutils read more options from the file
    an `@FILE` word names (`nm @opts`, `opts` holding `--plugin ./p.so`)."""
    for value in values:
        if long_option(value, ("--plugin",)) or value.startswith("@"):
            return ShellVerdict(
                False, f"`{word(name)} {word(value)}` loads a plugin (a shared library, whose code runs)"
            )
    return read(name)


def _refusing(options: frozenset[str], what: str) -> OptionCheck:
    """A reader with options that write, run a program or change the system: any of `options`
    (`--long` also as `--long=value`, a short one also inside a cluster) makes it mutating."""
    longs = {o for o in options if o.startswith("--")}
    shorts = "".join(o[1] for o in options if not o.startswith("--"))

    def check(name: str, values: list[str]) -> ShellVerdict:
        for value in values:
            if long_option(value, longs) or (
                shorts and value.startswith("-") and not value.startswith("--") and any(c in shorts for c in value[1:])
            ):
                return ShellVerdict(False, f"`{word(name)} {word(value)}` {what}")
        return read(name)

    return check


def _whole_word(options: frozenset[str], what: str) -> OptionCheck:
    """A reader whose options are whole words, never clusters (`ffprobe -of json`,
    `xmllint --noout`): any of `options`, also as `option=value`, makes it mutating."""

    def check(name: str, values: list[str]) -> ShellVerdict:
        for value in values:
            if value.split("=", 1)[0] in options:
                return ShellVerdict(False, f"`{word(name)} {word(value)}` {what}")
        return read(name)

    return check


#: nvidia-smi's options that only query (nvidia-smi(1)); the values after the second set's
_NVIDIA_SMI_QUERY_FLAGS = frozenset({"-q", "--query", "-L", "--list-gpus", "-x", "--xml-format", "-u", "--unit"})
_NVIDIA_SMI_QUERY_VALUED = frozenset(
    {"-i", "--id", "-d", "--display", "-l", "--loop", "-lms", "--loop-ms", "--format", "--query-gpu"}
    | {"--query-compute-apps", "--query-accounted-apps", "--query-retired-pages", "--query-supported-clocks"}
)


def _nvidia_smi(name: str, values: list[str]) -> ShellVerdict:
    """Reads with no option or with query options only; every other option or subcommand (`-pm`,
    `-pl`, `-r`, `-ac`, `-mig`, `-f FILE`, `mig`, `drain` …) sets the GPUs or writes a log."""
    index = 0
    while index < len(values):
        value = values[index]
        key = value.split("=", 1)[0]
        if value in _NVIDIA_SMI_QUERY_FLAGS:
            index += 1
        elif key in _NVIDIA_SMI_QUERY_VALUED:
            index += 1 if "=" in value else 2
        else:
            return ShellVerdict(False, f"`{word(name)} {word(value)}` sets the GPUs or writes a file")
    return read(name)


def _ifconfig(name: str, values: list[str]) -> ShellVerdict:
    """ifconfig(8): alone, with `-a`, `-s`, `-l`, `-v`, or with one interface's name, it shows;
    an address, `up`, `down` or any other word after the interface sets it."""
    operands = [v for v in values if not v.startswith("-")]
    if any(v not in ("-a", "-s", "-l", "-v") for v in values if v.startswith("-")) or len(operands) > 1:
        return ShellVerdict(False, f"`{word(name)} {' '.join(map(word, values))}` sets an interface")
    return read(name)


def _route(name: str, values: list[str]) -> ShellVerdict:
    """route(8): with options only (`-n`, `-e`, `-v`, `-A inet`) it shows the table, as BSD's
    `route get` and `route show` do; `add`, `del`, `flush`, `change` set it."""
    operands = [v for v in values if not v.startswith("-") and v not in ("inet", "inet6")]
    if operands and operands[0] not in ("get", "show"):
        return ShellVerdict(False, f"`{word(name)} {word(operands[0])}` changes the routing table")
    return read(name)


def _service(name: str, values: list[str]) -> ShellVerdict:
    """service(8): `service NAME status` and `service --status-all` show; any other action starts,
    stops or reloads the service."""
    if values in (["--status-all"],) or (len(values) == 2 and values[1] == "status" and "/" not in values[0]):
        return read(f"{name} status")
    return ShellVerdict(False, f"`{word(name)}` starts or stops services")


def _uniq(name: str, values: list[str]) -> ShellVerdict:
    cut = values.index("--") if "--" in values else len(values)
    operands = [v for v in values[:cut] if not v.startswith("-") or v == "-"] + values[cut + 1 :]
    if len(operands) > 1:
        return ShellVerdict(False, "`uniq IN OUT` writes its second operand")
    return read(name)


def _sed(name: str, values: list[str]) -> ShellVerdict:
    scripts: list[str] = []
    explicit = False
    index = 0
    while index < len(values):
        value = values[index]
        if long_option(value, ("--in-place",)) or re.fullmatch(r"-[a-zA-Z]*i.*", value):
            return ShellVerdict(False, "`sed -i` edits files in place")
        if long_option(value, ("--file",)) or re.fullmatch(r"-[a-zA-Z]*f.*", value):
            return ShellVerdict(False, "`sed -f` runs a script file the command does not show")
        if re.fullmatch(r"-[a-zA-Z]*e.+", value) and not value.startswith("--"):  # `-es/a/b/w f`, `-nep`
            scripts.append(value[value.index("e") + 1 :])
            explicit = True
            index += 1
            continue
        if re.fullmatch(r"-[a-zA-Z]*e", value) and not value.startswith("--"):
            value = "-e"
        if long_option(value, ("--expression",)) and "=" not in value:
            value = "-e"
        if value in ("-e", "--expression"):
            if index + 1 < len(values):
                scripts.append(values[index + 1])
            explicit = True
            index += 2
            continue
        if long_option(value, ("--expression",)):
            scripts.append(value.split("=", 1)[1])
            explicit = True
        elif not value.startswith("-") and not explicit and not scripts:
            scripts.append(value)
        index += 1
    if not scripts:
        return ShellVerdict(False, "`sed` without a script it can read")
    for script in scripts:
        if not _sed_reads(script):
            return ShellVerdict(False, f"a sed script other than print / delete / substitute (`{word(script)}`)")
    return read("sed")


def _sed_reads(script: str) -> bool:
    """Every command of the script prints, deletes, quits or substitutes (no `w`, `e`, `r`)."""
    for part in re.split(r"[;\n]", script):
        if part.strip() and not SED_COMMAND.fullmatch(part):
            return False
    return True


def _rg(name: str, values: list[str]) -> ShellVerdict:
    """OpenClaw's rule: `--pre`, `--pre-glob`, `--hostname-bin` run programs, `-z` reads archives."""
    for value in values:
        flag = value.lower().split("=", 1)[0]
        if flag in OC96.UNSAFE_RG_FLAGS:
            return ShellVerdict(False, f"`rg {word(flag)}` runs other programs or reads archives")
    return read(name)


#: `date` options followed by a value in the next word when none is attached
_DATE_VALUE_OPTIONS = ("--date", "--file", "--reference", "--set", "--rfc-3339")


def _date(name: str, values: list[str]) -> ShellVerdict:
    if any(v == "-s" or long_option(v, ("--set",)) or re.fullmatch(r"-[uR]*s.*", v) for v in values):
        return ShellVerdict(False, "`date -s` sets the clock")
    # an operand that is no `+FORMAT` sets the clock (`date 010101012020`, `date -u 01010101`)
    at, ended = 0, False
    while at < len(values):
        value = values[at]
        if not ended and value == "--":
            ended = True
        elif not ended and value.startswith("--") and len(value) > 2:
            at += 1 if "=" not in value and long_option(value, _DATE_VALUE_OPTIONS) else 0
        elif not ended and value.startswith("-") and len(value) > 1:
            at += 1 if re.fullmatch(r"-[uRI]*[dfr]", value) else 0
        elif not value.startswith("+"):
            return ShellVerdict(False, "`date MMDDhhmm…` sets the clock")
        at += 1
    return read(name)


def _hostname(name: str, values: list[str]) -> ShellVerdict:
    if any(
        not v.startswith("-") or v.split("=", 1)[0] in ("-F", "-b") or long_option(v, ("--file", "--boot"))
        for v in values
    ):
        return ShellVerdict(False, "`hostname NAME` sets the host name")
    return read(name)


#: tar's options that run a program or write a file even when it only lists (GNU tar's manual)
_TAR_RUNS_OR_WRITES = (
    "--checkpoint-action", "--use-compress-program", "--index-file", "--to-command", "--rsh-command",
    "--info-script", "--new-volume-script", "--volno-file", "--listed-incremental", "--force-local",
    "--rmt-command",
)  # fmt: skip


def _tar(name: str, values: list[str]) -> ShellVerdict:
    first = values[0] if values else ""
    for value in values[1:]:
        if long_option(value, _TAR_RUNS_OR_WRITES) or re.fullmatch(r"-[A-Za-z]*[IFgL].*", value):
            return ShellVerdict(False, f"`tar {word(value)}` runs a program or writes a file")
        archive = value.split("=", 1)[1] if long_option(value, ("--file",)) and "=" in value else value
        if ":" in archive.split("/", 1)[0] and (archive is not value or not value.startswith("-")):
            return ShellVerdict(False, f"`tar` with a remote archive `{word(value)}` (runs rsh/ssh)")
    if first in ("-t", "--list", "-tf", "-tzf", "-tvf", "-tzvf", "-tvzf") or re.fullmatch(r"-?t[vzjJf]*", first):
        return read("tar -t")
    return ShellVerdict(False, "`tar` other than `-t` writes archives or extracts files")


#: less's options that copy what it shows to a file, or load key bindings and environment
#: settings (a lesskey file's `#env` sets `LESSOPEN`, an input preprocessor less runs)
_LESS_REFUSED = frozenset({"-o", "-O", "-k", "--log-file", "--LOG-FILE", "--lesskey-file", "--lesskey-src"})
_less_options = _refusing(_LESS_REFUSED | {"--lesskey-content"}, "copies what it shows to a file or runs a program")


def _less(name: str, values: list[str]) -> ShellVerdict:
    """less: `+CMD` runs CMD as keys typed at the start (`+!cmd` a shell command, `+|` a pipe, `+s`
    saves): only a line number, `G`, `F` or a search reads."""
    for value in values:
        if value.startswith("+") and not re.fullmatch(r"\+\+?(?:[0-9]*[GgFPp%]?|[/?][^\r\n]*)", value):
            return ShellVerdict(
                False, f"`{word(name)} {word(value)}` runs less commands at its start (`!`, `|`, `s` …)"
            )
    return _less_options(name, values)


def _bat(name: str, values: list[str]) -> ShellVerdict:
    """bat: `cache --build|--clear` writes or removes its cache, `--pager` runs a program."""
    if values[:1] == ["cache"]:
        return ShellVerdict(False, f"`{word(name)} cache` builds or clears its cache")
    # `--generate-config-file` writes `~/.config/bat/config`
    return _refusing(frozenset({"--pager", "--generate-config-file"}), "runs its pager program or writes its config")(
        name, values
    )


def _xxd(name: str, values: list[str]) -> ShellVerdict:
    operands, index = [], 0
    while index < len(values):
        if values[index] == "--":
            operands.extend(values[index + 1 :])
            break
        if values[index] in XXD_VALUE_OPTIONS:
            index += 2
            continue
        if not values[index].startswith("-") or values[index] == "-":
            operands.append(values[index])
        index += 1
    if len(operands) > 1:
        return ShellVerdict(False, "`xxd IN OUT` writes its output file")
    return read(name)


def _yq(name: str, values: list[str]) -> ShellVerdict:
    for value in values:
        option = value.split("=", 1)[0]
        if option in ("--inplace", "--in-place", "--split-exp", "--split-exp-file") or re.fullmatch(
            r"-[A-Za-z]*[is][A-Za-z]*", value
        ):
            return ShellVerdict(False, f"`yq {word(value)}` writes files")
    return read(name)


def _unzip(name: str, values: list[str]) -> ShellVerdict:
    if values and values[0] in UNZIP_READS:
        return read(f"unzip {values[0]}")
    return ShellVerdict(False, "`unzip` other than a listing, a test or `-p` extracts files")


def _top(name: str, values: list[str]) -> ShellVerdict:
    # interactive, `top` takes keys that signal and renice processes; in batch mode it only prints
    if any(re.fullmatch(r"-[A-Za-z0-9]*b[A-Za-z0-9]*", v) for v in values):
        return read("top -b")
    return ShellVerdict(False, "`top` without `-b` is interactive: its keys signal and renice processes")


def _journalctl(name: str, values: list[str]) -> ShellVerdict:
    if any(
        v.startswith(
            ("--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--setup-keys")
            + ("--update-catalog", "--smart-relinquish", "--cursor-file")
        )
        or long_option(v, ("--vacuum-size", "--vacuum-files", "--vacuum-time", "--rotate", "--flush", "--sync"))
        or long_option(v, ("--relinquish-var", "--setup-keys", "--update-catalog", "--smart-relinquish-var"))
        or long_option(v, ("--cursor-file",))
        for v in values
    ):
        # `--update-catalog` writes the catalog database, `--cursor-file` the cursor it ends at (its manual)
        return ShellVerdict(False, "`journalctl` maintenance option changes the journal (or writes a file)")
    return read(name)


def _dpkg(name: str, values: list[str]) -> ShellVerdict:
    if values and values[0] in (
        "-l",
        "-L",
        "-s",
        "-S",
        "--list",
        "--listfiles",
        "--status",
        "--search",
        "-p",
        "--print-avail",
    ):
        return read(f"dpkg {values[0]}")
    return ShellVerdict(False, "`dpkg` other than a query installs or removes packages")


def _crontab(name: str, values: list[str]) -> ShellVerdict:
    rest = values[2:] if values[:1] == ["-u"] else values
    if rest == ["-l"]:
        return read("crontab -l")
    return ShellVerdict(False, "`crontab` other than `-l` edits, replaces or removes the crontab")


def _ip(name: str, values: list[str]) -> ShellVerdict:
    operands: list[str] = []
    index = 0
    while index < len(values):
        value = values[index]
        given = value.lstrip("-")
        if (
            value.startswith("-")
            and given
            and any(full.startswith(given) for full in ("netns", "batch", "force" if len(given) > 1 else ""))
        ):
            return ShellVerdict(False, f"`ip {word(value)}` runs in another namespace or reads commands from a file")
        if value in IP_VALUE_OPTIONS:
            index += 1
        elif not value.startswith("-"):
            operands.append(value)
        index += 1
    obj = operands[0] if operands else None
    action = operands[1] if len(operands) > 1 else None
    if obj in IP_OBJECTS and (action is None or action in IP_READ_ACTIONS):
        return read(f"ip {obj}" + (f" {action}" if action else ""))
    if obj is None:
        return ShellVerdict(False, "`ip` without an object")
    if obj not in IP_OBJECTS:
        return ShellVerdict(False, f"`ip {word(obj)}`: an object the grammar does not read")
    return ShellVerdict(False, f"`ip {word(obj)} {word(action or '')}` changes the network")


def _kill(name: str, values: list[str]) -> ShellVerdict:
    """`kill -0 PID…` asks whether a process exists (signal 0 is never sent) and `kill -l` lists
    the signals; any other `kill` signals processes."""
    if values[:1] in (["-l"], ["-L"], ["--list"]):
        return read(f"kill {values[0]}")
    # bash's `kill` reads `-s SIG` / `-n SIG` after the first signal too (`kill -0 -s KILL PID`)
    rest = values[1:] if values[:1] == ["-0"] else values[2:] if values[:2] in (["-s", "0"], ["-n", "0"]) else None
    if rest is not None and all(re.fullmatch(r"[0-9]+|%[0-9A-Za-z+-]*", v) for v in rest):
        return read("kill -0")
    return ShellVerdict(False, "`kill` signals processes")


#: per compressor, the short options that keep it off the files: to standard output, list, test
_COMPRESSOR_READS = {
    "gzip": "clt", "gunzip": "clt", "pigz": "clt", "unpigz": "clt", "bzip2": "ct", "bunzip2": "ct",
    "xz": "clt", "unxz": "clt", "zstd": "clt", "unzstd": "clt",
}  # fmt: skip
_COMPRESSOR_LONG_READS = frozenset({"--stdout", "--to-stdout", "--list", "--test"})
#: options that write a file even to standard output (`zstd -o`), or remove the source
#: (zstd's `--trace LOG` writes its log)
_COMPRESSOR_WRITES = frozenset({"--output-dir-flat", "--output-dir-mirror", "--rm", "--output", "--trace"})


def _compressor(name: str, values: list[str]) -> ShellVerdict:
    """A compressor writing to standard output (`-c`), listing (`-l`) or testing (`-t`) reads;
    otherwise it replaces its files."""
    letters: set[str] = set()
    longs: set[str] = set()
    for value in values:
        if value == "--":
            break  # the rest are files (`gzip -- -c f` compresses `-c` and `f`)
        if value.startswith("--"):
            longs.add(value.split("=", 1)[0])
        elif value.startswith("-") and value != "-":
            letters.update(value[1:])
    if "o" in letters or longs & _COMPRESSOR_WRITES or any(long_option(v, tuple(_COMPRESSOR_WRITES)) for v in longs):
        return ShellVerdict(False, f"`{word(name)}` writes an output file or removes its input")
    # the last mode option wins (xz, bzip2, zstd): `-t -z` compresses, `-l -d` decompresses
    modes = {"z", "d"} & letters or {
        v for v in longs if long_option(v, ("--compress", "--decompress", "--uncompress", "--train"))
    }
    if modes and "c" not in letters and not longs & {"--stdout", "--to-stdout"}:
        return ShellVerdict(False, f"`{word(name)}` with a mode that writes files (`{sorted(modes)[0]}`)")
    kept = sorted(letters & set(_COMPRESSOR_READS[name])) or sorted(longs & _COMPRESSOR_LONG_READS)
    if kept:
        return read(f"{name} {'-' if len(kept[0]) == 1 else ''}{kept[0]}")
    return ShellVerdict(False, f"`{word(name)}` replaces its files with their (de)compressed form")


def _mount(name: str, values: list[str]) -> ShellVerdict:
    """`mount` alone, with `-l`, or `-t TYPE` lists what is mounted; anything else mounts."""
    index = 0
    while index < len(values):
        if values[index] in ("-l", "--show-labels"):
            index += 1
        elif values[index] in ("-t", "--types") and index + 1 < len(values):
            index += 2
        else:
            return ShellVerdict(False, "`mount` mounts file systems")
    return read("mount")


_IPTABLES_LIST_LETTERS = frozenset("LSnvxw")
_IPTABLES_LIST_LONG = frozenset({"--list", "--list-rules", "--numeric", "--verbose", "--exact", "--line-numbers"})


def _iptables(name: str, values: list[str]) -> ShellVerdict:
    """`iptables -L|-S [CHAIN]` lists the rules (`-n`, `-v`, `-x`, `--line-numbers`, `-t TABLE`);
    anything else (`-A`, `-D`, `-F`, `-Z` …) changes the firewall."""
    listed = False
    index = 0
    while index < len(values):
        value = values[index]
        if value in ("-t", "--table"):
            index += 2
            continue
        if value.startswith("--"):
            if value.split("=", 1)[0] not in _IPTABLES_LIST_LONG | {"--wait"}:
                return ShellVerdict(False, f"`{word(name)} {word(value)}` changes the firewall")
            listed = listed or value in ("--list", "--list-rules")
        elif value.startswith("-"):
            if not set(value[1:]) <= _IPTABLES_LIST_LETTERS:
                return ShellVerdict(False, f"`{word(name)} {word(value)}` changes the firewall")
            listed = listed or bool(set(value[1:]) & {"L", "S"})
        index += 1
    if not listed:
        return ShellVerdict(False, f"`{word(name)}` without `-L` or `-S` changes the firewall")
    return read(f"{name} -L")


_MAN_RUNS = _refusing(
    frozenset({"-P", "--pager", "-H", "--html", "-X", "--gxditview", "-T", "--troff-device", "-t", "--troff"})
    | {"-Z", "--ditroff", "-p", "--preprocessor"}
    # a configuration file's `DEFINE tbl …` names the formatters it runs; `-c` writes cat pages
    | {"-C", "--config-file", "-c", "--catman"},
    "runs a pager, browser or formatter of its own choosing, or writes cat pages",
)
#: man-db's options that only name where pages are, or search their index: no page is formatted
_MAN_LOCATES = frozenset({"-w", "--where", "--path", "--location", "-W", "--where-cat", "--location-cat"})


def _man(name: str, values: list[str]) -> ShellVerdict:
    """man-db: a page it formats from a hierarchy `-M DIR` names is cached in that hierarchy's
    `catN` folder (man-db's `man.c`: a cat page is saved beside a writable man hierarchy), unless
    it only locates pages (`-w`)."""
    refused = _MAN_RUNS(name, values)
    if not refused.read_only or any(long_option(v, _MAN_LOCATES) or v in ("-w", "-W") for v in values):
        return refused
    return _refusing(frozenset({"-M", "--manpath"}), "formats pages of a hierarchy it names, and caches them there")(
        name, values
    )


def _whois(name: str, values: list[str]) -> ShellVerdict:
    """whois sends its query, as given, to a server: `-p PORT`, or `-h HOST:PORT`, makes that any
    listener's port (`whois -h 127.0.0.1 -p 6379 'DEL k'` sends `DEL k` to a Redis)."""
    for at, value in enumerate(values):
        if long_option(value, ("--port",)) or (value.startswith("-") and not value.startswith("--") and "p" in value):
            return ShellVerdict(False, f"`{word(name)} {word(value)}` sends its query to a port of its choosing")
        host = value.split("=", 1)[1] if long_option(value, ("--host",)) and "=" in value else None
        if host is None and (value == "--host" or (value.startswith("-h") and not value.startswith("--"))):
            host = value[2:] if value.startswith("-h") and len(value) > 2 else " ".join(values[at + 1 : at + 2])
        if host is not None and ":" in host:
            return ShellVerdict(False, f"`{word(name)} -h {word(host)}` sends its query to a port of its choosing")
    return read(name)


#: the readers whose options decide, by the name they run as
READERS: dict[str, Callable[[str, list[Word], Inner], ShellVerdict]] = {
    "sort": static(_sort),
    "ulimit": static(_ulimit),
    "uniq": static(_uniq),
    "sed": static(_sed),
    "gsed": static(_sed),
    "awk": static(awk),
    "gawk": static(awk),
    "mawk": static(awk),
    "rg": static(_rg),
    "date": static(_date),
    "hostname": static(_hostname),
    "tar": static(_tar),
    "dpkg": static(_dpkg),
    "journalctl": static(_journalctl),
    # `-R` (with `-H`) runs tree again in every folder with `-o 00Tree.html`
    "tree": static(_refusing(frozenset({"-o", "-R"}), "writes its listing to a file")),
    "nm": static(_nm),
    "bat": static(_bat),
    "batcat": static(_bat),
    "man": static(_man),
    "whois": static(_whois),
    "less": static(_less),
    "ss": static(_refusing(frozenset({"-K", "--kill", "-D", "--diag"}), "closes sockets or dumps them to a file")),
    "history": static(_refusing(frozenset({"-w", "-a"}), "writes the history file")),
    "file": static(_refusing(frozenset({"-C", "--compile"}), "compiles a magic file")),
    "ack": static(_refusing(frozenset({"--pager"}), "runs its pager program")),
    "ag": static(_refusing(frozenset({"--pager"}), "runs its pager program")),
    "xxd": static(_xxd),
    "yq": static(_yq),
    "unzip": static(_unzip),
    "top": static(_top),
    "crontab": static(_crontab),
    "ip": static(_ip),
    "kill": static(_kill),
    "mount": static(_mount),
    "iptables": static(_iptables),
    "ip6tables": static(_iptables),
    "iptables-save": static(_refusing(frozenset({"-f", "--file"}), "writes the rules to a file")),
    "dmesg": static(
        _refusing(
            frozenset({"-c", "--read-clear", "-C", "--clear", "-D", "--console-off", "-E", "--console-on", "-n"})
            | {"--console-level"},
            "clears the kernel's messages or sets the console",
        )
    ),
    **{name: static(_compressor) for name in _COMPRESSOR_READS},
    # the options that write come from each tool's own manual
    "cloc": static(
        _refusing(
            frozenset({"--report-file", "--out", "--sql", "--write-lang-def", "--write-lang-def-incl-dup"})
            | {"--categorized", "--counted", "--ignored", "--found", "--unique", "--extract-with"},
            "writes a report or list file, or runs an extractor",
        )
    ),
    "scc": static(_refusing(frozenset({"-o", "--output", "--format-multi"}), "writes its report to a file")),
    "ffprobe": static(_whole_word(frozenset({"-o", "-report"}), "writes its output or a report to a file")),
    "xmllint": static(_whole_word(frozenset({"-o", "--output", "--shell"}), "writes a file (or opens its shell)")),
    "base64": static(_refusing(frozenset({"-o", "--output"}), "writes a file")),
    "iconv": static(_refusing(frozenset({"-o", "--output"}), "writes a file")),
    "tldr": static(
        _refusing(
            frozenset({"-u", "--update", "--update_cache", "--update-cache", "-c", "--clear-cache", "--seed-config"}),
            "updates or clears its cache of pages",
        )
    ),
    "nvidia-smi": static(_nvidia_smi),
    "shuf": static(_refusing(frozenset({"-o", "--output"}), "writes a file")),
    "ifconfig": static(_ifconfig),
    "route": static(_route),
    "arp": static(_refusing(frozenset({"-d", "-s", "-f", "--delete", "--set", "--file"}), "changes the ARP cache")),
    "service": static(_service),
}
