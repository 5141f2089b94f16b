"""The `replaylab_local_model` fixture: the local test model served by llama.cpp on 127.0.0.1 for
a whole test session, stopped after it (`replaylab.local_model`).

It yields the running server's `Endpoint` (`base_url`, `model`, `litellm_model`). Without the
test-only extra it skips, saying what to install. llama.cpp is imported only when a test asks for
the fixture, so loading the plugin stays cheap. Threads: `$REPLAYLAB_LOCAL_MODEL_THREADS`
(default 1: the machines are shared, and competing threads slow llama.cpp down, not up).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from replaylab.local_model.server import Endpoint


@pytest.fixture(scope="session")
def replaylab_local_model() -> Iterator[Endpoint]:
    """The local model's endpoint on 127.0.0.1; requests should send `cache_prompt: false`
    (`replaylab.local_model.server.DETERMINISTIC_FIELDS`) for reproducible replies."""
    from replaylab.local_model.extra import missing_extra

    reason = missing_extra()
    if reason is not None:
        pytest.skip(f"replaylab_local_model: {reason}")
    from replaylab.local_model.server import serve

    with serve(threads=_threads()) as server:
        assert server.endpoint is not None
        yield server.endpoint


def _threads() -> int:
    from replaylab.local_model.extra import LocalModelError
    from replaylab.local_model.shared import threads_from_env

    try:
        return threads_from_env()
    except LocalModelError as exc:
        raise pytest.UsageError(str(exc)) from None
