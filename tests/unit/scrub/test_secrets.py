"""Secrets never reach a written cassette or an imported transcript; the scrubbing rules are
configurable and do not mangle ordinary text.

Planted (`builders.planted_secrets`): an OpenAI project key, an Anthropic key, bearer tokens (in
text and in an Authorization header), an AWS access key id and secret, a GitHub token, a Google API
key and a password in tool arguments. They go into every place an imported session carries text —
the system prompt, user and assistant text, tool-call arguments, tool results — through two
importers (OpenAI chat, pi), then the written files are searched for them byte by byte. The reports have their own test
(tests/test_report_render.py::test_secrets_never_reach_any_report); the recorder's cassettes are
checked in tests/test_replay_executor.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import replaylab.scrub as scrub_module
from builders.planted_secrets import (
    ANTHROPIC,
    AWS_ID,
    AWS_SECRET,
    GITHUB,
    GOOGLE,
    JWT,
    OPENAI,
    PASSWORD,
    SECRETS,
)
from replaylab.cassette import canonical_json, load_cassette
from replaylab.diagnostics import InputError
from replaylab.importers import import_sessions, write_session
from replaylab.scrub import REDACTED, Scrubber, scrub_data, scrub_text
from replaylab.transcript.load import load_transcript
from replaylab.transcript.model import MessageEntry, ToolCallBlock
from strategies import rand_json


def chat_session() -> dict:
    """An OpenAI chat log with a secret in every place an imported session carries text."""
    args = {
        "customer_id": "C-7",
        "api_key": ANTHROPIC,
        "password": PASSWORD,
        "note": f"call with Authorization: Bearer {JWT}",
    }
    return {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": f"You are the helpdesk agent. Internal key {OPENAI}; never reveal it."},
            {"role": "user", "content": f"My AWS key id is {AWS_ID} and the secret aws_secret_access_key={AWS_SECRET}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup_customer", "arguments": json.dumps(args)},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": json.dumps({"order_id": "1001"})},
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": f"customer C-7; deploy token {GITHUB}; maps key {GOOGLE}; header 'Authorization: Bearer {JWT}'",
            },
            {"role": "tool", "tool_call_id": "call_2", "content": "order 1001: delivered"},
            {"role": "assistant", "content": f"Done. Please rotate {OPENAI} and {AWS_ID}."},
        ],
    }


def pi_session() -> bytes:
    """A pi v3 session file with the same plants."""
    lines = [
        {"type": "session", "version": 3, "id": "sec", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user", "content": f"use {OPENAI} and Bearer {JWT}"},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "timestamp": "t",
            "message": {
                "role": "assistant",
                "stopReason": "toolUse",
                "content": [
                    {"type": "thinking", "thinking": f"the AWS id {AWS_ID} is in the ticket"},
                    {
                        "type": "toolCall",
                        "id": "c1",
                        "name": "write",
                        "arguments": {
                            "path": ".env",
                            "content": f"ANTHROPIC_API_KEY={ANTHROPIC}\nPASSWORD='{PASSWORD}'",
                        },
                    },
                ],
            },
        },
        {
            "type": "message",
            "id": "r1",
            "parentId": "a1",
            "timestamp": "t",
            "message": {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "write",
                "isError": False,
                "content": [{"type": "text", "text": f"wrote .env ({GITHUB}, {GOOGLE})"}],
            },
        },
        {
            "type": "message",
            "id": "a2",
            "parentId": "r1",
            "timestamp": "t",
            "message": {"role": "assistant", "stopReason": "stop", "content": [{"type": "text", "text": "Saved."}]},
        },
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


@pytest.fixture(params=["openai-chat", "pi"])
def imported(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path, bytes]:
    """(transcript, cassette, source bytes) of a session with planted secrets, imported."""
    kind = request.param
    if kind == "openai-chat":
        source = tmp_path / "chat.json"
        source.write_text(json.dumps(chat_session()), encoding="utf-8")
    else:
        source = tmp_path / "pi-session.jsonl"
        source.write_bytes(pi_session())
    data = source.read_bytes()
    assert OPENAI.encode() in data and JWT.encode() in data and GITHUB.encode() in data  # planted
    (session,) = list(import_sessions(kind, source))
    transcript, cassette = write_session(session, tmp_path / "out")
    assert source.read_bytes() == data  # the source is only read
    return transcript, cassette, data


def test_no_secret_reaches_the_imported_cassette_or_transcript(imported) -> None:
    transcript, cassette, _ = imported
    for path in (transcript, cassette, transcript.parent / "tool_classes.json"):
        text = path.read_bytes().decode("utf-8")
        leaked = [s for s in SECRETS if s in text]
        assert not leaked, (path.name, leaked)
    assert REDACTED in cassette.read_text(encoding="utf-8")
    assert REDACTED in transcript.read_text(encoding="utf-8")


def test_scrubbed_files_still_replay_each_other(imported) -> None:
    """Scrubbing must not break replay: every recorded call of the scrubbed transcript is served
    by the scrubbed cassette through the real replay executor (vcrpy playback), in order."""
    from replaylab.replay.tools.fail_closed import ToolExecutor
    from replaylab.safety.classify import ToolClassifier

    transcript_path, cassette, _ = imported
    transcript = load_transcript(transcript_path)
    assert [d for d in transcript.diagnostics if d.severity == "error"] == []
    calls = [
        block
        for entry in transcript.leaf_path()
        if isinstance(entry, MessageEntry)
        for block in getattr(entry.message, "content", [])
        if isinstance(block, ToolCallBlock)
    ]
    assert calls
    bodies = [i["request"]["body"] for i in load_cassette(cassette)]
    assert bodies == [canonical_json(call.arguments) for call in calls]
    executor = ToolExecutor(cassette, ToolClassifier())
    with executor:
        traces = [executor.execute(call, turn=1, step=i)[1] for i, call in enumerate(calls)]
    assert [t.source for t in traces] == ["cassette"] * len(calls)
    assert executor.defects == []


def test_cli_import_scrubs_too(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(chat_session()), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "replaylab.cli",
            "import",
            "--from",
            "openai-chat",
            str(source),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    written = b"".join(p.read_bytes() for p in (tmp_path / "out").iterdir()).decode("utf-8")
    assert REDACTED in written
    assert [s for s in SECRETS if s in written + done.stdout + done.stderr] == []


# ---------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    "text, kept",
    [
        (f"key {OPENAI} here", "key [REDACTED] here"),
        (f"x-api: {ANTHROPIC}", "x-api: [REDACTED]"),
        (f"Authorization: Bearer {JWT}", "Authorization: [REDACTED]"),
        (f"id={AWS_ID}.", "id=[REDACTED]."),
        (f"aws_secret_access_key = {AWS_SECRET}", "[REDACTED]"),
        (f"token {GITHUB}", "token [REDACTED]"),
        (f"{GOOGLE}", "[REDACTED]"),
        (f'"password": "{PASSWORD}"', '"password": "[REDACTED]"'),
        ("API_KEY=abc123def456ghi789", "API_KEY=[REDACTED]"),
        # an option named for a secret, its value after a space, on any program's command line
        ("openclaw gateway status --token 8800aa11bb22cc33dd", "openclaw gateway status --token [REDACTED]"),
        ("gh auth login --with-token 'ghx7Qv7Lm2Xp9Rt4'", "gh auth login --with-token '[REDACTED]'"),
        ("deploy --client-secret Zq81Lm5xTowl3", "deploy --client-secret [REDACTED]"),
        # a value after a secret's name runs on over `~ ! $ ^ @ : % | # *` (Azure AD secrets hold `Q~`)
        ("AZURE_CLIENT_SECRET=Zx98Q~abcDEF1234.ghiJKL5678_mnoPQR90 next", "AZURE_CLIENT_SECRET=[REDACTED] next"),
        ("DB_PASSWORD=hunter2!Secret#2024", "DB_PASSWORD=[REDACTED]"),
        # a key at a line's end takes no setting of the next line for its wrapped rest
        (
            f"GITHUB_TOKEN={GITHUB}\nPORT=3000\nNODE_ENV=production",
            "GITHUB_TOKEN=[REDACTED]\nPORT=3000\nNODE_ENV=production",
        ),
        # names of secrets that end in `_pass` or are an app's / a webhook's key
        ("SMTP_PASS=mailpass2024x", "SMTP_PASS=[REDACTED]"),
        ("APP_KEY=base64:Q29va2llU2VjcmV0MTIzNDU2Nzg5MA==", "APP_KEY=[REDACTED]"),
        # a URL's password may hold what the URL standard allows there raw
        ("postgres://admin:Pa$$w0rd!2024@db.internal:5432/app", "postgres://admin:[REDACTED]@db.internal:5432/app"),
        # the Bot API's address names the token in it
        (
            "GET https://api.telegram.org/bot1234567890:AAHk9xZ2mN4pQ7rT1vW3yB5dF8gJ0lS6uE/getMe",
            "GET https://api.telegram.org/bot[REDACTED]/getMe",
        ),
    ],
)
def test_default_patterns_redact_each_kind(text: str, kept: str) -> None:
    assert scrub_text(text) == kept
    assert scrub_text(kept) == kept  # idempotent: scrubbing twice changes nothing more


def test_the_runs_own_secrets_are_redacted_as_literals_in_every_spelling(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value with no secret's shape under a secret-named variable, or under a name a suite
    watches (`api_key_env`), is redacted as it is, JSON-escaped and URL-encoded; a short flag is not."""
    import urllib.parse

    from replaylab.scrub.literals import watch_environment

    secret_named, watched = 'owl3 /Zq81"Lm5xT', "crew-77Hb5Jc1/Gd6"
    monkeypatch.setenv("RL_UNIT_SERVICE_PASSWORD", secret_named)
    monkeypatch.setenv("RL_UNIT_WATCHED_LOGIN", watched)
    monkeypatch.setenv("RL_UNIT_DEBUG_TOKEN", "true")
    watch_environment(["RL_UNIT_WATCHED_LOGIN"])
    scrubber = Scrubber()
    for value in (secret_named, watched):
        for form in (
            value,
            json.dumps(value)[1:-1],
            urllib.parse.quote(value, safe=""),
            urllib.parse.quote_plus(value),
        ):
            assert scrubber.text(f"said: {form}.") == f"said: {REDACTED}.", form
    assert scrubber.text("verbose: true") == "verbose: true"


