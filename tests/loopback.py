"""Test helpers shared by several test files: a loopback OpenAI-compatible chat server, and the
real recorded sessions of ../shared/data imported into a temporary folder."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class ChatServer:
    """A minimal OpenAI-compatible /v1/chat/completions on 127.0.0.1 (a free port): `reply(body)`
    gives the assistant message and finish reason for each request, unless `refuse(body)` gives a
    status and an error body to answer with instead; every request body and its Authorization
    header are kept. `stop()` when done."""

    def __init__(
        self,
        reply: Callable[[dict], tuple[dict, str]],
        refuse: Callable[[dict], tuple[int, dict] | None] = lambda body: None,
    ) -> None:
        self.requests: list[dict] = []
        self.auth: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.auth.append(self.headers.get("Authorization", ""))
                refused = refuse(body)
                if refused is not None:
                    status, error = refused
                    self._send(status, json.dumps(error).encode())
                    return
                message, finish = reply(body)
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 1700000000,
                        "model": body["model"],
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 21, "completion_tokens": 7, "total_tokens": 28},
                    }
                ).encode()
                self._send(200, payload)

            def _send(self, status: int, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def imported_real_sessions(shared_data: Path, folder: Path) -> list[Path]:
    """τ-bench (airline), τ²-bench, Claude Code and pi sessions of ../shared/data, imported as
    transcripts (+ cassettes) under `folder`; their paths, sorted per source."""
    from replaylab.importers import import_sessions, write_session

    sources = [("tau-bench", shared_data / "tau-bench" / "airline" / "gpt-4o-airline.json")]
    sources += [
        ("tau2-bench", p)
        for p in sorted((shared_data / "tau2-bench").glob("*/*.json"))
        if p.name != "tool_classes.json"
    ]
    sources += [("claude-code", shared_data / "claude-code-spotter" / "sessions")]
    sources += [("pi", p) for p in sorted((shared_data / "openclaw-fixtures").glob("*.jsonl"))]
    paths: list[Path] = []
    for index, (kind, source) in enumerate(sources):
        target = folder / f"{index}-{kind}"
        for session in import_sessions(kind, source):
            write_session(session, target)
        paths += sorted(target.glob("*.jsonl"))
    return paths


class BytesService:
    """A loopback HTTP server answering every GET with `answer(path) -> (headers, body bytes)`, as
    a tool pack's `start_service()` returns it (`url`, `stop()`)."""

    def __init__(self, answer: Callable[[str], tuple[dict[str, str], bytes]]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                headers, body = answer(self.path)
                self.send_response(200)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
