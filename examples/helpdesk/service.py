"""The helpdesk service: a real HTTP server on 127.0.0.1 over the SQLite database of `db.py`.

Why a real server: recordings must come from real HTTP calls (vcrpy records what urllib sends
and receives), and the "nothing escaped" test needs something that counts the writes that reach
it. Reads are `GET`, writes are `POST` with JSON bodies; every answer is JSON, bad input is a 4xx
with `{"error": <code>, "message": <what and why>}` (the rules live in `api.py`).

Counters: every `POST` (or any other non-GET method), successful or not, counts as a write
request; every `GET` except `/_stats` counts as a read request.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from examples.helpdesk import db
from examples.helpdesk.api import ApiError, HelpdeskApi, Payload

MAX_BODY_BYTES = 1 << 20


# --- HTTP ---------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api: HelpdeskApi) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api
        self.counter_lock = threading.Lock()
        self.read_requests = 0
        self.write_requests = 0
        self.authorized_requests = 0

    def stats(self) -> Payload:
        with self.counter_lock:
            return {
                "read_requests": self.read_requests,
                "write_requests": self.write_requests,
                "authorized_requests": self.authorized_requests,
            }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "helpdesk/1"

    def version_string(self) -> str:
        return self.server_version  # no Python version: answers stay the same across interpreters

    def send_response(self, code: int, message: str | None = None) -> None:
        # like BaseHTTPRequestHandler.send_response, minus the wall-clock Date header (determinism)
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Server", self.version_string())

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests and recordings do not want access logs on stderr."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    do_PUT = do_PATCH = do_DELETE = do_POST

    def _dispatch(self, method: str) -> None:
        split = urlsplit(self.path)
        if method == "GET" and split.path == "/_stats":
            self._send(200, self.server.stats())
            return
        with self.server.counter_lock:
            if method == "GET":
                self.server.read_requests += 1
            else:
                self.server.write_requests += 1
            if self.headers.get("Authorization"):
                self.server.authorized_requests += 1
        try:
            body = None if method == "GET" else self._json_body()
            status, payload = self.server.api.handle(method, split.path, parse_qs(split.query), body)
        except ApiError as err:
            status, payload = err.status, err.payload()
        except Exception as exc:  # a bug must still answer JSON, not drop the connection
            status, payload = 500, {"error": "internal", "message": f"{type(exc).__name__}: {exc}", "status": 500}
        self._send(status, payload)

    def _json_body(self) -> Payload:
        length_text = self.headers.get("Content-Length") or "0"
        if not length_text.isdigit():
            raise ApiError(400, "bad_request", f"invalid Content-Length {length_text!r}")
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            raise ApiError(413, "too_large", f"request body of {length} bytes is over {MAX_BODY_BYTES}")
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError(400, "bad_json", f"request body is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ApiError(400, "bad_json", f"request body must be a JSON object, got {type(value).__name__}")
        return value

    def _send(self, status: int, payload: Payload) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Service:
    """A running helpdesk service. Use as a context manager, or call `stop()`."""

    def __init__(self, server: _Server, thread: threading.Thread, db_path: Path, owned_dir: Path | None) -> None:
        self._server, self._thread, self.db_path, self._owned_dir = server, thread, db_path, owned_dir
        host, port = server.server_address[:2]
        self.host, self.port = str(host), int(port)
        self.url = f"http://{self.host}:{self.port}"
        self._stopped = False

    @property
    def read_requests(self) -> int:
        return self._server.stats()["read_requests"]

    @property
    def write_requests(self) -> int:
        return self._server.stats()["write_requests"]

    @property
    def authorized_requests(self) -> int:
        """Requests that carried an Authorization header (the pack sends one; recorders must scrub it)."""
        return self._server.stats()["authorized_requests"]

    def stats(self) -> dict[str, int]:
        return self._server.stats()

    def row_counts(self) -> dict[str, int]:
        """Rows per table, read through a separate connection (what a side effect would change)."""
        conn = db.connect(self.db_path)
        try:
            return {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in db.TABLES}
        finally:
            conn.close()

    def stop(self) -> None:
        """Stop serving, close the listening socket (the port is released) and delete an owned temp DB."""
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        if self._owned_dir is not None:
            shutil.rmtree(self._owned_dir, ignore_errors=True)

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Service(url={self.url!r}, db_path={str(self.db_path)!r}, stopped={self._stopped})"


def start_service(db_path: Path | str | None = None) -> Service:
    """Start the service on 127.0.0.1 at a free port.

    `db_path=None`: a freshly seeded database in a new temp dir (deleted on stop). A given path is
    seeded when it holds no database yet, else used as it is (never deleted)."""
    owned_dir = None
    if db_path is None:
        owned_dir = Path(tempfile.mkdtemp(prefix="helpdesk-"))
        path = owned_dir / "helpdesk.sqlite3"
    else:
        path = Path(db_path)
    if not db.is_initialized(path):
        db.create_database(path)
    server = _Server(HelpdeskApi(path))
    # a short poll interval, so that stop() returns promptly rather than after serve_forever's default wait
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name=f"helpdesk:{server.server_address[1]}",
        daemon=True,
    )
    thread.start()
    return Service(server, thread, path, owned_dir)


def main() -> None:
    """`python -m examples.helpdesk.service`: serve a fresh seeded database until Ctrl-C."""
    with start_service() as service:
        print(f"helpdesk service at {service.url} (db {service.db_path}); Ctrl-C stops it", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
