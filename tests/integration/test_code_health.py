"""Code health: the layer contracts hold, and the code is lint-clean and formatted.

Why tests: CI runs exactly the README's test command (`.ci/run`), so a check that is not a test
does not run in CI. The tools are the venv's own (pinned in the `[test]` extra), found next to
`sys.executable`, and run over the whole tree with the configuration in pyproject.toml.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from repo_paths import REPO_ROOT

REPO = REPO_ROOT
BIN = Path(sys.executable).parent  # not resolved: a venv's python is a symlink out of the venv
LINTED = ("replaylab", "plugins", "bench", "tests", "conftest.py")


def run_tool(name: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    executable = BIN / name
    assert executable.is_file(), f"{executable} is missing: pip install -e '.[test]' installs it"
    return subprocess.run([str(executable), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def shown(done: subprocess.CompletedProcess[str]) -> str:
    return f"{' '.join(done.args)} exited {done.returncode}\n{done.stdout}{done.stderr}"


def test_import_contracts_are_kept() -> None:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    names = {contract["type"]: contract["name"] for contract in contracts["contracts"]}
    assert set(names) == {"layers", "acyclic_siblings"}, "pyproject.toml: the layer and the no-cycle contract"
    done = run_tool("lint-imports", "--no-cache")
    assert done.returncode == 0, shown(done)
    for name in names.values():
        assert f"{name} KEPT" in done.stdout, shown(done)


def test_ruff_check_is_clean() -> None:
    done = run_tool("ruff", "check", "--no-cache", *LINTED)
    assert done.returncode == 0, shown(done)


def test_ruff_format_leaves_every_file_unchanged() -> None:
    done = run_tool("ruff", "format", "--check", "--no-cache", *LINTED)
    assert done.returncode == 0, shown(done)


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("square = lambda x: x * x\n", "E731"),
        ("for index, item in enumerate([1]):\n    print(item)\n", "B007"),
    ],
)
def test_ruff_check_applies_the_project_rules(tmp_path: Path, source: str, rule: str) -> None:
    """The clean run above means something only if the project's configuration selects the rules:
    a file breaking one of them fails under the same configuration."""
    (tmp_path / "sample.py").write_text(source, encoding="utf-8")
    config = str(REPO / "pyproject.toml")
    done = run_tool("ruff", "check", "--no-cache", "--config", config, "sample.py", cwd=tmp_path)
    assert done.returncode == 1, shown(done)
    assert rule in done.stdout, shown(done)
