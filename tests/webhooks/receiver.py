"""A real webhook receiver for the tests: http.server on 127.0.0.1 (a free port) in a thread,
recording every request it takes and answering the status codes it is told to, in order."""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Taken:
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes


class Receiver:
    """`replies(500, 200)`: the next answers (then 200 for every request); `slow(n, seconds)`:
    the next n requests wait that long before their answer; `taken`: the requests so far."""

    def __init__(self) -> None:
        self.taken: list[Taken] = []
        self._replies: deque[int] = deque()
        self._slow: deque[float] = deque()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.taken.append(
                    Taken(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if receiver._slow:
                    time.sleep(receiver._slow.popleft())
                code = receiver._replies.popleft() if receiver._replies else 200
                answer = f"answered {code}".encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the sender gave up waiting (a timeout the test asked for)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hook"

    def replies(self, *codes: int) -> None:
        self._replies.extend(codes)

    def slow(self, count: int, seconds: float) -> None:
        self._slow.extend([seconds] * count)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def down_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port taken from the system, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hook"
