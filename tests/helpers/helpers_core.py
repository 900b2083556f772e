"""Shared helpers for the server-core tests: build 2026-07-28 requests, send them through the
public transports, and check every message the server emits against the official schema.

    from tests.helpers.helpers_core import Client, request
    client = Client(server)
    result = client.result("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})

Every response and notification a `Client` (or `http_messages`) sees is validated with
`wire_schema.validate` as it arrives, so a schema violation fails the test that caused it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from tests.helpers.wire_schema import validate  # noqa: E402

VERSION = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUB_ID = "io.modelcontextprotocol/subscriptionId"

ALL_CAPS: dict[str, Any] = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {"tools": {}, "context": {}},
    "roots": {},
}

# Error codes, re-exported so the tests import them from one place.
from rondo.wire.errors import (  # noqa: E402, F401
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
)


def meta(
    caps: Mapping[str, Any] | None = None,
    *,
    version: str = VERSION,
    info: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    """A request `_meta` with the required fields (and clientInfo unless `info=False`)."""
    out: dict[str, Any] = {PV: version, CAPS: dict(caps or {})}
    if info:
        out[INFO] = {"name": "rondo-tests", "version": "0"}
    out.update(extra)
    return out


def request(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    id: Any = 1,  # noqa: A002 - the JSON-RPC name
    caps: Mapping[str, Any] | None = None,
    version: str = VERSION,
    meta_extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A well-formed 2026-07-28 request message."""
    body = dict(params or {})
    body["_meta"] = meta(caps, version=version, **dict(meta_extra or {}))
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": body}


def roundtrip(message: Any) -> Any:
    """What a socket would carry: fails loudly on anything JSON cannot encode."""
    return msgspec.json.decode(msgspec.json.encode(message))


def check(message: Any, method: str | None = None) -> Any:
    """Validate one server-emitted message against the 2026-07-28 schema and return it."""
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        validate(message)
    else:
        validate(message, method=method)
    return message


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class Client:
    """A hand-rolled 2026-07-28 client over the in-memory transport (`rondo.transport.memory`).

    Each call uses a fresh id. `notes` collects the notifications of the last call.
    """

    def __init__(self, server: Any, *, caps: Mapping[str, Any] | None = None, auth: Any = None):
        from rondo.testing import connect

        self.server = server
        self.conn = connect(server, auth=auth)
        self.caps = dict(caps if caps is not None else ALL_CAPS)
        self.ids = itertools.count(1)
        self.notes: list[dict[str, Any]] = []

    # -- raw messages --------------------------------------------------------------------------

    async def asend(self, message: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        notes: list[dict[str, Any]] = []
        response = await self.conn.send(message, on_notification=notes.append)
        method = message.get("method") if isinstance(message, dict) else None
        for note in notes:
            check(note)
        if response is not None:
            check(response, method if isinstance(method, str) else None)
            if _valid_id(message.get("id")):
                assert response.get("id") == message["id"], "a response must echo the request id"
        return response, notes

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        response, self.notes = run(self.asend(message))
        return response

    # -- requests --------------------------------------------------------------------------------

    def message(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        caps: Mapping[str, Any] | None = None,
        **meta_extra: Any,
    ) -> dict[str, Any]:
        return request(
            method,
            params,
            id=next(self.ids),
            caps=self.caps if caps is None else caps,
            meta_extra=meta_extra,
        )

    def call(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = self.send(self.message(method, params, **kw))
        assert response is not None
        return response

    def result(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = self.call(method, params, **kw)
        assert "error" not in response, f"unexpected error: {response['error']}"
        return response["result"]

    def error(self, method: str, params: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        response = self.call(method, params, **kw)
        assert "result" not in response, f"expected an error, got {response['result']}"
        return response["error"]

    def tool(self, name: str, arguments: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return self.result("tools/call", params, **kw)

    def flow(
        self,
        method: str,
        params: Mapping[str, Any],
        answer: Callable[[str, dict[str, Any]], Any],
        *,
        max_rounds: int = 10,
        **kw: Any,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Run the MRTR loop: answer each input request with `answer(key, request)`.

        Returns the final response and the list of interim results seen.
        """
        interim: list[dict[str, Any]] = []
        extra: dict[str, Any] = {}
        for _ in range(max_rounds):
            response = self.call(method, {**params, **extra}, **kw)
            result = response.get("result")
            if result is None or result.get("resultType") != "input_required":
                return response, interim
            interim.append(result)
            extra = {}
            asked = result.get("inputRequests") or {}
            if asked:
                extra["inputResponses"] = {key: answer(key, req) for key, req in asked.items()}
            if "requestState" in result:
                extra["requestState"] = result["requestState"]
        raise AssertionError(f"{method}: no final result after {max_rounds} rounds")


def _valid_id(rid: Any) -> bool:
    return rid is not None and not isinstance(rid, bool) and isinstance(rid, str | int)


def accept(content: Mapping[str, Any] | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"action": "accept"}
    if content is not None:
        answer["content"] = dict(content)
    return answer


def sampled(text: str = "hi") -> dict[str, Any]:
    """A CreateMessageResult answer."""
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model"}


def roots_answer(*uris: str) -> dict[str, Any]:
    return {"roots": [{"uri": uri} for uri in uris]}


def text_of(result: Mapping[str, Any]) -> str:
    """The text of a one-block tool result, prompt (first message) or resource read."""
    if "content" in result:
        return result["content"][0]["text"]
    if "messages" in result:
        return result["messages"][0]["content"]["text"]
    return result["contents"][0]["text"]


# -- HTTP ----------------------------------------------------------------------------------------

_NAME_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def http_headers(message: Mapping[str, Any], **override: str | None) -> dict[str, str]:
    """The headers a correct 2026-07-28 client sends with `message` (override or drop some:
    pass `mcp_name=None` to drop `Mcp-Name`, `mcp_method="x"` to change it)."""
    from rondo.wire.headers import encode_value

    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    method = message.get("method")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    if isinstance(method, str):
        headers["mcp-method"] = method
        field = _NAME_FIELD.get(method)
        if field is not None and isinstance(params.get(field), str):
            headers["mcp-name"] = encode_value(params[field])
    version = (params.get("_meta") or {}).get(PV) if isinstance(params.get("_meta"), dict) else None
    if isinstance(version, str):
        headers["mcp-protocol-version"] = version
    for key, value in override.items():
        name = key.replace("_", "-").lower()
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers


def sse_events(body: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (data lines joined per event; comments skipped)."""
    events: list[dict[str, Any]] = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append(msgspec.json.decode("\n".join(data)))
    return events


def http_messages(response: Any, method: str | None = None) -> list[dict[str, Any]]:
    """Every JSON-RPC message in an httpx response (JSON body or SSE), each schema-checked."""
    ctype = response.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        messages = sse_events(response.text)
    elif ctype.startswith("application/json"):
        messages = [response.json()]
    else:
        return []
    for message in messages:
        check(message, method)
    return messages


def asgi_client(app: Any, host: str = "127.0.0.1") -> Any:
    import httpx

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=f"http://{host}")
