"""rondo.Client over real stdio and HTTP against examples/preferences.py, both eras."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rondo.client import Client, ElicitRequest

pytestmark = pytest.mark.slow
EXAMPLE = str(Path(__file__).resolve().parents[1].parent / "examples" / "preferences.py")


def answer(request: ElicitRequest) -> dict[str, Any]:
    if request.mode == "url":
        return {"action": "accept"}
    if "size" in (request.requested_schema or {}).get("properties", {}):
        return {"action": "accept", "content": {"size": "small"}}
    return {"action": "accept", "content": {"color": "green"}}


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, EXAMPLE, "--http", str(port)], stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1)
            break
        except urllib.error.HTTPError:
            break
        except OSError:
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(10)


async def flows(target: Any, protocol: str | None) -> tuple[str, list[str]]:
    async with Client(target, protocol=protocol, on_elicit=answer, elicit_modes=("form", "url"), timeout=30) as client:
        texts = [
            (await client.call_tool("favorite_color", {"user": "ann"})).text,
            (await client.call_tool("profile", {"user": "bo"})).text,
            (await client.read_resource("prefs://cy/color")).text,
            (await client.get_prompt("color_poem", {"user": "di"})).messages[0].content["text"],
        ]
        if client.era == "modern":
            texts.append((await client.call_tool("connect_calendar", {"user": "eve"})).text)
        return str(client.era), texts


EXPECTED = ["ann likes green.", "bo: color green, size small.", "cy likes green.",
            "Write a short poem for di about the color green."]


@pytest.mark.parametrize("protocol", [None, "2026-07-28", "2025-11-25"])
def test_stdio(protocol: str | None) -> None:
    era, texts = asyncio.run(flows([sys.executable, EXAMPLE, "--stdio"], protocol))
    assert era == ("legacy" if protocol == "2025-11-25" else "modern")
    assert texts[:4] == EXPECTED
    if era == "modern":
        assert texts[4] == "Calendar connected for eve."


@pytest.mark.parametrize("protocol", [None, "2026-07-28", "2025-11-25"])
def test_http(http_url: str, protocol: str | None) -> None:
    era, texts = asyncio.run(flows(http_url, protocol))
    assert era == ("legacy" if protocol == "2025-11-25" else "modern")
    assert texts[:4] == EXPECTED


def test_stdio_child_gets_only_the_environment_it_is_given() -> None:
    from rondo.client.transports.stdio import child_env

    env = child_env({"ONLY_THIS": "1"})
    assert env["ONLY_THIS"] == "1"
    assert "PYTEST_CURRENT_TEST" not in env and "VIRTUAL_ENV" not in env
