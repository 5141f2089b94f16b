"""`Summarizer`: what the summary step asks of a summarizer, so that a new one needs no edit in it."""

from __future__ import annotations

from typing import Protocol

from replaylab.compaction.summary.request import SummaryRequest
from replaylab.errors import ReplaylabError


class SummarizationError(ReplaylabError, RuntimeError):
    """A summarizer call failed (provider error, empty answer, injected failure)."""


class Summarizer(Protocol):
    """A summarizer. Implementations subclass it for the defaults of the last two methods (an
    offline summarizer fails an injected call with a plain error and cannot tell its floor)."""

    #: how the compaction entry and the result name the summary's source
    name: str
    #: its answer depends on the request alone and costs no call: it can be written ahead, and a
    #: quality retry (the same request with feedback) cannot change it
    deterministic: bool
    #: it asks a model: a failed call is retried after a back-off, and it is not asked to
    #: summarize no messages at all
    calls_model: bool

    def summarize(self, request: SummaryRequest) -> str:
        """The summary of `request`; raises `SummarizationError` when the call fails."""
        ...

    def summarize_failing(self, request: SummaryRequest, note: str) -> str:
        """A call the failure hook (`summarizerFailures`) makes fail: raises `SummarizationError`
        the way this summarizer's own failures do."""
        raise SummarizationError(f"Summarization failed: {note}")

    def summary_floor(self, request: SummaryRequest, *, may_fall_back: bool) -> int:
        """The fewest characters the body of the summary of `request` can hold, told without
        summarizing; 0 when the summarizer cannot tell (a model may answer anything).
        `may_fall_back`: the guard may end with the fallback summary or the previous one instead
        of this summarizer's answer (a call may fail, or a previous summary make the guard
        reject an empty answer)."""
        return 0
