"""The 2024-11-05 HTTP+SSE transport: rondo's client transport for it against a real old-style
server nobody here wrote (the official Python SDK, `mcp` 2.3.0 from its own pinned venv,
installed by scripts/setup.sh), on its own, in a ClientGroup, and as an mcp.json "sse" upstream
behind a gateway walked on both downstream eras; and what the transport refuses."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client, ClientGroup, ProtocolError, TransportError
from rondo.client.transports.legacy_sse import SseTransport
from rondo.gateway import from_mcp_json
from tests.helpers.gateway_upstream import free_port, served, upstream_server
from tests.helpers.sdk_sse import SDK_PYTHON, sdk_sse_server

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "helpers" / "sse_upstream_mcp.py"
ERAS = ["2025-11-25", "2026-07-28"]


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with sdk_sse_server(SERVER) as server:
        yield server.url


@pytest.mark.parametrize("protocol", [None, "2025-11-25"])
def test_rondo_client_over_the_sse_transport(sse_url: str, protocol: str | None) -> None:
    async def go() -> None:
        async with Client(SseTransport(sse_url), protocol=protocol, timeout=10) as client:
            # The SDK answers the modern probe even over SSE; pinned, the 2025 handshake runs.
            assert client.era == ("legacy" if protocol else "modern")
            assert (client.server_info or {}).get("name") == "old-sse"
            assert sorted(t.name for t in await client.list_tools()) == ["add", "shout"]
            assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
            got = await client.get_prompt("greet", {"name": "Ada"})
            assert got.messages[0].content == {"type": "text", "text": "Hello Ada"}

    asyncio.run(go())


@pytest.mark.parametrize("protocol", ERAS)
def test_an_sse_upstream_behind_a_gateway(sse_url: str, protocol: str) -> None:
    with served(upstream_server().asgi()) as (good, _):
        config = {"mcpServers": {"old": {"type": "sse", "url": sse_url, "timeout": 10},
                                 "new": {"url": good}}}
        front = from_mcp_json(config)

        async def go() -> None:
            async with front.started(), Client(front, protocol=protocol) as client:
                names = [t.name for t in await client.list_tools()]
                assert {"old_add", "old_shout", "new_add"} <= set(names)
                assert (await client.call_tool("old_shout", {"text": "hi"})).text == "HI"
                assert (await client.call_tool("new_add", {"a": 1, "b": 1})).text == "2"
                got = await client.get_prompt("old_greet", {"name": "Bo"})
                assert got.messages[0].content == {"type": "text", "text": "Hello Bo"}

        asyncio.run(go())

        async def grouped() -> None:
            async with ClientGroup(config) as group:
                assert sorted(group) == ["new", "old"] and group.failed == {}
                assert (await group["old"].call_tool("add", {"a": 4, "b": 4})).text == "8"

        asyncio.run(grouped())


def _fake(endpoint: bytes | None, ctype: bytes = b"text/event-stream") -> Any:
    """An ASGI app answering GET with an SSE stream naming `endpoint`, then closing."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", ctype)]})
        if endpoint is not None:
            await send({"type": "http.response.body",
                        "body": b"event: endpoint\ndata: " + endpoint + b"\n\n",
                        "more_body": True})
            await asyncio.sleep(0.2)
        await send({"type": "http.response.body", "body": b""})

    return app


@pytest.mark.parametrize("endpoint, ctype, error, message", [
    (b"http://elsewhere.example/messages", b"text/event-stream", ProtocolError,
     "^the server named a message endpoint on another origin$"),
    (None, b"application/json", ProtocolError, "^the SSE endpoint answered application/json$"),
    (None, b"text/event-stream", TransportError, "^the server closed its SSE stream$"),
])
def test_what_the_sse_transport_refuses(endpoint: bytes | None, ctype: bytes,
                                        error: type[Exception], message: str) -> None:
    with served(_fake(endpoint, ctype)) as (url, _):

        async def go() -> None:
            transport = SseTransport(url.replace("/mcp", "/sse"), connect_timeout=5)
            with pytest.raises(error, match=message):
                await transport.start(lambda message: asyncio.sleep(0))  # type: ignore[arg-type,return-value]

        asyncio.run(go())


def test_a_stream_that_ends_fails_pending_requests() -> None:
    with served(_fake(b"/messages")) as (url, _):

        async def go() -> None:
            transport = SseTransport(url.replace("/mcp", "/sse"), connect_timeout=5)
            await transport.start(lambda message: asyncio.sleep(0))  # type: ignore[arg-type,return-value]
            assert transport.endpoint is not None and transport.endpoint.endswith("/messages")
            await asyncio.wait_for(transport.wait_ended(), 5)
            with pytest.raises(TransportError, match="closed its SSE stream"):
                await transport.request({"jsonrpc": "2.0", "id": 1, "method": "ping"})
            await transport.close()

        asyncio.run(go())


