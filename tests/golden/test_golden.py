"""Golden results: every item of the bundled suites, the bench's generated sessions and the real
sessions gives the verdict, defects, ledger, windows and summary it gave when the golden files
were last written. A behavioural change is a reviewed diff: `pytest tests/golden --update-golden`
rewrites the files, and the change shows in git (for the bundled suites, line by line in
tests/golden/bundled/<suite>/<recording>.<scenario>.yaml).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from .golden import (
    BUNDLED,
    bench_jobs,
    bundled_file,
    bundled_roots,
    differences,
    dump,
    fingerprint,
    golden_file,
    normalised,
    readable,
    readable_differences,
    realdata_jobs,
    run_jobs,
)


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


def test_bundled_suites_match_the_golden_results(request, bundled_results):
    """One readable file per item, compared as text: every part of the result, in full."""
    roots = [Path(root) for root in bundled_roots()]
    actual = {bundled_file(key): readable(key, normalised(result, roots)) for key, result in bundled_results.items()}
    assert len(actual) >= 60
    written = {p: p.read_text(encoding="utf-8") for p in sorted(BUNDLED.rglob("*.yaml"))}
    if request.config.getoption("update_golden"):
        for path in set(written) - set(actual):
            path.unlink()
        for path, text in actual.items():
            if written.get(path) != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        for folder in BUNDLED.iterdir():
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        return
    assert written, f"{BUNDLED} is empty: write it with `pytest tests/golden --update-golden`"
    changed = readable_differences(written, actual)
    assert not changed, (
        f"the bundled suites differ from their golden results in {BUNDLED.name}/ (a wanted change: "
        "`pytest tests/golden --update-golden`, then review the diff):\n  " + "\n  ".join(changed)
    )


def test_generated_bench_sessions_match_the_golden_results(request, tmp_path: Path):
    actual = run_jobs(bench_jobs(tmp_path), view=fingerprint)
    assert len(actual) >= 100
    _check(request, "bench", actual)


@pytest.mark.realdata
def test_real_sessions_match_the_golden_results(request, shared_data, swept_sessions):
    jobs, skipped = realdata_jobs(shared_data, swept_sessions)
    actual = {**run_jobs(jobs, view=fingerprint), **skipped}
    assert len(actual) >= 450
    _check(request, "realdata", actual)
