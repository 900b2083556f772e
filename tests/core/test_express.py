"""The express lane (server/express.py) answers exactly as the general path does.

Every request is answered twice by the same server, once with the lane on and once with it off
(`core.express = False` forces the general path), over stdio's synchronous front and over the
ASGI app, and the two message sequences must be equal: results, errors, notifications, the
`isError` shapes of failures. Only the random parts are normalised (a sealed `requestState`,
the reference of a logged failure). Spies show the lane really answered, and that it stays out
of the way for what it must not take (async, threaded, task, middleware, tracing).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rondo
from rondo import elicit
from rondo.core.core import Core
from rondo.transport.http import HttpApp
from rondo.transport.stdio import answer_now
from tests.helpers.wire_schema import validate

V = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
FORM_CAPS = {"elicitation": {"form": {}}}
COLOR = elicit.form("Which color?", {"type": "object", "properties": {"color": {"type": "string"}},
                                     "required": ["color"]})


class Point(msgspec.Struct):
    x: int
    y: int


def build(**options: Any) -> rondo.Server:
    server = rondo.Server("express", "1.0.0", warn_undocumented=False, **options)

    @server.tool
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool
    def point(x: int, y: int) -> Point:
        return Point(x, y)

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def refuse(why: str) -> str:
        raise rondo.ToolError(f"no: {why}")

    @server.tool
    def crash() -> str:
        raise ValueError("secret detail")

    @server.tool
    def protocol() -> str:
        raise rondo.McpError(-32602, "bad on purpose")

    @server.tool
    def raw() -> bytes:
        return b"\x00"

    @server.tool
    def ask_color(ctx: rondo.Context) -> str:
        ctx.info("asking")
        answer = ctx.ask("color", COLOR)
        return answer.content["color"] if answer.accepted else "none"

    @server.tool
    def explicit(ctx: rondo.Context) -> Any:
        if ctx.input_responses:
            return "answered"
        return rondo.InputRequired({"c": COLOR})

    return server


SERVER = build()
NAMES = ["add", "point", "nothing", "refuse", "crash", "protocol", "raw", "ask_color",
         "explicit", "missing"]
_REF = re.compile(r"reference [0-9a-f]+")


def normal(messages: list[dict[str, Any]]) -> str:
    """The messages as JSON with their random parts replaced."""
    text = json.dumps(messages, sort_keys=True)
    text = _REF.sub("reference R", text)
    return re.sub(r'"requestState": "[^"]*"', '"requestState": "S"', text)


def stdio_bytes(server: rondo.Server, message: Any, express: bool) -> bytes:
    """What stdio writes for `message`: the bytes its writer puts on the wire, not re-decoded
    (a re-decoded comparison would hide a key order or an encoding that differs)."""
    from rondo.transport.stdio import _writer

    wire = bytearray()

    def write(fd: int, data: Any) -> int:
        wire.extend(data)
        return len(data)

    core = server.core
    saved = core.express
    core.express = express
    try:
        assert answer_now(server, msgspec.json.encode(message), _writer(1, write))
    finally:
        core.express = saved
    return bytes(wire)


def normal_bytes(wire: bytes) -> bytes:
    """The bytes with only their random parts replaced."""
    wire = re.sub(rb"reference [0-9a-f]+", b"reference R", wire)
    return re.sub(rb'"requestState":"[^"]*"', b'"requestState":"S"', wire)


def stdio(server: rondo.Server, message: Any, express: bool) -> list[dict[str, Any]]:
    core = server.core
    saved = core.express
    core.express = express
    sent: list[dict[str, Any]] = []
    try:
        assert answer_now(server, msgspec.json.encode(message), sent.append)
    finally:
        core.express = saved
    return msgspec.json.decode(msgspec.json.encode(sent))


def http_headers(params: Any) -> list[tuple[bytes, bytes]]:
    headers = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
               (b"host", b"127.0.0.1:8000"), (b"mcp-protocol-version", V.encode()),
               (b"mcp-method", b"tools/call")]
    name = params.get("name") if isinstance(params, dict) else None
    if isinstance(name, str) and name.isascii() and name.isprintable():
        headers.append((b"mcp-name", name.encode()))
    return headers


async def asgi(app: Any, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
             "root_path": "", "headers": headers, "client": ("127.0.0.1", 5000),
             "server": ("127.0.0.1", 8000)}
    sent: list[dict[str, Any]] = []
    given_body = False

    async def receive() -> dict[str, Any]:
        nonlocal given_body
        if not given_body:
            given_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = sent[0]["status"]
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def over_http(server: rondo.Server, message: dict[str, Any], express: bool) -> tuple[int, bytes]:
    core = server.core
    saved = core.express
    core.express = express
    try:
        app = HttpApp(server)
        return asyncio.run(asgi(app, msgspec.json.encode(message), http_headers(message.get("params"))))
    finally:
        core.express = saved


def request(params: Any, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def meta(caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {PV: V, CAPS: FORM_CAPS if caps is None else caps}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
arguments = st.one_of(
    st.none(), st.just({}), st.fixed_dictionaries({"a": st.integers(), "b": st.integers()}),
    st.fixed_dictionaries({"x": st.integers(-3, 3), "y": json_values}),
    st.fixed_dictionaries({"why": json_values}), json_values,
)
metas = st.one_of(
    st.just(meta()), st.just(meta({})), st.none(), st.just({PV: V}), st.just({PV: "2025-11-25", CAPS: {}}),
    st.just({PV: V, CAPS: []}), st.just({**meta(), "io.modelcontextprotocol/logLevel": "debug"}),
    st.just({**meta(), "io.modelcontextprotocol/logLevel": "loud"}),
    st.just({**meta(), "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}),
    st.just({**meta(), "io.modelcontextprotocol/clientInfo": 3}),
    st.just({**meta(), "progressToken": 7}),
)
responses = st.one_of(
    st.just({"color": {"action": "accept", "content": {"color": "blue"}}}),
    st.just({"color": {"action": "accept", "content": {"color": 5}}}),
    st.just({"color": {"action": "decline"}}), st.just({"c": {"action": "cancel"}}),
    json_values,
)


@st.composite
def params(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 20)) == 0:
        return draw(json_values)
    out: dict[str, Any] = {"name": draw(st.sampled_from(NAMES) | json_values)}
    args = draw(arguments)
    if args is not None or draw(st.booleans()):
        out["arguments"] = args
    m = draw(metas)
    if m is not None:
        out["_meta"] = m
    if draw(st.integers(0, 3)) == 0:
        out["inputResponses"] = draw(responses)
    if draw(st.integers(0, 4)) == 0:
        out["requestState"] = draw(st.sampled_from(["junk", 5, ""]) | st.text(max_size=5))
    return out


ids = st.integers(-3, 3) | st.text(max_size=3) | st.none() | st.booleans() | st.floats(0, 1)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params(), ids)
def test_stdio_lane_and_general_path_send_the_same_messages(p: Any, rid: Any) -> None:
    message = request(p, rid)
    fast = stdio_bytes(SERVER, message, True)
    assert fast.endswith(b"\n")
    assert normal_bytes(fast) == normal_bytes(stdio_bytes(SERVER, message, False))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params(), st.integers(0, 9) | st.text(min_size=1, max_size=3))
def test_http_lane_and_general_path_send_the_same_bytes(p: Any, rid: Any) -> None:
    message = request(p, rid)
    fast, slow = over_http(SERVER, message, True), over_http(SERVER, message, False)
    assert fast[0] == slow[0]
    assert normal([fast[1].decode()]) == normal([slow[1].decode()])


def flow(send: Any) -> list[dict[str, Any]]:
    """Both legs of ask_color: the first leg's sealed state is answered on the second."""
    loud = {**meta(), "io.modelcontextprotocol/logLevel": "info"}
    first = send(request({"name": "ask_color", "_meta": loud}, 1))
    result = first[-1]["result"]
    assert result["resultType"] == "input_required"
    answer = {"name": "ask_color", "_meta": loud, "requestState": result["requestState"],
              "inputResponses": {"color": {"action": "accept", "content": {"color": "blue"}}}}
    return first + send(request(answer, 2))


