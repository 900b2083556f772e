"""Parameter serialization and the request a call sends, without a network: styles, explode,
path escaping (property-tested: whatever the value, it stays in its segment or is refused),
bodies, and the digest the confirmation binds."""

from __future__ import annotations

from urllib.parse import unquote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rondo.openapi.operations import Body, Operation, Param
from rondo.openapi.request import prepare
from rondo.openapi.serialize import cookie_value, header_value, path_value, query_pairs

BASE = httpx.URL("https://api.example/v1")


def param(location="query", style=None, explode=None, name="p", **rest):
    style = style or {"path": "simple", "query": "form", "header": "simple",
                      "cookie": "form"}[location]
    explode = style == "form" if explode is None else explode
    return Param(name, name, location, location == "path", style, explode, **rest)


@pytest.mark.parametrize("style, explode, value, expected", [
    ("form", True, [1, 2], [("p", "1"), ("p", "2")]),
    ("form", False, [1, 2], [("p", "1,2")]),
    ("form", True, {"a": 1, "b": True}, [("a", "1"), ("b", "true")]),
    ("form", False, {"a": 1, "b": "x"}, [("p", "a,1,b,x")]),
    ("spaceDelimited", False, ["a", "b"], [("p", "a b")]),
    ("pipeDelimited", False, ["a", "b"], [("p", "a|b")]),
    ("deepObject", True, {"color": "red", "n": 2}, [("p[color]", "red"), ("p[n]", "2")]),
    ("form", True, 2.5, [("p", "2.5")]),
    ("form", True, None, []),
])
def test_query_styles(style, explode, value, expected):
    assert query_pairs(param(style=style, explode=explode), value) == expected


@pytest.mark.parametrize("style, explode, value, expected", [
    ("simple", False, [3, 4], "3,4"),
    ("simple", False, {"a": 1}, "a,1"),
    ("simple", True, {"a": 1, "b": 2}, "a=1,b=2"),
    ("label", False, [3, 4], ".3,4"),
    ("label", True, [3, 4], ".3.4"),
    ("matrix", False, [3, 4], ";p=3,4"),
    ("matrix", True, [3, 4], ";p=3;p=4"),
    ("simple", False, "a b?c#d", "a%20b%3Fc%23d"),
])
def test_path_styles(style, explode, value, expected):
    assert path_value(param("path", style, explode), value) == expected


def test_headers_and_cookies():
    assert header_value(param("header"), [1, 2]) == "1,2"
    assert header_value(param("header", explode=True), {"a": 1}) == "a=1"
    assert cookie_value(param("cookie", name="s"), "a b;c") == "s=a%20b%3Bc"
    with pytest.raises(ValueError, match="must not contain line breaks"):
        header_value(param("header"), "x\ny")
    with pytest.raises(ValueError, match="must be a string, number or boolean here"):
        query_pairs(param(), [{"nested": 1}])


@given(st.text(max_size=30))
def test_a_path_value_stays_in_its_segment_or_is_refused(value):
    p = param("path")
    try:
        encoded = path_value(p, value)
    except ValueError as exc:
        assert "path segment" in str(exc) or "must not be empty" in str(exc)
        return
    assert "/" not in encoded and "\\" not in encoded
    assert unquote(encoded) == value  # arrives intact
    layer = value  # and no layer of decoding turns it into a dot segment or a separator
    for _ in range(5):
        assert layer not in (".", "..") and "/" not in layer and "\\" not in layer
        layer = unquote(layer)


def test_multi_segment_values_keep_slashes_but_not_dot_segments():
    p = param("path", multi_segment=True)
    assert path_value(p, "heads/main") == "heads/main"
    for bad in ("heads/../x", "a//b", "./a", "a/%2e%2e/b"):
        with pytest.raises(ValueError, match="path segment"):
            path_value(p, bad)


def _op(params=(), body=None, path="/things/{id}", method="PUT"):
    props = {p.arg: {} for p in params}
    if body is not None and body.fields:
        props.update({arg: {} for arg in body.fields})
    elif body is not None:
        props[body.arg] = {}
    return Operation(method, path, None, "op", None, "", (), params=list(params), body=body,
                     input_schema={"type": "object", "properties": props})


def test_the_request_and_its_digest():
    op = _op([param("path", name="id"), param(name="q"), param("header", name="X-Tag")],
             Body("application/json", True, {"note": "note"}, None))
    one = prepare(op, {"id": 7, "q": [1, 2], "X-Tag": "t", "note": "hi"}, BASE)
    assert str(one.url) == "https://api.example/v1/things/7?q=1&q=2"
    assert one.headers == {"x-tag": "t", "content-type": "application/json"}
    assert one.content == b'{"note":"hi"}'
    assert one.describe() == ("PUT https://api.example/v1/things/7?q=1&q=2\nx-tag: t\n"
                              'body: {"note":"hi"}')
    same = prepare(op, {"note": "hi", "X-Tag": "t", "q": [1, 2], "id": 7}, BASE)
    other = prepare(op, {"id": 7, "q": [1, 2], "X-Tag": "t", "note": "bye"}, BASE)
    assert one.digest() == same.digest() != other.digest()


def test_text_and_optional_bodies():
    text = _op(body=Body("text/plain", False, None, "body"), path="/t")
    assert prepare(text, {"body": "plain"}, BASE).content == b"plain"
    assert prepare(text, {}, BASE).content is None
    with pytest.raises(ValueError, match="the text/plain body must be a string"):
        prepare(text, {"body": {"a": 1}}, BASE)


def test_the_url_cannot_leave_the_base():
    op = _op([param("path", name="id")], path="/{id}")
    with pytest.raises(ValueError, match="would leave its path segment"):
        prepare(op, {"id": ".."}, BASE)
    assert str(prepare(op, {"id": "@evil.example"}, BASE).url) == \
        "https://api.example/v1/%40evil.example"


# -- property: any arguments to any operation of a real app give a request or a ValueError ------

_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                       | st.text(max_size=6),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)


def _operations():
    from rondo.openapi import from_fastapi
    from tests.helpers.openapi_app import make_app

    seen = []
    from_fastapi(make_app(), customize=lambda op: seen.append(op) or op)
    return seen


OPERATIONS = _operations()


@given(st.sampled_from(OPERATIONS), st.dictionaries(
    st.sampled_from(["item_id", "tag", "ids", "limit", "x-trace", "name", "price", "tags",
                     "username", "remember", "note", "file", "session", "to", "size", "other"]),
    _values, max_size=5))
def test_any_arguments_make_a_request_under_the_base_or_a_value_error(op, arguments):
    try:
        prepared = prepare(op, arguments, BASE)
    except ValueError:
        return
    assert str(prepared.url).startswith("https://api.example/v1/")
    assert all("\n" not in v and "\r" not in v for v in prepared.headers.values())
    assert len(prepared.digest()) == 64
