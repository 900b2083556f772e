"""The typed lane (server/typed.py) answers exactly as the dict paths do, or not at all.

Each message is answered three ways by the same server: with the typed lane, with it emptied
(the express lane on decoded dicts), and with both off (`core.express = False`, the general
path). The three answers must be equal. The tools take arguments of many kinds, including
the kinds msgspec reads differently from JSON than from a dict, which must stay off the lane;
the bodies are often near misses (a key too many, a duplicated key, a wrong type). Spies show
the lane really answers the calls it should.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import enum
import json
from typing import Any, Literal, TypedDict

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rondo
from rondo.core.core import Core
from rondo.core.typed import TypedCalls, qualifies
from rondo.transport.http import HttpApp
from rondo.transport.stdio import answer_now
from tests.core.test_express import CAPS, COLOR, PV, V, asgi, normal
from tests.helpers.wire_schema import validate


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Point(msgspec.Struct):
    x: int
    y: int


class Box(TypedDict):
    w: int
    label: str


class Nested(msgspec.Struct):
    inner: dict[float, int]  # float keys: read differently from JSON, off the lane


@dataclasses.dataclass
class Pair:
    left: float
    right: float


def build() -> rondo.Server:
    server = rondo.Server("typed", "1.0.0", warn_undocumented=False)

    @server.tool
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool
    def greet(name: str, loud: bool = False, times: int | None = None) -> str:
        text = f"hello {name}" * (times or 1)
        return text.upper() if loud else text

    @server.tool
    def scale(factor: float, values: list[int], shade: Shade = Shade.LIGHT) -> str:
        return f"{[v * factor for v in values]} {shade.value}"

    @server.tool
    def shapes(point: Point, box: Box | None = None, pair: Pair | None = None) -> Point:
        return point

    @server.tool
    def when(at: datetime.date, mode: Literal["a", "b"] = "a", blob: bytes = b"") -> str:
        return f"{at.isoformat()} {mode} {len(blob)}"

    @server.tool
    def counts(by_name: dict[str, int]) -> str:
        return ",".join(f"{k}={v}" for k, v in sorted(by_name.items()))

    @server.tool
    def by_number(table: dict[int, str]) -> str:  # integer keys: read differently, off the lane
        return ",".join(f"{k}={v}" for k, v in sorted(table.items()))

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def crash() -> str:
        raise ValueError("secret detail")

    @server.tool
    def refuse(why: str) -> str:
        raise rondo.ToolError(f"no: {why}")

    @server.tool
    def asks() -> Any:  # an ask with no context of its own
        return rondo.InputRequired({"c": COLOR})

    @server.tool
    def ask_color(ctx: rondo.Context) -> str:
        answer = ctx.ask("color", COLOR)
        return answer.content["color"] if answer.accepted else "none"

    return server


SERVER = build()
NAMES = ["add", "greet", "scale", "shapes", "when", "counts", "by_number", "nothing", "crash",
         "refuse", "asks", "ask_color", "missing"]
EMPTY = TypedCalls(Core(rondo.Server("empty", "1.0.0")))  # a lane that takes nothing
def three_ways(answer: Any) -> list[str]:
    """`answer()` with the typed lane, with it emptied, and with both lanes off."""
    core = SERVER.core
    out = []
    for typed, express in ((None, True), (EMPTY, True), (None, False)):
        core.typed, core.express = typed, express
        try:
            out.append(normal(answer()))
        finally:
            core.typed, core.express = None, True
    return out


def over_stdio(body: bytes) -> list[Any]:
    sent: list[dict[str, Any]] = []
    if not answer_now(SERVER, body, sent.append):
        return ["handed to the event loop", sent]  # a notification
    return msgspec.json.decode(msgspec.json.encode(sent))


def over_http(body: bytes, headers: list[tuple[bytes, bytes]]) -> list[Any]:
    status, data = asyncio.run(asgi(HttpApp(SERVER), body, headers))
    return [status, data.decode()]


def meta(**extra: Any) -> dict[str, Any]:
    return {PV: V, CAPS: {"elicitation": {"form": {}}}, **extra}


scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=3)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=2)
                      | st.dictionaries(st.text(max_size=2), inner, max_size=2), max_leaves=4)
good_arguments = {
    "add": st.fixed_dictionaries({"a": st.integers(), "b": st.integers()}),
    "greet": st.fixed_dictionaries({"name": st.text(max_size=4)},
                                   optional={"loud": st.booleans(), "times": st.none() | st.integers(0, 2)}),
    "scale": st.fixed_dictionaries({"factor": st.floats(-2, 2) | st.integers(-2, 2),
                                    "values": st.lists(st.integers(-3, 3), max_size=3)},
                                   optional={"shade": st.sampled_from(["light", "dark", "grey"])}),
    "shapes": st.fixed_dictionaries(
        {"point": st.fixed_dictionaries({"x": st.integers(-3, 3), "y": st.integers(-3, 3)})},
        optional={"box": st.none() | st.fixed_dictionaries({"w": st.integers(0, 3), "label": st.text(max_size=2)}),
                  "pair": st.none() | st.fixed_dictionaries({"left": st.floats(-1, 1), "right": st.integers(0, 2)})}),
    "when": st.fixed_dictionaries({"at": st.sampled_from(["2026-07-28", "2026-13-01", "x"])},
                                  optional={"mode": st.sampled_from(["a", "b", "c"]),
                                            "blob": st.sampled_from(["AAE=", "not base64", ""])}),
    "counts": st.fixed_dictionaries({"by_name": st.dictionaries(st.text(max_size=2), st.integers(0, 3), max_size=2)}),
    "by_number": st.fixed_dictionaries({"table": st.dictionaries(st.sampled_from(["1", "2", "x"]), st.text(max_size=2), max_size=2)}),
}


@st.composite
def arguments(draw: st.DrawFn, name: str) -> Any:
    pick = draw(st.integers(0, 9))
    if pick == 0:
        return draw(values)  # anything at all
    args = draw(good_arguments.get(name, st.just({})))
    if pick == 1 and isinstance(args, dict):
        args = {**args, draw(st.sampled_from(["extra", "a", "point"])): draw(values)}  # near miss
    if pick == 2 and isinstance(args, dict) and args:
        args.pop(draw(st.sampled_from(sorted(args))))
    return args


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(NAMES))
    params: dict[str, Any] = {"name": name}
    args = draw(arguments(name))
    if args != {} or draw(st.booleans()):
        params["arguments"] = args
    params["_meta"] = draw(st.sampled_from([
        meta(), {PV: V, CAPS: {}}, {PV: V}, {PV: "2025-11-25", CAPS: {}}, {PV: V, CAPS: []},
        meta(**{"io.modelcontextprotocol/logLevel": "debug"}),
        meta(**{"io.modelcontextprotocol/logLevel": "loud"}),
        meta(**{"io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"}}),
        meta(**{"io.modelcontextprotocol/clientInfo": None}),
        meta(**{"io.modelcontextprotocol/clientInfo": 3}), meta(progressToken=7), None,
    ]))
    if params["_meta"] is None:
        del params["_meta"]
    extra = draw(st.integers(0, 12))
    if extra == 0:
        params["requestState"] = draw(st.sampled_from(["junk", 5]))
    elif extra == 1:
        params["inputResponses"] = {"c": {"action": "decline"}}
    elif extra == 2:
        params["meta"] = {}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": draw(st.integers(-2, 2) | st.text(max_size=2)),
                               "method": "tools/call", "params": params}
    shape = draw(st.integers(0, 15))
    if shape == 0:
        message["id"] = draw(st.none() | st.booleans() | st.floats(0, 1))
    elif shape == 1:
        del message["id"]
    elif shape == 2:
        message["jsonrpc"] = "1.0"
    elif shape == 3:
        message["result"] = {}
    elif shape == 4:
        message["extra"] = 1
    elif shape == 5:
        message["method"] = "tools/list"
    return message


def encoded(message: dict[str, Any], duplicate: int) -> bytes:
    """The message as JSON, sometimes with one key given twice (JSON allows it; the last wins)."""
    body = msgspec.json.encode(message)
    if duplicate == 1:
        body = body.replace(b'"params":{', b'"params":{"name":"add",', 1)  # the tag twice
    elif duplicate == 2:
        body = body.replace(b'"jsonrpc":"2.0"', b'"id":"first","jsonrpc":"2.0"', 1)
    elif duplicate == 3:
        body = body.replace(b'"_meta":{', b'"_meta":{"' + PV.encode() + b'":"2025-11-25",', 1)
    return body


def headers_for(message: dict[str, Any], name_header: str | None, version: str) -> list[tuple[bytes, bytes]]:
    headers = [(b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"), (b"host", b"127.0.0.1:8000"),
               (b"mcp-protocol-version", version.encode()), (b"mcp-method", b"tools/call")]
    params = message.get("params")
    if name_header is None and isinstance(params, dict) and isinstance(params.get("name"), str):
        name_header = params["name"]
    if name_header is not None:
        headers.append((b"mcp-name", name_header.encode()))
    return headers


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages(), st.integers(0, 6))
def test_over_stdio_the_three_paths_answer_alike(message: dict[str, Any], duplicate: int) -> None:
    body = encoded(message, duplicate)
    typed, express, general = three_ways(lambda: over_stdio(body))
    assert typed == express == general


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages(), st.integers(0, 6), st.sampled_from([None, None, "add", "greet", "missing"]),
       st.sampled_from([V, V, "2025-11-25"]))
def test_over_http_the_three_paths_answer_alike(
    message: dict[str, Any], duplicate: int, name_header: str | None, version: str,
) -> None:
    body = encoded(message, duplicate)
    headers = headers_for(message, name_header, version)
    typed, express, general = three_ways(lambda: over_http(body, headers))
    assert typed == express == general


def test_what_reads_alike_is_on_the_lane_and_the_rest_is_not() -> None:
    tools = SERVER.tools
    on = {"add", "greet", "scale", "shapes", "when", "counts", "nothing", "crash", "refuse", "asks"}
    assert {name for name, tool in tools.items() if qualifies(tool)} == on
    server = rondo.Server("kinds", "1.0.0", warn_undocumented=False)

    @server.tool
    def raw(data: msgspec.Raw) -> str:
        return "raw"

    @server.tool
    def nested(n: Nested) -> str:
        return "nested"

    @server.tool
    def loose(**extra: int) -> str:
        return "loose"

    @server.tool
    async def later(n: int) -> int:
        return n

    assert not any(qualifies(tool) for tool in server.tools.values())


def _typed_only(server: rondo.Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the dict paths fail loudly: whatever answers now is the typed lane."""
    import rondo.transport.http.app as http_module
    import rondo.transport.stdio as stdio_module

    def no(*_: Any, **__: Any) -> Any:
        raise AssertionError("a dict path ran")

    monkeypatch.setattr(stdio_module, "_decode", no)
    monkeypatch.setattr(http_module, "_decode", no)
    monkeypatch.setattr(server.core, "dispatch", no)


