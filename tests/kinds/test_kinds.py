"""The kinds table: lookup, merged capability needs, the explicit-style reader, and roots."""

from __future__ import annotations

import copy
import pickle
import re
import subprocess
import sys
import types

import pytest

import rondo.elicit
import rondo.roots
import rondo.sampling
from rondo import kinds
from rondo.kinds import KINDS, MISSING, Kind, Root, RootList, kind_for, missing_capabilities
from rondo.kinds.base import capability_gap, merge_capabilities
from rondo.kinds.roots import ROOTS
from rondo.server.context import Context
from rondo.wire.errors import McpError
from tests.helpers.measure import unmeasured_env
from tests.helpers.wire_schema import assert_definition as assert_official

FORM = rondo.elicit.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)
URL = rondo.elicit.url("Connect", "https://example.com/connect")
SAMPLE = rondo.sampling.create_message("Summarise", 100)
SAMPLE_TOOLS = rondo.sampling.create_message(
    "Weather?", 100, tools=[{"name": "w", "inputSchema": {"type": "object"}}]
)
ROOTS_REQUEST = rondo.roots.list()


def make_ctx(responses: dict | None = None) -> Context:
    ctx = Context(types.SimpleNamespace(name="s"))
    if responses is not None:
        ctx.input_responses = responses
    return ctx


# -- the table -------------------------------------------------------------------------------------


def test_the_table_holds_one_entry_per_kind():
    assert [kind.name for kind in KINDS] == ["form", "url", "sampling", "roots"]
    assert [kind.method for kind in KINDS] == [
        "elicitation/create",
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert all(isinstance(kind, Kind) for kind in KINDS)


@pytest.mark.parametrize(
    ("request_", "name"),
    [
        (FORM, "form"),
        (URL, "url"),
        (SAMPLE, "sampling"),
        (ROOTS_REQUEST, "roots"),
        ({"method": "roots/list"}, "roots"),
        (
            {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}},
            "form",
        ),
        ({"method": "elicitation/create"}, "form"),
    ],
)
def test_kind_for_finds_the_kind_and_only_that_kind_matches(request_, name):
    kind = kind_for(request_)
    assert kind.name == name
    assert [k.name for k in KINDS if k.matches(request_)] == [name]


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        ({"method": "elicitation/create", "params": {"mode": "popup", "message": "m"}}, "mode"),
        ({"method": "tools/call", "params": {}}, "not an input request"),
        ({"params": {}}, "not an input request"),
        ({}, "not an input request"),
        ("roots/list", "must be an object"),
        (None, "must be an object"),
    ],
)
def test_kind_for_refuses_what_is_not_an_input_request(request_, reason):
    with pytest.raises(ValueError, match=reason):
        kind_for(request_)


def test_every_builder_validates_against_the_official_input_request():
    for request in (FORM, URL, SAMPLE, SAMPLE_TOOLS, ROOTS_REQUEST):
        assert_official("InputRequest", request)
        kind_for(request).validate_request(request)
    assert_official("InputRequests", {"a": FORM, "b": URL, "c": SAMPLE, "d": ROOTS_REQUEST})


# -- capabilities ----------------------------------------------------------------------------------


def test_missing_capabilities_merges_every_unmet_need():
    requests = {"f": FORM, "u": URL, "s": SAMPLE_TOOLS, "r": ROOTS_REQUEST}
    assert missing_capabilities(requests, {}) == {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {"tools": {}},
        "roots": {},
    }
    assert missing_capabilities(requests, {"sampling": {}, "elicitation": {}}) == {
        "elicitation": {"url": {}},
        "sampling": {"tools": {}},
        "roots": {},
    }
    everything = {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}}
    assert missing_capabilities(requests, everything) == {}
    assert missing_capabilities({}, {}) == {}
    assert missing_capabilities({"s": SAMPLE_TOOLS, "r": ROOTS_REQUEST}, {"sampling": {}}) == {
        "sampling": {"tools": {}},
        "roots": {},
    }
    assert_official("ClientCapabilities", missing_capabilities(requests, {}))


