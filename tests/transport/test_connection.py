"""The one pipe connection under stdio and memory: ids it cannot track, duplicates, both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import rondo  # noqa: E402
from rondo.testing import connect  # noqa: E402
from tests.helpers.helpers_core import INVALID_REQUEST, meta  # noqa: E402
from tests.helpers.polling import until  # noqa: E402


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
        await until(lambda: 7 in conn._connection.inflight, 5, "the first call never started")
        second = await conn.send(call, strays.append)
        done = await first
        await conn.close()
        return done, (second, strays)

    done, (second, strays) = asyncio.run(go())
    assert done["result"]["content"][0]["text"] == "done"
    assert strays == [] and second["error"]["code"] == INVALID_REQUEST
    assert "Duplicate request id 7" in second["error"]["message"]


def test_a_closed_memory_link_refuses_and_a_cancelled_send_answers_nothing() -> None:
    async def go() -> Any:
        conn = connect(_server())
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "slow", "_meta": meta()}}
        pending = asyncio.ensure_future(conn.send(call))
        await until(lambda: 1 in conn._connection.inflight, 5, "the call never started")
        conn._connection.inflight.cancel_from({"requestId": 1})  # as notifications/cancelled does
        assert await pending is None  # a cancelled request answers nothing
        await conn.close()
        with pytest.raises(ConnectionError, match="^connection closed$"):
            await conn.send(call)

    asyncio.run(go())


def test_the_server_package_names_load_on_first_use() -> None:
    import rondo.server as package
    from rondo.server.method import Method
    from rondo.server.request import Request

    assert package.Method is Method and package.Request is Request
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        package.nothing  # noqa: B018


def test_admission_validates_a_question_once_and_still_refuses_a_bad_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rondo import elicit
    from rondo.kinds.elicit import FormElicitation
    from rondo.mrtr import admission, questions

    validated: list[object] = []
    real = FormElicitation.validate_request

    def spy(self: FormElicitation, request: object) -> None:
        validated.append(request)
        real(self, request)  # type: ignore[arg-type]

    monkeypatch.setattr(FormElicitation, "validate_request", spy)
    good = elicit.form("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
    validated.clear()
    questions._known.clear()
    assert admission.check_requests({"a": good}) == [questions.question(good).kind]
    assert len(validated) == 1 and len(questions._known) == 1
    admission.check_requests({"a": good})  # the memo answers: not validated again
    admission.check_requests({"a": {**good}})  # an equal question in another dict: the same
    assert len(validated) == 1 and len(questions._known) == 1
    changed = {**good, "params": {**good["params"], "message": "Surname?"}}
    admission.check_requests({"a": changed})  # the same dict shape, other words: checked anew
    assert len(validated) == 2
    bad = {"method": "elicitation/create", "params": {"mode": "form", "message": 3}}
    for request, reason in ((bad, "message: must be a string, got integer"),
                            ({"method": "elicitation/create", "params": {"x": object()}}, "x: is not allowed here"),
                            (bad, "message: must be a string, got integer")):
        with pytest.raises(rondo.McpError, match=f"^input request 'b' is invalid: {reason}$") as refused:
            admission.check_requests({"b": request})
        assert refused.value.code == -32603
    with pytest.raises(rondo.McpError, match="^input request keys must be non-empty strings$") as refused:
        admission.check_requests({"": good})
    assert refused.value.code == -32603
    monkeypatch.setattr(questions, "_LIMIT", 1)
    other = elicit.form("Age?", {"type": "object", "properties": {"a": {"type": "integer"}}})
    admission.check_requests({"c": other})  # full: the memo starts over
    assert len(questions._known) == 1
    big = elicit.form("x" * (questions._MAX_KEPT + 1), {"type": "object", "properties": {}})
    validated.clear()
    admission.check_requests({"d": big})
    admission.check_requests({"d": big})  # too big to keep: validated every time
    assert len(validated) == 2 and len(questions._known) == 1
