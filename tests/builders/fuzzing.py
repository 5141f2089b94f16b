"""What the fuzz tests share: hypothesis settings with a CI example count that
`REPLAYLAB_FUZZ_EXAMPLES=N` replaces for a longer run on demand (then at random, not derandomized)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def fuzz_settings(ci_examples: int) -> settings:
    override = os.environ.get("REPLAYLAB_FUZZ_EXAMPLES")
    return settings(
        max_examples=int(override) if override else ci_examples,
        deadline=None,
        database=None,
        derandomize=not override,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
