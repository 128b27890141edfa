"""The Registry server of the distributed seed: companion metadata over HTTP.

``GET /metadata`` is the seed's endpoint, the array a Companion server reads at start to
find its definition. We add ``GET /companions/{id}`` (the whole definition file, so a brain
on another machine needs no copy of it), ``GET /metadata/errors`` (why a file is not served)
and ``GET /healthz``. Files are re-read when they change; see ``edge/services/catalog.py``.

Access (``access.py``): Host and Origin are checked as on every service. The metadata is
read-only and the seed's Companion servers fetch it without credentials, so a token is
required off loopback only when one is configured (``COMPANION_REGISTRY_TOKEN``, or
``token=``); see docs/registry.md.

The seed starts the Registry before the broker, so MQTT is optional here: with a broker
address the registry publishes a retained ``status/registry`` (with its URL) once a broker
answers, and serves HTTP from the first moment either way.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Callable, Iterable, Mapping

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from edge import environment
from edge.runtime.broker import BrokerAddress, broker_answers
from edge.runtime.bus import Bus
from edge.log import get_logger
from edge.paths import COMPANIONS_DIR
from edge.protocol.companion import format_problem
from edge.runtime.node import Node
from edge.runtime.transport import Transport, TransportError
from edge.services.access import AccessKeys, AccessPolicy, policy_keys
from edge.services.catalog import Catalog, normalize_id, shown
from edge.services.connection_limits import ConnectionLimits
from edge.services.http_server import HttpServer, serve_forever
from edge.services.wire import excerpt

log = get_logger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8700
ENDPOINTS = "GET /metadata, GET /metadata/errors, GET /companions/{id}, GET /healthz"


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _guard_error(status: int, message: str, reason: str) -> dict[str, str]:
    """The access guard's refusals in the registry's error shape, plus the check that failed."""
    return {"error": message, "reason": reason}


def registry_policy(token: str | None = None, access: AccessKeys | None = None) -> AccessPolicy:
    """Host/Origin checks always; the token (argument or COMPANION_REGISTRY_TOKEN) only when set."""
    token = token or environment.value("COMPANION_REGISTRY_TOKEN")
    return AccessPolicy.build("registry", token, token_required_off_loopback=token is not None, **policy_keys(access))


def create_app(catalog: Catalog) -> Starlette:
    """The registry's HTTP routes over ``catalog``; sync endpoints run in the thread pool,
    so a reload's disk reads never stall the event loop."""

    def metadata(request: Request) -> JSONResponse:
        return JSONResponse(catalog.snapshot().metadata())

    def errors(request: Request) -> JSONResponse:
        return JSONResponse([report.to_json() for report in catalog.snapshot().errors])

    def companion(request: Request) -> JSONResponse:
        wanted = request.path_params["companion_id"]
        ident = normalize_id(wanted)
        if ident is None:
            return _error(404, f"no companion with id {excerpt(wanted)}: companion ids are UUIDs")
        snapshot = catalog.snapshot()
        found = snapshot.companions.get(ident)
        if found is not None:
            return JSONResponse(found.source)
        if ident in snapshot.broken:
            return _error(404, f"companion {ident} is defined in {snapshot.broken[ident]}, which is invalid "
                               "(see GET /metadata/errors)")
        return _error(404, f"no companion with id {ident!r} (GET /metadata lists the {len(snapshot.companions)} "
                           "served)")

    def healthz(request: Request) -> JSONResponse:
        snapshot = catalog.snapshot()
        return JSONResponse({"status": "ok", "companions": len(snapshot.companions), "errors": len(snapshot.errors)})

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "GET, HEAD")
            return _error(405, f"method {excerpt(request.method, 20, raw=True)} is not allowed on "
                               f"{excerpt(request.url.path, raw=True)} (allowed: {allowed})",
                          headers=exc.headers)
        if exc.status_code == 404:
            return _error(404, f"no endpoint {excerpt(request.url.path, raw=True)} (endpoints: {ENDPOINTS})")
        return _error(exc.status_code, str(exc.detail), headers=exc.headers)

    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("registry.request_failed", path=excerpt(request.url.path, raw=True),
                  error=excerpt(repr(exc), 200, raw=True))
        return _error(500, f"internal error while answering {excerpt(request.url.path, raw=True)}: "
                           f"{type(exc).__name__} (logged; the registry goes on serving)")

    routes = [
        Route("/metadata", metadata, methods=["GET"]),
        Route("/metadata/errors", errors, methods=["GET"]),
        Route("/companions/{companion_id}", companion, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: server_error})


