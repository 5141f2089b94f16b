"""The fast I/O paths: the streaming transcript index (and the lazy load built on it), the
O(appended bytes) writer check, and the JSON-flow cassette format.

The index must agree with the eager load on everything a user sees (diagnostics, entries, leaf
path, window), on every hand-made bad file of `builders.bad_transcripts` and on the real pi files; the
cassette format must mean the same to orjson, both PyYAML loaders and vcrpy.
"""

from __future__ import annotations

import gc
import os
import random
from pathlib import Path

import orjson
import pytest
import yaml

from bench.generate import write_transcript
from builders.bad_transcripts import CASES
from replaylab.cassette import canonical_json, interaction, load_cassette, recorded_tool_interaction, write_cassette
from replaylab.diagnostics import InputError
from replaylab.transcript.context import build_window
from replaylab.transcript.index import TranscriptIndex
from replaylab.transcript.load import LazyTranscript, Transcript, load_transcript, loads_transcript
from replaylab.transcript.model import MessageEntry, dump_entry
from replaylab.transcript.parse import index_file
from replaylab.transcript.writer import NotOwnedError, TranscriptWriter

PI_FILES = ["pi-session.jsonl", "pi-compact.jsonl", "pi-before-compaction.jsonl", "pi-large-session.jsonl"]


def view(t: Transcript) -> dict:
    """Everything a caller can read from a transcript, as plain data."""
    return {
        "header": dump_entry(t.header),
        "version": t.source_version,
        "leaf": t.leaf_id,
        "diagnostics": [d.model_dump() for d in t.diagnostics],
        "entries": [dump_entry(e) for e in t.entries],
        "by_id": {k: dump_entry(v) for k, v in t.by_id.items()},
        "parents": {k: v.parent_id for k, v in t.by_id.items()},
        "line_of": dict(t.line_of),
        "leaf_path": [e.id for e in t.leaf_path()],
        "abandoned": [e.id for e in t.abandoned_entries()],
    }


def assert_same_as_eager(path: Path) -> TranscriptIndex:
    eager = load_transcript(path)
    lazy = load_transcript(path, lazy=True)
    assert isinstance(lazy, LazyTranscript) and not isinstance(eager, LazyTranscript)
    assert view(lazy) == view(eager)
    assert view(loads_transcript(path.read_bytes(), path=path, lazy=True)) == view(eager)
    index = index_file(path)
    assert index.diagnostics == eager.diagnostics
    assert index.leaf_path_ids() == [e.id for e in eager.leaf_path()]
    assert index.ids == [e.id for e in eager.entries]
    return index


@pytest.mark.parametrize("case", sorted(CASES))
def test_index_and_lazy_load_match_the_eager_load_on_every_bad_file(tmp_path: Path, case: str) -> None:
    path = tmp_path / f"{case}.jsonl"
    path.write_bytes(CASES[case][0]())
    assert_same_as_eager(path)
    want = CASES[case][1]
    assert [d.code for d in index_file(path).diagnostics].count(want["code"]) == 1


@pytest.mark.realdata
@pytest.mark.parametrize("name", PI_FILES)
def test_real_pi_files_index_like_the_eager_load(shared_data: Path, name: str) -> None:
    path = shared_data / "openclaw-fixtures" / name
    index = assert_same_as_eager(path)
    assert index.source_version == 1 and index.ids[0] == "l2"  # v1: migrated in memory, ids from lines


def test_lazy_glued_line_entries_are_read_back_from_their_line(tmp_path: Path) -> None:
    path = tmp_path / "glued.jsonl"
    path.write_bytes(CASES["glued-lines"][0]())
    assert "u1" not in index_file(path).ids  # as pi reads it: the glued line is dropped
    index = index_file(path, recover_glued_lines=True)
    u1, a1 = index.load_entries(["u1", "a1"])
    assert (u1.id, a1.id) == ("u1", "a1") and index.line_of["u1"] == index.line_of["a1"] == 2
    assert a1.message.content[0].text == "ok"


def _v1(lines: list[dict]) -> bytes:
    return b"".join(orjson.dumps(o) + b"\n" for o in [{"type": "session", "id": "s"}, *lines])


def test_v1_first_kept_index_pointing_down_the_file_is_resolved(tmp_path: Path) -> None:
    """A v1 compaction may name an entry after itself (index into the whole file): the streaming
    pass holds it until that line is read; ids are `l<line>`. Such a link keeps nothing before the
    compaction in pi's context, which the loader reports (`first-kept-later`)."""
    user = {"type": "message", "message": {"role": "user", "content": "hi"}}
    compaction = {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 4, "tokensBefore": 10}
    path = tmp_path / "v1.jsonl"
    path.write_bytes(_v1([user, compaction, user, user, user]))
    for transcript in (load_transcript(path), load_transcript(path, lazy=True)):
        entry = transcript.by_id["l3"]
        assert entry.first_kept_entry_id == "l5" and entry.parent_id == "l2"
        assert [e.id for e in transcript.leaf_path()] == ["l2", "l3", "l4", "l5", "l6"]
        assert [(d.code, d.line, d.entry_id) for d in transcript.diagnostics] == [("first-kept-later", 3, "l3")]


