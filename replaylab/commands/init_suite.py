"""The commented suite `replaylab init` writes: every key with what it does and its default, the
figures of the recordings it covers, and which of their tools safeguard will protect.

The text is YAML the suite loader accepts as it is; everything a user might change is either a
key set to its default or a commented line to uncomment. Values taken from the recordings
(paths, tool names) are written as JSON strings, which YAML reads back unchanged, and every
comment is passed through `printable`, so no file name can end a comment or start a key.
"""

from __future__ import annotations

import glob
import json
import os
import re
import textwrap
from collections import Counter
from pathlib import Path

from replaylab.commands.init_scan import Recording, Scan, ToolTally
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.printable import printable
from replaylab.safety.classify import TOOL_NAME_VERB, UNKNOWN
from replaylab.suite import MAX_PATTERNS
from replaylab.upstream import openclaw_2026_4_12 as OC
from replaylab.upstream import pi_0_73_1 as PI
from replaylab.upstream.profiles import FALLBACK

#: tools listed one per line in the comment; the rest are counted
MAX_TOOL_LINES = 40
#: reasons quoted per mutating tool
MAX_REASONS = 2
#: up to this many recordings are listed one by one; more, and each clean folder becomes a glob
MAX_FILES_LISTED = 30
#: recordings named in the comment under a glob
MAX_LISTED = 10
#: the reason `safety/shell_commands.py` gives a command whose program the read-only grammar does not know
_NOT_EXEMPT = re.compile(r"`([^`]+)` is not a command the read-only grammar knows")


def render_suite(scan: Scan, *, suite_path: Path, name: str, source: Path, tools: str | None) -> str:
    """The suite's text for `scan`'s recordings, written to `suite_path`."""
    recordings = scan.recordings
    turns = sum(r.user_turns for r in recordings)
    calls = sum(r.tool_calls for r in recordings)
    mutating = sum(r.mutating_calls for r in recordings)
    by_sub_agents = sum(r.sub_agent_mutating for r in recordings)
    single = sum(1 for r in recordings if r.nothing_to_compact)
    out: list[str] = []
    add = out.append
    add(f"# replaylab suite written by `replaylab init {_comment(str(source))}`.")
    mutating_calls = mutating_phrase(mutating, by_sub_agents)
    add(f"# {len(recordings)} recordings, {turns:,} user turns, {calls:,} tool calls ({mutating_calls}).")
    add(f"# Run it:   pytest --replaylab {_comment(str(suite_path))}")
    add("# Read it:  reports/replaylab.html (blocking defects first), replaylab.md, replaylab.json.")
    add("# Every key but name and recordings is optional; a key left out takes the default named")
    add("# beside it. Reference: README.md, sections Suites and Bring your own sessions.")
    add(f"name: {json.dumps(name, ensure_ascii=False)}")
    add("description: >-")
    add("  Safeguard compaction (OpenClaw's default) on recorded sessions: every mutating tool event")
    add("  is kept verbatim, so replaying the later turns on the compacted window must do what the")
    add("  full-window replay does.")
    add("")
    add("# The transcripts replayed, relative to this file (a file or a glob such as imported/*.jsonl).")
    add("# Each needs its cassette <name>.cassette.yaml beside it; sub-agent transcripts")
    add("# <name>.sub-*.jsonl are read with their parent session and are not listed.")
    add("recordings:")
    patterns = recording_patterns(recordings, suite_path.parent)
    if len(patterns) > MAX_PATTERNS:
        raise InputError(
            [
                Diagnostic(
                    code="too-many-recordings",
                    file=str(source),
                    message=f"{len(recordings):,} recordings would need {len(patterns)} entries in one suite "
                    f"(at most {MAX_PATTERNS}): point init at one folder at a time",
                )
            ]
        )
    for pattern, covered in patterns:
        where = json.dumps(pattern, ensure_ascii=False)
        if len(covered) == 1 and pattern == _file_pattern(covered[0].path, suite_path.parent):
            add(f"  - {where}  # {_figures(covered[0])}")
            continue
        add(f"  - {where}  # {len(covered)} recordings, {sum(r.user_turns for r in covered):,} user turns")
        for recording in covered[:MAX_LISTED]:
            add(f"    #   {_comment(recording.path.name)}: {_figures(recording)}")
        if len(covered) > MAX_LISTED:
            add(f"    #   … {len(covered) - MAX_LISTED} more")
    add("")
    _tools_section(add, scan, suite_path, tools)
    add("")
    add("# model: replay   # default: the offline model, which replays the recorded steps, but only")
    add("#                 # what the compacted window still supports; or litellm/<provider>/<model>")
    add("# live_read_tools: false   # true: a tool pack's read tools run their own code, network-isolated")
    add("")
    _compaction_section(add)
    add("")
    add("compact_at: auto   # auto: each time the window crosses the budget | turn:N | every:N (user turns)")
    add("")
    add("match: {tools: strict, args: exact, answer: normalized}")
    add("# tools: strict | unordered | subset | superset   (the tool-call sequence after compaction)")
    add("# args: exact | ignore | {<tool>: {ignore: [<argument>], numeric_tolerance: 0.01}}")
    add("# answer: exact | normalized | similarity | ignore   (the final answer of each turn)")
    add("")
    add("expect: {defects: []}")
    add("# Safeguard must change nothing the agent does: any defect fails its item. To accept a")
    add("# finding you have read and judged harmless (no write lost or repeated), tolerate its code:")
    add("#   expect: {defects: [], tolerate: [IDENTIFIER_LOST]}")
    add('# per_recording: {"<name>.jsonl": {defects: [], tolerate: [ANSWER_DIVERGED]}}   # one session')
    add("")
    _classification_section(add, scan)
    add("")
    add("scenarios:")
    add("  - name: safeguard")
    add("  # A negative control: the same sessions compacted in a mode that may drop mutating events.")
    add("  # It lists the defects replaylab must find and fails when one is missed; use it on sessions")
    add("  # that write before their compaction point (see the mutating tools above).")
    add("  # - name: auto-control")
    add("  #   compaction: {mode: auto}")
    add("  #   expect: {defects: [MUTATION_DROPPED]}")
    add("  # - name: manual")
    add("  #   compaction: {mode: manual}   # OpenClaw's /compact: the summary and what follows it")
    add("")
    _first_run_section(add, single, recordings, tools)
    return "\n".join(out) + "\n"


