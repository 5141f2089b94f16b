"""replaylab's load + cut against each pinned agent's own load + `prepareCompaction`, same files.

Inputs: the real pi fixtures of ../shared/data/openclaw-fixtures (v1 files, which every agent
migrates as it loads them; left out, with a note, when the folder is absent) and one seeded
OpenClaw-shaped session of 50,000 entries (`bench.generate`; 1,000 with `--quick`). Settings: pi's
default keepRecentTokens and reserveTokens, the cut at the file's leaf.

* subject: replaylab reads the transcript (`load_transcript`), takes its leaf path and does what
  the agent's `prepareCompaction` does there under that agent's rules (`replaylab.agents`): the
  refusal check, the context and its `tokensBefore` (in the cut itself under pi 1.6.0 and OpenClaw,
  as replaylab's compaction reads it; a separate count after pi 0.73.1's), the cut, the messages to
  summarize and the split turn's prefix (`replaylab_cut`).
* floor: the agent's own code in node (`replaylab/oracles/node/<agent>/time_cut.mjs`): its load
  of the file (pi: `SessionManager.open`; OpenClaw: `parseSessionEntries` +
  `SessionManager.fromOwnedEntries`) and `prepareCompaction` at the leaf, timed inside node, so
  node's start and the import of the agent's modules are no part of a sample (both are reported
  in the details). One node process per agent serves every sample.

Both samples run from the call to the cut's answer, the session still held: node frees it at its
collector's leisure after the sample, Python by reference counts as the call returns, so that
return is timed apart (`replaylab_with_freeing_median_s` in the details, and in the note).

The two alternate one run at a time (replaylab, agent, agent, replaylab, ...) after one warm-up
each. Both must pick the same first kept entry (by file line: a v1 file's entries get fresh ids
from the agent's migration) or refuse alike; a row whose sides disagree is an error, never a ratio.

* `agents-cut-<agent>`: replaylab / agent, medians of the 50k session's samples ≤ 1.0×; the
  fixtures' ratio (their samples summed per round) is a second check when they are there.

Pending for an agent whose oracle is not installed (`npm ci` in its folder).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.cases.common import REPO, Context, check, pending, result
from replaylab.agents import rules_of
from replaylab.oracles.agent import folder, node_executable, oracle_unavailable
from replaylab.transcript import load_transcript
from replaylab.transcript.context import entry_to_message
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import AnyEntry, CompactionEntry, MessageEntry
from replaylab.upstream.openclaw_2026_9_6 import DEFAULT_RESERVE_TOKENS
from replaylab.upstream.pi_0_73_1 import PI_KEEP_RECENT_TOKENS
from replaylab.upstream.profiles import AgentProfile, profile_named

AGENTS = ("pi@0.73.1", "pi@1.6.0", "openclaw@2026.9.6")
TARGET = "≤ 1.0× the agent"
FIXTURES = (REPO / ".." / "shared" / "data" / "openclaw-fixtures").resolve()
FULL_ENTRIES, QUICK_ENTRIES = 50_000, 1_000
#: the boundary rule every pinned agent applies (pi ≥ 0.66.1: a kept range anywhere on the path)
BOUNDARY_RULE = "0.66.1"
TIMER = "time_cut.mjs"
#: seconds one timing request may take (the 50k session loads in a few seconds)
REQUEST_TIMEOUT_S = 600


def name_of(agent: str) -> str:
    return "agents-cut-" + agent.replace("@", "-")


NAMES = tuple(name_of(agent) for agent in AGENTS)


def title_of(profile: AgentProfile) -> str:
    return f"replaylab load + cut vs {profile.label}'s own load + prepareCompaction (in node)"


@dataclass(frozen=True)
class Cut:
    """Where one side cuts at the file's leaf: refused (why) or the first kept entry."""

    refused: str | None
    first_kept_id: str | None
    first_kept_line: int | None
    #: messages the compaction would summarize (history and a split turn's prefix)
    summarized: int = 0
    #: seconds of the whole call spent reading the transcript and taking its leaf path
    load_s: float = field(default=0.0, compare=False)
    #: seconds from the call to the cut's answer (the sample: the session is freed after it)
    seconds: float = field(default=0.0, compare=False)

    def same_as(self, agent: dict[str, Any]) -> bool:
        if self.refused is not None or agent["refused"] is not None:
            return (self.refused is None) == (agent["refused"] is None)
        return self.first_kept_line is not None and self.first_kept_line == agent["firstKeptLine"]


