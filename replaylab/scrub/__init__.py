"""Secret scrubbing for everything replaylab writes or prints: cassettes, transcripts, reports,
JUnit, the terminal.

Transcripts and tool output carry real secrets. One scrubber serves every sink, so what is
scrubbed in one place is scrubbed in all (promptfoo#9698: reports leak when redaction is not the
same code). Its rules are in `replaylab.scrub.rules` (structural rules, token families,
detect-secrets' detectors); the secret names in `replaylab.scrub.names`; docs/scrubbing.md lists
them for users.

Rules are configurable: `Scrubber(extra_patterns=[...], extra_headers=[...])`, or the
`REPLAYLAB_SCRUB_PATTERNS` environment variable (regexes separated by newlines).

Speed: a run scrubs megabytes of strings, nearly all clean. Each rule has literal hints
(`replaylab.scrub.hints`), and one Aho-Corasick pass over a text finds which rules can match it;
only those run. `json_is_clean` answers for a whole data blob at once: one pass finds the
strings holding a hint or a secret name's needle, and only those are scrubbed to see whether
they change. A rule without a hint (a user's pattern without a literal) is run on every text and
turns the data fast path off.
"""

from __future__ import annotations

import json
import os
import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import orjson
from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, Implementation, MatchKind

from replaylab import caches
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.json_dump import compact_json
from replaylab.scrub.json_text import KEY_END, LETTER_ESCAPE, string_around
from replaylab.scrub.literals import MIN_CHARS, run_secrets, spellings, watch_environment
from replaylab.scrub.names import NAME_NEEDLES, SECRET_HEADERS, is_secret_name, is_secret_value
from replaylab.scrub.rules import QUERY_SECRET_NAMES, TOKEN_TAIL, WRAPPED_LINE, Rule, default_rules, user_rule

REDACTED = "[REDACTED]"
#: environment variable with extra patterns (one regular expression per line)
ENV_PATTERNS = "REPLAYLAB_SCRUB_PATTERNS"

#: the non-ASCII letters Python's IGNORECASE matches to ASCII ones (`re` docs: İ ı ſ and the Kelvin
#: sign; `str.lower` also turns İ and K into ASCII): a text holding one can match a rule without
#: holding its hint, so such texts are always scanned with every rule
CASE_SPECIALS = ("\u0130", "\u0131", "\u017f", "\u212a")
_CASE_SPECIALS_UTF8 = tuple(c.encode() for c in CASE_SPECIALS)
#: a rule's key in the per-text tables: its identity, as `id()` gives it but without the audit
#: event `id()` raises (the replay's socket guard runs a Python hook on every one)
_key = object.__hash__

#: what a clean-data check found of each string it scrubbed: (its JSON, whether it is a key) →
#: whether the walk keeps it as it is
_Asked = dict[tuple[bytes, bool], bool]
#: JSON Schema's types: a mapping with one of them as its `type` describes a value, it holds none
_SCHEMA_TYPES = frozenset({"string", "object", "array", "integer", "number", "boolean", "null"})
#: texts cut for display are scrubbed this far past the cut, so a secret the cut splits is still
#: recognised (every default rule recognises a secret within its first 256 characters)
SCRUB_MARGIN = 256
#: texts this short have their scrubbed form kept per scrubber (JSON keys and the words a report
#: repeats in every window item and trace step: `role`, `tokens`, `assistant`, ...), at most
#: `MAX_SHORT_TEXTS` of them
SHORT_TEXT = 64
MAX_SHORT_TEXTS = 65_536
#: longer texts have their scrubbed form kept too, the most recent first, up to this many
#: characters in all: an item's texts come back to the scrubber at each of its sinks (the
#: views, the report's clean check, the HTML excerpts), and a repeated scan of one costs its
#: length in regex work where a lookup costs one hash
LONG_TEXTS_CHARS = 4_000_000
#: how deep `data` walks containers; deeper ones are scrubbed as their JSON text (a walk that
#: recursed as deep as a transcript may nest would exceed Python's recursion limit)
MAX_DATA_DEPTH = 200
#: the needle sets are small and searched over megabytes of text: a DFA (more memory to build,
#: a few kilobytes here) finds the same matches in about half the time of the default NFA
_AUTOMATON = Implementation.DFA


