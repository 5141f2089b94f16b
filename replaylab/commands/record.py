"""`replaylab record`: run a scripted (or real-model) session live against a tool pack's service
and write a v3 transcript plus its cassette, secrets scrubbed. See `replaylab.replay.recorder`."""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from replaylab.printable import printable

PROG = "replaylab record"


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "Run a session live against a tool pack's loopback service and write <out>/<name>.jsonl and "
            "<out>/<name>.cassette.yaml (never overwriting). The script (YAML) holds the user turns and, "
            "for --model scripted, the assistant's steps; for a real model only the user turns are used. "
            "--local-model records with replaylab's local test model, served on 127.0.0.1 for the run "
            "(needs the local-model extra). A real model's HTTP goes to an LLM cassette, by default "
            "<out>/<name>.llm.cassette.yaml. Exit status: 0 recorded, 2 usage error."
        ),
    )
    p.add_argument("--tools", required=True, metavar="PACK", help="tool pack import path, e.g. examples.helpdesk")
    p.add_argument("--script", required=True, type=Path, metavar="S.yaml", help="session script (YAML)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the transcript and cassette")
    p.add_argument("--model", default=None, help="scripted (default) or litellm/<provider>/<model>")
    p.add_argument("--name", default=None, help="session name (default: the script's name)")
    p.add_argument(
        "--llm-cassette",
        type=Path,
        default=None,
        help="LLM cassette for a real model (default: <out>/<name>.llm.cassette.yaml)",
    )
    p.add_argument(
        "--record-mode",
        default="once",
        choices=["once", "new_episodes", "all", "none"],
        help="LLM cassette record mode for a real model (default: once)",
    )
    p.add_argument("--api-base", default=None, help="API base URL for a litellm model (e.g. a local server)")
    p.add_argument(
        "--local-model",
        action="store_true",
        help="record with the local test model, served by llama.cpp on 127.0.0.1 for this run",
    )
    p.add_argument("--threads", type=int, default=1, help="CPU threads for the local model (default 1)")
    p.add_argument("--max-tokens", type=int, default=None, help="a real model's reply limit per request")
    p.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="an environment variable the pack's tools may read (repeatable); their process gets none of "
        "this environment otherwise (PATH and the locale only)",
    )
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    problem = _usage_problem(args)
    if problem:
        print(printable(f"{PROG}: {problem}"), file=sys.stderr)
        return 2
    model = args.model or "scripted"
    options: dict[str, Any] = {}
    if args.max_tokens:
        options["max_tokens"] = args.max_tokens
    started = time.monotonic()
    from replaylab.local_model.extra import LocalModelError

    try:
        recorded, cassette = _record(args, model, options)
    except LocalModelError as exc:  # the weights do not verify, or the server did not start
        print(printable(f"{PROG}: {exc}"), file=sys.stderr)
        return 1
    calls = sum(len(t.tool_calls) for t in recorded.trace.turns)
    print(printable(f"recorded {recorded.transcript} ({len(recorded.trace.turns)} turns, {calls} tool calls)"))
    print(printable(f"cassette {recorded.cassette} ({recorded.interactions} HTTP interactions)"))
    if cassette is not None:
        print(printable(f"LLM cassette {cassette}"))
    print(f"took {time.monotonic() - started:.1f} s")
    return 0


def _record(args: argparse.Namespace, model: str, options: dict[str, Any]) -> tuple[Any, Path | None]:
    from replaylab.replay.agent.script import load_script
    from replaylab.replay.recorder import record_session

    with ExitStack() as stack:
        if args.local_model:
            from replaylab.local_model.server import serve

            server = stack.enter_context(serve(threads=args.threads))
            assert server.endpoint is not None
            model = args.model or server.endpoint.litellm_model
            options.update(api_base=server.endpoint.base_url, local_tool_calls=True)
            print(printable(f"local model on {server.endpoint.root} ({args.threads} thread(s))"), flush=True)
        elif args.api_base:
            options["api_base"] = args.api_base
        cassette = args.llm_cassette
        if cassette is None and model != "scripted":
            cassette = args.out / f"{args.name or load_script(args.script).name}.llm.cassette.yaml"
        recorded = record_session(
            tools=args.tools,
            out_dir=args.out,
            script=args.script,
            model=model,
            name=args.name,
            llm_cassette=cassette,
            record_mode=args.record_mode,
            model_options=options,
            pass_env=args.pass_env,
        )
    return recorded, cassette


def _usage_problem(args: argparse.Namespace) -> str | None:
    if args.local_model:
        from replaylab.local_model.extra import missing_extra

        if args.api_base:
            return "--local-model serves its own endpoint; leave out --api-base"
        if args.model == "scripted":
            return "--local-model records a real model; leave out --model scripted"
        if args.threads < 1:
            return "--threads must be at least 1"
        return missing_extra()
    if args.max_tokens is not None and args.max_tokens < 1:
        return "--max-tokens must be at least 1"
    return None