@pytest.mark.parametrize("express", [True, False])
def test_an_mrtr_flow_through_the_lane_is_sealed_checked_and_schema_valid(express: bool) -> None:
    messages = flow(lambda m: stdio(SERVER, m, express))
    assert [m.get("method") for m in messages] == ["notifications/message", None,
                                                   "notifications/message", None]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "blue"}]
    for m in messages:
        validate(m, method=None if "method" in m else "tools/call")
    # A tampered state is refused on the lane exactly as on the general path.
    first = stdio(SERVER, request({"name": "ask_color", "_meta": meta()}), express)[-1]["result"]
    token = first["requestState"]
    forged = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")  # always a different token
    bad = {"name": "ask_color", "_meta": meta(), "requestState": forged,
           "inputResponses": {"color": {"action": "accept", "content": {"color": "blue"}}}}
    refused = stdio(SERVER, request(bad), express)[-1]
    assert refused["error"]["code"] == -32602


def test_the_lane_answers_plain_calls_without_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no(*_: Any, **__: Any) -> Any:
        raise AssertionError("the general path ran")

    server = build()
    core = server.core
    assert core.express
    monkeypatch.setattr(core, "dispatch", no)
    monkeypatch.setattr(core, "handle_shaped", no)
    for name, args in (("add", {"a": 1, "b": 2}), ("crash", None), ("ask_color", None)):
        sent = stdio(server, request({"name": name, "arguments": args, "_meta": meta()}), True)
        assert "result" in sent[-1], sent
        status, body = over_http(server, request({"name": name, "arguments": args, "_meta": meta()}), True)
        assert status == 200 and b'"result"' in body
    answers = flow(lambda m: stdio(server, m, True))
    assert answers[-1]["result"]["content"][0]["text"] == "blue"


