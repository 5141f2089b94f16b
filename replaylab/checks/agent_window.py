"""Each compacted window checked against the agent's own rebuild of the working copy: the context
the item's agent (its profile's pinned npm package, `oracles.agent`) builds at the compaction
entry, message by message (`oracles.compare`).

A verdict is about the window replaylab replays on; it is only worth something if that window is
the context the agent would rebuild from the same file. So whenever the profile's oracle is
installed, every successful compaction's window is compared with the agent's — all the windows of
one working copy in one request, once the item's runs are over, or, when the first compaction is
the only one due, its window sent as soon as it is written (`WindowsAsked`: the agent reads the
copy on another core while the compacted run goes on, and nothing changes the copy until it has
answered); a difference is
`AGENT_CONTEXT_DIFFERS` (the item cannot be judged). Without the oracle nothing is checked and the
reports say so. One node process per agent serves the whole run, started ahead of its first
check (`start_oracle`: by the plugin before the first item, by each item before its runs), so
node's start and the agent's import overlap the runs instead of being waited for.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from replaylab import caches
from replaylab.defects import Code, Defect
from replaylab.oracles.agent import AgentOracle, AgentWindow, OracleError, PendingView, oracle_unavailable
from replaylab.oracles.compare import context_mismatches
from replaylab.transcript.context import WindowMessage
from replaylab.upstream.profiles import AgentProfile

#: `auto`: check when the oracle is installed; `on`: the oracle must be installed; `off`: never
VerifyWithPi = Literal["auto", "on", "off"]
VerifyWindows = VerifyWithPi
MAX_MISMATCHES_SHOWN = 3


@dataclass(frozen=True)
class WindowCheck:
    """One window compared with the agent's context: equal when `mismatches` is empty."""

    #: the agent that rebuilt it, as reports name it (`openclaw 2026.9.6`)
    agent: str
    messages: int
    mismatches: tuple[str, ...]

    @property
    def equal(self) -> bool:
        return not self.mismatches

    def defect(self) -> Defect:
        shown = "; ".join(self.mismatches[:MAX_MISMATCHES_SHOWN])
        more = len(self.mismatches) - MAX_MISMATCHES_SHOWN
        return Defect.of(
            Code.AGENT_CONTEXT_DIFFERS,
            f"the compacted window ({self.messages} messages) is not the context {self.agent} "
            f"builds from the working copy: {shown}" + (f" (and {more} more)" if more > 0 else ""),
        )


class _SharedOracles:
    """The run's oracle process per agent, each started ahead (`start_oracle`) or on first use
    and closed at exit; whether an agent's oracle is installed is read once per agent (every item
    asks)."""

    def __init__(self) -> None:
        self.oracles: dict[str, AgentOracle] = {}
        self.checked: dict[str, str | None] = {}  # profile name → why not available (None: it is)

    def availability(self, profile: AgentProfile) -> str | None:
        if profile.name not in self.checked:
            self.checked[profile.name] = oracle_unavailable(profile)
        return self.checked[profile.name]

    def get(self, profile: AgentProfile) -> AgentOracle:
        oracle = self.oracles.get(profile.name)
        if oracle is None:
            if not self.oracles:
                atexit.register(self.close)
            oracle = self.oracles[profile.name] = AgentOracle(profile)
        return oracle

    def close(self) -> None:
        oracles, self.oracles, self.checked = self.oracles, {}, {}
        for oracle in oracles.values():
            oracle.close()

    def size(self) -> int:
        return len(self.oracles)


_SHARED = _SharedOracles()
caches.register("qa.agent_oracles", _SHARED.size, _SHARED.close)


def unavailable_reason(profile: AgentProfile, setting: VerifyWindows) -> str | None:
    """Why windows will not be checked against this agent (None: they will)."""
    if setting == "off":
        return "off (--replaylab-verify-windows off)"
    return _SHARED.availability(profile)


def start_oracle(profile: AgentProfile, setting: VerifyWindows) -> None:
    """Starts now the oracle process of `profile` when its windows will be checked (not off,
    installed), unless it runs already: a process takes from a fraction of a second (pi) to
    seconds (OpenClaw) to import its agent, which the first check of a run would otherwise wait
    for. A process that cannot start is left for that check to report."""
    if unavailable_reason(profile, setting) is None:
        try:
            _SHARED.get(profile).start()
        except (OracleError, OSError):
            pass


def check_windows(
    profile: AgentProfile,
    working_copy: Path,
    windows: Sequence[tuple[str, Sequence[WindowMessage]]],
    setting: VerifyWindows,
    asking: Callable[[int], None] | None = None,
) -> list[WindowCheck]:
    """The agent's context of `working_copy` at each compaction entry id, against the window
    replaylab rebuilt there, in one request; empty when the check is off or the oracle is not
    installed (under `auto`). `asking(count)` is called just before the request, when there is one."""
    if not windows or unavailable_reason(profile, setting) is not None:
        return []
    if asking is not None:  # the agent is about to read the whole working copy: told first
        asking(len(windows))
    return WindowsAsked(profile, working_copy, windows).checks()


class WindowsAsked:
    """The agent asked for its context at each window's entry id of `working_copy` (one request,
    sent at once); `checks` compares each with replaylab's window once the answer is read.

    Why sent ahead: the agent reads and rebuilds on another core while the item goes on with
    its runs. The working copy must then not change until the agent has read it: `settle`
    first."""

    def __init__(
        self, profile: AgentProfile, working_copy: Path, windows: Sequence[tuple[str, Sequence[WindowMessage]]]
    ) -> None:
        self.profile = profile
        self.windows = list(windows)
        self._pending: PendingView | None = None
        self._error: OracleError | None = None
        try:
            self._pending = _SHARED.get(profile).view_later(
                working_copy, leaves=[leaf for leaf, _ in windows], entries=False
            )
        except OracleError as error:
            self._error = error

    def settle(self) -> None:
        """Waits until the agent has answered (it no longer reads the working copy)."""
        if self._pending is not None:
            self._pending.settle()

    def checks(self) -> list[WindowCheck]:
        profile = self.profile
        if self._pending is not None:
            try:
                view = self._pending.view()
            except OracleError as error:
                self._error = error
        if self._error is not None:
            return [
                WindowCheck(profile.label, len(w), (f"{profile.label} could not read it: {self._error}",))
                for _, w in self.windows
            ]
        checks = []
        for (_, window), theirs in zip(self.windows, view.windows):
            checks.append(
                WindowCheck(f"{profile.agent} {view.agent_version}", len(window), _mismatches(window, theirs))
            )
        return checks


def ask_windows(
    profile: AgentProfile,
    working_copy: Path,
    windows: Sequence[tuple[str, Sequence[WindowMessage]]],
    setting: VerifyWindows,
) -> WindowsAsked | None:
    """`check_windows`' request sent now (None when nothing will be checked), for `checks` later."""
    if not windows or unavailable_reason(profile, setting) is not None:
        return None
    return WindowsAsked(profile, working_copy, windows)


def _mismatches(window: Sequence[WindowMessage], theirs: AgentWindow) -> tuple[str, ...]:
    if theirs.error:
        return (f"the agent could not rebuild it: {theirs.error[:500]}",)
    return tuple(str(m) for m in context_mismatches(window, theirs.context, migrated=False))
