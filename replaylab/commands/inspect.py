"""`replaylab inspect FILE...`: what is in a transcript, what it would cost, and is it safe to replay.

A folder stands for the transcripts in it and its sub-folders, and the sessions in another tool's
format among them (what `replaylab init` would find there).

Per file: the header as read, the agent whose rules apply (`--agent`, else the session's
own: `upstream.profiles`), entry counts (leaf path, abandoned branches, resets and messages excluded from
the context), the context tokens of the window that agent rebuilds from the leaf path (its estimate:
the figure compaction triggers on) with the recorded usage beside it, tool calls by class, the
mutating events (the ledger) with their ids, `replaySafe`, the entries a safeguard compaction
restated (each the entry it names, so the same event: counted once, shown where it is restated; a
claim whose bytes differ is named), every compaction the recording holds with what it summarized
away (`checks.recorded`: the same audit, and the same findings, as every item of a run), and every
diagnostic the loader found.
`--json` prints one JSON document (a list with one object per file) for machines. A file in
another tool's format (a Claude Code session, a τ-bench / τ²-bench results file) gets no verdict:
it is named, with the `replaylab import` command that converts it, as a `foreign-format`
diagnostic.

Exit status: 0 clean, 1 when any file has a diagnostic or a recorded compaction lost something
(a RECORDED_* finding), 2 on usage errors (a missing file, a
folder with no transcript, a bad option or classification file) — raised as `InputError`, which the CLI maps to 2.
With `--strict` a file with any diagnostic is rejected the way `load_transcript(strict=True)`
rejects it: its diagnostics go to stderr and the exit status is 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson
from pydantic.alias_generators import to_camel

from replaylab.agents import item_memo, named_profile, recording_profile
from replaylab.checks.recorded import audit_recorded_compactions
from replaylab.commands.init_suite import plural
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.input_files import DIRECTORY, MISSING, REGULAR, kind_of, phrase
from replaylab.printable import printable
from replaylab.replay.loop import window_tokens
from replaylab.safety.classify import ToolClassifier, is_mutating_class
from replaylab.safety.ledger import Ledger, LedgerEvent, build_ledger
from replaylab.transcript.context import WindowMessage, build_window
from replaylab.transcript.foreign import ForeignFormat, detect_foreign
from replaylab.transcript.load import Transcript, load_transcript
from replaylab.transcript.model import AssistantMessage, ResetEntry
from replaylab.transcript.restated import restatements
from replaylab.transcript.tokens import usage_context_tokens
from replaylab.upstream.profiles import AgentProfile, ProfileChoice, default_profile

#: diagnostics of one code printed in full; the rest are counted on one line
DIAGNOSTICS_PER_CODE = 20
#: findings of one recorded compaction printed in full; the rest are counted
FINDINGS_PER_COMPACTION = 10
CONTEXT_LABEL = "{agent}'s estimate of the leaf window, what compaction triggers on"

TOOL_CLASSES_FILE = "tool_classes.json"

#: LedgerEvent field → the camelCase key of the JSON output (computed once: to_camel is slow)
_EVENT_KEYS = {name: to_camel(name) for name in LedgerEvent.model_fields}


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        name,
        help=help_text,
        description=__doc__.split("\n\n")[0] + "\n\nExit status: 0 clean, 1 diagnostics found, 2 usage error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        type=Path,
        help="pi / OpenClaw JSONL transcript(s), or a folder: the transcripts in it and its sub-folders",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document (a list, one object per file)")
    p.add_argument(
        "--strict",
        action="store_true",
        help="reject any file with a diagnostic (printed to stderr, exit 2) instead of summarizing it",
    )
    p.add_argument(
        "--tool-classes",
        type=Path,
        metavar="JSON",
        help=f"tool → class map (default: a {TOOL_CLASSES_FILE} next to each file, "
        "else OpenClaw's name/action rules; unknown tools count as mutating)",
    )
    p.add_argument(
        "--tools", metavar="PACK", help="tool pack module whose declared classes to use, e.g. examples.helpdesk"
    )
    p.add_argument(
        "--agent",
        metavar="AGENT@VERSION",
        help="the agent whose rules rebuild the window (openclaw@2026.9.6, pi@0.73.1, ...; default: each "
        "session's own, replaylab.upstream.profiles)",
    )
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    files = _check_files(args.files)
    named = _named_profile(args)
    base = _base_classifier(args)
    reports: list[dict[str, Any]] = []
    rejected: list[Diagnostic] = []
    for path in files:
        foreign = detect_foreign(path)
        if foreign is not None:
            if args.strict:
                rejected.append(_foreign_diagnostic(path, foreign))
            else:
                reports.append(foreign_report(path, foreign))
            continue
        choice = ProfileChoice(named, "named by --agent") if named else recording_profile(path)
        try:  # read into the tree of the agent whose rules apply
            transcript = load_transcript(path, strict=args.strict, navigation=choice.profile.navigation)
        except InputError as exc:
            if not args.strict:
                raise
            rejected.extend(exc.diagnostics)
            continue
        classifier, source = _classifier_for(path, base, args)
        reports.append(inspect_transcript(transcript, classifier, source, choice.profile, choice.reason))
    if args.json:
        sys.stdout.write(orjson.dumps(reports, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write("\n".join(render_text(r) for r in reports))
    if rejected:
        raise InputError(rejected)
    return 1 if any(r["diagnostics"] or _recorded_findings(r) for r in reports) else 0


def _recorded_findings(report: dict[str, Any]) -> int:
    return sum(len(c["findings"]) for c in report.get("recordedCompactions", []))


def inspect_transcript(
    transcript: Transcript,
    classifier: ToolClassifier,
    classes_from: str,
    profile: AgentProfile | None = None,
    profile_reason: str | None = None,
) -> dict[str, Any]:
    """The per-file summary (the JSON object `--json` prints), under `profile`'s rules (default:
    the fallback profile's), chosen for `profile_reason`."""
    if profile is None:
        profile, profile_reason = default_profile(), profile_reason or "the fallback"
    memo = item_memo(profile)
    leaf_path = transcript.leaf_path()
    window = build_window(leaf_path, memo)
    ledger: Ledger = build_ledger(transcript, classifier, path=leaf_path)
    counts = ledger.counts_by_class()
    audits = audit_recorded_compactions(transcript, classifier, ledger, memo)
    sources, truncated = restatements(leaf_path)
    return {
        "file": str(transcript.path) if transcript.path else transcript.name,
        "header": {"id": transcript.header.id, "version": transcript.header.version, "cwd": transcript.header.cwd},
        "sourceVersion": transcript.source_version,
        "agent": profile.name,
        "agentReason": profile_reason,
        "entries": len(transcript.entries),
        "leafPathLength": len(leaf_path),
        "leafId": transcript.leaf_id,
        "abandonedEntryIds": [e.id for e in transcript.abandoned_entries()],
        "resetEntryIds": [e.id for e in leaf_path if isinstance(e, ResetEntry)],
        "excludedEntryIds": [e.id for e in leaf_path if _excluded(e)],
        "windowMessages": len(window),
        "contextTokens": window_tokens(window, memo),
        "recordedUsage": recorded_usage(window),
        "classesFrom": classes_from,
        "toolCallsByClass": dict(sorted(counts.items())),
        "toolCallsByRule": ledger.rule_counts,
        "subagentToolCalls": sum(sum(child.class_counts.values()) for child in ledger.children.values()),
        "subagentTranscripts": _transcripts_below(ledger),
        "mutatingToolCalls": sum(n for cls, n in counts.items() if is_mutating_class(cls)),
        "mutatingEvents": [{_EVENT_KEYS[k]: v for k, v in e.model_dump(mode="json").items()} for e in ledger.events],
        "exemptedShellCalls": [{to_camel(k): v for k, v in e.model_dump(mode="json").items()} for e in ledger.exempted],
        "mutatedEventIds": ledger.mutated_event_ids,
        "unsafeEntryIds": ledger.unsafe_entry_ids(),
        "unresolvedSubagents": ledger.unresolved_children,
        "replaySafe": ledger.replay_safe,
        "restatedEntries": [
            {"entryId": e.id, "restates": sources[e.id], "truncated": e.id in truncated}
            for e in leaf_path
            if e.id in sources
        ],
        "unverifiedRestatements": [
            {"entryId": e.id, "restates": e.restates} for e in leaf_path if e.restates and e.id not in sources
        ],
        "recordedCompactions": [
            {
                **_camel(audit.view.model_dump(mode="json")),
                "line": audit.view.line(),
                "findings": [
                    {"code": d.code.value, "severity": d.severity, "message": d.message} for d in audit.defects
                ],
            }
            for audit in audits
        ],
        "diagnostics": [{**d.model_dump(mode="json"), "text": str(d)} for d in transcript.diagnostics],
    }