def test_a_failure_is_logged_once_and_masked(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("ERROR", logger="rondo.server"):
        sent = stdio(SERVER, request({"name": "crash", "_meta": meta()}), True)
    text = sent[-1]["result"]["content"][0]["text"]
    assert sent[-1]["result"]["isError"] is True and "secret" not in text
    ref = re.search(r"reference ([0-9a-f]+)", text)
    assert ref is not None
    records = [r for r in caplog.records if ref.group(1) in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info is not None


def _uses_lane(server: rondo.Server) -> bool:
    """Does a plain call of `add` on this server bypass `Core.dispatch`?"""
    core = server.core
    calls: list[str] = []
    original = core.dispatch

    def spy(req: Any) -> Any:
        calls.append(req.method)
        return original(req)

    core.dispatch = spy  # type: ignore[method-assign]
    try:
        sent: list[dict[str, Any]] = []
        line = msgspec.json.encode(request({"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": meta()}))
        if not answer_now(server, line, sent.append):
            return False  # handed to the event loop: certainly not the lane
        assert sent[-1]["result"]["content"][0]["text"] == "5"
    finally:
        core.dispatch = original  # type: ignore[method-assign]
    return not calls


def test_the_lane_stays_out_of_what_must_see_every_call() -> None:
    assert _uses_lane(build())

    async def passthrough(request: Any, call_next: Any) -> Any:
        return await call_next(request)

    assert not _uses_lane(build(middleware=[passthrough]))
    assert not Core(build(middleware=[passthrough])).express

    server = build()

    @server.tool(task="optional")
    def slow(n: int) -> int:
        return n

    # The tasks extension wraps tools/call for task-opted tools only: a plain tool on the same
    # server keeps the lane (its call never reaches dispatch), the task tool is taken from it.
    assert server.core.express and _uses_lane(server)
    assert "io.modelcontextprotocol/tasks" in server.extensions
    assert server.core.takes(server.tools["slow"]) and not server.core.takes(server.tools["add"])

    server = build()

    @server.tool
    async def later(n: int) -> int:
        return n

    assert not server.tools["later"].express
    assert server.tools["add"].express

    server = build()

    @server.method("tools/call")
    async def mine(core: Any, req: Any) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "mine"}]}

    assert not server.core.express


# -- HTTP: the plain-routing shortcut never lets through what the full checks refuse ---------

