"""Seeded generators of hostile request bodies, and a tally of how a server answered them.

Shared by ``tests/edge/services/test_services_fuzz.py`` (a few hundred per endpoint) and
``bench/fuzz_services.py`` (ten thousand). JSON is built as *text*, so the generators can
write what a JSON encoder never would: NaN, 1e400, 5000-digit integers, lone surrogates,
nesting thousands deep, invalid UTF-8, truncated documents, duplicate keys.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Callable, Iterable

EVIL_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 5000, "-" + "9" * 41, "1.7976931348623157e308",
                "-0", "0.0000001", "123456789012345678901234567890"]
EVIL_STRINGS = ['"\\ud800"', '"x\\udfffy"', '"\\u0000"', '"é漢字😀"', '""', '" "', '"\\n\\t"', '"%00"', '"../../etc"']


class Fuzzer:
    """Random bodies from one seed: the same seed gives the same requests."""

    def __init__(self, seed: int, max_string: int = 300_000) -> None:
        self.rng = random.Random(seed)
        self.max_string = max_string

    # -- JSON fragments, as text -------------------------------------------------------------

    def scalar(self) -> str:
        r = self.rng.random()
        if r < 0.25:
            return self.rng.choice(EVIL_NUMBERS)
        if r < 0.45:
            return self.rng.choice(EVIL_STRINGS)
        if r < 0.55:
            return json.dumps("x" * self.rng.choice([1, 61, 201, 5000, self.max_string]))
        if r < 0.65:
            depth = self.rng.choice([10, 65, 300, 1500, 20000])
            return "[" * depth + "]" * depth
        if r < 0.8:
            return json.dumps(self.rng.choice([0, 1, -1, 0.5, 2.0, 1e300, True, False, None, "hi", "input", "all"]))
        return json.dumps("".join(chr(self.rng.randrange(32, 0x3000)) for _ in range(self.rng.randrange(12))))

    def value(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 3 or r < 0.6:
            return self.scalar()
        if r < 0.8:
            return "[" + ",".join(self.value(depth + 1) for _ in range(self.rng.randrange(4))) + "]"
        return self.obj({self.key(): self.value(depth + 1) for _ in range(self.rng.randrange(4))})

    def key(self) -> str:
        if self.rng.random() < 0.9:
            return json.dumps(self.rng.choice(["x", "y", "z", "title", "body", "id", "a" * 300, "é"]))
        return self.rng.choice(['"\\ud800"', json.dumps("k" * 100_000)])

    @staticmethod
    def obj(members: dict[str, str]) -> str:
        return "{" + ",".join(f"{k}:{v}" for k, v in members.items()) + "}"

    def pick(self, good: str) -> str:
        """Mostly the good value, sometimes anything."""
        return good if self.rng.random() < 0.6 else self.value()

    # -- whole bodies ---------------------------------------------------------------------------

    def perception(self) -> str:
        members = {'"title"': self.pick('"input"'), '"body"': self.pick('"hello"')}
        for name, good in (("format", '"text"'), ("to", '"all"'), ("from", '"fuzz"')):
            if self.rng.random() < 0.3:
                members[json.dumps(name)] = self.pick(good)
        if self.rng.random() < 0.15:
            members[self.key()] = self.value()
        return self.obj(members)

    def rpc(self, method: str, params: Callable[[], str]) -> str:
        members = {'"jsonrpc"': self.pick('"2.0"'), '"method"': self.pick(json.dumps(method))}
        if self.rng.random() < 0.9:
            members['"params"'] = params() if self.rng.random() < 0.7 else self.value()
        if self.rng.random() < 0.8:
            members['"id"'] = self.pick(str(self.rng.randrange(1000)))
        if self.rng.random() < 0.05:
            members[self.key()] = self.value()
        return self.obj(members)

    def gateway_body(self) -> bytes:
        r = self.rng.random()
        if r < 0.4:
            text = self.perception()
        elif r < 0.8:
            text = self.rpc("perception.send", self.perception)
        else:
            text = "[" + ",".join(self.rpc("perception.send", self.perception)
                                  for _ in range(self.rng.choice([0, 1, 3, 101]))) + "]"
        return self.damage(text.encode("utf-8", "surrogatepass"))

    def mcp_body(self, tools: list[str]) -> bytes:
        method = self.rng.choice(["tools/call", "tools/call", "tools/list", "resources/read", "ping", "nope"])

        def params() -> str:
            if method == "resources/read":
                return self.obj({'"uri"': self.pick('"spec://main"')})
            arguments = self.obj({json.dumps(k): self.pick("0.1") for k in self.rng.sample(["x", "y", "z"], 3)})
            return self.obj({'"name"': self.pick(json.dumps(self.rng.choice(tools))),
                             '"arguments"': arguments if self.rng.random() < 0.6 else self.value()})

        return self.damage(self.rpc(method, params).encode("utf-8", "surrogatepass"))

    def path_segment(self) -> str:
        """A companion id as a client might mangle it (percent-encoded where needed)."""
        from urllib.parse import quote
        raw = self.rng.choice(["6a0f3c8e-2d14-4b7a-9e51-c3b8d2f47a10", "pip", "x" * 5000, "%ff%fe", "..", "\u00e9",
                               "00000000-0000-0000-0000-000000000000", "{}", str(self.rng.random())])
        return quote(raw, safe="%") if self.rng.random() < 0.8 else quote(raw)

    def raw_head(self, path: str, port: int) -> bytes:
        """A whole HTTP/1.1 request written by hand, often malformed at the protocol level."""
        body = self.gateway_body()[:2000]
        line = self.rng.choice([f"POST {path} HTTP/1.1", f"GET {path} HTTP/1.1", f"BREW {path} HTTP/1.1",
                                f"POST {path} HTTP/9.9", f"GET /{'a' * 20000} HTTP/1.1", "GET", f"POST {path}?\xff HTTP/1.1",
                                f"\x00\x01 {path} HTTP/1.1", f"POST {path}#frag HTTP/1.1"])
        headers = [f"Host: {self.rng.choice([f'127.0.0.1:{port}', 'localhost', 'evil.example', '', '[::1', 'a b'])}"]
        extra = ["Content-Type: application/json", f"Content-Length: {self.rng.choice([len(body), 0, -1, 10**20])}",
                 "Transfer-Encoding: chunked", "Origin: http://evil.example", "Origin: null", "X: " + "y" * 20000,
                 "Authorization: Bearer \udc80", "Connection: close", "Bad Header", "Host: second.example",
                 "Content-Length: 5", "Expect: 100-continue"]
        headers += self.rng.sample(extra, self.rng.randrange(4))
        if self.rng.random() < 0.3:
            headers = headers[1:]
        head = (line + "\r\n" + "\r\n".join(headers) + "\r\n\r\n").encode("utf-8", "surrogateescape")
        return head + (body if self.rng.random() < 0.8 else body[: len(body) // 2])

    def damage(self, data: bytes) -> bytes:
        """Now and then break the bytes themselves: cut, flip, invalid UTF-8, empty."""
        r = self.rng.random()
        if r < 0.06 and data:
            return data[: self.rng.randrange(len(data))]
        if r < 0.09 and data:
            i = self.rng.randrange(len(data))
            return data[:i] + bytes([self.rng.randrange(256)]) + data[i + 1:]
        if r < 0.11:
            return data + b"\xff\xfe"
        if r < 0.12:
            return b""
        return data


@dataclass
class Tally:
    """How a server answered; ``server_errors`` (5xx) and ``not_json`` must stay 0."""

    sent: int = 0
    ok: int = 0
    refused: int = 0          # 4xx: the client was told what was wrong
    server_errors: int = 0    # 5xx
    not_json: int = 0         # an answer whose body is not a JSON document
    examples: list[str] = field(default_factory=list)

    def count(self, status: int, body: bytes, what: str = "") -> None:
        self.sent += 1
        if status >= 500:
            self.server_errors += 1
            self._keep(f"{status} {body[:200]!r} for {what[:200]}")
        elif status >= 400:
            self.refused += 1
        else:
            self.ok += 1
        if body and not _is_json(body):
            self.not_json += 1
            self._keep(f"not JSON: {status} {body[:200]!r} for {what[:200]}")

    def _keep(self, example: str) -> None:
        if len(self.examples) < 5:
            self.examples.append(example)

    def line(self, name: str, answering: bool) -> str:
        return (f"{name:<22} {self.sent:>6} sent  {self.server_errors:>3} 5xx  {self.not_json:>3} not JSON  "
                f"{self.refused:>6} refused  {self.ok:>6} ok  still answering: {'yes' if answering else 'NO'}")


def _is_json(body: bytes) -> bool:
    if body.startswith(b"event:") or body.startswith(b"data:") or b"\ndata:" in body[:200]:
        return True  # an SSE stream (MCP); its events are the SDK's own JSON
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def run(send: Callable[[bytes], tuple[int, bytes]], bodies: Iterable[bytes], tally: Tally | None = None) -> Tally:
    """Send each body with ``send`` (returning status and response body) and count the answers."""
    tally = tally or Tally()
    for body in bodies:
        status, answer = send(body)
        tally.count(status, answer, body[:200].decode("utf-8", "replace"))
    return tally


def raw_exchange(host: str, port: int, request: bytes, timeout: float = 10.0) -> tuple[int, bytes]:
    """Send raw bytes, read until the server closes or answers one response; (status, body).
    A server that closes without a word counts as status 0."""
    import socket

    with socket.create_connection((host, port), timeout=timeout) as sock:
        try:
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may refuse before reading everything; its answer is what counts
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    while data.startswith(b"HTTP/1.1 1"):  # an interim 100 Continue: the final answer follows
        data = data.partition(b"\r\n\r\n")[2]
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        body = _unchunk(body)
    elif b"content-length: " in lower:  # the first answer only: junk after it may get its own
        length = lower.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0]
        body = body[: int(length)] if length.isdigit() else body
    return status, body


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            return out
        if size == 0:
            return out
        out, data = out + rest[:size], rest[size + 2:]
    return out