def recording_patterns(recordings: list[Recording], suite_folder: Path) -> list[tuple[str, list[Recording]]]:
    """The suite's `recordings` entries, each a glob as the loader reads it (a file's own name
    escaped): one per file when there are few; else one `<folder>/*.jsonl` per folder whose every
    transcript the loader would match is a usable recording, and the files one by one elsewhere."""
    if len(recordings) <= MAX_FILES_LISTED:
        return [(_file_pattern(r.path, suite_folder), [r]) for r in recordings]
    by_folder: dict[Path, list[Recording]] = {}
    for recording in recordings:
        by_folder.setdefault(recording.path.parent, []).append(recording)
    out: list[tuple[str, list[Recording]]] = []
    for folder, covered in by_folder.items():
        matched = {
            Path(p) for p in glob.glob(os.path.join(glob.escape(str(folder)), "*.jsonl")) if ".sub-" not in Path(p).name
        }
        if matched == {r.path for r in covered}:
            out.append((os.path.join(glob.escape(_relative(folder, suite_folder)), "*.jsonl"), covered))
        else:
            out.extend((_file_pattern(r.path, suite_folder), [r]) for r in covered)
    return out


def _file_pattern(path: Path, suite_folder: Path) -> str:
    return glob.escape(_relative(path, suite_folder))


def _tools_section(add, scan: Scan, suite_path: Path, tools: str | None) -> None:
    add("# A tool pack (a Python module with TOOLS) gives declared classes and schemas; needed when the")
    add("# cassettes recorded its service's HTTP (replaylab record) rather than the recorded results an")
    add("# import writes.")
    if tools:
        add(f"tools: {json.dumps(tools, ensure_ascii=False)}")
    else:
        add("# tools: examples.helpdesk")
    add("# A {tool: class} JSON file (read, write, exec, ...; docs/classification.md). A tool_classes.json")
    add("# beside the recordings is read without this key (the importers write one).")
    found = [_relative(p, suite_path.parent) for p in scan.tool_classes_files]
    if found:
        add(f"#   read from: {_comment(', '.join(found))}")
    add("# tool_classes: my_tool_classes.json")


