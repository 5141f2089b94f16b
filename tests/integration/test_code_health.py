"""Code health: the layer contracts hold, third-party packages enter through their own rooms, no module
grows unnoticed, user-facing errors share one base, and the code is lint-clean and formatted.

Why tests: CI runs exactly the README's test command (`.ci/run`), so a check that is not a test
does not run in CI. The tools are the venv's own (pinned in the `[test]` extra), found next to
`sys.executable`, and run over the whole tree with the configuration in pyproject.toml.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from repo_paths import REPO_ROOT

REPO = REPO_ROOT
BIN = Path(sys.executable).parent  # not resolved: a venv's python is a symlink out of the venv
LINTED = ("replaylab", "examples", "bench", "tests", "conftest.py")
#: past this many lines a module must be listed in pyproject.toml ([tool.replaylab.large-modules]) with its reason
MODULE_LINES = 600


def run_tool(name: str, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    executable = BIN / name
    assert executable.is_file(), f"{executable} is missing: pip install -e '.[test]' installs it"
    return subprocess.run([str(executable), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def shown(done: subprocess.CompletedProcess[str]) -> str:
    return f"{' '.join(done.args)} exited {done.returncode}\n{done.stdout}{done.stderr}"


def test_import_contracts_are_kept() -> None:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    names = [contract["name"] for contract in contracts["contracts"]]
    kinds = {contract["type"] for contract in contracts["contracts"]}
    assert kinds == {"layers", "independence", "acyclic_siblings"}, "pyproject.toml: layers, independence, no cycles"
    done = run_tool("lint-imports", "--no-cache")
    assert done.returncode == 0, shown(done)
    kept = " ".join(done.stdout.split())  # lint-imports wraps long contract names
    for name in names:
        assert f"{name} KEPT" in kept, shown(done)


@pytest.fixture(scope="module")
def imports() -> Any:
    """replaylab's import graph, third-party packages included (grimp: import-linter's own graph)."""
    import grimp

    return grimp.build_graph("replaylab", include_external_packages=True, cache_dir=None)


def importers_of(graph: Any, package: str) -> set[str]:
    return {m for m in graph.find_modules_that_directly_import(package) if m.startswith("replaylab")}


@pytest.mark.parametrize(
    ("package", "allowed", "why"),
    [
        ("pytest", ("replaylab.pytest_plugin",), "only the plugin is a pytest module"),
        ("_pytest", ("replaylab.pytest_plugin",), "only the plugin is a pytest module"),
        (
            "litellm",
            ("replaylab.litellm_import",),
            "litellm's offline switches are set before its import, in one place",
        ),
        ("vcr", ("replaylab.replay.cassettes",), "vcrpy's patching is confined to the cassette rooms"),
    ],
)
def test_a_third_party_package_enters_through_its_own_room(
    imports: Any, package: str, allowed: tuple, why: str
) -> None:
    outside = sorted(m for m in importers_of(imports, package) if not m.startswith(allowed))
    assert outside == [], f"{package} imported outside {allowed} ({why}): {outside}"


def test_no_module_grows_past_the_limit_unless_listed_with_its_reason() -> None:
    listed = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["replaylab"]["large-modules"]
    sizes = {
        str(path.relative_to(REPO)): sum(1 for _ in path.open(encoding="utf-8"))
        for path in (REPO / "replaylab").rglob("*.py")
        if "node_modules" not in path.parts
    }
    unlisted = {path: lines for path, lines in sizes.items() if lines > MODULE_LINES and path not in listed}
    assert unlisted == {}, f"modules over {MODULE_LINES} lines: split them, or list each with its reason"
    stale = sorted(path for path in listed if sizes.get(path, 0) <= MODULE_LINES)
    assert stale == [], f"listed as large but no longer over {MODULE_LINES} lines (or gone): {stale}"
    assert all(isinstance(reason, str) and len(reason) > 20 for reason in listed.values())


#: exceptions that never reach a user as errors: each is caught where it is raised and turned into a
#: finding, a diagnostic, a retry or a pytest outcome
INTERNAL_EXCEPTIONS = {
    "replaylab.compactors.external.Failed",
    "replaylab.report.run.BaselineProblem",
    "replaylab.replay.agent.script.Unresolved",
    "replaylab.replay.tools.worker_protocol.ProtocolError",
    "replaylab.suite.recording_glob.GlobProblem",
    "replaylab.yaml_shape.ShapeProblem",
    "replaylab.input_files.NotAFileError",
    "replaylab.input_files.TooBigError",
    "replaylab.compaction.truncation.ContextOverflowError",
    "replaylab.pytest_plugin.collect.ReplayError",
    "replaylab.pytest_plugin.collect.ReplayFailure",
    "replaylab.pytest_plugin.collect.CannotCompact",
}


def test_every_error_a_user_sees_derives_from_one_base() -> None:
    """`replaylab.errors.ReplaylabError`: the command line prints it as one line, never a traceback."""
    import importlib
    import inspect
    import pkgutil

    import replaylab
    from replaylab.errors import ReplaylabError

    found = {}
    for info in pkgutil.walk_packages(replaylab.__path__, "replaylab."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == info.name:
                if not name.startswith("_"):
                    found[f"{info.name}.{name}"] = value
    assert INTERNAL_EXCEPTIONS <= set(found), sorted(INTERNAL_EXCEPTIONS - set(found))
    outside = sorted(n for n, c in found.items() if n not in INTERNAL_EXCEPTIONS and not issubclass(c, ReplaylabError))
    assert outside == [], f"user-facing errors not derived from ReplaylabError: {outside}"


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


#: the only packages mypy may check less than strictly (the relaxed override in pyproject.toml), each until it is clean
NOT_YET_STRICT = {"replaylab.replay.*", "replaylab.commands.*", "replaylab.pytest_plugin.*"}
RELAXED_FLAGS = ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any")


@pytest.fixture(scope="module")
def mypy_cache(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mypy's incremental cache: kept in pytest's cache folder from run to run (a warm run takes
    seconds), else (`-p no:cacheprovider`, a fresh clone) a folder of this session."""
    cache = getattr(pytestconfig, "cache", None)
    return cache.mkdir("mypy") if cache is not None else tmp_path_factory.mktemp("mypy-cache")


