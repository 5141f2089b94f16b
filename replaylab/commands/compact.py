"""`replaylab compact FILE`: run `compact()` (forced, like `/compact`) on a working copy and print it.

Prints the tokens before and after, the cut point, the protected entries, the summary and the
replayCheck findings; `--json` prints the `CompactResult` with camelCase keys instead. The input
file is only read: the compaction entry goes to a working copy (`--out COPY`, which must not
exist yet; without it, a temporary copy removed before the command exits).

Exit status: 0 compacted with no blocking finding, 1 compaction failed or a blocking finding,
2 usage error (missing file, unknown leaf, bad option or classification file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import DIRECTORY, MISSING, REGULAR, kind_of, phrase
from replaylab.printable import printable
from replaylab.upstream import openclaw_2026_4_12 as OC

SUMMARY_PREVIEW_CHARS = 4_000
#: a transcript this big takes seconds to compact (about 2 s per 10 MB measured with
#: bench/cases/pipeline_scaling.py): worth a line on a terminal before the wait
BIG_FILE_BYTES = 10_000_000


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, metavar="FILE", help="pi / OpenClaw JSONL transcript (never written)")
    p.add_argument("--mode", choices=["safeguard", "auto", "aggressive", "manual"], default="safeguard")
    p.add_argument("--context-tokens", type=int, default=OC.DEFAULT_CONTEXT_TOKENS, metavar="N")
    p.add_argument(
        "--keep-recent-tokens", type=int, default=None, metavar="N", help="pi keepRecentTokens (default 20000)"
    )
    p.add_argument(
        "--reserve-tokens-floor",
        type=int,
        default=OC.DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR,
        metavar="N",
        help="the reserve kept free of contextTokens (default 20000); not read for openclaw@2026.9.6, which "
        "retired it and keeps the least of 20000 and a quarter of contextTokens",
    )
    p.add_argument("--max-history-share", type=float, default=OC.DEFAULT_MAX_HISTORY_SHARE, metavar="F")
    p.add_argument(
        "--allow-mutating-event-truncate",
        action="store_true",
        help="safeguard may truncate protected tool results (never calls) when the protected entries and the "
        "smallest summary do not fit the budget; off, it fails with the numbers",
    )
    p.add_argument("--leaf", metavar="ID", help="compact the path ending at this entry (default: the file's leaf)")
    p.add_argument("--model", metavar="MODEL", help="litellm model for the summary (default: extractive, offline)")
    p.add_argument("--tool-classes", metavar="JSON", help="tool → class map: a tool_classes.json path or inline JSON")
    p.add_argument("--out", type=Path, metavar="COPY", help="working copy to write (must not exist)")
    p.add_argument("--no-replay-check", action="store_true", help="skip the invariant checks")
    p.add_argument("--json", action="store_true", help="print the CompactResult as JSON (camelCase keys)")
    p.add_argument(
        "--agent",
        metavar="AGENT@VERSION",
        help="the agent whose rules apply (context rebuild, estimate, cut): "
        "openclaw@2026.9.6, pi@0.73.1, ... (default: the session's own, replaylab.upstream.profiles)",
    )
    p.add_argument(
        "--verify",
        "--verify-with-pi",
        dest="verify_with_pi",
        action="store_true",
        help="compare the compacted window with the context the agent itself builds from the working copy "
        "(needs its oracle: `npm ci --prefix replaylab/oracles/node/<agent>-<version>`); exit 1 when they differ",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help=f"print progress lines on stderr (default: for files over {BIG_FILE_BYTES // 1_000_000} MB "
        "when stderr is a terminal)",
    )
    p.set_defaults(run=run)
    return p


def _progress(args: argparse.Namespace) -> Any:
    """A progress line writer on stderr, or None: `--progress`, or a big file and a terminal."""
    from replaylab.qa.progress import Progress

    big = args.file.stat().st_size >= BIG_FILE_BYTES
    if not (args.progress or (big and sys.stderr.isatty())):
        return None

    def write(line: str) -> None:
        sys.stderr.write(printable(line) + "\n")
        sys.stderr.flush()

    return Progress(write, after_s=0.0)


def _tool_classes(value: str | None) -> dict[str, str] | None:
    """`--tool-classes`: inline JSON or a `tool_classes.json` path, read and checked here."""
    from replaylab.safety.classify import ToolClassifier

    if value is None:
        return None
    if value.lstrip().startswith("{"):
        return ToolClassifier.from_text(value, source="--tool-classes", field="tool-classes").declared
    return ToolClassifier.from_json(value, field="tool-classes").declared


def _check_input(path: Path) -> None:
    """The transcript must be a regular file: a FIFO or device is refused before it is opened."""
    kind = kind_of(path)
    if kind != REGULAR:
        code = "missing-file" if kind == MISSING else "not-a-file"
        raise InputError(
            [Diagnostic(code=code, file=str(path), message=f"{phrase(kind)}; expected a .jsonl transcript file")]
        )


def _check_out(out: Path) -> None:
    """`--out` must be a new file in an existing folder. A dangling symbolic link counts as
    existing: writing through it would create its target somewhere else."""
    problem = None
    if os.path.lexists(out):
        problem = (
            "is a symbolic link; the working copy must be a new file, not written through a link"
            if out.is_symlink()
            else "the working copy must not exist yet (replaylab never overwrites)"
        )
        code = "exists"
    else:
        parent_kind = kind_of(out.parent if str(out.parent) else Path("."))
        if parent_kind != DIRECTORY:
            what = "does not exist" if parent_kind == MISSING else phrase(parent_kind)
            problem = f"its folder {out.parent} {what}; expected a path in an existing folder"
        code = "bad-out"
    if problem is not None:
        raise InputError([Diagnostic(code=code, file=str(out), field="out", message=problem)])


def run(args: argparse.Namespace) -> int:
    _check_input(args.file)
    if args.out is not None:
        _check_out(args.out)
    args.profile = _profile(args)
    _settle_reserve(args)
    _check_budget(args)
    if args.verify_with_pi:
        _check_oracle(args.profile)
    if args.out is not None:
        return _compact(args, args.out)
    # nothing outlives the command but what was asked for: the temporary copy goes with its folder
    with tempfile.TemporaryDirectory(prefix="replaylab-compact-") as scratch:
        return _compact(args, Path(scratch) / args.file.name, kept=False)


def _settle_reserve(args: argparse.Namespace) -> None:
    """The reserve the agent's OpenClaw release keeps: where it follows the window (2026.9.6, which
    retired reserveTokensFloor), the floor given is not read."""
    from replaylab.upstream.runtime_rules import runtime_rules_named

    rules = runtime_rules_named(args.profile.runtime_rules).turn_start
    args.reserve_tokens_floor = rules.trigger_reserve(args.context_tokens, args.reserve_tokens_floor)


def _check_budget(args: argparse.Namespace) -> None:
    """A context the reserve uses up leaves no budget: a usage error before anything runs."""
    if 0 < args.context_tokens <= args.reserve_tokens_floor:  # a non-positive one: CompactParams says so
        suggestion = max(1, args.context_tokens // 10)
        raise InputError(
            [
                Diagnostic(
                    code="bad-option",
                    file="replaylab compact",
                    field="--context-tokens",
                    message=f"contextTokens {args.context_tokens:,} leaves no budget after reserveTokensFloor "
                    f"{args.reserve_tokens_floor:,} (budget = contextTokens − reserveTokensFloor); pass a smaller "
                    f"--reserve-tokens-floor, e.g. --reserve-tokens-floor {suggestion:,}",
                )
            ]
        )


def _compact(args: argparse.Namespace, working_copy: Path, kept: bool = True) -> int:
    from replaylab.compaction import CompactParams, compact
    from replaylab.compactors.recheck import located_in_file

    try:
        params = CompactParams(
            session_file=str(args.file),
            compaction_mode=args.mode,
            context_tokens=args.context_tokens,
            keep_recent_tokens=args.keep_recent_tokens,
            reserve_tokens_floor=args.reserve_tokens_floor,
            max_history_share=args.max_history_share,
            allow_mutating_event_truncate=args.allow_mutating_event_truncate,
            leaf_id=args.leaf,
            model_provider=args.model,
            tool_classes=_tool_classes(args.tool_classes),
            working_copy=str(working_copy),
            replay_check=not args.no_replay_check,
            force_compact=True,
        )
    except ValidationError as exc:
        raise InputError(
            [
                Diagnostic(
                    code="bad-option",
                    file="replaylab compact",
                    field="--" + ".".join(str(p) for p in err["loc"]).replace("_", "-"),
                    message=f"{err['msg']} (got {err.get('input')!r})",
                )
                for err in exc.errors()
            ]
        ) from None
    progress = _progress(args)
    started = time.monotonic()
    if progress is not None:
        progress.phase(f"compacting {args.file} ({args.file.stat().st_size / 1e6:,.1f} MB)")
    from replaylab.agents import item_memo

    memo = item_memo(args.profile)
    try:
        result = compact(params, memo=memo)
    except OSError as exc:  # the working copy could not be written (disk full, permissions, ...)
        where = exc.filename or (args.out if args.out is not None else args.file)
        raise InputError(
            [
                Diagnostic(
                    code="write-failed",
                    file=str(where),
                    field="out" if args.out is not None else None,
                    message=f"cannot write the working copy: {exc.strerror or exc}; the input file is unchanged",
                )
            ]
        ) from None
    result.findings = located_in_file(result.findings, args.file, args.leaf, memo)
    blocking = [f for f in result.findings if f.blocking]
    if progress is not None:
        progress.phase(
            f"compacted in {time.monotonic() - started:,.1f} s"
            + (f": checking with {args.profile.label}" if args.verify_with_pi and result.success else "")
        )
    check = _window_check(result, args.profile, memo) if args.verify_with_pi and result.success else None
    if not kept and result.working_copy is not None:
        result.working_copy = None
        result.notes.append("the working copy was not kept: pass --out COPY to keep it")
    if args.json:
        data = result.model_dump(mode="json", by_alias=True)
        data["agent"] = args.profile.name
        if check is not None:
            data["windowCheck"] = {
                "agent": check.agent,
                "messages": check.messages,
                "mismatches": list(check.mismatches),
            }
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_text(result)
        if check is not None:
            _print_check(check)
    return 0 if result.success and not blocking and (check is None or check.equal) else 1


def _profile(args: argparse.Namespace) -> Any:
    """`--agent`, else the profile that claims the session (`upstream.profiles`)."""
    from replaylab.agents import named_profile, profile_of_recording

    return named_profile(args.agent, "replaylab compact") or profile_of_recording(args.file)


def _check_oracle(profile: Any) -> None:
    from replaylab.oracles.agent import oracle_unavailable

    reason = oracle_unavailable(profile)
    if reason is not None:
        raise InputError([Diagnostic(code="no-oracle", file="replaylab compact", field="--verify", message=reason)])


def _window_check(result: Any, profile: Any, memo: Any) -> Any:
    from replaylab.checks.agent_window import check_windows
    from replaylab.qa.views import window_of
    from replaylab.transcript import load_transcript

    copy = Path(result.working_copy)
    leaf = load_transcript(copy).leaf_id or result.compaction_event_id
    (check,) = check_windows(profile, copy, [(leaf, window_of(result, None, memo))], "on")
    return check


def _print_check(check: Any) -> None:
    agent = check.agent.split(" ", 1)[0]
    if check.equal:
        sys.stdout.write(
            f"window verified against {check.agent}: {check.messages} messages equal to {agent}'s context\n"
        )
        return
    sys.stdout.write(f"window DIFFERS from the context {check.agent} builds ({check.messages} messages):\n")
    for line in check.mismatches[:20]:
        sys.stdout.write(printable(f"  {line}") + "\n")


def _print_text(result: Any) -> None:
    """The result for a reader. Ids, tool names and the summary come from the transcript: every
    line is printed through `printable`, so none can hold a control character or forge a line."""

    def out(text: str) -> None:
        sys.stdout.write("\n".join(printable(line) for line in text.split("\n")))

    if not result.success:
        out(f"compaction failed ({result.mode}): {result.error}\n")
        out(f"tokens: {result.original_token_count} (nothing appended; the input file is unchanged)\n")
        return
    saved = 100.0 * result.token_saved / result.original_token_count if result.original_token_count else 0.0
    cut = result.cut_point
    out(f"mode: {result.mode}   summarizer: {result.summarizer}   working copy: {result.working_copy or 'not kept'}\n")
    out(
        f"tokens: {result.original_token_count} → {result.compacted_token_count} (saved {result.token_saved}, "
        f"{saved:.1f} %; budget {result.budget_tokens}{'' if result.fits_budget else ', still over budget'})\n"
    )
    restated = [w for w in result.compacted_window[1:] if w.get("restates")]
    keeps = (
        f"first kept entry {result.first_kept_entry_id}"
        if result.first_kept_entry_id != result.compaction_event_id
        else f"the compaction keeps nothing itself; it restates {len(restated)} entries after itself"
    )
    out(
        f"cut point: {keeps} (keepRecentTokens {cut.keep_recent_tokens}, pi {cut.boundary_rule} rules"
        f"{', split turn from ' + str(cut.turn_start_entry_id) if cut.is_split_turn else ''})\n"
    )
    out(f"compaction entry: {result.compaction_event_id}   leaf: {result.leaf_id}\n")
    out(f"replaySafe: {result.replay_safe}   mutating events: {len(result.mutated_event_ids)}\n")
    protected = [w for w in result.compacted_window if w.get("protected")]
    out(f"protected entries kept verbatim: {len(protected)}\n")
    for item in protected[:40]:
        message = item.get("message") or {}
        tools = (
            [b.get("name") for b in message.get("content", []) if isinstance(b, dict) and b.get("type") == "toolCall"]
            if isinstance(message.get("content"), list)
            else []
        )
        label = (
            f"{item.get('role')} {', '.join(t for t in tools if t)}"
            if tools
            else f"{item.get('role')} {message.get('toolName') or ''}"
        )
        again = f" (restates {item['restates']})" if item.get("restates") else ""
        out(f"  {item.get('entryId')}{again}  {label.strip()}\n")
    if len(protected) > 40:
        out(f"  … {len(protected) - 40} more\n")
    guard = result.quality_guard
    out(
        f"quality guard: {'ok' if guard.ok else 'FAILED'} after {guard.attempts} attempt(s)"
        f"{': ' + ', '.join(guard.reasons) if guard.reasons else ''}\n"
    )
    for note in result.notes:
        out(f"note: {note}\n")
    out(f"\nfindings ({len(result.findings)}):\n")
    for finding in result.findings[:50]:
        out(f"  [{finding.severity}] {finding.code.value}: {finding.message}\n")
    if not result.findings:
        out("  none\n")
    text = result.summary_text
    out(f"\nsummary ({len(text)} chars):\n")
    out(
        text[:SUMMARY_PREVIEW_CHARS]
        + (f"\n… ({len(text) - SUMMARY_PREVIEW_CHARS} more chars)\n" if len(text) > SUMMARY_PREVIEW_CHARS else "\n")
    )
