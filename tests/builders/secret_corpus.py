"""A corpus of secrets, one of every family the scrubber must catch, and the inputs that plant
them in every place a run carries text: a tool pack whose live service and tools move them in
request headers, query strings, bodies, response headers and bodies; a script that puts them in
the user's text, the tool arguments and the assistant's answer; an OpenAI chat log that puts them
in messages, tool arguments and results and in a tool call id; file and scenario names.

The secrets are assembled at run time from pieces so that no literal key sits in the repository
for a secret scanner to flag.
"""

from __future__ import annotations

import base64
import json
import textwrap
from dataclasses import dataclass


def _j(*parts: str) -> str:
    return "".join(parts)


@dataclass(frozen=True)
class Secret:
    family: str
    value: str
    #: the forms of it a leak could take besides the raw value (e.g. base64 of basic credentials)
    encoded: tuple[str, ...] = ()


OPENAI = _j("sk-", "proj-", "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3Fg5Js0Ay")
ANTHROPIC = _j("sk-", "ant-", "api03-", "Hq4Tz9Wm2Vx7Lp3Kr8Nc5Bd1Gf6Js0A")
AWS_ID = _j("AKIA", "J7Q2X9ZKM4P8R3TW")
AWS_SECRET = _j("q8Vr2Lx7", "Tz/K9Mw3Np+", "Hb5Jc1Gd6Fs4", "Ay0Ek7Ru")
AWS_SESSION_ID = _j("ASIA", "M3K8Q2X7ZP4R9TWJ")
AWS_SESSION_TOKEN = _j("IQoJb3JpZ2lu", "X2VjEJr", "//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6p8Lk2Qz7Vb")
GITHUB = _j("ghp_", "Xk7Lm2Qp9Rt4Wz8Kc1Nb6Hd3Fg5Js0AyV2")
GITHUB_PAT = _j("github_pat_", "11AXK7LM20", "Qp9Rt4Wz8Kc1Nb6Hd3Fg5_Js0AyV2Lx7Tz9Wm2Vx7Lp3Kr8Nc5Bd1Gf6Jk4")
SLACK_BOT = _j("xoxb-", "2048", "-4096-", "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd")
SLACK_APP = _j("xapp-", "1-", "A0KX7LM2QP9-", "4096204881920-", "a7c3e9f1b5d2c8e4a6f0b3d7c1e9f5a2")
SLACK_WEBHOOK_PATH = _j("T0KX7LM2Q/", "B0P9RT4WZ/", "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3")
SLACK_WEBHOOK = _j("https://hooks.slack", ".com/services/", SLACK_WEBHOOK_PATH)
STRIPE = _j("sk_", "live_", "51Hq4Tz9Wm2Vx7Lp3Kr8Nc5Bd")
NPM = _j("npm_", "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3Fg5Js0AyV2Lx")
HUGGING_FACE = _j("hf_", "QvLmXpRtWzKcNbHdFgJsAyVxLpKrNcBdGf")
JWT = _j(
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", ".", "eyJzdWIiOiJ2YXVsdC11c2VyLTcifQ", ".", "Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3Fg5Js0"
)
GOOGLE = _j("AIza", "SyQv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3Fg5Js0Ay")
GITLAB = _j("glpat-", "Qv7Lm2Xp9Rt4Wz8Kc1Nb")
PEM_LINES = (
    _j("MIIEowIBAAKCAQEA7Qv7Lm2Xp9Rt4Wz8Kc1Nb6Hd3", "Fg5Js0AyV2Lx7Tz9Wm2Vx"),
    _j("Lp3Kr8Nc5Bd1Gf6Jk4Qv7Lm2Xp9Rt4Wz8Kc1", "Nb6Hd3Fg5Js0AyV2Lx7Tz9Wm2"),
)
PEM = "\n".join(["-----BEGIN " + "RSA PRIVATE KEY-----", *PEM_LINES, "-----END " + "RSA PRIVATE KEY-----"])
#: a key wrapped right after its start: its first line alone is too short for its family's rule
SPLIT_HEAD, SPLIT_TAIL = _j("sk-", "proj-", "Wq3Ab"), _j("Cd9Ef2", "Gh7Ij4Kl1Mn6Op")
#: a secret key wrapped in the middle of its value
SPLIT_AWS_HEAD, SPLIT_AWS_TAIL = _j("Zr5Tq8Lm2", "Xp/9Rt4Wz"), _j("8Kc1Nb6", "Hd3Fg5Js0Ay")

