"""A lone surrogate escape inside an otherwise valid body (issue 37 defect 15).

`"\\ud800"` is syntactically valid JSON (RFC 8259 section 8.2: the grammar allows it, only the
Unicode meaning is undefined), but msgspec refuses to build a Python string from it. rondo used to
answer -32700 "Parse error"; it now answers -32602 naming the field, with the request's id, over
HTTP and stdio alike. A body that is really invalid still gets -32700.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo
from rondo.wire.errors import undecodable
from tests.helpers.helpers_core import (
    INVALID_PARAMS,
    PARSE_ERROR,
    asgi_client,
    http_headers,
    request,
    run,
)

LONE = "\\ud800"  # the six characters of the escape, as they travel


def call_body(text_json: str, id: object = 9) -> bytes:  # noqa: A002
    message = request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id=id)
    raw = json.dumps(message)
    return raw.replace('"text": "x"', f'"text": {text_json}').encode()


def make_server() -> rondo.Server:
    server = rondo.Server("surrogates", state=None)

    @server.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    return server


def test_the_stdlib_calls_the_body_json_and_msgspec_refuses_it() -> None:
    body = call_body(f'"a{LONE}b"')
    assert json.loads(body)["params"]["arguments"]["text"] == "a\ud800b"
    with pytest.raises(msgspec.DecodeError, match="truncated|surrogate|invalid"):
        msgspec.json.decode(body)


def test_http_answers_invalid_params_naming_the_field() -> None:
    app = make_server().asgi()
    message = request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id=9)

    async def go() -> tuple[int, dict]:
        async with asgi_client(app) as client:
            response = await client.post("/mcp", content=call_body(f'"a{LONE}b"'),
                                         headers=http_headers(message))
            return response.status_code, response.json()

    status, answer = run(go())
    assert status == 400
    assert answer["id"] == 9
    assert answer["error"]["code"] == INVALID_PARAMS
    assert answer["error"]["data"] == {"field": "params.arguments.text"}
    assert "params.arguments.text" in answer["error"]["message"]


def test_stdio_answers_invalid_params_naming_the_field(tmp_path) -> None:
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent("""
        import rondo
        server = rondo.Server("s", state=None)

        @server.tool
        def echo(text: str) -> str:
            '''Echo.'''
            return text

        server.run_stdio()
    """))
    lines = [call_body(f'"{LONE}"', id=1),  # the typed lane's line
             call_body(f'["ok", "a{LONE}"]', id="two"),
             b'{"jsonrpc": "2.0", "id": 3, "method": "x", "params": {"a\\\\ud800": 1}}',  # escaped
             b'{"a": "\\udc00"',  # truncated: still a parse error
             ]
    done = subprocess.run([sys.executable, str(app)], input=b"\n".join(lines) + b"\n",
                          capture_output=True, timeout=60)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["error"]["code"] == INVALID_PARAMS
    assert by_id[1]["error"]["data"] == {"field": "params.arguments.text"}
    assert by_id["two"]["error"]["data"] == {"field": "params.arguments.text[1]"}
    # An escaped backslash then "ud800" is an ordinary key: the body decodes and goes on.
    assert "surrogate" not in by_id[3]["error"]["message"]
    assert by_id[None]["error"]["code"] == PARSE_ERROR
    assert len(answers) == 4 and b"Traceback" not in done.stderr


def test_a_surrogate_in_a_key_is_named_safely() -> None:
    body = b'{"jsonrpc": "2.0", "id": "k", "method": "m", "params": {"\\udfff": 1}}'
    with pytest.raises(msgspec.DecodeError, match="."):
        msgspec.json.decode(body)
    rid, error = undecodable(body, ValueError("x"))
    assert rid == "k" and error.code == INVALID_PARAMS
    assert error.data == {"field": "params.'\\udfff'"}
    msgspec.json.encode(error.to_error())  # the answer itself can be sent


def test_an_id_holding_the_surrogate_is_not_echoed() -> None:
    body = b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "m"}'
    rid, error = undecodable(body, ValueError("x"))
    assert rid is None and error.code == INVALID_PARAMS and error.data == {"field": "id"}


def test_deep_and_wide_bodies_cost_linear_time() -> None:
    deep = b'{"a":' * 900 + b'"\\ud800"' + b"}" * 900
    rid, error = undecodable(deep, ValueError("x"))
    assert error.code == INVALID_PARAMS and len(error.data["field"]) <= 256
    wide = b'{"' + b"k" * 100_000 + b'": "\\ud800"}'
    rid, error = undecodable(wide, ValueError("x"))
    assert error.data["field"].endswith("...") and len(error.data["field"]) <= 256


@given(st.recursive(st.text(max_size=5) | st.integers(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=10))
def test_any_body_is_answered_with_an_encodable_error(value: object) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"v": value}})
    body = body.replace("a", LONE, 1).encode()  # a lone surrogate wherever an "a" was
    try:
        msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        rid, error = undecodable(body, exc)
        assert error.code == INVALID_PARAMS and rid == 1
        msgspec.json.encode(error.to_error())
