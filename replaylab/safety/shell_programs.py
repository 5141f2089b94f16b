"""The programs the read-only shell grammar knows, as data: readers, writers, program runners, and
the read subcommands and options of the tools agents run most (git, npm, pip, docker, kubectl,
gh, PowerShell, ...)."""

from __future__ import annotations

import re

#: commands that only read (or only print), whatever their operands
READ_ONLY = frozenset(
    {
        "cat", "tac", "head", "tail", "wc", "ls", "dir", "pwd", "grep", "egrep", "fgrep", "zgrep", "zcat", "ag",
        "ack", "echo", "printf", "true", "false", ":", "which", "whereis", "whoami", "id",
        "groups", "uname", "uptime", "printenv", "ps", "pgrep", "pidof", "df", "du", "free", "file",
        "basename", "dirname", "realpath", "readlink", "stat", "diff", "cmp", "comm", "cut", "tr", "nl",
        "column", "less", "more", "jq", "tree", "nproc", "locale", "cal", "seq", "test", "[", "type",
        "sleep", "md5sum", "sha1sum", "sha256sum", "sha512sum", "shasum", "cksum", "b2sum", "od",
        "hexdump", "strings", "lsof", "getconf", "rev", "fold", "paste", "join", "expand", "unexpand",
        "numfmt", "expr", "fd", "locate", "w", "who", "last", "vmstat", "iostat", "netstat", "ss",
        "lscpu", "lsblk", "cd", "pushd", "popd", "dirs", "set", "shopt", "wait", "jobs", "history",
        "dig", "host", "nslookup", "zipinfo", "ping", "ping6", "traceroute", "tracepath", "lsb_release",
        "arch", "tty", "logname", "users", "getent", "bat", "batcat", "eza", "exa", "lsd", "lsusb", "lspci",
        "lsmod", "pstree", "findmnt", "lshw", "shellcheck", "ulimit", "umask", "whatis", "apropos",
        "envsubst", "sensors", "sw_vers",
        # shell builtins that only read standard input into variables (`while read line; do …`)
        "read", "mapfile", "readarray",
        # binary and source inspectors (binutils, cctools, tokei, ImageMagick, poppler): print only
        "nm", "readelf", "objdump", "size", "otool", "tokei", "identify", "pdfinfo",
        # coreutils' text formatters, which print
        "fmt", "pr",
    }
)  # fmt: skip


#: wrappers whose own options are skipped before the command they run
WRAPPER_VALUE_OPTIONS = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "command": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "sudo": frozenset(
        {"-u", "--user", "-g", "--group", "-U", "--other-user", "-p", "--prompt", "-h", "--host", "-C"}
        | {"--close-from", "-D", "--chdir", "-r", "--role", "-t", "--type", "-T", "--command-timeout"}
    ),
    "doas": frozenset({"-u", "-C"}),
    "xargs": frozenset(
        {"-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "--max-args", "--max-lines", "--max-procs", "--delimiter"}
        | {"--eof", "--arg-file", "--max-chars", "--replace", "--process-slot-var"}
    ),
}


#: options of `sudo` / `doas` that do something of their own rather than run the command as
#: given: edit files, run a login or interactive shell
ELEVATION_CHANGES = frozenset({"-e", "--edit", "-s", "--shell", "-i", "--login"})

#: `ssh` options followed by a value that neither forwards, runs a local command nor writes a file
SSH_VALUE_OPTIONS = frozenset({"-B", "-b", "-c", "-i", "-J", "-l", "-m", "-p", "-S"})
#: `ssh` flags that change nothing on either side
SSH_FLAGS = frozenset("46AaCgKkqTtVvXxYn")
#: `ssh -o` settings that only tune the connection (others run local commands, forward ports,
#: or share the connection: `ProxyCommand`, `LocalCommand`, `LocalForward`, `ControlMaster` …)
SSH_READ_SETTINGS = frozenset(
    {"connecttimeout", "batchmode", "stricthostkeychecking", "loglevel", "serveraliveinterval"}
    | {"serveralivecountmax", "identitiesonly", "port", "user", "identityfile", "connectionattempts"}
    | {"compression", "addressfamily", "userknownhostsfile", "passwordauthentication", "preferredauthentications"}
    | {"hostname", "tcpkeepalive", "requesttty"}
)