def recorded_usage(window: list[WindowMessage]) -> dict[str, Any] | None:
    """The model's own count at the last assistant reply pi would take usage from (not aborted,
    not an error, with usage), or None. It counts the whole request — system prompt and tool
    definitions too, which the file does not hold — so it is shown, never compacted on."""
    for item in reversed(window):
        message = item.message
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
            tokens = usage_context_tokens(message.usage)
            if tokens is not None:
                return {"tokens": tokens, "entryId": item.entry_id}
    return None


def foreign_report(path: Path, foreign: ForeignFormat) -> dict[str, Any]:
    """The JSON object for a file in another tool's format: no counts and no replaySafe, which
    reading it as a transcript would make up."""
    diagnostic = _foreign_diagnostic(path, foreign)
    return {
        "file": str(path),
        "foreignFormat": foreign.kind,
        "importCommand": foreign.import_command(path),
        "diagnostics": [{**diagnostic.model_dump(mode="json"), "text": str(diagnostic)}],
    }


def _foreign_diagnostic(path: Path, foreign: ForeignFormat) -> Diagnostic:
    return Diagnostic(code="foreign-format", file=str(path), message=foreign.message(path))


def render_text(report: dict[str, Any]) -> str:
    """A readable block for one file."""
    if "foreignFormat" in report:
        lines = [f"== {report['file']}", f"  format       {report['diagnostics'][0]['message']}"]
        return "\n".join(printable(line) for line in lines) + "\n"
    header = report["header"]
    version = f"version {header['version']}" if header["version"] is not None else "v1 (no version field)"
    migrated = ", migrated in memory to v3" if report["sourceVersion"] < 3 else ""
    lines = [
        f"== {report['file']}",
        f"  session      {header['id']}  {version}{migrated}  cwd {header['cwd'] or '-'}",
        f"  agent        {report['agent']}  (whose rules rebuild the window, estimate and cut"
        + (f"; {report['agentReason']})" if report.get("agentReason") else ")"),
        f"  entries      {report['entries']}  (leaf path {report['leafPathLength']}, "
        f"abandoned {len(report['abandonedEntryIds'])})",
    ]
    if report["abandonedEntryIds"]:
        lines.append(f"  abandoned    {_id_list(report['abandonedEntryIds'])}")
    if report["resetEntryIds"]:
        lines.append(
            f"  resets       {_id_list(report['resetEntryIds'])}  (the context starts afresh after the last one)"
        )
    if report["excludedEntryIds"]:
        lines.append(f"  excluded     {_id_list(report['excludedEntryIds'])}  (excludeFromContext: not in the context)")
    lines.append(
        f"  context      ~{report['contextTokens']:,} tokens over {report['windowMessages']} window messages "
        f"({CONTEXT_LABEL.format(agent=report['agent'])})"
    )
    usage = report["recordedUsage"]
    if usage is not None and usage["tokens"] == 0:
        lines.append(
            f"  recorded     no usage (the last assistant reply, entry {usage['entryId']}, reports every count 0: "
            "its provider counted nothing)"
        )
    elif usage is not None:
        lines.append(
            f"  recorded     {usage['tokens']:,} tokens of usage (the model's count at entry {usage['entryId']}, "
            "the last assistant reply: the whole request, system prompt and tools included; not compacted on)"
        )
    by_class = (
        ", ".join(f"{cls} {n}{'*' if is_mutating_class(cls) else ''}" for cls, n in report["toolCallsByClass"].items())
        or "none"
    )
    below = report["subagentToolCalls"]
    # the ledger's counts fold in what the sub-agents ran: say how much, as `init` counts the file's own
    within = f"; {below:,} of them in {plural(report['subagentTranscripts'], 'sub-agent transcript')}" if below else ""
    lines.append(f"  tool calls   {by_class}   (* mutating; classes from {report['classesFrom']}{within})")
    if report["toolCallsByRule"]:
        by_rule = ", ".join(f"{rule} {n:,}" for rule, n in report["toolCallsByRule"].items())
        lines.append(f"  decided by   {by_rule}   (docs/classification.md)")
    lines.append(
        f"  replaySafe   {str(report['replaySafe']).lower()}  ({len(report['mutatingEvents'])} mutating events)"
    )
    copies: dict[str, list[str]] = {}
    for item in report["restatedEntries"]:
        copies.setdefault(item["restates"], []).append(item["entryId"])
    for event in report["mutatingEvents"]:
        actor = "" if event["actor"] == "assistant" else f" [actor {event['actor']}]"
        result = event["resultEntryId"] or "no result"
        shown = list(dict.fromkeys(copies.get(event["entryId"], []) + copies.get(event["resultEntryId"] or "", [])))
        again = f"  restated as {', '.join(shown)}" if shown else ""
        # a call known by its result alone: the event names the result's entry for both
        where = f"entry {result} (its result)" if event["entryId"] == result else f"entry {event['entryId']} → {result}"
        lines.append(
            f"    {event['eventId']}  {event['tool']} ({event['toolClass']}){actor}  "
            f"{where}{again}  why ({event['rule']}): {event['reason']}"
        )
    if report["restatedEntries"]:
        shortened = sum(1 for item in report["restatedEntries"] if item["truncated"])
        lines.append(
            f"  restated     {len(report['restatedEntries'])} entries restate an earlier entry after a compaction "
            "(the same entries: each event counted once)"
            + (f"; {shortened} tool results of them truncated, as declared" if shortened else "")
        )
    for item in report["unverifiedRestatements"]:
        lines.append(
            f"  not restated entry {item['entryId']} names {item['restates']!r} as the entry it restates, but its "
            "bytes differ (or that entry is not before it on the path): it counts as an entry of its own"
        )
    if report["exemptedShellCalls"]:
        lines.append(f"  exempted     {len(report['exemptedShellCalls'])} read-only shell calls (not mutating)")
    for call in report["exemptedShellCalls"]:
        lines.append(f"    {call['toolCallId']}  {call['tool']}  entry {call['entryId']}  why: {call['reason']}")
    for name in report["unresolvedSubagents"]:
        lines.append(f"  sub-agent    {name!r} could not be loaded: its spawning call counts as mutating")
    lines.extend(_recorded_lines(report["recordedCompactions"]))
    lines.append(f"  diagnostics  {len(report['diagnostics']) or 'none'}")
    lines.extend(_capped(report["diagnostics"]))
    # ids, names and the header come from the file: each line stays one line, nothing raw
    return "\n".join(printable(line) for line in lines) + "\n"


