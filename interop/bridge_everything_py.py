"""The official Python client (`mcp` 2.3.0, its own venv) walks server-everything's interactive
tools through `rondo proxy --bridge MODE` (interop/bridge_everything_check.py starts them), on one
era:

    .cache/interop-mcp-venv/bin/python interop/bridge_everything_py.py --era modern|legacy URL

Modern pins 2026-07-28 (the bridge's input_required rounds answered by its callbacks); legacy
uses the initialize handshake (the proxy asks over the session). Prints one `ok` line per check.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

ERAS = {"modern": "2026-07-28", "legacy": "legacy"}
ASKED: list[str] = []


async def elicit(context: ClientRequestContext, params: Any) -> ElicitResult:
    ASKED.append("elicitation/create")
    assert params.message == "Please provide inputs for the following fields:", params.message
    return ElicitResult(action="accept", content={"name": "Dorothy Vaughan", "check": True})


async def sample(context: ClientRequestContext, params: Any) -> CreateMessageResult:
    ASKED.append("sampling/createMessage")
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="Madrid."),
                               model="py-model", stop_reason="endTurn")


async def roots(context: ClientRequestContext) -> ListRootsResult:
    ASKED.append("roots/list")
    return ListRootsResult(roots=[Root(uri="file:///py/root", name="py")])


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main(argv: list[str]) -> int:
    assert argv[0] == "--era", argv
    era, url = argv[1], argv[2]
    async with Client(url, mode=ERAS[era], elicitation_callback=elicit, sampling_callback=sample,
                      list_roots_callback=roots, read_timeout_seconds=30) as client:
        expected = "2026-07-28" if era == "modern" else "2025-11-25"
        assert client.protocol_version == expected, client.protocol_version
        got = text_of(await client.call_tool("trigger-elicitation-request", {}))
        assert "- Name: Dorothy Vaughan" in got, got
        print("ok trigger-elicitation-request completed (Name: Dorothy Vaughan)", flush=True)
        got = text_of(await client.call_tool("trigger-sampling-request",
                                             {"prompt": "Capital of Spain?", "maxTokens": 20}))
        assert "Madrid." in got, got
        print("ok trigger-sampling-request completed (sampled: Madrid.)", flush=True)
        got = text_of(await client.call_tool("get-roots-list", {}))
        assert "file:///py/root" in got, got
        print("ok get-roots-list completed (the client's root listed)", flush=True)
        for method in ("elicitation/create", "sampling/createMessage", "roots/list"):
            assert method in ASKED, (method, ASKED)
        print(f"ok the client's own callbacks answered: {', '.join(dict.fromkeys(ASKED))}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