def _compaction_section(add) -> None:
    add("compaction:")
    add("  mode: safeguard   # OpenClaw's default; auto | aggressive | manual (see scenarios below)")
    add("  # The budget is left to contextTokens: auto, the default when none is set: per recording, a")
    add("  # budget derived from its own window sizes, so compaction happens where the session is large")
    add("  # (reserve and kept tail scaled with it; the report prints the rule). A fixed budget instead:")
    add(f"  # contextTokens: {OC.DEFAULT_CONTEXT_TOKENS}        # the model's window")
    add(
        f"  # reserveTokensFloor: {OC.DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR}    "
        "# compaction triggers above contextTokens - reserve"
    )
    add("  #   (openclaw@2026.9.6 retired it: it keeps the least of 20000 and a quarter of contextTokens)")
    add(f"  # keepRecentTokens: {PI.PI_KEEP_RECENT_TOKENS}      # the recent tail kept verbatim")
    add("  # The same from the command line, without editing this file:")
    add("  #   pytest --replaylab <suite> --replaylab-context-tokens N|auto")
    add("  #          --replaylab-reserve-tokens-floor N --replaylab-keep-recent-tokens N")
    add(f"  # maxHistoryShare: {OC.DEFAULT_MAX_HISTORY_SHARE}          # the summary's share of the budget (0.1-0.9)")
    add("  # identifierPolicy: strict        # the summary keeps opaque identifiers verbatim | off | custom")
    add("  # allowMutatingEventTruncate: false   # true lets safeguard truncate a mutating event's result")
    add(f"  # recentTurnsPreserve: {OC.DEFAULT_RECENT_TURNS_PRESERVE}   # recent user turns kept out of the summary")


def _classification_section(add, scan: Scan) -> None:
    add("# Which calls are mutating (docs/classification.md), by evidence: the suite's classification, a")
    add("# declared class (tool_classes.json, a pack), Claude Code's own tools, OpenClaw's rules, the")
    add("# read-only shell grammar (also for tools named for a shell), the agents' own tools (Anthropic's")
    add("# text editor, OpenClaw's session tools), the tool's name (a read verb, a read-only command line,")
    add("# a verb that changes nothing); a call with no evidence is mutating.")
    add("# Safeguard keeps every mutating call, its result and everything after the first one it would")
    add("# summarize, so a call wrongly called mutating costs savings, one wrongly called safe can lose a write.")
    add("# How these recordings are classed by default (calls; mutating ones first):")
    tallies = sorted(scan.tools.items(), key=lambda kv: (-kv[1].mutating, -kv[1].calls, kv[0]))
    mutating = [(n, t) for n, t in tallies if t.mutating]
    safe = [(n, t) for n, t in tallies if not t.mutating]
    if not tallies:
        add("#   (no tool calls)")
    for tool, tally in mutating[:MAX_TOOL_LINES]:
        add(f"#   mutating  {_comment(tool)}: {_tally(tally)}")
    if len(mutating) > MAX_TOOL_LINES:
        add(f"#   … {len(mutating) - MAX_TOOL_LINES} more mutating tools")
    if safe:
        names = [f"{tool} ({tally.calls:,})" for tool, tally in safe[:MAX_TOOL_LINES]]
        if len(safe) > MAX_TOOL_LINES:
            names.append(f"… {len(safe) - MAX_TOOL_LINES} more")
        add("#   never mutating here:")
        for line in textwrap.wrap(", ".join(names), width=92, break_on_hyphens=False, break_long_words=False):
            add(f"#     {_comment(line)}")
    # no evidence either way: mutating, and never offered as safe (a write among them would replay live)
    unknown = [tool for tool, tally in mutating if tally.rules.get(UNKNOWN)]
    # read-only by the weakest evidence, their name: the ones to check for a write
    by_name = [tool for tool, tally in safe if tally.rules.get(TOOL_NAME_VERB)]
    executables = _refused_executables(scan)
    if executables:
        shown = ", ".join(f"{name} ({n:,})" for name, n in executables.most_common(12))
        add(f"# Shell programs the read-only grammar does not know, by calls: {_comment(shown)}")
    if unknown:
        shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
        add(f"# No evidence either way, so mutating: {_comment(shown)}. Declare the class of the ones that")
        add("# only read in a tool_classes file or under safe below, and only those you know never write.")
    add("# How to choose overrides: go down the mutating list above. A tool that only reads goes under")
    add("# safe (or gets class read in a tool_classes file); a shell command of a program the grammar")
    add("# does not know that only reads (`make help`, not `make install`) under read_only_commands; a tool")
    add("# listed as never mutating that sends, pays or writes under mutating. Only for what you know:")
    add("# classification:")
    add("#   read_only_commands: [make help, just --list]   # shell commands that only read")
    add("#   safe: [lookup_order]     # never mutating in this suite")
    if by_name:
        shown = ", ".join(json.dumps(t, ensure_ascii=False) for t in by_name[:10])
        add(f"#   mutating: [{_comment(shown)}]   # read-only by their name only: keep those that write")
    else:
        add("#   mutating: [web_fetch]     # always mutating in this suite")