#: programs that change the world by design, named in the reason
WRITERS = {
    "rm": "removes files", "rmdir": "removes folders", "mv": "moves files", "cp": "copies files",
    "mkdir": "creates folders", "touch": "creates or touches files", "chmod": "changes permissions",
    "chown": "changes owners", "chgrp": "changes groups", "ln": "creates links", "dd": "writes devices or files",
    "tee": "writes files", "truncate": "truncates files", "install": "installs files", "shred": "destroys files",
    "kill": "signals processes", "pkill": "signals processes", "killall": "signals processes",
    "scp": "copies files between hosts", "rsync": "copies files", "patch": "edits files",
    "shutdown": "stops the machine", "reboot": "restarts the machine",
    "mount": "mounts file systems", "umount": "unmounts file systems", "useradd": "adds users",
    "passwd": "changes passwords", "open": "opens files in other programs", "xdg-open": "opens files in other programs",
    "vi": "edits files", "vim": "edits files", "nano": "edits files", "emacs": "edits files", "code": "opens an editor",
    "gzip": "compresses files in place", "gunzip": "decompresses files in place",
    "zip": "writes archives", "nohup": "writes nohup.out and runs a command", "split": "writes files",
"su": "switches user",
    "exec": "replaces the shell", "source": "runs a script",
    ".": "runs a script", "eval": "runs text as commands", "watch": "runs a command repeatedly",
    "trap": "runs commands on signals", "alias": "defines commands", "at": "schedules commands",
    "systemd-run": "runs a command as a unit", "service": "starts or stops services", "launchctl": "manages services",
    # a file operand or a command a read verb names (`unlink log`, `flock log -c cmd`) is no subcommand
    "unlink": "removes files", "mkfifo": "creates FIFOs", "mknod": "creates device files",
    "csplit": "writes the pieces it splits a file into", "mkswap": "writes a swap signature",
    "wipefs": "erases signatures", "gzexe": "compresses executables in place", "ar": "writes archives",
    "ed": "edits files", "ex": "edits files", "nvim": "edits files", "sponge": "writes files",
    "flock": "creates its lock file and runs a command", "prlimit": "sets resource limits (a `core` file)",
    "valgrind": "runs a program and writes its log", "logger": "writes the system log",
    "setsid": "runs a command", "stdbuf": "runs a command", "ionice": "runs a command", "unshare": "runs a command",
    # bash's `coproc` and `strace` run the command after them, whose first word may be a read verb (`coproc view …`)
    "coproc": "runs a command as a coprocess", "strace": "runs a command (or attaches to a process) to trace it",
    "nsenter": "runs a command", "fakeroot": "runs a command", "taskset": "runs a command", "chrt": "runs a command",
    "savelog": "rotates log files", "link": "creates links", "lzma": "compresses files in place",
    "unlzma": "decompresses files in place", "lz4": "writes compressed files", "unlz4": "writes files",
    "lz4c": "writes compressed files", "pzstd": "writes compressed files", "zstdmt": "writes compressed files",
    "uncompress": "decompresses files in place", "bzip2recover": "writes files", "znew": "recompresses files",
    "zforce": "renames files", "ctags": "writes a tags file", "etags": "writes a tags file",
    "cscope": "writes its database", "gpg": "writes its keyring or files", "gpgsplit": "writes files",
    "gpgtar": "writes archives", "red": "edits files", "rvim": "edits files", "view": "edits files",
    "vimdiff": "edits files", "vim.basic": "edits files", "editor": "edits files", "sensible-editor": "edits files",
    "msgfmt": "writes compiled catalogs", "msgmerge": "writes files", "msginit": "writes files",
    "tic": "writes compiled terminfo", "py3compile": "writes byte code", "py3clean": "removes byte code",
    "pygettext3": "writes a template", "zipsplit": "writes archives", "zipnote": "edits archives",
    "zipcloak": "encrypts archives", "dpkg-split": "writes files", "dpkg-name": "renames packages",
    "dpkg-deb": "builds or extracts packages", "swapon": "enables swap", "swapoff": "disables swap",
    "losetup": "sets up loop devices", "chattr": "changes file attributes", "setcap": "changes file capabilities",
    "e4defrag": "moves file data", "fstrim": "discards blocks", "blkdiscard": "discards blocks",
    "createdb": "creates databases", "dropdb": "drops databases", "createuser": "creates roles",
    "dropuser": "drops roles", "initdb": "creates a database cluster", "pg_ctl": "starts or stops servers",
    "skill": "signals processes", "snice": "renices processes", "killall5": "signals processes",
    "xkill": "kills clients", "renice": "renices processes", "wall": "writes to every terminal",
    "write": "writes to a terminal", "mesg": "changes the terminal", "halt": "stops the machine",
    "poweroff": "stops the machine", "telinit": "changes the run level", "ctrlaltdel": "changes the machine",
    "hwclock": "sets the clock", "sysctl": "sets kernel parameters", "ldconfig": "writes the linker cache",
    "locale-gen": "writes locales", "adduser": "adds users", "deluser": "removes users", "addgroup": "adds groups",
    "delgroup": "removes groups", "userdel": "removes users", "usermod": "changes users", "groupadd": "adds groups",
    "groupdel": "removes groups", "groupmod": "changes groups", "chpasswd": "changes passwords",
    "chage": "changes password ages", "chfn": "changes users", "chsh": "changes shells", "gpasswd": "changes groups",
    "newusers": "adds users", "ipcrm": "removes IPC objects", "start-stop-daemon": "starts or stops daemons",
}  # fmt: skip


