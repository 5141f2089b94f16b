"""One small hand-made bad file per diagnostic (`builders.bad_transcripts`): each is reported with the line (and the entry id /
field where there is one), the default load carries on, and `strict=True` raises `InputError`
with exactly the same diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from builders.bad_transcripts import CASES, HEADER, assistant, line, result, user
from replaylab.diagnostics import Diagnostic, InputError
from replaylab.transcript.load import load_transcript


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_problem_is_reported_with_line_id_and_field(tmp_path: Path, case: str) -> None:
    make, want = CASES[case]
    path = write(tmp_path, case, make())
    diagnostics = load_transcript(path).diagnostics
    matching = [d for d in diagnostics if d.code == want["code"]]
    assert len(matching) == 1, [str(d) for d in diagnostics]
    diag = matching[0]
    text = str(diag)
    assert diag.file == str(path)
    assert diag.line == want["line"]
    if want["line"] is not None:
        assert text.startswith(f"{path}:{want['line']}: "), text
    if "entry_id" in want:
        assert diag.entry_id == want["entry_id"] and f"entry {want['entry_id']}" in text
    if "field" in want:
        assert diag.field == want["field"] and repr(want["field"]) in text
    for word in want["words"]:
        assert word in diag.message, (word, text)


@pytest.mark.parametrize("case", sorted(CASES))
def test_strict_raises_input_error_with_the_same_diagnostics(tmp_path: Path, case: str) -> None:
    make, _ = CASES[case]
    path = write(tmp_path, case, make())
    lenient = load_transcript(path).diagnostics
    with pytest.raises(InputError) as raised:
        load_transcript(path, strict=True)
    assert raised.value.diagnostics == lenient
    assert str(raised.value) == "\n".join(str(d) for d in lenient)


def test_clean_file_has_no_diagnostics_even_when_strict(tmp_path: Path) -> None:
    body = (
        line(HEADER)
        + line(user("u1", None))
        + line(assistant("a1", "u1", [("c1", "read"), ("c2", "write")]))
        + line(result("r1", "a1", "c1"))
        + line(result("r2", "r1", "c2"))
        + line(assistant("a2", "r2"))
    )
    transcript = load_transcript(write(tmp_path, "clean", body), strict=True)
    assert transcript.diagnostics == [] and len(transcript.entries) == 5


def test_default_load_keeps_what_it_can(tmp_path: Path) -> None:
    """A line of glued entries is dropped as pi drops it (on request both are recovered); a bad
    line is skipped but the rest is still read."""
    glued = load_transcript(write(tmp_path, "glued", CASES["glued-lines"][0]()))
    assert [e.id for e in glued.entries] == ["u2"] and [d.code for d in glued.diagnostics][0] == "glued-lines"
    recovered = load_transcript(write(tmp_path, "glued2", CASES["glued-lines"][0]()), recover_glued_lines=True)
    assert [e.id for e in recovered.leaf_path()] == ["u1", "a1", "u2"]
    assert [d.code for d in recovered.diagnostics] == ["glued-lines-recovered"]
    assert "differ from pi" in recovered.diagnostics[0].message
    broken = load_transcript(write(tmp_path, "broken", CASES["line-does-not-parse"][0]()))
    assert [e.id for e in broken.entries] == ["u1", "a1"]
    cyclic = load_transcript(write(tmp_path, "cycle", CASES["cycle"][0]()))
    assert [e.id for e in cyclic.leaf_path()] == ["x", "y", "z"]  # the cycle is cut, the walk ends


def test_errored_assistant_call_needs_no_result_but_its_result_is_no_orphan(tmp_path: Path) -> None:
    aborted = assistant("a1", "u1", [("c1", "bash")])
    aborted["message"]["stopReason"] = "aborted"
    errored = assistant("a2", "a1", [("c2", "bash")])
    errored["message"]["stopReason"] = "error"
    body = line(HEADER) + line(user("u1", None)) + line(aborted) + line(errored) + line(result("r2", "a2", "c2"))
    assert load_transcript(write(tmp_path, "aborted", body)).diagnostics == []


def test_directory_and_missing_file_raise_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        load_transcript(tmp_path)
    (diag,) = raised.value.diagnostics
    assert diag.code == "not-a-file" and diag.file == str(tmp_path) and "directory" in diag.message
    with pytest.raises(InputError) as raised:
        load_transcript(tmp_path / "absent.jsonl")
    assert raised.value.diagnostics[0].code == "missing-file"


def test_diagnostic_text_format() -> None:
    diag = Diagnostic(code="c", file="f.jsonl", line=3, entry_id="e", field="parentId", message="msg")
    assert str(diag) == "f.jsonl:3: error[c] entry e field 'parentId': msg"


# ---------------------------------------------------------------- the real files


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("name", "lineno", "kinds"),
    [
        ("pi-compact.jsonl", 1013, ("message (", "compaction")),
        ("pi-session.jsonl", 440, ("message (", "message (")),
    ],
)
def test_real_glued_lines_are_named(shared_data: Path, name: str, lineno: int, kinds: tuple[str, str]) -> None:
    path = shared_data / "openclaw-fixtures" / name
    transcript = load_transcript(path)
    glued = [d for d in transcript.diagnostics if d.code == "glued-lines"]
    assert [d.line for d in glued] == [lineno]
    assert f"{path}:{lineno}: " in str(glued[0]) and all(kind in glued[0].message for kind in kinds)
    # as pi reads it: the line is gone
    assert not [e for e in transcript.entries if transcript.line_of[e.id] == lineno]
    # on request both glued entries are recovered, as separate entries of that line
    recovered = load_transcript(path, recover_glued_lines=True)
    on_line = [e for e in recovered.entries if recovered.line_of[e.id] == lineno]
    assert len(on_line) == 2
    with pytest.raises(InputError):
        load_transcript(path, strict=True)