PASSWORD = _j("Hunter-", "2-vault")
QUERY_TOKEN = _j("qt", "Z81kLmNoPq")
ACCESS_TOKEN_HEADER = _j("xat", "-7Qp9Rt4Wz8Kc1N")
PRIVATE_TOKEN_HEADER = _j("prv", "Tok9Rt4Wz8Kc")
RESPONSE_TOKEN_HEADER = _j("rsp", "Tok4Wz8Kc1Nb6Hd")
COOKIE = _j("ck", "Sess9Rt4Wz8Kc1N")
SET_COOKIE = _j("sc", "Resp7Lm2Xp9Rt4")
BASIC_USER, BASIC_PASSWORD = "vault-bot", _j("bas", "icP4ss-w0rd")
BASIC = base64.b64encode(f"{BASIC_USER}:{BASIC_PASSWORD}".encode()).decode()
TOKEN_AUTH = _j("tok", "Auth8Kc1Nb6Hd3Fg")
URL_PASSWORD = _j("url", "Pw7Lm2Xp")
CLIENT_SECRET = _j("cs", "-x81Lm")
NESTED_PASSWORD = _j("np", "-Qz7w")
RESPONSE_PASSWORD = _j("rp", "-Lq2v9")

SECRETS: tuple[Secret, ...] = (
    Secret("OpenAI key", OPENAI),
    Secret("Anthropic key", ANTHROPIC),
    Secret("AWS access key id", AWS_ID),
    Secret("AWS secret key", AWS_SECRET),
    Secret("AWS session key id", AWS_SESSION_ID),
    Secret("AWS session token", AWS_SESSION_TOKEN),
    Secret("GitHub token", GITHUB),
    Secret("GitHub fine-grained token", GITHUB_PAT),
    Secret("Slack bot token", SLACK_BOT),
    Secret("Slack app token", SLACK_APP),
    Secret("Slack webhook", SLACK_WEBHOOK_PATH),
    Secret("Stripe live key", STRIPE),
    Secret("npm token", NPM),
    Secret("Hugging Face token", HUGGING_FACE),
    Secret("JWT", JWT),
    Secret("Google API key", GOOGLE),
    Secret("GitLab token", GITLAB),
    *(Secret("PEM private key", line) for line in PEM_LINES),
    Secret("key split over two lines (head)", SPLIT_HEAD),
    Secret("key split over two lines (tail)", SPLIT_TAIL),
    Secret("secret key split over two lines (head)", SPLIT_AWS_HEAD),
    Secret("secret key split over two lines (tail)", SPLIT_AWS_TAIL),
    Secret("password", PASSWORD),
    Secret("query-string token", QUERY_TOKEN),
    Secret("X-Access-Token header", ACCESS_TOKEN_HEADER),
    Secret("Private-Token header", PRIVATE_TOKEN_HEADER),
    Secret("response token header", RESPONSE_TOKEN_HEADER),
    Secret("cookie", COOKIE),
    Secret("set-cookie", SET_COOKIE),
    Secret("Authorization: Basic", BASIC_PASSWORD, encoded=(BASIC,)),
    Secret("Authorization: Token", TOKEN_AUTH),
    Secret("password in a URL", URL_PASSWORD),
    Secret("nested client_secret", CLIENT_SECRET),
    Secret("nested password", NESTED_PASSWORD),
    Secret("password in a response", RESPONSE_PASSWORD),
)


def user_text() -> str:
    """A user turn holding every token family, a password, a PEM key and two wrapped keys."""
    return (
        f"Keys for the vault: {OPENAI}, {ANTHROPIC}; aws {AWS_ID} with aws_secret_access_key={AWS_SECRET}; "
        f"temporary {AWS_SESSION_ID} aws_session_token={AWS_SESSION_TOKEN}; github {GITHUB} and {GITHUB_PAT}; "
        f"slack {SLACK_BOT} {SLACK_APP} hook {SLACK_WEBHOOK}; stripe {STRIPE}; npm {NPM}; hf {HUGGING_FACE}; "
        f'jwt {JWT}; maps {GOOGLE}; password: "{PASSWORD}"\n'
        f"wrapped key: {SPLIT_HEAD}\n{SPLIT_TAIL}\n"
        f"AWS_SECRET_ACCESS_KEY={SPLIT_AWS_HEAD}\n{SPLIT_AWS_TAIL}\n"
        f"{PEM}\n"
        "Please rotate them. " + FILLER
    )


#: ordinary words, so that compacting the turn above saves enough to happen
FILLER = " ".join(["The rotation must keep the audit trail of account u1 complete and reviewable."] * 40)


def tool_arguments() -> dict:
    return {
        "user": "u1",
        "api_key": GITLAB,
        "client": {"client_secret": CLIENT_SECRET, "auth": {"password": NESTED_PASSWORD}},
        "db": f"postgres://admin:{URL_PASSWORD}@db.internal:5432/app",
        "note": f"webhook {SLACK_WEBHOOK} token {HUGGING_FACE}",
    }


