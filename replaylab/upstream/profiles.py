"""Agent profiles: which upstream agent's rules an item is judged under, as frozen values.

A profile names one agent release (`pi@0.73.1`, `openclaw@2026.9.6`, ...) and where its rules and
its oracle live: the module of its constants (this package), the module of its rule functions
(`replaylab.agents.*`: context rebuild, token estimate, cut, trigger), the node folder that pins
its npm package (`replaylab/oracles/node/<folder>`) and the program there that answers for it,
and the OpenClaw release whose runtime rules (tool-result truncation, the request-time guard,
overflow detection) apply with it.

A profile is a module of this package that defines `PROFILE`; the registry finds every one, so a
new upstream release is a new module beside the others (with its rules module, its oracle folder
and its conformance cases), never an edit of one a user depends on.

Which profile a recording gets when neither its suite (`agent:`) nor the command line
(`--replaylab-agent`) names one: the profile that *claims* its session header — a header
version only that agent writes (OpenClaw 2026.9.6 writes version 4; pi up to 1.6.0 writes 3), or
the `source.kind` of a replaylab import from that agent's own store — else the profile that
claims a *record* the session holds, an entry type, message role or custom entry only that
agent writes (OpenClaw's `reset` and `leaf` entries and its `model-snapshot` custom entries, in a
session it began before it wrote version 4; pi
1.6.0's `system` messages, which it writes before its first request, its `context_edit` and
`usage` entries: pi 0.73.1 wrote none of them, and judging such a session under its rules would
ignore what the writer's context holds) — else `FALLBACK`, the rules replaylab judged every
session under before profiles were named.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from replaylab.errors import ReplaylabError

#: the profile of a session no profile claims
FALLBACK = "pi@0.73.1"

#: how an agent orders its compaction's file lists (`computeFileLists`): by UTF-16 code units, as
#: JavaScript's default `.sort()` / `.toSorted()` compares strings, or by code points (Python's)
FileListsOrder = Literal["utf16-units", "code-points"]

#: how a load builds a file's tree: `pi`, its `parentId` links as written, whatever the file's
#: version (pi's `getBranch`; pi checks no version above its own); `openclaw`, OpenClaw 2026.9's
#: navigation, which reads every file it does not migrate as it reads its own (`transcript.parse`)
Navigation = Literal["pi", "openclaw"]


@dataclass(frozen=True)
class FileOpsRules:
    """How an agent's compaction lists the files the summarized messages read and modified, and
    writes the lists' sections, where its code is not pi 0.73.1's (`extractFileOpsFromMessage`,
    `computeFileLists`, `formatFileOperations`); its release module names where each rule is. Such
    an agent bounds its sections in every mode, each list's end trimmed (the lists' order is the
    profile's `file_lists_order`)."""

    #: a call's path: the first of these arguments that holds a string (an empty one names none)
    path_keys: tuple[str, ...]
    #: the tools whose call reads / writes / edits its path, by their names lower-cased
    read_tools: frozenset[str]
    write_tools: frozenset[str]
    edit_tools: frozenset[str]
    #: a name holding this separator names its tool after the first one (`<server>__<tool>`), one
    #: that starts with `server_prefix` after the first one past it
    server_separator: str
    server_prefix: str
    #: the tool whose results name the files it changed (its `details.summary`), not its call
    patch_tool: str
    #: a previous compaction's lists count in every mode, and only when both are lists of strings
    previous_lists_whole: bool
    #: the sections' limits, in UTF-16 units: each list's, and the file sections' together
    list_chars: int
    section_chars: int
    #: whether the safeguard's entry holds the lists (`details`) when the span has no real
    #: conversation and it writes its fixed fallback summary
    lists_with_fallback: bool


