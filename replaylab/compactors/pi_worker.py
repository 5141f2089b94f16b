"""pi's own compaction as the compactor under test (`compactor: pi`): one node worker per pinned pi
and replaylab process serves every compaction of the run (`compactors.node_worker`: the protocol,
the containment and the bounds).

Loading pi's modules takes most of the half second a pi compaction took in a process of its own;
the compaction itself is quick. The pinned pi's driver (`oracles/node/pi-<version>/pi_compact.mjs
--serve`, protocol in `oracles/node/compact_worker.mjs`) is started on the first compaction; a
change of `REPLAYLAB_NODE` ends it and the next compaction starts a new one.
"""

from __future__ import annotations

import threading

from replaylab.compactors.node_worker import NodeWorker, WorkerProgram
from replaylab.oracles import agent
from replaylab.oracles.pi import compact_entry
from replaylab.upstream.profiles import AgentProfile

#: the variable that names the node for every agent's oracle and compactor (`oracles.agent.node_executable`)
NODE_VARIABLE = "REPLAYLAB_NODE"

_WORKERS: dict[str, NodeWorker] = {}
_LOCK = threading.Lock()


def program(profile: AgentProfile) -> WorkerProgram:
    """The compaction program of the pinned pi `profile`."""
    low = ".".join(map(str, profile.node_minimum))
    return WorkerProgram(
        name=profile.label,
        entry=compact_entry(profile),
        node=lambda: agent.node_executable(profile),
        unavailable=lambda: agent.oracle_unavailable(profile),
        no_node=f"no node >= {low} to run {profile.label}",
        node_variable=NODE_VARIABLE,
    )


def shared_worker(profile: AgentProfile) -> NodeWorker:
    """The process's worker for the pinned pi `profile` (the pi `compactor: pi` runs for an item)."""
    with _LOCK:
        worker = _WORKERS.get(profile.name)
        if worker is None:
            worker = _WORKERS[profile.name] = NodeWorker(program(profile))
        return worker