def test_index_keeps_no_entry_models(tmp_path: Path) -> None:
    info = write_transcript(tmp_path / "t.jsonl", seed=4, entries=2_000)
    gc.collect()
    before = sum(isinstance(o, MessageEntry) for o in gc.get_objects())
    index = index_file(info.path)
    gc.collect()
    after = sum(isinstance(o, MessageEntry) for o in gc.get_objects())
    assert len(index.ids) == info.entries and after - before == 0
    (window_entry,) = index.load_entries([index.leaf_id])
    assert isinstance(window_entry, MessageEntry)


def test_window_entries_build_the_same_window_as_the_whole_path(tmp_path: Path) -> None:
    info = write_transcript(tmp_path / "t.jsonl", seed=5, entries=3_000)
    assert info.compactions >= 2
    eager = load_transcript(info.path)
    index = index_file(info.path)
    window_ids = index.window_ids()
    assert len(window_ids) < len(index.leaf_path_ids()) / 3  # the summarized history is not read
    full = build_window(eager.leaf_path())
    partial = build_window(index.window_entries())
    assert [(w.entry_id, w.protected, dump_entry(w.message)) for w in partial] == [
        (w.entry_id, w.protected, dump_entry(w.message)) for w in full
    ]
    assert index.abandoned_ids() == [e.id for e in eager.abandoned_entries()]


def test_generated_transcripts_index_like_the_eager_load(tmp_path: Path) -> None:
    info = write_transcript(tmp_path / "t.jsonl", seed=6, entries=1_500)
    assert_same_as_eager(info.path)
    index = index_file(info.path)
    some = random.Random(1).sample(index.ids, 50)
    assert [dump_entry(e) for e in index.load_entries(some)] == [
        dump_entry(load_transcript(info.path).by_id[i]) for i in some
    ]


# ---------------------------------------------------------------- writer: O(appended bytes)


def _bytes_read() -> int:
    with open("/proc/self/io") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("rchar:"))


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io to count bytes read")
def test_append_does_not_reread_the_file(tmp_path: Path) -> None:
    info = write_transcript(tmp_path / "rec.jsonl", seed=7, entries=4_000)
    writer = TranscriptWriter.working_copy(info.path, tmp_path / "copy.jsonl")
    entry = {"type": "custom", "id": "x", "parentId": None, "timestamp": "t", "customType": "c"}
    before = _bytes_read()
    for i in range(20):
        writer.append({**entry, "id": f"x{i}"})
    read = _bytes_read() - before
    assert read < info.bytes / 10, read  # an append checks the bytes it appended, never the whole file
    writer.verify_append_only()
    assert load_transcript(writer.path).entries[-1].id == "x19"


def test_append_still_detects_a_same_length_rewrite_right_after_an_append(tmp_path: Path) -> None:
    path = tmp_path / "copy.jsonl"
    writer = TranscriptWriter.create_new(path, [{"type": "session", "version": 3, "id": "w"}])
    writer.append({"type": "custom", "id": "a1", "parentId": None, "timestamp": "t", "data": "original"})
    with open(path, "r+b") as handle:  # in place: same inode, same size
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"original", b"tampered"))
    with pytest.raises(NotOwnedError, match="rewritten"):
        writer.append({"type": "custom", "id": "a2", "parentId": "a1", "timestamp": "t"})


def test_append_continues_after_a_touch_or_a_foreign_append(tmp_path: Path) -> None:
    path = tmp_path / "copy.jsonl"
    writer = TranscriptWriter.create_new(path, [{"type": "session", "version": 3, "id": "w"}])
    os.utime(path)  # mtime changes, bytes do not: the full check passes
    writer.append({"type": "custom", "id": "a1", "parentId": None, "timestamp": "t"})
    with open(path, "ab") as handle:  # someone appends a line: the prefix is still ours
        handle.write(orjson.dumps({"type": "custom", "id": "f1", "parentId": "a1", "timestamp": "t"}) + b"\n")
    writer.append({"type": "custom", "id": "a2", "parentId": "f1", "timestamp": "t"})
    assert [e.id for e in load_transcript(path, strict=True).leaf_path()] == ["a1", "f1", "a2"]


# ---------------------------------------------------------------- cassettes: JSON flow = YAML


