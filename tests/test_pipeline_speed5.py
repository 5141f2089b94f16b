"""Pipeline speed, 5th stop (issue 8): each cut gives what the code it replaced gave.

* diff: two equal answers match without being normalized; a strict tool-sequence match compares
  each pair of calls' arguments structurally (`_same_json`) before serializing them — valid only
  while `_same_json` never calls two values equal that canonical JSON spells apart (1 / 1.0 /
  True, 0.0 / -0.0, a non-str key, a subclass). `Prev*` below are the replaced functions.
* working copy: its writer's running sha256 is made from the bytes as they are copied, or taken
  from the recording's own `file_state` when the recording's status still vouches that it holds
  the hashed bytes — valid only while that status is checked after the copy. `PrevWorkingCopy`
  is the replaced constructor (copy, then read the copy back and hash it).
* sub-agent files: `copy_children` finds the recording's `<name>.sub-*` files by bisecting the
  folder's sorted listing instead of testing every name of the folder per item — valid only
  while that listing is sorted. `prev_copy_children` is the replaced scan.
* The pipeline with every replaced piece put back gives the same item results on every bundled
  suite (and on imported real sessions).
"""

from __future__ import annotations

import difflib
import json
import math
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.cassette import canonical_json
from replaylab.qa import diff
from replaylab.qa.diff import _multiset_le, call_key, normalize_answer
from replaylab.replay.trace import ToolCallTrace
from replaylab.qa.suite import ArgRule, MatchSettings
from replaylab.transcript import load_transcript, writer as writer_module
from replaylab.transcript.writer import TranscriptWriter, _OWNER, file_sha256, file_state
from test_pipeline_speed import _results  # item results as JSON-ready reprs, durations and diag ids left out

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the replaced code


def prev_answers_match(baseline: str, compacted: str, match: MatchSettings) -> bool:
    if match.answer == "ignore":
        return True
    if match.answer == "exact":
        return baseline == compacted
    if match.answer == "normalized":
        return normalize_answer(baseline) == normalize_answer(compacted)
    ratio = difflib.SequenceMatcher(None, normalize_answer(baseline), normalize_answer(compacted)).ratio()
    return ratio >= match.similarity


def prev_sequences_match(baseline: list, compacted: list, match: MatchSettings) -> bool:
    a = [call_key(c, match) for c in baseline]
    b = [call_key(c, match) for c in compacted]
    if match.tools == "strict":
        return a == b
    if match.tools == "unordered":
        return sorted(a, key=repr) == sorted(b, key=repr)
    if match.tools == "subset":
        return _multiset_le(b, a)
    return _multiset_le(a, b)


def prev_working_copy(recording: Path, destination: Path, *, parsed=None, parsed_sha256=None) -> TranscriptWriter:
    """`TranscriptWriter.working_copy` before this stop: copy, then hash the copy by reading it."""
    from replaylab.transcript.load import LazyTranscript
    from replaylab.transcript.writer import _snapshot

    destination.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out, open(recording, "rb") as src:
        shutil.copyfileobj(src, out)
    writer = TranscriptWriter(destination, durable=False, _token=_OWNER)
    if parsed is not None and parsed_sha256 == writer._digest and writer._seal is not None \
            and parsed.newlines is not None and not isinstance(parsed, LazyTranscript):
        writer._mirror = _snapshot(parsed, path=destination)
        writer._newlines = parsed.newlines
    return writer


# ---------------------------------------------------------------- diff

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.integers(2**63, 2**65),
                     st.sampled_from([0.0, -0.0, 1.0, 2.5, math.nan, math.inf]), st.sampled_from(["", "a", "1", "true"]))
_JSONISH = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.sampled_from(["a", "b", "1"]), st.integers(0, 1), st.booleans()), inner, max_size=3)),
    max_leaves=8)


