"""The HTTP transport's error messages name the server (scheme, host, port, path) but never a
URL's userinfo or query, where a credential may sit (`?api_key=`): the messages reach logs,
a gateway's included (its upstream unreachable is logged each retry)."""

from __future__ import annotations

import asyncio
import logging

import pytest

import rondo
from rondo.client import TransportError
from rondo.client.transports.http import shown
from rondo.gateway.config import from_mcp_json
from tests.helpers.loopback import free_port


@pytest.mark.parametrize(("url", "named"), [
    ("http://127.0.0.1:8000/mcp?api_key=SEKRET", "http://127.0.0.1:8000/mcp"),
    ("https://user:SEKRET@mcp.example.com/mcp", "https://mcp.example.com/mcp"),
    ("http://[::1]:9/x?token=SEKRET#SEKRET", "http://[::1]:9/x"),
    ("https://mcp.example.com", "https://mcp.example.com"),
])
def test_a_url_is_shown_without_its_credentials(url: str, named: str) -> None:
    assert shown(url) == named


def test_an_unreachable_server_is_named_without_its_credentials() -> None:
    url = f"http://user:SEKRET1@127.0.0.1:{free_port()}/mcp?api_key=SEKRET2"

    async def go() -> None:
        async with rondo.Client(url):
            raise AssertionError("connected to a closed port")

    with pytest.raises(TransportError, match=r"127\.0\.0\.1:\d+/mcp") as caught:
        asyncio.run(go())
    assert "SEKRET" not in str(caught.value) and "SEKRET" not in repr(caught.value)


def test_a_gateway_logs_an_unreachable_upstream_without_its_credentials(
        caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    gateway = from_mcp_json({"mcpServers": {"web": {
        "url": f"http://127.0.0.1:{port}/mcp?api_key=SEKRET"}}})

    async def go() -> None:
        async with gateway.started():
            deadline = asyncio.get_running_loop().time() + 10
            while "cannot reach its upstream" not in caplog.text:
                assert asyncio.get_running_loop().time() < deadline, "no failure was logged"
                await asyncio.sleep(0.02)

    with caplog.at_level(logging.INFO, logger="rondo.gateway"):
        asyncio.run(go())
    assert f"127.0.0.1:{port}/mcp" in caplog.text
    assert "SEKRET" not in caplog.text
