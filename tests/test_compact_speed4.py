"""The compaction step's scans, shared within a pipeline item (issue 8, fourth round).

What changed, and what each change is compared with (the implementations it replaced are kept
below, verbatim, in `Prev`):
* `identifiers.item_scans`: one `TextScans` per pipeline item (inside `memo.messages_as_values()`)
  instead of one per compaction, and `qa.views.identifier_defects` reads the summarized span's
  identifiers from it (`TextScans.identifiers_in`, each message's own scan — the summary of the
  same span already made them) instead of scanning the joined span text again; the window's text
  is upper-cased only when some identifier is not visible as written → `Prev.identifier_defects`,
  `Prev.scans` (a fresh `TextScans` per compaction);
* `summarize.is_empty_skeleton`: stops at the first meaningful body line instead of parsing the
  whole summary → `Prev.is_empty_skeleton`;
* `identifiers.extract_value_tokens`: an e-mail match is trail-stripped by `rstrip` (what
  `sanitize_identifier` does to it), and tokens are length-filtered only when one is too long →
  `Prev.extract_value_tokens`;
* `identifiers._opaque_matches`: a text without a run of ≥ 6 hex digits is matched without the
  hex and long-number alternatives (they cannot match in it; trying them at every a-f of every
  word was most of the scan) → `Prev.opaque_matches` (the patterns before, spelled out).

Checked here, with no timing asserted: each new function equals the one it replaced on generated
inputs (hex identifiers differing only in case across texts, Windows paths, host:port, e-mails
with trailing punctuation, over-long tokens, skeleton summaries with every kind of empty body);
whole pipeline items (bench sessions, every bundled suite) give the same `ItemResult` JSON with
`Prev` swapped back; and, with ../shared/data, real sessions' compactions give the same
IDENTIFIER_LOST findings, skeleton verdicts and value tokens.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replaylab.compaction import CompactParams, compact, harness, identifiers, summarize
from replaylab.compaction.identifiers import TextScans, extract_identifiers, item_scans, sanitize_identifier
from replaylab.constants import NO_PRIOR_HISTORY, NONE_CAPTURED, REQUIRED_SUMMARY_SECTIONS
from replaylab.defects import Code, Defect
from replaylab.qa import views
from replaylab.transcript import build_window, load_transcript, memo
from replaylab.transcript.context import WindowMessage
from replaylab.transcript.model import MESSAGE_ADAPTER, MessageEntry, message_text
from replaylab.values import identifier_tokens
from loopback import imported_real_sessions
from test_compact_early_exit import BENCH
from test_compact_speed3 import _scrub_dates

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the replaced implementations


class Prev:
    """The implementations before this change (namespaced to keep them apart)."""

    scans = TextScans  # harness: one TextScans per compaction

    @staticmethod
    def identifier_defects(outcome: Any, history: list, window: list[WindowMessage] | None = None) -> list[Defect]:
        window = window if window is not None else views.window_of(outcome)
        kept = {item.entry_id for item in window}
        visible = "\n".join(message_text(item.message) for item in window)
        visible_upper = visible.upper()
        span_text = "\n".join(message_text(item.message) for item in build_window(history) if item.entry_id not in kept)
        lost = [i for i in extract_identifiers(span_text) if i not in visible and i.upper() not in visible_upper]
        if not lost:
            return []
        return [Defect.of(Code.IDENTIFIER_LOST, f"{len(lost)} identifier(s) of the summarized span are visible nowhere "
                          f"in the compacted window: {', '.join(lost[:5])}{' …' if len(lost) > 5 else ''}",
                          expected="visible in summary or kept entries", actual=lost[:20])]

    @staticmethod
    def is_empty_skeleton(summary: str) -> bool:
        if not summarize.has_required_sections(summary):
            return not summary.strip()
        sections = summarize.parse_sections(summary)
        body = [line for name, lines in sections.items() if name for line in lines]
        body += sections.get("", [])
        return all(line.strip().lower() in summarize._EMPTY_BODIES for line in body)

    @staticmethod
    def extract_value_tokens(text: str) -> list[str]:
        seen: dict[str, None] = {}
        if "@" in text:
            for start, end in identifiers._chunk_stretches(text, identifiers._AT):
                seen.update(dict.fromkeys(sanitize_identifier(m) for m in identifiers._EMAIL.findall(text, start, end)))
        seen.update(dict.fromkeys(t for t in identifier_tokens(text) if len(t) <= identifiers.MAX_VALUE_TOKEN_CHARS))
        return list(seen)

    #: the (with host:port, without) patterns before, for texts with ':\\' (True) and without
    PATTERNS = {
        True: ((r"(?=[A-Za-z0-9._/-])(?:[A-Fa-f0-9]{8,}|https?://(?u:\S)+|/[\w.-]{2,}(?:/[\w.-]+)+|[A-Za-z]:\\[\w\\.-]+"
                r"|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5}|\b\d{6,}\b)"),
               (r"(?=[0-9A-Fa-fh/]|[A-Za-z]:\\)(?:[A-Fa-f0-9]{8,}|https?://(?u:\S)+|/[\w.-]{2,}(?:/[\w.-]+)+"
                r"|[A-Za-z]:\\[\w\\.-]+|\b\d{6,}\b)")),
        False: ((r"(?=[A-Za-z0-9._/-])(?:[A-Fa-f0-9]{8,}|https?://(?u:\S)+|/[\w.-]{2,}(?:/[\w.-]+)+"
                 r"|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:\d{1,5}|\b\d{6,}\b)"),
                r"(?=[0-9A-Fa-fh/])(?:[A-Fa-f0-9]{8,}|https?://(?u:\S)+|/[\w.-]{2,}(?:/[\w.-]+)+|\b\d{6,}\b)"),
    }
    COMPILED = {key: tuple(re.compile(p, re.ASCII) for p in pair) for key, pair in PATTERNS.items()}

    @staticmethod
    def opaque_matches(text: str) -> Iterator[str]:
        with_port, without_port = Prev.COMPILED[identifiers._WINDOWS_PATH_MARK in text]
        pos = 0
        for start, end in identifiers._chunk_stretches(text, identifiers._COLON_DIGIT):
            yield from identifiers._sanitized(without_port.finditer(text, pos, start))
            yield from identifiers._sanitized(with_port.finditer(text, start, end))
            pos = end
        yield from identifiers._sanitized(without_port.finditer(text, pos))

    @staticmethod
    def extract_identifiers(text: str) -> list[str]:
        """`extract_identifiers` (unchanged) on `Prev.opaque_matches`."""
        with old_matches():
            return extract_identifiers(text)


@contextlib.contextmanager
def old_matches() -> Iterator[None]:
    saved = identifiers._opaque_matches
    identifiers._opaque_matches = Prev.opaque_matches
    try:
        yield
    finally:
        identifiers._opaque_matches = saved


@contextlib.contextmanager
def previous() -> Iterator[None]:
    """`Prev` swapped in where the pipeline and the harness call them."""
    saved = (harness.item_scans, views.identifier_defects, summarize.is_empty_skeleton,
             identifiers.extract_value_tokens, identifiers._opaque_matches)
    harness.item_scans = Prev.scans
    views.identifier_defects = Prev.identifier_defects
    summarize.is_empty_skeleton = Prev.is_empty_skeleton
    identifiers.extract_value_tokens = Prev.extract_value_tokens
    identifiers._opaque_matches = Prev.opaque_matches
    try:
        yield
    finally:
        (harness.item_scans, views.identifier_defects, summarize.is_empty_skeleton,
         identifiers.extract_value_tokens, identifiers._opaque_matches) = saved


# ---------------------------------------------------------------- generated texts

#: pieces that make identifiers of every kind OpenClaw's regex knows (and near misses), e-mails,
#: replaylab's value tokens, and the separators (Unicode whitespace too) between them
PIECES = ["deadbeefcafe1234", "DEADBEEFCAFE1234", "DeadBeefCafe1234", "abcdef12", "abcdef1", "1234567", "12345",
          "https://x.example.com/a/b?c=1", "http://h", "/srv/app/main.py", "/a/b.", "C:\\Users\\x.txt", "C:\\.",
          "10.0.0.1:8080", "host.example:99999", "a.b:1", "ORD-48213", "#W2378156", "mia_garcia_4516",
          "a@b.example", "x.y+z@mail-host.example.org.", "bob@example.com)", "@", "w@x", "x" * 130 + "9",
          "(", ")", ".", ",", ";", "'", '"', "`", "<", ">", "[", "]", ":", "::", " ", "  ", "\n", "\t", "\u00a0",
          "\u2003", "the", "face", "café", "日本"]
texts = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(texts, max_size=6), st.booleans())
def test_identifiers_in_equals_the_joined_scan(parts, warm):
    """`TextScans.identifiers_in(texts)` = `extract_identifiers("\\n".join(texts))`: the same
    identifiers, the same first spellings (hex ones differing only in case across texts), the same
    order — from a fresh `TextScans` and from one that has seen the texts (and others) before."""
    scans = TextScans()
    if warm:
        for text in parts[::2] + ["deadbeefcafe1234 " + (parts[0] if parts else "")]:
            scans.identifiers(text)
    assert scans.identifiers_in(parts) == extract_identifiers("\n".join(parts))
    assert scans.identifiers_in(iter(parts)) == extract_identifiers("\n".join(parts))


def test_full_patterns_are_the_ones_before():
    """With a hex run the patterns are exactly the ones before (spelled out in `Prev`)."""
    for windows in (True, False):
        assert tuple(p.pattern for p in identifiers._OPAQUE_PATTERNS[windows]) == Prev.PATTERNS[windows]


@settings(max_examples=600, deadline=None)
@given(texts, st.sampled_from(["", "deadbeef", "123456", "12345", "abcdef", "C:\\x.y", "a.b:80"]))
def test_opaque_matches_same_as_before(text, extra):
    """OpenClaw's matches (and the identifiers made of them, capped and not) as before, for texts
    with and without hex runs, Windows paths and host:port stretches."""
    for case in (text, text + extra, extra + " " + text):
        assert list(identifiers._opaque_matches(case)) == list(Prev.opaque_matches(case))
        assert extract_identifiers(case) == Prev.extract_identifiers(case)
        now = identifiers.extract_opaque_identifiers(case)
        with old_matches():
            assert now == identifiers.extract_opaque_identifiers(case)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789abcdefABCDEFgxz /:é日\udc80\u00a0")), max_size=40))
def test_hex_run_check(text):
    """`_has_hex_run` = a run of ≥ 6 ASCII hex digits, whatever else the text holds (non-ASCII
    characters, lone surrogates)."""
    assert identifiers._has_hex_run(text) == bool(re.search(r"[0-9A-Fa-f]{6}", text, re.ASCII))


def test_identifiers_in_keeps_the_first_spelling_across_texts():
    assert TextScans().identifiers_in(["id DeadBeefCafe1234", "again DEADBEEFCAFE1234 and /srv/app/x"]) == \
        ["DeadBeefCafe1234", "/srv/app/x"]


def test_item_scans_live_as_long_as_the_item():
    """One `TextScans` per `messages_as_values()` block, a new one per block; a fresh one outside."""
    assert item_scans() is not item_scans()
    with memo.messages_as_values():
        first = item_scans()
        first.identifiers("deadbeefcafe1234")
        with memo.messages_as_values():  # a nested block shares the outer one's memos
            assert item_scans() is first
        assert item_scans() is first
    with memo.messages_as_values():
        assert item_scans() is not first and item_scans()._identifiers == {}


@settings(max_examples=400, deadline=None)
@given(texts)
def test_value_tokens_same_as_before(text):
    assert identifiers.extract_value_tokens(text) == Prev.extract_value_tokens(text)


SKELETON_LINES = ["", "   ", "None.", "none", "- None", "- none.", "n/a", "-", NONE_CAPTURED, NO_PRIOR_HISTORY,
                  "  None.  ", "## Notes", "##Notes", " ## Exact identifiers", "# Title", "- ORD-1", "kept",
                  "\t", "NONE."] + list(REQUIRED_SUMMARY_SECTIONS)
summaries = st.lists(st.sampled_from(SKELETON_LINES), max_size=16).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n", "\n\n", "\u2028"]).map(lambda sep: sep.join(lines)))


@settings(max_examples=600, deadline=None)
@given(summaries)
def test_is_empty_skeleton_same_as_before(summary):
    assert summarize.is_empty_skeleton(summary) == Prev.is_empty_skeleton(summary)


def test_is_empty_skeleton_verdicts():
    """Both verdicts occur (the generated cases above are not all one answer)."""
    skeleton = "\n\n".join(f"{section}\n- None." for section in REQUIRED_SUMMARY_SECTIONS)
    assert summarize.is_empty_skeleton(skeleton) and summarize.is_empty_skeleton("  \n")
    assert not summarize.is_empty_skeleton(skeleton + "\n- ORD-1")
    assert not summarize.is_empty_skeleton("None.")  # no sections: not a skeleton, not blank
    assert summarize.is_empty_skeleton(summarize.build_structured_fallback_summary(None))


def _message(role: str, text: str) -> Any:
    if role == "user":
        return MESSAGE_ADAPTER.validate_python({"role": "user", "content": text})
    return MESSAGE_ADAPTER.validate_python({"role": "assistant", "content": [{"type": "text", "text": text}],
                                            "stopReason": "stop"})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts, min_size=1, max_size=8), st.data())
def test_identifier_defects_same_as_before(span_texts, data):
    """IDENTIFIER_LOST on generated windows: a history, a kept subset of it and a summary that
    carries some identifiers (as written, upper-cased or not at all) — inside and outside a
    pipeline item's memos, with and without scans made before."""
    entries = [MessageEntry.model_validate({"type": "message", "id": f"e{i}", "parentId": f"e{i - 1}" if i else None,
                                            "timestamp": "2026-01-01T00:00:00Z",
                                            "message": _message("user" if i % 2 else "assistant", text)})
               for i, text in enumerate(span_texts)]
    kept = data.draw(st.lists(st.sampled_from([e.id for e in entries]), unique=True))
    found = extract_identifiers("\n".join(span_texts))
    carried = [i if how == 0 else i.upper() for i in found if (how := data.draw(st.integers(0, 2))) < 2]
    summary = WindowMessage(None, _message("user", " ".join(carried) + data.draw(texts)))
    window = [summary] + [item for item in build_window(entries) if item.entry_id in kept]
    assert views.identifier_defects(None, entries, window) == Prev.identifier_defects(None, entries, window)
    with memo.messages_as_values():
        if data.draw(st.booleans()):
            for text in span_texts[::2]:
                item_scans().identifiers(text)
        assert views.identifier_defects(None, entries, window) == Prev.identifier_defects(None, entries, window)


