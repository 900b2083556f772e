"""The JSON-RPC envelope and the per-request `_meta` of the 2026-07-28 wire, through `Core.handle`
and the in-memory transport (spec digest §1.1-§1.6, conformance contract §4.3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rondo
from tests.helpers.helpers_core import (
    CAPS,
    INFO,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVEL,
    METHOD_NOT_FOUND,
    PV,
    SERVER_INFO,
    UNSUPPORTED_VERSION,
    VERSION,
    Client,
    check,
    meta,
    request,
    run,
)


def make_server() -> rondo.Server:
    server = rondo.Server("envelope", "1.2.3", state=None)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.prompt
    def hello(name: str) -> str:
        """Greets."""
        return f"Hello {name}"

    @server.resource("mem://a", mime_type="text/plain")
    def a() -> str:
        return "A"

    @server.completion
    def complete(ref: Any, argument: Any, context: Any) -> list[str]:
        return ["x"]

    return server


@pytest.fixture(scope="module")
def server() -> rondo.Server:
    return make_server()


@pytest.fixture
def client(server: rondo.Server) -> Client:
    return Client(server)


def handle(server: rondo.Server, message: Any) -> dict[str, Any] | None:
    response = run(server.core.handle(message))
    if response is not None:
        check(response, message.get("method") if isinstance(message, dict) else None)
    return response


# -- _meta ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"_meta": None},
        {"_meta": "x"},
        {"_meta": {}},
        {"_meta": {CAPS: {}}},  # no protocol version
        {"_meta": {PV: VERSION}},  # no client capabilities
        {"_meta": {PV: 20260728, CAPS: {}}},
        {"_meta": {PV: VERSION, CAPS: []}},
        {"_meta": {PV: VERSION, CAPS: None}},
        {"_meta": {PV: VERSION, CAPS: {}, INFO: "me"}},
    ],
)
def test_missing_or_mistyped_meta_is_invalid_params(server, params):
    response = handle(server, {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": params})
    assert response["id"] == 7
    assert response["error"]["code"] == INVALID_PARAMS


def test_no_params_at_all_is_invalid_params(server):
    response = handle(server, {"jsonrpc": "2.0", "id": "a", "method": "server/discover"})
    assert response == {"jsonrpc": "2.0", "id": "a", "error": response["error"]}
    assert response["error"]["code"] == INVALID_PARAMS


def test_client_info_is_optional(server):
    message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
               "params": {"_meta": meta(info=False)}}
    assert INFO not in message["params"]["_meta"]
    response = handle(server, message)
    assert response["result"]["resultType"] == "complete"


@pytest.mark.parametrize("version", ["2025-11-25", "1900-01-01", "v999.0.0", "", "2026-07-29"])
def test_unsupported_version_names_supported_and_requested(server, version):
    response = handle(server, request("server/discover", version=version, id=3))
    assert response["id"] == 3
    error = response["error"]
    assert error["code"] == UNSUPPORTED_VERSION
    assert error["data"] == {"supported": [VERSION], "requested": version}


def test_version_is_checked_before_the_method(server):
    response = handle(server, request("no/such/method", version="1900-01-01"))
    assert response["error"]["code"] == UNSUPPORTED_VERSION


@pytest.mark.parametrize("level", ["loud", 3, ["debug"], {"level": "debug"}])
def test_unknown_log_level_is_invalid_params(server, level):
    response = handle(server, request("tools/list", meta_extra={LOG_LEVEL: level}))
    assert response["error"]["code"] == INVALID_PARAMS


def test_capabilities_are_per_request_not_remembered(server):
    """A request never inherits what an earlier request declared (statelessness)."""
    client = Client(server)
    assert client.result("server/discover", caps={"elicitation": {}})["resultType"] == "complete"
    bare = {"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {"_meta": {PV: VERSION}}}
    assert handle(server, bare)["error"]["code"] == INVALID_PARAMS


# -- methods ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
        "notifications/initialized",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "no/such/method",
        "",
    ],
)
def test_removed_and_unknown_methods_are_method_not_found(server, method):
    params: dict[str, Any] = {"uri": "mem://a"}
    if method == "initialize":
        params = {"protocolVersion": "2025-11-25", "capabilities": {},
                  "clientInfo": {"name": "x", "version": "1"}}
    response = handle(server, request(method, params, id=5))
    assert response["id"] == 5
    assert response["error"]["code"] == METHOD_NOT_FOUND


def test_methods_gated_by_unadvertised_capabilities_are_method_not_found():
    empty = rondo.Server("empty", state=None)
    discover = handle(empty, request("server/discover"))["result"]
    assert set(discover["capabilities"]) == {"logging"}
    for method, params in [
        ("tools/list", {}),
        ("tools/call", {"name": "x"}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "x"}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "mem://a"}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"},
                                 "argument": {"name": "a", "value": ""}}),
    ]:
        response = handle(empty, request(method, params))
        assert response["error"]["code"] == METHOD_NOT_FOUND, method


# -- JSON-RPC shape ---------------------------------------------------------------------------------


@pytest.mark.parametrize("rid", [None, True, False, 1.5, [1], {"a": 1}])
def test_invalid_ids_are_invalid_request(server, rid):
    message = request("server/discover")
    message["id"] = rid
    response = handle(server, message)
    assert response["error"]["code"] == INVALID_REQUEST
    assert "id" not in response or response["id"] is None


@pytest.mark.parametrize("params", [[], "x", 1, True, None])
def test_non_object_params_are_invalid_request(server, params):
    response = handle(server, {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": params})
    assert response["id"] == 4
    assert response["error"]["code"] == INVALID_REQUEST


@pytest.mark.parametrize("jsonrpc", [None, "1.0", 2.0, "2.0 ", ""])
def test_jsonrpc_must_be_2_0(server, jsonrpc):
    message = request("server/discover", id=8)
    if jsonrpc is None:
        del message["jsonrpc"]
    else:
        message["jsonrpc"] = jsonrpc
    response = handle(server, message)
    assert response["id"] == 8
    assert response["error"]["code"] == INVALID_REQUEST


@pytest.mark.parametrize("message", [None, [], [request("server/discover")], 5, "x", True])
def test_non_objects_are_invalid_request(server, message):
    response = handle(server, message)
    assert response["error"]["code"] == INVALID_REQUEST


def test_responses_sent_to_the_server_are_invalid_request(server):
    response = handle(server, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert response["error"]["code"] == INVALID_REQUEST


def test_notifications_get_no_answer(server):
    for method in ("notifications/cancelled", "notifications/initialized", "whatever"):
        assert run(server.core.handle({"jsonrpc": "2.0", "method": method, "params": {}})) is None


def test_error_with_unreadable_id_is_schema_valid(server):
    """`id: null` is not a RequestId in the 2026-07-28 schema: omit the id instead."""
    response = run(server.core.handle({"jsonrpc": "2.0", "id": None, "method": "x"}))
    check(response)
    assert "id" not in response


# -- results ----------------------------------------------------------------------------------------


def test_every_result_has_result_type_and_server_info(client):
    calls = [
        ("server/discover", {}),
        ("tools/list", {}),
        ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "hello", "arguments": {"name": "Ann"}}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "mem://a"}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "hello"},
                                 "argument": {"name": "name", "value": ""}}),
    ]
    for method, params in calls:
        result = client.result(method, params)
        assert result["resultType"] == "complete", method
        assert result["_meta"][SERVER_INFO] == {"name": "envelope", "version": "1.2.3"}, method


def test_server_info_can_be_turned_off():
    server = rondo.Server("quiet", state=None, server_info_in_results=False)
    result = Client(server).result("server/discover")
    assert "_meta" not in result


# -- hypothesis: nothing crashes Core.handle ------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
methods = st.sampled_from([
    "server/discover", "tools/list", "tools/call", "prompts/list", "prompts/get",
    "resources/list", "resources/templates/list", "resources/read", "completion/complete",
    "ping", "initialize", "x",  # not subscriptions/listen: a valid one never returns
])
ids = st.integers() | st.text(max_size=5) | st.none() | st.booleans() | st.floats()
metas = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {PV: st.sampled_from([VERSION, "1900-01-01"]) | json_scalars, CAPS: json_values},
        optional={INFO: json_values, LOG_LEVEL: json_values, "progressToken": json_values},
    ),
)
params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"_meta": metas},
        optional={
            "name": st.sampled_from(["echo", "hello"]) | json_values,
            "uri": st.sampled_from(["mem://a", "mem://b"]) | json_values,
            "arguments": json_values,
            "cursor": json_values,
            "ref": json_values,
            "argument": json_values,
            "inputResponses": json_values,
            "requestState": json_values,
        },
    ),
)
messages = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0") | json_scalars, "method": methods | json_scalars},
        optional={"id": ids, "params": params},
    ),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages)
def test_handle_never_crashes(message):
    server = _SHARED
    response = run(server.core.handle(message))
    if isinstance(message, dict) and "id" not in message:
        well_formed = message.get("jsonrpc") == "2.0" and isinstance(message.get("method"), str) \
            and isinstance(message.get("params", {}), dict)
        if well_formed:
            assert response is None  # a notification is never answered
            return
    assert isinstance(response, dict)
    assert ("error" in response) != ("result" in response)
    rid = message.get("id") if isinstance(message, dict) else None
    if isinstance(rid, str | int) and not isinstance(rid, bool):
        assert response["id"] == rid
    if "error" in response:
        assert isinstance(response["error"]["code"], int)
        # an internal error here would mean a client's bad input crashed a handler
        assert response["error"]["code"] != INTERNAL_ERROR, (message, response)
    method = message.get("method") if isinstance(message, dict) else None
    check(response, method if isinstance(method, str) else None)


_SHARED = make_server()