def test_mypy_finds_no_error_in_the_package(mypy_cache: Path) -> None:
    """The whole package with pydantic's plugin, strict where pyproject.toml says so."""
    done = run_tool("mypy", "--cache-dir", str(mypy_cache))
    assert done.returncode == 0, shown(done)
    assert "Success: no issues found" in done.stdout, shown(done)


def test_mypy_is_strict_but_for_the_packages_listed() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["packages"] == ["replaylab"] and "pydantic.mypy" in config["plugins"]
    assert config["strict"] is True
    relaxed = [o for o in config["overrides"] if any(o.get(flag) is False for flag in RELAXED_FLAGS)]
    modules = {module for override in relaxed for module in override["module"]}
    assert modules <= NOT_YET_STRICT, f"left out of strict mode: {sorted(modules - NOT_YET_STRICT)}"


def test_mypy_applies_the_project_configuration(tmp_path: Path) -> None:
    """The clean run above means something only if the configuration does what it says: in a
    module of a strict package an unannotated function is an error, and pydantic's plugin checks a
    model's constructor against its fields."""
    package = tmp_path / "replaylab" / "transcript"
    package.mkdir(parents=True)
    (tmp_path / "replaylab" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "probe.py").write_text(
        "from pydantic import BaseModel\n\n\n"
        "class Probe(BaseModel):\n    count: int\n\n\n"
        "Probe(cont=1)\n\n\n"
        "def untyped(value):\n    return value\n",
        encoding="utf-8",
    )
    config = str(REPO / "pyproject.toml")
    done = run_tool(
        "mypy",
        "--config-file",
        config,
        "--cache-dir",
        str(tmp_path / "cache"),
        "replaylab/transcript/probe.py",
        cwd=tmp_path,
    )
    assert done.returncode == 1, shown(done)
    assert 'Unexpected keyword argument "cont" for "Probe"' in done.stdout, shown(done)
    assert "[no-untyped-def]" in done.stdout, shown(done)
