"""Shared fixtures. Tests that need the real recorded sessions read them from ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ../shared/data; skips visibly when absent (never under CI=true: fails instead)."""
    if not SHARED_DATA.is_dir():
        message = f"../shared/data not found at {SHARED_DATA}: real-session tests need it"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return SHARED_DATA


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO
