"""What the distribution ships: the package tree setuptools builds from pyproject.toml (the files
a wheel is made of) holds `py.typed` (PEP 561), the report templates and the seeded mutants, and
`replaylab selftest` finds its mutants in that tree, away from the repository's tests/."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import REPO_ROOT

REPO = REPO_ROOT
#: what an installed node package holds that the package-data patterns would match elsewhere
INSTALLED_STAND_IN = ("package.json", "index.mjs", "config.yaml", "schema.sql", "__init__.py")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`build_py` on a copy of the sources: the build tree that bdist_wheel packs (the copy keeps
    setuptools' egg-info out of the worktree). The oracles' installed node_modules stay out of the
    copy (they are over a gigabyte): each project gets a small stand-in holding every kind of file
    the package-data patterns take, which the build must leave out as it leaves out the real ones."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for package in ("replaylab",):
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    for project in (source / "replaylab" / "oracles" / "node").iterdir():
        if project.is_dir():
            installed = project / "node_modules" / "some-agent"
            installed.mkdir(parents=True)
            for name in INSTALLED_STAND_IN:
                (installed / name).write_text("{}\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("build-lib")
    proc = subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "--build-lib", str(out)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_build_ships_py_typed_and_the_package_data(built: Path):
    assert (built / "replaylab" / "py.typed").is_file()
    templates = {p.name for p in (built / "replaylab" / "report" / "templates").iterdir()}
    assert {"report.html.j2", "macros.html.j2"} <= templates


def test_the_build_ships_each_oracles_node_project_but_never_its_installed_node_modules(built: Path):
    node = built / "replaylab" / "oracles" / "node"
    projects = sorted(p.name for p in (REPO / "replaylab" / "oracles" / "node").iterdir() if p.is_dir())
    assert projects and all((node / name / "package-lock.json").is_file() for name in projects)
    assert not [str(p) for p in built.rglob("node_modules")]


def test_the_build_ships_the_seeded_mutants(built: Path):
    shipped = {p.name for p in (built / "replaylab" / "mutants").glob("*.py")}
    in_source = {p.name for p in (REPO / "replaylab" / "mutants").glob("*.py")}
    assert "_kit.py" in shipped and len(shipped) >= 5
    assert shipped == in_source


def test_selftest_finds_the_shipped_mutants_in_the_built_tree(built: Path):
    """Run from the build tree alone, as an installed replaylab would be: the default mutants folder
    is inside it and every mutant loads."""
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(built)!r})\n"
        "import replaylab\n"
        "from replaylab.selftest import DEFAULT_MUTANTS, load_mutants\n"
        "print(json.dumps({'package': replaylab.__file__, 'folder': str(DEFAULT_MUTANTS),\n"
        "                  'mutants': [m.name for m in load_mutants()]}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=built)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).is_relative_to(built)
    assert Path(found["folder"]) == (built / "replaylab" / "mutants").resolve()
    assert len(found["mutants"]) >= 14 and "orphan-result-after-aborted-call" in found["mutants"]
