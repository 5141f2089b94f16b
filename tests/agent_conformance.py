"""Conformance of an agent profile's rules with the agent's own code, file by file.

For one transcript, the pinned agent (`replaylab.oracles.agent`) is asked for its context and its
compaction cut at every keepRecentTokens of `KEEPS`, at the file's leaf and right before each
user message (where a turn starts, which is where replaylab compacts); replaylab's rules of the
same profile (`replaylab.agents`) must give the same windows (source entry, role, message as
JavaScript holds it), the same per-message estimates, and the same cuts (refused or not, first
kept entry, split turn, what is summarized and the turn prefix). A cut where the profile's
`unestimable` rules say the agent's own estimate fails (`compaction.estimate_failure`) is replaylab's
refusal, as `compact` refuses it. Differences are counted by kind, with a few examples each, for the
test's note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from replaylab.agents import rules_of
from replaylab.compaction.estimate_failure import agent_tokens, estimate_failure
from replaylab.oracles.agent import AgentCut, AgentOracle, AgentView, AgentWindow
from replaylab.oracles.compare import message_as_pi_holds_it
from replaylab.transcript import load_transcript
from replaylab.transcript.load import Transcript
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import MessageEntry, UserMessage
from replaylab.upstream.profiles import AgentProfile

KEEPS = (20_000, 2_000, 500)


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, example: str | None = None) -> None:
        self.counts[kind] += 1
        if example is not None:
            self.examples.setdefault(kind, [])
            if len(self.examples[kind]) < 5:
                self.examples[kind].append(example)

    def differences(self) -> dict[str, int]:
        return {k: v for k, v in self.counts.items() if k.endswith("differ")}

    def note(self) -> str:
        lines = [f"{k}: {v}" for k, v in sorted(self.counts.items())]
        for kind, found in sorted(self.examples.items()):
            lines += [f"  {kind}: {e}" for e in found]
        return "\n".join(lines)


def turn_leaves(transcript: Transcript) -> list[str]:
    """The file's leaf and the entry before every user message of its leaf path."""
    path = transcript.leaf_path()
    leaves = [
        path[i - 1].id
        for i in range(1, len(path))
        if isinstance(path[i], MessageEntry) and isinstance(path[i].message, UserMessage)
    ]
    return [*leaves, path[-1].id] if path else []


def _request_leaves(transcript: Transcript, leaves: list[str]) -> list[str | dict[str, int]]:
    """A v1 file's entries get fresh random ids from the agent: name its leaves by line."""
    if transcript.source_version >= 2:
        return list(leaves)
    return [{"line": transcript.line_of[leaf]} for leaf in leaves]


def compare_file(oracle: AgentOracle, path: Path, tally: Tally, keeps: Iterable[int] = KEEPS) -> None:
    keeps = tuple(keeps)
    rules = _Memoized(rules_of(oracle.profile))
    transcript = load_transcript(path, navigation=oracle.profile.navigation)  # the tree the agent's load builds
    leaves = turn_leaves(transcript)
    if not leaves:
        tally.add("empty files")
        return
    view = oracle.view(path, leaves=_request_leaves(transcript, leaves), keep_recent_tokens=keeps)
    ours_of_theirs = _id_map(transcript, view)
    tally.add("files")
    for leaf, window in zip(leaves, view.windows):
        entries = transcript.path_to(leaf)
        if window.error:
            tally.add("agent errors", f"{path.name} @{leaf}: {window.error[:200]}")
            continue
        before = _compare_window(rules, entries, window, ours_of_theirs, tally, f"{path.name} @{leaf}")
        for keep, theirs in zip(keeps, window.cuts):
            where = f"{path.name} @{leaf} keep {keep}"
            _compare_cut(rules, entries, keep, theirs, ours_of_theirs, tally, where, (oracle.profile, before))


def _id_map(transcript: Transcript, view: AgentView) -> dict[str | None, str | None]:
    """The agent's entry id → replaylab's (the same unless the agent migrated a v1 file)."""
    if not view.migrated or transcript.source_version >= 2:
        return {i: i for i in view.entry_ids} | {None: None}
    by_line = {line: entry_id for entry_id, line in transcript.line_of.items()}
    return {theirs: by_line.get(line) for theirs, line in zip(view.entry_ids, view.entry_lines)} | {None: None}


def _compare_window(rules, entries, window: AgentWindow, ids, tally: Tally, where: str) -> list:
    """Compares replaylab's window with the agent's; replaylab's."""
    ours = rules.window(entries)
    tally.add("windows")
    problems = []
    if len(ours) != len(window.context):
        problems.append(f"{len(ours)} messages vs {len(window.context)}")
    for position, (mine, theirs) in enumerate(zip(ours, window.context)):
        tally.add("messages")
        if mine.entry_id != ids.get(theirs.entry_id, theirs.entry_id):
            problems.append(f"#{position} entry {mine.entry_id} vs {theirs.entry_id}")
            continue
        data = message_as_pi_holds_it(mine.message)
        if data != theirs.message:
            keys = sorted(k for k in set(data) | set(theirs.message) if data.get(k) != theirs.message.get(k))
            problems.append(f"#{position} ({theirs.role}) differs in {keys}")
        if theirs.tokens is None and theirs.tokens_error:
            # the agent's own estimate throws on the message (replaylab's rules give a number and warn)
            tally.add("agent estimate errors", f"{where} #{position} ({theirs.role}): {theirs.tokens_error[:120]}")
        elif theirs.tokens is None:
            # NaN (JSON null): a `.length` of a field of another type, which replaylab counts as 0
            tally.add("agent estimates not a number", f"{where} #{position} ({theirs.role})")
        if theirs.tokens is not None:
            mine_tokens = rules.tokens(mine.message)
            if mine_tokens != theirs.tokens:
                tally.add("estimates differ", f"{where} #{position} ({theirs.role}): {mine_tokens} vs {theirs.tokens}")
    if problems:
        tally.add("windows differ", f"{where}: {problems[:3]}")
    return ours


