"""The pi oracle: what the real pi makes of a transcript, asked of pi itself.

The pi 0.73.1 profile's oracle (`oracles.agent`, the window protocol), with the answer shape the
pi checks were written against: pi's rebuilt context (`buildSessionContext`), its per-message
token estimates (`estimateTokens`) and the cut of a compaction (`prepareCompaction`) at the file's
leaf (`PiView`). pi loads the file where it is, with its writes off: `SessionManager.open`
rewrites a file it migrates, so the oracle builds the manager `open` builds with persistence off
and reports where pi would have rewritten the file as `migrated` (`pi_oracle.mjs`).

``node/pi-<version>/pi_compact.mjs`` is pi's own compaction as a compactor under test (suite key
`compactor: pi`): it compacts the working copy it is given with pi's `prepareCompaction`,
`compact` and `appendCompaction`, its sockets held to loopback (``node/loopback_only.mjs``, shared
by the bundled compactors). Which pi compacts follows the item's profile (`compactor_profile`): pi
1.6.0's for a `pi@1.6.0` item, pi 0.73.1's for a `pi@0.73.1` item and for an item of another agent
(OpenClaw's own compaction is not pi's; `compactor: pi` there means the pi replaylab falls back to).

Installing it: ``npm ci --prefix <this folder>/node/pi-0.73.1`` (node >= 20.6 and the npm registry).
Without it everything else works; checks that need it say so (`oracle_unavailable()`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replaylab.oracles import agent
from replaylab.oracles.agent import AgentOracle, OracleError
from replaylab.upstream.pi_0_73_1 import PROFILE
from replaylab.upstream.profiles import AgentProfile, default_profile

NODE_DIR = agent.folder(PROFILE)
ENTRY = NODE_DIR / PROFILE.oracle_entry
#: pi's own compaction as a compactor under test (the seed contract on stdin / stdout)
COMPACT_ENTRY = NODE_DIR / "pi_compact.mjs"
PI_PACKAGE = PROFILE.npm_package
#: the program of a pi oracle folder that runs pi's own compaction
COMPACT_PROGRAM = "pi_compact.mjs"


def compactor_profile(profile: AgentProfile | None) -> AgentProfile:
    """The pi whose compaction `compactor: pi` runs for an item of `profile`: that pi, or for an
    item of another agent (or none) the fallback pi (`upstream.profiles.FALLBACK`)."""
    return profile if profile is not None and profile.agent == "pi" else default_profile()


def compact_entry(profile: AgentProfile | None = None) -> Path:
    """The compactor program of the pi `compactor_profile(profile)` names."""
    return agent.folder(compactor_profile(profile)) / COMPACT_PROGRAM


def pinned_version() -> str:
    """The pi version the oracle pins (its package.json; the lockfile holds the exact tree)."""
    return agent.pinned_version(PROFILE)


def install_command() -> str:
    return agent.install_command(PROFILE)


def node_executable() -> str | None:
    return agent.node_executable(PROFILE)


def oracle_unavailable() -> str | None:
    """None when the oracle can run; else why not, with what to do."""
    return agent.oracle_unavailable(PROFILE)


@dataclass(frozen=True)
class PiMessage:
    """One message of pi's context: the entry it came from, pi's estimate, the message as pi holds it."""

    entry_id: str | None
    role: str
    tokens: int | None  # None when pi's estimateTokens throws on it
    tokens_error: str | None
    message: dict[str, Any]


@dataclass(frozen=True)
class PiCut:
    """`prepareCompaction` of the leaf: where pi cuts and what it summarizes."""

    first_kept_entry_id: str
    is_split_turn: bool
    tokens_before: int
    summarize: tuple[str | None, ...]
    turn_prefix: tuple[str | None, ...]
    previous_summary: bool


@dataclass(frozen=True)
class PiView:
    """What pi made of one transcript."""

    pi_version: str
    file_version: int | None  # the header's version before pi migrated it
    migrated: bool  # pi would rewrite the file as it loads it (a v1/v2 file, or one holding no session)
    leaf_id: str | None
    entry_ids: tuple[str, ...]  # every entry pi kept, file order (a dropped line is absent)
    context: tuple[PiMessage, ...]
    cut: PiCut | None  # only when asked with keep_recent_tokens; None: pi would not compact

    @classmethod
    def from_answer(cls, answer: dict[str, Any]) -> PiView:
        context = tuple(
            PiMessage(
                entry_id=m.get("entryId"),
                role=str(m.get("role")),
                tokens=m["tokens"] if isinstance(m.get("tokens"), int) else None,
                tokens_error=m["tokens"].get("error") if isinstance(m.get("tokens"), dict) else None,
                message=m.get("message") or {},
            )
            for m in answer.get("context", [])
        )
        prepared = answer.get("prepare")
        cut = None
        if prepared:
            cut = PiCut(
                first_kept_entry_id=prepared["firstKeptEntryId"],
                is_split_turn=bool(prepared["isSplitTurn"]),
                tokens_before=int(prepared["tokensBefore"]),
                summarize=tuple(prepared.get("summarize") or ()),
                turn_prefix=tuple(prepared.get("turnPrefix") or ()),
                previous_summary=bool(prepared.get("previousSummary")),
            )
        return cls(
            pi_version=str(answer.get("pi")),
            file_version=answer.get("version"),
            migrated=bool(answer.get("migrated")),
            leaf_id=answer.get("leafId"),
            entry_ids=tuple(e["id"] for e in answer.get("entries", [])),
            context=context,
            cut=cut,
        )


class PiOracle(AgentOracle):
    """One node process answering many transcripts, in order (`view`). Use as a context manager,
    or call `close()`; it is safe to share between threads (requests are serialized)."""

    def __init__(self) -> None:
        super().__init__(PROFILE)

    def view(  # type: ignore[override]
        self, file: Path | str, *, keep_recent_tokens: int | None = None, reserve_tokens: int | None = None
    ) -> PiView:
        """pi's context (and, with `keep_recent_tokens`, its compaction cut) for `file`."""
        request: dict[str, Any] = {"file": str(Path(file).resolve())}
        if keep_recent_tokens is not None:
            request["keepRecentTokens"] = keep_recent_tokens
            if reserve_tokens is not None:
                request["reserveTokens"] = reserve_tokens
        answer = self.ask(request)
        if not answer.get("ok"):
            raise OracleError(f"pi failed on {file}: {str(answer.get('error'))[:2000]}")
        return PiView.from_answer(answer)


__all__ = ["OracleError", "PiCut", "PiMessage", "PiOracle", "PiView", "oracle_unavailable", "pinned_version"]
