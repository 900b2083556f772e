"""Issue 16, security: template traversal, masked exception text, linear template matching."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rondo
from rondo.client.legacy import answer_server_request
from rondo.wire.uritemplate import UriTemplate
from tests.helpers.helpers_core import INTERNAL_ERROR, INVALID_PARAMS, Client, text_of
from tests.legacy.test_legacy import LegacyClient, run

# -- 1. path traversal through a template variable ------------------------------------------


def file_server() -> tuple[rondo.Server, list[Any]]:
    server = rondo.Server("files", state=None)
    seen: list[Any] = []

    @server.resource("file:///data/{name}")
    def data(name: str) -> str:
        seen.append(name)
        return f"contents of {name}"

    @server.resource("tree:///{+path}")
    def tree(path: str) -> str:
        seen.append(path)
        return f"tree {path}"

    return server, seen


@pytest.mark.parametrize("uri", [
    "file:///data/%2e%2e%2fetc%2fpasswd",
    "file:///data/..%2Fetc%2Fpasswd",
    "file:///data/%2E%2E",
    "file:///data/..",
    "file:///data/passwd%00.txt",
    "file:///data/a%5c..%5cb",
    "file:///data/new%0aline",
    "tree:///a/../../etc/passwd",
    "tree:///a/%2e%2e/etc",
    "tree:///ok%00",
])
def test_a_value_that_escapes_its_place_is_resource_not_found(uri: str) -> None:
    server, seen = file_server()
    error = Client(server).error("resources/read", {"uri": uri})
    assert error["code"] == INVALID_PARAMS and error["data"] == {"uri": uri}
    assert seen == []  # the handler never ran


def test_legitimate_values_still_reach_the_handler() -> None:
    server, seen = file_server()
    client = Client(server)
    client.result("resources/read", {"uri": "file:///data/report%20v2.txt"})
    client.result("resources/read", {"uri": "tree:///docs/a/b.md"})
    client.result("resources/read", {"uri": "tree:///x/..y/z"})  # `..y` is a name, not `..`
    assert seen == ["report v2.txt", "docs/a/b.md", "x/..y/z"]


def test_traversal_is_refused_on_the_legacy_era_too() -> None:
    server, seen = file_server()

    async def go() -> dict[str, Any]:
        client = LegacyClient(server)
        await client.initialize()
        return await client.request("resources/read", {"uri": "file:///data/%2e%2e%2fsecret"})

    response = run(go())
    assert "error" in response and seen == []


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_no_simple_variable_ever_yields_a_separator_or_dot_dot(raw: str) -> None:
    from urllib.parse import quote

    template = UriTemplate("file:///data/{name}")
    for uri in (f"file:///data/{raw}", f"file:///data/{quote(raw, safe='')}"):
        got = template.match(uri)
        if got is not None:
            name = got["name"]
            assert "/" not in name and "\\" not in name and name not in (".", "..")
            assert not re.search(r"[\x00-\x1f\x7f-\x9f]", name)


# -- 3. template matching is linear -----------------------------------------------------------


class ScannedUri(str):
    """A URI that records each whole-string scan the matcher asks of it (each one linear)."""

    def __new__(cls, value: str) -> ScannedUri:
        uri = super().__new__(cls, value)
        uri.scans = []
        return uri

    scans: list[str]

    def find(self, *args: Any) -> int:
        self.scans.append("find")
        return super().find(*args)

    def rfind(self, *args: Any) -> int:
        self.scans.append("rfind")
        return super().rfind(*args)

    def startswith(self, *args: Any) -> bool:
        self.scans.append("startswith")
        return super().startswith(*args)

    def endswith(self, *args: Any) -> bool:
        self.scans.append("endswith")
        return super().endswith(*args)


@pytest.mark.parametrize("shape", [lambda n: "a/" * n + "x", lambda n: "/" * (2 * n),
                                   lambda n: "a" * (50 * n), lambda n: "a" * (50 * n) + ".git",
                                   lambda n: "/" * (2 * n) + ".git", lambda n: "a/" * n + "b.git"])
def test_many_reserved_variables_against_a_long_uri_cost_a_fixed_number_of_scans(shape: Any) -> None:
    template = UriTemplate("repo://{+a}/{+b}/{+c}.git")
    # Before: the backtracking regex took ~22 s on a 2 KB URI of the first shape. Now: a prefix and
    # a suffix check and one find/rfind per variable, each linear, however long the URI grows.
    short, long_ = ScannedUri("repo://" + shape(1000)), ScannedUri("repo://" + shape(2000))
    results = template.match(short), template.match(long_)
    assert (results[0] is None) == (results[1] is None)
    assert 1 <= len(short.scans) <= 2 + 3 and short.scans == long_.scans


def test_matching_rule_first_literal_then_last_reserved() -> None:
    assert UriTemplate("repo://{+a}/{+b}/{+c}.git").match("repo://o/r/x/y.git") == {
        "a": "o", "b": "r", "c": "x/y"}
    assert UriTemplate("x://{+dir}/{name}").match("x://a/b/c") == {"dir": "a/b", "name": "c"}
    assert UriTemplate("x://{a}-{b}").match("x://p-q-r") == {"a": "p", "b": "q-r"}
    assert UriTemplate("x://{a}-{+b}").match("x://p-q-r") == {"a": "p", "b": "q-r"}
    assert UriTemplate("x://{id}/meta").match("x://7/meta") == {"id": "7"}
    assert UriTemplate("x://{id}/meta").match("x://7/8/meta") is None
    with pytest.raises(ValueError, match="separated"):
        UriTemplate("x://{a}{b}")


def test_uris_over_the_length_limit_are_refused_before_matching() -> None:
    server = rondo.Server("long", state=None, max_uri_length=100)

    @server.resource("repo://{+a}/{+b}")
    def repo(a: str, b: str) -> str:
        return a + b

    error = Client(server).error("resources/read", {"uri": "repo://" + "a/" * 100})
    assert error["code"] == INVALID_PARAMS and "too long" in error["message"]
    assert "data" not in error  # the huge URI is not echoed back
    with pytest.raises(ValueError, match="max_uri_length must be a positive integer"):
        rondo.Server("bad", max_uri_length=0)


# -- 2. exception text stays on the server ------------------------------------------------------


def failing_server(**options: Any) -> rondo.Server:
    server = rondo.Server("failing", state=None, **options)

    @server.tool
    def leak() -> str:
        """Fails with a secret in its message."""
        raise RuntimeError("SECRET at /etc/shadow")

    @server.tool
    def missing() -> str:
        """An OSError names the path."""
        open("/nonexistent/private/key.pem")  # noqa: SIM115
        return "unreachable"

    @server.tool
    def refused() -> str:
        """A ToolError is for the model."""
        raise rondo.ToolError("no such record: 42")

    @server.prompt
    def bad_prompt() -> str:
        """Fails."""
        raise RuntimeError("PROMPT SECRET")

    return server


def _reference(text: str) -> str:
    m = re.fullmatch(r"Internal error in tool '\w+' \(reference ([0-9a-f]{12})\)", text)
    assert m, text
    return m.group(1)


def test_unexpected_exceptions_are_masked_and_the_log_has_the_traceback(caplog) -> None:
    client = Client(failing_server())
    with caplog.at_level(logging.ERROR, logger="rondo.server"):
        leaked = client.tool("leak")
        missing = client.tool("missing")
    for result in (leaked, missing):
        assert result["isError"] is True
        assert "SECRET" not in text_of(result) and "/nonexistent" not in text_of(result)
    ref = _reference(text_of(leaked))
    records = [r for r in caplog.records if ref in r.getMessage()]
    assert len(records) == 1 and records[0].exc_info is not None
    assert "SECRET at /etc/shadow" in str(records[0].exc_info[1])
    assert _reference(text_of(missing)) != ref


def test_tool_error_passes_through_and_development_mode_shows_the_text() -> None:
    assert text_of(Client(failing_server()).tool("refused")) == "no such record: 42"
    dev = Client(failing_server(mask_errors=False))
    assert "SECRET at /etc/shadow" in text_of(dev.tool("leak"))


def test_prompt_failures_carry_a_reference_not_the_text(caplog) -> None:
    with caplog.at_level(logging.ERROR, logger="rondo.server"):
        error = Client(failing_server()).error("prompts/get", {"name": "bad_prompt"})
    assert error["code"] == INTERNAL_ERROR and "PROMPT SECRET" not in error["message"]
    ref = re.search(r"reference ([0-9a-f]{12})", error["message"])
    assert ref and any(ref.group(1) in r.getMessage() for r in caplog.records)


def test_masked_on_the_legacy_era_too() -> None:
    async def go() -> dict[str, Any]:
        client = LegacyClient(failing_server())
        await client.initialize()
        return await client.result("tools/call", {"name": "leak", "arguments": {}})

    result = run(go())
    assert result["isError"] is True and "SECRET" not in result["content"][0]["text"]
    _reference(result["content"][0]["text"])


def test_the_client_does_not_send_its_handlers_exception_text(caplog) -> None:
    class Handlers:
        async def answer(self, request: Any, strict: bool) -> Any:
            raise RuntimeError("client token abc123 in /home/me/.secrets")

    message = {"jsonrpc": "2.0", "id": 5, "method": "elicitation/create", "params": {}}
    with caplog.at_level(logging.ERROR, logger="rondo.client"):
        reply = asyncio.run(answer_server_request(Handlers(), message))  # type: ignore[arg-type]
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert "abc123" not in reply["error"]["message"] and "/home" not in reply["error"]["message"]
    ref = re.search(r"reference ([0-9a-f]{12})", reply["error"]["message"])
    assert ref and any(ref.group(1) in r.getMessage() and r.exc_info for r in caplog.records)
