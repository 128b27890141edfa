"""Run an ASGI app (Starlette) under uvicorn: in a background thread, or until a signal.

Every HTTP service (registry, gateway, MCP server) needs the same three things, so they
live here once:

- ``HttpServer(app, host, port).start()`` binds the socket *before* uvicorn runs, so port 0
  works, ``url`` is known at once, and "address in use" is an ``OSError`` in the caller's
  thread instead of a ``sys.exit`` inside uvicorn's;
- ``stop()`` asks uvicorn to finish, waits, then forces it, so tests never hang on a
  keep-alive or streaming connection;
- ``serve_forever(...)`` blocks the calling thread until SIGINT/SIGTERM or a stop event, for
  ``companion run``. Signals are handled here, not by uvicorn, because uvicorn re-raises a
  caught SIGTERM after shutdown, which would kill the process before the caller cleans up.

Every server also gets ``ConnectionLimits`` (a header-read timeout and a connection cap that
uvicorn lacks; ``connection_limits.py``) and, given an ``AccessPolicy``, the Host/Origin/token
guard with its JSON safety net for uncaught errors (``access.py``).

uvicorn's own logging is left unconfigured (``log_config=None``) and its access log off, so it
follows ``edge.log``: quiet by default, and never replacing our handlers.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any, Callable

import uvicorn

from edge.log import get_logger
from edge.runtime.signals import stop_on_signals
from edge.services.access import AccessGuard, AccessPolicy, ErrorBody, default_error_body
from edge.services.connection_limits import ConnectionLimits

log = get_logger(__name__)

ASGIApp = Callable[..., Any]

# Hosts that mean "every interface": a client reaches them on loopback.
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket; the error names the address, e.g. when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=128)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise OSError(exc.errno, f"cannot listen on {_hostport(host, port)}: {reason}") from None


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class HttpServer:
    """One uvicorn server on its own thread; ``url`` is the base URL a client can reach."""

    def __init__(self, app: ASGIApp, host: str = "127.0.0.1", port: int = 0, *, name: str = "http",
                 graceful_s: float = 2.0, policy: AccessPolicy | None = None,
                 limits: ConnectionLimits | None = None, error_body: ErrorBody = default_error_body,
                 **uvicorn_options: Any) -> None:
        self.app = AccessGuard(app, policy, error_body) if policy is not None else app
        self.host = host
        self.port = port
        self.name = name
        self.limits = limits or ConnectionLimits()
        options: dict[str, Any] = {"log_config": None, "access_log": False, "lifespan": "auto",
                                   "timeout_graceful_shutdown": graceful_s, **self.limits.uvicorn_options()}
        options.update(uvicorn_options)
        self._options = options
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        """``http://host:port`` with the bound port (a wildcard host shown as loopback)."""
        host = _WILDCARDS.get(self.host, self.host)
        return f"http://{_hostport(host, self.port)}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 10.0) -> "HttpServer":
        """Bind, start serving on a daemon thread, and return once requests are accepted."""
        if self._thread is not None:
            raise RuntimeError(f"{self.name} server already started")
        self._sock = bind_socket(self.host, self.port)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(self.app, **self._options)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name=f"{self.name}-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                why = repr(self._error) if self._error else f"not serving after {timeout:.0f} s"
                self.stop()
                raise RuntimeError(f"{self.name} server on {self.url} failed to start: {why}")
            time.sleep(0.01)
        log.info("http.listening", server=self.name, url=self.url)
        return self

    def _run(self) -> None:
        assert self._server is not None and self._sock is not None
        try:
            self._server.run(sockets=[self._sock])
        except BaseException as exc:  # uvicorn turns a failed app startup into SystemExit
            self._error = exc
            log.error("http.crashed", server=self.name, error=repr(exc))

    def stop(self, timeout: float = 5.0) -> None:
        """Finish open requests (up to ``graceful_s``), then force; safe to call twice."""
        server, thread = self._server, self._thread
        if server is not None and thread is not None and thread.is_alive():
            server.should_exit = True
            thread.join(timeout)
            if thread.is_alive():
                server.force_exit = True
                thread.join(timeout)
            log.info("http.stopped", server=self.name, url=self.url)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> "HttpServer":
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(app: ASGIApp, host: str, port: int, stop_event: threading.Event | None = None, *,
                  name: str = "http", ready: threading.Event | None = None,
                  on_ready: Callable[[HttpServer], None] | None = None, **uvicorn_options: Any) -> None:
    """Serve until SIGINT/SIGTERM (when called on the main thread) or ``stop_event`` is set.

    ``on_ready`` gets the started server (e.g. to print its URL), then ``ready`` is set.
    """
    server = HttpServer(app, host, port, name=name, **uvicorn_options)
    with stop_on_signals(stop_event) as stop:
        try:
            server.start()
            if on_ready is not None:
                on_ready(server)
            if ready is not None:
                ready.set()
            while not stop.wait(0.5):
                if not server.running:
                    raise RuntimeError(f"{name} server on {server.url} stopped unexpectedly")
        finally:
            server.stop()
