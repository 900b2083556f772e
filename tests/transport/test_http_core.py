"""Streamable HTTP on the 2026-07-28 wire, through the ASGI app (`Server.asgi()`) with httpx
(spec digest §2; conformance contract §4.2-§4.3)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo import elicit
from rondo.wire.headers import encode_value
from tests.helpers.helpers_core import (
    ALL_CAPS,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    PV,
    SUB_ID,
    UNSUPPORTED_VERSION,
    VERSION,
    asgi_client,
    check,
    http_headers,
    http_messages,
    request,
    run,
    sse_events,
)


def make_server() -> rondo.Server:
    server = rondo.Server("http-core", state=None)

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @server.tool
    async def aecho(text: str) -> str:
        """Echo asynchronously."""
        await asyncio.sleep(0)
        return text

    @server.tool
    def chatty(ctx: rondo.Context) -> str:
        """Report progress (sync)."""
        ctx.report_progress(1, 2)
        ctx.report_progress(2, 2)
        return "done"

    @server.tool
    async def achatty(ctx: rondo.Context) -> str:
        """Log, then answer (async)."""
        await ctx.info("working")
        await asyncio.sleep(0.01)
        await ctx.info("still working")
        return "done"

    @server.tool
    def boom() -> str:
        """Fail with an internal error."""
        raise rondo.McpError(INTERNAL_ERROR, "internal trouble")

    @server.tool
    def ask(ctx: rondo.Context) -> str:
        """Ask via URL elicitation."""
        return ctx.ask("go", elicit.url("Open", "https://example.com/")).action

    @server.tool(input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "nested": {"type": "object", "properties": {
                "flag": {"type": "boolean", "x-mcp-header": "Flag"}}},
        },
    })
    def routed(region: str | None = None, count: int | None = None, nested: Any = None) -> str:
        """Header-mirrored arguments."""
        return f"{region}/{count}/{nested}"

    @server.tool(name="héllo wörld")
    def unicode_name() -> str:
        """A tool whose name needs base64 in Mcp-Name."""
        return "unicode"

    @server.prompt
    def greet(name: str) -> str:
        """Greet."""
        return f"Hi {name}"

    @server.resource("mem://doc", mime_type="text/plain")
    def doc() -> str:
        return "doc"

    return server


SERVER = make_server()
APP = SERVER.asgi()


async def post(message: Any, headers: dict[str, str] | None = None, *, app: Any = APP,
               raw: bytes | None = None, host: str = "127.0.0.1", header_list: Any = None) -> Any:
    async with asgi_client(app, host) as client:
        if header_list is not None:
            hdrs: Any = header_list
        else:
            hdrs = headers if headers is not None else http_headers(message)
        if raw is not None:
            return await client.post("/mcp", content=raw, headers=hdrs)
        return await client.post("/mcp", json=message, headers=hdrs)


def send(message: Any, headers: dict[str, str] | None = None, **kw: Any) -> tuple[Any, list[dict]]:
    response = run(post(message, headers, **kw))
    method = message.get("method") if isinstance(message, dict) else None
    return response, http_messages(response, method if isinstance(method, str) else None)


def error_of(response: Any, messages: list[dict]) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/json")
    (message,) = messages
    return message["error"]


def still_serving(app: Any = APP) -> None:
    response, (message,) = send(request("server/discover", id="after"), app=app)
    assert response.status_code == 200 and message["result"]["resultType"] == "complete"


# -- the happy path -------------------------------------------------------------------------------


def test_post_request_gets_one_json_response():
    response, messages = send(request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=3))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert messages[0]["id"] == 3 and messages[0]["result"]["content"][0]["text"] == "hi"


def test_async_handler_without_notifications_is_json():
    response, messages = send(request("tools/call", {"name": "aecho", "arguments": {"text": "x"}}))
    assert response.headers["content-type"] == "application/json"
    assert messages[0]["result"]["content"][0]["text"] == "x"


@pytest.mark.parametrize("tool", ["chatty", "achatty"])
def test_notifications_turn_the_answer_into_sse_with_the_result_last(tool):
    message = request("tools/call", {"name": tool}, id=9,
                      meta_extra={"progressToken": "p", "io.modelcontextprotocol/logLevel": "info"})
    response, messages = send(message)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers.get("x-accel-buffering") == "no"
    assert all("method" in m for m in messages[:-1]) and len(messages) == 3
    assert messages[-1]["id"] == 9 and messages[-1]["result"]["content"][0]["text"] == "done"


def test_no_sse_when_the_client_asked_for_no_notifications():
    response, messages = send(request("tools/call", {"name": "chatty"}))
    assert response.headers["content-type"] == "application/json" and len(messages) == 1


def test_notification_post_is_accepted_with_202():
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    response = run(post(note, {"content-type": "application/json", "mcp-method": note["method"],
                               "mcp-protocol-version": VERSION}))
    assert response.status_code == 202 and response.content == b""


def test_input_required_is_a_200_json_result():
    response, (message,) = send(request("tools/call", {"name": "ask"}, caps=ALL_CAPS))
    assert response.status_code == 200
    assert message["result"]["resultType"] == "input_required"


def test_get_and_delete_never_serve_the_modern_wire():
    async def go() -> list[int]:
        async with asgi_client(APP) as client:
            get = await client.get("/mcp", headers={"accept": "text/event-stream",
                                                    "mcp-protocol-version": VERSION})
            delete = await client.delete("/mcp", headers={"mcp-protocol-version": VERSION})
            return [get.status_code, delete.status_code]

    assert all(status >= 400 for status in run(go()))
    still_serving()


def test_other_paths_are_not_found():
    async def go() -> int:
        async with asgi_client(APP) as client:
            return (await client.post("/elsewhere", json=request("server/discover"),
                                      headers=http_headers(request("server/discover")))).status_code

    assert run(go()) == 404


# -- Host / Origin --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("evil.example.com", None),
        ("evil.example.com", "http://evil.example.com"),
        ("127.0.0.1", "http://evil.example.com"),
        ("localhost", "null"),
        ("localhost", "file://localhost"),
        ("127.0.0.1.evil.com", None),
    ],
)
def test_foreign_host_or_origin_is_403(host, origin):
    message = request("server/discover")
    headers = http_headers(message)
    if origin is not None:
        headers["origin"] = origin
    response = run(post(message, headers, host=host))
    assert response.status_code == 403
    body = response.json()
    assert "id" not in body or body["id"] is None
    still_serving()


@pytest.mark.parametrize(
    ("host", "origin"),
    [("localhost", None), ("127.0.0.1:8123", "http://localhost:3000"), ("[::1]:80", "https://[::1]")],
)
def test_loopback_host_and_origin_are_served(host, origin):
    message = request("server/discover")
    headers = http_headers(message)
    headers["host"] = host
    if origin:
        headers["origin"] = origin
    assert run(post(message, headers)).status_code == 200


def test_allowed_hosts_can_be_configured_or_turned_off():
    app = SERVER.asgi(allowed_hosts=["mcp.example.com"])
    message = request("server/discover")
    assert run(post(message, app=app, host="mcp.example.com")).status_code == 200
    assert run(post(message, app=app, host="127.0.0.1")).status_code == 403
    open_app = SERVER.asgi(allowed_hosts=None)
    assert run(post(message, app=open_app, host="anything.example")).status_code == 200


def test_the_403_names_the_refused_host_or_origin_and_the_setting():
    app = SERVER.asgi(allowed_hosts=["mcp.example.com"])
    message = request("server/discover")
    refused = run(post(message, app=app, host="evil.example:8000"))
    text = refused.json()["error"]["message"]
    assert refused.status_code == 403 and "Host 'evil.example:8000'" in text
    assert "allowed_hosts=" in text and "--allowed-hosts" in text
    crossed = run(post(message, {**http_headers(message), "origin": "https://x.example"}, app=app,
                       host="mcp.example.com"))
    assert "Origin 'https://x.example'" in crossed.json()["error"]["message"]
    hostile = run(post(message, {**http_headers(message), "host": b"a\xe9" + b"b" * 300},  # type: ignore[dict-item]
                       app=app))
    text = hostile.json()["error"]["message"]
    assert hostile.status_code == 403
    assert len(text) < 260 and "'a?bbb" in text and "...'" in text  # bounded, printable


# -- body, JSON, shape -----------------------------------------------------------------------------


def test_body_over_the_limit_is_413():
    app = SERVER.asgi(max_body=400)
    message = request("tools/call", {"name": "echo", "arguments": {"text": "x" * 1000}})
    response = run(post(message, app=app))
    assert response.status_code == 413
    small = request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
    assert run(post(small, app=app)).status_code == 200


def test_streamed_body_over_the_limit_is_413_without_content_length():
    app = SERVER.asgi(max_body=100)
    message = request("server/discover")

    async def chunks():
        for _ in range(10):
            yield b" " * 50

    async def go() -> int:
        async with asgi_client(app) as client:
            headers = http_headers(message)
            response = await client.post("/mcp", content=chunks(), headers=headers)
            return response.status_code

    assert run(go()) == 413


@pytest.mark.parametrize("raw", [b"{", b"", b"not json", b'{"jsonrpc": "2.0",}', b"\xff\xfe"])
def test_invalid_json_is_parse_error_400(raw):
    response, messages = send(None, {"content-type": "application/json", "mcp-method": "x",
                                     "mcp-protocol-version": VERSION}, raw=raw)
    assert response.status_code == 400
    assert error_of(response, messages)["code"] == PARSE_ERROR
    still_serving()


def test_nesting_past_the_decoder_gets_the_nesting_bound_400():
    # Past the decoder's own recursion limit: the one nesting bound (wire/bounds.py), no id.
    response, messages = send(None, {"content-type": "application/json", "mcp-method": "x",
                                     "mcp-protocol-version": VERSION},
                              raw=b"[" * 100_000 + b"]" * 100_000)
    assert response.status_code == 400
    assert error_of(response, messages) == {
        "code": INVALID_PARAMS, "message": "Invalid params: nested deeper than 128 levels",
        "data": {"maxDepth": 128}}
    still_serving()


@pytest.mark.parametrize("body", [[request("server/discover")], [], 5, "x", None])
def test_batches_and_non_objects_are_invalid_request_400(body):
    import json

    response, messages = send(None, http_headers(request("server/discover")),
                              raw=json.dumps(body).encode())
    assert response.status_code == 400
    assert error_of(response, messages)["code"] == INVALID_REQUEST
    still_serving()


# -- error code -> HTTP status ----------------------------------------------------------------------


def no_meta(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params or {})}


@pytest.mark.parametrize(
    ("message", "headers", "status", "code"),
    [
        (no_meta("tools/list"), {"mcp-protocol-version": VERSION}, 400, INVALID_PARAMS),
        (request("ping"), None, 404, METHOD_NOT_FOUND),
        (request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "c", "version": "1"}}), None, 404,
         METHOD_NOT_FOUND),
        (request("logging/setLevel", {"level": "info"}), None, 404, METHOD_NOT_FOUND),
        (request("resources/subscribe", {"uri": "mem://doc"}), None, 404, METHOD_NOT_FOUND),
        (request("server/discover", version="v999.0.0"), None, 400, UNSUPPORTED_VERSION),
        (request("server/discover", version="v999.0.0"), {"mcp-protocol-version": VERSION}, 400,
         HEADER_MISMATCH),
        (request("tools/call", {"name": "ask"}, caps={}), None, 400, MISSING_CAPABILITY),
        (request("tools/call", {"name": "nope"}), None, 400, INVALID_PARAMS),
        (request("resources/read", {"uri": "mem://nope"}), None, 400, INVALID_PARAMS),
        (request("tools/list", {"cursor": "bad"}), None, 400, INVALID_PARAMS),
        (request("tools/call", {"name": "boom"}), None, 200, INTERNAL_ERROR),
    ],
)
def test_error_code_to_http_status(message, headers, status, code):
    hdrs = http_headers(message)
    hdrs.update(headers or {})
    response, messages = send(message, hdrs)
    assert response.status_code == status
    error = error_of(response, messages)
    assert error["code"] == code
    if code == UNSUPPORTED_VERSION:
        assert error["data"] == {"supported": [VERSION], "requested": "v999.0.0"}
    if code == INVALID_PARAMS and message["params"].get("uri") == "mem://nope":
        assert error["data"] == {"uri": "mem://nope"}
    assert messages[0]["id"] == 1


# -- routing headers ------------------------------------------------------------------------------


CALL = request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=4)


@pytest.mark.parametrize(
    "override",
    [
        {"mcp_method": None},
        {"mcp_method": "tools/list"},
        {"mcp_method": "TOOLS/CALL"},
        {"mcp_name": None},
        {"mcp_name": "aecho"},
        {"mcp_name": "=?base64?!!!?="},
        {"mcp_protocol_version": None},
        {"mcp_protocol_version": "2025-11-25x"},
    ],
)
def test_missing_or_mismatched_routing_headers_are_32020(override):
    response, messages = send(CALL, http_headers(CALL, **override))
    assert response.status_code == 400
    error = error_of(response, messages)
    assert error["code"] == HEADER_MISMATCH and messages[0]["id"] == 4
    still_serving()


def test_header_names_are_case_insensitive_and_values_trimmed():
    headers = {
        "Content-Type": "application/json",
        "MCP-METHOD": " tools/call\t",
        "mCp-NaMe": "\techo ",
        "Mcp-Protocol-Version": f"  {VERSION}",
    }
    response, messages = send(CALL, headers)
    assert response.status_code == 200 and messages[0]["result"]["content"][0]["text"] == "hi"


@pytest.mark.parametrize("name", ["mcp-method", "mcp-name", "mcp-protocol-version"])
def test_duplicated_routing_headers_are_32020(name):
    pairs = list(http_headers(CALL).items())
    pairs.append((name, dict(pairs)[name]))
    response, messages = send(CALL, header_list=pairs)
    assert response.status_code == 400
    assert error_of(response, messages)["code"] == HEADER_MISMATCH


@pytest.mark.parametrize(
    ("method", "params"),
    [("prompts/get", {"name": "greet", "arguments": {"name": "A"}}),
     ("resources/read", {"uri": "mem://doc"})],
)
def test_mcp_name_is_checked_for_prompts_and_resources(method, params):
    message = request(method, params)
    assert send(message)[0].status_code == 200
    response, messages = send(message, http_headers(message, mcp_name="other"))
    assert response.status_code == 400 and error_of(response, messages)["code"] == HEADER_MISMATCH
    response, messages = send(message, http_headers(message, mcp_name=None))
    assert response.status_code == 400 and error_of(response, messages)["code"] == HEADER_MISMATCH


def test_base64_mcp_name():
    message = request("tools/call", {"name": "héllo wörld"})
    encoded = "=?base64?" + base64.b64encode("héllo wörld".encode()).decode() + "?="
    response, messages = send(message, http_headers(message, mcp_name=encoded))
    assert response.status_code == 200 and messages[0]["result"]["content"][0]["text"] == "unicode"
    # The literal (undecoded) form does not match.
    response, messages = send(message, http_headers(message, mcp_name="=?base64?bm9wZQ==?="))
    assert error_of(response, messages)["code"] == HEADER_MISMATCH


# -- Mcp-Param-* ---------------------------------------------------------------------------------


def routed(arguments: dict[str, Any]) -> dict[str, Any]:
    return request("tools/call", {"name": "routed", "arguments": arguments}, id=11)


@pytest.mark.parametrize(
    ("arguments", "extra"),
    [
        ({}, {}),
        ({"region": None}, {}),
        ({"region": "us-west"}, {"Mcp-Param-Region": "us-west"}),
        ({"region": "us west 1"}, {"mcp-param-region": " us west 1 "}),
        ({"region": "日本"}, {"MCP-PARAM-REGION": "=?base64?" + base64.b64encode("日本".encode()).decode() + "?="}),
        ({"count": 42}, {"Mcp-Param-Count": "42"}),
        ({"count": 42}, {"Mcp-Param-Count": "42.0"}),
        ({"nested": {"flag": True}}, {"Mcp-Param-Flag": "true"}),
    ],
)
def test_matching_param_headers_are_served(arguments, extra):
    message = routed(arguments)
    headers = http_headers(message)
    headers.update(extra)
    response, messages = send(message, headers)
    assert response.status_code == 200, messages
    assert "result" in messages[0]


@pytest.mark.parametrize(
    ("arguments", "extra"),
    [
        ({"region": "us-west"}, {}),
        ({"region": "us-west"}, {"Mcp-Param-Region": "eu-west"}),
        ({"region": "us-west"}, {"Mcp-Param-Region": "=?base64?%%%?="}),
        ({"count": 42}, {"Mcp-Param-Count": "43"}),
        ({"count": 42}, {"Mcp-Param-Count": "forty-two"}),
        ({"nested": {"flag": False}}, {"Mcp-Param-Flag": "true"}),
        ({"nested": {"flag": False}}, {}),
        ({"region": "us-west"}, {"Mcp-Param-Region": "us-west\x01"}),  # control character
        ({"region": "us-wést"}, {"Mcp-Param-Region": "us-wést".encode()}),  # raw UTF-8, not Base64
    ],
)
def test_missing_or_mismatched_param_headers_are_32020(arguments, extra):
    message = routed(arguments)
    headers = http_headers(message)
    headers.update(extra)
    response, messages = send(message, headers)
    assert response.status_code == 400
    assert error_of(response, messages)["code"] == HEADER_MISMATCH
    still_serving()


def test_encode_value_scalars_and_refusals():
    assert (encode_value(True), encode_value(False), encode_value(42), encode_value(-1)) == (
        "true", "false", "42", "-1")
    assert encode_value("=?base64?looks-encoded?=").startswith("=?base64?")  # sentinel is escaped
    assert encode_value(" padded ").startswith("=?base64?")
    for bad in (1.5, None, ["x"]):
        with pytest.raises(TypeError, match="header values are strings, integers or booleans"):
            encode_value(bad)


def test_routed_tool_lists_its_header_annotations():
    response, (message,) = send(request("tools/list"))
    (tool,) = [t for t in message["result"]["tools"] if t["name"] == "routed"]
    assert tool["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"


# -- keeps serving after a run of bad inputs -----------------------------------------------------------


def test_server_keeps_serving_after_bad_inputs():
    async def go() -> list[int]:
        statuses = []
        async with asgi_client(APP) as client:
            for body, headers in [
                (b"{", {"content-type": "application/json"}),
                (b"[]", {"content-type": "application/json"}),
                (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
                 {"mcp-protocol-version": VERSION, "mcp-method": "tools/list"}),
                (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"' + PV.encode()
                 + b'":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}',
                 {"mcp-protocol-version": VERSION}),
            ]:
                statuses.append((await client.post("/mcp", content=body, headers=headers)).status_code)
            good = request("tools/list")
            statuses.append((await client.post("/mcp", json=good, headers=http_headers(good))).status_code)
        return statuses

    assert run(go()) == [400, 400, 400, 400, 200]


# -- subscriptions/listen over HTTP (driven as raw ASGI: the stream never ends by itself) ----------


def test_listen_over_http_streams_ack_then_changes():
    server = make_server()
    app = server.asgi()
    message = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L")
    import json

    body = json.dumps(message).encode()
    headers = [(k.encode(), v.encode()) for k, v in http_headers(message).items()]
    headers.append((b"host", b"127.0.0.1"))
    sent: list[dict[str, Any]] = []
    disconnect = asyncio.Event

    async def go() -> None:
        gone = disconnect()
        first = asyncio.Event()
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send_(event: dict[str, Any]) -> None:
            sent.append(event)
            if event["type"] == "http.response.body" and event.get("body"):
                first.set()

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers,
                 "scheme": "http", "server": ("127.0.0.1", 80), "query_string": b""}
        task = asyncio.ensure_future(app(scope, receive, send_))
        await asyncio.wait_for(first.wait(), 2)
        server.notify_tools_changed()
        server.notify_prompts_changed()  # not asked for
        await asyncio.sleep(0.05)
        gone.set()
        await asyncio.wait_for(task, 2)

    run(go())
    start = sent[0]
    assert start["status"] == 200
    assert dict(start["headers"])[b"content-type"].startswith(b"text/event-stream")
    stream = b"".join(e.get("body", b"") for e in sent[1:]).decode()
    events = sse_events(stream)
    for event in events:
        check(event)
    assert [e["method"] for e in events[:2]] == ["notifications/subscriptions/acknowledged",
                                                 "notifications/tools/list_changed"]
    assert all(e["params"]["_meta"] == {SUB_ID: "L"} for e in events[:2])
    assert not any(e.get("method") == "notifications/prompts/list_changed" for e in events)
    assert len(server.core.subscriptions) == 0  # the stream's end removed the listener


# -- hypothesis: any string survives the header encoding a correct client uses -------------------


@settings(max_examples=150, deadline=None)
@given(region=st.text(max_size=20), other=st.text(max_size=20))
def test_any_param_value_round_trips_through_its_header(region, other):
    message = routed({"region": region})
    headers = http_headers(message)
    headers["Mcp-Param-Region"] = encode_value(region)
    response, messages = send(message, headers)
    assert response.status_code == 200, messages
    assert messages[0]["result"]["content"][0]["text"].startswith(f"{region}/")
    if other != region:
        headers["Mcp-Param-Region"] = encode_value(other)
        response, messages = send(message, headers)
        assert response.status_code == 400
        assert error_of(response, messages)["code"] == HEADER_MISMATCH


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=12))
def test_a_value_travels_plain_exactly_when_every_character_is_printable_ascii(value: str) -> None:
    from rondo.wire.headers import plain_header_value

    by_rule = (value == value.strip(" \t") and not (value.startswith("=?base64?")
                                                    and value.endswith("?="))
               and all(0x20 <= ord(c) < 0x7F for c in value))
    assert plain_header_value(value) is by_rule
    assert (encode_value(value) == value) is by_rule
