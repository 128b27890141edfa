"""Who may talk to a service: Host and Origin checks and the bearer token, as one ASGI middleware.

Three threats, three checks, the same for HTTP and WebSocket on every service we run:

- **DNS rebinding**: a web page on ``evil.example`` re-points its own name at 127.0.0.1 and
  then talks to us "same-origin". Its requests carry ``Host: evil.example``, so the Host must
  be a loopback name, an IP literal (a literal cannot be re-pointed), this machine's own
  names, or a name the operator configured.
- **Cross-site requests**: any page in a local browser can POST to localhost or open a
  WebSocket to it. Browsers always send ``Origin`` then; it must be this server's own origin
  or a configured one. Clients that are not browsers send no Origin and are not affected.
- **Other machines**: a client that is not on loopback must present the token
  (``Authorization: Bearer T``, or ``?token=T`` where a browser cannot set headers). A server
  with no token configured refuses them all. On loopback the token is optional unless
  ``token_on_loopback`` says otherwise (e.g. behind a reverse proxy on the same machine).

A refusal is a JSON 403 (401 for a missing or wrong token) naming the check that failed. The
middleware also turns any exception that escapes the application into a JSON 500, so no
client ever gets uvicorn's plain-text error page.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Mapping, MutableMapping, Protocol, Sequence
from urllib.parse import parse_qs, urlsplit

from edge import environment
from edge.log import get_logger
from edge.services.wire import clip, encode_json, excerpt

log = get_logger(__name__)

# the ASGI spec's shapes (as Starlette spells them), so any ASGI app or middleware fits
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
ErrorBody = Callable[[int, str, str], Any]
"""(status, message, reason) -> the JSON document a service answers a refusal with."""

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def default_error_body(status: int, message: str, reason: str) -> dict[str, Any]:
    return {"error": {"message": message, "reason": reason}}


def _split_env(name: str) -> tuple[str, ...]:
    """An older version's comma-separated list from the environment (with its deprecation warning)."""
    return tuple(item.strip() for item in (environment.deprecated(name) or "").split(",") if item.strip())


class AccessKeys(Protocol):
    """A service's section of robot.toml, as far as access goes (edge/config.py ``ServiceAccess``)."""

    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    token_on_loopback: bool


def policy_keys(access: AccessKeys | None) -> dict[str, Any]:
    """``AccessPolicy.build``'s hosts, origins and token_on_loopback from a service's section of
    robot.toml (an unset token_on_loopback leaves it to the older environment variable)."""
    if access is None:
        return {}
    return {"hosts": access.allowed_hosts, "origins": access.allowed_origins,
            "token_on_loopback": access.token_on_loopback or None}


@dataclass(frozen=True)
class AccessPolicy:
    """Which Hosts, Origins and clients a service accepts; see the module docstring."""

    token: str | None = None
    token_required_off_loopback: bool = True  # False: a service readable by anyone it can be reached by
    token_on_loopback: bool = False
    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    service: str = "service"

    @classmethod
    def build(cls, service: str, token: str | None = None, *, hosts: Iterable[str] = (),
              origins: Iterable[str] = (), token_required_off_loopback: bool = True,
              token_on_loopback: bool | None = None) -> "AccessPolicy":
        """A policy with this machine's names allowed, plus ``hosts`` and ``origins`` (robot.toml's
        ``allowed_hosts``, ``allowed_origins``) and, from older versions, ``COMPANION_ALLOWED_HOSTS``
        and ``COMPANION_ALLOWED_ORIGINS`` in the environment (still added, with a warning)."""
        names = {socket.gethostname().lower()}
        names.add(f"{socket.gethostname().split('.')[0].lower()}.local")
        names.update(h.lower() for h in (*hosts, *_split_env("COMPANION_ALLOWED_HOSTS")))
        allowed_origins = {o.rstrip("/").lower() for o in (*origins, *_split_env("COMPANION_ALLOWED_ORIGINS"))}
        if token_on_loopback is None:
            token_on_loopback = environment.deprecated("COMPANION_TOKEN_ON_LOOPBACK") in environment.TRUE_WORDS
        return cls(token=token or None, token_required_off_loopback=token_required_off_loopback,
                   token_on_loopback=token_on_loopback, allowed_hosts=frozenset(names),
                   allowed_origins=frozenset(allowed_origins), service=service)

    # -- the three checks: each returns None (fine) or (status, reason, message) -----------

    def check_host(self, host_header: str | None) -> tuple[int, str, str] | None:
        if not host_header:
            return 400, "host", "the request has no Host header"
        name = _host_name(host_header)
        if name is None:
            return 400, "host", f"Host header {excerpt(host_header)} is not a host name"
        if name in LOOPBACK_NAMES or name in self.allowed_hosts or _is_ip(name):
            return None
        return 403, "host", (f"Host {excerpt(name)} is not a name of this {self.service} (a DNS-rebinding guard); "
                             "use its IP address or localhost, or add the name to allowed_hosts in robot.toml")

    def check_origin(self, origin: str | None, host_header: str | None, scheme: str) -> tuple[int, str, str] | None:
        if origin is None:
            return None  # not a browser: nothing a web page could be abusing
        normalized = origin.rstrip("/").lower()
        if normalized in self.allowed_origins:
            return None
        own = f"{'https' if scheme in ('https', 'wss') else 'http'}://{(host_header or '').lower()}"
        if normalized != "null" and host_header and _same_origin(normalized, own):
            return None
        return 403, "origin", (f"Origin {excerpt(origin)} may not use this {self.service} (a cross-site guard); "
                               "add it to allowed_origins in robot.toml to allow that web page")

    def check_token(self, client: tuple[str, int] | None, headers: Mapping[str, str],
                    query: str) -> tuple[int, str, str] | None:
        given = _presented_token(headers, query)
        loopback = client is not None and _is_loopback(client[0])
        required = self.token_on_loopback if loopback else self.token_required_off_loopback
        if not self.token:
            if required and not loopback:
                return 403, "token", (f"this {self.service} has no token configured, so it serves only clients on "
                                      "this machine; configure a token to accept other machines")
            return None
        if given is None:
            return (401, "token", "missing bearer token (send Authorization: Bearer <token>)") if required else None
        if not hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            return 401, "token", "wrong bearer token"
        return None


