"""Real loopback servers for the provider tests.

``llama_server`` runs ``python -m llama_cpp.server`` on the bundled SmolLM2 GGUF (one per session);
``llama_server_factory`` starts extra instances a test may kill; ``fake_api`` is a small threaded
HTTP server speaking just enough of the Anthropic Messages and OpenAI chat APIs to script replies,
errors and dropped connections.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kairox.models.local import default_model_path
from kairox.testing.llama_server import LlamaServer, free_port, start_llama_server

BAD_KEY = "bad-key"


@pytest.fixture
def dead_base_url() -> str:
    """An OpenAI-style base URL on a loopback port where nothing listens."""
    return f"http://127.0.0.1:{free_port()}/v1"


@pytest.fixture(scope="session")
def gguf() -> Path:
    return default_model_path()


@pytest.fixture(scope="session")
def llama_server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = start_llama_server(gguf, tmp_path_factory.mktemp("llama"))
    try:
        yield server.base_url
    finally:
        server.stop()


@pytest.fixture
def llama_server_factory(gguf: Path, tmp_path: Path) -> Iterator[Callable[[], LlamaServer]]:
    started: list[LlamaServer] = []

    def start() -> LlamaServer:
        server = start_llama_server(gguf, tmp_path)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# --- fake API server --------------------------------------------------------------------------


@dataclass
class FakeApi:
    base_url: str  # root, e.g. http://127.0.0.1:1234 (the Anthropic SDK appends /v1 itself)
    bad_key: str = BAD_KEY
    requests: list[dict[str, object]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    def last_request(self) -> dict[str, object]:
        return self.requests[-1]


def _sse(event: str | None, data: object) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def _anthropic_events(model: str) -> list[bytes]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 1},
        },
    }  # fmt: skip
    out = [_sse("message_start", start)]
    text_block = {"type": "content_block_start", "index": 0,
                  "content_block": {"type": "text", "text": ""}}  # fmt: skip
    out.append(_sse("content_block_start", text_block))
    for piece in ("Hel", "lo ", "world"):
        delta = {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": piece}}  # fmt: skip
        out.append(_sse("content_block_delta", delta))
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    stop_reason = "end_turn"
    if model == "fake-tool":
        stop_reason = "tool_use"
        tool_block = {"type": "content_block_start", "index": 1,
                      "content_block": {"type": "tool_use", "id": "toolu_01", "name": "read_file",
                                        "input": {}}}  # fmt: skip
        out.append(_sse("content_block_start", tool_block))
        for piece in ('{"pa', 'th": "RE', 'ADME.md"}'):
            delta = {"type": "content_block_delta", "index": 1,
                     "delta": {"type": "input_json_delta", "partial_json": piece}}  # fmt: skip
            out.append(_sse("content_block_delta", delta))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
    out.append(_sse("ping", {"type": "ping"}))
    message_delta = {"type": "message_delta",
                     "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                     "usage": {"output_tokens": 7}}  # fmt: skip
    out.append(_sse("message_delta", message_delta))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return out


def _openai_chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return _sse(None, chunk)


def _openai_events(model: str) -> list[bytes]:
    out = [_openai_chunk({"role": "assistant", "content": ""})]
    if model == "fake-tool":
        out.append(_openai_chunk({"content": "Checking."}))
        first = {"index": 0, "id": "call_abc", "type": "function",
                 "function": {"name": "read_file", "arguments": ""}}  # fmt: skip
        out.append(_openai_chunk({"tool_calls": [first]}))
        for piece in ('{"path"', ': "READ', 'ME.md"}'):
            more = {"index": 0, "function": {"arguments": piece}}
            out.append(_openai_chunk({"tool_calls": [more]}))
        search = {"name": "workspace_search", "arguments": '{"query": "x"}'}
        second = {"index": 1, "id": "call_def", "type": "function", "function": search}
        out.append(_openai_chunk({"tool_calls": [second]}))
        out.append(_openai_chunk({}, "tool_calls"))
    else:
        for piece in ("one ", "two ", "three"):
            out.append(_openai_chunk({"content": piece}))
        if model != "fake-no-finish":
            out.append(_openai_chunk({}, "stop"))
    if model == "fake-tool":
        usage = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
                 "choices": [], "usage": {"prompt_tokens": 21, "completion_tokens": 9,
                                          "total_tokens": 30}}  # fmt: skip
        out.append(_sse(None, usage))
    out.append(_sse(None, "[DONE]"))
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _FakeHttpServer

    def log_message(self, format: str, *args: object) -> None:
        return None

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, events: list[bytes], *, drop_after: int | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for number, event in enumerate(events):
            if drop_after is not None and number == drop_after:
                # vanish mid-body: no terminating chunk, the socket just closes
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        self._json(200, {"object": "list", "data": []})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        api = self.server.api
        api.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        model = str(body.get("model", ""))
        try:
            if self.path == "/v1/messages":
                self._anthropic(model)
            elif self.path == "/v1/chat/completions":
                self._openai(model, body)
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _api_key(self) -> str | None:
        """The key as either API sends it: ``x-api-key`` or ``Authorization: Bearer``."""
        bearer = str(self.headers.get("authorization", ""))
        return self.headers.get("x-api-key") or bearer.removeprefix("Bearer ") or None

    def _anthropic(self, model: str) -> None:
        if self._api_key() == BAD_KEY:
            error = {"type": "authentication_error", "message": "invalid x-api-key"}
            self._json(401, {"type": "error", "error": error})
        elif model == "fake-disconnect":
            self._stream(_anthropic_events(model), drop_after=3)
        else:
            self._stream(_anthropic_events(model))

    def _openai(self, model: str, body: dict[str, object]) -> None:
        if self._api_key() == BAD_KEY:
            error = {"message": "Incorrect API key provided", "type": "invalid_request_error",
                     "code": "invalid_api_key"}  # fmt: skip
            self._json(401, {"error": error})
        elif model == "fake-no-stream-options" and "stream_options" in body:
            error = {"message": "Unrecognized request argument supplied: stream_options"}
            self._json(400, {"error": error})
        elif model == "fake-slow":
            self.server.api.release.wait(timeout=30)
            self._stream(_openai_events(model))
        elif model == "fake-disconnect":
            self._stream(_openai_events(model), drop_after=2)
        else:
            self._stream(_openai_events(model))


class _FakeHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, api: FakeApi) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.api = api


@pytest.fixture(scope="session")
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi(base_url="")
    server = _FakeHttpServer(api)
    api.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="fake-api", daemon=True)
    thread.start()
    try:
        yield api
    finally:
        api.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
