"""A replayed result answered from the recording keeps what the judgement of its call reads on
the recorded result (pi 1.6.0's `nestedCalls`, a `codemode` result's `details`), so the working
copy the compacted run writes is judged as the recording was."""

from __future__ import annotations

from builders.pi16_codemode import codemode_turn, pi16_session
from replaylab.cassette import cassette_path_for
from replaylab.replay import ToolExecutor
from replaylab.replay.tools.recorded_results import RecordedResults
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import ToolCallBlock

#: a pi 1.6.0 `codemode` script, and the calls pi recorded it making (`nestedCalls`)
CODEMODE = {"code": "return await tools.read({path: 'notes.txt'})"}
READS = [("read", {"path": "notes.txt"}), ("grep", {"pattern": "bank", "path": "notes.txt"})]


def test_a_replayed_codemode_result_keeps_what_the_recording_judged_its_call_by(tmp_path) -> None:
    """A replay that runs a pi 1.6.0 `codemode` script the recording ran, answered from the
    recording, gives the agent the recorded result's `nestedCalls` and codemode's own rows
    (`details`) with its text: the working copy the replayed run is written to then holds them,
    and a second compaction there judges the call a read as the recording's ledger did, not a
    `codemode` result whose record was lost (mutating). The recording is never written."""
    from replaylab.importers import import_sessions, write_session
    from replaylab.qa.setup import ReplayedTurns
    from replaylab.safety.agent_tools import recorded_attribute
    from replaylab.safety.nested_calls import path_records
    from replaylab.transcript import TranscriptWriter
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.model import AssistantMessage, MessageEntry, ToolResultMessage

    s = pi16_session()
    s.user("what do the notes say?")
    codemode_turn(s, CODEMODE["code"], READS)
    s.assistant("They say: bank.")
    for session in import_sessions("pi", s.write(tmp_path / "cm.jsonl")):
        write_session(session, tmp_path / "rec")
    recording = tmp_path / "rec" / "cm.jsonl"
    before = recording.read_bytes()
    path = load_transcript(recording).leaf_path()
    recorded = next(e.message for e in path if isinstance(getattr(e, "message", None), ToolResultMessage))
    classifier = ToolClassifier()
    executor = ToolExecutor(cassette_path_for(recording), classifier, recorded=RecordedResults.of(path))
    call = ToolCallBlock(id="replayed", name="codemode", arguments=CODEMODE)
    with executor:
        result, trace = executor.execute(call, turn=1, step=0)
    assert trace.source == "cassette" and not trace.mutating
    assert recorded_attribute(result, "nestedCalls") == recorded_attribute(recorded, "nestedCalls")
    assert result.details == recorded.details

    writer = TranscriptWriter.working_copy(recording, tmp_path / "work" / "cm.jsonl")
    replayed = ReplayedTurns(writer, path[-1].id)
    reply = AssistantMessage(content=[call], stop_reason="toolUse")
    replayed.add_messages([WindowMessage("a", reply), WindowMessage("a:replayed", result)])
    leaf = replayed.write()  # first: each transcript() is a snapshot of the file as it is
    copy = writer.transcript().path_to(leaf)
    written = [e.message for e in copy if isinstance(e, MessageEntry)][-1]
    assert recorded_attribute(written, "nestedCalls") == recorded_attribute(recorded, "nestedCalls")
    judged = path_records(copy).judge("codemode", "replayed", classifier.explain("codemode", CODEMODE), classifier)
    assert not judged.mutating, judged.reason
    assert recording.read_bytes() == before


def test_a_replayed_result_without_records_is_its_text_alone() -> None:
    """A recorded result that records no calls gives the replayed result nothing but its text, as before."""
    from replaylab.replay.tools.recorded_results import RecordedResult, kept_fields
    from replaylab.transcript.model import ToolResultMessage

    plain = ToolResultMessage(tool_call_id="c", tool_name="get_order", content="x", details={"replaylab": {}})
    assert kept_fields(plain) is None
    assert RecordedResult("c", "get_order", {}, "x", False).kept is None
