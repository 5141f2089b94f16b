"""The replay engine's fifth round of savings (issue 8) changes how fast, never what.

What changed, and what each change is compared with (the replaced code is kept in `Prev`, or
switched back by `previous()`):
* `ToolExecutor._serve_recorded`: a recorded-tool miss is recorded in `cassette.misses` and gives
  None; vcrpy's exception (whose message matched the request against every recorded one,
  building each recorded `Request`) is no longer made → `Prev.serve_recorded`. Validity:
  `execute` answers a call from its misses whenever there is one.
* `VisibleText.of_window`: the pieces of `WindowText.blocks` and the always-visible text are not
  checked for their leading SEP on every grounded step → `Prev.ground_step` (`VisibleText(...)`).
  Validity: those pieces do start with SEP.
End to end, every bundled suite item, bench sessions and real sessions give the same `ItemResult`
JSON (minus duration) with everything swapped back (`previous()`) as with the new route. No
timing is asserted anywhere.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.defects import Code
from replaylab.replay import ToolExecutor, grounding
from replaylab.replay.executor import recorded_tool_key, recorded_tool_request
from replaylab.replay.grounding import SEP, VisibleText, WindowText, ground
from replaylab.replay.models import ReplayModel
from replaylab.replay.toolpack import ToolOutput
from replaylab.safety.classify import ToolClassifier
from replaylab.transcript.model import ToolCallBlock, UserMessage

REPO = Path(__file__).resolve().parents[1]
RULES = ToolClassifier()  # OpenClaw name rules: `read` is safe, `write` and unknown names mutate


class Prev:
    """The replaced implementations, verbatim."""

    @staticmethod
    def serve_recorded(self, name: str, args: dict[str, Any]) -> ToolOutput:
        from replaylab.replay.vcr_session import IndexedCassette

        cassette = IndexedCassette.over(self.cassette)  # then the executor's cassette; the same play state
        index = cassette.play_key_index(recorded_tool_key(name, args))
        if index is not None:
            text, response = cassette.response_text(index)  # the loaded text: no bytes round trip
        else:
            from vcr.errors import CannotOverwriteExistingCassetteException

            request = recorded_tool_request(name, args)
            if not cassette.can_play_response_for(request):  # records the miss
                raise CannotOverwriteExistingCassetteException(cassette=cassette, failed_request=request)
            response = cassette.play_response(request)
            body = response["body"]["string"]
            text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        status = int((response.get("status") or {}).get("code") or 200)
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        flag = headers.get("X-Replaylab-Tool-Error".lower()) or ["false"]
        flag = flag[0] if isinstance(flag, list) else flag
        return ToolOutput(text, str(flag).lower() == "true" or status >= 400)

    @staticmethod
    def ground_step(self, entry, window, tools=()):
        if self._nothing_lost(entry, window):
            return grounding.Grounded(entry.message)
        plan = self.plan(entry)
        if not plan:
            return grounding.Grounded(entry.message)
        # window text + SEP + always-visible text, tested piece by piece instead of copied per step
        pieces = self._window_text.blocks(window)  # the window's items (or messages) as they are
        return ground(entry.message, plan, VisibleText([*pieces, self._always_visible(tools)]))


@contextlib.contextmanager
def previous() -> Iterator[None]:
    """Every replaced implementation swapped back in."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ToolExecutor, "_serve_recorded", Prev.serve_recorded)
        mp.setattr(ReplayModel, "ground_step", Prev.ground_step)
        yield


# ---------------------------------------------------------------- a recorded-tool miss


