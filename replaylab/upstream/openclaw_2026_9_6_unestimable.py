"""What OpenClaw 2026.9.6's compaction does where its own token estimate or summarizer fails on a
message (npm `openclaw@2026.9.6`, `dist/`), the openclaw@2026.9.6 profile's `unestimable`.

Its `estimateTokens` (compaction-CAzwgOuQ.mjs, `estimateStringChars` of cjk-chars-6ld30jSx.mjs)
throws on a null content item and on an assistant text, thinking or call name that is absent (or a
list holding a non-ASCII character), and gives NaN on one that is another non-string; it guards a
call's arguments and joins other content's texts whatever their type
(`transcript.unestimable.openclaw_unestimable_item`). `prepareCompaction` estimates the context after
its last usage (`estimateContextTokens`), the whole context (`totalEstimatedTokens`, whose NaN leaves
`triggerUnitScale` at 1) and the tail `findCutPoint` walks back over. Checked with the package's own
code by tests/oracles/test_unestimable_conformance.py.
"""

from __future__ import annotations

from replaylab.upstream.profiles import UnestimableRules

UNESTIMABLE = UnestimableRules(
    # compaction-CAzwgOuQ.mjs `prepareCompaction` (`estimateContextTokens`, `totalEstimatedTokens`
    # over the whole context, `findCutPoint`); resource-loader-v8341X6T.mjs `runAutoCompaction`
    # catches a throw of `runCompactionWork` (`compaction_end` failed), `compactWithSessionWriteSettlement`
    # rethrows it for /compact
    throw_outcome=(
        "its prepareCompaction throws; threshold and overflow compaction catch it and end without one "
        "(`Auto-compaction failed: …` / `Context overflow recovery failed: …`; the session goes on "
        "uncompacted), /compact fails with the error"
    ),
    cut_walk_types=frozenset({"message", "custom_message", "branch_summary"}),
    nan_outcome=(
        "its whole-context estimate is NaN, so the tail budget is unscaled, and findCutPoint's sum, NaN "
        "from there on, never reaches it: the cut falls on the first cut point, nothing is left to "
        "summarize and prepareCompaction returns nothing (threshold and overflow compaction are skipped: "
        "`Nothing to compact (session too small)`)"
    ),
    nan_failure="agent_refuses",
    # `runSummarizationCompletion` → `serializeConversation` throws out of `compact`, caught and
    # rethrown as a throw of `prepareCompaction` is
    serializer_outcome=(
        "its summarizer's serializeConversation throws, caught and rethrown as a failure of its estimate is"
    ),
    items="openclaw",
    whole_context=True,
)
