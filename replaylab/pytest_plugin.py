"""pytest plugin entry point (registered under `pytest11`). Built out in the QA pipeline work.

Loading it must stay cheap: no litellm, vcrpy or deepdiff imports at module level.
"""

from __future__ import annotations


def pytest_addoption(parser) -> None:
    group = parser.getgroup("replaylab", "replaylab: compaction replay and regression testing")
    group.addoption("--replaylab", action="store_true", default=False,
                    help="collect suite YAML files under the given paths and replay each recording × scenario")