def replaylab_cut(path: Path, profile: AgentProfile, keep_recent_tokens: int = PI_KEEP_RECENT_TOKENS) -> Cut:
    """replaylab's equivalent of the agent's load + `prepareCompaction` at the file's leaf."""
    start = time.perf_counter()
    transcript = load_transcript(path)
    entries = transcript.leaf_path()
    load_s = time.perf_counter() - start
    rules = rules_of(profile)
    memo = ItemMemo(rules=rules)
    refused = rules.refusal(entries)
    if refused is not None:
        return Cut(refused, None, None, load_s=load_s, seconds=time.perf_counter() - start)
    known: dict[str, int] = {}

    def entry_tokens(entry: AnyEntry) -> int:
        value = known.get(entry.id)
        if value is None:
            value = known[entry.id] = memo.tokens(entry.message) if isinstance(entry, MessageEntry) else 0
        return value

    cut = rules.cut(entries, keep_recent_tokens, BOUNDARY_RULE, entry_tokens, memo.tokens)
    if not hasattr(cut, "tokens_before"):  # a cut without it (pi 0.73.1's): the context's, as its caller counts
        rules.context_tokens([w.message for w in rules.window(entries)], memo.tokens)
    refused = getattr(cut, "refused", None)
    if refused is not None or not 0 <= cut.first_kept_index < len(entries):
        return Cut(refused or "no first kept entry", None, None, load_s=load_s, seconds=time.perf_counter() - start)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    summarized = [*entries[cut.boundary_start : history_end]]
    if cut.is_split_turn:
        summarized += entries[cut.turn_start_index : cut.first_kept_index]
    messages = [m for e in summarized if not isinstance(e, CompactionEntry) and (m := entry_to_message(e)) is not None]
    first = entries[cut.first_kept_index]
    return Cut(None, first.id, transcript.line_of.get(first.id), len(messages), load_s, time.perf_counter() - start)


