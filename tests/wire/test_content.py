"""Content helpers (rondo.server.content) and result shaping (rondo.core.results), checked against the official schema."""

import base64
import dataclasses
import json
from typing import Any

import jsonschema
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rondo.core import results as R
from rondo.server import content as C
from rondo.server.schema import tool_signature
from tests.helpers.wire_schema import definition  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def validator(name: str) -> jsonschema.Draft202012Validator:
    return definition(name)


CONTENT_BLOCK = validator("ContentBlock")
CALL_TOOL_RESULT = validator("CallToolResult")
PROMPT_MESSAGE = validator("PromptMessage")
GET_PROMPT_RESULT = validator("GetPromptResult")
TEXT_CONTENTS = validator("TextResourceContents")
BLOB_CONTENTS = validator("BlobResourceContents")


def assert_call_tool_result(body: dict[str, Any]) -> None:
    assert "resultType" not in body
    CALL_TOOL_RESULT.validate({**body, "resultType": "complete"})


def signature_returning(annotation: Any):  # type: ignore[no-untyped-def]
    def f() -> None:
        pass

    f.__annotations__ = {"return": annotation}
    return tool_signature(f)


UNSTRUCTURED = signature_returning(None)


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float


class Reading(pydantic.BaseModel):
    sensor: str
    value: int


# -- content blocks ---------------------------------------------------------------------------


def test_text_block():
    assert C.text("hi") == {"type": "text", "text": "hi"}
    block = C.text("hi", annotations={"audience": ["user"], "priority": 0.5}, meta={"k": 1})
    assert block == {
        "type": "text",
        "text": "hi",
        "annotations": {"audience": ["user"], "priority": 0.5},
        "_meta": {"k": 1},
    }
    CONTENT_BLOCK.validate(block)
    validator("TextContent").validate(block)


def test_image_and_audio_encode_bytes_and_keep_base64_strings():
    block = C.image(PNG, "image/png")
    assert block == {
        "type": "image",
        "data": base64.b64encode(PNG).decode(),
        "mimeType": "image/png",
    }
    assert C.image("aGk=", "image/png")["data"] == "aGk="
    validator("ImageContent").validate(block)
    sound = C.audio(b"RIFF", "audio/wav")
    assert base64.b64decode(sound["data"]) == b"RIFF"
    validator("AudioContent").validate(sound)
    CONTENT_BLOCK.validate(sound)


def test_embedded_resource_needs_exactly_one_of_text_and_blob():
    block = C.embedded("test://doc", text="hello", mime_type="text/plain")
    assert block == {
        "type": "resource",
        "resource": {"uri": "test://doc", "mimeType": "text/plain", "text": "hello"},
    }
    validator("EmbeddedResource").validate(block)
    binary = C.embedded("test://img", blob=PNG, mime_type="image/png")
    assert base64.b64decode(binary["resource"]["blob"]) == PNG
    CONTENT_BLOCK.validate(binary)
    with pytest.raises(ValueError, match="exactly one"):
        C.embedded("test://doc")
    with pytest.raises(ValueError, match="exactly one"):
        C.embedded("test://doc", text="a", blob=b"b")


def test_resource_link():
    assert C.resource_link("file:///a.txt", "a") == {
        "type": "resource_link",
        "uri": "file:///a.txt",
        "name": "a",
    }
    block = C.resource_link(
        "file:///a.txt", "a", title="A", description="the a", mime_type="text/plain", size=3
    )
    assert block["title"] == "A" and block["size"] == 3 and block["mimeType"] == "text/plain"
    validator("ResourceLink").validate(block)
    CONTENT_BLOCK.validate(block)


def test_is_content_block_checks_required_keys():
    assert C.is_content_block(C.text("x"))
    assert not C.is_content_block({"type": "text", "value": 3})
    assert not C.is_content_block({"type": "image", "data": "x"})
    assert not C.is_content_block({"type": "chart", "text": "x"})
    assert not C.is_content_block("text")


