"""Route 4: the run's own secrets and the remaining families never reach a file or an output.

Two runs of `pytest --replaylab`, as a user runs them, each planting secrets where the first pass's
corpus did not:

* a real-model suite recording its LLM cassettes against a loopback endpoint that answers 401
  echoing the key it was sent and the team header ("Incorrect API key provided: …"). The key comes
  from `api_key_env` and the header from `${ENV}`, both under names no rule calls secret, and the
  values have no secret's shape: only replaylab knowing them as the run's own can redact them;
* a session replayed with its tool results gone (aggressive compaction), so that a mutating call
  is blocked and its arguments — `client_secret`, `PASSWORD`, a nested `password` — go to every
  report; its earlier tool result, a JSON text, holds a `Cookie:` and an `Authorization: Basic` /
  `Token` line after an escaped line break, a Slack `xapp-` token, a session cookie as a server
  sets it, and a JSON-escaped private key cut by the reports' excerpts; and the suite's own file
  is named with a GitHub token, which pytest prints and JUnit names.

What a user would lose: a key in a committed cassette, a password in a CI log. What the tests hold:
none of the planted values — raw, JSON-escaped or URL-encoded — in any file the run wrote
(cassettes, reports, JUnit) or on its stdout and stderr, while the runs did what they should.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from builders.pytest_runs import run_replaylab
from builders.transcripts import Session
from replaylab.cassette import recorded_tool_interaction, write_cassette
from repo_paths import REPO_ROOT

RECORDING = REPO_ROOT / "recordings" / "helpdesk" / "handbook-damaged-in-transit.jsonl"


def _j(*parts: str) -> str:
    return "".join(parts)


# the run's own secrets: names no rule calls secret, values of no known shape
KEY_ENV, KEY = "RL_FC32_LLM_LOGIN", _j("owl3-", "Zq81Lm5xT", "-k9v2-plain")
TEAM_ENV, TEAM = "RL_FC32_TEAM", _j("crew-", "77Hb5Jc1", "-Gd6Fs4")

# the remaining families
CLIENT_SECRET, UPPER_PASSWORD, NESTED_PASSWORD = _j("cs-", "Lq2v9Wm"), _j("PW-", "Qz7w81"), _j("np-", "Kx3r55")
COOKIE, BASIC_PASSWORD, TOKEN_AUTH = _j("ck", "Sess7Rt4Wz8K"), _j("bp", "Vault9Ma"), _j("tk", "Auth8Kc1Nb6H")
SESSION_COOKIE = _j("sid", "9Rt4Wz8Kc1NbQ")
SLACK_APP = _j("xapp-", "1-", "A0KX7LM2QP9-", "4096204881920-", "a7c3e9f1b5d2c8e4a6f0b3d7c1e9f5a2")
PEM_LINES = tuple(_j("MIIEow", "IBAAKCAQEA", f"{n:02d}", "q8Vr2Lx7Tz9Km3Np5Hb7Jc1Gd6Fs4Ay0Ek7RuQw") for n in range(26))
GITHUB = _j("ghp_", "Xk7Lm2Qp9Rt4Wz8Kc1Nb6Hd3Fg5Js0AyV2")


def _forms(value: str) -> list[str]:
    return sorted({value, json.dumps(value)[1:-1], urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)})


def _leaks(folder: Path, printed: str, secrets: dict[str, str]) -> list[str]:
    found = [f"{name} on the output" for name, value in secrets.items() for form in _forms(value) if form in printed]
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        found += [
            f"{name} in {path.relative_to(folder)}"
            for name, value in secrets.items()
            for form in _forms(value)
            if form in text or form in path.name
        ]
    return sorted(set(found))


# ---------------------------------------------------------------- an LLM endpoint echoing the key


class EchoingEndpoint:
    """A loopback OpenAI-compatible endpoint that refuses every request with a 401 whose body
    quotes the key and the team header it was sent (as real providers quote a wrong key)."""

    def __init__(self) -> None:
        self.requests = 0
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                endpoint.requests += 1
                key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                message = f"Incorrect API key provided: {key}. Team {self.headers.get('X-Team')} has no access."
                body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_401_echoing_the_runs_key_reaches_no_cassette_report_or_output(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    rec.mkdir()
    for suffix in (".jsonl", ".cassette.yaml"):
        (rec / RECORDING.name.replace(".jsonl", suffix)).write_bytes(
            RECORDING.with_name(RECORDING.name.replace(".jsonl", suffix)).read_bytes()
        )
    endpoint = EchoingEndpoint()
    (tmp_path / "suite.yaml").write_text(
        "name: echo\nrecordings: rec/*.jsonl\ntools: examples.helpdesk\nmodel: litellm/openai/replaylab-test\n"
        f"model_settings:\n  api_base: {endpoint.url}\n  api_key_env: {KEY_ENV}\n"
        f'  headers: {{X-Team: "${{{TEAM_ENV}}}"}}\n'
        "llm_cassettes: cassettes\n"
        "compaction: {mode: safeguard, contextTokens: 3200, reserveTokensFloor: 800, keepRecentTokens: 500}\n",
        encoding="utf-8",
    )
    try:
        done = run_replaylab(
            tmp_path,
            "suite.yaml",
            "-rA",
            "--replaylab-record-mode",
            "once",
            pythonpath=[REPO_ROOT],
            env={KEY_ENV: KEY, TEAM_ENV: TEAM},
        )
    finally:
        endpoint.stop()
    printed = done.stdout + done.stderr
    assert endpoint.requests >= 1, printed[-3000:]  # the key was sent, and echoed
    assert done.returncode != 0  # a model that cannot answer is no pass
    cassettes = sorted((tmp_path / "cassettes").glob("*.cassette.yaml"))
    assert cassettes and "Incorrect API key provided" in cassettes[0].read_text()  # the 401 body is there
    written = {"reports": tmp_path / "reports", "cassettes": tmp_path / "cassettes"}
    leaks = [leak for folder in written.values() for leak in _leaks(folder, printed, {"key": KEY, "team": TEAM})]
    assert leaks == []


# ---------------------------------------------------------------- a blocked call and a tool's output


def _tool_output() -> str:
    """A tool's JSON answer: an HTTP exchange with its lines JSON-escaped, a session cookie, a
    Slack app token after an escaped line break, and a private key of 26 lines."""
    pem = "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *PEM_LINES, "-----END RSA PRIVATE KEY-----"])
    exchange = (
        "GET /v1/tickets HTTP/1.1\r\n"
        f"Cookie: sid={COOKIE}\r\n"
        f"Authorization: Basic {BASIC_PASSWORD}\r\n"
        "\r\n"
        "HTTP/1.1 200 OK\r\n"
        f"Set-Cookie: sessionid={SESSION_COOKIE}; Path=/; HttpOnly\r\n"
        f"note: retried with\nAuthorization: Token {TOKEN_AUTH}\n"
        f"{SLACK_APP}\n"
    )
    return json.dumps({"ticket": "TCK-998877", "exchange": exchange, "body": f"{SESSION_COOKIE}; Path=/", "key": pem})


def _blocked_session(folder: Path) -> None:
    rec = folder / "rec"
    rec.mkdir()
    session = Session("vault")
    lookup_args = {"order": "W1001"}
    rotate_args = {
        "ticket": "TCK-998877",
        "client_secret": CLIENT_SECRET,
        "PASSWORD": UPPER_PASSWORD,
        "profile": {"user": "u1", "password": NESTED_PASSWORD},
    }
    session.user("Look up order W1001 and its ticket. " + "Please be thorough about it. " * 30)
    session.tool_turn("lookup_ticket", lookup_args, _tool_output())
    session.assistant("Found the ticket. " + "Everything is in order. " * 30)
    session.user("Now rotate the credentials of that ticket.")
    session.tool_turn("rotate_credentials", rotate_args, '{"rotated": true}')
    session.assistant("Rotated.")
    session.write(rec / "vault.jsonl")
    write_cassette(
        rec / "vault.cassette.yaml",
        [
            recorded_tool_interaction("lookup_ticket", lookup_args, _tool_output()),
            recorded_tool_interaction("rotate_credentials", rotate_args, '{"rotated": true}'),
        ],
    )


def test_a_blocked_calls_arguments_and_a_tools_output_reach_no_report_or_output(tmp_path: Path) -> None:
    _blocked_session(tmp_path)
    suite = f"suite-{GITHUB}.yaml"
    (tmp_path / suite).write_text(
        "name: vault\nrecordings: rec/*.jsonl\ncompaction: {mode: aggressive}\ncompact_at: turn:2\n", encoding="utf-8"
    )
    done = run_replaylab(tmp_path, suite, "-rA", "-v", pythonpath=[REPO_ROOT])
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed[-3000:]
    report = json.loads((tmp_path / "reports" / "replaylab.json").read_text())
    [item] = report["items"]
    [blocked] = [d for d in item["defects"] if d["code"] == "SIDE_EFFECT_ESCAPED"]
    assert blocked["where"]["tool"] == "rotate_credentials"  # the blocked call reached the reports
    assert (
        "suite-[REDACTED].yaml" in printed
        and 'classname="suite-[REDACTED]"' in (tmp_path / "reports/junit.xml").read_text()
    )
    secrets = {
        "client_secret": CLIENT_SECRET,
        "PASSWORD": UPPER_PASSWORD,
        "nested password": NESTED_PASSWORD,
        "Cookie": COOKIE,
        "Authorization: Basic": BASIC_PASSWORD,
        "Authorization: Token": TOKEN_AUTH,
        "session cookie": SESSION_COOKIE,
        "Slack app token": SLACK_APP,
        "GitHub token in the suite's file name": GITHUB,
        **{f"private key line {n}": line for n, line in enumerate(PEM_LINES)},
    }
    assert _leaks(tmp_path / "reports", printed, secrets) == []


@pytest.mark.parametrize(
    "text",
    [
        f"GET / HTTP/1.1\\r\\nAuthorization: Basic {BASIC_PASSWORD}",
        f"x\\nAuthorization: Token {TOKEN_AUTH}",
        f"x\\r\\nCookie: sid={COOKIE}",
        f"token\\n{SLACK_APP}",
        f"x_{SLACK_APP}",
        f'{{"Set-Cookie": "sessionid={SESSION_COOKIE}; Path=/; HttpOnly"}}',
        f"body sessionid={SESSION_COOKIE}; path=/; secure",
    ],
)
def test_each_family_is_redacted_in_the_spelling_that_leaked(text: str) -> None:
    from replaylab.scrub import scrub_text

    scrubbed = scrub_text(text)
    assert [s for s in (BASIC_PASSWORD, TOKEN_AUTH, COOKIE, SLACK_APP, SESSION_COOKIE) if s in scrubbed] == []


def test_a_json_escaped_private_key_cut_anywhere_shows_none_of_its_lines() -> None:
    from replaylab.scrub import scrub_prefix

    escaped = json.dumps(
        {"key": "\n".join(["-----BEGIN RSA PRIVATE KEY-----", *PEM_LINES, "-----END RSA PRIVATE KEY-----"])}
    )
    for cut in range(40, len(escaped), 97):
        shown = scrub_prefix(escaped, cut)
        assert [line for line in PEM_LINES if line[:20] in shown] == [], cut
