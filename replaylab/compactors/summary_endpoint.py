"""The summary model of pi's own compaction under test: an OpenAI-compatible
`/v1/chat/completions` on 127.0.0.1, answered by replaylab's extractive summarizer.

pi's `compact()` asks a model for its summary through pi-ai. Under test that model must be
offline and deterministic, so replaylab serves one for the run: each request's last user
message is pi's prompt (`compaction.summary.pi_prompt` reads it back), the answer is the
extractive summary of what that prompt shows, within pi's `maxTokens`. It streams as pi-ai asks
(server-sent events) or answers in one JSON body. No key is checked: nothing but loopback
can reach it. `requests` keeps every request body, for the tests and the notes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from replaylab.compaction.job import MIN_SUMMARY_CHARS
from replaylab.compaction.summary.extractive import ExtractiveSummarizer
from replaylab.compaction.summary.pi_prompt import request_of_prompt
from replaylab.upstream.openclaw_2026_4_12 import MAX_COMPACTION_SUMMARY_CHARS
from replaylab.upstream.pi_0_73_1 import CHARS_PER_TOKEN

#: bytes of a request body read at most (pi's prompt holds a whole span, tool results cut short)
MAX_BODY_BYTES = 64 << 20
MODEL_NAME = "replaylab-extractive"
#: the variable that gives the bundled pi compactor the endpoint's base URL
SUMMARY_BASE_URL_VARIABLE = "REPLAYLAB_SUMMARY_BASE_URL"
#: how often the serving loop looks for `close()`: it returns only once the loop has seen it, and
#: the endpoint is opened and closed once per compaction (socketserver's default waits up to 0.5 s)
SHUTDOWN_POLL_SECONDS = 0.02


def summary_of(body: dict[str, Any]) -> str:
    """The extractive summary pi's request `body` asks for."""
    messages = body.get("messages") or []
    prompt = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    budget = MAX_COMPACTION_SUMMARY_CHARS
    if isinstance(max_tokens, int) and max_tokens > 0:  # as replaylab's own compaction sizes its summary
        budget = max(MIN_SUMMARY_CHARS, min(budget, CHARS_PER_TOKEN * max_tokens))
    request = request_of_prompt(prompt, budget_chars=budget, max_tokens=max_tokens)
    return ExtractiveSummarizer().summarize(request)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


class SummaryEndpoint:
    """The endpoint on 127.0.0.1 (a free port) for as long as it is open; `url` is its base URL
    (`…/v1`). Use as a context manager, or call `close()`. `answer`: the summary a request
    gets (default: the extractive summary it asks for)."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        answer_of = answer or summary_of
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                if not self.path.rstrip("/").endswith("/chat/completions") or not 0 < size <= MAX_BODY_BYTES:
                    self.send_error(404 if size else 400)
                    return
                try:
                    body = json.loads(self.rfile.read(size))
                    text = answer_of(body)
                except (ValueError, TypeError, AttributeError) as exc:
                    self.send_error(400, f"not a chat completion request: {exc}")
                    return
                with endpoint._lock:
                    endpoint.requests.append(body)
                    number = len(endpoint.requests)
                if body.get("stream"):
                    self._stream(number, text)
                else:
                    self._json(number, text)

            def _json(self, number: int, text: str) -> None:
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{number}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": MODEL_NAME,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": _usage(text),
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, number: int, text: str) -> None:
                base = {
                    "id": f"chatcmpl-{number}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": MODEL_NAME,
                }
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {**base, "choices": [], "usage": _usage(text)},
                ]
                payload = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_SECONDS},
            name="replaylab-summary",
            daemon=True,
        )
        self._thread.start()

    def __enter__(self) -> SummaryEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _usage(text: str) -> dict[str, int]:
    completion = -(-len(text) // CHARS_PER_TOKEN)
    return {"prompt_tokens": 0, "completion_tokens": completion, "total_tokens": completion}
