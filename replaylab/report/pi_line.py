"""The report line that says whether the windows replaylab judged are the contexts pi builds."""

from __future__ import annotations

from replaylab.results import Totals


def pi_verification_line(totals: Totals) -> str:
    differ = totals.defects_by_code.get("PI_CONTEXT_DIFFERS", 0)
    if totals.pi_version is None and not differ:
        return "windows not verified against pi (the pi oracle is not installed, or the check is off)"
    line = (
        f"window verified against pi {totals.pi_version}: {totals.pi_verified_windows} compacted "
        f"window{'s' if totals.pi_verified_windows != 1 else ''} equal to pi's context"
    )
    return line + (f", {differ} differ (PI_CONTEXT_DIFFERS)" if differ else "")