#: programs that run other programs (scripts, builds, tests, packages): unknown effects
RUNNERS = frozenset(
    {
        "python", "python2", "python3", "node", "deno", "bun", "bunx", "tsx", "ts-node", "ruby", "perl", "php",
        "java", "dotnet", "make", "just", "task", "npx", "pnpx", "mvn", "gradle", "gradlew", "ant", "rake",
        "bundle", "poetry", "uv", "pipenv", "tox", "nox", "invoke", "mix", "elixir", "iex", "erl", "rebar3",
        "swift", "osascript", "ansible", "ansible-playbook", "terraform", "pulumi", "helm", "lua", "R", "Rscript",
        "julia", "cmake", "ninja", "meson", "bazel", "pytest", "jest", "vitest", "mocha", "tsc", "tsgo", "eslint",
        "prettier", "biome", "ruff", "black", "cargo-watch", "nodemon", "bash", "sh", "zsh", "fish",
        "dash", "ksh", "cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh", "pwsh.exe",
        # task runners and build tools whose first word may be a task of the project's own (`turbo
        # status`, `nx status app`, `gulp list`), or that load the project's code on every command
        # (`cdk ls` synthesizes the app, `vagrant status` runs the Vagrantfile, `sbt show x` runs x)
        "mage", "grunt", "gulp", "doit", "inv", "scons", "waf", "sbt", "lein", "clj", "clojure", "bb", "mill",
        "fastlane", "earthly", "dagger", "vagrant", "cdk", "nx", "turbo",
        # `script -c CMD [FILE]` runs CMD through `$SHELL` and always writes a typescript (`./typescript`)
        "script",
        # other names of the interpreters and builders above, and programs that run the program,
        # script or folder they are given (`gmake diff`, `nodejs status`, `run-parts logs`), never a subcommand
        "gmake", "nodejs", "jshell", "jrunscript", "run-parts", "prove", "cpan", "ctest", "cpack", "heaptrack",
        "memusage", "sotruss", "gdb", "gdbtui", "ltrace", "catchsegv", "xvfb-run", "linux32", "linux64",
        "setarch", "i386", "x86_64", "runcon", "sg", "setpriv", "chroot", "capsh", "choom", "systemd-inhibit",
        "dbus-run-session", "fakeroot-sysv", "fakeroot-tcp", "busybox", "toybox", "hyperfine", "parallel",
        "entr", "rlwrap", "expect", "unbuffer", "tsp", "proot", "firejail", "bwrap", "ssh-agent", "faketime",
        "numactl", "runuser",
        # `perf stat CMD` / `perf trace CMD` run CMD, and `--pre` / `--post` run more (perf 6.1)
        "perf",
    }
)  # fmt: skip
#: versioned or prefixed names of interpreters, compilers, binutils that rewrite their file and file-system
#: makers (`perl5.36.0`, `tclsh8.6`, `pydoc3.11`, `gcc-12`, `x86_64-linux-gnu-strip`, `mkfs.ext4`): runners
RUNNER_FAMILIES = re.compile(
    r"(?:perl|tclsh|wish|pydoc|pdb|lli|ruby|php|lua|gcc|g\+\+|cc|c\+\+|c89|c99|clang|cpp)[0-9.-]*"
    r"|(?:[\w.]+-)?(?:strip|objcopy|ld|as|ar|ranlib|elfedit|gcc|g\+\+|cpp|gold|dwp|lto-dump)(?:[.-][\w.]+)?"
    r"|mkfs(?:\.\w+)?|fsck(?:\.\w+)?|mke2fs|e2fsck|tune2fs|resize2fs|e2label|debugfs|e2image|e2undo"
)