def test_a_recorded_tool_miss_is_answered_from_its_miss(tmp_path: Path) -> None:
    """A call the cassette cannot serve: `_serve_recorded` records the request vcrpy would have
    been asked and gives None (no exception, no recorded `Request` built); `execute` answers it
    exactly as it did with vcrpy's exception — a blocked write with its nearest recorded call, a
    repeat of an earlier write, a read without a recording."""
    cassette = write_cassette(tmp_path / "s.cassette.yaml", [
        recorded_tool_interaction("write", {"path": "a.txt", "content": "x"}, "ok"),
        recorded_tool_interaction("read", {"path": "a.txt"}, "x")])
    executor = ToolExecutor(cassette, RULES)
    with executor:
        assert executor._serve_recorded("write", {"path": "b.txt", "content": "x"}) is None
    assert executor.cassette.misses[-1].uri == recorded_tool_request("write", {}).uri
    assert executor.cassette.misses[-1].body == recorded_tool_request("write", {"path": "b.txt", "content": "x"}).body
    assert all(pair is None for pair in executor.cassette.data._pairs)  # nothing matched against them

    calls = [ToolCallBlock(id="c1", name="write", arguments={"path": "b.txt", "content": "x"}),
             ToolCallBlock(id="c2", name="write", arguments={"path": "a.txt", "content": "x"}),
             ToolCallBlock(id="c3", name="write", arguments={"path": "a.txt", "content": "x"}),
             ToolCallBlock(id="c4", name="read", arguments={"path": "z.txt"})]

    def answers() -> list[Any]:
        out = []
        run = ToolExecutor(cassette, RULES, executed_before=[("write", {"path": "a.txt", "content": "x"})])
        with run:
            for call in calls:
                message, trace = run.execute(call, turn=1, step=0)
                out.append((message.model_dump(), trace.model_dump()))
        return [out, [d.model_dump() for d in run.defects], len(run.cassette.misses)]

    new = answers()
    with previous():
        old = answers()
    assert new == old
    assert [trace["source"] for _, trace in new[0]] == ["blocked", "blocked", "blocked", "missing"]
    assert [d["code"] for d in new[1]] == [Code.SIDE_EFFECT_ESCAPED, Code.DUPLICATE_SIDE_EFFECT,
                                          Code.DUPLICATE_SIDE_EFFECT]


# ---------------------------------------------------------------- the visible text of a step


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["grow", "replace", "shrink"]),
                          st.lists(st.text(alphabet="ab\x00 #1", max_size=6), max_size=4)), max_size=25),
       st.lists(st.text(alphabet="ab\x00 #1", min_size=1, max_size=4), max_size=6),
       st.text(alphabet="ab\x00", max_size=5))
def test_window_pieces_start_with_sep_and_answer_as_checked(changes: list[tuple[str, list[str]]],
                                                            values: list[str], tools_text: str) -> None:
    """The validity of `VisibleText.of_window`: every piece `WindowText.blocks` gives after the
    first starts with SEP (as does the always-visible text), so the checked constructor accepts
    them; and both answer every value alike."""
    window_text = WindowText()
    window: list[Any] = []
    always = SEP + tools_text + SEP + "system"
    for change, texts in changes:
        messages = [UserMessage(content=text) for text in texts]
        if change == "grow":
            window = window + messages
        elif change == "replace":
            window = messages
        else:
            window = window[: len(window) // 2]
        blocks = window_text.blocks(window)
        assert all(piece.startswith(SEP) for piece in blocks)
        checked = VisibleText([*blocks, always])  # raises when a piece lacks its SEP
        trusted = VisibleText.of_window(blocks, always)
        assert trusted.pieces == checked.pieces and trusted.pieces is not blocks
        for value in values:
            assert (value in trusted) == (value in checked) == (value in "".join(checked.pieces))


def test_the_always_visible_text_starts_with_sep() -> None:
    model = ReplayModel([])
    for tools in ([], [{"name": "t", "description": "x"}]):
        assert model._always_visible(tools).startswith(SEP)


# ---------------------------------------------------------------- end to end


def _same_with_previous(suite_files: list[Path]) -> list[str]:
    from test_replay_speed2 import same_with

    return same_with(previous, suite_files)


@pytest.fixture(scope="module")
def bench_sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bench.cases.pipeline import make_sessions

    return make_sessions(tmp_path_factory.mktemp("bench"), 44)  # s-0041 blocks a recorded-tool write


def test_every_item_gives_the_same_result_with_every_previous_implementation(bench_sessions: Path) -> None:
    new = _same_with_previous(sorted((REPO / "suites").glob("*.yaml")) + [bench_sessions])
    assert len(new) >= 60
    assert sum('"compacted":{' in item for item in new) >= 5  # compacted runs happened
    assert any("⟨lost:" in item for item in new)  # some lost a value (grounded steps)
    assert any(Code.SIDE_EFFECT_ESCAPED.value in item for item in new)  # and a recorded-tool miss was blocked


@pytest.mark.realdata
def test_real_sessions_give_the_same_results_with_every_previous_implementation(shared_data, tmp_path) -> None:
    """Every τ-bench, τ²-bench, Claude Code and pi session, compacted automatically on a small budget."""
    from test_replay_speed2 import real_sessions_suite

    suite = real_sessions_suite(shared_data, tmp_path)
    new = _same_with_previous([suite])
    assert len(new) > 400
    assert sum('"compacted":{' in item for item in new) > 150
