"""replaylab's classification against OpenClaw's own `isMutatingToolCall`, run under node.

Every real tool call of ../shared/data and the generated ones (tests/openclaw_pairs.py) go to the
pinned OpenClaw (replaylab/oracles). The mirror must answer as OpenClaw does on every
pair; replaylab's classification too, except where docs/classification.md's table of deliberate
differences names the rule (and, for a call replaylab finds safe where OpenClaw does not, the
tool). Skips with the reason only when the oracle cannot run, and never under CI=true."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from bench.classification import RealCall, real_calls
from openclaw_pairs import generated_pairs
from replaylab.oracles import openclaw as openclaw_oracle
from replaylab.safety.classify import ToolClassifier
from replaylab.safety.openclaw_rules import is_mutating_tool_call, is_replay_safe_tool_call
from replaylab.safety.shell import js_lower_or_empty
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
DOCS = REPO / "docs" / "classification.md"
MIN_PAIRS = 2_000


@pytest.fixture(scope="module")
def oracle() -> None:
    why = openclaw_oracle.oracle_unavailable()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the OpenClaw oracle must run under CI: {why}")
        pytest.skip(why)


@pytest.fixture(scope="module")
def real(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> list[RealCall]:
    return real_calls(shared_data, tmp_path_factory.mktemp("oracle-realdata"))


def differences_table() -> dict[str, dict[str, str]]:
    """docs/classification.md's table of deliberate differences: rule → its cells."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("<!-- differences:", 1)[1]
    rows: dict[str, dict[str, str]] = {}
    header: list[str] = []
    for line in section.splitlines():
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = cells
        elif not set(cells[0]) <= {"-", " "}:
            rows[cells[0].strip("`")] = dict(zip(header, cells))
    return rows


def test_the_oracle_is_the_pinned_openclaw_and_its_closure_needs_no_dependency(oracle) -> None:
    """The lockfile installs openclaw without its dependency tree: every module the function
    reaches must be a file of the package."""
    closure = openclaw_oracle.import_closure()
    assert {p.name.split("-")[0] for p in closure} == {
        "tool",
        "record",
        "string",
        "automations",
        "computer",
    }
    assert all(p.is_relative_to(openclaw_oracle.PACKAGE_DIR / "dist") for p in closure)
    (verdict,) = openclaw_oracle.ask([("bash", {"command": "ls"})])
    assert verdict == openclaw_oracle.Verdict(mutating=False, replay_safe=False)


def test_the_mirror_answers_as_openclaw_on_every_pair(oracle, real: list[RealCall]) -> None:
    pairs = [(c.name, c.args) for c in real] + generated_pairs()
    assert len(pairs) >= MIN_PAIRS
    assert {c.source for c in real} == {
        "pi",
        "claude-code",
        "tau-bench",
        "tau2-bench",
        "tau2-bench-extra",
        "claude-code-fasthooks",
    }
    verdicts = openclaw_oracle.ask(pairs)
    wrong = [
        (name, args, verdict)
        for (name, args), verdict in zip(pairs, verdicts)
        if (is_mutating_tool_call(name, args), is_replay_safe_tool_call(name, args))
        != (verdict.mutating, verdict.replay_safe)
    ]
    assert not wrong, f"{len(wrong)} of {len(pairs)} differ, e.g. {wrong[:5]}"
    # the pairs reach both answers of the shell exemption and of the action rules
    answers = Counter((is_mutating_tool_call(n, a), n if n in ("bash", "Bash", "exec") else "") for n, a in pairs)
    assert answers[(False, "bash")] and answers[(True, "bash")] and answers[(False, "Bash")] and answers[(True, "")]


def test_replaylab_differs_from_openclaw_only_as_the_docs_table_says(oracle, real: list[RealCall]) -> None:
    table = differences_table()
    assert set(table) == {
        "unknown-tool",
        "tool-payload",
        "unproven-action",
        "declared",
        "shell-grammar",
        "agent-builtin",
        "tool-name-shell",
        "mcp-server",
        "suite-override",
    }
    default = ToolClassifier()
    calls = [(c.name, c.args, c.classification) for c in real]
    calls += [(n, a, default.explain(n, a)) for n, a in generated_pairs() if isinstance(n, str)]
    verdicts = openclaw_oracle.ask([(n, a) for n, a, _ in calls])
    found: Counter[tuple[str, bool]] = Counter()
    for (name, args, ours), verdict in zip(calls, verdicts):
        if ours.mutating == verdict.mutating:
            continue
        assert ours.rule in table, (name, args, ours)
        found[(ours.rule, ours.mutating)] += 1
        row = table[ours.rule]
        if ours.rule == "agent-builtin" and not ours.mutating:  # an observation OpenClaw spells otherwise
            assert name == "computer" and "only observes the screen" in ours.reason, (name, args, ours)
            assert "read where OpenClaw mutates" in row["for example"]
        elif row["replaylab"] == "mutating":
            assert ours.mutating and not verdict.mutating, (name, args, ours)
        elif ours.rule == "shell-grammar":  # a shell command the grammar reads as read-only
            assert not ours.mutating and verdict.mutating and js_lower_or_empty(name) in ("bash", "exec"), (name, ours)
            assert "read-only shell:" in ours.reason, ours
        elif not ours.mutating:  # safe where OpenClaw says mutating: only a named, declared tool
            assert ours.rule == "declared" and f"`{name}`" in row["for example"], (name, args, ours)
    # every row but the overrides' is met in the comparison: no row is left over
    assert {rule for rule, _ in found} == {
        "unknown-tool",
        "tool-payload",
        "unproven-action",
        "declared",
        "shell-grammar",
        "agent-builtin",
        "tool-name-shell",
        "mcp-server",
    }


