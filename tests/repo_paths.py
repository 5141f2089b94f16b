"""Where the tests find the repository, their own folder (helpers, data) and the shared real data."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO_ROOT = TESTS.parent
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()