#: a program runner's own flag that only prints its version, where it is not `--version` / `-V`
RUNNER_VERSION_FLAGS = {
    "node": "-v", "bun": "-v", "deno": "-v", "ruby": "-v", "perl": "-v", "php": "-v", "tsc": "-v", "java": "-version",
}  # fmt: skip


#: runners whose `version` is a subcommand that prints it: for any other runner `version` is what
#: it runs (`make version` a target, `python version` a file, `npx version` a package)
RUNNER_VERSION_SUBCOMMANDS = frozenset({"helm", "terraform", "pulumi", "uv", "poetry", "bundle"})


#: writers that are the shell's own commands: an operand `--help` is theirs to read (a file)
SHELL_BUILTIN_WRITERS = frozenset({".", "source", "eval", "exec", "trap", "alias"})


#: first words after an unknown program that ask it only to show something
READ_VERBS = frozenset(
    {"show", "list", "ls", "status", "view", "info", "describe", "search", "inspect", "version", "help", "diff"}
    | {"log", "logs", "cat", "get-url", "whoami", "stat", "stats", "outdated", "tree", "why", "explain", "doctor"}
    | {"ps", "ping", "health", "read"}
)


#: read verbs that start a dashed subcommand (`describe-instances`, `list-buckets`)
DASHED_READ_VERBS = frozenset({"describe", "list"})
#: groups that hold settings: a dashed `get-…` there reads one (`gcloud config get-value project`);
#: a plain `get` reads after any group (`vault kv get x`), never first (`dvc get` downloads)
SETTINGS_GROUPS = frozenset({"config", "configs", "configuration", "settings", "setting", "preferences", "prefs"})
#: group names an unknown program's read verb may follow (`gcloud compute instances list`)
MAX_COMMAND_GROUPS = 2


#: what `-o` / `--output` names when it chooses how a command prints, not a file (`az … -o table`,
#: `aws … --output json`, `kubectl … -o wide`)
OUTPUT_FORMATS = frozenset(
    {"json", "jsonc", "yaml", "yml", "yaml-stream", "table", "text", "tsv", "csv", "wide", "name", "none", "plain"}
)
#: verbs a dashed subcommand may start with that change something, beyond the verbs tool names
#: use (`verb_words`): AWS-style APIs name operations `associate-kms-key`, `terminate-instances`
SUBCOMMAND_CHANGE_VERBS = frozenset(
    {"associate", "disassociate", "terminate", "deregister", "authorize", "unset", "rotate", "tag", "untag"}
    | {"allocate", "release", "reboot", "recover", "replicate", "batch", "invalidate", "accept", "abort"}
)


#: dashed `get-…` subcommands that write a file: the credentials `az aks` and `gcloud container
#: clusters` merge into the kubeconfig, the objects AWS streams into an output file
GET_SUBCOMMANDS_THAT_WRITE = frozenset(
    {"get-credentials", "get-object", "get-object-torrent", "get-job-output", "get-snapshot-block"}
)


#: words that ask any program to change something
CHANGE_WORDS = frozenset(
    {"--fix", "--write", "-w", "--apply", "--delete", "--force", "-f", "--output", "-o", "--out", "--save"}
    | {"--yes", "-y", "--update", "--prune", "--in-place", "-i", "--rm", "--remove", "--set", "--unsafe-fixes"}
)