def _host_name(host_header: str) -> str | None:
    """The host part of a Host header, lower-case, without port or IPv6 brackets."""
    value = host_header.strip().lower()
    try:
        parsed = urlsplit(f"//{value}")
        name = parsed.hostname
        parsed.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return None
    if not name or any(c.isspace() or c in "/?#@" for c in value):
        return None
    return name


def _same_origin(origin: str, own: str) -> bool:
    try:
        a, b = urlsplit(origin), urlsplit(own)
        return (a.scheme, a.hostname, a.port or _default_port(a.scheme)) == \
            (b.scheme, b.hostname, b.port or _default_port(b.scheme))
    except ValueError:
        return False


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


def _presented_token(headers: Mapping[str, str], query: str) -> str | None:
    scheme, _, value = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    values = parse_qs(query, keep_blank_values=True).get("token") if query else None
    return values[0] if values else None


class AccessGuard:
    """ASGI middleware applying an AccessPolicy; also the JSON safety net for uncaught errors."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy, error_body: ErrorBody = default_error_body) -> None:
        self.app = app
        self.policy = policy
        self.error_body = error_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = (self.policy.check_host(headers.get("host"))
                   or self.policy.check_origin(headers.get("origin"), headers.get("host"), scope.get("scheme", "http"))
                   or self.policy.check_token(scope.get("client"), headers, scope.get("query_string", b"").decode(
                       "latin-1")))
        if refusal is not None:
            status, reason, message = refusal
            client = scope.get("client")
            log.warning("access.refused", service=self.policy.service, status=status, reason=reason,
                        client=client[0] if client else None, path=excerpt(scope.get("path", ""), raw=True))
            await self._refuse(scope, send, status, message, reason)
            return
        relay = _JsonErrors(send, self.policy.service, self.error_body)
        try:
            await self.app(scope, receive, relay.send)
        except Exception as exc:
            log.error("access.app_error", service=self.policy.service, path=excerpt(scope.get("path", ""), raw=True),
                      error=excerpt(repr(exc), 200, raw=True), exc_info=True)
            await relay.failed(exc)

    async def _refuse(self, scope: Scope, send: Send, status: int, message: str, reason: str) -> None:
        body, head = _json_error(self.error_body, status, message, reason)
        if status == 401:
            head.append((b"www-authenticate", f'Bearer realm="companion-{self.policy.service}"'.encode()))
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": head})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": status, "headers": head})
            await send({"type": "websocket.http.response.body", "body": body})
        else:  # a server without the denial extension: close before accepting (HTTP 403)
            await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})


def _headers(scope: Scope) -> dict[str, str]:
    """Header names lower-case; the first of repeated headers wins (a second Host is suspicious anyway)."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        out.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def _json_error(error_body: ErrorBody, status: int, message: str, reason: str,
                keep: Sequence[tuple[bytes, bytes]] = ()) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    body = encode_json(error_body(status, message, reason)).encode()
    drop = {b"content-type", b"content-length"}
    head = [(k, v) for k, v in keep if k.lower() not in drop]
    return body, head + [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]


class _JsonErrors:
    """Passes a response through, except an error (status >= 400) that is not JSON: that one is
    held back and re-sent as a JSON error quoting the start of its text. Covers Starlette's
    plain-text 500 page and any library's plain-text refusals."""

    def __init__(self, send: Send, service: str, error_body: ErrorBody) -> None:
        self._send = send
        self.service = service
        self.error_body = error_body
        self.started = False
        self._held: Message | None = None
        self._text = b""

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self.started = True
            headers = message.get("headers", [])
            if message["status"] >= 400 and not _is_json(headers):
                self._held = message
                return
        elif kind == "http.response.body" and self._held is not None:
            self._text += bytes(message.get("body", b""))[: 400 - len(self._text)]
            if not message.get("more_body", False):
                await self._flush(self._text.decode("utf-8", "replace").strip() or "error")
            return
        elif kind in ("websocket.accept", "websocket.close", "websocket.http.response.start"):
            self.started = True
        await self._send(message)

    async def failed(self, exc: Exception) -> None:
        if self._held is not None:
            await self._flush(f"internal error ({type(exc).__name__})")
        elif not self.started:
            self.started = True
            self._held = {"status": 500, "headers": []}
            await self._flush(f"internal error ({type(exc).__name__}); the {self.service} logged it and goes on "
                              "serving")

    async def _flush(self, text: str) -> None:
        held, self._held = self._held, None
        assert held is not None
        status = held["status"]
        reason = "internal" if status >= 500 else "refused"
        if status == 500 and not text.startswith("internal error"):
            text = f"internal error; the {self.service} logged it and goes on serving"
        body, head = _json_error(self.error_body, status, clip(text, 300), reason, held.get("headers", []))
        await self._send({"type": "http.response.start", "status": status, "headers": head})
        await self._send({"type": "http.response.body", "body": body})


def _is_json(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    return any(k.lower() == b"content-type" and b"json" in v.lower() for k, v in headers)
