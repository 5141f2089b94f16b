"""replaylab: QA replay and regression testing for LLM agent sessions.

The public API is the names below, imported from `replaylab` itself; every other module path is
internal and may move.

For a tool pack (a module with `TOOLS: list[ToolSpec]`, DESIGN §7):

* `ToolSpec` — one tool: name, JSON schema of its arguments, declared class, implementation;
* `ToolContext` — what an implementation is called with (the service's base URL, the session);
* `ToolOutput` — what it returns (text, and whether the call failed);
* `canonical_json` — the body form the cassette matcher compares, for stable request bodies.

For a user driving replaylab from Python instead of pytest:

* `load_suite` → a `Suite` whose `scenarios` and `recordings` feed `run_item(scenario, recording,
  RunOptions(...))` → an `ItemResult` (outcome, verdict, `Defect`s with their `Code`);
* `load_transcript` reads a v3 transcript; `compact(CompactParams(...))` → `CompactResult` runs the
  compactor on a working copy, never the recording;
* `InputError` is what every loader raises for bad input (its `diagnostics` name file and line).

Importing this package is cheap on purpose: it must never import litellm (slow to import, and it
reaches the network at import, deps.md §2a), vcrpy, the HTTP clients or the pipeline. So the
names above are resolved on first use by the module `__getattr__`; the `TYPE_CHECKING` imports are
what type checkers and IDEs read, and never run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from replaylab.cassette import canonical_json
    from replaylab.compaction import CompactParams, CompactResult, compact
    from replaylab.defects import Code, Defect
    from replaylab.diagnostics import InputError
    from replaylab.qa.pipeline import run_item
    from replaylab.qa.plan import RunOptions
    from replaylab.replay.tools.pack import ToolContext, ToolOutput, ToolSpec
    from replaylab.results import ItemResult
    from replaylab.suite import load_suite
    from replaylab.transcript import load_transcript

#: public name → the module it is imported from on first use (the same homes as above)
_HOMES: dict[str, str] = {
    "ToolSpec": "replaylab.replay.tools.pack",
    "ToolContext": "replaylab.replay.tools.pack",
    "ToolOutput": "replaylab.replay.tools.pack",
    "canonical_json": "replaylab.cassette",
    "load_suite": "replaylab.suite",
    "run_item": "replaylab.qa.pipeline",
    "RunOptions": "replaylab.qa.plan",
    "ItemResult": "replaylab.results",
    "Defect": "replaylab.defects",
    "Code": "replaylab.defects",
    "load_transcript": "replaylab.transcript",
    "compact": "replaylab.compaction",
    "CompactParams": "replaylab.compaction",
    "CompactResult": "replaylab.compaction",
    "InputError": "replaylab.diagnostics",
}

# A literal list, so that type checkers can read it.
__all__ = [
    "__version__",
    "ToolSpec",
    "ToolContext",
    "ToolOutput",
    "canonical_json",
    "load_suite",
    "run_item",
    "RunOptions",
    "ItemResult",
    "Defect",
    "Code",
    "load_transcript",
    "compact",
    "CompactParams",
    "CompactResult",
    "InputError",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'replaylab' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups find it without coming here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