def _twin(value):
    """A value `==` to `value` that canonical JSON may spell differently (1 ↔ True ↔ 1.0,
    0.0 ↔ -0.0, list ↔ tuple, keys in another order)."""
    if value is True:
        return 1
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value) if abs(value) < 2**53 else value
    if isinstance(value, float) and value == 0.0:
        return -value
    if isinstance(value, list):
        return tuple(_twin(v) for v in value)
    if isinstance(value, tuple):
        return [_twin(v) for v in value]
    if isinstance(value, dict):
        return {k: _twin(value[k]) for k in reversed(list(value))}
    return value


class _Text(str):
    """A str subclass: equal to its text, but not plain JSON to `_same_json`."""


@settings(max_examples=400, deadline=None)
@given(_JSONISH, _JSONISH)
def test_same_json_only_vouches_for_values_canonical_json_spells_alike(left, right) -> None:
    for a, b in ((left, right), (left, left), (left, _twin(left)), (_twin(left), left), (left, _twin(_twin(left)))):
        if diff._same_json(a, b):
            assert canonical_json(a) == canonical_json(b), (a, b)


def test_same_json_refuses_the_values_python_calls_equal_and_json_does_not() -> None:
    for a, b in [(1, True), (1, 1.0), (0, False), (0.0, -0.0), ({"a": 1}, {"a": True}), ([1], (1,)),
                 ({1: "x"}, {True: "x"}), ({"a": math.nan}, {"a": math.nan}), ("x", _Text("x"))]:
        assert not diff._same_json(a, b), (a, b)
    assert diff._same_json({"b": [1, {"c": None}], "a": "x", "f": 2.5}, {"a": "x", "f": 2.5, "b": [1, {"c": None}]})


def _call(tool: str, **arguments) -> ToolCallTrace:
    return ToolCallTrace(turn=1, step=0, tool_call_id="c", tool=tool, arguments=arguments)


_CALLS = [_call("refund", order="O-1", amount=5), _call("refund", amount=5, order="O-1"),
          _call("refund", order="O-1", amount=5.0), _call("refund", order="O-1", amount=True),
          _call("refund", order="O-2", amount=5), _call("lookup", order="O-1"), _call("lookup", order="O-1", x=-0.0),
          _call("lookup", order="O-1", x=0.0), _call("lookup"), _call("refund", order="O-1", amount=5, note={"a": [1]})]
_MATCHES = [MatchSettings(tools=tools, args=args) for tools in ("strict", "unordered", "subset", "superset")
            for args in ("exact", "ignore", {"refund": ArgRule(ignore=["amount"])})]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_CALLS), max_size=4), st.lists(st.sampled_from(_CALLS), max_size=4),
       st.sampled_from(_MATCHES))
def test_sequences_match_as_before(baseline, compacted, match) -> None:
    assert diff.sequences_match(baseline, compacted, match) == prev_sequences_match(baseline, compacted, match)
    assert diff.sequences_match(baseline, list(baseline), match) == prev_sequences_match(baseline, list(baseline), match)


def test_arguments_nested_deeper_than_python_recurses_are_compared_as_before() -> None:
    deep: object = "x"
    for _ in range(900):  # orjson refuses > 254 levels; canonical_json's stdlib fallback goes on
        deep = {"a": [deep]} if not isinstance(deep, dict) else {"a": deep}
    left, right = _call("t", v=deep), _call("t", v=deep)
    match = MatchSettings()
    assert diff.sequences_match([left], [right], match) == prev_sequences_match([left], [right], match)


_ANSWERS = ["", "Done.", "done", "Your refund of $5 is issued", "Your refund of $5 was issued", "  Done!!  ", "x" * 50]


@pytest.mark.parametrize("mode", ["exact", "normalized", "similarity", "ignore"])
@pytest.mark.parametrize("similarity", [0.0, 0.8, 1.0])
def test_answers_match_as_before(mode: str, similarity: float) -> None:
    match = MatchSettings(answer=mode, similarity=similarity)
    for a in _ANSWERS:
        for b in _ANSWERS:
            assert diff.answers_match(a, b, match) == prev_answers_match(a, b, match), (a, b, mode)


# ---------------------------------------------------------------- working copy


def _recording(folder: Path, body: bytes) -> Path:
    path = folder / "rec.jsonl"
    path.write_bytes(body)
    return path


_HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}'
_ENTRY = b'{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi"}}'
_BODIES = [b"", _HEADER, _HEADER + b"\n", _HEADER + b"\n" + _ENTRY + b"\n", _HEADER + b"\r\n" + _ENTRY]


def _same_writer(new: TranscriptWriter, old: TranscriptWriter) -> None:
    assert (new._digest, new._size, new._last_byte) == (old._digest, old._size, old._last_byte)
    assert (new._mirror is None) == (old._mirror is None) and new._newlines == old._newlines
    assert new.sealed_state() == (new._size, file_sha256(new.path))


@pytest.mark.parametrize("body", _BODIES)
@pytest.mark.parametrize("vouching", [False, True])
def test_a_working_copy_hashes_what_it_copied_as_before(tmp_path, monkeypatch, body: bytes, vouching: bool) -> None:
    """With the recording's state (vouching: its status settled, so it keeps its hash) or without
    one, the writer starts from the same digest, size, last byte and parse as before."""
    if vouching:
        monkeypatch.setattr(writer_module, "SETTLED_NS", 0)  # a file whose ctime is in the past is settled
    recording = _recording(tmp_path, body)
    state = file_state(recording, keep_hasher=True)
    assert (state.hasher is not None) == vouching and file_state(recording).hasher is None  # kept only when asked
    parsed = load_transcript(recording) if body else None
    new = TranscriptWriter.working_copy(recording, tmp_path / "new" / "rec.jsonl", parsed=parsed,
                                        parsed_sha256=state.sha256, recording_state=state)
    old = prev_working_copy(recording, tmp_path / "old" / "rec.jsonl", parsed=parsed, parsed_sha256=state.sha256)
    _same_writer(new, old)
    line = {"type": "message", "id": "z9", "parentId": None, "message": {"role": "user", "content": "again"}}
    new.append(line)
    old.append(line)
    new.verify_append_only()
    _same_writer(new, old)
    assert new.path.read_bytes() == old.path.read_bytes()


@pytest.mark.parametrize("change", ["append", "same size"])
def test_a_recording_changed_since_its_state_is_hashed_as_copied(tmp_path, monkeypatch, change: str) -> None:
    """The validity condition: the recording's hash is taken only while its status still vouches
    for it. Changed after its state was taken (even to the same size), the copy holds other bytes:
    the writer hashes them, and the stale parse is not taken for the copy's."""
    monkeypatch.setattr(writer_module, "SETTLED_NS", 0)
    recording = _recording(tmp_path, _HEADER + b"\n" + _ENTRY + b"\n")
    state = file_state(recording, keep_hasher=True)
    parsed = load_transcript(recording)
    assert state.hasher is not None
    if change == "append":
        with open(recording, "ab") as handle:
            handle.write(_ENTRY.replace(b'"a1","parentId":null', b'"a2","parentId":"a1"') + b"\n")
    else:
        recording.write_bytes(recording.read_bytes().replace(b'"hi"', b'"ho"'))
    new = TranscriptWriter.working_copy(recording, tmp_path / "w" / "rec.jsonl", parsed=parsed,
                                        parsed_sha256=state.sha256, recording_state=state)
    assert new._digest == file_sha256(new.path) == file_sha256(recording) != state.sha256
    assert new._mirror is None
    fresh = load_transcript(new.path)
    assert [e.model_dump() for e in new.transcript().entries] == [e.model_dump() for e in fresh.entries]
    new.append({"type": "message", "id": "z9", "parentId": None, "message": {"role": "user", "content": "x"}})
    new.verify_append_only()


# ---------------------------------------------------------------- sub-agent files


def prev_copy_children(recording: Path, work: Path) -> None:
    from replaylab.qa.setup import _folder_names

    prefix = recording.name.removesuffix(".jsonl") + ".sub-"
    for name in _folder_names(recording.parent):
        if name.startswith(prefix) and (recording.parent / name).is_file():
            shutil.copyfile(recording.parent / name, work / name)


_NAMES = st.lists(st.text(alphabet="as.-_bjé0ZA", max_size=9).map(lambda n: n.strip(".") or "x"), max_size=12)