header_bytes = st.sampled_from([b"tools/call", b" tools/call", b"tools/list", b"add", b"add ",
                                b"=?base64?YWRk?=", b"", b"ADD", b"a\tb", "é".encode("latin-1")])


@settings(max_examples=500, deadline=None)
@given(
    st.lists(header_bytes, max_size=2), st.lists(header_bytes, max_size=2),
    st.lists(st.sampled_from([V.encode(), b"2025-11-25"]), max_size=2),
    st.sampled_from(["add", " add", "a\tb", "=?base64?YWRk?=", "é", "ADD"]),
)
def test_plain_routing_implies_the_full_routing_checks_pass(
    method: list[bytes], name: list[bytes], version: list[bytes], tool_name: str
) -> None:
    from rondo.server.components import Tool
    from rondo.transport.http.inbound import check_routing
    from rondo.transport.http.verdicts import plain_tool_name
    from rondo.wire.errors import McpError

    def plain(headers: dict[bytes, list[bytes]], tool_name: bytes | None) -> bool:
        return tool_name is not None and plain_tool_name(headers) == tool_name  # as `_modern` asks

    headers = {k: v for k, v in ((b"mcp-method", method), (b"mcp-name", name),
                                 (b"mcp-protocol-version", version)) if v}
    tool = Tool(tool_name, SERVER.tools["add"].fn, SERVER.tools["add"].signature,
                {"name": tool_name, "inputSchema": {"type": "object"}})
    if plain(headers, tool.header_name):
        check_routing(headers, "tools/call", {"name": tool_name})  # must not raise
    usual = method == [b"tools/call"] and name == [tool_name.encode("latin-1")] and len(version) < 2
    if usual and tool.header_name is not None:
        assert plain(headers, tool.header_name)  # the shortcut takes the usual request
    if tool_name != "a\tb" and tool.header_name is None:
        assert tool_name in (" add", "=?base64?YWRk?=", "é")
        with pytest.raises(McpError, match="^Header mismatch: Mcp-Name") as mismatch:
            check_routing({b"mcp-method": [b"tools/call"], b"mcp-name": [tool_name.encode("latin-1")]},
                           "tools/call", {"name": tool_name})
        assert mismatch.value.code == -32020


# -- HTTP: the routing and version shortcuts answer as the checks in order would --------------

def expected_refusal(headers: dict[bytes, list[bytes]], params: dict[str, Any]) -> str | None:
    """The reference model: the transport's checks, in order, without any shortcut, then the
    tool's lookup."""
    from rondo.transport.http.inbound import check_header, check_routing
    from rondo.wire.envelope import check_version, envelope
    from rondo.wire.errors import McpError

    try:
        check_routing(headers, "tools/call", params)
        env = envelope(params)
        check_header(headers, b"mcp-protocol-version", "MCP-Protocol-Version", env.version)
        check_version(env)
    except McpError as exc:
        return exc.message
    if params["name"] not in SERVER.tools:  # then the call itself: "ADD" is no tool of SERVER
        return f"Unknown tool: {params['name']}"
    return None


# Mostly the usual request (where the shortcuts apply), often a near miss of it.
routing_values = st.just([b"tools/call"]) | st.just([b"add"]) | st.lists(
    st.sampled_from([b"tools/call", b"tools/call ", b"add", b" add", b"ADD"]), max_size=2)
version_values = st.just([V.encode()]) | st.just([b"2025-11-25"]) | st.lists(
    st.sampled_from([V.encode(), b" " + V.encode(), b"2025-11-25", b""]), max_size=2)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(routing_values, routing_values, version_values,
       st.sampled_from([V, "2025-11-25", "2027-01-01"]), st.sampled_from(["add", "ADD", "nothing"]))
