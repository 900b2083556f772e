"""The one pipe connection under stdio and memory: ids it cannot track, duplicates, both eras."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rondo  # noqa: E402
from helpers_core import INVALID_REQUEST, meta  # noqa: E402
from rondo.testing import connect  # noqa: E402


def _server() -> rondo.Server:
    server = rondo.Server("conn")

    @server.tool
    async def slow() -> str:
        await asyncio.sleep(0.2)
        return "done"

    return server


@pytest.mark.parametrize("rid", [{"a": 1}, [1], 1.5, True, None])
def test_an_unusable_id_is_an_invalid_request_not_a_crash(rid: Any) -> None:
    async def go() -> Any:
        conn = connect(_server())
        notes: list[dict[str, Any]] = []
        response = await conn.send({"jsonrpc": "2.0", "id": rid, "method": "tools/list",
                                    "params": {"_meta": meta()}}, notes.append)
        await conn.close()
        return response, notes

    response, notes = asyncio.run(go())
    # The error carries no id (it is unreadable) and is still the answer to that request.
    assert "id" not in response and response["error"]["code"] == INVALID_REQUEST
    assert notes == []


def test_a_duplicate_id_in_flight_is_refused_and_the_first_still_answers() -> None:
    async def go() -> tuple[Any, Any]:
        conn = connect(_server())
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "slow", "_meta": meta()}}
        strays: list[dict[str, Any]] = []
        first = asyncio.ensure_future(conn.send(call))
        await asyncio.sleep(0.05)
        second = await conn.send(call, strays.append)
        done = await first
        await conn.close()
        return done, (second, strays)

    done, (second, strays) = asyncio.run(go())
    assert done["result"]["content"][0]["text"] == "done"
    assert strays == [] and second["error"]["code"] == INVALID_REQUEST
    assert "Duplicate request id 7" in second["error"]["message"]
