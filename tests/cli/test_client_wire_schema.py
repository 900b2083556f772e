"""Everything rondo's client sends (requests, MRTR retries, legacy answers) validates against the
official schema of the era it speaks, and so does everything it is answered with."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rondo.client import Client
from rondo.transport.memory import MemoryConnection
from tests.helpers import client_fixture
from tests.helpers.wire_schema import validate


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Record every message crossing the in-memory link, in both directions."""
    seen: list[tuple[str, dict[str, Any]]] = []
    original = MemoryConnection.send

    async def send(self: MemoryConnection, message: dict[str, Any], on_notification: Any = None) -> Any:
        seen.append(("out", message))

        def note(n: dict[str, Any]) -> None:
            seen.append(("in", n))
            if on_notification is not None:
                on_notification(n)

        response = await original(self, message, note)
        if response is not None:
            seen.append(("in", response))
        return response

    monkeypatch.setattr(MemoryConnection, "send", send)
    return seen


def answer(request: Any) -> dict[str, Any]:
    if request.mode == "url":
        return {"action": "accept"}
    return {"action": "accept", "content": {"color": "blue"}}


async def session(protocol: str) -> None:
    async with Client(
        client_fixture.server,
        protocol=protocol,
        on_elicit=answer,
        elicit_modes=("form", "url"),
        on_sample=lambda r: {"role": "assistant", "content": {"type": "text", "text": "ok"},
                             "model": "m"},
        on_roots=lambda: [{"uri": "file:///work", "name": "work"}],
    ) as client:
        await client.list_tools()
        await client.list_resources()
        await client.list_prompts()
        for tool, arguments in (("echo", {"text": "hi"}), ("color", {}), ("summary", {}),
                                ("where", {}), ("everything", {}), ("link", {}),
                                ("slow_count", {})):
            await client.call_tool(tool, arguments, on_progress=lambda *a: None)


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_every_message_both_ways_is_schema_valid(wire: list, protocol: str) -> None:
    asyncio.run(session(protocol))
    methods: dict[Any, str] = {}
    assert any(d == "out" and "inputResponses" in (m.get("params") or {}) for d, m in wire) or (
        protocol != "2026-07-28"
    ), "the 2026 session must have retried with inputResponses"
    for direction, message in wire:
        if "method" in message and "id" in message:
            methods[(direction, message["id"])] = message["method"]
        method = None
        if "method" not in message:  # a response: find the request it answers
            other = "in" if direction == "out" else "out"
            method = methods.get((other, message.get("id")))
        validate(message, era=protocol, method=method)
    assert len(wire) > 20