GIT_READ = frozenset(
    {
        "status", "log", "diff", "show", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
        "ls-files", "ls-tree", "ls-remote", "cat-file", "grep", "show-ref", "for-each-ref", "merge-base",
        "name-rev", "count-objects", "check-ignore", "check-attr", "check-ref-format", "cherry", "whatchanged",
        "diff-tree", "diff-index", "diff-files", "range-diff", "var", "version", "help", "verify-commit",
        "verify-tag", "show-branch",
    }
)  # fmt: skip


GIT_GLOBAL_VALUE = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})


GIT_GLOBAL_FLAGS = frozenset(
    {"--no-pager", "-P", "--no-optional-locks", "--paginate", "-p", "--bare", "--no-replace-objects"}
)


GIT_BRANCH_CHANGES = frozenset(
    {"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to"}
    | {"--unset-upstream", "--edit-description", "-f", "--force", "-t", "--track", "--no-track", "--create-reflog"}
)


GIT_BRANCH_LISTS = frozenset(
    {"--list", "-l", "-a", "--all", "-r", "--remotes", "--contains", "--no-contains", "--merged", "--no-merged"}
    | {"--points-at", "--show-current"}
)


GIT_TAG_CHANGES = frozenset(
    {"-a", "-s", "-u", "-m", "-F", "-f", "-d", "-e", "--delete", "--annotate", "--sign", "--message", "--file"}
    | {"--force", "--edit", "--local-user", "--create-reflog"}
)


GIT_TAG_LISTS = frozenset(
    {"-l", "--list", "--contains", "--no-contains", "--points-at", "--merged", "--no-merged", "-n"}
)


GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list"})


#: `git config` options that neither set nor take a value: with them, one operand (`git config
#: user.name`) is a read, two (`git config user.name X`) a write
GIT_CONFIG_READ_FLAGS = frozenset(
    {"--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope", "--includes", "--no-includes"}
    | {"--bool", "--int", "--bool-or-int", "--path", "--expiry-date", "--null", "-z", "--name-only"}
)


#: `gh api` options that change its GET into a request with a body, or read one from a file
GH_API_BODY_OPTIONS = frozenset({"-f", "--raw-field", "-F", "--field", "--input"})
#: `gh api` options with a value that neither sends a body nor writes (the method is checked apart)
GH_API_VALUE_OPTIONS = frozenset(
    {"-H", "--header", "-q", "--jq", "-t", "--template", "--hostname", "--cache", "-p", "--preview"}
)
#: `gh api` flags that neither send nor write
GH_API_FLAGS = frozenset({"--paginate", "--slurp", "-i", "--include", "--silent", "--verbose"})


#: `xxd` options followed by a value (its second operand is the file it writes)
XXD_VALUE_OPTIONS = frozenset(
    {"-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek", "-n", "-name"}
)


#: `unzip` options that only list, test or print what an archive holds
UNZIP_READS = frozenset({"-l", "-v", "-t", "-Z", "-p", "-lv", "-vl", "-tq", "-qt"})


GIT_PAIRS = {
    "stash": frozenset({"list", "show"}),
    "remote": frozenset({"show", "get-url", "-v", "--verbose"}),
    "worktree": frozenset({"list"}),
    "submodule": frozenset({"status", "summary"}),
    "reflog": frozenset({"show"}),
    "notes": frozenset({"list", "show"}),
    "lfs": frozenset({"ls-files", "status", "env", "version"}),
}


NPM_READ = frozenset(
    {"ls", "list", "ll", "la", "view", "v", "info", "show", "outdated", "root", "prefix", "bin", "search", "s"}
    | {"se", "explain", "why", "help", "ping", "query", "fund", "-v", "--version", "audit", "get"}
)


YARN_READ = frozenset({"list", "info", "why", "outdated", "--version", "-v", "versions", "audit", "licenses"})


PNPM_READ = frozenset(
    {"list", "ls", "ll", "why", "outdated", "info", "view", "audit", "root", "bin", "--version", "-v"}
)


PIP_READ = frozenset({"list", "show", "freeze", "check", "--version", "-V", "help", "inspect", "index"})


DOCKER_READ = frozenset(
    {"ps", "images", "inspect", "logs", "version", "info", "history", "top", "port", "diff", "search", "stats"}
)