# -- tool results -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("hello", [{"type": "text", "text": "hello"}]),
        (None, []),
        (C.image(PNG, "image/png"), [C.image(PNG, "image/png")]),
        (
            ["Look:", C.image(PNG, "image/png")],
            [{"type": "text", "text": "Look:"}, C.image(PNG, "image/png")],
        ),
        ((C.text("a"), C.text("b")), [C.text("a"), C.text("b")]),
        (42, [{"type": "text", "text": "42"}]),
        ({"a": [1, None]}, [{"type": "text", "text": '{"a":[1,null]}'}]),
        ([1, 2], [{"type": "text", "text": "[1,2]"}]),
        ({"type": "text", "value": 1}, [{"type": "text", "text": '{"type":"text","value":1}'}]),
        (Weather("Oslo", 3.5), [{"type": "text", "text": '{"city":"Oslo","celsius":3.5}'}]),
        (Reading(sensor="s", value=1), [{"type": "text", "text": '{"sensor":"s","value":1}'}]),
    ],
)
def test_tool_result_without_output_schema(value, content):  # type: ignore[no-untyped-def]
    body = R.tool_result(value, UNSTRUCTURED)
    assert body == {"content": content}
    assert_call_tool_result(body)


def test_unencodable_values_fall_back_to_str():
    class Opaque:
        def __str__(self) -> str:
            return "opaque!"

    assert R.tool_result(Opaque(), UNSTRUCTURED) == {
        "content": [{"type": "text", "text": "opaque!"}]
    }


def test_bytes_are_an_error_result():
    body = R.tool_result(b"\x00\x01", UNSTRUCTURED)
    assert body["isError"] is True
    assert "rondo.image()" in body["content"][0]["text"]
    assert_call_tool_result(body)


def test_structured_output_comes_with_its_json_text():
    sig = signature_returning(Weather)
    body = R.tool_result(Weather("Oslo", 3.5), sig)
    assert body == {
        "content": [{"type": "text", "text": '{"city":"Oslo","celsius":3.5}'}],
        "structuredContent": {"city": "Oslo", "celsius": 3.5},
    }
    assert_call_tool_result(body)
    assert sig.output_schema is not None
    jsonschema.Draft202012Validator(sig.output_schema).validate(body["structuredContent"])

    numbers = R.tool_result(7, signature_returning(int))
    assert numbers == {"content": [{"type": "text", "text": "7"}], "structuredContent": 7}
    assert_call_tool_result(numbers)

    model = R.tool_result(Reading(sensor="s", value=2), signature_returning(Reading))
    assert model["structuredContent"] == {"sensor": "s", "value": 2}


def test_tool_result_object_is_taken_as_given():
    result = C.ToolResult(
        ["partial", C.image(PNG, "image/png")],
        structured={"done": False},
        is_error=True,
        meta={"trace": "t1"},
    )
    body = R.tool_result(result, signature_returning(Weather))  # the output schema is bypassed
    assert body == {
        "content": [{"type": "text", "text": "partial"}, C.image(PNG, "image/png")],
        "structuredContent": {"done": False},
        "isError": True,
        "_meta": {"trace": "t1"},
    }
    assert_call_tool_result(body)
    assert R.tool_result(C.ToolResult("one"), UNSTRUCTURED) == {
        "content": [{"type": "text", "text": "one"}]
    }
    with pytest.raises(TypeError, match="not a content block"):
        C.ToolResult([3]).to_dict()


def test_error_result():
    body = R.error_result("no such city")
    assert body == {"content": [{"type": "text", "text": "no such city"}], "isError": True}
    assert_call_tool_result(body)
    assert str(C.ToolError("boom")) == "boom"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)
blocks = st.sampled_from(
    [
        C.text("t"),
        C.image(PNG, "image/png"),
        C.audio(b"a", "audio/wav"),
        C.embedded("test://x", text="x"),
        C.resource_link("test://x", "x"),
    ]
)


@settings(max_examples=200)
@given(json_values | blocks | st.lists(st.text() | blocks, max_size=4))
def test_any_return_value_shapes_into_a_valid_result(value):  # type: ignore[no-untyped-def]
    body = R.tool_result(value, UNSTRUCTURED)
    assert_call_tool_result(body)
    structured = R.tool_result(value, signature_returning(Any | None))
    assert_call_tool_result(structured)


STRUCTURED_ANY = signature_returning(dict[str, Any] | list[Any] | int | float | bool | None)


@settings(max_examples=100)
@given(json_values.filter(lambda v: not isinstance(v, str)))
def test_structured_text_is_the_json_of_structured_content(value):  # type: ignore[no-untyped-def]
    assert STRUCTURED_ANY.output_schema is not None
    body = R.tool_result(value, STRUCTURED_ANY)
    assert_call_tool_result(body)
    assert json.loads(body["content"][0]["text"]) == body["structuredContent"] == value


# -- prompts ----------------------------------------------------------------------------------