def test_the_docs_sse_entry_is_read_as_an_sse_upstream() -> None:
    import json
    import re

    from rondo.client import load_mcp_json

    page = (ROOT / "docs" / "gateway.md").read_text()
    section = page[page.index("## Old servers: the 2024-11-05 HTTP+SSE transport"):]
    blocks = re.findall(r"```json\n(.*?)```", section, re.S)
    assert blocks, "the SSE section lost its mcp.json block"
    entry = load_mcp_json(json.loads(blocks[0]))["legacy"]
    assert (entry.kind, entry.url, entry.timeout) == ("sse", "http://127.0.0.1:8001/sse", 10.0)
    assert rondo.proxy(entry).name == "rondo-proxy"  # accepted as an upstream


def test_an_sse_upstream_that_goes_away_is_connected_again() -> None:
    from rondo.gateway import Restart

    port = free_port()

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([str(SDK_PYTHON), str(SERVER), str(port)],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        return proc

    def stop(proc: subprocess.Popen[bytes]) -> None:
        proc.kill()
        proc.wait()

    if not SDK_PYTHON.exists():
        raise AssertionError(f"{SDK_PYTHON} is missing: `bash scripts/setup.sh` installs it")
    first = start()
    front = from_mcp_json({"mcpServers": {"old": {"type": "sse", "timeout": 5,
                                                  "url": f"http://127.0.0.1:{port}/sse"}}},
                          restart=Restart(first=0.2, most=0.5, attempts=100, steady=60))
    second: subprocess.Popen[bytes] | None = None
    try:
        async def go() -> None:
            nonlocal second
            async with front.started(), Client(front) as client:
                deadline = time.monotonic() + 20
                while not front.tools:  # the SDK may still be binding its port
                    assert time.monotonic() < deadline, "never connected"
                    await asyncio.sleep(0.05)
                assert (await client.call_tool("old_add", {"a": 1, "b": 2})).text == "3"
                stop(first)  # the stream ends: calls are unavailable, the keeper reconnects
                with pytest.raises(rondo.McpError, match="^upstream unavailable"):
                    await asyncio.wait_for(client.call_tool("old_add", {"a": 1, "b": 2}), 10)
                second = await asyncio.to_thread(start)
                deadline = time.monotonic() + 30
                while True:
                    try:
                        done = await client.call_tool("old_add", {"a": 2, "b": 2})
                        break
                    except rondo.McpError as exc:
                        assert exc.code == -32603
                        assert time.monotonic() < deadline, "never connected again"
                        await asyncio.sleep(0.1)
                assert done.text == "4"

        asyncio.run(go())
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                stop(proc)


@pytest.mark.parametrize("protocol", ERAS)
def test_a_bare_sse_url_proxied_with_transport_sse(sse_url: str, protocol: str) -> None:
    front = rondo.proxy(sse_url, transport="sse", timeout=10)

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol) as client:
            assert sorted(t.name for t in await client.list_tools()) == ["add", "shout"]
            assert (await client.call_tool("shout", {"text": "hi"})).text == "HI"
            got = await client.get_prompt("greet", {"name": "Cy"})
            assert got.messages[0].content == {"type": "text", "text": "Hello Cy"}

    asyncio.run(go())


def test_rondo_proxy_transport_sse_flag(sse_url: str) -> None:
    """`rondo proxy --transport sse URL`, a real process served over stdio, in front of the
    official SDK's SSE server."""
    import sys

    command = [sys.executable, "-m", "rondo", "proxy", "--transport", "sse", sse_url,
               "--timeout", "10"]

    async def go() -> None:
        async with Client(command, timeout=30) as client:
            assert sorted(t.name for t in await client.list_tools()) == ["add", "shout"]
            assert (await client.call_tool("add", {"a": 20, "b": 22})).text == "42"

    asyncio.run(go())


def test_transport_is_checked_at_construction(capsys: pytest.CaptureFixture[str]) -> None:
    from rondo.cli import main

    with pytest.raises(ValueError, match="^transport must be 'http' or 'sse', got 'ws'$"):
        rondo.proxy("http://127.0.0.1:1/sse", transport="ws")
    with pytest.raises(ValueError, match="^transport= goes with an upstream given as a URL$"):
        rondo.proxy(["python", "server.py"], transport="sse")
    assert main(["proxy", "--transport", "sse", "python server.py"]) == 2
    assert "--transport goes with an upstream URL" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        main(["proxy", "--transport", "ws", "http://127.0.0.1:1/sse"])