# ---------------------------------------------------------------- whole pipeline items


def test_pipeline_items_same_as_before(tmp_path):
    """Whole pipeline items (the bench's suite and every bundled suite): the same `ItemResult`
    JSON as with `Prev` swapped back, and the IDENTIFIER_LOST check met texts the item's
    compaction had scanned (so the shared scans were read, not only filled)."""
    from bench.cases.pipeline import make_sessions
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.qa.suite import load_suite

    make_sessions(tmp_path, 30)
    suites = [load_suite(tmp_path / "suites" / "bench.yaml")] + \
        [load_suite(path) for path in sorted((REPO / "suites").glob("*.yaml"))]
    reused = checked = 0
    real_defects = views.identifier_defects

    def counting(outcome: Any, history: list, window: Any = None) -> list[Defect]:
        nonlocal reused, checked
        scans = item_scans()
        kept = {item.entry_id for item in window}
        span = [message_text(item.message) for item in build_window(history) if item.entry_id not in kept]
        reused += sum(text in scans._identifiers for text in span)
        checked += 1
        return real_defects(outcome, history, window)

    for suite in suites:
        for scenario in suite.scenarios:
            for recording in suite.recordings:
                views.identifier_defects = counting
                try:
                    now = json.loads(run_item(scenario, recording, RunOptions()).model_dump_json())
                finally:
                    views.identifier_defects = real_defects
                with previous():
                    before = json.loads(run_item(scenario, recording, RunOptions()).model_dump_json())
                for item in (now, before):
                    item.pop("duration_s", None)
                    item.pop("durationS", None)
                assert _scrub_dates(now) == _scrub_dates(before), (recording, scenario.name)
    assert checked > 10 and reused > checked