def test_user_and_assistant_messages():
    assert C.user("hi") == {"role": "user", "content": {"type": "text", "text": "hi"}}
    message = C.assistant(C.image(PNG, "image/png"))
    assert message == {"role": "assistant", "content": C.image(PNG, "image/png")}
    PROMPT_MESSAGE.validate(message)
    with pytest.raises(TypeError, match="not a content block: 3"):
        C.user(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "messages"),
    [
        ("hello", [{"role": "user", "content": {"type": "text", "text": "hello"}}]),
        (
            C.embedded("test://r", text="r"),
            [{"role": "user", "content": C.embedded("test://r", text="r")}],
        ),
        (C.assistant("ok"), [C.assistant("ok")]),
        ({"role": "assistant", "content": "plain"}, [C.assistant("plain")]),
        (
            [
                C.user(C.embedded("test://r", text="r")),
                "Please process it.",
                C.image(PNG, "image/png"),
            ],
            [
                C.user(C.embedded("test://r", text="r")),
                C.user("Please process it."),
                C.user(C.image(PNG, "image/png")),
            ],
        ),
        (None, []),
    ],
)
def test_prompt_messages(value, messages):  # type: ignore[no-untyped-def]
    shaped = R.prompt_messages(value)
    assert shaped == messages
    GET_PROMPT_RESULT.validate({"resultType": "complete", "messages": shaped})


def test_prompt_messages_reject_what_is_not_a_message():
    with pytest.raises(TypeError, match="role"):
        R.prompt_messages({"role": "system", "content": "x"})
    with pytest.raises(TypeError, match="prompt must return"):
        R.prompt_messages(3)
    with pytest.raises(TypeError, match="prompt must return"):
        R.prompt_messages(["ok", 3])


@given(st.lists(st.text() | blocks, max_size=5))
def test_prompt_messages_are_always_valid(value):  # type: ignore[no-untyped-def]
    for message in R.prompt_messages(value):
        PROMPT_MESSAGE.validate(message)


# -- resources --------------------------------------------------------------------------------


def test_resource_text_and_blob_helpers():
    item = C.resource_text("test://static-text", "hello", "text/plain")
    assert item == {"uri": "test://static-text", "mimeType": "text/plain", "text": "hello"}
    TEXT_CONTENTS.validate(item)
    blob = C.resource_blob("test://static-binary", PNG, "image/png")
    assert base64.b64decode(blob["blob"]) == PNG
    BLOB_CONTENTS.validate(blob)
    assert C.resource_text("test://x", "t") == {"uri": "test://x", "text": "t"}


@pytest.mark.parametrize(
    ("value", "mime_type", "contents"),
    [
        ("hello", "text/plain", [{"uri": "test://r", "mimeType": "text/plain", "text": "hello"}]),
        ("hello", None, [{"uri": "test://r", "text": "hello"}]),
        (PNG, "image/png", [C.resource_blob("test://r", PNG, "image/png")]),
        (bytearray(b"ab"), None, [C.resource_blob("test://r", b"ab")]),
        (
            C.resource_text("test://other", "o"),
            "text/plain",
            [{"uri": "test://other", "text": "o"}],
        ),
        (
            ["a", b"b"],
            None,
            [C.resource_text("test://r", "a"), C.resource_blob("test://r", b"b")],
        ),
        (
            {"id": "X", "templateTest": True},
            None,
            [C.resource_text("test://r", '{"id":"X","templateTest":true}', "application/json")],
        ),
        (
            [{"a": 1}, {"b": 2}],
            "application/vnd.x+json",
            [C.resource_text("test://r", '[{"a":1},{"b":2}]', "application/vnd.x+json")],
        ),
        (
            Weather("Oslo", 1.0),
            None,
            [C.resource_text("test://r", '{"city":"Oslo","celsius":1.0}', "application/json")],
        ),
    ],
)
def test_resource_contents(value, mime_type, contents):  # type: ignore[no-untyped-def]
    shaped = R.resource_contents(value, "test://r", mime_type)
    assert shaped == contents
    validator("ReadResourceResult").validate(
        {"resultType": "complete", "contents": shaped, "ttlMs": 0, "cacheScope": "public"}
    )


def test_resource_contents_never_empty():
    with pytest.raises(TypeError, match="returned None"):
        R.resource_contents(None, "test://r")
    # An empty list is data (a JSON array), not "no contents".
    assert R.resource_contents([], "test://r") == [
        C.resource_text("test://r", "[]", "application/json")
    ]