def test_the_docs_table_gives_each_difference_its_reason() -> None:
    for rule, row in differences_table().items():
        assert len(row["why"]) > 80, rule
        assert re.search(r"`[^`]+`", row["for example"]), rule


@pytest.mark.realdata
def test_the_classification_table_over_the_real_data(real: list[RealCall]) -> None:
    """`python -m bench.classification`'s figures: every shell call of the Claude Code and pi data
    is read-only or mutating, both kinds occur in both, and a read-only one always starts with
    one of OpenClaw's commands or a reader the grammar knows (`cd` before one, `git`'s and `bd`'s
    read subcommands, `find` without `-exec`)."""
    from bench.classification import format_table, table

    rows = table(real)
    for source in ("claude-code", "pi"):
        row = rows[source]
        assert row["shell"] == row["shell_read_only"] + row["shell_mutating"] > 0
        assert row["shell_read_only"] > 0 and row["shell_mutating"] > 0
        assert set(row["top_read_only"]) <= {
            "ls",
            "cat",
            "grep",
            "head",
            "tail",
            "wc",
            "pwd",
            "stat",
            "rg",
            "sed",
            "gh",
            "cd",
            "git",
            "bd",
            "find",
            "tree",
            "date",
            "awk",
            "sleep",
            "echo",
            "bash",  # `bash -n`, a syntax check
            "curl",  # a GET of a search, to standard output
            "python3",  # `-c` scripts that print what a JSON file holds
        }
        assert 0 < row["shell_grammar"] < row["shell_read_only"]
    assert all(rows[s]["shell"] == 0 for s in ("tau-bench", "tau2-bench"))
    text = format_table(rows)
    assert text.startswith("| data set | tool calls |") and "top read-only commands:" in text


#: (MCP server, its tool, whether the tool only reads by its name)
MCP_TOOLS = [
    ("github", "list_issues", True),
    ("github", "create_issue", False),
    ("GitHub", "get_file_contents", True),  # the same name but for case: OpenClaw names it `GitHub-2`
    ("my server.x", "search.code/v2", True),
    ("slack", "slack_list_channels", True),
    ("slack", "slack_post_message", False),
    ("deploy", "get_status", True),  # the server's name is no verb of the tool
    ("stripe", "create_refund", False),
    ("a-server-name-longer-than-thirty-characters", "list_items", True),
]


def test_openclaw_names_an_mcp_tool_so_that_its_own_verb_decides(oracle) -> None:
    """OpenClaw 2026.9.6 names an MCP server's tool `<server>__<tool>` (its own
    `buildSafeToolName`, run here): the name reads as the tool's own name would, whatever the
    server is called."""
    from replaylab.oracles.openclaw_rules import ask_rules
    from replaylab.safety.verbs import name_words, verb_verdict

    servers = list(dict.fromkeys(server for server, _, _ in MCP_TOOLS))
    asked = ask_rules(
        {"id": i, "fn": "mcpToolName", "args": [servers, server, tool]} for i, (server, tool, _) in enumerate(MCP_TOOLS)
    )
    names = [answer["ok"] for answer in asked.answers]
    assert names[0] == "github__list_issues" and names[2] == "GitHub-2__get_file_contents"
    for (server, tool, reads), name in zip(MCP_TOOLS, names):
        assert name_words(name) == name_words(re.sub(r"[^A-Za-z0-9_-]", "-", tool)), (server, name)
        assert verb_verdict(name).read_only is reads, (name, verb_verdict(name))
        assert ToolClassifier().explain(name, {}).mutating is not reads, name


def test_every_openclaw_command_the_grammar_reads_is_documented_by_the_pinned_release() -> None:
    """`CLI_READ_COMMANDS` holds only commands the pinned package's own pages show (spelled or by an
    alias), and `doctor --lint` is still the read-only mode its page names."""
    from replaylab.upstream import openclaw_2026_9_6_cli as CLI

    docs = openclaw_oracle.PACKAGE_DIR / "docs"
    if not docs.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the pinned OpenClaw package must be installed under CI: {docs}")
        pytest.skip(f"{docs} is not installed")
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(docs.rglob("*.md")))
    aliases = {command: alias for alias, command in CLI.COMMAND_ALIASES.items()}
    for path in CLI.READ_COMMANDS:
        spellings = {" ".join(path), " ".join((aliases.get(path[0], path[0]), *path[1:]))}
        assert any(f"openclaw {spelled}" in text for spelled in spellings), path
    assert "`--lint` is stricter than `--non-interactive`: always read-only" in text
    assert "Plain `security audit` stays on the cold config/filesystem/read-only path" in text
