"""The agents' rule functions: how each pinned agent release rebuilds its context, estimates a
message, cuts a compaction and measures a window against its budget (`transcript.rules.AgentRules`).

One module (or package) per release, named by its profile's `rules_module`
(`replaylab.upstream.profiles`), exporting `RULES`. Each is a faithful port of that agent's own
code, checked against it by running the pinned npm package (`replaylab.oracles.agent`, the
conformance tests in tests/oracles/). The item's rules travel as a value (`ItemMemo.rules`), so the
layers below never import this package.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from replaylab.diagnostics import Diagnostic, InputError
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.rules import AgentRules
from replaylab.upstream.profiles import (
    AgentProfile,
    ProfileChoice,
    UnknownProfile,
    claiming_header,
    default_profile,
    profile_named,
    record_claims,
)
from replaylab.upstream.runtime_rules import runtime_rules_named


def rules_of(profile: AgentProfile | str) -> AgentRules:
    """The rule functions of a profile (or of the profile of that name)."""
    if isinstance(profile, str):
        profile = profile_named(profile)
    rules: AgentRules = importlib.import_module(profile.rules_module).RULES
    return rules


def item_memo(profile: AgentProfile) -> ItemMemo:
    """A new memo for one item judged under `profile`: its agent rules (`memo_rules`) and the
    OpenClaw runtime rules it runs with (`AgentProfile.runtime_rules`)."""
    return ItemMemo(rules=memo_rules(profile), runtime_rules=runtime_rules_named(profile.runtime_rules))


def memo_rules(profile: AgentProfile) -> AgentRules | None:
    """The rules an item's memo carries (`ItemMemo.rules`): None when they are the plain functions
    every layer uses when given none (pi 0.73.1's), so that those items run exactly the code they
    always ran."""
    rules = rules_of(profile)
    return None if getattr(rules, "plain", False) else rules


def named_profile(name: str | None, where: str) -> AgentProfile | None:
    """A command's `--agent NAME` (None when not given); an unknown name is a usage error naming
    `where` (the command) and the known profiles."""
    if not name:
        return None
    try:
        return profile_named(name)
    except UnknownProfile as exc:
        raise InputError([Diagnostic(code="bad-option", file=where, field="--agent", message=str(exc))]) from None


def profile_of_recording(path: Path) -> AgentProfile:
    """The profile a recording gets when nothing names one (`recording_profile`)."""
    return recording_profile(path).profile


def recording_profile(path: Path) -> ProfileChoice:
    """The profile a recording gets when nothing names one, and why: the one claiming its session
    header, else the one claiming a record it holds, else the fallback (`upstream.profiles`)."""
    from replaylab.transcript.header import first_record, read_header

    header = read_header(path)
    claimed = claiming_header(header)
    if claimed is not None:
        return ProfileChoice(claimed, f"its session header is {claimed.agent}'s ({_header_mark(header)})")
    claims = record_claims()
    found = first_record(path, [(kind, value) for kind, value, _ in claims])
    if found is not None:
        kind, value, profile = claims[found.index]
        what = {"role": f"a {value} message", "custom": f"a {value} custom entry"}.get(kind, f"a {value} entry")
        return ProfileChoice(
            profile, f"line {found.line:,} holds {what}, which among the pinned agents only {profile.label} writes"
        )
    return ProfileChoice(default_profile(), "no agent claims its header or a record it holds: the fallback")


def _header_mark(header: Any) -> str:
    source = header.get("source")
    kind = source.get("kind") if isinstance(source, dict) else None
    return f"source {kind}" if isinstance(kind, str) else f"version {header.get('version')}"


__all__ = [
    "AgentRules",
    "item_memo",
    "memo_rules",
    "named_profile",
    "profile_of_recording",
    "recording_profile",
    "rules_of",
]
