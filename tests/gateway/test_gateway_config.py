"""`rondo.gateway.from_mcp_json` and `rondo.client.ClientGroup`: many upstreams of an mcp.json,
one on loopback HTTP (recording headers), one over stdio, one down. The live ones serve under
their namespaces with their own headers and timeouts; the down one costs the others nothing."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

import rondo
from rondo.client import Client, ClientGroup, ConfigError, ElicitRequest, ElicitResult
from rondo.gateway import from_mcp_json
from tests.helpers.gateway_upstream import Recorder, free_port, served, upstream_server
from tests.helpers.processes import end

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
ERAS = ["2025-11-25", "2026-07-28"]


def blue(request: ElicitRequest) -> Any:
    return ElicitResult("accept", {"color": "blue"})


def config(url: str) -> dict[str, Any]:
    return {"mcpServers": {
        "web": {"url": url, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}, "timeout": 1},
        "local": {"command": sys.executable, "args": [str(HELPERS / "gateway_upstream.py")],
                  "env": {"UNUSED": "x"}, "timeout": 20},
        "down": {"url": f"http://127.0.0.1:{free_port()}/mcp"},
    }}


@pytest.fixture
def upstream() -> Any:
    recorder = Recorder(upstream_server().asgi())
    with served(recorder) as (url, _):
        yield url, recorder


@pytest.mark.parametrize("protocol", ERAS)
def test_many_upstreams_namespaced_one_down(upstream: Any, protocol: str,
                                            caplog: pytest.LogCaptureFixture) -> None:
    url, recorder = upstream
    front = from_mcp_json(config(url), environ={"WEB_TOKEN": "gw-own"})

    async def go() -> None:
        async with front.started(), Client(front, protocol=protocol, on_elicit=blue,
                                           timeout=30) as client:
            names = [t.name for t in await client.list_tools()]
            assert {n.split("_", 1)[0] for n in names} == {"web", "local"}  # "down" has none
            assert "web_add" in names and "local_add" in names
            assert (await client.call_tool("web_add", {"a": 2, "b": 3})).text == "5"
            assert (await client.call_tool("local_add", {"a": 4, "b": 5})).text == "9"
            assert (await client.call_tool("web_color")).text == "color=blue"
            assert (await client.call_tool("local_cleanup", {"folder": "/g"})).text == (
                "step 2: /g blue")
            # web's own timeout (1 s) bounds its calls; local's (20 s) is not in play.
            with pytest.raises(rondo.McpError, match="^upstream did not answer within 1 s$"):
                await asyncio.wait_for(client.call_tool("web_hang"), 10)
            assert (await client.read_resource("up://today")).text == "sunny"

    with caplog.at_level(logging.WARNING, logger="rondo.gateway"):
        asyncio.run(go())
    assert {post.get("authorization") for post in recorder.posts} == {"Bearer gw-own"}
    assert any("upstream down: proxy 'down': cannot reach its upstream" in r.getMessage()
               for r in caplog.records)


def test_an_upstream_that_comes_up_later_is_served_without_a_restart() -> None:
    port = free_port()
    front = from_mcp_json({"mcpServers": {"late": {"url": f"http://127.0.0.1:{port}/mcp"}}},
                          restart=rondo.gateway.Restart(first=0.1, most=0.2, attempts=200))

    async def go() -> None:
        async with front.started(), Client(front) as client:
            # Nothing served yet: tools are offered (any upstream can bring them), none listed.
            assert await client.list_tools() == []
            import uvicorn

            from tests.helpers.gateway_upstream import stop

            late = uvicorn.Server(uvicorn.Config(upstream_server().asgi(), host="127.0.0.1",
                                                 port=port, log_level="warning"))
            task = asyncio.create_task(late.serve())
            try:
                deadline = asyncio.get_running_loop().time() + 20
                while not front.tools:
                    assert asyncio.get_running_loop().time() < deadline, "never served"
                    await asyncio.sleep(0.05)
                assert "late_add" in [t.name for t in await client.list_tools(refresh=True)]
                assert (await client.call_tool("late_add", {"a": 1, "b": 1})).text == "2"
            finally:
                late.force_exit = True  # the proxy's follow stream would hold a graceful stop
                stop(late)
                await asyncio.wait_for(task, 10)

    asyncio.run(go())


@pytest.mark.parametrize("document, message", [
    ({"mcpServers": {}}, "names no enabled server"),
    ({"mcpServers": {"my_server": {"command": "x"}}}, "server 'my_server': a gateway serves"),
    ({"mcpServers": {"a": {"url": "http://h", "headers": {"A": "${NOT_SET_HERE}"}}}},
     "NOT_SET_HERE"),
])
def test_a_configuration_that_cannot_be_served_fails_before_starting(document: Any,
                                                                     message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        from_mcp_json(document, environ={})


def test_a_client_group_connects_to_every_server_at_once(upstream: Any) -> None:
    url, recorder = upstream

    servers = config(url)
    down = servers["mcpServers"]["down"]["url"]

    async def go() -> None:
        async with ClientGroup(servers, environ={"WEB_TOKEN": "group-own"},
                               on_elicit=blue, connect_timeout=20) as group:
            assert sorted(group) == ["local", "web"] and len(group) == 2
            # Nothing listens on the down server's port: the HTTP transport's refusal, named.
            assert group.failed == {
                "down": f"TransportError: HTTP request to {down} failed: All connection attempts failed"}
            assert (await group["web"].call_tool("color")).text == "color=blue"
            assert (await group["local"].call_tool("add", {"a": 1, "b": 2})).text == "3"
            assert group["web"].timeout == 1.0 and group["local"].timeout == 20.0
            with pytest.raises(KeyError, match="server 'down' is not connected"):
                group["down"]
        assert len(group) == 0  # closed

    asyncio.run(go())
    assert {post.get("authorization") for post in recorder.posts} == {"Bearer group-own"}


def test_a_strict_group_does_not_start_with_a_server_down(upstream: Any) -> None:
    url, _ = upstream

    async def go() -> None:
        async with ClientGroup(config(url), environ={"WEB_TOKEN": "t"}, strict=True):
            raise AssertionError("started with a server down")

    with pytest.raises(rondo.client.ClientError, match="1 server.* could not be reached; 'down'"):
        asyncio.run(go())


def test_a_group_refuses_options_that_are_each_servers_own() -> None:
    with pytest.raises(ValueError, match="headers= is each server's own"):
        ClientGroup({"mcpServers": {"a": {"command": "x"}}}, headers={"A": "b"})


def test_rondo_gateway_serves_an_mcp_json_over_http(upstream: Any, tmp_path: Path) -> None:
    import json
    import os
    import signal
    import subprocess

    from tests.gateway.test_gateway_cli import wait_for_line

    url, recorder = upstream
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config(url)))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rondo", "gateway", str(path), "--http", str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "WEB_TOKEN": "cli-own"})
    try:
        wait_for_line(proc, b"serving rondo-gateway at")

        async def go() -> None:
            for protocol in ERAS:
                async with Client(f"http://127.0.0.1:{port}/mcp", protocol=protocol,
                                  on_elicit=blue, timeout=30) as client:
                    assert (await client.call_tool("web_color")).text == "color=blue"
                    assert (await client.call_tool("local_add", {"a": 1, "b": 2})).text == "3"

        asyncio.run(go())
    finally:
        end(proc, 10, signal.SIGINT)
    assert {post.get("authorization") for post in recorder.posts} == {"Bearer cli-own"}


def test_rondo_gateway_refuses_a_bad_file_before_starting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from rondo.cli import main

    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"a": {"url": "http://h", '
                    '"headers": {"Authorization": "Bearer ${GW_UNSET_TOKEN}"}}, '
                    '"b": {"command": "x", "env": {"KEY": "hunter2-secret"}, "oops": 1}}}')
    monkeypatch.delenv("GW_UNSET_TOKEN", raising=False)
    assert main(["gateway", str(path)]) == 2
    err = capsys.readouterr().err
    assert "rondo gateway: server 'a': headers.Authorization names ${GW_UNSET_TOKEN}" in err
    path.write_text('{"mcpServers": {"b": {"command": "x", "env": {"KEY": "hunter2-secret"}, '
                    '"oops": 1}}}')
    assert main(["gateway", str(path)]) == 2
    err = capsys.readouterr().err
    assert "server 'b': unknown key 'oops'" in err and "hunter2" not in err


@pytest.mark.parametrize("mode", ["hold", "replay"])
def test_a_gateway_bridges_its_legacy_upstreams(upstream: Any, mode: str) -> None:
    url, _ = upstream
    # The upstream spoken to as 2025-11-25: its ctx.ask is a mid-call elicitation/create,
    # which the bridge serves to a 2026-07-28 client as an input round.
    front = from_mcp_json({"mcpServers": {"old": {"url": url, "timeout": 10}}},
                          upstream_protocol="2025-11-25", bridge=mode)

    async def go() -> None:
        async with front.started(), Client(front, protocol="2026-07-28", on_elicit=blue) as c:
            assert (await c.call_tool("old_color")).text == "color=blue"

    asyncio.run(go())


def test_rondo_gateway_refuses_hold_across_workers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rondo.cli import main

    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"a": {"url": "http://127.0.0.1:9/mcp"}}}')
    assert main(["gateway", str(path), "--bridge", "hold", "--workers", "2"]) == 2
    assert "--bridge hold keeps each held call" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="2"):
        main(["gateway", str(path), "--bridge", "sometimes"])
