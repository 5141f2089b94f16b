"""Seeded mutants of the compactor: real upstream compaction bugs that replaylab must catch.

Each module holds a `MUTANTS` list of `replaylab.selftest.Mutant`s, grouped by the kind of bug:
`pairing` (orphan results, a compaction between a call and its result), `summaries` (double
compaction, empty skeleton, "Summary unavailable", dropped identifiers), `protection` (pending
confirmation, merged tool groups, truncated mutating result, stripped thinking signatures) and
`side_effects` (duplicate send, mislabelled tool, wrong replaySafe / mutatedEventIds).
`_kit` holds what they share: run the real `compact()` and change what it wrote.

They ship with the package because `replaylab selftest` runs them wherever replaylab is installed.
They import `replaylab.selftest` and compaction internals; the selftest finds them by folder and
never imports them by name. Run them: `replaylab selftest` (or `pytest tests/test_mutants.py`).
"""
