"""Every agent profile's rules against that agent's own code (tests/agent_conformance.py).

For every pinned agent (`upstream.profiles`: each profile brings its oracle folder), over every
bundled recording and every real session of ../shared/data (the foreign formats imported at test
time, the pi fixtures also as they are, v1), at keepRecentTokens 20000, 2000 and 500: the context
at the file's leaf and before every user message, each message's estimate, and the compaction cut
at each setting must equal what the agent's own code gives. A new profile is checked here by
adding it; nothing in this file names one.

Without node or an oracle's `npm ci` these tests skip with the command; under CI=true they fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_conformance import KEEPS, Tally, compare_file
from replaylab.agents import rules_of
from replaylab.oracles.compare import message_as_pi_holds_it
from replaylab.transcript import load_transcript
from replaylab.upstream.profiles import profiles
from repo_paths import REPO_ROOT

BUNDLED = sorted((REPO_ROOT / "recordings" / "helpdesk").glob("*.jsonl"))
#: the sources of ../shared/data beyond those `qa.sweep.import_shared_data` reads
EXTRA_SOURCES = (
    ("tau2-bench", "tau2-bench-extra"),
    ("claude-code", "claude-code-fasthooks/sessions/sample_main_transcript.jsonl"),
)
PROFILES = sorted(profiles())


def _conforms(oracle, files: list[Path]) -> Tally:
    tally = Tally()
    for path in files:
        compare_file(oracle, path, tally, KEEPS)
    print(f"{oracle.profile.name}:\n{tally.note()}")
    return tally


def _session_conforms(oracle, path: Path, lines: list[dict]) -> Tally:
    """`_conforms` of one session written from its JSON lines (header first) to `path`."""
    import orjson

    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return _conforms(oracle, [path])


@pytest.mark.parametrize("name", PROFILES)
def test_bundled_recordings_rebuild_estimate_and_cut_as_the_agent_does(name: str, agent_oracles) -> None:
    tally = _conforms(agent_oracles(name), [p for p in BUNDLED if ".sub-" not in p.name])
    assert tally.counts["windows"] >= 150 and tally.counts["cuts"] == 3 * tally.counts["windows"]
    assert not tally.differences(), tally.note()


@pytest.fixture(scope="module")
def real_files(shared_data: Path, swept_sessions: list, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Every real session: imported into a scratch folder (never the repository), and the pi
    fixtures as they are."""
    from replaylab.importers import import_sessions, write_session

    scratch = tmp_path_factory.mktemp("conformance-real")
    files = [Path(s.path) for s in swept_sessions]
    for kind, relative in EXTRA_SOURCES:
        source = shared_data / relative
        if source.exists():
            for session in import_sessions(kind, source):
                write_session(session, scratch / kind)
            files += sorted((scratch / kind).glob("*.jsonl"))
    return files + sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))


@pytest.mark.realdata
@pytest.mark.slow
@pytest.mark.parametrize("name", PROFILES)
def test_real_sessions_rebuild_estimate_and_cut_as_the_agent_does(name: str, agent_oracles, real_files) -> None:
    tally = _conforms(agent_oracles(name), real_files)
    assert tally.counts["files"] == len(real_files) >= 600
    assert not tally.differences(), tally.note()


