"""examples/preferences_check.py's id check looks at the wire, so a sender that reuses or
drops ids is caught (it used to compare ids from its own counter, which could never fail)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.helpers.modules import load

check = load("examples/preferences_check.py")

OK = {"result": {"resultType": "complete", "content": [{"type": "text", "text": "x"}]}}


def sender(wire: list[bytes], rewrite=lambda m: m, reply_id=None):
    async def send(message: dict[str, Any]) -> dict[str, Any]:
        written = rewrite(dict(message))
        wire.append(json.dumps(written).encode())
        return {"jsonrpc": "2.0", "id": written.get("id") if reply_id is None else reply_id, **OK}

    return send


def two_requests(send, wire) -> None:
    driver = check.Driver(send, wire)

    async def go() -> None:
        await driver.request("tools/list", {})
        await driver.request("tools/list", {})

    asyncio.run(go())


def test_fresh_ids_on_the_wire_pass():
    wire: list[bytes] = []
    two_requests(sender(wire), wire)
    assert [json.loads(b)["id"] for b in wire] == [1, 2]


def test_a_sender_that_reuses_an_id_is_caught():
    wire: list[bytes] = []
    with pytest.raises(check.Deviation, match="not fresh"):
        two_requests(sender(wire, rewrite=lambda m: {**m, "id": 7}), wire)


def test_a_sender_that_drops_the_id_is_caught():
    wire: list[bytes] = []
    with pytest.raises(check.Deviation, match="not fresh"):
        two_requests(sender(wire, rewrite=lambda m: {k: v for k, v in m.items() if k != "id"}), wire)


def test_a_response_for_another_id_is_caught():
    wire: list[bytes] = []
    with pytest.raises(check.Deviation, match="response id"):
        two_requests(sender(wire, reply_id=99), wire)


def test_a_sender_that_writes_nothing_is_caught():
    async def send(message: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": message["id"], **OK}

    with pytest.raises(check.Deviation, match="0 requests on the wire"):
        two_requests(send, [])
