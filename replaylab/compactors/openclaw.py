"""OpenClaw 2026.9.6's own compaction as the compactor under test (`compactor: openclaw`): one
node worker per replaylab process serves every compaction of the run (`compactors.node_worker`:
the protocol, the containment and the bounds).

Loading OpenClaw's modules takes seconds (its bundle is one graph of ~7,000 chunks); a compaction
takes a fraction of one. The pinned OpenClaw's driver (`oracles/node/openclaw-2026.9.6/
openclaw_compact.mjs --serve`) is started on the first compaction; a change of
`REPLAYLAB_OPENCLAW_NODE` ends it and the next compaction starts a new one.
"""

from __future__ import annotations

import os
from pathlib import Path

from replaylab.compactors.node_worker import (
    MAX_ANSWER_BYTES,
    STDERR_KEPT_BYTES,
    NodeWorker,
    WorkerAnswer,
    WorkerProgram,
)
from replaylab.oracles.openclaw import NODE_DIR, node_executable, oracle_unavailable

__all__ = ["COMPACT_ENTRY", "MAX_ANSWER_BYTES", "STDERR_KEPT_BYTES", "OpenClawWorker", "WorkerAnswer", "shared_worker"]

#: the variable that names the node to run OpenClaw with (`oracles.openclaw.node_executable`)
NODE_VARIABLE = "REPLAYLAB_OPENCLAW_NODE"

COMPACT_ENTRY = NODE_DIR / "openclaw_compact.mjs"


def _log_level() -> dict[str, str]:
    """OpenClaw's own log level when the user asks for one (it stays silent otherwise)."""
    level = os.environ.get("REPLAYLAB_OPENCLAW_LOG_LEVEL")
    return {"REPLAYLAB_OPENCLAW_LOG_LEVEL": level} if level else {}


OPENCLAW = WorkerProgram(
    name="OpenClaw",
    entry=COMPACT_ENTRY,
    node=node_executable,
    unavailable=oracle_unavailable,
    no_node="no node >= 24.16 to run OpenClaw",
    node_variable=NODE_VARIABLE,
    environment=_log_level,
)


class OpenClawWorker(NodeWorker):
    """The OpenClaw driver's worker; `entry` / `node`: a stand-in program or node (tests)."""

    def __init__(self, entry: Path = COMPACT_ENTRY, node: str | None = None):
        super().__init__(OPENCLAW, entry, node)


_SHARED = OpenClawWorker()


def shared_worker() -> OpenClawWorker:
    """The process's worker for the bundled `compactor: openclaw`."""
    return _SHARED