AWKWARD = (
    "NEL\x85 LS\u2028 PS\u2029 BOM\ufeff DEL\x7f C1\x9f nonchars\ufffe\uffff emoji😀 é \t\n\r\x00 "
    '"quoted" back\\slash \\/ 1e5 null true ~ - : # & * ! | > \' % @ ` {[,]}'
)


def _interactions() -> list[dict]:
    return [
        recorded_tool_interaction("update_ticket", {"id": "T-1", "note": AWKWARD}, AWKWARD),
        recorded_tool_interaction("get_ticket", {"id": "T-2"}, '{"status": "open"}', is_error=True),
        interaction("GET", "http://127.0.0.1:9/tools/ping", None, 404, ""),
    ]


def test_written_cassette_is_json_flow_read_identically_by_orjson_pyyaml_and_vcrpy(tmp_path: Path) -> None:
    from vcr.serialize import deserialize
    from vcr.serializers import yamlserializer

    items = _interactions()
    path = write_cassette(tmp_path / "c.cassette.yaml", items)
    raw = path.read_bytes()
    assert raw.startswith(b'{"interactions": [\n') and raw.count(b"\n") == len(items) + 2  # one line per interaction
    assert orjson.loads(raw)["interactions"] == items
    assert load_cassette(path) == items
    assert yaml.load(raw, Loader=yaml.CSafeLoader) == {"interactions": items, "version": 1}
    assert yaml.load(raw, Loader=yaml.SafeLoader) == {"interactions": items, "version": 1}
    requests_, responses = deserialize(raw.decode("utf-8"), yamlserializer)
    assert [r.uri for r in requests_] == [i["request"]["uri"] for i in items]
    assert [r["body"]["string"] for r in responses] == [i["response"]["body"]["string"].encode() for i in items]
    with pytest.raises(FileExistsError):
        write_cassette(path, items)


def test_vcrpy_replays_a_written_cassette(tmp_path: Path) -> None:
    """Port 9 never listens: the answer can only come from the cassette."""
    import requests
    import vcr

    path = write_cassette(tmp_path / "c.cassette.yaml", _interactions())
    recorder = vcr.VCR(record_mode="none", match_on=["method", "path", "body"])
    with recorder.use_cassette(str(path)):
        reply = requests.post(
            "http://127.0.0.1:9/tools/update_ticket",
            data=canonical_json({"id": "T-1", "note": AWKWARD}).encode("utf-8"),
            headers={"Content-Type": "application/json"},
            timeout=5,
        )
    assert reply.status_code == 200 and reply.text == AWKWARD
    assert reply.headers["X-Replaylab-Tool-Error"] == "false"


def test_interactions_json_cannot_say_exactly_fall_back_to_block_yaml(tmp_path: Path) -> None:
    binary, with_float = _interactions()[:2]
    binary = {**binary, "response": {**binary["response"], "body": {"string": b"\x00\xff raw bytes"}}}
    with_float = {**with_float, "request": {**with_float["request"], "headers": {"X-Ratio": [1e20, 0.5]}}}
    path = write_cassette(tmp_path / "c.cassette.yaml", [binary, with_float])
    assert path.read_bytes().startswith(b"interactions:\n")
    assert load_cassette(path) == [binary, with_float]


def _json_cassette(request_headers: str = "{}", response_text: str = '""') -> str:
    return (
        '{"interactions": [{"request": {"body": null, "headers": ' + request_headers + ', "method": "GET", '
        '"uri": "http://127.0.0.1:9/tools/x"}, "response": {"body": {"string": ' + response_text + "}, "
        '"headers": {}, "status": {"code": 200, "message": "OK"}}}], "version": 1}'
    )


@pytest.mark.parametrize(
    "text",
    [
        _json_cassette(request_headers='{"X-N": [1e5]}'),  # YAML 1.1: the string "1e5"; JSON: a number
        _json_cassette(response_text='"a\x85b"'),  # a raw NEL: a line break to YAML 1.1 (read as a space)
        _json_cassette(response_text='"\\ud83d\\ude00"'),  # JSON pairs escaped surrogates, YAML refuses them
    ],
)
def test_load_cassette_leaves_json_that_yaml_may_read_differently_to_yaml(tmp_path: Path, text: str) -> None:
    """Whatever the C loader makes of such a file is what load_cassette returns (never orjson's
    reading where YAML's differs)."""
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    as_json = orjson.loads(text)["interactions"]
    try:
        as_yaml = yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)["interactions"]
    except yaml.YAMLError:
        with pytest.raises(InputError, match="not valid YAML"):
            load_cassette(path)
        return
    assert load_cassette(path) == as_yaml
    assert as_yaml != as_json  # so the fast path had to step aside