@pytest.mark.parametrize("name", PROFILES)
def test_a_branch_summary_is_rebuilt_as_the_agent_does(name: str, agent_oracles, tmp_path: Path) -> None:
    """A session that came back from a branch: its `branchSummary` message carries the entry's time
    as epoch milliseconds (`new Date(timestamp).getTime()`), in every agent, to the millisecond."""

    def entry(entry_id: str, parent: str | None, **body) -> dict:
        return {"id": entry_id, "parentId": parent, "timestamp": "2026-03-01T10:00:00.123Z", **body}

    lines = [
        {"type": "session", "version": 3, "id": "branchy", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"},
        entry("u1", None, type="message", message={"role": "user", "content": "first try"}),
        entry("a1", "u1", type="message", message={"role": "assistant", "content": [{"type": "text", "text": "a"}]}),
        entry("b1", "u1", type="branch_summary", fromId="a1", summary="tried a; went back"),
        entry("u2", "b1", type="message", message={"role": "user", "content": "second try"}),
        entry("a2", "u2", type="message", message={"role": "assistant", "content": [{"type": "text", "text": "b"}]}),
        entry("u3", "a2", type="message", message={"role": "user", "content": "and then"}),
    ]
    tally = _session_conforms(agent_oracles(name), tmp_path / "branchy.jsonl", lines)
    assert tally.counts["windows"] == 3 and tally.counts["messages"] >= 8
    assert not tally.differences(), tally.note()


@pytest.mark.parametrize("name", PROFILES)
def test_fields_of_other_types_are_rebuilt_as_the_agent_does(name: str, agent_oracles, tmp_path: Path) -> None:
    """Entry timestamps in epoch milliseconds (on a message, a custom message, a branch summary
    and a compaction whose `details` is a list) or null, a message timestamp as an ISO string,
    stop reasons that are a number and a list, and a tool result whose `isError` is 0. pi checks
    no field's type: it keeps every entry, and a branch summary's or custom message's context
    message gets the entry's time as `new Date(timestamp).getTime()`. OpenClaw's entry schema
    wants `timestamp` a string when present and `isError` a boolean: it keeps those entries
    opaque, off every path and context, so its compaction is no boundary there. replaylab's windows, estimates and cuts under
    each agent's rules are that agent's, at leaves every agent knows."""

    def entry(entry_id: str, parent: str | None, stamp: object, **body) -> dict:
        return {"id": entry_id, "parentId": parent, "timestamp": stamp, **body}

    def message(role: str, text: str, stamp: object = 1772359200000) -> dict:
        content = text if role == "user" else [{"type": "text", "text": text}]
        return {"role": role, "content": content, "timestamp": stamp}

    long = " and then some more words about the order" * 30
    call = {"type": "toolCall", "id": "call_5", "name": "get_order", "arguments": {"order_id": "W1001"}}
    calling = {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1772359200000}
    # `isError: 0`: pi holds 0 (pydantic's lax bool would make it false); OpenClaw's schema wants a boolean
    result = {
        "role": "toolResult",
        "toolCallId": "call_5",
        "toolName": "get_order",
        "isError": 0,
        "content": [{"type": "text", "text": "W1001: pending"}],
        "timestamp": 1772359200000,
    }
    iso = "2026-03-01T10:00:00.000Z"
    lines = [
        {"type": "session", "version": 3, "id": "odd-types", "timestamp": 1772359200000, "cwd": "/w"},
        entry("u1", None, 1772359200123, type="message", message=message("user", "first" + long)),
        entry("a1", "u1", iso, type="message", message={**message("assistant", "a" + long), "stopReason": -1}),
        entry("u2", "a1", iso, type="message", message=message("user", "second" + long, iso)),
        entry("c1", "u2", 1772359202500, type="custom_message", customType="note", content="noted", display=True),
        entry("a2", "c1", iso, type="message", message=message("assistant", "b" + long)),
        entry("u3", "a2", iso, type="message", message=message("user", "third" + long)),
        entry("a3", "u3", None, type="message", message=message("assistant", "c" + long)),
        entry("b1", "a3", 1772359203000, type="branch_summary", fromId="a3", summary="came back"),
        entry(
            "k1",
            "b1",
            1772359204000,
            type="compaction",
            summary="Three questions.",
            firstKeptEntryId="u3",
            tokensBefore=900,
            details=["a hook's own details", 1],
        ),
        entry("t1", "k1", iso, type="thinking_level_change", thinkingLevel="high"),
        entry("u4", "t1", iso, type="message", message=message("user", "last" + long)),
        entry("a4", "u4", iso, type="message", message={**message("assistant", "d" + long), "stopReason": ["stop"]}),
        entry("a5", "a4", iso, type="message", message=calling),
        entry("r5", "a5", iso, type="message", message=result),
        entry("a6", "r5", iso, type="message", message=message("assistant", "e" + long)),
    ]
    tally = _session_conforms(agent_oracles(name), tmp_path / "odd-types.jsonl", lines)
    # pi: 2 + 5 + 4 (the summary on) + 9; OpenClaw without u1, c1, a3 (a null timestamp), b1, the
    # boundary and r5 (isError not a boolean): 1 + 3 + 4 + 8
    assert tally.counts["windows"] == 4 and tally.counts["messages"] == (16 if name.startswith("openclaw") else 20)
    assert not tally.counts["agent errors"] and not tally.differences(), tally.note()


@pytest.mark.parametrize("name", PROFILES)
def test_flags_of_other_types_are_read_as_the_agent_reads_them(name: str, agent_oracles, tmp_path: Path) -> None:
    """Flags and printed fields that are not the type their agent writes: a bash execution whose
    `cancelled` is null, `truncated` "yes", `exitCode` "2" and `fullOutputPath` 5, one whose
    `excludeFromContext` is the string "true", a thinking block whose `redacted` is 1 (and signature
    7), an assistant whose `api`, `provider`, `model` and text signature are not strings, an errored
    assistant whose `errorMessage` is an object, a custom message whose `display` is "true", a
    compaction whose `fromHook` is 2 and `tokensBefore` 900.5, and one whose `tokensBefore` is
    "1200". pi checks none: it keeps every entry, and its summary message holds `tokensBefore` as
    written. OpenClaw's entry schema wants a custom message's `display` a boolean and a compaction's
    `tokensBefore` a number (those entries are kept aside), and it leaves a message out only for
    `excludeFromContext === true`. replaylab read them through pydantic's lax bool, int and str:
    null, 2, an object or 2.5 failed and skipped the entry, cutting the path there, "true" became
    true and "1200" 1200, and the summaries held `int(tokensBefore)`."""

    def entry(entry_id: str, parent: str | None, **body) -> dict:
        return {"id": entry_id, "parentId": parent, "timestamp": "2026-03-01T10:00:00.000Z", **body}

    def said(role: str, text: str, **more) -> dict:
        content = text if role == "user" else [{"type": "text", "text": text}]
        return {"role": role, "content": content, "timestamp": 1772359200000, **more}

    def bash(command: str, **flags) -> dict:
        return {"role": "bashExecution", "command": command, "output": "ok", "timestamp": 1772359200000, **flags}

    long = " and then some more words about the order" * 30
    thinking = {"type": "thinking", "thinking": "hidden" + long, "redacted": 1, "thinkingSignature": 7}
    lines = [
        {"type": "session", "version": 3, "id": "odd-flags", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"},
        entry("u1", None, type="message", message=said("user", "first" + long)),
        entry("a1", "u1", type="message", message={**said("assistant", "a" + long), "content": [thinking]}),
        entry("x1", "a1", type="message", message=bash("make", cancelled=None, truncated="yes", exitCode="2", fullOutputPath=5)),
        entry("u2", "x1", type="message", message=said("user", "second" + long)),
        entry("e2", "u2", type="message", message=said("assistant", "", stopReason="error", errorMessage={"code": 529})),
        entry("a2", "e2", type="message", message={
            **said("assistant", "b" + long), "api": 1, "provider": ["p"], "model": {"id": "m"},
            "content": [{"type": "text", "text": "b" + long, "textSignature": {"sig": 1}}],
        }),
        entry("c1", "a2", type="custom_message", customType="note", content="noted" + long, display="true"),
        entry("x2", "c1", type="message", message=bash("ls", excludeFromContext="true", exitCode=2.5)),
        entry("u3", "x2", type="message", message=said("user", "third" + long)),
        entry("a3", "u3", type="message", message=said("assistant", "c" + long)),
        entry("k1", "a3", type="compaction", summary="Three questions.", firstKeptEntryId="u3", tokensBefore=900.5, fromHook=2),
        entry("u4", "k1", type="message", message=said("user", "last" + long)),
        entry("a4", "u4", type="message", message=said("assistant", "d" + long)),
        entry("k2", "a4", type="compaction", summary="Four.", firstKeptEntryId="u4", tokensBefore="1200"),
        entry("t2", "k2", type="thinking_level_change", thinkingLevel="high"),
        entry("u5", "t2", type="message", message=said("user", "after" + long)),
        entry("a5", "u5", type="message", message=said("assistant", "e" + long)),
    ]  # fmt: skip
    tally = _session_conforms(agent_oracles(name), tmp_path / "odd-flags.jsonl", lines)
    # at x1, x2, k1, t2 and a5: pi 3 + 8 + 3 + 3 + 5 (each summary on); OpenClaw without c1 (its
    # display) and without k2 (its tokensBefore a string), so k1 stays the boundary: 3 + 7 + 3 + 5 + 7
    assert tally.counts["windows"] == 5 and tally.counts["messages"] == (25 if name.startswith("openclaw") else 22)
    assert not tally.counts["agent errors"] and not tally.differences(), tally.note()


@pytest.mark.parametrize("name", PROFILES)
def test_an_entry_replaylab_cannot_read_stays_on_the_path_as_in_the_agents(
    name: str, agent_oracles, tmp_path: Path
) -> None:
    """Entries no model of replaylab can read — an assistant whose `content` is a number, a user
    message whose `content` is an object — mid-session. Both agents' paths run through them.
    OpenClaw's entry schema rejects them too and keeps them aside, so its windows, estimates and
    cuts are replaylab's at every leaf. pi keeps them in its context as written, which replaylab
    cannot: its windows differ at those two entries, and only there (the load's error says so).
    Before, replaylab skipped such an entry and every earlier one fell off the path."""

    def entry(entry_id: str, parent: str | None, message: dict) -> dict:
        stamp = "2026-03-01T10:00:00.000Z"
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}

    long = " and then some more words about the order" * 30
    lines = [
        {"type": "session", "version": 3, "id": "unreadable", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"},
        entry("u1", None, {"role": "user", "content": "first" + long, "timestamp": 1}),
        entry("a1", "u1", {"role": "assistant", "content": [{"type": "text", "text": "a" + long}], "timestamp": 1}),
        entry("u2", "a1", {"role": "user", "content": "second" + long, "timestamp": 1}),
        entry("a2", "u2", {"role": "assistant", "content": 7, "timestamp": 1}),
        entry("a3", "a2", {"role": "assistant", "content": [{"type": "text", "text": "b" + long}], "timestamp": 1}),
        entry("u3", "a3", {"role": "user", "content": {"text": "third"}, "timestamp": 1}),
        entry("a4", "u3", {"role": "assistant", "content": [{"type": "text", "text": "c" + long}], "timestamp": 1}),
        entry("u4", "a4", {"role": "user", "content": "last" + long, "timestamp": 1}),
        entry("a5", "u4", {"role": "assistant", "content": [{"type": "text", "text": "d" + long}], "timestamp": 1}),
    ]  # fmt: skip
    tally = _session_conforms(agent_oracles(name), tmp_path / "unreadable.jsonl", lines)
    # asked at a1, a4 and a5 (u3 is no user message replaylab can read); pi 0.73.1's own code fails at the last two
    assert tally.counts["windows"] + tally.counts["agent errors"] == 3, tally.note()
    if name.startswith("openclaw"):
        assert tally.counts["messages"] == 14 and not tally.counts["agent errors"] and not tally.differences(), (
            tally.note()
        )
        return
    # pi holds a2 and u3 as written (its own estimate then fails on them: "not iterable"), so its
    # windows from a4 on have those two messages more; at a1, before them, it is replaylab's
    found = [example for examples in tally.examples.values() for example in examples]
    assert found and all("@a4" in e or "@a5" in e for e in found), tally.note()
    assert all("5 messages vs 7" in e or "7 messages vs 9" in e for e in tally.examples.get("windows differ", [])), (
        tally.note()
    )


@pytest.mark.parametrize("name", PROFILES)
def test_safeguard_working_copies_are_rebuilt_as_the_agent_does_with_every_protected_entry(
    name: str, agent_oracles, tmp_path: Path
) -> None:
    """A safeguard (and manual) compaction that keeps nothing itself and restates the protected
    entries it summarized past after itself: every pinned agent rebuilds each working copy as
    replaylab does under its rules — at the leaf, before every user message, and its cuts — and its
    context holds every protected entry (by the recorded entry each restated one names)."""
    from replaylab.compaction import CompactParams, compact
    from replaylab.replay.tools.pack import load_tool_pack
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript import load_transcript
    from replaylab.transcript.restated import restated_sources

    oracle = agent_oracles(name)
    classifier = ToolClassifier.from_tool_pack(load_tool_pack("examples.helpdesk"))
    tally, restating = Tally(), 0
    for recording in [p for p in BUNDLED if ".sub-" not in p.name]:
        for mode in ("safeguard", "manual"):
            copy = tmp_path / mode / recording.name
            params = CompactParams(
                session_file=str(recording),
                compaction_mode=mode,
                context_tokens=3_400,
                reserve_tokens_floor=800,
                keep_recent_tokens=500,
                working_copy=str(copy),
            )
            result = compact(params, classifier=classifier)
            if not result.success:
                continue
            restating += result.first_kept_entry_id == result.compaction_event_id
            compare_file(oracle, copy, tally, KEEPS)
            sources = restated_sources(load_transcript(copy).leaf_path())
            shown = {sources.get(m.entry_id, m.entry_id) for m in oracle.view(copy).windows[0].context}
            assert set(result.protected_entry_ids) <= shown, (recording.name, mode)
    print(f"{name}: {restating} restating compactions\n{tally.note()}")
    assert restating >= 15 and not tally.differences(), tally.note()


@pytest.mark.parametrize("name", PROFILES)
def test_a_mutating_call_only_a_reset_showed_is_restated_where_the_agent_shows_it(
    name: str, agent_oracles, tmp_path: Path
) -> None:
    """OpenClaw shows a message marked `excludeFromContext` only in a reset's kept range; safeguard
    restates such a mutating call without its mark (`transcript.restated`). Every pinned agent
    rebuilds the working copy as replaylab does, and its context at the leaf shows the call."""
    from builders.transcripts import compact_reset_keeps_a_marked_rm
    from replaylab.transcript.restated import restated_sources

    oracle = agent_oracles(name)
    result, _, copy = compact_reset_keeps_a_marked_rm(tmp_path, name)
    assert result.success and result.findings == [], (result.error, result.findings)
    tally = _conforms(oracle, [copy])
    assert not tally.differences(), tally.note()
    sources = restated_sources(load_transcript(copy).leaf_path())
    shown = {sources.get(m.entry_id, m.entry_id) for m in oracle.view(copy).windows[0].context}
    assert set(result.protected_entry_ids) <= shown


V1_SESSION = (
    '{"type":"session","id":"v1-session","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}\n'
    '{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Refund order 1001"}}\n'
    "\n"
    '{"type":"message","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":'
    '[{"type":"text","text":"Done."}],"api":"x","provider":"x","model":"x","usage":{"input":1,"output":1,'
    '"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,'
    '"total":0}},"stopReason":"stop","timestamp":1767225602000}}\n'
    '{"type":"message","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"Thanks"}}\n'
)


RANDOM_PI_SESSIONS = Path(__file__).with_name("pi_random_sessions.mjs")


@pytest.mark.parametrize("name", [p for p in PROFILES if p.startswith("pi@")])
def test_random_trees_pi_writes_rebuild_estimate_and_cut_as_pi_does(name: str, agent_oracles, tmp_path: Path) -> None:
    """Sessions pi's own SessionManager writes from a seeded script (`pi_random_sessions.mjs`:
    branches, branch summaries, compactions keeping any entry, hidden custom messages, context
    edits, ...): at the leaf, before every user message and at entries of abandoned branches, the
    window, each estimate and every cut are pi's. A few seeds here; the script takes any number."""
    import subprocess

    from replaylab.oracles.agent import folder, node_executable

    oracle = agent_oracles(name)
    profile = oracle.profile
    out = tmp_path / "sessions"
    written = [node_executable(profile), str(RANDOM_PI_SESSIONS), str(folder(profile)), profile.npm_package, str(out)]
    subprocess.run([*written, "0", "4"], check=True, capture_output=True, timeout=120)
    files = sorted(out.glob("s*.jsonl"))
    tally = Tally()
    keeps = (3000, 800, 150)
    for path in files:
        compare_file(oracle, path, tally, keeps)
        transcript = load_transcript(path)
        elsewhere = [e.id for e in transcript.abandoned_entries()][:6]
        if elsewhere:
            view = oracle.view(path, leaves=elsewhere, keep_recent_tokens=keeps)
            for leaf, window in zip(elsewhere, view.windows):
                entries = transcript.path_to(leaf)
                mine = [(w.entry_id, message_as_pi_holds_it(w.message)) for w in rules_of(name).window(entries)]
                if mine != [(m.entry_id, m.message) for m in window.context]:
                    tally.add("abandoned windows differ", f"{path.name} @{leaf}")
    assert len(files) == 4 and tally.counts["windows"] >= 20, tally.note()
    assert not tally.differences() and not tally.counts["agent errors"], tally.note()


def _v1_with_ids(*, compaction_keeps: str | None) -> list[dict]:
    """A version-1 session whose entries carry ids and parents of their own — one dangling, one
    a second root, one id twice — and a compaction (naming an entry it keeps by id, or not)."""

    def say(entry_id: str, parent: str | None, role: str, text: str) -> dict:
        content = text if role == "user" else [{"type": "text", "text": text}]
        message = {"role": role, "content": content, **({"stopReason": "stop"} if role == "assistant" else {})}
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": message,
        }

    compaction = {"type": "compaction", "id": "c1", "parentId": "m4", "timestamp": "2026-01-01T00:00:02.000Z"}
    compaction |= {"summary": "The user asked for a refund of order 1001.", "tokensBefore": 10}
    if compaction_keeps is not None:
        compaction["firstKeptEntryId"] = compaction_keeps
    return [
        {"type": "session", "id": "v1-ids", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/work"},
        say("m1", None, "user", "Refund order 1001"),
        say("m2", "zz", "assistant", "Looking it up."),
        say("m3", "m2", "user", "Go on"),
        say("m4", "m3", "assistant", "Refunded."),
        compaction,
        say("m2", "c1", "user", "Thanks, and order 1002?"),
        say("m6", "m1", "assistant", "On it."),
    ]


@pytest.mark.parametrize("name", [p for p in PROFILES if p.startswith("pi@")])
@pytest.mark.parametrize("keeps", [None, "m3"], ids=["compaction keeps by index alone", "compaction names m3"])
def test_a_v1_session_with_ids_of_its_own_is_read_as_pis_migration_links_it(
    name: str, keeps: str | None, agent_oracles, tmp_path: Path
) -> None:
    """pi's `migrateV1ToV2` gives every entry of a version-1 file a fresh id and the entry before
    it as parent, whatever the file wrote: every window is pi's, and a compaction's own
    `firstKeptEntryId` names nothing after it (pi keeps nothing before that compaction)."""
    oracle, path = agent_oracles(name), tmp_path / "v1-ids.jsonl"
    tally = _session_conforms(oracle, path, _v1_with_ids(compaction_keeps=keeps))
    assert tally.counts["windows"] >= 2 and not tally.differences(), tally.note()
    # the window at the last line: the summary alone before the turn after it, in either case
    (theirs,) = oracle.view(path, leaves=[{"line": 8}]).windows
    ours = rules_of(name).window(load_transcript(path).leaf_path())
    assert [m.role for m in theirs.context] == ["compactionSummary", "user", "assistant"]
    assert [message_as_pi_holds_it(w.message) for w in ours] == [m.message for m in theirs.context]


def _unnamed(window) -> list[tuple[object, ...]]:
    """A window's messages without the ids of their entries."""
    return [(m.role, m.tokens, m.message) for m in window.context]


@pytest.mark.parametrize("name", PROFILES)
def test_a_window_asked_without_the_entries_is_the_same_window(name: str, agent_oracles, tmp_path: Path) -> None:
    """The window check asks for its windows without the file's entries (`entries=False`): each
    agent then leaves them out of its answer, and the windows are those it gives with them — at
    an entry id, and at a leaf named by its file line (a v1 file's entries get fresh ids from the
    agent's migration), which the agent still numbers the lines for."""
    oracle = agent_oracles(name)
    recording = BUNDLED[0]
    v1 = tmp_path / "v1.jsonl"
    v1.write_text(V1_SESSION, encoding="utf-8")
    for path, leaves in ((recording, []), (v1, [{"line": 4}, {"line": 2}])):
        whole = oracle.view(path, leaves=leaves)
        bare = oracle.view(path, leaves=leaves, entries=False)
        assert whole.entry_ids and bare.entry_ids == () and bare.entry_lines == ()
        assert all(w.error is None and w.context for w in bare.windows), name
        if path == recording:
            assert bare.windows == whole.windows, name
        else:  # fresh ids from each read's migration (pi 1.6.0's oracle draws them from the bytes)
            assert [_unnamed(w) for w in bare.windows] == [_unnamed(w) for w in whole.windows], name
    assert [m.role for m in bare.windows[0].context] == ["user", "assistant"]
    assert [m.role for m in bare.windows[1].context] == ["user"]
    assert oracle.ask({"file": str(recording), "entries": False}).get("entries") is None


def _rewound(variant: str) -> list[dict]:
    """A session OpenClaw rewound: its history copied, then a leaf control as OpenClaw's session
    history change writes it (`{type: "leaf", parentId: <last id>, targetId}`), and for some
    variants a turn continued from there."""

    def entry(entry_id: str, parent: str | None, **body) -> dict:
        return {"id": entry_id, "parentId": parent, "timestamp": "2026-03-01T10:00:00.123Z", **body}

    def say(entry_id: str, parent: str | None, role: str, text: str) -> dict:
        content = text if role == "user" else [{"type": "text", "text": text}]
        return entry(entry_id, parent, type="message", message={"role": role, "content": content})

    lines = [
        {"type": "session", "version": 3, "id": "rewound", "timestamp": "2026-03-01T10:00:00.000Z", "cwd": "/w"},
        say("u1", None, "user", "cancel order 1"),
        say("a1", "u1", "assistant", "order 1 cancelled"),
        say("u2", "a1", "user", "and order 2"),
        say("a2", "u2", "assistant", "order 2 cancelled"),
        say("u3", "a2", "user", "refund both"),
        say("a3", "u3", "assistant", "both refunded"),
    ]
    target = {"to-root": None, "unknown-target": "zz", "aside-control": "zz", "aside-label": "zz"}.get(variant, "a1")
    control = entry("c1", "a3", type="leaf", targetId=target)
    if variant.startswith("aside-"):  # on another branch, kept aside by OpenClaw: its load stays at a3
        control.update(parentId="a1", **({"type": "label", "label": "kept"} if variant == "aside-label" else {}))
    if variant in ("side", "bad-mode"):
        control["appendMode"] = "side" if variant == "side" else "sideways"
    lines.append(control)
    if variant == "continued":  # the next turn links to the control: it continues from the target
        lines += [say("u4", "c1", "user", "only order 1, then"), say("a4", "u4", "assistant", "done")]
    if variant == "append-parent":  # written to the control's append parent: read as following the target
        control["appendParentId"] = "a2"
        lines += [say("u4", "a2", "user", "only order 1, then"), say("a4", "u4", "assistant", "done")]
    if variant == "after-reset":  # aimed before the reset: OpenClaw ignores it
        lines[-1:-1] = [entry("r1", "a3", type="reset", reason="reset")]
        control["parentId"] = "r1"
    if variant == "inside-reset":  # aimed at a reply after the reset: OpenClaw follows it
        lines[-1:-1] = [
            entry("r1", "a3", type="reset", reason="reset"),
            say("u4", "r1", "user", "start over: order 3"),
            say("a4", "u4", "assistant", "order 3 found"),
            say("u5", "a4", "user", "cancel it"),
            say("a5", "u5", "assistant", "order 3 cancelled"),
        ]
        control.update(parentId="a5", targetId="a4")
    return lines


@pytest.mark.parametrize(
    "variant",
    [
        "to-a1",
        "to-root",
        "continued",
        "append-parent",
        "unknown-target",
        "side",
        "bad-mode",
        "after-reset",
        "inside-reset",
        "aside-control",
        "aside-label",
    ],
)
def test_an_openclaw_leaf_control_is_followed_as_openclaw_follows_it(
    variant: str, agent_oracles, tmp_path: Path
) -> None:
    """OpenClaw's rewind copies the history and ends it with a leaf control: the session resumes at
    its target (none: before the first entry), and a turn linked to the control continues from
    there. replaylab reads it so (the turns after the target are an abandoned branch); a control
    OpenClaw would not follow, replaylab reads by its own link, as OpenClaw does. Windows at the
    leaf and before every user message, estimates and cuts: OpenClaw's own."""
    from replaylab.agents import rules_of
    from replaylab.transcript import load_transcript

    oracle = agent_oracles("openclaw@2026.9.6")
    file = tmp_path / f"{variant}.jsonl"
    # windows before every user message of replaylab's path, with their estimates and cuts
    tally = _session_conforms(oracle, file, _rewound(variant))
    assert not tally.differences(), tally.note()
    # the window at the leaf: OpenClaw's own choice of leaf against replaylab's path to the last entry
    theirs = [m.entry_id for m in oracle.view(file).windows[0].context]
    path = load_transcript(file).leaf_path()
    assert [m.entry_id for m in rules_of(oracle.profile).window(path)] == theirs
    lazy = [e.id for e in load_transcript(file, lazy=True).leaf_path()]
    path = [e.id for e in path]
    assert path == lazy
    assert (
        path
        == {
            "to-a1": ["u1", "a1", "c1"],
            "to-root": ["c1"],
            "continued": ["u1", "a1", "c1", "u4", "a4"],
            "append-parent": ["u1", "a1", "u4", "a4"],
            "unknown-target": ["u1", "a1", "u2", "a2", "u3", "a3"],  # rejected: OpenClaw stays at a3
            "side": ["u1", "a1", "c1"],
            "bad-mode": ["u1", "a1", "u2", "a2", "u3", "a3"],  # rejected: OpenClaw stays at a3
            "after-reset": ["u1", "a1", "u2", "a2", "u3", "a3", "r1", "c1"],
            "inside-reset": ["u1", "a1", "u2", "a2", "u3", "a3", "r1", "u4", "a4", "c1"],
            "aside-control": ["u1", "a1", "u2", "a2", "u3", "a3"],
            "aside-label": ["u1", "a1", "u2", "a2", "u3", "a3"],
        }[variant]
    )