def _transcripts_below(ledger: Ledger) -> int:
    """How many sub-agent transcripts the ledger followed, at any depth."""
    return sum(1 + _transcripts_below(child) for child in ledger.children.values())


def _camel(data: Any) -> Any:
    """The keys of `data`, at every depth, in the camelCase of the rest of the JSON."""
    if isinstance(data, dict):
        return {to_camel(k): _camel(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_camel(v) for v in data]
    return data


def _recorded_lines(compactions: list[dict[str, Any]]) -> list[str]:
    """Each compaction the recording holds: what it summarized away, then its findings (capped)."""
    if not compactions:
        return []
    lines = [f"  compactions  {len(compactions)} in the recording, each audited on the windows before and after it"]
    for compaction in compactions:
        lines.append(f"    {compaction['line']}")
        findings = compaction["findings"]
        lines.extend(f"      {f['code']}: {f['message']}" for f in findings[:FINDINGS_PER_COMPACTION])
        if len(findings) > FINDINGS_PER_COMPACTION:
            lines.append(f"      … {len(findings) - FINDINGS_PER_COMPACTION:,} more findings (--json lists them all)")
    return lines


def _capped(diagnostics: list[dict[str, Any]]) -> list[str]:
    """Each diagnostic's line, but only the first `DIAGNOSTICS_PER_CODE` of a code: a file that is
    not a transcript at all would otherwise print one line per line of the file."""
    shown: dict[str, int] = {}
    lines = []
    for d in diagnostics:
        shown[d["code"]] = shown.get(d["code"], 0) + 1
        if shown[d["code"]] <= DIAGNOSTICS_PER_CODE:
            lines.append(f"    {d['text']}")
    lines.extend(
        f"    … {n - DIAGNOSTICS_PER_CODE:,} more {code}" for code, n in shown.items() if n > DIAGNOSTICS_PER_CODE
    )
    return lines


def _id_list(ids: list[str], limit: int = 20) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")


def _excluded(entry: Any) -> bool:
    """A message entry marked `excludeFromContext` (OpenClaw leaves it out of the context)."""
    message = getattr(entry, "message", None)
    flag = getattr(message, "exclude_from_context", None)
    extra = getattr(message, "__pydantic_extra__", None) or {}
    return flag is True or extra.get("excludeFromContext") is True


# ---------------------------------------------------------------- usage checks and classification


def _named_profile(args: argparse.Namespace) -> AgentProfile | None:
    return named_profile(getattr(args, "agent", None), "replaylab inspect")


def _check_files(files: list[Path]) -> list[Path]:
    """The files to inspect, with every usage error found before any output: each argument must be
    a regular file (a FIFO, device, socket or link loop is refused by `stat`, never opened) or a
    folder, which stands for the files under it that `replaylab init` would read (`_folder_files`)."""
    problems: list[Diagnostic] = []
    out: list[Path] = []
    for path in files:
        kind = kind_of(path)
        if kind == REGULAR:
            out.append(path)
        elif kind == DIRECTORY:
            out.extend(_folder_files(path, problems))
        elif kind == MISSING:
            problems.append(Diagnostic(code="missing-file", file=str(path), message="no such file"))
        else:
            problems.append(
                Diagnostic(
                    code="not-a-file", file=str(path), message=f"{phrase(kind)}; expected a .jsonl transcript file"
                )
            )
    if problems:
        raise InputError(problems)
    return out


def _folder_files(folder: Path, problems: list[Diagnostic]) -> list[Path]:
    """The transcripts under `folder` and its sub-folders (as `replaylab init` finds them), and the
    files in another tool's format among them, which are named with the command that imports them;
    a folder with neither is a usage error."""
    from replaylab.commands.init_scan import candidate_files

    found = [
        path
        for path in candidate_files(folder, problems)
        if kind_of(path) == REGULAR and (path.suffix == ".jsonl" or detect_foreign(path) is not None)
    ]
    if not found:
        problems.append(
            Diagnostic(
                code="no-transcripts",
                file=str(folder),
                message="is a folder with no .jsonl transcript (nor a session to import) in it or its sub-folders",
            )
        )
    return found


def _base_classifier(args: argparse.Namespace) -> ToolClassifier | None:
    """Classes given on the command line (tool pack, then --tool-classes on top), or None."""
    classifier: ToolClassifier | None = None
    if args.tools:
        from replaylab.replay.tools.pack_data import pack_data_or_input_error

        classifier = ToolClassifier.from_tool_pack(pack_data_or_input_error(args.tools, source="--tools"))
    if args.tool_classes is not None:
        declared = _read_classes(args.tool_classes, "--tool-classes")
        classifier = declared if classifier is None else classifier.merged(declared)
    return classifier


def _classifier_for(path: Path, base: ToolClassifier | None, args: argparse.Namespace) -> tuple[ToolClassifier, str]:
    if base is not None:
        sources = [
            s
            for s, given in (
                (f"--tools {args.tools}", args.tools),
                (f"--tool-classes {args.tool_classes}", args.tool_classes),
            )
            if given
        ]
        return base, " + ".join(sources)
    sibling = path.parent / TOOL_CLASSES_FILE
    if sibling.is_file():
        return _read_classes(sibling, str(sibling)), str(sibling)
    return ToolClassifier(), "evidence: Claude Code's tools, OpenClaw, shell grammar, name verbs (else mutating)"


def _read_classes(path: Path, what: str) -> ToolClassifier:
    """A classification file; a bad one is an `InputError` naming it, its line and `what` named it."""
    return ToolClassifier.from_json(path, field=what)
