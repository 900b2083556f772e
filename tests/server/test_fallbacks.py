"""Capability fallbacks in `ctx.ask`: a form when the client lacks URL mode, a readable tool
error when it has no elicitation at all; without either option the default stays -32021."""

from __future__ import annotations

import asyncio
from typing import Any

import rondo  # noqa: E402
from rondo import elicit  # noqa: E402
from rondo.state import StatePolicy  # noqa: E402
from tests.helpers.helpers_core import MISSING_CAPABILITY, Client, accept, text_of  # noqa: E402

LINK = elicit.url("Connect your calendar", "https://calendar.example.com/connect")
FORM = elicit.form(
    "Paste the code shown at https://calendar.example.com/connect",
    {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
)


def make_server() -> rondo.Server:
    server = rondo.Server("fallbacks", state=StatePolicy(secret=b"f" * 32))

    @server.tool
    def connect(ctx: rondo.Context) -> str:
        answer = ctx.ask("connect", LINK, fallback=FORM,
                         on_unsupported="Ask the user for the code shown at "
                                        "https://calendar.example.com/connect and call again with code=...")
        if answer.content is not None:
            return f"code {answer.content['code']}"
        return f"link {answer.action}"

    @server.tool
    def strict(ctx: rondo.Context) -> str:
        return ctx.ask("connect", LINK).action

    @server.tool
    def explained(ctx: rondo.Context) -> str:
        ctx.ask("connect", LINK, on_unsupported=lambda missing: f"missing {sorted(missing)}")
        return "asked"

    return server


def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
    if request["params"].get("mode") == "url":
        return {"action": "accept"}
    return accept({"code": "1234"})


def test_url_mode_when_the_client_has_it() -> None:
    client = Client(make_server(), caps={"elicitation": {"form": {}, "url": {}}})
    response, interim = client.flow("tools/call", {"name": "connect"}, answer)
    assert interim[0]["inputRequests"]["connect"] == LINK
    assert text_of(response["result"]) == "link accept"


def test_form_fallback_when_the_client_lacks_url_mode() -> None:
    client = Client(make_server(), caps={"elicitation": {}})  # empty elicitation = form only
    response, interim = client.flow("tools/call", {"name": "connect"}, answer)
    assert interim[0]["inputRequests"]["connect"] == FORM
    assert text_of(response["result"]) == "code 1234"


def test_no_elicitation_gives_the_model_a_tool_error() -> None:
    client = Client(make_server(), caps={"sampling": {}})
    result = client.tool("connect")
    assert result["isError"] is True
    assert text_of(result).startswith("Ask the user for the code")
    result = client.tool("explained")
    assert result["isError"] is True and text_of(result) == "missing ['elicitation']"


def test_the_default_stays_minus_32021_with_the_merged_capabilities() -> None:
    client = Client(make_server(), caps={"elicitation": {"form": {}}})
    error = client.error("tools/call", {"name": "strict"})
    assert error["code"] == MISSING_CAPABILITY
    assert error["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}


def test_fallback_on_a_legacy_session() -> None:
    from tests.legacy.test_legacy import LegacyClient

    async def go() -> None:
        client = LegacyClient(make_server(), capabilities={"elicitation": {"form": {}}})
        client.answers["elicitation/create"] = lambda p: accept({"code": "42"})
        await client.initialize()
        result = await client.result("tools/call", {"name": "connect", "arguments": {}})
        assert result["content"][0]["text"] == "code 42"
        asked = [m["params"] for m in client.seen if m.get("method") == "elicitation/create"]
        assert asked[0]["mode"] == "form" and "code" in asked[0]["requestedSchema"]["properties"]

    asyncio.run(asyncio.wait_for(go(), 20))