def check_sources(sources: Iterable[str | os.PathLike]) -> list[Path]:
    """Fail at start on a source that does not exist: a typo should not serve an empty registry."""
    paths = [Path(s) for s in sources]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise FileNotFoundError(f"registry: no such companion folder or file: {', '.join(missing)}")
    return paths


class StatusAnnouncer:
    """Publishes the retained ``status/registry`` once a broker answers; never blocks the registry.

    The MQTT side is a ``Node`` (docs/nodes.md) started late: the seed starts the Registry
    before the broker, so HTTP (and SIGINT/SIGTERM, through ``serve_forever``) never waits for it."""

    def __init__(self, broker: BrokerAddress | str, namespace: str | None, url: str,
                 transport: Callable[[], Transport] | None = None) -> None:
        self.broker = BrokerAddress.parse(broker) if isinstance(broker, str) else broker
        self.namespace = namespace
        self.url = url
        self.transport = transport or (lambda: Bus("registry", "registry", self.broker, namespace=self.namespace,
                                                   persistent=False))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._node: Node | None = None
        self._thread = threading.Thread(target=self._run, name="registry-status", daemon=True)

    def start(self) -> "StatusAnnouncer":
        self._thread.start()
        return self

    def _run(self) -> None:
        said = False
        transport = self.transport()   # one connection, tried again until a broker answers
        while not self._stop.is_set():
            # A silent TCP probe first: a registry run without a broker should not warn every few seconds.
            if isinstance(transport, Bus) and not broker_answers(transport.broker, timeout=0.5):
                if not said:
                    print(f"registry: waiting for the MQTT broker at {self.broker} to publish status/registry "
                          "(HTTP is already served)", file=sys.stderr, flush=True)
                    said = True
                self._stop.wait(1.0)
                continue
            node = Node(transport, command="companion run registry")
            try:
                node.start(timeout=10.0)
            except TransportError as exc:
                log.warning("registry.status_failed", broker=str(self.broker), error=str(exc))
                continue
            with self._lock:
                if self._stop.is_set():
                    node.stop()
                    return
                node.status(None, url=self.url)
                self._node = node
            log.info("registry.announced", broker=str(self.broker), url=self.url)
            return

    def close(self) -> None:
        """Publish ``offline`` if connected; an attempt still running gives up on its own."""
        with self._lock:
            self._stop.set()
            node, self._node = self._node, None
        if node is not None:
            node.stop()


def serve(sources: Iterable[str | os.PathLike] | None = None, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *,
          broker: BrokerAddress | str | None = None, namespace: str | None = None,
          ready: threading.Event | None = None, stop: threading.Event | None = None,
          on_ready: Callable[[str], None] | None = None, min_interval: float = 0.5,
          token: str | None = None, limits: ConnectionLimits | None = None, access: AccessKeys | None = None,
          transport: Callable[[], Transport] | None = None) -> int:
    """``companion run registry``: serve until SIGINT/SIGTERM or ``stop``; returns the exit code.

    ``sources``: companion folders and/or files (default: the shipped ``companions/``).
    ``broker``: publish ``status/registry`` there once it answers; None: no MQTT at all.
    ``on_ready`` gets the base URL (useful with port 0); ``min_interval``: seconds between disk checks.
    ``token``: required from clients off loopback (default: COMPANION_REGISTRY_TOKEN; none: open).
    ``access``: robot.toml's allowed_hosts, allowed_origins and token_on_loopback ([registry]).
    ``transport`` makes the connection ``status/registry`` goes on (default: an MQTT ``Bus``).
    Raises FileNotFoundError for a missing source and OSError when the port is taken.
    """
    catalog = Catalog(check_sources(sources or [COMPANIONS_DIR]), min_interval=min_interval)
    snapshot = catalog.refresh()
    announcer: list[StatusAnnouncer] = []

    def started(server: HttpServer) -> None:
        print(f"registry: serving {len(snapshot.companions)} companions ({len(snapshot.errors)} invalid files) "
              f"from {', '.join(map(shown, catalog.sources))} at {server.url}/metadata", file=sys.stderr, flush=True)
        for report in snapshot.errors:
            for problem in report.problems:
                print(f"registry: {format_problem(problem, report.file)}", file=sys.stderr)
        if broker is not None:
            announcer.append(StatusAnnouncer(broker, namespace, server.url, transport).start())
        if on_ready is not None:
            on_ready(server.url)

    try:
        serve_forever(create_app(catalog), host, port, stop, name="registry", ready=ready, on_ready=started,
                      policy=registry_policy(token, access), limits=limits, error_body=_guard_error)
    finally:
        for a in announcer:
            a.close()
    return 0