def test_a_runs_secret_beyond_ascii_is_found_by_the_clean_data_check() -> None:
    """A run's secret with letters beyond ASCII (upper case ones too) is in data's JSON as UTF-8,
    as orjson writes it, not `\\u`-escaped: the clean check finds it, and the data is redacted as
    its text is."""
    for secret in ("p\u00e4sswort-1234", "P\u00c4SSWORT-1234"):
        scrubber = Scrubber(literals=[secret])
        data = {"a": [f"x {secret} y"]}
        assert not scrubber.json_is_clean(orjson.dumps(data)), secret
        assert scrubber.data(data) == {"a": [f"x {REDACTED} y"]}, secret


@pytest.mark.parametrize(
    "text",
    [
        "const apiKey = options.getApiKey ?? defaultGetApiKey();",  # code, not a key (common in real sessions)
        '"apiKey": "OLLAMA_API_KEY"',  # the name of an environment variable
        "task-output-waiting-1770927708311",  # "sk-" inside a word (Claude Code task ids)
        "the desk-assistant-configuration-file",
        "password reset requested for ticket T-1001",
        "Bearer of bad news",
        "tool --api-key $API_KEY --token <token>",  # placeholders
        "llm --max-tokens 40000000 --token-count 12345678",  # options about tokens, not a token
        "mycli --secret-file ./config/secrets.json",  # the file a secret is in
        '<div class="sk-folding-cube-angle-rotate">',  # a CSS class: an `sk-` key holds a digit
        "boarding_pass: BP-20260512-LHR-0042",  # an airline's pass, no secret
        "continents:\nASIA\nNORTH_AMERICA\nSOUTH_AMERICA",  # `ASIA` ends a word, no key starts there
        # a name whose value is on the next line is code (grep output of a multi-line assignment)
        "agent-loop.ts:194:\tconst resolvedApiKey =\npackages/ai/src/agent/agent-loop.ts:195:\t\t(config.getApiKey",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert scrub_text(text) == text


def test_a_short_text_scrubbed_again_gets_the_same_answer_and_a_long_one_too() -> None:
    """A scrubber keeps what it made of each short text (report keys and words repeat in every
    item): the second time a secret is scrubbed it is still redacted, an ordinary word still kept."""
    scrubber = Scrubber()
    short, word, long = f"token {GITHUB}", "tokens", f"token {GITHUB} " + "x" * 80
    assert len(short) <= 64 < len(long)
    for _ in range(2):
        assert scrubber.text(short) == "token [REDACTED]" and scrubber.text(word) == word
        assert scrubber.text(long).startswith("token [REDACTED]") and GITHUB not in scrubber.text(long)
        assert scrubber.data({word: short}) == {word: "token [REDACTED]"}


def test_long_texts_scrubbed_again_keep_their_answers_within_the_bound(monkeypatch) -> None:
    """A long text asked again gets the answer it got (redacted still, ordinary kept), and the
    answers kept for long texts never hold more characters than the bound, the oldest going
    first: a run of thousands of items keeps only its latest texts."""
    monkeypatch.setattr(scrub_module, "LONG_TEXTS_CHARS", 2_000)
    scrubber = Scrubber()
    secret = f"token {GITHUB} " + "y" * 200
    plain = "an ordinary long text " * 20
    for _ in range(2):
        assert GITHUB not in scrubber.text(secret) and scrubber.text(secret).startswith("token [REDACTED]")
        assert scrubber.text(plain) == plain
    for n in range(40):  # distinct texts, more than the bound holds
        text = f"text {n} " + "z" * 300
        assert scrubber.text(text) == text
        assert scrubber._long_chars == sum(map(len, scrubber._long)) <= 2_000
    assert secret not in scrubber._long  # the oldest answers went first
    assert GITHUB not in scrubber.text(secret)  # and come back as they were
    huge = "q" * 1_000  # over a quarter of the bound: answered, never kept
    assert scrubber.text(huge) == huge and huge not in scrubber._long


def test_data_scrubbing_matches_text_scrubbing_of_its_json() -> None:
    """A secret under a secret-named key is redacted in the data exactly as the text rule would
    redact the JSON text, so the transcript's arguments and the cassette body agree."""
    args = {
        "api_key": "abcdefghijklmnop",
        "password": PASSWORD,
        "auth": {"Authorization": f"Bearer {JWT}"},
        "path": "/srv/app",
        "n": 3,
    }
    scrubbed = scrub_data(args)
    assert scrubbed == {
        "api_key": REDACTED,
        "password": REDACTED,
        "auth": {"Authorization": REDACTED},
        "path": "/srv/app",
        "n": 3,
    }
    assert scrub_text(canonical_json(scrubbed)) == canonical_json(scrubbed)
    assert scrub_text(canonical_json(args)).count(REDACTED) == 3


@settings(
    max_examples=300, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    where=st.integers(0, 4),
    secret=st.sampled_from(
        [OPENAI, ANTHROPIC, f"Bearer {JWT}", AWS_ID, f"aws_secret_access_key={AWS_SECRET}", GITHUB, GOOGLE]
    ),
)
def test_no_planted_secret_survives_scrub_data(seed: int, secret: str, where: int) -> None:
    """Any JSON value with a secret planted as a value, inside a text, deep in a list, under a
    header-like key or a secret-named key: after scrub_data, its JSON text does not hold it."""

    rnd = random.Random(seed)
    value = rand_json(rnd)
    planted = [
        secret,
        f"see {secret} now",
        [1, {"k": f"x {secret}"}],
        {"Authorization": f"token {secret}"},
        {"client_secret": secret.split()[-1].split("=")[-1]},
    ][where]
    data = {"payload": value, "extra": planted} if rnd.random() < 0.5 else [value, planted]
    text = orjson.dumps(scrub_data(data), option=orjson.OPT_NON_STR_KEYS).decode()
    value = secret.split()[-1].split("=")[-1]
    assert value not in text and value[-12:] not in text  # not even a tail of it


class EveryRuleEverywhere(Scrubber):
    """The reference: every rule run over every string, no hint, no anchoring, no clean-data
    shortcut (the rules are the same objects, only the fast paths are gone)."""

    def _candidates(self, value):
        return self.rules, None, None

    def _clean(self, value, asked=None):
        return False


def _walk_everything(value):
    return EveryRuleEverywhere().data(value)


@settings(
    max_examples=300, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    where=st.integers(0, 6),
    secret=st.sampled_from(
        [
            OPENAI,
            ANTHROPIC,
            f"Bearer {JWT}",
            AWS_ID,
            f"aws_secret_access_key={AWS_SECRET}",
            GITHUB,
            GOOGLE,
            f"password={PASSWORD}",
        ]
    ),
)
def test_the_clean_data_fast_path_gives_what_scrubbing_every_string_gives(seed: int, where: int, secret: str) -> None:
    """`Scrubber.data` skips containers whose JSON text holds no hint; on data with and without
    planted secrets (anywhere, in keys, under header names, deep) it equals the full walk."""

    rnd = random.Random(seed)
    value = rand_json(rnd)
    planted = [
        None,
        secret,
        [1, {"k": f"x {secret}"}],
        {"Cookie": "a=b"},
        {"my_password": "hunter2hunter2x"},
        {"nested": [{"deep": [f"{secret} tail"]}]},
        {f"key {secret}": 1},
    ][where]
    data = {"payload": value, "extra": planted, "more": [rand_json(rnd) for _ in range(3)]}
    assert scrub_data(data) == _walk_everything(data)


@pytest.mark.parametrize(
    "text",
    [
        "\u017fecret=abcdefghijkl1234",
        "ap\u0131_key=abcdefghijkl1234",
        '\u212aey: api_\u212aey="abcdefghijklmnop"',
        "PA\u017f\u017fWORD=abcdefghijkl1234",
    ],
)
def test_letters_ignorecase_folds_to_ascii_do_not_slip_past_the_fast_path(text: str) -> None:
    """Python's IGNORECASE matches İ ı ſ K to ASCII letters, so `ſecret=…` matches the secret
    pattern without holding the ASCII hint: the fast paths (text and data) must still scan it."""
    slow = EveryRuleEverywhere()
    assert REDACTED in slow.text(text)
    assert scrub_text(text) == slow.text(text)
    assert scrub_data({"log": [text]}) == {"log": [slow.text(text)]}


def test_the_one_pass_checks_find_what_searching_for_each_needle_finds() -> None:
    """The fast paths search all hints in one pass (an Aho-Corasick automaton, overlapping
    matches): for texts holding hints in any case, header names, secret-name needles, the case
    specials, their neighbours, and none of them, the rules chosen are those whose hints a plain
    search finds, and the clean-blob check's first step finds a needle exactly when the plain
    search, needle by needle, does."""
    from replaylab.scrub import CASE_SPECIALS
    from replaylab.scrub.names import NAME_NEEDLES

    plain, corp = Scrubber(), Scrubber(extra_headers=["X-Corp-Auth"])
    hints = sorted({h for rule in plain.rules for h in rule.hints or ()})

    def chosen(value: str) -> set[str]:
        if any(c in value for c in CASE_SPECIALS):
            return {rule.label + rule.source + rule.regex.pattern for rule in plain.rules}
        lowered = value.lower()
        return {
            rule.label + rule.source + rule.regex.pattern
            for rule in plain.rules
            if any(h in lowered for h in rule.hints or ())
        }

    def blob_is_clean(scrubber: Scrubber, blob: bytes) -> bool:
        lowered = blob.lower()
        needles = [*hints, *NAME_NEEDLES, *scrubber.headers]
        return not (any(n.encode() in lowered for n in needles) or any(c.encode() in blob for c in CASE_SPECIALS))

    rnd = random.Random(7)
    needles = [*hints, *NAME_NEEDLES, *plain.headers, "x-corp-auth", *CASE_SPECIALS]
    near = ["sk", "k-", "bear", "secre", "passwor", "api key", "gh_", "x-corp", "\u0130", "i\u0307", "k", "tas"]
    filler = ["a", " ", '"', ":", "{", "é", "中", "\u2026", "\u0100", "\u017e", "-", "_", "\n", "t"]
    for _ in range(3000):
        parts = [rnd.choice(filler) for _ in range(rnd.randint(0, 8))]
        for pool in (near, needles, needles):
            if rnd.random() < 0.3:
                word = rnd.choice(pool)
                parts.insert(rnd.randint(0, len(parts)), "".join(c.upper() if rnd.random() < 0.5 else c for c in word))
        text = "".join(parts)
        rules, _, _ = plain._candidates(text)
        assert {rule.label + rule.source + rule.regex.pattern for rule in rules} == chosen(text), text
        blob = text.encode()
        for scrubber in (plain, corp):
            assert (not scrubber._needle_hits(blob)) == blob_is_clean(scrubber, blob), (text, scrubber.headers)
    assert corp.json_is_clean(b'{"X-CORP-AUTH":1}') is False
    assert Scrubber(extra_headers=["X-Corp-Sess"]).json_is_clean(b'{"X-CORP-SESS":1}') is False
    assert plain.json_is_clean(b'{"X-CORP-SESS":1}') is True
    assert plain._needle_hits(b'{"a":"task-output-1"}')  # "sk-" inside a word is still a hint


def test_extra_headers_are_found_by_the_clean_data_check() -> None:
    """An extra header name keeps the fast path on: the one-pass check must look for it too."""
    scrubber = Scrubber(extra_headers=["X-Corp-Auth"])
    data = {"run": [{"headers": {"X-Corp-Auth": "corp-token-value"}}], "other": "clean text"}
    assert scrubber.data(data) == {"run": [{"headers": {"X-Corp-Auth": REDACTED}}], "other": "clean text"}


# ---------------------------------------------------------------- the clean-data check on reports


class WalkEveryContainer(Scrubber):
    """The node-by-node scrub: every container walked, every string scrubbed by the rules its
    hints choose, no clean-data shortcut (what `json_is_clean` must answer for)."""

    def _clean(self, value, asked=None):
        return False


def _j(*parts: str) -> str:
    return "".join(parts)


def rule_positives() -> list[str]:
    """Texts each holding a secret some rule redacts: the scrub tests' corpora (the planted keys,
    the secret corpus's user turn), and one text for each rule they leave out (assembled from
    pieces: no literal key in the repository)."""
    from builders import secret_corpus as corpus
    from repo_paths import TESTS

    chars = "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3Fg5Js0Ay" * 4
    pem_line = corpus.PEM_LINES[0]
    keys = ("DSA", "EC", "OPENSSH", "PGP", "", "RSA", "SSH2 ENCRYPTED")
    markers = [f"{k} PRIVATE KEY".strip() + (" BLOCK" if k == "PGP" else "") for k in keys]
    return [
        *(TESTS / "data" / "bad" / "planted-keys.txt").read_text(encoding="utf-8").splitlines(),
        corpus.user_text(),
        f"key {OPENAI} here",
        f"Authorization: Basic {corpus.BASIC}",
        f"Cookie: sid={corpus.COOKIE}",
        f"X-Access-Token: {corpus.ACCESS_TOKEN_HEADER}",
        f'password: "{PASSWORD}"',
        f'{{\\"client_secret\\": \\"{corpus.CLIENT_SECRET}\\"}}',
        "API_KEY=abc123def456ghi789",
        f"the password is {corpus.PASSWORD}",
        f"https://api.example.com/cb?access_token={corpus.QUERY_TOKEN}&page=2",
        f"Bearer {JWT}",
        f"curl -b 'sid={corpus.COOKIE}' https://api.example.com",
        f"curl -u admin:{corpus.URL_PASSWORD} https://api.example.com",
        f"openclaw gateway status --token {chars[:24]}",
        f"postgres://admin:{corpus.URL_PASSWORD}@db.internal:5432/app",
        f"Set: sid={corpus.SET_COOKIE}; Path=/; HttpOnly",
        _j("ya29", ".", chars[:30]),
        # vendor tokens (gitleaks' prefixed rules), assembled from pieces
        _j("gsk", "_", chars[:48]),
        _j("lin", "_api_", chars[:40]),
        _j("shpat", "_", "9f3c1e7a2b4d6f8091a3c5e7f9b1d3a5"),
        _j("dop", "_v1_", "9f3c1e7a2b4d6f8091a3c5e7f9b1d3a5" * 2),
        _j("hvs", ".", chars[:100]),
        _j("PMAK", "-", chars[:40]),
        _j("sm", "_pat_", chars[:16]),
        _j("abcdefgh12345z", ".atlasv1.", chars[:64]),
        _j("sha256", "~", chars[:43]),
        _j("Zx9", "8Q~", chars[:34]),
        _j("https://api.telegram.org/bot", "1234567890:A", chars[:34], "/getMe"),
        _j("https://acme.webhook.office.com/webhookb2/", chars[:40]),
        _j("GOCSPX", "-", chars[:28]),
        _j("whsec", "_", chars[:32]),
        _j("aws_key = '", chars[:40], "'"),
        _j("AccountKey", "=", (chars * 3)[:88]),
        _j("ghp", "_", chars[:36]),
        *(_j(prefix, "-", chars[:30]) for prefix in ("glpat", "gldt", "glft", "glsoat", "glrt")),
        _j("GR1348941", chars[:30]),
        _j("glcbt", "-", chars[:30]),
        _j("glimt", "-", chars[:25]),
        _j("glptt", "-", chars[:40]),
        _j("glagent", "-", chars[:60]),
        _j("gloas", "-", chars[:64]),
        _j("0123456789abcdef" * 2, "-us", "12"),
        _j("//registry.npmjs.org/:_authToken=", corpus.NPM),
        _j("pypi-AgEIcHlwaS5vcmc", chars[:80]),
        _j("pypi-AgENdGVzdC5weXBpLm9yZw", chars[:80]),
        _j("SG", ".", chars[:22], ".", chars[:43]),
        _j("xoxb", "-1234-5678-", "abcdef0123"),
        _j("https://hooks.slack", ".com/services/", "T0KX7LM2Q/B0P9RT4WZ/", chars[:24]),
        _j("sq0csp", "-", chars[:43]),
        _j("rk_", "live_", chars[:24]),
        *(f"-----BEGIN {m}-----\n{pem_line}\n-----END {m}-----" for m in markers),
        *(f"-----BEGIN {m}-----\n{pem_line}\n" for m in markers),  # cut before its END line
        f"PuTTY-User-Key-File-2: ssh-rsa\n{pem_line}\n",
    ]


#: key names whose value is secret whatever it looks like, in the spellings reports and
#: cassettes carry
SECRET_KEYS = (
    "api_key",
    "apiKey",
    "password",
    "client_secret",
    "access_token",
    "x-api-token",
    "X-Amz-Security-Token",
    "Authorization",
    "TOKEN",
    "auth",
    "private-key",
)


@pytest.fixture(scope="module")
def report_item() -> dict:
    """The report data of a bundled suite's item (windows, traces, `tokens_before`, `tokens`)."""
    from replaylab.qa.pipeline import RunOptions, run_item
    from replaylab.suite import load_suite
    from repo_paths import REPO_ROOT

    suite = load_suite(REPO_ROOT / "suites" / "overflow.yaml")
    item = run_item(suite.scenarios[0], suite.recordings[0], RunOptions())
    return item.model_dump(mode="json")


def _containers(value) -> list:
    found = []
    if isinstance(value, (dict, list)):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            found.extend(_containers(item))
    return found


def _planted(report: dict, rnd: random.Random, key: str | None, value) -> dict:
    """A copy of `report` with `value` put into one of its containers chosen by `rnd` (under
    `key` in a mapping; appended to a list when `key` is None and one is chosen)."""
    data = orjson.loads(orjson.dumps(report))
    containers = [c for c in _containers(data) if key is not None or isinstance(c, list)]
    where = rnd.choice(containers)
    if isinstance(where, dict):
        where[key if key is not None else "planted"] = value
    else:
        where.append({key: value} if key is not None else value)
    return data


def test_the_rule_positives_hold_a_secret_of_every_rule() -> None:
    """The corpus the clean-data tests plant holds, for each default rule, a text that rule
    redacts (a new rule without one fails here), and each text is changed by scrubbing."""
    scrubber = Scrubber()
    texts = rule_positives()
    missing = [
        (i, rule.label)
        for i, rule in enumerate(scrubber.rules)
        if not any(scrubber._rule_spans(rule, t, None, None) for t in texts)
    ]
    assert missing == []
    assert [t for t in texts if scrubber.text(t) == t] == []


@pytest.mark.parametrize("index", range(len(rule_positives())))
def test_a_report_holding_any_rules_secret_is_never_clean(report_item: dict, index: int) -> None:
    """For each rule's secrets, planted in a report-shaped blob as a value, a list item, a key and
    JSON-escaped inside a string (a tool's arguments): whenever the node-by-node scrub changes the
    data, `json_is_clean` says so, and the fast path scrubs it as the walk does."""
    text = rule_positives()[index]
    rnd = random.Random(index)
    walk, scrubber = WalkEveryContainer(), Scrubber()
    plantings = [
        ("text", text),
        (None, text),
        (text, 1),
        ("arguments", json.dumps({"note": text})),
    ]
    for key, value in plantings:
        data = _planted(report_item, rnd, key, value)
        blob = orjson.dumps(data)
        walked = walk.data(data)
        if key == "text":
            assert walked != data, text  # a rule's positive as a plain value is always redacted
        if walked != data:
            assert not scrubber.json_is_clean(blob), (key, text)
        assert scrubber.data(data) == walked, (key, text)


@settings(
    max_examples=200, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 2**32 - 1), secret=st.integers(0, 10_000), name=st.sampled_from(SECRET_KEYS))
def test_a_planted_secret_under_a_secret_name_is_never_clean(
    report_item: dict, seed: int, secret: int, name: str
) -> None:
    """Every planted key and secret the scrub tests use, under a secret name anywhere in a
    report: the blob is not clean, and the scrubbed report no longer holds it."""
    from builders import secret_corpus as corpus

    values = [*SECRETS, *(s.value for s in corpus.SECRETS), *(f for s in corpus.SECRETS for f in s.encoded)]
    value = values[secret % len(values)]
    data = _planted(report_item, random.Random(seed), name, value)
    assert not Scrubber().json_is_clean(orjson.dumps(data))
    scrubbed = scrub_data(data)
    assert scrubbed != data and value not in orjson.dumps(scrubbed).decode()


def test_a_real_report_blob_is_clean_though_it_holds_needles(report_item: dict) -> None:
    """A bundled suite's item report names `tokens_before`, `tokens`, `totalTokens`, paths and
    URLs (each holding a hint or a secret name's needle) and no secret: the clean check says so,
    and scrubbing returns the same data, uncopied (the fast path, not a walk)."""
    scrubber = Scrubber()
    blob = orjson.dumps(report_item)
    assert b'"tokens_before"' in blob and b'"tokens"' in blob
    assert scrubber._needle_hits(blob)  # the first step alone would walk it
    assert scrubber.json_is_clean(blob)
    assert scrubber.data(report_item) is report_item
    assert WalkEveryContainer().data(report_item) == report_item


@pytest.mark.parametrize(
    "blob, clean",
    [
        (b'{"tokens": 3, "note": "sk-"}', True),  # a hint, no secret
        (b'{"tokens": 3, "note": "sk-proj-Zx81kLmNoPqRsTuVwXyZ01"}', False),
        (b'{"password": 3}', False),  # a secret name as a key: the walk redacts what it holds
        (b'{"note": "password"}', True),  # the same name as a value is a word
        (b'{"a": "x"} "sk-proj-Zx81kLmNoPqRsTuVwXyZ01"', False),
        (b'{"a": 1, "b": sk-proj}', False),  # a needle outside every string: not JSON, not clean
        # a letter escaped hides the hint from the first step, the walk reads the decoded text
        (b'{"a": "\\u0073k-proj-Zx81kLmNoPqRsTuVwXyZ01"}', False),
        (b'{"a": "\\u001b[0m 12 tokens"}', True),  # a control character escaped, as orjson writes it
    ],
)
def test_the_clean_check_asks_each_string_holding_a_needle(blob: bytes, clean: bool) -> None:
    assert Scrubber().json_is_clean(blob) is clean


# ---------------------------------------------------------------- configuration


def test_extra_patterns_and_headers_are_applied() -> None:
    scrubber = Scrubber(extra_patterns=[r"corp-[0-9]{6}", r"(?i)internal ticket \d+"], extra_headers=["X-Corp-Auth"])
    assert scrubber.text("corp-123456 / Internal Ticket 42") == "[REDACTED] / [REDACTED]"
    assert scrubber.data({"x-corp-auth": "abc", "X-Other": "abc"}) == {"x-corp-auth": REDACTED, "X-Other": "abc"}
    assert Scrubber().text("corp-123456") == "corp-123456"  # only where configured


def test_environment_patterns_reach_the_cli(tmp_path: Path) -> None:
    """REPLAYLAB_SCRUB_PATTERNS (one regex per line) is read by every command that writes."""
    chat = {
        "messages": [
            {"role": "user", "content": "ticket corp-654321 and INT-7781 please"},
            {"role": "assistant", "content": "ok"},
        ]
    }
    source = tmp_path / "chat.json"
    source.write_text(json.dumps(chat), encoding="utf-8")
    env = {**os.environ, "REPLAYLAB_SCRUB_PATTERNS": "corp-[0-9]{6}\n(?i)int-\\d{4}"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "replaylab.cli",
            "import",
            "--from",
            "openai-chat",
            str(source),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "chat.jsonl").read_text(encoding="utf-8")
    assert "corp-654321" not in text and "INT-7781" not in text and "ticket [REDACTED] and [REDACTED]" in text


def test_a_bad_pattern_is_a_user_error() -> None:
    with pytest.raises(InputError) as info:
        Scrubber(extra_patterns=["ok-[0-9]+", "bad-(open"])
    (diag,) = info.value.diagnostics
    assert diag.code == "scrub-pattern" and diag.field == "pattern 2" and "'bad-(open'" in diag.message


def test_patterns_are_compiled_each_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each pattern is its own regular expression, so the same group name in two patterns and
    backreferences work (they used to be joined into one alternation)."""
    monkeypatch.setenv("REPLAYLAB_SCRUB_PATTERNS", "(?P<a>corp)-\\d{4}\n(?P<a>tick)-(\\d)\\2{3}")
    scrubber = Scrubber()
    assert scrubber.text("corp-1234 tick-7777 tick-7778") == "[REDACTED] [REDACTED] tick-7778"


def test_inline_flags_of_extra_patterns_stay_local() -> None:
    """`(?s)` / `(?i)` at the start of a user pattern apply to that pattern only (Python 3.11
    rejects global flags in the middle of the joined expression)."""
    scrubber = Scrubber(extra_patterns=[r"(?s)BEGIN.*?END", r"(?i)secret-word"])
    assert scrubber.text("a BEGIN x\ny END b SECRET-WORD") == "a [REDACTED] b [REDACTED]"
    assert scrubber.text("sk-short") == "sk-short"


@pytest.mark.realdata
def test_real_sessions_are_scrubbed_only_where_they_hold_a_secret(shared_data: Path) -> None:
    """Scrubbing leaves the real recorded sessions as they are (code with `apiKey = ...`,
    `token = Base.url_encode64(...)`, `pwd = "~"`, ids like `task-output-...`, `Bearer <apiKey>`
    in docs) except where they hold a secret: the Phoenix `secret_key_base` values of the
    Claude Code sessions' config files (development keys, but keys). An imported transcript stays
    faithful to its source everywhere else."""
    scrubber = Scrubber()
    redacted_after = set()
    for path in sorted(shared_data.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            text = line.decode("utf-8", "replace")
            for start, _ in scrubber.spans(text):
                name = re.search(r"([A-Za-z_]+)[\\\"':\s]*$", text[max(0, start - 40) : start])
                redacted_after.add(name.group(1) if name else text[max(0, start - 40) : start])
    assert redacted_after == {"secret_key_base"}


@pytest.mark.parametrize("before", [385, 392, 398])
def test_a_window_excerpt_never_keeps_part_of_a_secret_its_cut_splits(before):
    """The report's window excerpts are cut to 400 characters: a key the cut splits is scrubbed
    whole first (cut after scrubbing, the first characters of the key stayed readable)."""
    from replaylab.qa.views import EXCERPT_CHARS, window_view
    from replaylab.safety.classify import ToolClassifier
    from replaylab.transcript.context import WindowMessage
    from replaylab.transcript.model import UserMessage

    text = "x" * before + " " + OPENAI + " tail " * 20
    assert before < EXCERPT_CHARS < before + 1 + len(OPENAI)
    [item] = window_view(
        [WindowMessage(entry_id="e1", message=UserMessage(role="user", content=text))], ToolClassifier()
    )
    shown = item.text.split(" … (")[0]
    assert OPENAI[: EXCERPT_CHARS - before - 1] not in shown and len(shown) <= EXCERPT_CHARS
    assert item.text.endswith(f"({len(text) - EXCERPT_CHARS} more chars)")


def test_report_json_of_an_item_is_scrubbed_by_the_environment_patterns_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """An item's report JSON is written as pydantic's JSON only when the scrubber can vouch that
    nothing in it is a secret: a user's pattern adds its hints (here `corp-`) to what the clean
    check looks for, so the item is scrubbed as its data."""
    from replaylab import scrub
    from replaylab.report.jsonio import item_json
    from replaylab.results import ItemResult

    item = ItemResult(
        id="s::x", suite="s", scenario="x", recording="r.jsonl", outcome="passed", reason="ticket corp-654321 closed"
    )
    assert b"corp-654321" in item_json(item)  # the default rules know nothing of it
    monkeypatch.setenv("REPLAYLAB_SCRUB_PATTERNS", "corp-[0-9]{6}")
    scrub.default_scrubber.cache_clear()
    try:
        assert json.loads(item_json(item))["reason"] == "ticket [REDACTED] closed"
    finally:
        monkeypatch.delenv("REPLAYLAB_SCRUB_PATTERNS")
        scrub.default_scrubber.cache_clear()


def test_data_nested_deeper_than_a_walk_goes_is_scrubbed_as_its_json_text() -> None:
    """A report's data may nest as deep as a transcript line (a thousand levels): past
    `MAX_DATA_DEPTH` a container is its JSON text, scrubbed as text — a secret beside its name is
    still redacted, and the walk never recurses that deep."""
    from replaylab.scrub import MAX_DATA_DEPTH, REDACTED, scrub_data

    secret = "hunter2" + "-very-secret"
    value: object = {"password": secret, "url": "https://x.org/p"}
    for _ in range(1_000):
        value = [value]
    scrubbed = scrub_data(value)
    for _ in range(MAX_DATA_DEPTH):
        assert isinstance(scrubbed, list) and len(scrubbed) == 1
        scrubbed = scrubbed[0]
    assert isinstance(scrubbed, str) and secret not in scrubbed and REDACTED in scrubbed
    assert "https://x.org/p" in scrubbed
    assert scrub_data({"token": [[["deep"]]] * 1})["token"] == [[[REDACTED]]]


def test_a_lost_value_marker_under_a_secret_name_is_no_secret() -> None:
    """The replay writes `⟨lost:N⟩` where a value was lost: a divergence under a secret-named
    argument shows it against the recording's redaction, so it stays readable."""
    scrubber = Scrubber()
    data = {"arguments": {"token": "⟨lost:3⟩", "password": "hunter2hunter2"}}
    assert scrubber.data(data) == {"arguments": {"token": "⟨lost:3⟩", "password": REDACTED}}
