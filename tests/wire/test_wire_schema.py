"""The wire-schema validator accepts known-good messages and rejects known-bad ones."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import wire_schema
from tests.helpers.wire_schema import validate, violations

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def response(result: dict, id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error(code: int, data: object = None, id: int = 1) -> dict:
    err: dict = {"code": code, "message": "no"}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": err}


CALL_RESULT = {"resultType": "complete", "content": [{"type": "text", "text": "3"}]}
LIST_TOOLS = {
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "public",
    "tools": [
        {
            "name": "add",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        }
    ],
}
DISCOVER = {
    "resultType": "complete",
    "ttlMs": 60000,
    "cacheScope": "public",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
}
INPUT_REQUIRED = {
    "resultType": "input_required",
    "inputRequests": {
        "color": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Pick a color",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"color": {"type": "string"}},
                    "required": ["color"],
                },
            },
        }
    },
    "requestState": "opaque",
}

GOOD_2026 = [
    ("tools/call", response(CALL_RESULT)),
    ("tools/list", response(LIST_TOOLS)),
    ("server/discover", response(DISCOVER)),
    ("tools/call", response(INPUT_REQUIRED)),
    (
        "resources/list",
        response(
            {
                "resultType": "complete",
                "ttlMs": 5,
                "cacheScope": "private",
                "resources": [{"name": "r", "uri": "test://static/r"}],
            }
        ),
    ),
    (
        "resources/templates/list",
        response(
            {
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "public",
                "resourceTemplates": [{"name": "t", "uriTemplate": "test://items/{id}{?q,page}"}],
            }
        ),
    ),
    (None, error(-32021, {"requiredCapabilities": {"sampling": {}}})),
    (None, error(-32022, {"supported": ["2026-07-28"], "requested": "1999-01-01"})),
    (None, error(-32020)),
    (None, error(-32601)),
    (None, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": META}}),
    (
        None,
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 0.5, "total": 1},
        },
    ),
]

BAD_2026 = [
    ("missing resultType on tools/call", "tools/call", response({"content": []}), "resultType"),
    (
        "missing ttlMs on tools/list",
        "tools/list",
        response({k: v for k, v in LIST_TOOLS.items() if k != "ttlMs"}),
        "ttlMs",
    ),
    (
        "bad cacheScope",
        "tools/list",
        response({**LIST_TOOLS, "cacheScope": "shared"}),
        "cacheScope",
    ),
    (
        "-32021 without data.requiredCapabilities",
        None,
        error(-32021, {"other": 1}),
        "requiredCapabilities",
    ),
    ("-32021 without data", None, error(-32021), "data"),
    ("-32022 without supported", None, error(-32022, {"requested": "x"}), "supported"),
    (
        "discover without supportedVersions",
        "server/discover",
        response({k: v for k, v in DISCOVER.items() if k != "supportedVersions"}),
        "supportedVersions",
    ),
    (
        "tool inputSchema not an object schema",
        "tools/list",
        response({**LIST_TOOLS, "tools": [{"name": "x", "inputSchema": {"type": "string"}}]}),
        "inputSchema",
    ),
    (
        "relative resource uri",
        "resources/list",
        response(
            {
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "public",
                "resources": [{"name": "r", "uri": "relative/path"}],
            }
        ),
        "uri",
    ),
    (
        "broken uri template",
        "resources/templates/list",
        response(
            {
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "public",
                "resourceTemplates": [{"name": "t", "uriTemplate": "test://items/{id"}],
            }
        ),
        "uriTemplate",
    ),
    (
        "requestState not a string",
        "tools/call",
        response({**INPUT_REQUIRED, "requestState": 7}),
        "requestState",
    ),
    (
        "input request with an unknown method",
        "tools/call",
        response({**INPUT_REQUIRED, "inputRequests": {"x": {"method": "ping", "params": {}}}}),
        "inputRequests",
    ),
    (
        "generic result without resultType even when the method is unknown",
        None,
        response({"anything": 1}),
        "resultType",
    ),
    ("wrong jsonrpc version", None, {"jsonrpc": "1.0", "id": 1, "result": CALL_RESULT}, "jsonrpc"),
    (
        "progress without progressToken",
        None,
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
        "progressToken",
    ),
    ("error id null is allowed but id object is not", None, {**error(-32601), "id": {}}, "id"),
]


@pytest.mark.parametrize(("method", "message"), GOOD_2026, ids=lambda v: str(v)[:40])
def test_accepts_good_2026_messages(method, message):
    validate(message, method=method)


@pytest.mark.parametrize(
    ("method", "message", "mentions"),
    [case[1:] for case in BAD_2026],
    ids=[case[0] for case in BAD_2026],
)
def test_rejects_bad_2026_messages_naming_the_problem(method, message, mentions):
    with pytest.raises(AssertionError, match=r"^\d+ schema violation\(s\) \(2026-07-28\):\n") as raised:
        validate(message, method=method)
    assert mentions in str(raised.value)


def test_result_is_checked_against_the_method_named_by_the_caller():
    # A tools/list result is a valid generic result but not a valid tools/call result.
    ok_generic = response(LIST_TOOLS)
    validate(ok_generic)
    with pytest.raises(AssertionError, match="CallToolResult"):
        validate(ok_generic, method="tools/call")


def test_task_results_skip_the_typed_check_like_the_runner():
    task = {"resultType": "task", "taskId": "t1", "status": "working"}
    validate(response(task), method="tools/call")


def test_legacy_era_has_its_own_shapes():
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
    }
    validate(response(init), era="2025-11-25", method="initialize")
    validate(response({}), era="2025-11-25", method="ping")
    # No resultType on the 2025 wire, but that same result is invalid on the 2026 wire.
    validate(response({"content": []}), era="2025-11-25", method="tools/call")
    with pytest.raises(AssertionError, match="CallToolResult at \\(root\\): 'resultType' is a required property"):
        validate(response({"content": []}), method="tools/call")
    with pytest.raises(AssertionError, match="serverInfo"):
        validate(response({**init, "serverInfo": None}), era="2025-11-25", method="initialize")


def test_legacy_number_schema_erratum_accepts_fractional_bounds():
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "elicitation/create",
        "params": {
            "message": "How much?",
            "requestedSchema": {
                "type": "object",
                "properties": {"x": {"type": "number", "minimum": 0.5, "maximum": 9.5}},
            },
        },
    }
    validate(request, era="2025-11-25")


def test_non_messages_are_rejected():
    assert violations([response(CALL_RESULT)])
    assert violations("hello")
    assert violations({"jsonrpc": "2.0", "id": 1})


def test_unknown_era_is_an_error():
    with pytest.raises(ValueError, match="unknown era '2024-01-01'"):
        validate(response(CALL_RESULT), era="2024-01-01")


def test_schema_dir_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.setenv("RONDO_SCHEMA_DIR", str(tmp_path))
    wire_schema._era.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match=str(tmp_path)):
            validate(response(CALL_RESULT), method="tools/call")
    finally:
        monkeypatch.undo()
        wire_schema._era.cache_clear()


@pytest.mark.parametrize(
    "template",
    ["test://a/{id}", "x:{+path}/b{?q,r*}", "file:///{a.b:3}", "plain:no-vars", "x:{%41}"],
)
def test_uri_template_format_accepts(template):
    assert wire_schema._is_uri_template(template)


@pytest.mark.parametrize(
    "template", ["x:{id", "x:id}", "x:{}", "x:{a b}", "x:{a,}", "x:{{a}}", "x: {a}", "x:{a:0}"]
)
def test_uri_template_format_rejects(template):
    assert not wire_schema._is_uri_template(template)


TEXT = st.text(max_size=30)


@given(
    texts=st.lists(TEXT, max_size=4),
    is_error=st.booleans(),
    request_id=st.one_of(st.integers(), TEXT),
)
def test_any_well_formed_text_tool_result_is_accepted(texts, is_error, request_id):
    result = {
        "resultType": "complete",
        "content": [{"type": "text", "text": t} for t in texts],
        "isError": is_error,
    }
    validate(response(result, id=request_id), method="tools/call")


@given(key=st.sampled_from(sorted(LIST_TOOLS)))
def test_dropping_any_required_list_tools_key_is_caught(key):
    broken = copy.deepcopy(LIST_TOOLS)
    del broken[key]
    with pytest.raises(AssertionError, match=key):
        validate(response(broken), method="tools/list")