def test_missing_capabilities_does_not_touch_its_inputs():
    caps = {"sampling": {}}
    requests = {"s": SAMPLE_TOOLS}
    before = (copy.deepcopy(caps), copy.deepcopy(requests))
    missing = missing_capabilities(requests, caps)
    missing["sampling"]["tools"]["x"] = 1
    assert (caps, requests) == before
    assert SAMPLE_TOOLS["params"]["tools"][0]["name"] == "w"


def test_missing_capabilities_refuses_unknown_requests():
    with pytest.raises(ValueError, match="'ping' is not an input request method"):
        missing_capabilities({"x": {"method": "ping"}}, {})


def test_capability_gap_and_merge():
    assert capability_gap({"a": {"b": {}}}, {"a": {"b": {"c": 1}}}) == {}
    assert capability_gap({"a": {"b": {}}}, {"a": {}}) == {"a": {"b": {}}}
    assert capability_gap({"a": {"b": {}}}, {"a": None}) == {"a": {"b": {}}}
    assert capability_gap({"a": {}}, {"a": []}) == {"a": {}}
    assert capability_gap({"a": {}}, {"b": {}}) == {"a": {}}
    merged = merge_capabilities({"a": {"b": {}}}, {"a": {"c": {}}, "d": {}})
    assert merged == {"a": {"b": {}, "c": {}}, "d": {}}


# -- the explicit-style reader -------------------------------------------------------------------------


def test_missing_answer_gives_the_sentinel():
    assert rondo.elicit.response(make_ctx(), "name", FORM) is MISSING
    assert rondo.elicit.response(make_ctx({"other": {"action": "accept"}}), "name", FORM) is MISSING
    assert rondo.sampling.response(make_ctx({}), "s", SAMPLE) is MISSING
    assert rondo.roots.response(make_ctx(), "r", ROOTS_REQUEST) is MISSING


def test_the_facades_share_one_reader():
    assert (
        rondo.elicit.response is rondo.sampling.response is rondo.roots.response is kinds.response
    )
    assert rondo.elicit.MISSING is rondo.sampling.MISSING is rondo.roots.MISSING is MISSING


def test_answers_are_read_by_their_kind():
    ctx = make_ctx(
        {
            "name": {"action": "accept", "content": {"name": "Ada"}},
            "go": {"action": "decline"},
            "s": {"role": "assistant", "content": {"type": "text", "text": "done"}, "model": "m"},
            "r": {"roots": [{"uri": "file:///home/ada/project", "name": "Project"}]},
        }
    )
    assert rondo.elicit.response(ctx, "name", FORM) == rondo.elicit.ElicitResult(
        "accept", {"name": "Ada"}
    )
    assert rondo.elicit.response(ctx, "go", URL).declined
    assert rondo.sampling.response(ctx, "s", SAMPLE).text == "done"
    assert rondo.roots.response(ctx, "r", ROOTS_REQUEST) == [
        Root("file:///home/ada/project", "Project")
    ]


@pytest.mark.parametrize(
    ("request_", "answer", "reason"),
    [
        (FORM, {"action": "accept", "content": {}}, "content.name: is required"),
        (FORM, {"action": "accept", "content": {"name": 1}}, "content.name: must be a string"),
        (FORM, "accept", "answer must be an object"),
        (FORM, None, "answer must be an object"),
        (URL, ["accept"], "answer must be an object"),
        (
            SAMPLE,
            {"role": "assistant", "content": {"type": "text", "text": "x"}},
            "model: is required",
        ),
        (SAMPLE, 42, "answer must be an object"),
        (
            ROOTS_REQUEST,
            {"roots": [{"uri": "https://example.com"}]},
            "roots[0].uri: must start with file://",
        ),
        (ROOTS_REQUEST, [], "answer must be an object"),
    ],
)
def test_malformed_answers_become_invalid_params(request_, answer, reason):
    ctx = make_ctx({"k": answer})
    expected = "^" + re.escape(f"Invalid input response for 'k': {reason}")
    with pytest.raises(McpError, match=expected) as info:
        kinds.response(ctx, "k", request_)
    assert info.value.code == -32602