@dataclass(frozen=True)
class RunHistoryRules:
    """What an agent's compaction run does to the session's messages before it asks whether they
    hold a real conversation, where that changes the answer; its release module names where each
    rule is. The cut and the summary read the session's entries, not these messages."""

    #: an assistant message the run drops (one written for the transcript only): by its provider and
    #: model, or by a marker field that is an object whose `kind` is one of the marker kinds
    dropped_assistant_provider: str
    dropped_assistant_models: frozenset[str]
    dropped_assistant_marker: str
    dropped_assistant_marker_kinds: frozenset[str]
    #: content blocks the run removes from an assistant message (one left with none is dropped)
    dropped_assistant_block_types: frozenset[str]
    #: a user message whose `provenance` is an object of this `kind` gets a header line (text that
    #: says something) in its first text block when that text is not blank, or a text block of its
    #: own when it has none
    annotated_user_provenance: str
    #: that header (what it says is never silent, so the message says something)
    user_annotation: str


@dataclass(frozen=True)
class RealConversationRules:
    """Whether an agent's safeguard finds a real conversation to summarize (none: it writes its fixed
    fallback summary), where its code is not OpenClaw 2026.4.12's `compaction-real-conversation.ts`
    (a user or assistant message with meaningful text, or a tool result after one); its release
    module names where each rule is."""

    #: roles whose own meaningful content makes a message real (custom: shown, bash: command and
    #: output, summaries: their text; a message marked `excludeFromContext: true` never is)
    roles: frozenset[str]
    #: roles whose meaningful content makes a tool result real within `tool_result_lookback` messages after it
    anchor_roles: frozenset[str]
    tool_result_lookback: int
    #: roles whose content is their `summary` text
    summary_roles: frozenset[str]
    #: content blocks that say nothing: tool calls and these; any other non-text block is meaningful
    tool_call_block_types: frozenset[str]
    non_conversation_block_types: frozenset[str]
    #: `customType`s of the custom messages removed before the test
    ignored_custom_types: frozenset[str]
    #: text that is only these tokens says nothing
    silent_token: str
    heartbeat_token: str
    #: a span without one is still real when the session's whole context (the window before the
    #: compaction, its summary and kept tail included) holds one
    session_context: bool
    #: the reason the agent's own compaction run gives when it does not compact at all because the
    #: session's context holds no real conversation, read by these rules with nothing stripped (its
    #: module names where); every trigger but agent-core's threshold compaction in the agent's
    #: default mode goes through that run. None: the run compacts whatever the context holds
    compaction_run_skip: str | None = None
    #: how that run has rewritten the context's messages when it asks (None: as they are)
    compaction_run_history: RunHistoryRules | None = None


@dataclass(frozen=True)
class UnestimableRules:
    """What an agent's compaction does when a message on the path holds a content item its own
    `estimateTokens` cannot count (`transcript.unestimable`: it throws, or gives NaN), or one its
    summarizer cannot serialize; its release module names where each rule is. Its
    `prepareCompaction` estimates the context after its last usage (`tokensBefore`) and, walking
    back from the leaf, each message until the kept tail is full (`findCutPoint`; a NaN keeps the
    sum below it, so the walk goes on to the boundary and the cut falls on the first valid cut
    point there); its default summarizer (not safeguard's) serializes what it summarizes."""

    #: what a throw there does to the compaction, in every trigger (said in the refusal)
    throw_outcome: str
    #: the entry types whose messages `findCutPoint` estimates
    cut_walk_types: frozenset[str]
    #: what the agent does when a NaN moves the cut to the first valid cut point and nothing is
    #: left to summarize, and the failure replaylab reports for it
    nan_outcome: str
    nan_failure: Literal["agent_refuses", "nothing_to_gain"]
    #: what a throw of the default summarizer's `serializeConversation` does (None: not modelled)
    serializer_outcome: str | None = None
    #: what else throws on a message of the context after its last usage, before any compaction
    context_check_outcome: str | None = None
    #: whose estimate and summarizer read the items (`transcript.unestimable`): pi's, or OpenClaw's
    #: own, which guards more
    items: Literal["pi", "openclaw"] = "pi"
    #: whether `prepareCompaction` also estimates every message of the context
    #: (`totalEstimatedTokens`): a throw anywhere in it throws, and a NaN there leaves the tail
    #: budget unscaled, so its cut is found with the NaN (the agent's own cut rules) and not walked
    #: through `cut_walk_types`
    whole_context: bool = False