DOCKER_GROUPS = {
    "container": frozenset({"ls", "list", "ps", "inspect", "logs", "top", "port", "diff"}),
    "image": frozenset({"ls", "list", "inspect", "history"}),
    "compose": frozenset({"ps", "ls", "logs", "config", "images", "top", "version"}),
    "network": frozenset({"ls", "inspect"}),
    "volume": frozenset({"ls", "inspect"}),
    "system": frozenset({"df", "info", "events"}),
    "context": frozenset({"ls", "list", "inspect", "show"}),
}


KUBECTL_READ = frozenset({"get", "describe", "logs", "version", "explain", "api-resources", "api-versions", "top"})
#: kubectl's groups and the subcommands in them that only show something
KUBECTL_GROUPS = {
    "config": frozenset({"view", "get-contexts", "current-context", "get-clusters", "get-users"}),
    "auth": frozenset({"can-i", "whoami"}),
    "rollout": frozenset({"status", "history"}),
}


#: helm's subcommands and groups that only show releases, charts and settings (`template` may run a
#: post-renderer, `pull` writes a chart: both stay runners)
HELM_READ = frozenset({"list", "ls", "status", "history", "lint", "env", "version"})
HELM_GROUPS = {
    "get": frozenset({"all", "hooks", "manifest", "metadata", "notes", "values"}),
    "show": frozenset({"all", "chart", "crds", "readme", "values"}),
    "search": frozenset({"hub", "repo"}),
    "repo": frozenset({"list", "ls"}),
    "plugin": frozenset({"list", "ls"}),
    "dependency": frozenset({"list", "ls"}),
}


#: pm2's subcommands that only show its processes and their logs (`start`, `restart`, `delete` … run
#: or stop them)
PM2_READ = frozenset(
    {"list", "ls", "l", "status", "jlist", "prettylist", "logs", "log", "show", "describe", "info", "monit"}
)


#: `ip`'s objects, and the actions on them that only show (`ip route`, `ip -br a`, `ip addr show`)
IP_OBJECTS = frozenset(
    {"address", "addr", "a", "link", "l", "route", "r", "ro", "neighbour", "neighbor", "neigh", "n", "rule"}
    | {"ru", "maddress", "maddr", "m", "mroute", "mr", "tunnel", "tun", "t", "ntable", "netconf"}
)
#: (`ip` takes any prefix of an action, in its own order: `ip link s` is `set`, so `s` is not here)
IP_READ_ACTIONS = frozenset({"show", "sh", "list", "ls", "lst", "l", "get", "g"})
#: `ip` options followed by a value
IP_VALUE_OPTIONS = frozenset({"-f", "-family", "-rc", "-rcvbuf", "-l", "-loops"})


GO_READ = frozenset({"version", "list", "doc", "help"})
#: `go list`'s build flags (Go 1.19, `go help build`) that run the program they name around each
#: compiler call (`-toolexec`) or keep the temporary work directory (`-work`); cmd/go's undocumented
#: `-debug-*` flags (`-debug-trace=F`, `-debug-actiongraph=F`) write the file they name, so any
#: `-debug-` flag is one too
GO_LIST_RUNS_OR_WRITES = frozenset({"toolexec", "work"})
#: `-mod=mod` lets `go list` rewrite go.mod (and the `-modfile` it names) where the default mode refuses
GO_MOD_WRITES = "mod"


CARGO_READ = frozenset({"tree", "metadata", "--version", "-V", "search", "help", "locate-project", "pkgid"})
#: cargo's read subcommands that resolve the dependency graph: they write Cargo.lock when it is missing
#: or no longer matches Cargo.toml (cargo 1.95), unless `--locked` / `--frozen` forbid it, or, for
#: `metadata`, `--no-deps` resolves nothing
CARGO_RESOLVES = {
    "tree": frozenset({"--locked", "--frozen"}),
    "metadata": frozenset({"--locked", "--frozen", "--no-deps"}),
}


SYSTEMCTL_READ = frozenset(
    {"status", "show", "list-units", "list-unit-files", "is-active", "is-enabled", "is-failed", "cat"}
)