def _compare_cut(
    rules,
    entries,
    keep: int,
    theirs: AgentCut,
    ids,
    tally: Tally,
    where: str,
    seen: tuple[AgentProfile, list] | None = None,
) -> None:
    """`seen`: the profile and replaylab's window at the leaf, where the agent's own estimate may
    fail (`compaction.estimate_failure`)."""
    tally.add("cuts")
    job = _job(seen[0], rules) if seen is not None else None
    before = seen[1] if seen is not None else []
    # the agent's own estimate where it is NaN, as `compact` cuts with it (None: replaylab's count)
    tokens = agent_tokens(job, entries, before) if job is not None else None  # type: ignore[arg-type]
    cut = rules.cut(entries, keep, "0.66.1", _entry_tokens(rules), tokens or rules.tokens)
    refused = rules.refusal(entries) or getattr(cut, "refused", None)
    if job is not None and (refused is None or tokens is not None):
        # where the agent's own estimate fails, replaylab refuses as `compact` does
        failure = estimate_failure(job, entries, before, SimpleNamespace(cut=cut, keep_recent=keep), {})  # type: ignore[arg-type]
        refused = failure.error if failure is not None else refused
        if failure is not None and failure.kind == "nothing_to_gain" and theirs.refused is None:
            # pi 0.73.1's NaN: a preparation that summarizes nothing, which replaylab reports as such
            if not (theirs.summarize or theirs.turn_prefix):
                tally.add("cuts that compact nothing")
                return
    if theirs.refused is not None:
        tally.add("cuts refused by the agent")
        if theirs.refused.startswith("error"):
            tally.add("agent compaction errors", f"{where}: {theirs.refused[:160]}")
        if refused is None:
            tally.add(
                "cuts differ",
                f"{where}: replaylab cuts at {_at(entries, cut.first_kept_index)}, the agent refuses ({theirs.refused})",
            )
        return
    if refused is not None:
        tally.add(
            "cuts differ", f"{where}: replaylab refuses ({refused}), the agent cuts at {theirs.first_kept_entry_id}"
        )
        return
    mine = _at(entries, cut.first_kept_index)
    expected = ids.get(theirs.first_kept_entry_id, theirs.first_kept_entry_id)
    problems = []
    if mine != expected:
        problems.append(f"first kept {mine} vs {expected}")
    if cut.is_split_turn != theirs.is_split_turn:
        problems.append(f"split turn {cut.is_split_turn} vs {theirs.is_split_turn}")
    summarize = getattr(cut, "summarize", None)
    if summarize is not None:
        mine_ids = [entries[i].id for i in summarize]
        if mine_ids != [ids.get(i, i) for i in theirs.summarize]:
            problems.append(f"summarizes {len(mine_ids)} vs {len(theirs.summarize)}")
        prefix = [entries[i].id for i in cut.turn_prefix]
        if prefix != [ids.get(i, i) for i in theirs.turn_prefix]:
            problems.append(f"turn prefix {len(prefix)} vs {len(theirs.turn_prefix)}")
    if problems:
        tally.add("cuts differ", f"{where}: {problems}")


def _job(profile: AgentProfile, rules) -> SimpleNamespace:
    """What `estimate_failure` reads of a compaction's job (no summary is made, as in safeguard)."""
    return SimpleNamespace(
        profile=profile,
        rules=rules,
        tokens=rules.tokens,
        entry_tokens=_entry_tokens(rules),
        params=SimpleNamespace(boundary_rule="0.66.1"),
        safeguard_like=True,
        memo=None,
        cut=lambda path, keep: rules.cut(path, keep, "0.66.1", _entry_tokens(rules), rules.tokens),
    )


class _Memoized:
    """The rules with their estimate computed once per message object (an item's memo does this)."""

    def __init__(self, rules):
        self.rules = rules
        self.memo = ItemMemo(rules=rules)

    def window(self, entries, memo=None):
        return self.rules.window(entries, memo)

    def tokens(self, message) -> int:
        return self.memo.tokens(message)

    def cut(self, entries, keep, rule, entry_tokens, message_tokens):
        return self.rules.cut(entries, keep, rule, entry_tokens, message_tokens)

    def refusal(self, entries):
        return self.rules.refusal(entries)

    def context_tokens(self, messages, tokens_of):
        return self.rules.context_tokens(messages, tokens_of)


def _at(entries, index: int) -> str | None:
    return entries[index].id if 0 <= index < len(entries) else None


def _entry_tokens(rules):
    def tokens(entry):
        return rules.tokens(entry.message) if isinstance(entry, MessageEntry) else 0

    return tokens