#: the tool pack: a loopback service answering with token headers, cookies and secret bodies, and
#: tools sending secret headers, query tokens and bodies
PACK_SOURCE = textwrap.dedent(
    f'''
    """A vault tool pack for the secret corpus test: every request and answer carries secrets."""
    import json, threading, urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from replaylab import ToolOutput, ToolSpec

    class Service:
        def __init__(self):
            class Handler(BaseHTTPRequestHandler):
                def log_message(self, *a): pass
                def _send(self, obj):
                    body = json.dumps(obj).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Set-Cookie", "session={SET_COOKIE}; Path=/; HttpOnly")
                    self.send_header("X-Subject-Token", "{RESPONSE_TOKEN_HEADER}")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def do_GET(self):
                    self._send({{"user": "u1", "password": "{RESPONSE_PASSWORD}", "note": "signed {JWT}"}})
                def do_POST(self):
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    self._send({{"rotated": True, "new_key": "{STRIPE}", "private_key": {json.dumps(PEM)}}})
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            self.url = f"http://127.0.0.1:{{self.server.server_address[1]}}"
            threading.Thread(target=self.server.serve_forever, kwargs={{"poll_interval": 0.02}}, daemon=True).start()
        def stop(self):
            self.server.shutdown(); self.server.server_close()

    def start_service():
        return Service()

    HEADERS = {{
        "Content-Type": "application/json",
        "X-Access-Token": "{ACCESS_TOKEN_HEADER}",
        "Private-Token": "{PRIVATE_TOKEN_HEADER}",
        "Authorization": "Basic {BASIC}",
        "Cookie": "sid={COOKIE}",
    }}

    def _http(method, url, body=None, headers=HEADERS):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
        with opener.open(request, timeout=5) as response:
            return ToolOutput(response.read().decode())

    def get_profile(args, ctx):
        return _http("GET", f"{{ctx.base_url}}/profile?access_token={QUERY_TOKEN}&user={{args['user']}}")

    def rotate_keys(args, ctx):
        headers = dict(HEADERS, Authorization="Token {TOKEN_AUTH}")
        return _http("POST", f"{{ctx.base_url}}/rotate", args, headers)

    _schema = {{"type": "object", "properties": {{"user": {{"type": "string"}}, "api_key": {{"type": "string"}}}}}}
    TOOLS = [
        ToolSpec("get_profile", "Read a profile", _schema, "read", get_profile),
        ToolSpec("rotate_keys", "Rotate the keys", _schema, "write", rotate_keys),
    ]
    '''
)


def script_yaml(name: str) -> str:
    """The recording's script: the user's secrets, tool arguments with secrets, a secret answer."""
    return json.dumps(
        {
            "name": name,
            "system": f"You are the vault agent. Internal key {OPENAI}.",
            "turns": [
                {
                    "user": user_text(),
                    "steps": [
                        {"tool_calls": [{"name": "get_profile", "arguments": {"user": "u1"}}]},
                        {"tool_calls": [{"name": "rotate_keys", "arguments": tool_arguments()}]},
                        {"say": f"Rotated. The new key is {STRIPE}; the old one was {GITHUB}."},
                    ],
                },
                {"user": f"Thanks. Use Bearer {JWT} from now on.", "steps": [{"say": "Noted."}]},
                {
                    "user": "Check my profile again, then rotate once more.",
                    "steps": [
                        {"tool_calls": [{"name": "get_profile", "arguments": {"user": "u1"}}]},
                        {"tool_calls": [{"name": "rotate_keys", "arguments": tool_arguments()}]},
                        {"say": f"Rotated again; {GITHUB} is revoked."},
                    ],
                },
            ],
        }
    )


def chat_log() -> dict:
    """An OpenAI chat log with the secrets in messages, tool arguments, results and a call id."""
    return {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": f"Vault agent. Key {ANTHROPIC}."},
            {"role": "user", "content": user_text()},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call.{HUGGING_FACE}",
                        "type": "function",
                        "function": {"name": "rotate_keys", "arguments": json.dumps(tool_arguments())},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": f"call.{HUGGING_FACE}",
                "content": json.dumps({"rotated": True, "password": RESPONSE_PASSWORD, "new_key": STRIPE}),
            },
            {"role": "assistant", "content": f"Done: curl -H 'Authorization: Token {TOKEN_AUTH}' -b sid={COOKIE}"},
            {"role": "user", "content": f"Now store {NPM} as well, and the password {PASSWORD}."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call.{GITHUB}",
                        "type": "function",
                        "function": {"name": "rotate_keys", "arguments": json.dumps(tool_arguments())},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"call.{GITHUB}", "content": f"stored; session {AWS_SESSION_TOKEN}"},
            {"role": "assistant", "content": "Stored."},
        ],
    }


def suite_yaml(recordings: str, scenario: str, tools: str | None) -> str:
    lines = [
        f"name: vault-{SLACK_BOT}",
        f"recordings: {recordings}",
        *([f"tools: {tools}"] if tools else []),
        "compaction: {mode: safeguard, contextTokens: 900, reserveTokensFloor: 100, keepRecentTokens: 100}",
        "compact_at: turn:2",
        "scenarios:",
        f"  - name: {json.dumps(scenario)}",
    ]
    return "\n".join(lines) + "\n"