def call(name: str, args: Any = None, rid: Any = 1) -> bytes:
    params: dict[str, Any] = {"name": name, "_meta": meta()}
    if args is not None:
        params["arguments"] = args
    return msgspec.json.encode({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


def test_the_lane_answers_plain_calls_alone_on_both_transports(monkeypatch: pytest.MonkeyPatch) -> None:
    server = build()
    _typed_only(server, monkeypatch)
    cases = [("add", {"a": 2, "b": 3}), ("greet", {"name": "x", "loud": True}), ("nothing", None),
             ("shapes", {"point": {"x": 1, "y": 2}}), ("crash", None), ("refuse", {"why": "w"})]
    for name, args in cases:
        sent: list[dict[str, Any]] = []
        assert answer_now(server, call(name, args), sent.append)
        validate(msgspec.json.decode(msgspec.json.encode(sent[-1])), method="tools/call")
        body = call(name, args)
        status, data = asyncio.run(asgi(HttpApp(server), body, headers_for(json.loads(body), None, V)))
        assert status == 200
        assert normal([json.loads(data)]) == normal([json.loads(msgspec.json.encode(sent[-1]))])
    assert sent[-1]["result"]["isError"] is True


def test_a_changed_tool_table_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    server = build()

    def text(body: bytes) -> Any:
        sent: list[dict[str, Any]] = []
        assert answer_now(server, body, sent.append)
        message = sent[-1]
        return message["result"]["content"][0]["text"] if "result" in message else message["error"]

    assert text(call("add", {"a": 1, "b": 1})) == "2"
    assert server.core.typed is not None

    @server.tool
    def triple(n: int) -> str:
        return str(3 * n)

    assert server.core.typed is None  # registering dropped the old union
    assert text(call("triple", {"n": 2})) == "6"
    assert qualifies(server.tools["triple"])
    server.remove_tool("add")
    assert text(call("add", {"a": 1, "b": 1}))["code"] == -32602  # unknown tool, as before

    @server.tool(name="add")
    def add_again(a: int, b: int) -> str:
        return "again"

    assert text(call("add", {"a": 1, "b": 1})) == "again"
    # A table changed behind the server's back (no notification) is noticed too.
    calls = server.core.typed_calls()
    server.tools["add"] = server.tools["triple"]
    monkeypatch.setattr(server.core, "typed", calls)
    assert calls.answer(call("add", {"a": 1, "b": 1}), lambda _: None) is None


def test_an_ask_without_a_context_is_sealed_and_opens_on_the_retry() -> None:
    server = build()
    sent: list[dict[str, Any]] = []
    assert answer_now(server, call("asks"), sent.append)
    result = sent[-1]["result"]
    assert result["resultType"] == "input_required" and set(result["inputRequests"]) == {"c"}
    validate(msgspec.json.decode(msgspec.json.encode(sent[-1])), method="tools/call")
    # The retry carries requestState and inputResponses: the usual path opens the state.
    retry = {"name": "asks", "_meta": meta(), "requestState": result["requestState"],
             "inputResponses": {"c": {"action": "accept", "content": {"color": "red"}}}}
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry})
    assert answer_now(server, body, sent.append)
    assert sent[-1]["result"]["resultType"] == "input_required"  # it asks again, as it is written
    forged = {**retry, "requestState": result["requestState"][:-2] + "AA"}
    body = msgspec.json.encode({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": forged})
    assert answer_now(server, body, sent.append)
    assert sent[-1]["error"]["code"] == -32602


def test_http_routing_that_names_another_tool_is_refused_as_before() -> None:
    body = call("add", {"a": 1, "b": 2})
    for name_header, version in (("greet", V), ("add", "2025-11-25")):
        typed, express, general = three_ways(
            lambda n=name_header, v=version: over_http(body, headers_for(json.loads(body), n, v)))
        assert typed == express == general
        assert json.loads(json.loads(typed)[1])["error"]["code"] != 0


def test_behind_the_guard_the_lane_answers_only_what_the_token_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rondo.auth import ResourceServer
    from tests.auth.test_auth_unit import ISSUER, RESOURCE, StubVerifier

    rs = ResourceServer(resource=RESOURCE, issuer=ISSUER, verifier=StubVerifier(),
                        scopes_supported=["mcp:use"], required_scopes=["mcp:use"])
    server = rondo.Server("guarded", "1.0.0", auth=rs, warn_undocumented=False)

    @server.tool
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.tool(scopes=["files:write"])
    def write(path: str) -> str:
        return f"wrote {path}"

    app = HttpApp(server)
    answered: list[str] = []
    original = TypedCalls.answer

    def spy(self: TypedCalls, *args: Any, **kwargs: Any) -> Any:
        response = original(self, *args, **kwargs)
        answered.append("typed" if response is not None else "passed on")
        return response

    monkeypatch.setattr(TypedCalls, "answer", spy)

    def post(name: str, args: dict[str, Any], token: str | None) -> tuple[int, Any]:
        body = call(name, args)
        headers = headers_for(json.loads(body), None, V)
        if token is not None:
            headers.append((b"authorization", b"Bearer " + token.encode()))
        status, data = asyncio.run(asgi(app, body, headers))
        return status, json.loads(data) if data else None

    status, body = post("add", {"a": 1, "b": 2}, "good-token")
    assert status == 200 and body["result"]["content"][0]["text"] == "3"
    assert answered == ["typed"]
    status, body = post("write", {"path": "p"}, "good-token")  # alice lacks files:write
    assert status == 403 and body["error"]["data"] == {"requiredScopes": ["mcp:use", "files:write"]}
    assert answered == ["typed", "passed on"]
    status, _ = post("add", {"a": 1, "b": 2}, None)  # no token: refused before any lane
    assert status == 401 and answered == ["typed", "passed on"]
