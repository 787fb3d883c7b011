"""A loopback HTTP server in a thread, with scripted faults, for the knowledge-base fakes.

Each fake supplies ``handle(request) -> Reply``. Tests can queue faults (``fail_next``) that
are answered before the real handler runs, or ``stall_next`` to hold a response until stop.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names; a repeated header keeps its last value."""
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int
    body: object = None
    headers: Mapping[str, str] = field(default_factory=dict)


class FakeServer:
    """Subclasses implement ``handle`` and ``error_body``; the rest is shared."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.accepted: list[Request] = []
        self.rejections: list[str] = []
        self._faults: deque[Reply | None] = deque()
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def fail_next(
        self, status: int, *, times: int = 1, headers: Mapping[str, str] | None = None
    ) -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append(Reply(status, self.error_body(status), dict(headers or {})))

    def stall_next(self, *, times: int = 1) -> None:
        """The next ``times`` requests get no answer until the server stops (client timeouts)."""
        with self._lock:
            self._faults.extend([None] * times)

    def handle(self, request: Request) -> Reply:
        raise NotImplementedError

    def error_body(self, status: int) -> object:
        return {"message": f"HTTP {status}"}

    def invalid(self, message: str) -> Reply:
        """The service's answer to a request that breaks its documented shape."""
        return Reply(400, {"message": message})

    def _dispatch(self, request: Request) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            scripted = self._faults.popleft() if self._faults else Reply(0)
        if scripted is None:
            self._release.wait(timeout=60)
            return None
        if scripted.status:
            return scripted
        try:
            reply = self.handle(request)
        except BadRequest as exc:
            with self._lock:
                self.rejections.append(str(exc))
            reply = self.invalid(str(exc))
        if reply.status == 200:
            with self._lock:
                self.accepted.append(request)
        return reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self._serve()

            def do_GET(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Request(self.command, self.path, headers, body)
                reply = server._dispatch(request)
                if reply is None:
                    self.close_connection = True
                    return
                data = b"" if reply.body is None else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return

        return Handler


def require(condition: bool, message: str) -> None:
    """Fakes validate requests with this; a failure becomes a 400 the client must surface."""
    if not condition:
        raise BadRequest(message)


class BadRequest(Exception):
    pass
