"""The public API: the names `replaylab` exports, resolved lazily so that `import replaylab` stays
cheap, the same names type checkers see, and the bundled tool pack importing nothing else."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import replaylab
from repo_paths import REPO_ROOT

REPO = REPO_ROOT
#: what a plain `import replaylab` (or a tool pack's import) must not pay for
HEAVY = ("litellm", "vcr", "deepdiff", "jinja2", "replaylab.qa")


def fresh_interpreter(code: str) -> dict:
    """Run `code` in a new Python (outside the repo) and return the JSON it prints last."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO / "tests")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def typing_imports() -> dict[str, str]:
    """name → module of each `from M import name` under `if TYPE_CHECKING:` in replaylab/__init__.py."""
    tree = ast.parse(Path(replaylab.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    return {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_import_replaylab_imports_no_heavy_module_and_no_submodule():
    loaded = fresh_interpreter(
        "import json, sys\n"
        "import replaylab\n"
        f"print(json.dumps([m for m in sys.modules if m in {HEAVY!r} or m.startswith('replaylab.')]))\n"
    )
    assert loaded == []


def test_every_public_name_resolves_to_the_object_of_its_home():
    homes = typing_imports()
    assert set(replaylab.__all__) == {"__version__", *homes}  # type checkers see every public name
    for name, module in homes.items():
        assert getattr(replaylab, name) is getattr(importlib.import_module(module), name), name
    assert set(replaylab.__all__) <= set(dir(replaylab))


def test_every_public_name_resolves_in_a_fresh_interpreter():
    resolved = fresh_interpreter(
        "import json, replaylab\nprint(json.dumps({n: getattr(replaylab, n) is not None for n in replaylab.__all__}))\n"
    )
    assert resolved == dict.fromkeys(replaylab.__all__, True)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="'no_such_name'"):
        replaylab.no_such_name  # noqa: B018
    with pytest.raises(ImportError, match="no_such_name"):
        from replaylab import no_such_name  # noqa: F401


def test_version_is_the_installed_distribution_version():
    assert replaylab.__version__ == importlib.metadata.version("replaylab")


def test_importing_the_bundled_tool_pack_stays_cheap():
    loaded = fresh_interpreter(
        "import json, sys\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "import examples.helpdesk\n"
        "assert examples.helpdesk.TOOLS\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    assert loaded == []


def test_the_bundled_tool_pack_imports_only_the_public_api():
    files = sorted((REPO / "examples").rglob("*.py"))
    assert files
    offending = []
    public_imports = 0
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                offending += [f"{file.name}: import {a.name}" for a in node.names if a.name.startswith("replaylab")]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("replaylab"):
                if node.module != "replaylab":
                    offending.append(f"{file.name}: from {node.module} import ...")
                    continue
                public_imports += 1
                offending += [
                    f"{file.name}: {a.name} is not public" for a in node.names if a.name not in replaylab.__all__
                ]
    assert offending == []
    assert public_imports >= 1  # the pack's tools are built from the public API