class Scrubber:
    """Redacts secrets in texts (`text`) and JSON-like data (`data`)."""

    def __init__(
        self,
        extra_patterns: Iterable[str] = (),
        extra_headers: Iterable[str] = (),
        literals: Iterable[str] | None = None,
    ) -> None:
        """`literals`: secrets redacted wherever they appear, in every spelling (`literals`); by
        default the run's own (`literals.run_secrets`: the environment's secret-named variables
        and those a loaded suite names)."""
        self.extra_patterns = list(extra_patterns)
        values = run_secrets() if literals is None else [v for v in literals if len(v) >= MIN_CHARS]
        forms = sorted({form for value in values for form in spellings(value)})
        #: the spellings of the literal secrets (leftmost-longest: a value and its escaped form
        #: overlapping give the longer)
        self._literals = (
            AhoCorasick(forms, matchkind=MatchKind.LeftmostLongest, implementation=_AUTOMATON) if forms else None
        )
        env = [p for p in os.environ.get(ENV_PATTERNS, "").splitlines() if p.strip()]
        _check_patterns(self.extra_patterns, "extra_patterns")
        _check_patterns(env, ENV_PATTERNS)
        self.rules: tuple[Rule, ...] = (
            *default_rules(),
            *(user_rule(p, "extra_patterns") for p in self.extra_patterns),
            *(user_rule(p, ENV_PATTERNS) for p in env),
        )
        #: header names whose value is always secret (lower case), besides the secret names
        self.headers = SECRET_HEADERS | {h.lower() for h in extra_headers}
        #: the scrubbed form of each short text seen (`text`)
        self._short: dict[str, str] = {}
        #: the scrubbed form of each longer text seen lately, oldest first (`text`), and the
        #: characters they hold (ordered: a plain dict emptied from its front finds its first
        #: key past every slot deleted since its last resize, a scan per text forgotten)
        self._long: OrderedDict[str, str] = OrderedDict()
        self._long_chars = 0
        #: `is_secret_key` of each name seen
        self._secret_keys: dict[str, bool] = {}
        hints = sorted({hint for rule in self.rules for hint in rule.hints or ()})
        index = {hint: i for i, hint in enumerate(hints)}
        self._hint_needles = AhoCorasick(hints, implementation=_AUTOMATON)
        #: for each hint, the rules it can start
        self._rules_of_hint: list[list[Rule]] = [[] for _ in hints]
        for rule in self.rules:
            for hint in rule.hints or ():
                self._rules_of_hint[index[hint]].append(rule)
        self._hinted = tuple(rule for rule in self.rules if rule.hints)
        #: rules without a hint: run on every text
        self._unhinted = tuple(rule for rule in self.rules if not rule.hints)
        # what `json_is_clean` searches a whole blob for: every hint, every secret name's needle,
        # the header names and the case specials
        # (a literal's spellings too, JSON-escaped as the blob holds them: orjson writes non-ASCII
        # as UTF-8, not as `\u` escapes; lower-cased as the blob is, ASCII letters only)
        literal_needles = {
            json.dumps(form, ensure_ascii=ascii_only)[1:-1].encode().lower()
            for form in forms
            for ascii_only in (False, True)
        }
        self._blob_needles = BytesAhoCorasick(
            sorted(
                {n.encode() for n in (*hints, *NAME_NEEDLES, *self.headers)}
                | set(_CASE_SPECIALS_UTF8)
                | literal_needles
            ),
            implementation=_AUTOMATON,
        )

    # -- names

    def is_secret_key(self, name: str) -> bool:
        """A JSON key or header name whose value is secret (kept per name: a report repeats its keys)."""
        known = self._secret_keys.get(name)
        if known is None:
            known = name.lower() in self.headers or is_secret_name(name)
            if len(name) <= SHORT_TEXT and len(self._secret_keys) < MAX_SHORT_TEXTS:
                self._secret_keys[name] = known
        return known

    def _name_ok(self, rule: Rule, name: str) -> bool:
        if rule.name_check == "query":
            return name.lower() in QUERY_SECRET_NAMES or self.is_secret_key(name)
        return self.is_secret_key(name)

    # -- texts

    def text(self, value: str) -> str:
        if not value:
            return value
        if len(value) <= SHORT_TEXT:  # the same answer for the same text: the rules are fixed at init
            known = self._short.get(value)
            if known is None:
                known = self._text(value)
                if len(self._short) < MAX_SHORT_TEXTS:
                    self._short[value] = known
            return known
        known = self._long.get(value)
        if known is None:
            known = self._text(value)
            self._keep_long(value, known)
        return known

    def _keep_long(self, value: str, scrubbed: str) -> None:
        """Keeps `value`'s answer, forgetting the oldest answers past `LONG_TEXTS_CHARS`."""
        size = len(value)
        if size > LONG_TEXTS_CHARS // 4:
            return  # one text would push out most of the others
        self._long[value] = scrubbed
        self._long_chars += size
        while self._long_chars > LONG_TEXTS_CHARS:
            oldest, _ = self._long.popitem(last=False)
            self._long_chars -= len(oldest)

    def _text(self, value: str) -> str:
        spans = self.spans(value)
        if not spans:
            return value
        parts, last = [], 0
        for start, end in spans:
            parts.append(value[last:start])
            parts.append(REDACTED)
            last = end
        parts.append(value[last:])
        return "".join(parts)

    def spans(self, value: str) -> list[tuple[int, int]]:
        """The (start, end) of each secret in `value`, sorted and merged."""
        found: list[tuple[int, int]] = []
        if self._literals is not None:
            found.extend((start, end) for _, start, end in self._literals.find_matches_as_indexes(value))
        rules, lowered, starts = self._candidates(value)
        for rule in rules:
            found.extend(self._rule_spans(rule, value, lowered, starts.get(_key(rule)) if starts else None))
        if not found:
            return []
        found.sort()
        merged = [found[0]]
        for start, end in found[1:]:
            if start <= merged[-1][1]:
                if end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], end)
            else:
                merged.append((start, end))
        return merged

    def mask(self, value: str) -> str:
        """`value` with each secret replaced by a space: what is left holds none of them, and
        nothing that was not in `value` (the identifier scans read it: no secret is ever an
        identifier, and `[REDACTED]` is none either)."""
        spans = self.spans(value) if value else []
        if not spans:
            return value
        parts, last = [], 0
        for start, end in spans:
            parts.append(value[last:start])
            parts.append(" ")
            last = end
        parts.append(value[last:])
        return "".join(parts)

    def changes(self, value: str) -> bool:
        """Whether `text` would redact anything in `value`."""
        return bool(value) and bool(self.spans(value))

    def _candidates(self, value: str) -> tuple[Iterable[Rule], str | None, dict[int, list[int]] | None]:
        """The rules that can match `value`; `value` lower-cased when folded rules may read it
        (every character in place, no case special), else None; and then, for each anchored rule
        (by identity), where its hints start."""
        if not value.isascii() and any(special in value for special in CASE_SPECIALS):
            return self.rules, None, None  # not lowered: str.lower() folds İ and the Kelvin sign away
        lowered = value.lower()
        hits = self._hint_needles.find_matches_as_indexes(lowered, overlapping=True)
        if not hits:
            return self._unhinted, None, None
        in_place = len(lowered) == len(value)
        # each hint's starts first, then its rules once: a common word as a hint (`token`) is
        # found thousands of times in a long text, and each of its rules wants them all
        by_hint: dict[int, list[int]] = {}
        for hint, start, _ in hits:
            known = by_hint.get(hint)
            if known is None:
                by_hint[hint] = [start]
            else:
                known.append(start)
        chosen: dict[int, Rule] = {}
        starts: dict[int, list[int]] = {}
        for hint, hint_starts in by_hint.items():
            for rule in self._rules_of_hint[hint]:
                chosen.setdefault(_key(rule), rule)
                if rule.anchored and in_place:
                    starts.setdefault(_key(rule), []).extend(hint_starts)
        return (*chosen.values(), *self._unhinted), (lowered if in_place else None), starts

    def _rule_spans(
        self, rule: Rule, value: str, lowered: str | None, starts: list[int] | None
    ) -> list[tuple[int, int]]:
        if rule.folded is not None and lowered is not None:
            regex, subject = rule.folded, lowered
        else:
            regex, subject = rule.regex, value
        last = len(value)
        if rule.needs_after is not None:  # no match starts after the last place it can end
            last = value.rfind(rule.needs_after)
            if last < 0:
                return []
        if rule.needs is not None and rule.needs.search(value) is None:
            return []
        lines = _LineNeeds(rule.line_needs, value) if rule.line_needs is not None else None
        spans: list[tuple[int, int]] = []
        if starts is not None:  # an anchored rule: every match starts where one of its hints does
            end = 0
            # the end of the furthest match whose name was not a secret one: a start before it lies
            # in a run the regex has read to its end, and reading it again from every such start
            # (`-key:` repeated) is quadratic, so there the name, bounded, is asked first
            read_to = 0
            for start in sorted(set(starts)):
                if start < end or start > last:
                    continue
                if lines is not None and not lines.on_line_before(start):
                    continue  # its word is not earlier on the line: no match from here counts
                named = rule.name_head is None or start >= read_to or self._head_named(rule, subject, value, start)
                if not named:
                    continue
                # the match first, the name after: most starts are a word in prose with no value
                # after it, which the regex (in C) rejects at once; the cover holds whatever the
                # name, as it speaks of the value's run only
                match = regex.match(subject, start)
                if match is None:
                    covered = rule.cover.match(subject, start) if rule.cover is not None else None
                    if covered is not None:  # every start its scan covered fails alike (rules.py)
                        end = max(end, covered.end() - rule.cover_backoff)
                    continue
                if rule.name_head is not None and not self._head_named(rule, subject, value, start):
                    read_to = max(read_to, match.end())
                    continue  # not a secret name: its value is never read
                span = self._secret_span(rule, match, value, lines)
                if span is not None:
                    spans.append(span)
                    end = max(span[1], match.end())
            return spans
        pos = 0
        while pos <= last:
            match = regex.search(subject, pos)
            if match is None:
                break
            span = self._secret_span(rule, match, value, lines)
            if span is None:
                pos = match.start() + 1  # a rejected name: what it swallowed may hold a real one
                continue
            spans.append(span)
            pos = max(span[1], match.end(), match.start() + 1)
        return spans

    def _head_named(self, rule: Rule, subject: str, value: str, start: int) -> bool:
        """Whether the name a `name_left` rule's match from `start` would have is a secret one."""
        head = rule.name_head.match(subject, start)  # type: ignore[union-attr]
        if head is None:
            return False
        name_start = _name_start(value, head.start())
        return name_start is not None and self._name_ok(rule, value[name_start : head.end()])

    def _secret_span(
        self, rule: Rule, match: re.Match[str], value: str, lines: _LineNeeds | None = None
    ) -> tuple[int, int] | None:
        if lines is not None and not lines.on_line_before(match.start()):
            return None
        if rule.name is not None:
            start, end = match.span(rule.name)
            if rule.name_left:
                named_from = _name_start(value, start)
                if named_from is None:
                    return None
                start = named_from
            if not self._name_ok(rule, value[start:end]):
                return None
        if rule.keep_two_groups:
            groups = [g for g in match.groups() if g is not None]
            kept = len(groups[0]) + len(groups[1]) if len(groups) >= 2 else 0
            start = match.start() + kept if kept and match.group(0).startswith(groups[0] + groups[1]) else match.start()
            end = match.end()
        else:
            start, end = match.span(rule.secret)
            if start < 0:  # an optional secret group that did not take part
                return None
            if rule.checks_value and not is_secret_value(value[start:end]):
                return None
        if end <= start:
            return None
        if rule.extend:
            end = (rule.tail or TOKEN_TAIL).match(value, end).end()  # type: ignore[union-attr]
        if rule.wraps:
            while (wrapped := WRAPPED_LINE.match(value, end)) is not None:
                end = wrapped.end()
        return start, end

    # -- data

    def data(self, value: Any) -> Any:
        """Scrub every string inside JSON-like data (dicts, lists), keys included; every string
        under a secret-named key or a secret header (`password`, `client_secret`, `Cookie`, ...),
        however deep, is redacted whatever it looks like."""
        return self._data(value, {})

    def _data(self, value: Any, asked: _Asked, depth: int = 0) -> Any:
        """`data`; `asked`: what the clean-data checks of this walk found of each string they
        scrubbed (a walk checks each container it enters, and an inner one holds the same strings)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (dict, list)) and depth >= MAX_DATA_DEPTH:
            return self._deep(value)
        if isinstance(value, (dict, list)) and self._clean(value, asked):
            return value  # nothing inside can match: the same data, uncopied
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if isinstance(key, str):
                    out[self.text(key)] = (
                        self._redact_all(item, depth + 1)
                        if self.is_secret_key(key)
                        else self._data(item, asked, depth + 1)
                    )
                else:
                    out[key] = self._data(item, asked, depth + 1)
            return out
        if isinstance(value, list):
            return [self._data(v, asked, depth + 1) for v in value]
        return value

    def _redact_all(self, value: Any, depth: int = 0) -> Any:
        """What sits under a secret name: every string value redacted, numbers and flags kept; a
        JSON Schema (a tool's `password` parameter: `{"type": "string", ...}`) is not a value and
        is scrubbed as any other data."""
        if isinstance(value, str):
            return REDACTED if is_secret_value(value) else self.text(value)
        if isinstance(value, (dict, list)) and depth >= MAX_DATA_DEPTH:
            return REDACTED  # under a secret name, too deep to walk: nothing of it is kept
        if isinstance(value, dict):
            if _is_schema(value):
                return self.data(value)
            return {self.text(k) if isinstance(k, str) else k: self._redact_all(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list):
            return [self._redact_all(v, depth + 1) for v in value]
        return value

    def _deep(self, value: dict[str, Any] | list[Any]) -> str:
        """A container nested deeper than `MAX_DATA_DEPTH`: its JSON text, scrubbed as text (a
        secret beside its name in JSON is one the text rules find)."""
        return self.text(compact_json(value))

    def _clean(self, value: dict[str, Any] | list[Any], asked: _Asked | None = None) -> bool:
        """True when the walk would change no string or key inside `value`, read off its JSON
        text (`json_is_clean`: a report is megabytes of strings, nearly all clean: walking them
        one by one would be most of the time to write it). Hints and needles cannot be split by
        JSON escaping (`replaylab.scrub.hints`); one that only appears across two strings makes
        this say "not clean", which costs a walk, never a leak. Data JSON cannot encode
        (non-string keys, other types) is walked."""
        if self._unhinted:
            return False
        try:
            blob = orjson.dumps(value)
        except TypeError:
            return False
        return self.json_is_clean(blob, asked)

    def json_is_clean(self, blob: bytes, asked: _Asked | None = None) -> bool:
        """True when the UTF-8 JSON text `blob` holds no string or key this scrubber could change
        (the test `_clean` makes): data whose JSON is clean can be written as that JSON, unwalked.
        Always False while a rule has no hint.

        Two steps. One pass finds every needle (`_needle_hits`); a string holding none cannot
        change. Nearly every report holds some (`tokens`, `path`, `https://`, `desk-` in an id
        hold a hint or a needle), so each string (or key) holding one is then asked what the walk
        would ask of it: whether `text` changes it, and for a key, whether it is a secret name (the
        walk redacts what it holds). Those strings are usually a small part of the blob, and the
        answers are the walk's own, so the blob is clean only when the walk of its strings
        would change none of them. A `\\u` escape of a letter (orjson and pydantic write none)
        hides a needle from the first step: such a blob is not clean. `asked`: the answers for
        strings already scrubbed, kept across the checks of one walk (`_data`)."""
        if self._unhinted or LETTER_ESCAPE.search(blob) is not None:
            return False
        hits = self._needle_hits(blob)
        return not hits or self._hit_strings_unchanged(blob, hits, {} if asked is None else asked)

    def _needle_hits(self, blob: bytes) -> list[tuple[int, int, int]]:
        """(needle, start, end) of the hints, secret-name needles, header names, case specials and
        literal spellings in `blob` (leftmost, not overlapping: one per place is enough)."""
        # bytes.lower() folds ASCII only: the hints and needles are ASCII, and the UTF-8 of the
        # case specials (all bytes ≥ 0x80) is left as it is
        return self._blob_needles.find_matches_as_indexes(blob.lower())

    def _hit_strings_unchanged(self, blob: bytes, hits: list[tuple[int, int, int]], asked: _Asked) -> bool:
        """Whether every JSON string of `blob` holding one of `hits` is left as it is by the walk
        (`data`): `text` keeps it, and a key is not a secret name (whatever a secret-named key
        holds is redacted by `_redact_all`; not asked further: such keys are rare in clean data).
        A hit outside a string, or across a string's end, or text that does not read as JSON:
        not clean (a walk costs time, never a leak). A report repeats its texts (each window
        holds the session's messages again): each distinct string is asked once (`asked`: its
        JSON and whether it is a key → whether the walk keeps it)."""
        pos, index, count = 0, 0, len(hits)
        while index < count:
            start, end = string_around(blob, pos, hits[index][1])
            if start < 0:
                return False  # a needle outside every string, or text that does not read as JSON
            while index < count and hits[index][1] < end:
                if hits[index][2] > end:
                    return False  # a needle across the string's end
                index += 1
            pos = end
            question = (blob[start:end], KEY_END.match(blob, end) is not None)
            kept = asked.get(question)
            if kept is None:
                kept = asked[question] = self._string_kept(*question)
            if not kept:
                return False
        return True

    def _string_kept(self, literal: bytes, is_key: bool) -> bool:
        """Whether the walk keeps the JSON string `literal` as it is (a key: and what it holds)."""
        try:
            value = orjson.loads(literal)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(value, str):
            return False
        return not (is_key and self.is_secret_key(value)) and self.text(value) == value


class _LineNeeds:
    """Where a rule's `line_needs` word occurs in a text, and where its lines start (a raw or a
    JSON-escaped line break), so each match asks "is the word earlier on my line?" by bisection
    instead of searching the text back (which, once per match, is quadratic)."""

    def __init__(self, word: str, value: str):
        found = list(re.finditer(re.escape(word), value))
        self.ends, self.starts = [m.end() for m in found], [m.start() for m in found]
        raw, escaped = re.finditer("\n", value), re.finditer(r"\\n", value)
        self.breaks = sorted(m.start() for m in (*raw, *escaped))

    def on_line_before(self, start: int) -> bool:
        """Whether the word occurs before `start` (whole), after the last line break before it."""
        import bisect

        index = bisect.bisect_right(self.ends, start) - 1
        if index < 0:
            return False
        line_break = bisect.bisect_left(self.breaks, start) - 1
        return line_break < 0 or self.starts[index] > self.breaks[line_break]


#: how far back a name may start before its secret part (`Rule.name_left`)
MAX_NAME_PREFIX = 48
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _name_start(value: str, part_start: int) -> int | None:
    """Where the name whose secret part starts at `part_start` begins, or None when it is longer
    than `MAX_NAME_PREFIX` before the part (a blob, not a name)."""
    start = part_start
    limit = max(0, part_start - MAX_NAME_PREFIX - 1)
    while start > limit and value[start - 1] in _NAME_CHARS:
        start -= 1
    if start > 0 and value[start - 1] in _NAME_CHARS:
        return None
    return start


def _is_schema(value: dict[str, Any]) -> bool:
    kind = value.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return bool(kinds) and all(isinstance(k, str) and k in _SCHEMA_TYPES for k in kinds)


def _check_patterns(patterns: list[str], source: str) -> None:
    """A user's pattern that does not compile is a user error naming it, not a traceback."""
    problems = []
    for index, pattern in enumerate(patterns, 1):
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append(
                Diagnostic(
                    code="scrub-pattern",
                    file=source,
                    line=index if source == ENV_PATTERNS else None,
                    field=f"pattern {index}",
                    message=f"{pattern!r} is not a valid regular "
                    f"expression ({exc}); expected one Python regex per line",
                )
            )
    if problems:
        raise InputError(problems)


@caches.lru("scrub.default_scrubber", maxsize=1)
def default_scrubber() -> Scrubber:
    """The scrubber every sink uses (built once per process, and again when a suite names a
    secret it did not know: `REPLAYLAB_SCRUB_PATTERNS` and the run's secrets are read then)."""
    return Scrubber()


def watch_run_secrets(names: Iterable[str]) -> None:
    """The values of these environment variables are secrets of the run (a suite's
    `api_key_env`, its headers' `${NAME}`): every scrubber made from now on redacts them."""
    if watch_environment(names):
        default_scrubber.cache_clear()  # type: ignore[attr-defined]


def scrub_text(value: str) -> str:
    return default_scrubber().text(value)


def scrub_prefix(text: str, limit: int) -> str:
    """The first `limit` characters of `text`, scrubbed; only `limit + SCRUB_MARGIN` characters
    are ever scanned (a report shows excerpts of megabytes of tool output)."""
    return scrub_text(text[: limit + SCRUB_MARGIN])[:limit]


def scrub_data(value: Any) -> Any:
    return default_scrubber().data(value)