# ---------------------------------------------------------------- real sessions


@pytest.mark.realdata
def test_real_sessions(shared_data, tmp_path):
    """τ-bench, τ²-bench, Claude Code and pi sessions (every third): each compaction's
    IDENTIFIER_LOST findings, inside an item's memos after the compaction, equal `Prev`'s; its
    summary's skeleton verdict too; and every message's value tokens."""
    paths = imported_real_sessions(shared_data, tmp_path / "sessions")
    assert len(paths) > 100
    variants = [dict(BENCH), dict(BENCH, compaction_mode="manual", keep_recent_tokens=4000),
                dict(BENCH, context_tokens=6000, reserve_tokens_floor=1500, keep_recent_tokens=800)]
    compared = 0
    for index, path in enumerate(paths[::3]):
        transcript = load_transcript(path)
        for entry in transcript.entries:
            if isinstance(entry, MessageEntry):
                text = message_text(entry.message)
                assert identifiers.extract_value_tokens(text) == Prev.extract_value_tokens(text)
                assert extract_identifiers(text) == Prev.extract_identifiers(text)
        entries = [e.id for e in transcript.leaf_path() if isinstance(e, MessageEntry)]
        for number, variant in enumerate(variants):
            leaf = entries[len(entries) // 2] if number % 2 and entries else None
            params = CompactParams(session_file=str(path), leaf_id=leaf, force_compact=True,
                                   working_copy=str(tmp_path / f"{index}-{number}" / path.name), **variant)
            with memo.messages_as_values():
                outcome = compact(params)
                if not outcome.success:
                    continue
                history = load_transcript(path).path_to(leaf)
                window = views.window_of(outcome)
                now = views.identifier_defects(outcome, history, window)
                assert now == Prev.identifier_defects(outcome, history, window), (path, variant)
            assert summarize.is_empty_skeleton(outcome.summary_text) == Prev.is_empty_skeleton(outcome.summary_text)
            compared += 1
    assert compared > 50
