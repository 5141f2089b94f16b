"""llama.cpp's own HTTP server (through xllamacpp, in this process) serving the local model on
127.0.0.1 only, as an OpenAI-compatible endpoint (`/v1/chat/completions`, `/v1/models`, `/health`).

`LocalModelServer` is a context manager: entering starts the server (port 0 lets the OS pick a
free one, so two runs never race for a port) and waits until `/health` answers; leaving stops it.
`serve()` does the whole job: checks the extra, verifies the weights, then starts the server.

Settings: offline (llama.cpp never fetches anything), the GGUF's own chat template (`use_jinja`),
one slot, a fixed sampling seed, and threads from the caller, 1 by default because the machines
are shared and llama.cpp's speed collapses when its threads compete for the cores.

Determinism: at temperature 0 llama.cpp's prompt cache still changes replies (a request whose
prefix is cached is evaluated differently from a cold one). A client that needs the same reply
to the same request sends `DETERMINISTIC_FIELDS` in every request body (through litellm:
`extra_body`); it costs about three times the time of a cached prompt.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from replaylab.local_model import pins as LM
from replaylab.local_model.extra import LocalModelError, require_extra
from replaylab.local_model.weights import MODEL, Weights, ensure_weights

LOOPBACK = "127.0.0.1"
#: request fields that make the same request give the same reply (see the module's docstring)
DETERMINISTIC_FIELDS: dict[str, Any] = {"cache_prompt": False, "temperature": 0}
#: llama.cpp's sampling seed, fixed so that sampled (temperature > 0) replies repeat too
SEED = 0
HEALTH_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Endpoint:
    """Where a running local model answers, and what to tell litellm."""

    root: str  # http://127.0.0.1:PORT
    model: str  # the name the server serves the model under

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (litellm's `api_base`)."""
        return f"{self.root}/v1"

    @property
    def port(self) -> int:
        return int(urlsplit(self.root).port or 0)

    @property
    def litellm_model(self) -> str:
        """replaylab's model spec for it: an OpenAI-compatible provider at `base_url`."""
        return f"litellm/openai/{self.model}"


class LocalModelServer:
    """One llama.cpp server for a verified model file; a context manager that stops it."""

    def __init__(
        self,
        model_path: Path,
        *,
        name: str = LM.LOCAL_MODEL_NAME,
        port: int = 0,
        threads: int = 1,
        context_tokens: int = LM.LOCAL_MODEL_CONTEXT_TOKENS,
        verbose: bool = False,
        health_timeout_s: float = HEALTH_TIMEOUT_S,
    ) -> None:
        if threads < 1:
            raise LocalModelError(f"threads must be at least 1, not {threads}")
        if not 0 <= port <= 65535:
            raise LocalModelError(f"port must be 0 (any free port) or 1-65535, not {port}")
        self.model_path = Path(model_path)
        self.name = name
        self.port = port
        self.threads = threads
        self.context_tokens = context_tokens
        self.verbose = verbose
        self.health_timeout_s = health_timeout_s
        self.endpoint: Endpoint | None = None
        self.load_seconds: float | None = None
        self._server: Any = None

    def start(self) -> Endpoint:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.model_alias = {self.name}
        params.hostnames = [LOOPBACK]
        params.port = self.port
        params.offline = True
        params.n_ctx = self.context_tokens
        params.n_parallel = 1
        params.use_jinja = True
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.sampling.seed = SEED
        params.verbosity = 3 if self.verbose else 0
        started = time.monotonic()
        try:
            self._server = xllamacpp.Server(params)
        except RuntimeError as exc:
            where = f"port {self.port}" if self.port else "a free port"
            raise LocalModelError(
                f"llama.cpp's server did not start on {LOOPBACK} ({where}) with {self.model_path}: {exc}"
            ) from None
        endpoint = Endpoint(root=str(self._server.listening_address).rstrip("/"), model=self.name)
        if urlsplit(endpoint.root).hostname != LOOPBACK:
            self.stop()
            raise LocalModelError(f"llama.cpp's server listens on {endpoint.root}, not on {LOOPBACK}; stopped it")
        self.endpoint = endpoint
        try:
            wait_healthy(endpoint.root, self.health_timeout_s)
        except BaseException:
            self.stop()
            raise
        self.load_seconds = time.monotonic() - started
        return endpoint

    def stop(self) -> None:
        """Stop the server (llama.cpp stops it when its last reference goes) and free the model."""
        server, self._server = self._server, None
        del server

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


@contextmanager
def serve(
    *,
    port: int = 0,
    threads: int = 1,
    weights: Weights = MODEL,
    context_tokens: int = LM.LOCAL_MODEL_CONTEXT_TOKENS,
    verbose: bool = False,
) -> Iterator[LocalModelServer]:
    """Check the extra, verify the weights, start the server (its context `context_tokens`:
    llama.cpp refuses a longer prompt with its own overflow error); yields the running server (its
    `endpoint`), stopped on leaving."""
    require_extra()
    verified = ensure_weights(weights)
    server = LocalModelServer(
        verified.path,
        name=weights.name,
        port=port,
        threads=threads,
        context_tokens=context_tokens,
        verbose=verbose,
    )
    with server:
        yield server


def wait_healthy(root: str, timeout_s: float) -> None:
    """Until `/health` says ok (llama.cpp answers 503 while it loads); a `LocalModelError` after
    `timeout_s` naming the last answer."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    while True:
        try:
            with opener.open(f"{root}/health", timeout=5) as response:
                body = response.read().decode("utf-8", "replace")
            if response.status == 200 and json.loads(body).get("status") == "ok":
                return
            last = f"HTTP {response.status} {body[:200]}"
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise LocalModelError(f"llama.cpp's server at {root} is not healthy after {timeout_s:.0f} s ({last})")
        time.sleep(0.2)
