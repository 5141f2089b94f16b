"""replaylab's reading of well-known MCP servers' tools against the servers themselves.

Each pinned server (tests/oracles/mcp-servers: a lockfile, installed by `npm ci` in .ci/run) is
started over stdio by `list_tools.mjs` and asked `tools/list`; no tool is called. Then:

* each table of `upstream/mcp_servers.py` is exactly its server's answer; Playwright MCP's
  (`upstream/playwright_mcp.py`) holds every tool the server lists, with the hint it gives;
* replaylab classifies each listed tool, under the names Claude Code and OpenClaw give it, as
  mutating exactly when its server does not annotate it read-only, except where one of OpenClaw's
  own rules decides first (docs/classification.md).

Skips when node or the servers are not installed, and never under CI=true."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from replaylab.safety.classify import MCP_SERVER, ToolClassifier
from replaylab.upstream import mcp_servers as MCP
from repo_paths import TESTS

PROJECT = TESTS / "oracles" / "mcp-servers"
#: tools whose class one of OpenClaw's rules gives before the server's annotation is read
DECIDED_BY_OPENCLAW = {("playwright", "browser_video_show_actions"), ("playwright", "browser_video_hide_actions")}


@pytest.fixture(scope="module")
def listed() -> dict[str, dict[str, Any]]:
    """server key → its `tools/list` answer: {package, version, tools: {name: readOnlyHint}}."""
    node = shutil.which("node")
    why = None
    if node is None:
        why = "node is not installed"
    elif not (PROJECT / "node_modules").is_dir():
        why = f"the MCP servers are not installed: npm ci --prefix {PROJECT} --ignore-scripts"
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the MCP servers' oracle must run under CI: {why}")
        pytest.skip(why)
    done = subprocess.run(
        [str(node), str(PROJECT / "list_tools.mjs")], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = {}
    for line in done.stdout.splitlines():
        answer = json.loads(line)
        tools = {t["name"]: (t["annotations"] or {}).get("readOnlyHint") is True for t in answer["tools"]}
        out[answer["server"]] = {"package": answer["package"], "version": answer["version"], "tools": tools}
    return out


def test_each_table_is_its_pinned_servers_own_answer(listed) -> None:
    """Exactly the server's answer; Playwright's table, taken from the build, also holds tools the
    server does not list over MCP even with every capability on."""
    for server in MCP.SERVERS:
        answer = listed[server.key]
        assert (answer["package"], answer["version"]) == (server.package, server.version)
        listed_read_only = {name for name, read_only in answer["tools"].items() if read_only}
        if server.key == "playwright":
            assert len(answer["tools"]) >= 60, "with every capability on, the server lists most of its tools"
            assert set(answer["tools"]) <= server.tools
            assert listed_read_only == server.read_only & set(answer["tools"])
        else:
            assert set(answer["tools"]) == server.tools, server.key
            assert listed_read_only == server.read_only, server.key


@pytest.mark.parametrize("spelled", ["mcp__{server}__{tool}", "{server_}__{tool}"], ids=["claude-code", "openclaw"])
def test_replaylab_calls_mutating_exactly_what_the_server_does_not_annotate_read_only(listed, spelled) -> None:
    classifier = ToolClassifier()
    differ = set()
    checked = 0
    for server, answer in listed.items():
        for tool, read_only in answer["tools"].items():
            name = spelled.format(server=server, server_=server.replace("-", "_"), tool=tool)
            verdict = classifier.explain(name, {})
            checked += 1
            if verdict.mutating == read_only:
                assert verdict.rule.startswith("openclaw"), (name, read_only, verdict)
                differ.add((server, tool))
            elif any(s.key == server for s in MCP.SERVERS):
                assert verdict.rule == MCP_SERVER, (name, verdict)
    assert checked >= 120
    assert differ == DECIDED_BY_OPENCLAW


def test_a_table_applies_only_where_the_namespace_names_its_server() -> None:
    classifier = ToolClassifier()
    assert classifier.explain("mcp__chrome-devtools__take_screenshot", {}).tool_class == "write"
    assert classifier.explain("mcp__plugin_devtools_chrome-devtools__take_screenshot", {}).tool_class == "write"
    # another server's tool of the same name is read by its name, not by chrome-devtools' annotation
    assert classifier.explain("mcp__screenshots__take_screenshot", {}).rule != MCP_SERVER
    assert classifier.explain("take_screenshot", {}).rule != MCP_SERVER
    assert classifier.explain("mcp__filesystem__directory_tree", {}).tool_class == "read"
    assert classifier.explain("mcp__memory__open_nodes", {}).tool_class == "read"
