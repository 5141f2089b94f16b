"""The one verdict function: defects + suite expectations → passed / failed / error / skipped /
uncompacted.

Everything that reports an outcome (the pytest item, the exit status, JUnit, HTML, JSON,
markdown) reads the `Verdict` this returns and nothing else, so the printed verdict, the XML and
the exit code can never disagree (peers.md §c: agentv#882, k6#1526).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from replaylab.defects import Code, Defect
from replaylab.results import Outcome
from replaylab.suite import Expectations

FAILING_SEVERITIES = ("blocking", "regression")


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reason: str
    unexpected: list[Defect] = field(default_factory=list)
    missing_expected: list[str] = field(default_factory=list)


def verdict(
    defects: list[Defect],
    expect: Expectations,
    *,
    exercised: bool = True,
    uncompacted: bool = False,
    strict: bool = False,
    not_exercised_reason: str = "no compaction happened",
) -> Verdict:
    errors = [d for d in defects if d.severity == "error"]
    if errors:
        codes = ", ".join(sorted({d.code.value for d in errors}))
        return Verdict("error", f"infrastructure error ({codes}): {errors[0].message}", unexpected=errors)
    found = {d.code for d in defects}
    missing = [code.value for code in expect.defects if code not in found]
    tolerated = set(expect.defects) | (set() if expect.tolerate == "any" else set(expect.tolerate))
    unexpected = [
        d for d in defects if d.severity in FAILING_SEVERITIES and expect.tolerate != "any" and d.code not in tolerated
    ]
    if uncompacted:
        # compaction was due and cannot succeed: a finding of its own (it fails the run), unless
        # the suite tolerates CANNOT_COMPACT, which makes it a visible skip
        first = next(d for d in defects if d.code == Code.CANNOT_COMPACT)
        if Code.CANNOT_COMPACT in expect.defects and not missing:
            return Verdict("passed", "negative control: found CANNOT_COMPACT as expected")
        if (expect.tolerate == "any" or first.code in tolerated) and not strict:
            return Verdict("skipped", f"not exercised: cannot compact (tolerated): {first.message}")
        return Verdict("uncompacted", f"CANNOT_COMPACT: {first.message}", unexpected=[first], missing_expected=missing)
    if not exercised:
        # what the recording itself shows (a loss in a compaction it holds) is found without a
        # compaction of replaylab's: not exercising the scenario does not excuse it
        blocking = [d for d in unexpected if d.severity == "blocking"]
        if blocking:
            more = f" (+{len(blocking) - 1} more)" if len(blocking) > 1 else ""
            return Verdict(
                "failed",
                f"{blocking[0].code.value}: {blocking[0].message}{more}; the scenario itself was not exercised: "
                f"{not_exercised_reason}",
                unexpected=blocking,
                missing_expected=missing,
            )
        if strict:
            return Verdict("failed", f"not exercised: {not_exercised_reason} (--replaylab-strict)")
        return Verdict("skipped", f"not exercised: {not_exercised_reason}")
    if missing:
        return Verdict(
            "failed",
            f"negative control: replaylab did not find {', '.join(missing)}",
            unexpected=unexpected,
            missing_expected=missing,
        )
    if unexpected:
        blocking = [d for d in unexpected if d.severity == "blocking"]
        first = (blocking or unexpected)[0]
        more = f" (+{len(unexpected) - 1} more)" if len(unexpected) > 1 else ""
        return Verdict("failed", f"{first.code.value}: {first.message}{more}", unexpected=unexpected)
    if expect.defects:
        return Verdict("passed", f"negative control: found {', '.join(c.value for c in expect.defects)} as expected")
    return Verdict("passed", "compaction changed nothing the agent does")