class AgentTimer:
    """The agent's own load + `prepareCompaction`, timed in one node process (`time_cut.mjs`)."""

    def __init__(self, profile: AgentProfile):
        node = node_executable(profile)
        assert node is not None
        # what the agent logs (OpenClaw reports each malformed line it skips): kept for an error
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [node, TIMER],
            cwd=folder(profile),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            encoding="utf-8",
        )
        self.ready: dict[str, Any] = self._line()
        self._next = 0

    def _line(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait(timeout=30)
            self.log.seek(0)
            raise RuntimeError(f"{TIMER} ended (exit {code}): {self.log.read()[-2000:].decode(errors='replace')}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def time(self, path: Path, repeats: int = 1, warmup: int = 0) -> dict[str, Any]:
        """One request: `repeats` timed runs (after `warmup`) of the agent's load + cut of `path`."""
        assert self.proc.stdin is not None
        self._next += 1
        args = {
            "file": str(path),
            "keepRecentTokens": PI_KEEP_RECENT_TOKENS,
            "reserveTokens": DEFAULT_RESERVE_TOKENS,
            "repeats": repeats,
            "warmup": warmup,
        }
        self.proc.stdin.write(json.dumps({"id": self._next, "fn": "time", "args": [args]}) + "\n")
        self.proc.stdin.flush()
        answer = self._line()
        if "error" in answer:
            raise RuntimeError(f"{TIMER}: {answer['error']}")
        value: dict[str, Any] = answer["ok"]
        return value

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.log.close()

    def __enter__(self) -> AgentTimer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []


def time_agent(profile: AgentProfile, files: list[Path], repeats: int) -> dict[str, Any]:
    """Samples of both sides per file (seconds), alternating, and each side's cut of each file."""
    ours: dict[Path, list[float]] = {p: [] for p in files}
    loads: dict[Path, list[float]] = {p: [] for p in files}
    freed: dict[Path, list[float]] = {p: [] for p in files}
    theirs: dict[Path, list[float]] = {p: [] for p in files}
    cuts: dict[Path, tuple[Cut, dict[str, Any]]] = {}
    with AgentTimer(profile) as timer:
        for path in files:
            cuts[path] = (replaylab_cut(path, profile), timer.time(path))  # the warm-ups
            for round_ in range(repeats):
                for side in ("ours", "theirs") if round_ % 2 == 0 else ("theirs", "ours"):
                    if side == "ours":
                        start = time.perf_counter()
                        cut = replaylab_cut(path, profile)
                        freed[path].append(time.perf_counter() - start)
                        loads[path].append(cut.load_s)
                        ours[path].append(cut.seconds)
                    else:
                        theirs[path].append(timer.time(path)["samplesMs"][0] / 1000)
    disagree = [
        f"{p.name}: replaylab {mine} vs the agent {agent['refused'] or agent['firstKeptLine']}"
        for p, (mine, agent) in cuts.items()
        if not mine.same_as(agent)
    ]
    if disagree:
        raise AssertionError(f"{profile.label} cuts elsewhere than replaylab: {disagree}")
    return {"ours": ours, "loads": loads, "freed": freed, "theirs": theirs, "cuts": cuts, "ready": timer.ready}


def _summed(samples: dict[Path, list[float]], files: list[Path]) -> list[float]:
    return [sum(parts) for parts in zip(*(samples[p] for p in files))] if files else []


def run(ctx: Context) -> list[dict[str, Any]]:
    entries = QUICK_ENTRIES if ctx.quick else FULL_ENTRIES
    real = fixtures()
    wanted = [agent for agent in AGENTS if ctx.wants(name_of(agent))]
    big = ctx.transcript(4, entries=entries).path if wanted else None
    records = []
    for agent in wanted:
        profile = profile_named(agent)
        name, title = name_of(agent), title_of(profile)
        reason = oracle_unavailable(profile)
        if reason is not None:
            records.append(pending(name, title, TARGET, reason))
            continue
        assert big is not None
        timed = time_agent(profile, [big, *real], ctx.repeats)
        ours, theirs = timed["ours"][big], timed["theirs"][big]
        ratio = statistics.median(ours) / statistics.median(theirs)
        freeing = statistics.median(timed["freed"][big]) / statistics.median(theirs)
        checks = [check("ratio", ratio, "<=", 1.0, "×")]
        fixture_ratio = None
        if real:
            fixture_ratio = statistics.median(_summed(timed["ours"], real)) / statistics.median(
                _summed(timed["theirs"], real)
            )
            checks.append(check("fixtures ratio", fixture_ratio, "<=", 1.0, "×"))
        per_file = {
            p.name: {
                "replaylab_median_s": statistics.median(timed["ours"][p]),
                "replaylab_load_median_s": statistics.median(timed["loads"][p]),
                "replaylab_with_freeing_median_s": statistics.median(timed["freed"][p]),
                "agent_median_s": statistics.median(timed["theirs"][p]),
                "ratio": statistics.median(timed["ours"][p]) / statistics.median(timed["theirs"][p]),
                "first_kept_line": cut.first_kept_line,
                "refused": cut.refused,
                "summarized_messages": cut.summarized,
                "agent_entries": agent_cut["entries"],
            }
            for p, (cut, agent_cut) in timed["cuts"].items()
        }
        ready = timed["ready"]
        # a refusal may end the agent's work early: the note says how many of the files it was
        refused = sum(1 for f in per_file.values() if f["refused"] is not None)
        fixtures_text = (
            f"fixtures ({len(real)}) {fixture_ratio:.2f}×"
            if fixture_ratio is not None
            else f"fixtures left out ({FIXTURES} not found)"
        )
        records.append(
            result(
                name,
                title,
                subject=ours,
                floor=theirs,
                floor_what=f"{profile.label}'s load + prepareCompaction, timed in node ({entries:,} entries)",
                target=TARGET,
                checks=checks,
                details={
                    "entries": entries,
                    "keep_recent_tokens": PI_KEEP_RECENT_TOKENS,
                    "agent": ready["agent"],
                    "node": ready["node"],
                    "node_start_ms": ready["startMs"],
                    "agent_import_ms": ready["importMs"],
                    "files": per_file,
                    "fixtures_ratio": fixture_ratio,
                    "note": f"{entries:,} entries {ratio:.2f}× ({freeing:.2f}× with the session freed), "
                    f"{fixtures_text}; same cuts on "
                    f"{len(per_file)} files ({refused} refused by both); node start {ready['startMs']:.0f} ms + import "
                    f"{ready['importMs']:.0f} ms (not in the samples)",
                },
            )
        )
    return records
