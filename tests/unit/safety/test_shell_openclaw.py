"""The `openclaw` command line in the read-only shell grammar (`shell_openclaw.py`): the commands
OpenClaw 2026.9.6 documents as only showing something read, after its global options and with
their options' values; a command that changes something, runs an agent turn or an RPC, a repair
flag, `doctor` without `--lint`, and a further word that may be a subcommand stay mutating."""

from __future__ import annotations

import pytest

from replaylab.safety.shell_grammar import grammar_verdict


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("openclaw status --all --json", "`openclaw status`"),
        ("openclaw --profile rescue gateway status --deep", "`openclaw gateway status`"),
        ("openclaw --profile work logs --follow --interval 2000", "`openclaw logs`"),
        ("openclaw --dev --no-color health --json", "`openclaw health`"),
        ("openclaw gateway probe --url ws://127.0.0.1:18789 --token x", "`openclaw gateway probe`"),
        ("openclaw config get gateway.port && openclaw -- config get gateway.bind", "`openclaw config get`"),
        ("openclaw doctor --lint", "`openclaw doctor --lint`"),
        ("openclaw doctor --json --deep && openclaw doctor --post-upgrade", "`openclaw doctor --json`"),
        ("openclaw doctor --lint --only core/doctor/gateway-config --severity-min warning", "`openclaw doctor --lint`"),
        ("openclaw infer image describe --file ./photo.jpg --json", "`openclaw infer image describe`"),
        ("openclaw security audit --deep", "`openclaw security audit`"),
        ("openclaw secrets audit --check", "`openclaw secrets audit`"),
        ("openclaw sessions --agent work --limit 25 --json", "`openclaw sessions`"),
        ("openclaw models auth order get --provider anthropic", "`openclaw models auth order get`"),
        ("openclaw automations runs job-1 --limit 50 --json", "`openclaw cron runs`"),  # the alias
        ("openclaw capability audio providers", "`openclaw infer audio providers`"),
        ("openclaw hooks info reset-greeting", "`openclaw hooks info`"),
        ("openclaw message read --channel telegram --target 123", "`openclaw message read`"),
        ("openclaw memory search 'meeting notes' --limit 3", "`openclaw memory search`"),
        ("openclaw audit --agent main --status failed --json | jq .", "`openclaw audit`"),
        ("openclaw system heartbeat last && openclaw update status --json", "`openclaw system heartbeat last`"),
        ("openclaw --version", "`openclaw --version`"),
        # an older release's command, or one the CLI refuses: a read verb reads as any program's
        ("openclaw gateway ping && openclaw sessions list", "`openclaw gateway ping`"),
        ("openclaw plugins install --help", "`openclaw --help`"),
    ],
)
def test_the_commands_openclaw_documents_as_showing_something_read(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("openclaw doctor", "applies safe config migrations"),
        ("openclaw doctor --fix --non-interactive", "`openclaw doctor --fix` changes something"),
        ("openclaw doctor --non-interactive", "applies safe config migrations"),
        ("openclaw doctor --json --state-sqlite compact", "applies safe config migrations"),
        ("openclaw security audit --fix", "`openclaw security audit --fix`"),
        ("openclaw secrets audit --allow-exec", "`openclaw secrets audit --allow-exec` changes"),  # runs exec providers
        ("openclaw config set gateway.port 19000", "`openclaw config set` changes something"),
        ("openclaw sessions delete agent:main:x", "`openclaw sessions delete` changes something"),
        ("openclaw sessions --limit 5 delete agent:main:x", "`openclaw sessions delete`"),  # after a value
        ("openclaw sessions --json archive agent:main:x", "`openclaw sessions archive`"),  # after a flag
        ("openclaw status extra", "`openclaw status extra` changes something"),
        ("openclaw gateway restart", "`openclaw gateway restart` changes something"),
        ("openclaw agent --message 'status'", "runs the agent"),
        ("openclaw gateway call health", "`openclaw`"),  # any RPC method, whatever its name
        ("openclaw gateway call config.apply", "`openclaw gateway call`"),
        ("openclaw gateway", "`openclaw gateway`"),  # runs the Gateway
        ("openclaw qr --json", "`openclaw qr`"),  # mints a pairing code
        ("openclaw plugins install clawhub:@openclaw/diffs", "`openclaw plugins install`"),
        ("openclaw cron run job-1", "`openclaw cron run`"),
        ("openclaw browser click e3", "`openclaw browser click`"),
        ("openclaw nodes camera snap --node mac", "`openclaw nodes camera`"),
        ("openclaw logs --output out.txt", "`openclaw logs --output` changes something"),
        ("openclaw --update", "a global option the grammar does not read"),
        ('openclaw --profile "$P" status', "known only when the shell runs"),
        ("openclaw", "without a command starts its setup"),
    ],
)
def test_an_openclaw_command_that_changes_something_or_runs_the_agent_stays_mutating(command: str, why: str) -> None:
    verdict = grammar_verdict(command)
    assert not verdict.read_only, verdict
    assert why in verdict.reason, verdict.reason
