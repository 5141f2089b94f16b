"""The `openclaw` command line of OpenClaw 2026.9.6 (npm `openclaw@2026.9.6`): its global options
and the commands its own pages document as only showing something, read from the package's
`docs/cli/index.md` ("Command tree", "Global flags") and each command's page, and held to them by
`tests/oracles/test_openclaw_oracle.py`. The read-only shell grammar reads the agent's own CLI by
these (`replaylab/safety/shell_openclaw.py`).
"""

from __future__ import annotations

#: options the CLI takes before its command: with a value, and alone (`--update` runs an update)
GLOBAL_VALUE_OPTIONS = frozenset({"--profile", "--container", "--log-level"})
GLOBAL_FLAGS = frozenset({"--dev", "--no-color"})
#: the command paths that only show something, by the pages that document them (each with an
#: example there), and whether operands may follow the path (a key, an id, a query: `config get
#: gateway.port`, `cron get ID`); a path that has subcommands of its own takes none (`sessions`
#: lists, `sessions delete X` deletes)
READ_COMMANDS: dict[tuple[str, ...], bool] = {
    # status.md, health.md, logs.md ("tail gateway logs"), docs.md (a search), audit.md (a query)
    ("status",): False, ("health",): False, ("logs",): False, ("docs",): True, ("audit",): False,
    ("sessions",): False, ("sessions", "tail"): False, ("config", "get"): True, ("config", "file"): False,
    ("config", "schema"): True, ("config", "validate"): False,
    # security.md: plain `security audit` stays on the read-only path; secrets.md: a read-only scan
    ("security", "audit"): False, ("secrets", "audit"): False, ("update", "status"): False,
    ("backup", "verify"): True, ("migrate", "list"): False, ("channels", "list"): False,
    ("channels", "status"): False, ("channels", "capabilities"): False, ("channels", "logs"): False,
    ("channels", "resolve"): True, ("channels", "dead-letters", "list"): False, ("directory", "self"): False,
    ("directory", "peers", "list"): False, ("directory", "groups", "list"): False,
    ("directory", "groups", "members"): True, ("skills", "search"): True, ("skills", "list"): False,
    ("skills", "info"): True, ("skills", "check"): False, ("skills", "verify"): True,
    ("skills", "workshop", "list"): False, ("skills", "workshop", "inspect"): True,
    ("plugins", "list"): False, ("plugins", "search"): True, ("plugins", "inspect"): True,
    ("plugins", "marketplace", "list"): False,
    ("plugins", "marketplace", "entries"): True, ("workboard", "list"): False, ("workboard", "show"): True,
    ("memory", "status"): False, ("memory", "search"): True, ("transcripts", "list"): False,
    ("transcripts", "show"): True, ("transcripts", "path"): True, ("wiki", "status"): False,
    ("wiki", "search"): True, ("wiki", "get"): True, ("wiki", "obsidian", "status"): False,
    ("wiki", "obsidian", "search"): True, ("message", "read"): False,
    ("message", "member", "info"): False, ("agents", "list"): False, ("agents", "bindings"): False,
    ("mcp", "list"): False, ("mcp", "show"): True, ("tasks", "list"): False, ("tasks", "audit"): False,
    ("tasks", "show"): True, ("tasks", "flow", "list"): False, ("tasks", "flow", "show"): True,
    ("gateway", "health"): False, ("gateway", "stability"): False, ("gateway", "status"): False,
    ("gateway", "probe"): False, ("gateway", "discover"): False, ("gateway", "usage-cost"): False,
    ("daemon", "status"): False, ("fleet", "list"): False, ("fleet", "status"): True, ("fleet", "logs"): True,
    ("worktrees", "list"): False, ("system", "presence"): False, ("system", "heartbeat", "last"): False,
    ("models", "list"): False, ("models", "status"): False, ("models", "aliases", "list"): False,
    ("models", "fallbacks", "list"): False, ("models", "image-fallbacks", "list"): False,
    ("models", "auth", "list"): False, ("models", "auth", "order", "get"): False, ("promos", "list"): False,
    ("infer", "model", "inspect"): True, ("infer", "model", "providers"): False,
    ("infer", "image", "providers"): False, ("infer", "audio", "providers"): False,
    ("infer", "tts", "voices"): False, ("infer", "tts", "personas"): False,
    ("infer", "tts", "providers"): False, ("infer", "tts", "status"): False, ("infer", "web", "search"): True,
    ("infer", "web", "fetch"): True, ("infer", "web", "providers"): False,
    ("infer", "embedding", "providers"): False, ("sandbox", "list"): False, ("sandbox", "explain"): True,
    ("cron", "list"): False, ("cron", "get"): True, ("cron", "runs"): True, ("nodes", "status"): False,
    ("nodes", "describe"): False, ("nodes", "list"): False, ("nodes", "pending"): False,
    ("nodes", "camera", "list"): False, ("nodes", "location", "get"): False, ("devices", "list"): False,
    ("node", "status"): False, ("pairing", "list"): True, ("approvals", "get"): False,
    ("exec-policy", "show"): False, ("hooks", "list"): False, ("hooks", "info"): True,
    ("hooks", "check"): False,
    # the `browser` tool's read-only actions (`openclaw_2026_9_6.BROWSER_READ_ONLY_ACTIONS`) as commands
    ("browser", "status"): False, ("browser", "tabs"): False, ("browser", "profiles"): False,
    ("browser", "snapshot"): False, ("browser", "console"): False,
}  # fmt: skip
#: options the CLI's pages show with a value (`--agent <id>`, `--limit <n>`): the word after one is
#: its value, not a command or an operand (the options some pages show both ways, such as
#: `--verbose` and `--wait`, are left out: the word after them may be a command)
VALUE_OPTIONS = frozenset(
    {
        "--account", "--accuracy", "--active", "--active-key", "--after", "--agent", "--agent-dir",
        "--agent-name", "--allowed-url", "--api-key", "--apns-authority", "--archive-files", "--as", "--at",
        "--auth", "--avatar", "--backup-output", "--before", "--bin", "--bind", "--board", "--body",
        "--bootstrap", "--browser-profile", "--call-id", "--channel", "--cloudflare-ai-gateway-account-id",
        "--cloudflare-ai-gateway-gateway-id", "--code", "--code-mode", "--command", "--commands",
        "--concurrency", "--confidence", "--config", "--context-path", "--coordinator", "--cpus", "--cron",
        "--cursor", "--cwd", "--daemon-runtime", "--days", "--delete-file", "--delivery", "--denied-url",
        "--device", "--digits", "--dir", "--direction", "--directory", "--disk", "--display-name",
        "--domain", "--duration", "--emoji", "--entry", "--env", "--environment", "--every", "--evidence",
        "--execution", "--expect-current-json", "--expect-url", "--expected-pid", "--expected-revision",
        "--expected-sha256", "--expires-in", "--expires-in-days", "--fallback", "--fallbacks",
        "--feed-profile", "--feed-url", "--file", "--flow", "--fps", "--from", "--gateway-password",
        "--gateway-token", "--gateway-token-ref-env", "--goal", "--group-id", "--handoff",
        "--history-limit", "--hook-source", "--hook-token", "--hook-url", "--host", "--id",
        "--idempotency-key", "--identity-file", "--image", "--import-from", "--import-source", "--interval",
        "--invoke-timeout", "--item", "--kind", "--label", "--labels", "--last-connected", "--limit",
        "--limit-days", "--lines", "--location-timeout", "--log-bytes", "--log-lines", "--marketplace",
        "--max-age", "--max-age-days", "--max-bytes", "--max-candidates", "--max-lines", "--max-results",
        "--max-starts", "--mcp-config", "--media", "--memory", "--message", "--message-file", "--method",
        "--min-params", "--min-recall-count", "--min-score", "--min-unique-queries", "--mode", "--model",
        "--name", "--native-host-executable", "--network", "--node", "--node-id", "--node-manager",
        "--notes", "--offset", "--on-exit", "--on-exit-cwd", "--only", "--params", "--participant",
        "--password", "--password-file", "--path", "--pids-limit", "--plan-integrity", "--plugin",
        "--poll-duration-seconds", "--poll-option", "--port", "--prefix", "--presentation", "--preset",
        "--priority", "--probe-concurrency", "--probe-max-tokens", "--probe-profile", "--probe-provider",
        "--probe-timeout", "--profile-id", "--project", "--provenance", "--provider",
        "--provider-allowlist", "--provider-arg", "--provider-command", "--provider-env",
        "--provider-max-bytes", "--provider-max-output-bytes", "--provider-mode",
        "--provider-no-output-timeout-ms", "--provider-pass-env", "--provider-path", "--provider-source",
        "--provider-timeout-ms", "--provider-trusted-dir", "--proxy-ca-file", "--proxy-url", "--public-url",
        "--push-endpoint", "--push-token", "--query", "--raw-stream-path", "--ref", "--remote",
        "--remote-password", "--remote-token", "--remote-url", "--renew-minutes", "--replace-path",
        "--reply-account", "--reply-channel", "--reply-to", "--repository", "--reset-scope", "--revision",
        "--role", "--root", "--run", "--run-id", "--runtime", "--runtime-path", "--scope", "--scratch",
        "--screen", "--section", "--serve-path", "--server", "--server-args", "--session", "--session-id",
        "--session-key", "--session-label", "--session-sqlite", "--session-sqlite-agent",
        "--session-sqlite-store", "--severity", "--severity-min", "--shell", "--since", "--since-seq",
        "--skill", "--skill-id", "--sound", "--ssh", "--ssh-identity", "--stagger", "--state-dir",
        "--state-sqlite", "--status", "--store", "--stream-batch-ms", "--stream-command", "--stream-cwd",
        "--stream-match", "--stream-max-batch-bytes", "--subscription", "--tag", "--tail",
        "--tailscale-path", "--tailscale-target", "--target", "--target-file", "--targets", "--text",
        "--theme", "--thinking", "--thread-id", "--timeout", "--timeout-ms", "--title", "--tls-fingerprint",
        "--to", "--token", "--token-expires-in", "--token-file", "--token-profile-id", "--token-provider",
        "--topic", "--ttl", "--type", "--tz", "--update-result", "--url", "--value-file", "--webhook",
        "--workspace", "--workspace-root", "--wrapper", "--ws-log"
    }
)  # fmt: skip

