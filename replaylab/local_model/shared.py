"""One local model server per process and context size, started the first time a suite records
with it (`model_settings.local_model`; a `context_window: {overflow: model}` asks for a server of
that size for the compacted run) and stopped when the process exits.

Why per process and lazy: replaying from LLM cassettes needs no server (nor the extra), so nothing
starts unless a request really has to reach the model; and every item of a recording run shares
one loaded model instead of loading the weights for each. Threads: `$REPLAYLAB_LOCAL_MODEL_THREADS`
(default 1, as for the test fixture).
"""

from __future__ import annotations

import atexit
import os
import threading

from replaylab.local_model.extra import LocalModelError
from replaylab.local_model.server import Endpoint, LocalModelServer

THREADS_ENV = "REPLAYLAB_LOCAL_MODEL_THREADS"
#: where a replayed request of the local model would go: nothing listens there, and a replay
#: never sends (an LLM cassette miss is CASSETTE_MISSING before any request)
REPLAY_ONLY_BASE_URL = "http://127.0.0.1:9/v1"

_lock = threading.Lock()
#: the running servers by context size, each with the context manager that stops it
_servers: dict[int, tuple[object, LocalModelServer]] = {}


def threads_from_env() -> int:
    configured = os.environ.get(THREADS_ENV, "1")
    try:
        threads = int(configured)
    except ValueError:
        threads = 0
    if threads < 1:
        raise LocalModelError(f"${THREADS_ENV} must be a whole number of at least 1, not {configured!r}")
    return threads


def shared_endpoint(context_tokens: int | None = None) -> Endpoint:
    """The process's running local model of that context size (the pinned default when None),
    started now if none runs yet."""
    from replaylab.local_model.pins import LOCAL_MODEL_CONTEXT_TOKENS

    size = context_tokens or LOCAL_MODEL_CONTEXT_TOKENS
    with _lock:
        if size not in _servers:
            from replaylab.local_model.server import serve

            context = serve(threads=threads_from_env(), context_tokens=size)
            if not _servers:
                atexit.register(stop_shared)
            _servers[size] = (context, context.__enter__())
        server = _servers[size][1]
        assert server.endpoint is not None
        return server.endpoint


def stop_shared() -> None:
    """Stop the process's local models, if any run."""
    with _lock:
        running = list(_servers.values())
        _servers.clear()
    for context, _server in running:
        context.__exit__(None, None, None)  # type: ignore[attr-defined]
