"""The path rule (the mount point is the endpoint), lifespan hooks, and the client's redirect
rule (307/308 within the origin), in process and under a real uvicorn with FastAPI."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import rondo
from rondo.client import Client
from rondo.client.errors import TransportError
from rondo.client.transports.http import HttpTransport

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
DISCOVER = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover",
           "Accept": "application/json, text/event-stream"}


async def status(app: Any, path: str, root_path: str = "") -> int:
    """POST server/discover to `path` with the ASGI scope a router would give (root_path)."""
    sent: list[dict[str, Any]] = []
    body = httpx.Request("POST", "http://localhost", json=DISCOVER).read()
    scope = {"type": "http", "method": "POST", "path": path, "root_path": root_path,
             "headers": [(k.lower().encode(), v.encode()) for k, v in
                         {**HEADERS, "Host": "localhost", "Content-Type": "application/json"}.items()],
             "query_string": b"", "http_version": "1.1", "scheme": "http"}
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return int(sent[0]["status"])


@pytest.mark.parametrize(("path", "root_path", "expected"), [
    ("/mcp", "", 200), ("/mcp/", "", 200), ("/other", "", 404), ("/", "", 404),   # on its own
    ("/api/mcp/", "/api/mcp", 200), ("/api/mcp", "/api/mcp", 200),               # mounted
    ("/api/mcp/x", "/api/mcp", 404), ("/api/mcp/mcp", "/api/mcp", 404),
])
def test_the_mount_point_is_the_endpoint(path: str, root_path: str, expected: int) -> None:
    app = rondo.Server("paths", state=None).asgi()
    assert asyncio.run(status(app, path, root_path)) == expected


def test_path_none_answers_anywhere() -> None:
    app = rondo.Server("paths", state=None).asgi(path=None)
    assert asyncio.run(status(app, "/anything/at/all")) == 200


def lifespan_server(events: list[str]) -> rondo.Server:
    server = rondo.Server("life", state=None)

    @server.lifespan
    async def first(srv: rondo.Server):
        events.append(f"open first for {srv.name}")
        yield {"db": "pool"}
        events.append("close first")

    @server.lifespan
    async def second(srv: rondo.Server):
        events.append("open second")
        yield None
        events.append("close second")

    @server.tool
    def which(ctx: rondo.Context) -> str:
        """The pool the lifespan opened."""
        return str(ctx.lifespan["db"])

    return server


def test_lifespan_hooks_run_in_order_and_reach_handlers() -> None:
    events: list[str] = []
    server = lifespan_server(events)

    async def go() -> str:
        # Entered twice (a parent app and the mounted one): the second is a no-op.
        async with server.started(), server.started(), Client(server) as client:
            return (await client.call_tool("which", {})).text

    assert asyncio.run(go()) == "pool"
    assert events == ["open first for life", "open second", "close second", "close first"]


def test_missing_lifespan_value_says_why() -> None:
    server = rondo.Server("nolife", state=None)

    @server.tool
    def which(ctx: rondo.Context) -> str:
        """Reads a value no hook provided."""
        return str(ctx.lifespan["db"])

    async def go() -> Any:
        async with Client(server) as client:
            return await client.call_tool("which", {})

    result = asyncio.run(go())
    assert result.is_error and "server.started()" in result.text and "lifespan=mcp.lifespan" in result.text


def test_asgi_lifespan_protocol_reports_a_failing_hook() -> None:
    server = rondo.Server("broken", state=None)

    @server.lifespan
    async def database(srv: rondo.Server):
        raise ConnectionError("database is down")
        yield  # pragma: no cover

    app = server.asgi()
    inbox = [{"type": "lifespan.startup"}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return inbox.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app({"type": "lifespan"}, receive, send))
    assert sent == [{"type": "lifespan.startup.failed", "message": "ConnectionError: database is down"}]


def redirecting(status_code: int, location: str) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status_code, headers={"location": location})

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(("code", "location", "says"), [
    (307, "https://elsewhere.example/mcp", "another origin"),
    (308, "http://127.0.0.1:9/mcp", "another origin"),  # another port is another origin
    (302, "/mcp/", "would turn the POST into a GET"),
])
def test_client_refuses_redirects_it_must_not_follow(code: int, location: str, says: str) -> None:
    async def go() -> None:
        http = redirecting(code, location)
        async with Client(HttpTransport("http://127.0.0.1:8/mcp", http_client=http),
                          protocol="2026-07-28") as client:
            await client.list_tools()

    with pytest.raises(TransportError, match=says) as exc:
        asyncio.run(go())
    assert f"redirected to {httpx.URL('http://127.0.0.1:8/mcp').join(location)}" in str(exc.value) \
        or f"redirecting to {httpx.URL('http://127.0.0.1:8/mcp').join(location)}" in str(exc.value)


FASTAPI_APP = textwrap.dedent('''
    import asyncio
    from fastapi import FastAPI
    import rondo

    server = rondo.Server("mounted", state=None)

    @server.lifespan
    async def resources(srv):
        yield {"greeting": "hello"}

    @server.tool
    async def count(n: int, ctx: rondo.Context) -> str:
        """Count with progress."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
            await asyncio.sleep(0.01)
        return f"{ctx.lifespan['greeting']}: counted {n}"

    mcp = server.asgi()
    app = FastAPI(lifespan=mcp.lifespan)
    app.mount("/mcp", mcp)