#: the CLI's commands (the command tree's first level, with its aliases)
COMMANDS = frozenset(
    {"setup", "onboard", "configure", "config", "database", "completion", "doctor", "triage", "dashboard"}
    | {"backup", "migrate", "security", "secrets", "reset", "uninstall", "update", "channels", "directory"}
    | {"skills", "plugins", "workboard", "memory", "transcripts", "path", "wiki", "message", "agent", "agents"}
    | {"attach", "acp", "mcp", "status", "health", "sessions", "audit", "tasks", "gateway", "fleet", "worktrees"}
    | {"daemon", "logs", "system", "models", "promos", "infer", "capability", "sandbox", "cron", "automations"}
    | {"nodes", "devices", "node", "connect", "worker", "approvals", "exec-policy", "browser", "hooks"}
    | {"webhooks", "proxy", "pairing", "qr", "clawbot", "docs", "dns", "resume", "tui", "chat", "terminal"}
    | {"claws", "file-transfer", "policy", "voicecall"}
)
#: the CLI's other names for a command (`capability` for `infer`, `automations` for `cron`)
COMMAND_ALIASES = {"capability": "infer", "automations": "cron"}
#: `doctor` applies safe config migrations but in its read-only postures (docs/cli/doctor/lint.md):
#: `--lint`, a bare `--json`, `--post-upgrade` probes; and the flags these may take beside them
DOCTOR_READ_FLAGS = frozenset({"--lint", "--json", "--post-upgrade"})
DOCTOR_READ_OPTIONS = DOCTOR_READ_FLAGS | {"--non-interactive", "--deep", "--no-color", "--all"}
#: the lint's check selection, each followed by its value (`--only core/doctor/gateway-config`)
DOCTOR_CHECK_SELECTION = frozenset({"--only", "--skip", "--severity-min"})
#: options that make a reading command change something: a repair, a confirmation, a file
#: written, or exec secret providers run (`secrets audit --allow-exec`)
CHANGE_OPTIONS = frozenset(
    {"--fix", "--repair", "--yes", "-y", "--apply", "--write", "--force", "--allow-exec", "--output", "-o", "--out"}
    | {"--generate-gateway-token", "--write-state", "--install", "--export"}
)
