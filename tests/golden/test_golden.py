"""Golden results: every item of the bundled suites, the bench's generated sessions and the real
sessions gives the verdict, defects, ledger, windows and summary it gave when the golden files
were last written. A behavioural change is a reviewed diff: `pytest tests/golden --update-golden`
rewrites the files, and the change shows in git.
"""

from __future__ import annotations

import orjson
import pytest

from .golden import bench_jobs, bundled_jobs, differences, dump, golden_file, realdata_jobs, run_jobs


def _check(request: pytest.FixtureRequest, corpus: str, actual: dict) -> None:
    path = golden_file(corpus)
    if request.config.getoption("update_golden"):
        path.write_bytes(dump(actual))
        return
    assert path.is_file(), f"{path} is missing: write it with `pytest tests/golden --update-golden`"
    expected = orjson.loads(path.read_bytes())
    changed = differences(expected, actual)
    assert not changed, (
        f"{len(changed)} item(s) of {corpus} differ from {path.name} "
        "(a wanted change: `pytest tests/golden --update-golden`, then review the diff):\n  " + "\n  ".join(changed)
    )


def test_bundled_suites_match_the_golden_results(request):
    actual = run_jobs(bundled_jobs())
    assert len(actual) >= 60
    _check(request, "bundled", actual)


def test_generated_bench_sessions_match_the_golden_results(request, tmp_path):
    actual = run_jobs(bench_jobs(tmp_path))
    assert len(actual) >= 100
    _check(request, "bench", actual)


@pytest.mark.realdata
def test_real_sessions_match_the_golden_results(request, shared_data, tmp_path):
    jobs, skipped = realdata_jobs(shared_data, tmp_path)
    actual = {**run_jobs(jobs), **skipped}
    assert len(actual) >= 450
    _check(request, "realdata", actual)
