"""Each compacted window checked against the real pi: the context pi's `buildSessionContext` makes
of the working copy right after the compaction, message by message (`pi_oracle.compare`).

A verdict is about the window replaylab replays on; it is only worth something if that window is
the context a pi / OpenClaw agent would rebuild from the same file. So whenever the oracle is
installed (`pi_oracle.oracle_unavailable()` is None), every successful compaction's window is
compared with pi's; a difference is `PI_CONTEXT_DIFFERS` (the item cannot be judged). Without the
oracle nothing is checked and the reports say so. One node process serves the whole run.
"""

from __future__ import annotations

import atexit
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from replaylab import caches
from replaylab.defects import Code, Defect
from replaylab.oracles.compare import context_mismatches
from replaylab.oracles.pi import OracleError, PiOracle, oracle_unavailable, pinned_version
from replaylab.transcript.context import WindowMessage

#: `auto`: check when the oracle is installed; `on`: the oracle must be installed; `off`: never
VerifyWithPi = Literal["auto", "on", "off"]
MAX_MISMATCHES_SHOWN = 3


@dataclass(frozen=True)
class PiCheck:
    """One window compared with pi's context: equal when `mismatches` is empty."""

    pi_version: str
    messages: int
    mismatches: tuple[str, ...]

    @property
    def equal(self) -> bool:
        return not self.mismatches

    def defect(self) -> Defect:
        shown = "; ".join(self.mismatches[:MAX_MISMATCHES_SHOWN])
        more = len(self.mismatches) - MAX_MISMATCHES_SHOWN
        return Defect.of(
            Code.PI_CONTEXT_DIFFERS,
            f"the compacted window ({self.messages} messages) is not the context pi {self.pi_version} "
            f"builds from the working copy: {shown}" + (f" (and {more} more)" if more > 0 else ""),
        )


class _SharedOracle:
    """The run's one oracle process, started on first use and closed at exit; whether the oracle is
    installed, and its pinned version, are read once (every compaction asks)."""

    def __init__(self) -> None:
        self.oracle: PiOracle | None = None
        self.checked: tuple[str | None, str] | None = None  # (why not available, pinned version)

    def availability(self) -> tuple[str | None, str]:
        if self.checked is None:
            reason = oracle_unavailable()
            self.checked = (reason, pinned_version() if reason is None else "")
        return self.checked

    def get(self) -> PiOracle:
        if self.oracle is None:
            self.oracle = PiOracle()
            atexit.register(self.close)
        return self.oracle

    def close(self) -> None:
        oracle, self.oracle, self.checked = self.oracle, None, None
        if oracle is not None:
            oracle.close()

    def size(self) -> int:
        return int(self.oracle is not None)


_SHARED = _SharedOracle()
caches.register("qa.pi_oracle", _SHARED.size, _SHARED.close)


def unavailable_reason(setting: VerifyWithPi) -> str | None:
    """Why windows will not be checked (None: they will)."""
    if setting == "off":
        return "off (--replaylab-verify-with-pi off)"
    return _SHARED.availability()[0]


def check_window(working_copy: Path, window: Sequence[WindowMessage], setting: VerifyWithPi) -> PiCheck | None:
    """pi's context of `working_copy` (its leaf: the compaction just written) against `window`;
    None when the check is off or the oracle is not installed (under `auto`)."""
    if unavailable_reason(setting) is not None:
        return None
    version = _SHARED.availability()[1]
    try:
        view = _SHARED.get().view(working_copy)
    except OracleError as error:
        return PiCheck(version, len(window), (f"pi could not read it: {error}",))
    return PiCheck(view.pi_version, len(window), tuple(str(m) for m in context_mismatches(window, view)))