@settings(max_examples=150, deadline=None)
@given(_NAMES, st.sampled_from(["a", "a.s", "a.sub", "A", "é", "a-"]), st.data())
def test_sub_agent_files_are_those_the_full_scan_found(tmp_path_factory, names, stem, data) -> None:
    from replaylab.qa.setup import copy_children

    root = tmp_path_factory.mktemp("children")
    recordings = root / "recordings"
    recordings.mkdir()
    children = [f"{stem}.sub-{n}" for n in names[: len(names) // 2]] + names[len(names) // 2:]
    for name in dict.fromkeys(children):
        if name.endswith("-") or data.draw(st.booleans()):
            (recordings / name).mkdir(exist_ok=True)  # a folder with the prefix is no sub-agent file
        elif not (recordings / name).exists():
            (recordings / name).write_text(name)
    recording = recordings / f"{stem}.jsonl"
    recording.write_text("")
    (root / "new").mkdir()
    (root / "old").mkdir()
    copy_children(recording, root / "new")
    prev_copy_children(recording, root / "old")
    copied = sorted(p.name for p in (root / "new").iterdir())
    assert copied == sorted(p.name for p in (root / "old").iterdir())
    assert all((root / "new" / n).read_text() == n for n in copied)


def test_the_folder_listing_is_sorted_and_follows_the_folder(tmp_path) -> None:
    """The validity condition of the bisection: the listing `copy_children` reads is sorted (and
    a changed folder is listed again)."""
    from replaylab.qa.setup import _folder_names

    for name in ["b.jsonl", "a.sub-2.jsonl", "a.jsonl", "a.sub-10.jsonl", "A.jsonl", "a.sub-.x"]:
        (tmp_path / name).write_text("")
    first = _folder_names(tmp_path)
    assert first == sorted(first) == sorted(p.name for p in tmp_path.iterdir())
    (tmp_path / "a.sub-1.jsonl").write_text("")
    again = _folder_names(tmp_path)
    assert again == sorted(again) and "a.sub-1.jsonl" in again


# ---------------------------------------------------------------- the whole pipeline


def _put_back_the_previous_code(monkeypatch) -> None:
    import replaylab.qa.setup as setup

    monkeypatch.setattr(setup, "copy_children", prev_copy_children)
    monkeypatch.setattr(diff, "sequences_match", prev_sequences_match)
    monkeypatch.setattr(diff, "answers_match", prev_answers_match)

    def prev_copy(recording, destination, *, parsed=None, parsed_sha256=None, recording_state=None):
        return prev_working_copy(Path(recording), Path(destination), parsed=parsed, parsed_sha256=parsed_sha256)

    monkeypatch.setattr(TranscriptWriter, "working_copy", staticmethod(prev_copy))


@pytest.mark.parametrize("suite", sorted(p.name for p in (REPO / "suites").glob("*.yaml")))
def test_the_pipeline_gives_the_same_results_with_the_previous_code(suite: str, monkeypatch) -> None:
    now = _results(REPO / "suites" / suite)
    _put_back_the_previous_code(monkeypatch)
    assert _results(REPO / "suites" / suite) == now


@pytest.mark.realdata
def test_real_sessions_give_the_same_results_with_the_previous_code(shared_data, tmp_path, monkeypatch) -> None:
    from loopback import imported_real_sessions

    sessions = [p for p in imported_real_sessions(shared_data, tmp_path / "sessions")
                if ".sub-" not in p.name][::8]  # every 8th session (their sub-agents are copied with them)
    assert len(sessions) > 40
    suite = tmp_path / "suites" / "real.yaml"
    suite.parent.mkdir()
    suite.write_text("name: real\nrecordings: " + json.dumps([str(p) for p in sessions]) + "\ncompaction: {mode: "
                     "safeguard, contextTokens: 12000, reserveTokensFloor: 2000, keepRecentTokens: 1500}\ncompact_at: turn:3\n")
    now = _results(suite)
    _put_back_the_previous_code(monkeypatch)
    assert _results(suite) == now
