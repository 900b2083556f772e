"""One request path driven in process, without sockets: for profiles and instruction counts.

    .venv/bin/python benchmarks/inprocess.py rondo add 3000          # microseconds per op
    .venv/bin/python benchmarks/inprocess.py rondo leg1 3000 --profile
    .venv/bin/python benchmarks/inprocess.py rondo leg2 3000 --protocol
    bash benchmarks/instructions.sh rondo leg2                       # callgrind, instructions per op

Targets: `floor` (benchmarks/floor.py) and `rondo` (benchmarks/server.py). Paths: `add` and the
two MRTR legs through the ASGI app (`leg1` gets the input_required, `leg2` answers it with a
sealed state made once beforehand, `flow` does both), `stdio` is `add` through the stdio
transport's synchronous front. `--protocol` sends the HTTP paths as request bytes through the
uvicorn protocol each target is served with (the floor: plain uvicorn's httptools protocol, as
`uvicorn.run` builds it; rondo: `serve()`'s) on a stand-in transport, so the parsing, the
response writing and whatever code a request touches on the way count too. Wall-clock figures here have hot caches and say little about a
real server; the instruction counts are what before/after comparisons on this shared machine
use (`benchmarks/README.md`).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

V = "2026-07-28"


def meta(caps: dict[str, Any]) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": caps}


def body(rid: int, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode()


ADD = body(1, {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": meta({})})
LEG1 = body(1, {"name": "ask_color", "arguments": {}, "_meta": meta({"elicitation": {"form": {}}})})


def leg2_body(key: str, state: str | None) -> bytes:
    params: dict[str, Any] = {
        "name": "ask_color", "arguments": {}, "_meta": meta({"elicitation": {"form": {}}}),
        "inputResponses": {key: {"action": "accept", "content": {"color": "blue"}}}}
    if state is not None:
        params["requestState"] = state
    return body(2, params)


def scope(name: str) -> dict[str, Any]:
    headers = [(b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", V.encode()), (b"mcp-method", b"tools/call"),
               (b"mcp-name", name.encode()), (b"host", b"127.0.0.1:8000")]
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
            "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 8000)}


async def call(app: Any, name: str, data: bytes) -> bytes:
    sent: list[bytes] = []
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if given:
            await asyncio.sleep(3600)
        given = True
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    await app(scope(name), receive, send)
    return b"".join(sent)


class Transport:
    """A stand-in for the socket's transport: keeps what the protocol writes."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(bytes(data))

    def writelines(self, data: Any) -> None:
        self.written.append(b"".join(data))

    def close(self) -> None:
        pass

    abort = pause_reading = resume_reading = close

    def is_closing(self) -> bool:
        return False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)


def protocol_for(which: str, app: Any) -> tuple[Any, Transport]:
    """The HTTP protocol `which` is served with, in front of `app`, connected to a stand-in
    `Transport` (both given back)."""
    import uvicorn
    from uvicorn.server import ServerState

    options: dict[str, Any] = {"log_level": "warning", "access_log": False, "lifespan": "off"}
    cls: Any
    if which == "floor":  # benchmarks/floor.py: uvicorn.run with uvicorn's defaults
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        cls = HttpToolsProtocol
    else:  # rondo.transport.http.serve's protocol and options
        from rondo.transport.serve import SERVE_OPTIONS
        from rondo.transport.serve.limits import HttpLimits, guarded_protocol, uvicorn_options

        cls = guarded_protocol("httptools", HttpLimits())
        options.update(SERVE_OPTIONS, **uvicorn_options(HttpLimits()))
    config = uvicorn.Config(app, **options)
    config.load()
    protocol: Any = cls(config=config, server_state=ServerState(), app_state={},
                   _loop=asyncio.get_running_loop())
    transport = Transport()
    protocol.connection_made(transport)
    return protocol, transport


async def feed(protocol: Any, transport: Transport, raw: bytes) -> bytes:
    """`raw` (one request's bytes) given to `protocol`, awaited until its response is complete:
    what the protocol wrote for it, head and body."""
    transport.written.clear()
    before = protocol.cycle
    protocol.data_received(raw)
    while protocol.cycle is before or not protocol.cycle.response_complete:
        await asyncio.sleep(0)  # a request that became a task (every one, on plain uvicorn)
    return b"".join(transport.written)


