"""Reference: the scrubber on the texts built to stall it, against ordinary text of the same size.

A backtracking pattern can be made to try every split of a long run (`password` followed by
spaces), or to scan a long run again from each of its starts (`sk-` repeated): quadratic or worse,
per call, in whatever replaylab scrubs (a tool result, a report, a cassette). The rules are linear
(`replaylab/scrub/rules.py`); this prints how far each worst input is from ordinary text of the same
size — a ratio, never a timed assertion. Subject: `Scrubber.text` on each worst input of
`WORST_BYTES`; floor: the same on ordinary prose with ids, of the same size.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from bench.cases.common import Context, result, round_robin

WORST_BYTES = 200_000
QUICK_BYTES = 20_000


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


#: name → the worst input of a size: each one a pattern of the first adversarial pass or of the
#: search for more (a run after a hint, a hint repeated inside one run, with every separator)
WORST: dict[str, Callable[[int], str]] = {
    "password + spaces": lambda n: "password" + " " * (n - 8),
    "sk- repeated": lambda n: _repeat("sk-", n),
    "token= repeated": lambda n: _repeat("token=", n),
    "pagetoken=1 repeated": lambda n: _repeat("pagetoken=1", n),
    "-key: repeated": lambda n: _repeat("-key:", n),
    "a-key: repeated": lambda n: _repeat("a-key:", n),
    "-auth:- repeated": lambda n: _repeat("-auth:-", n),
    "curl --user=. repeated": lambda n: _repeat("--user=.", n),
    "curl --cookie=. repeated": lambda n: _repeat("--cookie=.", n),
    "eyJ repeated": lambda n: _repeat("eyJ", n),
    "ghr__ repeated": lambda n: _repeat("ghr__", n),
    "xoxb-= repeated": lambda n: _repeat("xoxb-=", n),
    "BEGIN without END": lambda n: _repeat("-----BEGIN RSA PRIVATE KEY-----", n),
    "password 1 + dots": lambda n: "password 1!" + "." * (n - 11),
    "npm registry run": lambda n: "//" + "a" * (n - 20) + "/:_authToken=",
    "aws repeated": lambda n: _repeat("aws", n),
    "escaped newlines": lambda n: _repeat("\\nAuthorization\\n", n),
    "quoted secret unclosed": lambda n: 'password: "' + "a" * (n - 11),
}


def ordinary(size: int) -> str:
    """Prose of a support session with its ids, as tool results and answers hold it."""
    sentence = (
        "Customer mia_garcia_4516 asked about order #W2378156 and ticket TCK-5001; the refund of 79.99 EUR "
        "was approved under policy RP-2 after checking the carrier's tracking 1Z999AA10123456784. "
    )
    return _repeat(sentence, size)


def unseen(scrubber: Any, text: str, calls: int) -> Callable[[], str]:
    """`scrubber.text` of `text` with a line of its own added, a new copy per call, each made
    before any is timed: the scrubber keeps its answer for a text it has seen (timing that would
    time a lookup), and a copy made while timed would weigh on the floor's fraction of a millisecond."""
    copies = iter([f"{text}\n{call}" for call in range(calls)])
    return lambda: scrubber.text(next(copies))


def run(ctx: Context) -> list[dict[str, Any]]:
    from replaylab.scrub import Scrubber

    size = QUICK_BYTES if ctx.quick else WORST_BYTES
    scrubber = Scrubber(literals=())
    plain = ordinary(size)
    repeats = max(2, ctx.repeats // 2)
    ratios: dict[str, float] = {}
    worst_name, worst_ratio, worst_times, floor_times = "", 0.0, [0.0], [1.0]
    for name, make in WORST.items():
        calls = repeats + 1  # round_robin's warm-up, then the timed rounds
        subjects = {"floor": unseen(scrubber, plain, calls), "subject": unseen(scrubber, make(size), calls)}
        times = round_robin(subjects, repeats)
        ratio = statistics.median(times["subject"]) / statistics.median(times["floor"])
        if not ratios or ratio > worst_ratio:
            worst_name, worst_ratio, worst_times, floor_times = name, ratio, times["subject"], times["floor"]
        ratios[name] = round(ratio, 2)
    return [
        result(
            "scrub-worst",
            f"reference: Scrubber.text on the worst of {len(WORST)} inputs built to stall it ({worst_name}), "
            f"{size // 1000} KB",
            subject=worst_times,
            floor=floor_times,
            floor_what=f"Scrubber.text on ordinary prose with ids, {size // 1000} KB",
            target="none (reference): a ratio, linear in the size",
            checks=[],
            info=True,
            details={"bytes": size, "ratios": ratios, "worst": worst_name},
        )
    ]