def _refused_executables(scan: Scan) -> Counter[str]:
    """Programs of shell commands that are mutating only because the read-only grammar does not
    know them: the candidates for `read_only_commands` (a redirection into a file is never lifted)."""
    out: Counter[str] = Counter()
    for tally in scan.tools.values():
        for reason, n in tally.reasons.items():
            match = _NOT_EXEMPT.search(reason)
            if match:
                out[match.group(1)] += n
    return out


def _first_run_section(add, single: int, recordings: list[Recording], tools: str | None) -> None:
    add("# What to expect on the first run: one pytest item per recording and scenario. passed: the")
    add("# compacted replay did what the full one did. not exercised (a skip with its reason): no")
    add("# compaction happened, e.g. a session with a single user turn and no reply after a tool result")
    add("# has nothing to compact (one with such replies compacts within its run, before one of them)")
    if single:
        add(f"# ({single} of these recordings have nothing to compact).")
    else:
        add("# (every recording here has a point to compact at).")
    add("# failed: a regression or a blocking defect, with the entry, turn and tool call it concerns;")
    add("# error: infrastructure, e.g. a missing cassette. A compaction that cannot succeed in the budget")
    add("# is reported with its numbers and the knobs above. Start with the blocking defects of")
    add("# reports/replaylab.html.")
    if not tools and any(r.needs_tool_pack for r in recordings):
        add("# NOTE: some cassettes recorded a service's HTTP: set tools: to the pack that recorded them,")
        add("# else no tool call can be answered (CASSETTE_MISSING).")


def _tally(tally: ToolTally) -> str:
    head = f"{tally.mutating:,} of {tally.calls:,}" if tally.mutating != tally.calls else f"{tally.calls:,}"
    reasons = "; ".join(f"{reason} ({n})" for reason, n in tally.reasons.most_common(MAX_REASONS))
    more = f"; … {len(tally.reasons) - MAX_REASONS} more reasons" if len(tally.reasons) > MAX_REASONS else ""
    return _comment(f"{head} — {reasons}{more}")


def _figures(recording: Recording) -> str:
    turns = plural(recording.user_turns, "user turn")
    if recording.turns > recording.user_turns:  # the agent spoke first: turn:N and the reports count that turn
        turns += " after the agent's opening turn (turn:N counts it)"
    parts = [
        turns,
        f"{plural(recording.tool_calls, 'tool call')} "
        f"({mutating_phrase(recording.mutating_calls, recording.sub_agent_mutating)})",
        f"~{recording.context_tokens:,} tokens at the end",
    ]
    if recording.agent != FALLBACK:  # a session another agent's rules judge (an OpenClaw one)
        parts.append(f"agent {recording.agent}")
    if recording.sub_agents:
        parts.append(plural(recording.sub_agents, "sub-agent transcript"))
    if recording.diagnostics:
        parts.append(f"{plural(len(recording.diagnostics), 'loader diagnostic')}: replaylab inspect it")
    return _comment(", ".join(parts))


def mutating_phrase(mutating: int, by_sub_agents: int) -> str:
    """'N mutating', saying how many of them its sub-agents made (in their own transcripts)."""
    if not by_sub_agents:
        return f"{mutating:,} mutating"
    return f"{mutating:,} mutating, {by_sub_agents:,} of them by sub-agents"


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _relative(path: Path, folder: Path) -> str:
    """`path` as the suite names it: relative to the suite's folder when they share more than the
    file system's root, else absolute."""
    target, base = os.path.abspath(path), os.path.abspath(folder)
    if os.path.commonpath([target, base]) == os.path.abspath(os.sep):
        return target
    return os.path.relpath(target, base)


def _comment(text: str) -> str:
    return printable(text)
