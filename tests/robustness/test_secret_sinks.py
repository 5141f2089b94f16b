"""Each place a secret used to slip past the scrubber: the argument diff of a blocked call, the
summary's "Exact identifiers", the failure story pytest prints and writes into JUnit, the
command line's output, and the modes of the files replaylab writes.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from builders import secret_corpus as corpus
from replaylab.cassette import recorded_tool_interaction, write_cassette
from replaylab.compaction.summary.extractive import ExtractiveSummarizer
from replaylab.compaction.summary.request import SummaryRequest
from replaylab.defects import Code, Defect
from replaylab.differences import differences
from replaylab.replay.tools.nearest_call import nearest_call
from replaylab.report.story import failure_story
from replaylab.results import ItemResult
from replaylab.scrub import REDACTED, Scrubber
from replaylab.scrub.stream import ScrubbingStream
from replaylab.transcript.model import MESSAGE_ADAPTER

PASSWORD = corpus.PASSWORD
API_KEY = "abc123" + "def456ghi"
AWS_SECRET = corpus.AWS_SECRET
CLIENT_SECRET = corpus.CLIENT_SECRET
NESTED_PASSWORD = corpus.NESTED_PASSWORD
#: secrets OpenClaw's regex takes for identifiers (hex runs) wherever their name is not beside them
HEX_TOKEN, HEX_SESSION_TOKEN = "deadbeef" + "cafe1234", "feedface" + "99887766"
SECRETS = [PASSWORD, API_KEY, AWS_SECRET, CLIENT_SECRET, NESTED_PASSWORD, corpus.OPENAI, corpus.GITHUB]
SECRETS += [HEX_TOKEN, HEX_SESSION_TOKEN]


def _message(data: dict):
    return MESSAGE_ADAPTER.validate_python(data)


def test_the_argument_diff_of_a_blocked_call_shows_no_secret_and_still_names_what_changed() -> None:
    """A differing leaf moves a value away from the key that names it (`client_secret` becomes a
    path): both sides are scrubbed before the leaves are taken, and a change only in secrets is
    still named by its path, with redacted values."""
    recorded = {
        "order_id": "#W1001",
        "client_secret": "cs-" + "old-91",
        "auth": {"user": "bob", "password": "np-" + "old-12"},
        "note": f"use {corpus.OPENAI}",
    }
    attempted = {
        "order_id": "#W1002",
        "client_secret": CLIENT_SECRET,
        "auth": {"user": "bob", "password": NESTED_PASSWORD},
        "note": f"use {corpus.GITHUB}",
    }
    nearest = nearest_call("refund", attempted, None, None, [("refund", recorded)])
    assert nearest is not None
    text = str(nearest.detail("recorded"))
    assert [s for s in [*SECRETS, "cs-old-91", "np-old-12"] if s in text] == []
    leaves = {d.path: (d.expected, d.actual) for d in differences(recorded, attempted).leaves}
    assert leaves["order_id"] == ("#W1001", "#W1002")
    assert leaves["client_secret"] == (REDACTED, REDACTED)
    assert leaves["auth.password"] == (REDACTED, REDACTED)
    assert nearest.detail()["differences"] == differences(recorded, attempted).as_detail()["differences"]
    assert nearest.shown["arguments"]["order_id"] == "#W1001"


def test_exact_identifiers_never_lift_a_value_out_of_a_secret_assignment() -> None:
    messages = [
        _message(
            {
                "role": "user",
                "content": f'Log in with password: "{PASSWORD}", api_key={API_KEY} and '
                f"aws_secret_access_key={AWS_SECRET}; then refund order #W2378156 for mia_garcia_4516.",
            }
        ),
        _message(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "login",
                        "arguments": {
                            "user": "mia_garcia_4516",
                            "password": PASSWORD,
                            "api_token": HEX_TOKEN,
                            "client": {"client_secret": CLIENT_SECRET, "auth": {"password": NESTED_PASSWORD}},
                        },
                    }
                ],
                "stopReason": "toolUse",
            }
        ),
        _message(
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "login",
                "content": [
                    {
                        "type": "text",
                        "text": f'{{"token": "{corpus.GITHUB}", "session": "S-7781", "key": "{corpus.OPENAI}", '
                        f'"auth": {{"access_token": "{HEX_SESSION_TOKEN}"}}}}',
                    }
                ],
                "isError": False,
            }
        ),
        _message({"role": "user", "content": "Now refund it."}),
    ]
    summary = ExtractiveSummarizer().summarize(SummaryRequest(messages=messages))
    identifiers = summary.split("## Exact identifiers\n")[1].split("\n\n")[0]
    assert "#W2378156" in identifiers and "mia_garcia_4516" in identifiers and "S-7781" in identifiers
    assert [s for s in SECRETS if s in identifiers] == []
    assert REDACTED.strip("[]") not in identifiers  # masked out, not redacted into an identifier


def test_the_failure_story_is_scrubbed_names_and_ids_included() -> None:
    result = ItemResult(
        id=f"s::rec-{corpus.GITHUB_PAT}::scenario-{corpus.GOOGLE}",
        suite="s",
        scenario=f"scenario-{corpus.GOOGLE}",
        recording=f"rec-{corpus.GITHUB_PAT}.jsonl",
        outcome="failed",
        reason=f"mutating call blocked for {corpus.SLACK_BOT}",
        defects=[
            Defect.of(
                Code.SIDE_EFFECT_ESCAPED,
                "blocked",
                expected={"tool": "rotate", "arguments": {"password": PASSWORD}},
                actual={"tool": "rotate", "arguments": {"client_secret": CLIENT_SECRET}},
                tool_call_id=f"call.{corpus.HUGGING_FACE}",
                entry_id=f"e-{corpus.NPM}",
                tool="rotate",
            )
        ],
    )
    story = failure_story(result)
    planted = [
        corpus.GITHUB_PAT,
        corpus.GOOGLE,
        corpus.SLACK_BOT,
        PASSWORD,
        CLIENT_SECRET,
        corpus.HUGGING_FACE,
        corpus.NPM,
    ]
    assert [s for s in planted if s in story] == []
    assert "SIDE_EFFECT_ESCAPED" in story and "call.[REDACTED]" in story


def test_the_command_line_stream_scrubs_secrets_split_over_writes_and_lines() -> None:
    """print() writes a text and its newline apart; a PEM block may come one line per call: the
    stream scrubs whole blocks of lines, holding an open key block back until it ends."""
    target = io.StringIO()
    stream = ScrubbingStream(target, Scrubber())
    stream.write(f"wrote rec-{corpus.GITHUB[:10]}")
    stream.write(f"{corpus.GITHUB[10:]}.jsonl")
    stream.write("\n")
    for line in corpus.PEM.splitlines():
        stream.write(line + "\n")
        assert not any(part in target.getvalue() for part in corpus.PEM_LINES)
    stream.write(f"done {corpus.OPENAI}")
    stream.flush()
    written = target.getvalue()
    assert [s for s in [corpus.GITHUB, *corpus.PEM_LINES, corpus.OPENAI] if s in written] == []
    assert written.startswith("wrote rec-[REDACTED].jsonl\n") and written.endswith("done [REDACTED]")
    with pytest.raises(AttributeError):
        stream.buffer  # noqa: B018 (bytes written there would pass unscrubbed)


def test_a_cassette_is_created_private_and_never_through_a_planted_symlink(tmp_path: Path) -> None:
    old = os.umask(0)  # the most permissive umask: the mode must come from replaylab, not from it
    try:
        path = write_cassette(tmp_path / "a.cassette.yaml", [recorded_tool_interaction("t", {}, "ok")])
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    (tmp_path / "b.cassette.yaml").symlink_to(victim)
    with pytest.raises(FileExistsError):
        write_cassette(tmp_path / "b.cassette.yaml", [recorded_tool_interaction("t", {}, "ok")])
    assert victim.read_text(encoding="utf-8") == "keep me"
