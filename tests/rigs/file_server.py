"""A real HTTP file server on loopback with Range support and scripted faults, for download tests.

Each path serves a ``Blob``: its bytes, optionally a fixed error status, a connection cut after
N body bytes (for the first ``cuts`` requests), or Range support switched off (a server that
always answers 200 with the whole file). Every request is recorded with its Range header, so a
test can assert that a rerun really resumed.
"""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Blob:
    data: bytes
    status: int = 200                 # anything else: answer with this status and a short body
    cut_after: int | None = None      # body bytes sent before the connection is dropped
    cuts: int = 1                     # how many requests get cut; later ones are served whole
    ranges: bool = True               # honour "Range: bytes=N-"


@dataclass
class Hit:
    path: str
    range: str | None


class FileServer:
    """``with FileServer() as fs: fs.blobs["/m.bin"] = Blob(b"..."); fs.url("/m.bin"); fs.hits``"""

    def __init__(self) -> None:
        self.blobs: dict[str, Blob] = {}
        self.hits: list[Hit] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
                server.hits.append(Hit(self.path, self.headers.get("Range")))
                blob = server.blobs.get(self.path)
                if blob is None or blob.status != 200:
                    status = 404 if blob is None else blob.status
                    body = f"status {status}\n".encode()
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                data, start = blob.data, 0
                m = re.match(r"bytes=(\d+)-$", self.headers.get("Range") or "")
                if m and blob.ranges:
                    start = int(m.group(1))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes" if blob.ranges else "none")
                self.end_headers()
                if blob.cut_after is not None and blob.cuts > 0:
                    blob.cuts -= 1
                    self.wfile.write(body[:blob.cut_after])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)   # hang up mid-body
                    return
                self.wfile.write(body)

        class QuietServer(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # the cut connections are on purpose

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def __enter__(self) -> "FileServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def closed_port_url(path: str = "/model.bin") -> str:
    """A loopback URL nothing listens on: the "no network" case without leaving the machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
