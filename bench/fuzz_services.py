"""Fuzz every service endpoint with N hostile requests each (default 10,000) over real sockets.

Starts a mosquitto, the gateway, the registry (on a copy of companions/) and the MCP body
server (no body behind it: valid calls come back no_result at once), then sends seeded
bodies from ``tests/rigs/service_fuzz.py`` to each endpoint and prints, per endpoint: requests
sent, 5xx answers, answers that are not JSON, 4xx refusals, successes, and whether a good
request is still answered afterwards. Writes bench/results/fuzz_services.json.

    .venv/bin/python bench/fuzz_services.py --count 10000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "rigs")]

import httpx  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

from edge.services.mcp_server import MCP_PATH, start as start_mcp  # noqa: E402
from edge.runtime.broker import LocalBroker  # noqa: E402
from edge.runtime.bus import Bus  # noqa: E402
from edge.config import DEFAULT_COMPANION  # noqa: E402
from edge.paths import COMPANIONS_DIR  # noqa: E402
from edge.protocol.companion import load_companion  # noqa: E402
from edge.services.gateway import Gateway, GatewayConfig, http_server_options  # noqa: E402
from edge.services.http_server import HttpServer  # noqa: E402
from edge.services.registry import serve as serve_registry  # noqa: E402
from service_fuzz import Fuzzer, Tally, raw_exchange, run  # noqa: E402

HELLO = {"title": "input", "body": "hello"}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}}


def post_sender(client: httpx.Client, url: str, headers: dict[str, str]) -> Callable[[bytes], tuple[int, bytes]]:
    def send(body: bytes) -> tuple[int, bytes]:
        r = client.post(url, content=body, headers=headers)
        return r.status_code, r.content
    return send


def fuzz_ws(ws_url: str, fuzz: Fuzzer, count: int) -> Tally:
    tally, n = Tally(), 0
    while n < count:
        with ws_connect(ws_url, max_size=None) as ws:
            try:
                while n < count:
                    frame = fuzz.gateway_body()
                    ws.send(frame.decode("utf-8", "replace") if n % 2 else frame)
                    ws.send(json.dumps({"jsonrpc": "2.0", "method": "probe", "id": f"p{n}"}))
                    while True:
                        try:
                            reply = json.loads(ws.recv(timeout=10))
                        except ValueError:
                            tally.count(200, b"not json")
                            continue
                        replies = reply if isinstance(reply, list) else [reply]
                        if any(r.get("id") == f"p{n}" for r in replies):
                            break
                        internal = any(r.get("error", {}).get("code") == -32603 for r in replies)
                        tally.count(500 if internal else 200, b"{}", frame[:200].decode("utf-8", "replace"))
                    n += 1
            except ConnectionClosed:
                tally.count(400, b"{}")
                n += 1
    return tally


def ws_answers(ws_url: str) -> bool:
    with ws_connect(ws_url) as ws:
        ws.send(json.dumps({"jsonrpc": "2.0", "method": "perception.send", "params": HELLO, "id": 1}))
        return "result" in json.loads(ws.recv(timeout=10))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="requests per endpoint")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-string", type=int, default=300_000, help="longest string value generated")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="fuzz-services-"))
    broker = LocalBroker(data_dir=tmp / "mosquitto").start()
    companion = load_companion(DEFAULT_COMPANION)
    folder = tmp / "companions"
    folder.mkdir()
    for path in COMPANIONS_DIR.glob("*.json"):
        shutil.copy(path, folder / path.name)
    gw_bus = Bus("gateway-fuzz", "gateway", broker.address, persistent=False).connect()
    gateway = Gateway(gw_bus, [companion], GatewayConfig(port=0))
    gw = HttpServer(gateway.app(), port=0, name="gateway", **http_server_options(gateway)).start()
    mcp_bus = Bus("mcp-fuzz", "mcp", broker.address).connect()
    _, mcp = start_mcp(companion, mcp_bus, result_timeout_s=0.05)
    stop, ready, urls = threading.Event(), threading.Event(), []
    threading.Thread(target=serve_registry, args=([folder],), daemon=True,
                     kwargs={"port": 0, "stop": stop, "ready": ready, "on_ready": urls.append}).start()
    ready.wait(10)
    registry = urls[0]
    results: dict[str, dict] = {}
    tools = [a.title for a in companion.actions] + ["action-play", "fly"]
    try:
        with httpx.Client(timeout=30) as client:
            for name, path in (("gateway /perceptions", "/perceptions"), ("gateway /rpc", "/rpc")):
                fuzz, started = Fuzzer(args.seed, args.max_string), time.monotonic()
                tally = run(post_sender(client, gw.url + path, {}), (fuzz.gateway_body() for _ in range(args.count)))
                answering = client.post(gw.url + "/perceptions", json=HELLO).status_code == 202
                results[name] = report(name, tally, answering, started)

            fuzz, started = Fuzzer(args.seed, args.max_string), time.monotonic()
            ws_url = gw.url.replace("http://", "ws://") + "/ws"
            results["gateway /ws"] = report("gateway /ws", fuzz_ws(ws_url, fuzz, args.count), ws_answers(ws_url),
                                            started)

            fuzz, started, tally = Fuzzer(args.seed, args.max_string), time.monotonic(), Tally()
            for _ in range(args.count):
                path = fuzz.rng.choice(["/companions/" + fuzz.path_segment(), "/metadata", "/metadata/errors",
                                        "/healthz", "/" + fuzz.path_segment()])
                method = fuzz.rng.choice(["GET", "GET", "HEAD", "POST", "DELETE"])
                r = client.request(method, registry + path, content=fuzz.gateway_body() if method == "POST" else b"")
                tally.count(r.status_code, r.content, f"{method} {path[:100]}")
            answering = client.get(registry + "/metadata").status_code == 200
            results["registry"] = report("registry", tally, answering, started)

            url = mcp.url + MCP_PATH
            opened = client.post(url, json=INIT, headers=MCP_HEADERS)
            session = {**MCP_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
            client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            fuzz, started = Fuzzer(args.seed, args.max_string), time.monotonic()
            tally = run(post_sender(client, url, session), (fuzz.mcp_body(tools) for _ in range(args.count)))
            answering = client.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                                    headers=session).status_code == 200
            results["mcp /mcp"] = report("mcp /mcp", tally, answering, started)

            for name, base, path, health in (("raw HTTP gateway", gw.url, "/rpc", "/health"),
                                             ("raw HTTP registry", registry, "/metadata", "/healthz"),
                                             ("raw HTTP mcp", mcp.url, MCP_PATH, None)):
                fuzz, started, tally = Fuzzer(args.seed, args.max_string), time.monotonic(), Tally()
                port = int(base.rsplit(":", 1)[1])
                for _ in range(args.count // 10):
                    request = fuzz.raw_head(path, port)
                    status, body = raw_exchange("127.0.0.1", port, request)
                    tally.count(status or 400, body, request[:120].decode("latin-1"))
                answering = client.get(base + health).status_code == 200 if health else \
                    client.post(mcp.url + MCP_PATH, json=INIT, headers=MCP_HEADERS).status_code == 200
                results[name] = report(name, tally, answering, started)
    finally:
        stop.set()
        gw.stop()
        mcp.stop()
        gw_bus.close()
        mcp_bus.close()
        broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out = ROOT / "bench" / "results" / "fuzz_services.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"count": args.count, "seed": args.seed, "endpoints": results}, indent=2))
    bad = sum(r["server_errors"] + r["not_json"] for r in results.values()) + \
        sum(not r["still_answering"] for r in results.values())
    print(f"\n{'PASS' if not bad else 'FAIL'}: 5xx, non-JSON answers and silent servers: {bad}; wrote {out}")
    return 1 if bad else 0


def report(name: str, tally: Tally, answering: bool, started: float) -> dict:
    seconds = time.monotonic() - started
    print(tally.line(name, answering) + f"  ({tally.sent / seconds:.0f}/s)", flush=True)
    for example in tally.examples:
        print(f"    {example}")
    return {"sent": tally.sent, "server_errors": tally.server_errors, "not_json": tally.not_json,
            "refused": tally.refused, "ok": tally.ok, "still_answering": answering, "seconds": round(seconds, 1),
            "examples": tally.examples}


if __name__ == "__main__":
    raise SystemExit(main())
