"""The official Python client (`mcp` 2.3.0, its own venv) walks the proxies that
interop/gateway_peers_check.py starts, on one era:

    .cache/interop-mcp-venv/bin/python interop/gateway_peers_py.py --era modern|legacy '{"everything": URL, ...}'

Modern pins 2026-07-28 (input_required rounds answered by its elicitation callback); legacy
uses the initialize handshake (the proxy asks over the session). Prints one JSON line per check.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp_types import ElicitResult

ERAS = {"modern": "2026-07-28", "legacy": "legacy"}


async def teal(context: ClientRequestContext, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"color": "teal"})


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def walk(name: str, url: str, era: str) -> list[str]:
    async with Client(url, mode=ERAS[era], elicitation_callback=teal,
                      read_timeout_seconds=30) as client:
        expected = "2026-07-28" if era == "modern" else "2025-11-25"
        assert client.protocol_version == expected, client.protocol_version
        tools = [tool.name for tool in (await client.list_tools()).tools]
        if name == "everything":
            assert {"echo", "get-sum"} <= set(tools), tools
            assert text_of(await client.call_tool("echo", {"message": "hi"})) == "Echo: hi"
            got = text_of(await client.call_tool("get-sum", {"a": 2, "b": 3}))
            assert got == "The sum of 2 and 3 is 5.", got
            resources = (await client.list_resources()).resources
            assert resources, "no resources"
            read = await client.read_resource(str(resources[0].uri))
            assert read.contents, read
            prompt = await client.get_prompt("simple-prompt")
            assert prompt.messages[0].content.text == "This is a simple prompt without arguments."
            return [f"tools/list ({len(tools)}), echo, get-sum, resources/read "
                    f"{resources[0].uri}, prompts/get simple-prompt"]
        assert {"add", "ask_color"} <= set(tools), tools
        assert text_of(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
        got = text_of(await client.call_tool("ask_color", {}))
        assert got == "teal", got
        how = ("input_required relayed" if era == "modern"
               else "asked over the session by the proxy")
        return [f"tools/list, add, ask_color ({how}, answered)"]


async def main(argv: list[str]) -> int:
    assert argv[0] == "--era", argv
    era, fronts = argv[1], json.loads(argv[2])
    for name, url in fronts.items():
        for check in await walk(name, url, era):
            print(json.dumps({"upstream": name, "check": check}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
