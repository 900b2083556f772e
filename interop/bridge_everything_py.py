"""The official Python client (`mcp` 2.3.0, its own venv) walks server-everything's interactive
tools through `rondo proxy --bridge hold|replay` (started by interop/bridge_everything_check.py):

    .cache/interop-mcp-venv/bin/python interop/bridge_everything_py.py --era modern|legacy URL

Modern pins 2026-07-28 (the bridge's input rounds answered by its callbacks); legacy uses the
initialize handshake (the proxy asks over the session). Its elicitation, sampling and roots
callbacks answer; prints one "ok ..." line per completed tool.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

MODES = {"modern": "2026-07-28", "legacy": "legacy"}


async def form(context: ClientRequestContext, params: Any) -> ElicitResult:
    assert params.message == "Please provide inputs for the following fields:", params.message
    return ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True,
                                                  "integer": 7})


async def sample(context: ClientRequestContext, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Paris."),
                               model="interop-model", stop_reason="endTurn")


async def roots(context: ClientRequestContext) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///work/project", name="project")])


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main(argv: list[str]) -> int:
    assert argv[0] == "--era", argv
    era, url = argv[1], argv[2]
    async with Client(url, mode=MODES[era], elicitation_callback=form, sampling_callback=sample,
                      list_roots_callback=roots, read_timeout_seconds=30) as client:
        expected = "2026-07-28" if era == "modern" else "2025-11-25"
        assert client.protocol_version == expected, client.protocol_version
        tools = {tool.name for tool in (await client.list_tools()).tools}
        wanted = {"trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"}
        assert wanted <= tools, sorted(tools)
        got = text_of(await client.call_tool("trigger-elicitation-request", {}))
        assert "- Name: Ada Lovelace" in got and "- Favorite Integer: 7" in got, got
        print("ok trigger-elicitation-request completed (accepted, Name: Ada Lovelace)")
        got = text_of(await client.call_tool("trigger-sampling-request",
                                             {"prompt": "Capital of France?", "maxTokens": 20}))
        assert "LLM sampling result" in got and "Paris." in got, got
        print("ok trigger-sampling-request completed (sampled: Paris.)")
        got = text_of(await client.call_tool("get-roots-list", {}))
        assert "file:///work/project" in got, got
        print("ok get-roots-list completed (the client's root listed)")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