''')


@pytest.mark.slow
def test_fastapi_mount_under_uvicorn_at_mcp_and_mcp_slash(tmp_path: Path, free_port: int) -> None:
    (tmp_path / "shop.py").write_text(FASTAPI_APP)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "shop:app", "--port", str(free_port), "--log-level", "warning"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ})
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{free_port}/", timeout=0.5)
                break
            except httpx.HTTPError:
                assert proc.poll() is None and time.monotonic() < deadline, "uvicorn did not start"
                time.sleep(0.1)

        async def go(url: str) -> tuple[str, list[tuple[float, float | None]]]:
            seen: list[tuple[float, float | None]] = []
            async with Client(url) as client:
                result = await client.call_tool(
                    "count", {"n": 3}, on_progress=lambda p, total, msg: seen.append((p, total)))
                assert client.transport.url == f"http://127.0.0.1:{free_port}/mcp/"  # type: ignore[attr-defined]
                return result.text, seen

        for url in (f"http://127.0.0.1:{free_port}/mcp", f"http://127.0.0.1:{free_port}/mcp/"):
            text, seen = asyncio.run(go(url))
            assert text == "hello: counted 3"
            assert seen == [(1, 3), (2, 3), (3, 3)]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)


LIFESPAN_STDIO = textwrap.dedent('''
    import rondo

    server = rondo.Server("stdio-life", state=None)

    @server.lifespan
    async def resources(srv):
        yield {"greeting": "hello from the lifespan"}

    @server.tool
    def lifespan_value(ctx: rondo.Context) -> str:
        """The lifespan value."""
        return ctx.lifespan["greeting"]

    if __name__ == "__main__":
        server.run_stdio()
''')


@pytest.mark.slow
def test_stdio_runs_the_lifespan(tmp_path: Path) -> None:
    app = tmp_path / "life.py"
    app.write_text(LIFESPAN_STDIO)

    async def go() -> str:
        async with Client([sys.executable, str(app)]) as client:
            return (await client.call_tool("lifespan_value", {})).text

    assert asyncio.run(go()) == "hello from the lifespan"


def _protected_fastapi(well_known: bool) -> Any:
    """A protected server mounted at /mcp in FastAPI; its metadata mounted too when asked."""
    from fastapi import FastAPI

    from rondo.auth import Principal, ResourceServer

    class Verifier:
        async def verify(self, token: str) -> Principal:
            return Principal.from_claims({"sub": token, "iss": "https://sso.example.com",
                                          "exp": time.time() + 60})

    auth = ResourceServer(resource="https://api.example.com/mcp", issuer="https://sso.example.com",
                          verifier=Verifier())
    mcp = rondo.Server("guarded", auth=auth, state=None).asgi(allowed_hosts=["api.example.com"])
    app = FastAPI()
    app.mount("/mcp", mcp)
    if well_known:
        app.mount("/.well-known/oauth-protected-resource", mcp.well_known)
    return app


async def _challenge_then_metadata(app: Any) -> tuple[int, httpx.Response]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://api.example.com") as http:
        denied = await http.post("/mcp/", json={})
        pointed = denied.headers["www-authenticate"].split('resource_metadata="')[1].rstrip('"')
        return denied.status_code, await http.get(pointed)


def test_mounted_protected_server_serves_the_metadata_its_401_points_to() -> None:
    status, meta = asyncio.run(_challenge_then_metadata(_protected_fastapi(well_known=True)))
    assert status == 401
    assert meta.status_code == 200
    assert meta.json() == {"resource": "https://api.example.com/mcp",
                           "authorization_servers": ["https://sso.example.com"],
                           "bearer_methods_supported": ["header"]}


def test_without_the_well_known_mount_the_401_points_at_nothing() -> None:
    # What a new user hit: the mounted app never sees /.well-known/...; the docs say why.
    status, meta = asyncio.run(_challenge_then_metadata(_protected_fastapi(well_known=False)))
    assert (status, meta.status_code) == (401, 404)


def test_well_known_app_answers_only_the_metadata_paths() -> None:
    app = _protected_fastapi(well_known=True)

    async def probe() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://api.example.com") as http:
            return [(await http.get(p)).status_code for p in (
                "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/x",
                "/.well-known/oauth-protected-resource/")]

    assert asyncio.run(probe()) == [200, 404, 404]


def test_well_known_on_an_unprotected_server_fails_at_start_up() -> None:
    with pytest.raises(ValueError, match="has no auth="):
        rondo.Server("open", state=None).asgi().well_known  # noqa: B018
