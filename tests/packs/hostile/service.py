"""The hostile pack's service: a loopback TCP server that counts every connection and what it
received, and answers the HTTP requests among them (`GET /items/<id>`, anything else `{"ok": true}`)."""

from __future__ import annotations

import json
import socketserver
import threading
from typing import Any

#: an item's description: long enough for a few lookups to give compaction something to summarize
DESCRIPTION = " ".join(f"Item detail line {n}: stock checked, shelf labelled, nothing unusual." for n in range(12))


class CountingService:
    def __init__(self) -> None:
        self.connections = 0
        self.received: list[bytes] = []
        self._lock = threading.Lock()
        service = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                with service._lock:
                    service.connections += 1
                self.request.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = self.request.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = _content_length(head)
                    while len(body) < length:
                        chunk = self.request.recv(65536)
                        if not chunk:
                            break
                        body += chunk
                except OSError:
                    pass
                with service._lock:
                    service.received.append(data)
                if data[:4] in (b"GET ", b"POST"):
                    self.request.sendall(_response(data.split(b" ", 2)[1].decode("latin-1")))

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> CountingService:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return 0
    return 0


def _response(path: str) -> bytes:
    if path.startswith("/items/"):
        item = path.rsplit("/", 1)[1]
        code = "BIN-" + item[::-1]  # only this answer names it: a value compaction can lose
        payload: dict[str, Any] = {"item": item, "stock": len(item) * 7, "bin": code, "description": DESCRIPTION}
    else:
        payload = {"ok": True}
    body = json.dumps(payload).encode()
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def start_service() -> CountingService:
    return CountingService()
