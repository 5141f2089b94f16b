"""One local model server per process, started the first time a suite records with it
(`model_settings.local_model`) and stopped when the process exits.

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
_context: object | None = None
_server: LocalModelServer | None = None


def threads_from_env() -> int:
    configured = os.environ.get(THREADS_ENV, "1")
    try:
        threads = int(configured)
    except ValueError:
        threads = 0
    if threads < 1:
        raise LocalModelError(f"${THREADS_ENV} must be a whole number of at least 1, not {configured!r}")
    return threads


def shared_endpoint() -> Endpoint:
    """The process's running local model (started now if it is not running yet)."""
    global _context, _server
    with _lock:
        if _server is None:
            from replaylab.local_model.server import serve

            context = serve(threads=threads_from_env())
            _server = context.__enter__()
            _context = context
            atexit.register(stop_shared)
        assert _server.endpoint is not None
        return _server.endpoint


def stop_shared() -> None:
    """Stop the process's local model, if one runs."""
    global _context, _server
    with _lock:
        context, _context, _server = _context, None, None
    if context is not None:
        context.__exit__(None, None, None)  # type: ignore[attr-defined]
