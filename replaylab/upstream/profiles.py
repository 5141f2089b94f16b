"""Agent profiles: which upstream agent's rules an item is judged under, as frozen values.

A profile names one agent release (`pi@0.73.1`, ...) and where its rules and its oracle live: the
module of its constants (this package), the node folder that pins its npm package
(`replaylab/oracles/node/<folder>`), and the OpenClaw release whose runtime rules (tool-result
truncation, the request-time guard, overflow detection) apply with it. A new upstream release is
a new profile beside the others, never an edit of one a user depends on.
"""

from __future__ import annotations

from dataclasses import dataclass

from replaylab.errors import ReplaylabError


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

    def __str__(self) -> str:
        return self.name


PI_0_73_1 = AgentProfile(
    name="pi@0.73.1",
    agent="pi",
    version="0.73.1",
    npm_package="@mariozechner/pi-coding-agent",
    oracle_folder="pi-0.73.1",
    constants_module="replaylab.upstream.pi_0_73_1",
    runtime_rules="openclaw@2026.4.12",
)

PROFILES: dict[str, AgentProfile] = {p.name: p for p in (PI_0_73_1,)}

#: the profile of items that name none: replaylab's behaviour before profiles were named
DEFAULT_PROFILE = PI_0_73_1


class UnknownProfile(ReplaylabError, ValueError):
    """A name no profile has; its message lists the known ones (the suite loader and the command
    line turn it into an error naming the file, line and key, or the option)."""


def profile_named(name: str) -> AgentProfile:
    found = PROFILES.get(name)
    if found is None:
        raise UnknownProfile(f"unknown agent {name!r}; expected one of: {', '.join(sorted(PROFILES))}")
    return found