#: systemd's `*ctl` tools for the machine's settings (systemd's man pages): with no verb, or one of
#: these, they only show; their other verbs set the host name, clock, locale or sessions (and a
#: verb such as `hostnamectl hostname` shows without an operand but sets with one: not listed)
SYSTEMD_SETTINGS_READ = {
    "hostnamectl": frozenset({"status", "show"}),
    "timedatectl": frozenset({"status", "show", "list-timezones", "timesync-status", "show-timesync"}),
    "localectl": frozenset({"status", "list-locales", "list-keymaps", "list-x11-keymap-models"})
    | {"list-x11-keymap-layouts", "list-x11-keymap-variants", "list-x11-keymap-options"},
    "loginctl": frozenset({"list-sessions", "session-status", "show-session", "list-users", "user-status"})
    | {"show-user", "list-seats", "seat-status", "show-seat"},
    "networkctl": frozenset({"list", "status", "lldp", "label"}),
}


APT_READ = {
    "apt": frozenset({"list", "show", "search", "policy"}),
    "apt-cache": frozenset({"search", "show", "policy", "depends", "rdepends", "madison"}),
}


GH_EXTRA = {
    "repo": frozenset({"view", "list"}),
    "run": frozenset({"list", "view"}),
    "release": frozenset({"list", "view"}),
    "workflow": frozenset({"list", "view"}),
    "auth": frozenset({"status", "token"}),
    "gist": frozenset({"list", "view"}),
    "label": frozenset({"list"}),
    "secret": frozenset({"list"}),
    "variable": frozenset({"list", "get"}),
    "cache": frozenset({"list"}),
}


GH_PR = frozenset({"checks", "diff", "list", "status", "view"})


GH_ISSUE = frozenset({"list", "status", "view"})


PS_READ_VERBS = ("get-", "test-", "select-", "measure-", "format-", "compare-", "group-", "convertto-", "convertfrom-")


PS_READ_CMDLETS = frozenset(
    {"sort-object", "where-object", "out-string", "out-host", "out-null", "write-output", "write-host"}
    | {"resolve-path", "split-path", "join-path", "get-childitem"}
)


SED_COMMAND = re.compile(
    r"\s*(?:(?:\d+|\$|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?\s*!?\s*)?"
    r"(?:[pdqQ=nNgGhHxlz]|s(?P<d>[^\s\\\n])(?:(?!(?P=d))[^\\]|\\.)*(?P=d)(?:(?!(?P=d))[^\\]|\\.)*(?P=d)[gpiIM0-9]*"
    r"|y(?P<y>[^\s\\\n])(?:(?!(?P=y))[^\\]|\\.)*(?P=y)(?:(?!(?P=y))[^\\]|\\.)*(?P=y))\s*"
)


#: `gh` options whose value names what to show (a repository, a search, fields to print), where a
#: double-quoted expansion is harmless (`--repo "$REPO"`); never one that decides what gh does
GH_VALUE_OPTIONS = frozenset(
    {"-R", "--repo", "--json", "-q", "--jq", "-S", "--search", "-H", "--head", "-B", "--base", "-s", "--state"}
    | {"-L", "--limit", "-l", "--label", "-A", "--author", "-a", "--assignee", "--milestone", "--app", "--branch"}
    | {"--workflow", "--user", "--event", "--commit", "--created", "--sort", "--order", "--owner", "--topic"}
)


#: tmux's commands (and their aliases) that only show sessions, windows, panes and settings;
#: `capture-pane` and `display-message` only with `-p` (else they fill a buffer or the status line)
TMUX_READ = frozenset(
    {"list-sessions", "ls", "list-windows", "lsw", "list-panes", "lsp", "list-clients", "lsc", "list-buffers"}
    | {"lsb", "list-keys", "lsk", "list-commands", "lscm", "show-options", "show", "show-window-options"}
    | {"showw", "show-environment", "showenv", "show-buffer", "showb", "has-session", "has", "info"}
    | {"server-info", "show-messages", "showmsgs"}
)
TMUX_PRINTING = frozenset({"capture-pane", "capturep", "display-message", "display"})
#: tmux's own options before its command: a socket or a server name to talk to, or flags that
#: change nothing (`-f FILE` runs its commands, `-c` runs a shell command, `-v` writes logs)
TMUX_VALUE_OPTIONS = frozenset({"-S", "-L"})
TMUX_FLAGS = frozenset({"-2", "-u", "-N", "-l", "-D", "-q"})
