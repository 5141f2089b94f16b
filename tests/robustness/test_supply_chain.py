"""Supply chain: exact, hash-locked dependencies; an audited litellm; CI refuses start-up code.

Why: the compromised litellm 1.82.8 ran its payload from `litellm_init.pth`, which Python executes
at every interpreter start, without `import litellm` (../shared/reference/deps.md §1b). So CI
installs only hash-checked exact versions (`requirements.lock`, `pip install --require-hashes`)
and `.ci/check-pth` fails on any `.pth` file in site-packages that no installed distribution
declares in its RECORD.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from repo_paths import REPO_ROOT

REPO = REPO_ROOT
LOCK = REPO / "requirements.lock"
CHECK_PTH = REPO / ".ci" / "check-pth"
CI_RUN = REPO / ".ci" / "run"

#: deps.md §1b: 1.82.7 and 1.82.8 were published with a stolen token (MAL-2026-2144); 1.107.x was
#: pulled from PyPI and is suspected compromised. Audited clean: 1.78.0–1.82.6 and >= 1.83.0.
COMPROMISED_LITELLM = ("1.82.7", "1.82.8")
SUSPECT_LITELLM_SERIES = (1, 107)


def parse_lock(text: str) -> dict[str, tuple[str, list[str]]]:
    """name → (pinned version, sha256 hashes). Raises AssertionError on a line that is not
    `name==version` followed by `--hash=sha256:<64 hex>` options (pip-compile's format)."""
    joined = re.sub(r"\\\n", " ", text)
    out: dict[str, tuple[str, list[str]]] = {}
    for raw in joined.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *options = line.split()
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._\-]*)==([A-Za-z0-9.+!\-]+)", spec)
        assert match, f"requirements.lock: {spec!r} is not pinned with '=='"
        hashes = []
        for option in options:
            hashed = re.fullmatch(r"--hash=sha256:([0-9a-f]{64})", option)
            assert hashed, f"requirements.lock: {spec}: unexpected option {option!r}"
            hashes.append(hashed.group(1))
        assert hashes, f"requirements.lock: {spec} has no --hash=sha256: (pip --require-hashes would refuse it)"
        name = canonicalize_name(match.group(1))
        assert name not in out, f"requirements.lock: {name} is listed twice"
        out[name] = (match.group(2), hashes)
    return out


@pytest.fixture(scope="module")
def lock() -> dict[str, tuple[str, list[str]]]:
    assert LOCK.is_file(), "requirements.lock is missing (CI installs from it with --require-hashes)"
    return parse_lock(LOCK.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_requirement_is_pinned_and_hashed(lock) -> None:
    assert len(lock) > 20  # the whole tree, not just the direct dependencies
    for name, (version, hashes) in lock.items():
        assert Version(version)  # a real version, not a range
        assert len(set(hashes)) == len(hashes), f"{name}: repeated hash"


def test_parse_lock_rejects_unpinned_or_unhashed_lines() -> None:
    """The checker itself catches the mistakes it exists for."""
    good = "vcrpy==9.4.2 \\\n    --hash=sha256:" + "a" * 64 + "\n    # via replaylab\n"
    assert parse_lock(good) == {"vcrpy": ("9.4.2", ["a" * 64])}
    for bad in ("vcrpy>=9\n", "vcrpy==9.4.2\n", "vcrpy==9.4.2 --hash=md5:abc\n", "vcrpy==9.4.2 --hash=sha256:abc\n"):
        with pytest.raises(AssertionError):
            parse_lock(bad)


def test_litellm_is_pinned_to_an_audited_release(lock) -> None:
    version = lock["litellm"][0]
    assert version not in COMPROMISED_LITELLM
    parsed = Version(version)
    assert parsed.release[:2] != SUSPECT_LITELLM_SERIES, f"litellm {version}: the 1.107.x series was pulled"
    assert parsed >= Version("1.83.0") or Version("1.78.0") <= parsed <= Version("1.82.6"), (
        f"litellm {version} is outside the audited ranges (1.78.0–1.82.6, >= 1.83.0)"
    )


def test_vcrpy_is_9x(lock) -> None:
    assert Version(lock["vcrpy"][0]).major == 9


def test_pyproject_pins_the_same_litellm_and_allows_every_locked_version(lock, pyproject) -> None:
    project = pyproject["project"]
    wanted = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]
    (litellm,) = [r for r in wanted if canonicalize_name(r.name) == "litellm"]
    pins = [spec for spec in litellm.specifier if spec.operator == "=="]
    assert len(pins) == 1 and len(litellm.specifier) == 1, f"pyproject: litellm must be pinned exactly, got {litellm}"
    assert pins[0].version == lock["litellm"][0], "pyproject's litellm pin differs from requirements.lock's"
    for requirement in wanted:  # the lock satisfies pyproject (else pip would resolve something else in CI)
        name = canonicalize_name(requirement.name)
        assert name in lock, f"{name} (pyproject) is not in requirements.lock"
        assert requirement.specifier.contains(lock[name][0], prereleases=True), (
            f"requirements.lock pins {name}=={lock[name][0]}, outside pyproject's {requirement.specifier}"
        )


def test_ci_installs_from_the_lock_with_hashes_and_checks_pth_files() -> None:
    script = CI_RUN.read_text(encoding="utf-8")
    install = script.index("--require-hashes -r requirements.lock")
    check = script.index('.ci/check-pth "$venv"')
    tests = script.index("pytest\n")
    assert install < check < tests, "CI must install from the lock, then check .pth files, then test"


# ---------------------------------------------------------------- the .pth guard


def run_check(venv: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(CHECK_PTH), str(venv)], capture_output=True, text=True, timeout=300)


def test_check_pth_passes_on_the_running_venv() -> None:
    done = run_check(Path(sys.prefix))
    assert done.returncode == 0, done.stderr
    assert "CI: .pth check ok" in done.stdout


@pytest.fixture(scope="module")
def throwaway_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(venv, its site-packages): a fresh venv without pip (nothing installed, nothing declared)."""
    venv = tmp_path_factory.mktemp("pth") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import site; print(site.getsitepackages()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return venv, Path(site)


def test_check_pth_fails_on_an_undeclared_pth_and_names_it(throwaway_venv, tmp_path: Path) -> None:
    venv, site = throwaway_venv
    assert run_check(venv).returncode == 0  # clean venv: nothing to complain about
    marker = tmp_path / "ran"
    evil = site / "evil.pth"
    evil.write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('start-up code ran')\n")
    try:
        done = run_check(venv)
        assert done.returncode != 0
        assert str(evil) in done.stderr
        assert "undeclared .pth" in done.stderr
        assert not marker.exists(), "the check itself executed the .pth (it must run without the site module)"
    finally:
        evil.unlink()
    assert run_check(venv).returncode == 0


def test_check_pth_accepts_a_pth_its_distribution_declares(throwaway_venv) -> None:
    """The rule is "declared by an installed distribution's RECORD", not "no .pth at all": setuptools
    and editable installs ship legitimate ones."""
    venv, site = throwaway_venv
    pth = site / "legit.pth"
    dist = site / "legit-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: legit\nVersion: 1.0\n")
    (dist / "RECORD").write_text("legit.pth,,\nlegit-1.0.dist-info/METADATA,,\nlegit-1.0.dist-info/RECORD,,\n")
    pth.write_text("\n")
    try:
        done = run_check(venv)
        assert done.returncode == 0, done.stderr
        assert "1 declared .pth files" in done.stdout
    finally:
        pth.unlink()
        for path in dist.iterdir():
            path.unlink()
        dist.rmdir()
