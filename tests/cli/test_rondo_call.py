"""`rondo call` end to end: lists with argument schemas, tools, resources, templates, prompts,
`--json` everywhere, progress and log lines, on stdio and HTTP, in both eras."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

APP = textwrap.dedent('''
    import asyncio
    from typing import Literal
    import rondo

    server = rondo.Server("shop", "2.0.0", state=None)


    @server.tool
    async def pack(items: int, speed: Literal["slow", "fast"] = "fast", ctx: rondo.Context = None) -> str:
        """Pack some boxes.

        Longer text the listing leaves out."""
        await ctx.log("info", "packing started", logger="packer")
        for i in range(1, items + 1):
            await ctx.report_progress(i, items, f"box {i}")
            await asyncio.sleep(0.01)
        await ctx.debug("too chatty to show at info")
        return f"packed {items} ({speed})"


    @server.resource("shop://hours", mime_type="text/plain")
    def hours() -> str:
        """Opening hours."""
        return "9 to 5"


    @server.resource("shop://items/{name}", name="item")
    def item(name: str) -> str:
        """One item's page."""
        return f"all about {name}"


    @server.prompt
    def advert(product: str) -> str:
        """An advert for a product."""
        return f"Write an advert for {product}."
''')


def rondo_call(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rondo", "call", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("call") / "shop.py"
    path.write_text(APP)
    return path


@pytest.fixture(scope="module")
def http_url(app: Path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "rondo", "run", str(app), "--http", str(port)],
                            stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    deadline = time.monotonic() + 15
    while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
        assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.send_signal(signal.SIGINT)
    proc.wait(10)


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, app: Path) -> str:
    if request.param == "stdio":
        return f"{sys.executable} -m rondo run {app}"
    return str(request.getfixturevalue("http_url"))


def test_listing_shows_everything_with_argument_schemas(target: str) -> None:
    done = rondo_call(target)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tools:",
        '  pack(items: integer, speed?: "slow" | "fast" = "fast")  Pack some boxes.',
        "resources:",
        "  shop://hours  (hours)  Opening hours.",
        "templates:",
        "  shop://items/{name}  (item)  One item's page.",
        "prompts:",
        "  advert(product)  An advert for a product.",
    ]


def test_listing_one_kind_as_json(target: str) -> None:
    done = rondo_call(target, "--list", "prompts", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"prompts": [{
        "name": "advert", "description": "An advert for a product.",
        "arguments": [{"name": "product", "required": True}]}]}


def test_call_shows_progress_and_logs_on_stderr(target: str) -> None:
    done = rondo_call(target, "pack", '{"items": 3}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "packed 3 (fast)\n"
    err = done.stderr.splitlines()
    assert "[info] packer: packing started" in err
    assert f"[{'#' * 8}{'-' * 16}] 1/3  box 1" in err and f"[{'#' * 24}] 3/3  box 3" in err
    assert not any("too chatty" in line for line in err)  # below --log-level info
    quiet = rondo_call(target, "pack", '{"items": 1}', "--log-level", "off")
    assert "packing started" not in quiet.stderr
    chatty = rondo_call(target, "pack", '{"items": 1}', "--log-level", "debug")
    assert "too chatty to show at info" in chatty.stderr


def test_read_resources_and_templates_and_get_prompts(target: str) -> None:
    assert rondo_call(target, "--read", "shop://hours").stdout == "9 to 5\n"
    assert rondo_call(target, "--read", "shop://items/pear").stdout == "all about pear\n"
    got = rondo_call(target, "--get", "advert", '{"product": "pears"}')
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[-1] == "user: Write an advert for pears."
    as_json = json.loads(rondo_call(target, "--read", "shop://hours", "--json").stdout)
    assert as_json["contents"] == [{"uri": "shop://hours", "mimeType": "text/plain", "text": "9 to 5"}]
    prompt = json.loads(rondo_call(target, "--get", "advert", '{"product": "figs"}', "--json").stdout)
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text", "text": "Write an advert for figs."}}]
    result = json.loads(rondo_call(target, "pack", '{"items": 1}', "--json").stdout)
    assert result["content"] == [{"type": "text", "text": "packed 1 (fast)"}] and result["isError"] is False


def test_the_legacy_era_shows_logs_too(target: str) -> None:
    done = rondo_call(target, "pack", '{"items": 2}', "--protocol", "2025-11-25")
    assert done.returncode == 0, done.stderr
    assert "[info] packer: packing started" in done.stderr and "2/2  box 2" in done.stderr


def test_bad_usage_is_explained(target: str) -> None:
    both = rondo_call(target, "pack", "--read", "shop://hours")
    assert both.returncode == 2 and "give one of TOOL, --read URI or --get PROMPT" in both.stderr
    level = rondo_call(target, "--log-level", "loud")
    assert level.returncode == 2 and "--log-level must be one of" in level.stderr


def test_an_unknown_protocol_version_is_refused_naming_the_valid_ones(app: Path) -> None:
    refused = rondo_call(str(app), "--protocol", "2024-01-01")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "invalid choice: '2024-01-01'" in refused.stderr
    assert "2026-07-28" in refused.stderr and "2025-11-25" in refused.stderr
    helped = rondo_call("--help")
    assert helped.returncode == 0
    assert "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05" in " ".join(helped.stdout.split())


def test_a_server_file_is_a_target_and_arguments_may_be_name_value_pairs(app: Path) -> None:
    listed = rondo_call(str(app), "--list", "tools")
    assert listed.returncode == 0, listed.stderr
    assert "pack(" in listed.stdout
    called = rondo_call(str(app), "pack", "items=2", "speed=slow")
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "packed 2 (slow)"
    named = rondo_call(f"{app}:server", "pack", '{"items": 1}')
    assert named.stdout.strip() == "packed 1 (fast)", named.stderr
    wrong = rondo_call(str(app), "pack", "items=two")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "items='two': the tool wants integer" in wrong.stderr
    prompt = rondo_call(str(app), "--get", "advert", "product=tea")
    assert prompt.returncode == 0 and "Write an advert for tea." in prompt.stdout, prompt.stderr
