"""`replaylab record`: run a scripted (or real-model) session live against a tool pack's service
and write a v3 transcript plus its cassette, secrets scrubbed. See `replaylab.replay.recorder`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replaylab.printable import printable


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=(
            "Run a session live against a tool pack's loopback service and write <out>/<name>.jsonl and "
            "<out>/<name>.cassette.yaml (never overwriting). The script (YAML) holds the user turns and, "
            "for --model scripted, the assistant's steps. Exit status: 0 recorded, 2 usage error."
        ),
    )
    p.add_argument("--tools", required=True, metavar="PACK", help="tool pack import path, e.g. plugins.helpdesk")
    p.add_argument("--script", required=True, type=Path, metavar="S.yaml", help="session script (YAML)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the transcript and cassette")
    p.add_argument("--model", default="scripted", help="scripted (default) or litellm/<provider>/<model>")
    p.add_argument("--name", default=None, help="session name (default: the script's name)")
    p.add_argument("--llm-cassette", type=Path, default=None, help="LLM cassette for a litellm model")
    p.add_argument(
        "--record-mode",
        default="once",
        choices=["once", "new_episodes", "all", "none"],
        help="LLM cassette record mode for a litellm model (default: once)",
    )
    p.add_argument("--api-base", default=None, help="API base URL for a litellm model (e.g. a local server)")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from replaylab.replay.recorder import record_session

    options = {"api_base": args.api_base} if args.api_base else {}
    recorded = record_session(
        tools=args.tools,
        out_dir=args.out,
        script=args.script,
        model=args.model,
        name=args.name,
        llm_cassette=args.llm_cassette,
        record_mode=args.record_mode,
        model_options=options,
    )
    calls = sum(len(t.tool_calls) for t in recorded.trace.turns)
    print(printable(f"recorded {recorded.transcript} ({len(recorded.trace.turns)} turns, {calls} tool calls)"))
    print(printable(f"cassette {recorded.cassette} ({recorded.interactions} HTTP interactions)"))
    return 0