def protocol_caller(which: str, app: Any) -> Any:
    """`call`, but through the HTTP protocol `which` is served with, from request bytes."""
    protocol, transport = protocol_for(which, app)

    async def call_bytes(_: Any, name: str, data: bytes) -> bytes:
        head = b"".join(b"%s: %s\r\n" % pair for pair in scope(name)["headers"])
        raw = b"POST /mcp HTTP/1.1\r\n%scontent-length: %d\r\n\r\n%s" % (head, len(data), data)
        return (await feed(protocol, transport, raw)).partition(b"\r\n\r\n")[2]

    return call_bytes


async def best_of_five(once: Callable[[], Awaitable[Any]], n: int, *, warm: int = 200,
                       clock: Callable[[], float] = time.perf_counter,
                       profiler: Any = None) -> float:
    """Microseconds per `await once()`: `warm` calls first, then the best of five runs of `n`,
    each timed by `clock`; a `profiler` given (a `cProfile.Profile`) runs over the five.
    benchmarks/proxy_inprocess.py, upstream_link.py and upstream_requests.py time with it too."""
    for _ in range(warm):
        await once()
    if profiler is not None:
        profiler.enable()
    best = float("inf")
    for _ in range(5):
        start = clock()
        for _ in range(n):
            await once()
        best = min(best, (clock() - start) / n * 1e6)
    if profiler is not None:
        profiler.disable()
    return best


def load(which: str) -> Any:
    if which == "floor":
        import floor

        return floor.app
    import server

    from rondo.transport.http import HttpApp

    return HttpApp(server.server)


async def run(which: str, path: str, n: int, profile: bool, through_protocol: bool = False) -> None:
    app = load(which)
    ask = protocol_caller(which, app) if through_protocol else call
    retry: dict[str, bytes] = {}

    async def add() -> None:
        assert b'"3"' in await ask(app, "add", ADD)

    async def leg1() -> dict[str, Any]:
        result: dict[str, Any] = json.loads(await ask(app, "ask_color", LEG1))["result"]
        return result

    async def leg2() -> None:
        if "body" not in retry:
            first = await leg1()
            retry["body"] = leg2_body(next(iter(first["inputRequests"])), first.get("requestState"))
        assert b"blue" in await ask(app, "ask_color", retry["body"])

    async def flow() -> None:
        first = await leg1()
        answer = leg2_body(next(iter(first["inputRequests"])), first.get("requestState"))
        assert b"blue" in await ask(app, "ask_color", answer)

    fn = {"add": add, "leg1": leg1, "leg2": leg2, "flow": flow}[path]
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    best = await best_of_five(fn, n, profiler=profiler)
    if profiler is not None:
        import pstats

        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    how = ", through the protocol" if through_protocol else ""
    print(f"{which} {path}: {best:.1f} us per op (best of 5 x {n}, hot caches{how})")


def stdio(which: str, n: int) -> None:
    import msgspec

    out: list[bytes] = []
    if which == "floor":
        import floor

        def one() -> None:
            out.append(floor.answer(ADD) + b"\n")
    else:
        import server

        from rondo.transport.stdio import answer_now

        encode = msgspec.json.encode

        def send(message: dict[str, Any]) -> None:
            out.append(encode(message) + b"\n")

        def one() -> None:
            answer_now(server.server, ADD, send)

    for _ in range(200):
        one()
    start = time.perf_counter()
    for _ in range(5 * n):
        one()
    assert b'"3"' in out[-1]
    print(f"{which} stdio: {(time.perf_counter() - start) / (5 * n) * 1e6:.1f} us per op (hot caches)")


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[0] not in ("floor", "rondo"):
        raise SystemExit(
            "usage: inprocess.py floor|rondo add|leg1|leg2|flow|stdio N [--profile] [--protocol]")
    which, path, n = argv[0], argv[1], int(argv[2])
    if path == "stdio":
        stdio(which, n)
        return
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(run(which, path, n, "--profile" in argv, "--protocol" in argv))


if __name__ == "__main__":
    main(sys.argv[1:])