def test_http_routing_and_version_answers_follow_the_checks_in_order(
    method: list[bytes], name: list[bytes], version: list[bytes], body_version: str, tool: str
) -> None:
    params = {"name": tool, "arguments": {"a": 1, "b": 2} if tool != "nothing" else {},
              "_meta": {PV: body_version, CAPS: {}}}
    headers = [(b"content-type", b"application/json"), (b"accept", b"application/json"),
               (b"host", b"127.0.0.1:8000")]
    headers += [(b"mcp-method", v) for v in method] + [(b"mcp-name", v) for v in name]
    headers += [(b"mcp-protocol-version", v) for v in version]
    status, body = asyncio.run(asgi(HttpApp(SERVER), msgspec.json.encode(request(params)), headers))
    answer = json.loads(body)
    mapped = {k: [v for n, v in headers if n == k] for k, _ in headers}
    refusal = expected_refusal(mapped, params)
    if refusal is None:
        assert status == 200 and "result" in answer, answer
    else:
        assert answer["error"]["message"] == refusal, (answer, refusal)


# -- HTTP: the inline header and body shortcuts answer as the full checks would ----------------

def expected_http_refusal(app: HttpApp, headers: list[tuple[bytes, bytes]], body: bytes) -> int | None:
    """The reference model for what comes before the JSON: header checks, host, body bound."""
    from rondo.transport.http.asgi import header_map
    from rondo.transport.http.inbound import header_problem

    mapped = header_map({"headers": headers})
    refused = header_problem(mapped, "POST")
    if refused is not None:
        return refused[0]
    if not app.host_ok(mapped):
        return 403
    length = mapped.get(b"content-length")
    if length:
        try:
            if int(length[0]) > app.max_body:
                return 413
        except ValueError:
            pass
    return 413 if len(body) > app.max_body else None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from([b"127.0.0.1:8000", b"localhost", b"evil.example", b""]), max_size=2),
    st.lists(st.sampled_from([b"application/json", b"Application/JSON; charset=utf-8",
                              b"text/plain"]), max_size=2),
    st.lists(st.sampled_from([b"application/json, text/event-stream", b"text/html",
                              b"*/*", b""]), max_size=2),
    st.sampled_from([None, b"http://localhost", b"http://evil.example"]),
    st.sampled_from([None, "len", "big", "bogus", " 12"]),
    st.integers(0, 3),
)
def test_http_header_and_body_answers_follow_the_full_checks(
    hosts: list[bytes], ctypes: list[bytes], accepts: list[bytes], origin: bytes | None,
    length: str | None, padding: int,
) -> None:
    app = HttpApp(SERVER, max_body=400)
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {PV: V, CAPS: {}},
              "pad": "x" * (150 * padding)}
    data = msgspec.json.encode(request(params))
    headers = [(b"host", h) for h in hosts] + [(b"content-type", c) for c in ctypes]
    headers += [(b"accept", a) for a in accepts]
    if origin is not None:
        headers.append((b"origin", origin))
    value = {"len": str(len(data)).encode(), "big": b"100000", "bogus": b"ten", " 12": b" 12"}
    if length is not None:
        headers.append((b"content-length", value[length]))
    headers += [(b"mcp-protocol-version", V.encode()), (b"mcp-method", b"tools/call"),
                (b"mcp-name", b"add")]
    status, _ = asyncio.run(asgi(app, data, headers))
    expected = expected_http_refusal(app, headers, data)
    assert status == (200 if expected is None else expected), (status, expected)


@pytest.mark.parametrize("info", [True, False])
def test_a_text_result_shaped_by_the_lane_is_the_general_paths_bytes(info: bool) -> None:
    """`run_bound` builds a `str` result itself: the same keys, in the same order, with or
    without the serverInfo `_meta`; a tool with an output schema still goes through
    `tool_result` (structuredContent)."""
    server = rondo.Server("shaped", server_info_in_results=info)

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def count(text: str) -> int:
        return len(text)

    for name, want in (("echo", "hi"), ("count", 2)):
        message = request({"name": name, "arguments": {"text": "hi"}, "_meta": meta()})
        fast, slow = over_http(server, message, True), over_http(server, message, False)
        assert fast == slow
        result = msgspec.json.decode(fast[1])["result"]
        assert ("_meta" in result) is info
        if name == "echo":
            assert list(result) == ["content", "resultType", *(["_meta"] if info else [])]
            assert result["content"] == [{"type": "text", "text": want}]
        else:
            assert result["structuredContent"] == want
        assert stdio_bytes(server, message, True) == stdio_bytes(server, message, False)
