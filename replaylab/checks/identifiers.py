"""IDENTIFIER_LOST: identifiers of the summarized span that the compacted window no longer shows.

A loss fails the item (a regression) when the rest of the recording needs the identifier: the
agent writes it again after the compaction point, in its text or a call's arguments, which it
could then only take from a window that no longer shows it. An identifier the recording never
names again (a long listing's ids, read once and dropped) is reported as a warning: the loss is
real, but nothing the recorded session went on to do depended on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ahocorasick_rs import AhoCorasick, MatchKind

from replaylab.checks.after_runs import AfterRuns
from replaylab.defects import Code, Defect
from replaylab.transcript import build_window
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.memo import ItemMemo
from replaylab.transcript.model import identifier_text

if TYPE_CHECKING:
    from replaylab.compaction.params import CompactResult


def identifier_defects(
    outcome: CompactResult,
    history: list[Any],
    window: list[WindowMessage],
    memo: ItemMemo | None = None,
    later: Callable[[], Sequence[Any]] | None = None,
) -> list[Defect]:
    """IDENTIFIER_LOST: an identifier of the summarized span that is visible nowhere in the window.
    The span is what the window before the compaction showed and the window after does not: text an
    earlier (recorded) compaction had already summarized away was not visible before either, so
    this compaction did not lose it."""
    from replaylab.compaction.identifiers import item_scans

    text_of = memo.identifier_text if memo is not None else identifier_text
    kept = {item.source_id for item in window}  # a restated entry is the entry it restates
    visible = "\n".join(text_of(item.message) for item in window)
    # the span's identifiers as the joined span text gives them, from each message's own scan:
    # with an item's memo the summary of the same span already scanned those texts (with this
    # module's functions, pure in the text: whatever compactor ran, a scan is what a fresh one gives)
    dropped = [item for item in build_window(history, memo) if item.source_id not in kept]
    span = item_scans(memo).identifiers_in(text_of(item.message) for item in dropped)
    lost = invisible_identifiers(span, visible)
    if not lost:
        return []
    needed = lost if later is None else needed_later(lost, later(), text_of)
    named = set(needed)
    unneeded = [value for value in lost if value not in named]
    shown = needed or unneeded
    message = (
        f"{len(shown)} identifier(s) of the summarized span are visible nowhere in "
        f"the compacted window: {', '.join(shown[:5])}{' …' if len(shown) > 5 else ''}"
    )
    if needed and unneeded:
        message += f" (and {len(unneeded)} the rest of the recording never names again)"
    elif not needed:
        message += "; the rest of the recording never names them again"
    # where each shown identifier was last seen: the summarized entry that held it
    sources = {
        value: next((item.source_id for item in reversed(dropped) if value in text_of(item.message)), None)
        for value in shown[:20]
    }
    detail: dict[str, Any] = (
        {"needed_later": len(needed), "never_named_again": len(unneeded)} if later is not None else {}
    )
    detail["source_entries"] = sources
    defect = Defect.of(
        Code.IDENTIFIER_LOST,
        message,
        expected="visible in summary or kept entries",
        actual=shown[:20],
        detail=detail,
        entry_id=sources.get(shown[0]),
    )
    return [defect if needed else defect.model_copy(update={"severity": "warning"})]


def needed_later(lost: Sequence[str], later: Sequence[Any], text_of: Any = identifier_text) -> list[str]:
    """The identifiers of `lost` the agent writes again in `later` (the recording after the
    compaction point): in an answer of its own or a call's arguments, as written or upper-cased."""
    from replaylab.transcript.model import AssistantMessage, MessageEntry

    written = "\n".join(
        text_of(entry.message)
        for entry in later
        if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
    )
    if not written:
        return []
    absent = set(invisible_identifiers(lost, written))
    return [value for value in lost if value not in absent]


def invisible_identifiers(identifiers: Sequence[str], visible: str) -> list[str]:
    """The identifiers `visible` shows nowhere, as written or upper-cased (`i not in visible` and
    `i.upper() not in visible.upper()`), in order. A path of two parts or more is shown too where
    `visible` writes it without its leading `/`: OpenClaw 2026.4.12's pattern takes `/src/a/b.go`
    out of the relative `./src/a/b.go`, a slash the agent never wrote."""
    lost = absent_from(identifiers, visible)
    if not lost:  # upper-cased only when needed: most identifiers are visible as written
        return []
    absent_upper = set(absent_from([i.upper() for i in lost], visible.upper()))
    lost = [i for i in lost if i.upper() in absent_upper]
    paths = [i for i in lost if i.startswith("/") and i.count("/") > 1]
    if not paths:
        return lost
    tails = [i[1:] for i in paths]
    shown = {"/" + tail for tail in set(tails) - set(absent_from(tails, visible))}
    return [i for i in lost if i not in shown]


#: what each way costs, relative: building an automaton, per character of its values; reading
#: a text with it, per character; one search of a text for one value, per character of the text
BUILD_COST, SCAN_COST, SEARCH_COST = 60.0, 10.0, 0.2
#: passes of the automaton at most (`absent_from`)
MAX_PASSES = 8


def absent_from(values: Sequence[str], text: str) -> list[str]:
    """The values that occur nowhere in `text` (`value not in text`), in order.

    Why not that test per value: the span of a long session can hold a great many identifiers,
    each a search of the whole window text. Instead one Aho-Corasick automaton of the values reads
    the text once per pass: a leftmost match hides the values that overlap it, so each pass drops
    the values it found and searches for the rest again, until a pass finds none — then none of
    the rest occurs (any occurrence of one would be a match). The passes together may cost at most
    what searching for the values one by one would (as `BUILD_COST`, `SCAN_COST` and `SEARCH_COST`
    weigh them): values that hide one another a few at a time (nested addresses, runs of one
    character) would take a pass and an automaton for each few, and a short text is searched
    faster than an automaton is built; once the next pass would overrun that, the rest are
    searched one by one."""
    remaining = list(dict.fromkeys(value for value in values if value))  # "" is in every text
    budget = SEARCH_COST * len(text) * len(remaining)
    for _ in range(MAX_PASSES):
        cost = BUILD_COST * sum(map(len, remaining)) + SCAN_COST * len(text)
        if not remaining or cost > budget:
            break
        budget -= cost
        automaton = AhoCorasick(remaining, matchkind=MatchKind.LeftmostFirst)
        found = {index for index, _, _ in automaton.find_matches_as_indexes(text)}
        if not found:
            absent = set(remaining)
            return [value for value in values if value in absent]
        remaining = [value for index, value in enumerate(remaining) if index not in found]
    # the rest, one search each
    absent = {value for value in remaining if value not in text}
    return [value for value in values if value in absent]


def lost_identifiers(item: AfterRuns) -> list[Defect]:
    def later() -> list[Any]:  # the recording after the compaction point, read only when something was lost
        before = {entry.id for entry in item.history}
        return [entry for entry in item.transcript.leaf_path(item.memo) if entry.id not in before]

    return identifier_defects(item.first, item.history, item.first_window, item.memo, later)
