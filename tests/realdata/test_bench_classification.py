"""`python -m bench.classification` over every data set of ../shared/data: the six sets of
SOURCES.md, the two the real-session sweep leaves out (`EXTRA_SOURCES`) included, with the counts
their SOURCES.md / stats.json give and the classes their tool_classes.json declare."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.classification import real_calls, table

pytestmark = pytest.mark.realdata


def test_every_data_set_is_classified_with_its_documented_counts(shared_data: Path, tmp_path: Path) -> None:
    rows = table(real_calls(shared_data, tmp_path))
    calls = {source: row["calls"] for source, row in rows.items()}
    # SOURCES.md: τ 1,164, τ² 2,477, τ² extra 1,936, Claude Code (spotter) 1,136, fasthooks 10
    assert calls == {
        "tau-bench": 1164,
        "tau2-bench": 2477,
        "claude-code": 1136,
        "pi": 1466,
        "tau2-bench-extra": 1936,
        "claude-code-fasthooks": 10,
    }
    # τ² extra: write 353 by the `@is_tool(ToolType.WRITE)` decorators; fasthooks: Write 3 and 2 of
    # its 5 Bash calls (`python3 number_generator.py`, `python ...`: programs the command does not
    # show); its `ls`, `cat` calls are read-only
    assert rows["tau2-bench-extra"]["mutating"] == 353
    fasthooks = rows["claude-code-fasthooks"]
    assert (fasthooks["mutating"], fasthooks["shell"], fasthooks["shell_mutating"]) == (5, 5, 2)
