"""The inbound checks of Streamable HTTP as pure functions (`rondo.transport.http.inbound`): each
answers from what arrived alone, the same way for every front end that asks it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo
from rondo.cli.dev import Bridge, DevApp
from rondo.fleet.front import Front
from rondo.transport.http import HttpApp
from rondo.transport.http.asgi import Headers
from rondo.transport.http.inbound import (
    HostCheck,
    at_endpoint,
    check_header,
    checked_request,
    declared_too_large,
    era_of,
    header_problem,
    hostname,
    method_route,
    origin_hostname,
)
from rondo.wire.era import LEGACY, MODERN
from rondo.wire.errors import HEADER_MISMATCH, McpError

V = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
NAME = st.lists(LABEL, min_size=1, max_size=4).map(".".join)


def headers(**values: str | list[str]) -> Headers:
    out: Headers = {}
    for name, value in values.items():
        items = value if isinstance(value, list) else [value]
        out[name.replace("_", "-").encode()] = [item.encode("latin-1") for item in items]
    return out


# -- Host and Origin ----------------------------------------------------------------------------


@given(NAME, st.integers(1, 65535), st.booleans())
def test_hostname_drops_the_port_and_the_case(name: str, port: int, upper: bool) -> None:
    written = name.upper() if upper else name
    assert hostname(f"{written}:{port}") == name
    assert hostname(f"  {written} ") == name


def test_an_ipv6_literal_keeps_its_brackets() -> None:
    assert hostname("[::1]:8000") == "[::1]"
    assert hostname("[::1]") == "[::1]"
    assert hostname("[::1") == "[::1"  # unclosed: left as it is, so it matches nothing allowed


@given(st.sampled_from(["http", "https", "HTTP"]), NAME, st.integers(1, 65535),
       st.sampled_from(["", "/", "/a/b"]))
def test_origin_hostname_is_the_host_of_an_http_origin(scheme: str, name: str, port: int,
                                                       path: str) -> None:
    assert origin_hostname(f"{scheme}://{name}:{port}{path}") == name


@pytest.mark.parametrize("origin", ["null", "file:///etc", "ftp://localhost", "localhost",
                                    "chrome-extension://localhost"])
def test_an_origin_that_is_not_http_names_no_host(origin: str) -> None:
    assert origin_hostname(origin) is None


def test_host_check_wants_an_allowed_host_and_origin() -> None:
    check = HostCheck(["localhost", "Example.COM:443"])
    assert check.allowed == frozenset({"localhost", "example.com"})
    assert check(headers(host="localhost:8000"))
    assert check(headers(host="example.com", origin="https://localhost:3000"))
    assert not check(headers())  # no Host at all
    assert not check(headers(host="evil.example"))
    assert not check(headers(host="localhost", origin="http://evil.example"))
    assert not check(headers(host="localhost", origin="null"))


def test_host_check_off_allows_anything() -> None:
    check = HostCheck(None)
    assert check.allowed is None
    assert check(headers())
    assert check(headers(host="evil.example", origin="null"))


@given(st.lists(st.tuples(st.sampled_from(["localhost", "localhost:1", "evil.example", "LOCALHOST",
                                           "[::1]:9", ""]),
                          st.sampled_from([None, "http://localhost", "https://evil.example", "x"])),
                min_size=1, max_size=30))
def test_a_remembered_host_gets_a_fresh_checks_answer(requests: list[tuple[str, str | None]]) -> None:
    kept = HostCheck(["localhost", "[::1]"])
    for host, origin in requests:
        given_headers = headers(host=host) if origin is None else headers(host=host, origin=origin)
        assert kept(given_headers) == HostCheck(["localhost", "[::1]"])(given_headers)


def test_host_check_remembers_a_bounded_number_of_hosts() -> None:
    check = HostCheck(["localhost"])
    for n in range(1000):
        assert not check(headers(host=f"h{n}.example"))
    assert len(check._seen) <= 256
    assert check(headers(host="localhost"))


@given(st.sampled_from(["localhost", "localhost:8000", "evil.example", "[::1]:1"]),
       st.sampled_from([None, "http://localhost", "http://localhost:3000/", "https://evil.example",
                        "null", "ftp://localhost", "http://[::1]:5", "http://localhost/x"]))
def test_the_fleet_front_and_the_app_share_the_host_and_origin_rule(host: str,
                                                                   origin: str | None) -> None:
    server = rondo.Server("rule", state=None)
    front = Front(None, server)  # default lists: loopback names, origins by host
    app = HttpApp(server)
    sent = {b"host": host.encode()}
    if origin is not None:
        sent[b"origin"] = origin.encode()
    refused = front._refusal(sent[b"host"], sent.get(b"origin"))
    assert (refused is None) == app.host_ok({k: [v] for k, v in sent.items()})


# -- the headers alone, the path, the method, the body ------------------------------------------


@pytest.mark.parametrize(("given_headers", "method", "status", "match"), [
    (headers(host=["a", "b"]), "GET", 400, "more than one Host"),
    (headers(content_type="text/plain", accept="application/json"), "POST", 415, "Content-Type"),
    (headers(accept="text/html"), "POST", 406, "Accept"),
    (headers(), "POST", 406, "Accept"),
])
def test_header_problem_names_the_status_and_the_reason(given_headers: Headers, method: str,
                                                        status: int, match: str) -> None:
    refused = header_problem(given_headers, method)
    assert refused is not None
    assert refused[0] == status
    with pytest.raises(McpError, match=match):
        raise refused[1]


@pytest.mark.parametrize("given_headers", [
    headers(accept="application/json, text/event-stream"),
    headers(accept="*/*", content_type="Application/JSON; charset=utf-8"),
    headers(accept=["text/html", "application/json"]),
])
def test_usual_headers_pass(given_headers: Headers) -> None:
    assert header_problem(given_headers, "POST") is None
    assert header_problem(headers(accept="text/html"), "GET") is None  # only POST is negotiated


@pytest.mark.parametrize(("endpoint", "scope", "answer"), [
    ("/mcp", {"path": "/mcp"}, True),
    ("/mcp", {"path": "/mcp/"}, True),
    ("/mcp", {"path": "/mcp/x"}, False),
    ("/mcp", {"path": "/other"}, False),
    ("/mcp", {"path": "/mount/", "root_path": "/mount"}, True),
    ("/mcp", {"path": "/mount", "root_path": "/mount"}, True),
    ("/mcp", {"path": "/mount/mcp", "root_path": "/mount"}, False),
    (None, {"path": "/anything/at/all"}, True),
])
def test_at_endpoint_the_mount_point_is_the_endpoint(endpoint: str | None, scope: dict[str, Any],
                                                     answer: bool) -> None:
    assert at_endpoint(endpoint, scope) is answer


@pytest.mark.parametrize(("method", "legacy", "route"), [
    ("POST", False, MODERN), ("POST", True, MODERN), ("GET", True, LEGACY),
    ("DELETE", True, LEGACY), ("GET", False, None), ("PUT", True, None), ("OPTIONS", True, None),
])
def test_method_route(method: str, legacy: bool, route: str | None) -> None:
    assert method_route(method, legacy) == route


@given(st.one_of(st.integers(0, 10_000).map(str), st.sampled_from(["", "ten", "-5", " 12", "1e3"])),
       st.integers(1, 5000))
def test_declared_too_large_reads_only_a_number_over_the_bound(length: str, bound: int) -> None:
    try:
        expected = int(length) > bound
    except ValueError:
        expected = False  # unreadable: the bytes that arrive are counted instead
    assert declared_too_large(headers(content_length=length), bound) is expected
    assert declared_too_large(headers(), bound) is False


# -- the decoded message ------------------------------------------------------------------------


def modern(method: str = "tools/call", **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method,
            "params": {**params, "_meta": {PV: V, CAPS: {}}}}


def test_era_of_reads_meta_then_session_then_version_header() -> None:
    assert era_of(modern(), headers()) == MODERN
    assert era_of(modern(), headers(mcp_session_id="s")) == LEGACY  # a session is 2025-11-25
    bare = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    assert era_of(bare, headers()) == LEGACY
    assert era_of(bare, headers(mcp_protocol_version="2025-11-25")) == LEGACY
    assert era_of(bare, headers(mcp_protocol_version=V)) == MODERN


def routed(method: str, name: str | None = None) -> Headers:
    values = {"mcp_method": method, "mcp_protocol_version": V}
    if name is not None:
        values["mcp_name"] = name
    return headers(**values)


def test_checked_request_returns_the_parts_of_a_request_that_passes() -> None:
    msg = modern(name="add", arguments={"a": 1})
    checked = checked_request(msg, routed("tools/call", "add"), V, None, {})
    assert checked is not None
    rid, method, params, env, tool = checked
    assert (rid, method, params["name"], env.version, tool) == (1, "tools/call", "add", V, None)


def test_a_notification_is_not_checked_further() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    assert checked_request(note, headers(), None, None, {}) is None


@pytest.mark.parametrize(("sent", "match"), [
    (routed("tools/list", "add"), "Mcp-Method header value 'tools/list'"),
    (routed("tools/call"), "Mcp-Name header is required"),
    (routed("tools/call", "sub"), "Mcp-Name header value 'sub' does not match"),
    ({**routed("tools/call", "add"), b"mcp-method": [b"tools/call", b"tools/call"]},
     "mcp-method header given more than once"),
    (headers(mcp_method="tools/call", mcp_name="add"), "MCP-Protocol-Version header is required"),
])
def test_checked_request_raises_the_first_failing_check(sent: Headers, match: str) -> None:
    msg = modern(name="add", arguments={})
    version = sent.get(b"mcp-protocol-version", [None])[0]
    with pytest.raises(McpError, match=match) as caught:
        checked_request(msg, sent, None if version is None else version.decode(), None, {})
    assert caught.value.code == HEADER_MISMATCH


def test_the_usual_routing_naming_the_tool_skips_the_routing_checks() -> None:
    server = rondo.Server("tools", state=None)

    @server.tool
    def add(a: int) -> int:
        return a

    tool = server.tools["add"]
    msg = modern(name="add", arguments={"a": 1})
    # Headers that would fail the routing checks (no Mcp-Method): the plain routing already
    # named this very tool, so they are not run again.
    checked = checked_request(msg, headers(), V, tool.header_name, server.tools)
    assert checked is not None and checked[4] is tool
    with pytest.raises(McpError, match="Mcp-Method header is required"):
        checked_request(msg, headers(), V, None, server.tools)


def test_check_header_compares_the_stripped_value() -> None:
    check_header(headers(mcp_method=" tools/call\t"), b"mcp-method", "Mcp-Method", "tools/call")
    with pytest.raises(McpError, match="does not match body value 'tools/list'"):
        check_header(headers(mcp_method="tools/call"), b"mcp-method", "Mcp-Method", "tools/list")


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:8000", "127.0.0.1:1", "[::1]:2",
                                  "evil.example", "localhost.evil.example", "[::1"])
def test_every_http_front_end_answers_a_host_the_same_way(host: str) -> None:
    """The endpoint, the fleet front and `rondo dev`'s page, each on its loopback default."""
    server = rondo.Server("hosts", state=None)
    expected = HostCheck(["localhost", "127.0.0.1", "[::1]"])(headers(host=host))
    assert HttpApp(server).host_ok(headers(host=host)) is expected
    assert (Front(None, server)._refusal(host.encode(), None) is None) is expected

    async def page() -> int:
        async with server.started(), Bridge(server) as bridge:
            transport = httpx.ASGITransport(app=DevApp(bridge, "secret"))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
                return (await http.get("/", headers={"host": host})).status_code

    assert asyncio.run(page()) == (200 if expected else 403)
