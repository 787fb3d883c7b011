"""A logging OpenAI-compatible server on loopback, for the hardening tests.

``logging_openai`` records every request (path, headers, body) and answers chat completions with a
short streamed reply, so a test can prove which server a key or a prompt reached, or that none did.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class LoggingServer:
    base_url: str = ""
    requests: list[dict[str, object]] = field(default_factory=list)
    # When set, a request without tool results is answered with this many read_file calls.
    tool_calls: int = 0
    # When set, a chat completion is answered only once the test sets it.
    gate: threading.Event | None = None
    reply: str = "served"
    # Set when a chat request arrives; a chat reply waits for ``hold`` when one is given.
    arrived: threading.Event = field(default_factory=threading.Event)
    hold: threading.Event | None = None

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    def authorizations(self) -> list[str]:
        out = []
        for request in self.requests:
            headers = request["headers"]
            assert isinstance(headers, dict)
            out.extend(v for k, v in headers.items() if k.lower() == "authorization")
        return out


def _sse(data: object) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"data: {payload}\n\n".encode()


def _chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    return _sse(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        body = json.loads(raw or b"{}")
        self.server.log.requests.append(
            {"path": self.path, "headers": dict(self.headers.items()), "body": body}
        )
        if self.path.endswith("/embeddings"):
            inputs = body.get("input", [])
            data = [{"index": i, "embedding": [1.0, 0.0, 0.0, 0.0]} for i in range(len(inputs))]
            out = json.dumps({"data": data, "model": "fake"}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        self.server.log.arrived.set()
        if self.server.log.hold is not None:
            self.server.log.hold.wait(timeout=120)
        if self.server.log.gate is not None:
            self.server.log.gate.wait(timeout=120)
        answered = any(m.get("role") == "tool" for m in body.get("messages", []))
        if self.server.log.tool_calls and not answered:
            events = [_chunk({"role": "assistant", "content": ""})]
            events += [
                _chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": f"call_{i}",
                                "type": "function",
                                "function": {
                                    "name": "read_file",
                                    "arguments": '{"path": "notes.md"}',
                                },
                            }
                        ]
                    }
                )
                for i in range(self.server.log.tool_calls)
            ]
            events += [_chunk({}, "tool_calls"), _sse("[DONE]")]
        else:
            events = [
                _chunk({"role": "assistant", "content": ""}),
                _chunk({"content": self.server.log.reply}),
                _chunk({}, "stop"),
                _sse("[DONE]"),
            ]
        payload = b"".join(events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, log: LoggingServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log = log


Kx = Callable[..., subprocess.CompletedProcess[str]]