def test_a_broken_request_is_the_handlers_bug_not_the_clients():
    ctx = make_ctx({"k": {"action": "accept"}})
    with pytest.raises(ValueError, match="^requestedSchema: is required") as info:
        kinds.response(ctx, "k", {"method": "elicitation/create", "params": {"message": "m"}})
    assert not isinstance(info.value, McpError)
    with pytest.raises(ValueError, match="'ping' is not an input request method"):
        kinds.response(ctx, "k", {"method": "ping"})


def test_the_sentinel():
    assert not MISSING
    assert repr(MISSING) == "MISSING"
    assert type(MISSING)() is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING


# -- roots --------------------------------------------------------------------------------------------


def test_roots_request_and_answer():
    assert ROOTS_REQUEST == {"method": "roots/list", "params": {}}
    assert rondo.roots.list() is not rondo.roots.list()  # a fresh dict each time
    assert_official("ListRootsRequest", ROOTS_REQUEST)
    assert ROOTS.required_capability(ROOTS_REQUEST) == {"roots": {}}
    assert ROOTS.is_supported(ROOTS_REQUEST, {"roots": {}})
    assert not ROOTS.is_supported(ROOTS_REQUEST, {"sampling": {}})
    answer = {
        "roots": [
            {"uri": "file:///home/ada/My%20Project", "name": "My Project"},
            {"uri": "file:///tmp", "_meta": {"com.example/x": 1}},
        ]
    }
    assert_official("ListRootsResult", answer)
    roots = ROOTS.read_answer(ROOTS_REQUEST, answer)
    assert isinstance(roots, list) and isinstance(roots, RootList)
    assert roots == [
        Root("file:///home/ada/My%20Project", "My Project"),
        Root("file:///tmp", None, {"com.example/x": 1}),
    ]
    assert roots[0].path == "/home/ada/My Project"
    assert roots.to_dict() == answer
    assert ROOTS.read_answer(ROOTS_REQUEST, roots.to_dict()) == roots
    assert ROOTS.read_answer(ROOTS_REQUEST, {"roots": []}) == []
    assert ROOTS.read_answer(ROOTS_REQUEST, {"roots": [], "nextCursor": "x"}) == []


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        ({}, "roots"),
        ({"roots": {"uri": "file:///"}}, "roots"),
        ({"roots": ["file:///"]}, "roots[0]"),
        ({"roots": [{"name": "x"}]}, "roots[0].uri"),
        ({"roots": [{"uri": 1}]}, "roots[0].uri"),
        ({"roots": [{"uri": "/home/ada"}]}, "roots[0].uri"),
        ({"roots": [{"uri": "FILE:///home"}]}, "roots[0].uri"),
        ({"roots": [{"uri": "file:///a"}, {"uri": "https://x"}]}, "roots[1].uri"),
        ({"roots": [{"uri": "file:///a", "name": 3}]}, "roots[0].name"),
        ({"roots": [{"uri": "file:///a", "_meta": []}]}, "roots[0]._meta"),
    ],
)
def test_malformed_roots_are_rejected(answer, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        ROOTS.read_answer(ROOTS_REQUEST, answer)
    assert str(info.value).startswith(path + ":"), str(info.value)


def test_roots_request_validation():
    ROOTS.validate_request({"method": "roots/list"})
    ROOTS.validate_request({"method": "roots/list", "params": {"_meta": {}}})
    with pytest.raises(ValueError, match="^cursor:"):
        ROOTS.validate_request({"method": "roots/list", "params": {"cursor": "x"}})
    with pytest.raises(ValueError, match="^params:"):
        ROOTS.validate_request({"method": "roots/list", "params": None})


# -- import weight ----------------------------------------------------------------------------------


def test_importing_the_facades_stays_light():
    code = (
        "import sys, rondo.elicit, rondo.sampling, rondo.roots\n"
        "heavy = [m for m in ('rondo.kinds.shorthand', 'dataclasses', 'jsonschema', 'asyncio',"
        " 'rondo.server', 'rondo.mrtr', 'urllib.request', 'email') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=unmeasured_env())
    assert out.stdout.strip() == "[]"