@dataclass(frozen=True)
class AgentProfile:
    #: how suites and the command line name it: `<agent>@<version>`
    name: str
    agent: str
    version: str
    #: the npm package whose code is the specification, pinned by the oracle's lockfile
    npm_package: str
    #: the oracle's node project, under `replaylab/oracles/node/`
    oracle_folder: str
    #: the module of this package holding the release's constants
    constants_module: str
    #: the OpenClaw release whose runtime rules (truncation, guard, overflow) apply with it
    runtime_rules: str
    #: the module whose `RULES` are this agent's rule functions (`replaylab.agents.*`)
    rules_module: str = ""
    #: the node program in the oracle folder that answers the window protocol (`oracles.agent`)
    oracle_entry: str = ""
    #: the oldest node that runs the agent's code (the oracle folder may pin a newer one)
    node_minimum: tuple[int, int] = (20, 6)
    #: session header versions only this agent writes: its sessions by default
    session_versions: frozenset[int] = field(default_factory=frozenset)
    #: `source.kind` of the headers replaylab's importers write for sessions from its own stores
    source_kinds: frozenset[str] = field(default_factory=frozenset)
    #: entry types and message roles only this agent writes among the profiles: a session whose
    #: header no profile claims is this agent's when it holds one
    entry_types: frozenset[str] = field(default_factory=frozenset)
    message_roles: frozenset[str] = field(default_factory=frozenset)
    #: `customType`s of the custom entries only this agent writes, claimed the same way
    custom_types: frozenset[str] = field(default_factory=frozenset)
    #: the roles of the messages the agent never shows the model when they are marked
    #: `excludeFromContext` (its `convertToLlm`): no such message is an input, so none starts a
    #: user turn (`replay.turns.split_turns`). pi's: a `bashExecution` only (a `!!` command)
    never_shown_when_excluded: frozenset[str] = frozenset({"bashExecution"})
    #: whether the agent also drops a message of any other role whose `excludeFromContext` is
    #: exactly `true` when it rebuilds the context (no such message starts a turn or is a step)
    drops_every_excluded_message: bool = False
    #: whether the agent checks for compaction before each reply within a run, after the results
    #: of its tool calls, and not only where a prompt starts a run (its release module names where)
    compacts_before_replies: bool = False
    #: whether the compaction's file lists also read the calls a tool result records as made by its
    #: call (`nestedCalls`: a codemode script's `tools.*` calls), as they read an assistant's calls
    #: (its release module names where). Not pi 0.73.1 (`extractFileOpsFromMessage` reads
    #: assistants only) nor OpenClaw 2026.9.6 (its bundled `extractFileOpsFromMessage` reads a
    #: toolResult's `apply_patch` summary only; it writes no `nestedCalls`)
    file_ops_from_nested_calls: bool = False
    #: the agent's own file lists and sections (None: pi 0.73.1's, with replaylab's Claude Code
    #: spellings of the file tools; safeguard's sections bounded as OpenClaw 2026.4.12 bounds them)
    file_ops: FileOpsRules | None = None
    #: the order of the compaction's file lists (its release module names the function that sorts
    #: them); code points: replaylab's own, for a profile that names none
    file_lists_order: FileListsOrder = "code-points"
    #: how the safeguard decides the span holds a real conversation (None: OpenClaw 2026.4.12's rule)
    real_conversation: RealConversationRules | None = None
    #: whether the agent's `prepareCompaction` refuses when the branch's leaf is a compaction (its
    #: rules' `refusal` says which ones; its release module names where): safeguard restates entries
    #: after its compaction, so a leaf that only restates is read as that compaction
    #: (`compaction.restated_leaf`)
    refuses_after_compaction_leaf: bool = False
    #: what the agent's compaction does with a message its estimate cannot count (None: replaylab
    #: counts what it can read and goes on, with the parser's `pi-unestimable` warning)
    unestimable: UnestimableRules | None = None

    def __str__(self) -> str:
        return self.name

    @property
    def navigation(self) -> Navigation:
        """The navigation the agent's load reads a file with (`transcript.load_transcript`).
        OpenClaw 2026.9.6, the OpenClaw profile, migrates no version-3 file
        (session-manager-codec-DW3_Rlj9.mjs `migrateToCurrentVersion`), sorts its entries by its schema
        as a version-4 file's (transcript-payload-qsg5dB6v.mjs `partitionSessionFileEntries`) and
        navigates both alike (session-manager-DjC09C_X.mjs `buildIndex`); pi walks the links as written."""
        return "openclaw" if self.agent == "openclaw" else "pi"

    @property
    def label(self) -> str:
        """How reports name the agent: `openclaw 2026.9.6`."""
        return f"{self.agent} {self.version}"

    def claims(self, header: Mapping[str, Any]) -> bool:
        """Whether a session with this header is this agent's (see the module docstring)."""
        version = header.get("version")
        if type(version) is int and version in self.session_versions:
            return True
        source = header.get("source")
        return isinstance(source, Mapping) and source.get("kind") in self.source_kinds


