"""What the fuzz tests share: hypothesis settings with a CI example count that
`REPLAYLAB_FUZZ_EXAMPLES=N` replaces for a longer run on demand (then at random, not derandomized),
and the same for a fuzz that draws its seeds itself (`fuzz_seeds`)."""

from __future__ import annotations

import os
import random

from hypothesis import HealthCheck, settings

from replaylab.defects import Code

#: findings that would be replaylab's own fault on any session: safeguard's contract, the replay's
#: faithfulness to the recording, and agreement with the agent whose rules apply
NEVER = frozenset(
    {
        Code.MUTATION_DROPPED,
        Code.MUTATION_ALTERED,
        Code.PAIR_BROKEN,
        Code.REPLAY_FLAG_WRONG,
        Code.MUTATED_IDS_WRONG,
        Code.THINKING_ALTERED,
        Code.TRANSCRIPT_REWRITTEN,
        Code.BASELINE_DRIFT,
        Code.RECORDING_INVALID,
        Code.CASSETTE_MISSING,
        Code.COMPACTION_FAILED,
        Code.AGENT_CONTEXT_DIFFERS,
    }
)


def fuzz_settings(ci_examples: int) -> settings:
    override = os.environ.get("REPLAYLAB_FUZZ_EXAMPLES")
    return settings(
        max_examples=int(override) if override else ci_examples,
        deadline=None,
        database=None,
        derandomize=not override,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


def fuzz_seeds(ci_examples: int) -> list[int]:
    """Seeds for a fuzz whose examples share one expensive set-up (hypothesis would make it per
    example): the same `ci_examples` seeds in CI, `REPLAYLAB_FUZZ_EXAMPLES=N` seeds at random."""
    override = os.environ.get("REPLAYLAB_FUZZ_EXAMPLES")
    if not override:
        return list(range(ci_examples))
    return random.sample(range(2**31), int(override))
