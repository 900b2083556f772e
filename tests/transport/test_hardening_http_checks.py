"""Issue 16 item 10: headers refused before anything else, both-ways messages, huge numbers."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

import rondo
from rondo.transport.http import HttpApp
from tests.helpers.helpers_core import INVALID_REQUEST, PARSE_ERROR, Client, http_headers, request


def post(app: Any, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    async def go() -> tuple[int, Any]:
        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
        sent: list[dict[str, Any]] = []
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await asyncio.wait_for(app(scope, receive, send), 5)
        raw = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        return sent[0]["status"], msgspec.json.decode(raw) if raw else None

    return asyncio.run(go())


def app() -> HttpApp:
    server = rondo.Server("checks", state=None)

    @server.tool
    def x() -> str:
        """x"""
        return "x"

    return HttpApp(server)


MSG = request("tools/list")


def headers(**override: str | None) -> list[tuple[bytes, bytes]]:
    return [(b"host", b"127.0.0.1")] + [(k.encode(), v.encode())
                                        for k, v in http_headers(MSG, **override).items()]


def test_a_correct_request_still_passes() -> None:
    assert post(app(), msgspec.json.encode(MSG), headers())[0] == 200


@pytest.mark.parametrize(("override", "status"), [
    ({"content_type": "text/plain"}, 415),
    ({"content_type": "application/x-www-form-urlencoded"}, 415),
    ({"accept": None}, 406),
    ({"accept": "text/html"}, 406),
])
def test_wrong_media_types_are_refused(override: dict[str, str | None], status: int) -> None:
    code, body = post(app(), msgspec.json.encode(MSG), headers(**override))
    assert code == status and body["error"]["code"] == INVALID_REQUEST


def test_two_host_headers_are_400() -> None:
    code, _ = post(app(), msgspec.json.encode(MSG), headers() + [(b"host", b"evil.example")])
    assert code == 400


def test_a_message_with_both_method_and_result_is_invalid_request() -> None:
    both = {**MSG, "result": {}}
    code, body = post(app(), msgspec.json.encode(both), headers())
    assert body["error"]["code"] == INVALID_REQUEST and "not both" in body["error"]["message"]
    assert Client(rondo.Server("s", state=None)).send(both)["error"]["code"] == INVALID_REQUEST


def test_an_enormous_integer_is_a_number_too_large_not_invalid_json() -> None:
    body = b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/list"}'
    code, answer = post(app(), body, headers())
    assert answer["error"] == {"code": PARSE_ERROR, "message": "Parse error: number too large"}
    bad = b'{"jsonrpc":'
    assert post(app(), bad, headers())[1]["error"]["message"] == "Parse error: invalid JSON"


# Accept and Host verdicts are remembered per distinct value (a bounded memo): the verdict for a
# value must not depend on what came before it, and filling the memo must not change any.
ACCEPTS = [b"application/json", b"text/html", b"*/*", b"image/png;q=1", b"text/event-stream", b""]


def test_accept_verdicts_do_not_depend_on_order_or_on_a_full_memo() -> None:
    from rondo.transport.http.inbound import header_problem

    def verdict(value: bytes) -> int | None:
        problem = header_problem({b"accept": [value]} if value else {}, "POST")
        return None if problem is None else problem[0]

    first = {value: verdict(value) for value in ACCEPTS}
    assert first == {b"application/json": None, b"text/html": 406, b"*/*": None,
                     b"image/png;q=1": 406, b"text/event-stream": None, b"": 406}
    for i in range(600):  # past the memo's bound: it is cleared, never wrong
        assert verdict(b"image/x%d" % i) == 406
    assert {value: verdict(value) for value in reversed(ACCEPTS)} == first
    # Repeated Accept headers are judged on all their values together.
    assert header_problem({b"accept": [b"image/png", b"application/json"]}, "POST") is None


def test_host_verdicts_stay_right_across_many_hosts() -> None:
    served = app()
    body = msgspec.json.encode(MSG)
    base = [h for h in headers() if h[0] != b"host"]
    assert post(served, body, [(b"host", b"127.0.0.1:9")] + base)[0] == 200
    for i in range(300):  # more distinct hosts than the memo keeps
        assert post(served, body, [(b"host", b"evil%d.example" % i)] + base)[0] == 403
    assert post(served, body, [(b"host", b"localhost")] + base)[0] == 200
    assert post(served, body, [(b"host", b"evil0.example")] + base)[0] == 403