class UnknownProfile(ReplaylabError, ValueError):
    """A name no profile has; its message lists the known ones (the suite loader and the command
    line turn it into an error naming the file, line and key, or the option)."""


_REGISTRY: dict[str, AgentProfile] = {}


def profiles() -> dict[str, AgentProfile]:
    """Every profile: the `PROFILE` of each module of this package, by name."""
    if not _REGISTRY:
        found: dict[str, AgentProfile] = {}
        for module in sorted(m.name for m in pkgutil.iter_modules(_package_path())):
            profile = getattr(importlib.import_module(f"{__package__}.{module}"), "PROFILE", None)
            if isinstance(profile, AgentProfile):
                found[profile.name] = profile
        _REGISTRY.update(sorted(found.items()))
    return dict(_REGISTRY)


def _package_path() -> list[str]:
    return list(importlib.import_module(__package__ or "replaylab.upstream").__path__)


def profile_named(name: str) -> AgentProfile:
    found = profiles().get(name)
    if found is None:
        raise UnknownProfile(f"unknown agent {name!r}; expected one of: {', '.join(sorted(profiles()))}")
    return found


def default_profile() -> AgentProfile:
    """The profile of sessions no profile claims."""
    return profile_named(FALLBACK)


def profile_for_header(header: Mapping[str, Any] | None) -> AgentProfile:
    """The profile claiming a session's header, else the fallback (several claiming it: the
    first by name). A session's records may claim it too: `agents.recording_profile`."""
    return claiming_header(header) or default_profile()


def claiming_header(header: Mapping[str, Any] | None) -> AgentProfile | None:
    """The profile claiming this header (the first by name), or None."""
    if header:
        for profile in profiles().values():
            if profile.claims(header):
                return profile
    return None


@functools.cache
def record_claims() -> tuple[tuple[str, str, AgentProfile], ...]:
    """Every record a profile claims, as ("entry" | "role" | "custom", its type, role or
    `customType`, the profile), by
    profile name: what a session is searched for when its header is claimed by none (read from
    the profiles once: they are frozen values)."""
    return tuple(
        (kind, value, profile)
        for profile in profiles().values()
        for kind, values in (
            ("role", profile.message_roles),
            ("entry", profile.entry_types),
            ("custom", profile.custom_types),
        )
        for value in sorted(values)
    )


@dataclass(frozen=True)
class ProfileChoice:
    """The profile a session gets when nothing names one, and why (as `replaylab inspect` says it)."""

    profile: AgentProfile
    reason: str
