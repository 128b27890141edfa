"""A real HTTP server on loopback that answers with scripted bytes, for provider tests.

Tests write each reply in the API's documented wire format (JSON bodies, SSE ``data:`` lines,
NDJSON), including broken ones; the server records every request it got. It speaks plain
HTTP/1.1 with chunked streaming, so the provider's real HTTP client is exercised end to end.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Iterator

import pytest


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | dict | list | None = None          # one body
    chunks: Iterable[bytes | str] | None = None              # or a stream of chunks
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0                                      # before the status line
    chunk_delay_s: float = 0.0                                # between chunks


def sse(*events: dict | str, done: bool = False, event: str | None = None) -> list[str]:
    """SSE frames from JSON objects (or raw strings); ``done`` appends OpenAI's ``[DONE]``."""
    frames = []
    for e in events:
        data = e if isinstance(e, str) else json.dumps(e)
        frames.append((f"event: {event}\n" if event else "") + f"data: {data}\n\n")
    if done:
        frames.append("data: [DONE]\n\n")
    return frames


def named_sse(*pairs: tuple[str, dict]) -> list[str]:
    """SSE frames with an ``event:`` name each (Anthropic's style)."""
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in pairs]


def ndjson(*objects: dict) -> list[str]:
    return [json.dumps(o) + "\n" for o in objects]


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeApi:
    """``with FakeApi() as api: api.replies.append(Reply(...)); ... api.requests``"""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Request] = []
        self.default: Reply | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                fake.requests.append(Request(self.command, self.path, dict(self.headers), body))
                reply = fake.replies.pop(0) if fake.replies else fake.default
                if reply is None:
                    reply = Reply(500, {"error": {"message": "fake server has no reply scripted"}})
                time.sleep(reply.delay_s)
                try:
                    self._send(reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.chunks is not None:
                    if not any(k.lower() == "content-type" for k in reply.headers):
                        self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for chunk in reply.chunks:
                        data = chunk.encode() if isinstance(chunk, str) else chunk
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                        time.sleep(reply.chunk_delay_s)
                    self.wfile.write(b"0\r\n\r\n")
                    return
                body = reply.body
                data = (json.dumps(body).encode() if isinstance(body, (dict, list))
                        else body.encode() if isinstance(body, str) else body or b"")
                if not any(k.lower() == "content-type" for k in reply.headers):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET = do_DELETE = _handle

        class QuietServer(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hangs up mid-stream (cancel tests) is expected, not news

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "FakeApi":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def api() -> "Iterator[FakeApi]":
    """A fresh loopback server per test: a request a previous test left in flight (a timeout, a
    cancelled stream, a retry) reaches that test's server, never this one's ``requests``."""
    with FakeApi() as fake:
        yield fake
