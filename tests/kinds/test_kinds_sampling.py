"""Sampling: the create_message builder, its structural checks, capability needs, answers."""

from __future__ import annotations

import copy
import json
import re

import pytest

import rondo.sampling
from rondo.kinds import SamplingResult, kind_for
from rondo.kinds.sampling import SAMPLING
from tests.helpers.wire_schema import assert_definition as assert_official

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
PNG = "iVBORw0KGgo="  # base64 of the PNG signature


def user(content):
    return {"role": "user", "content": content}


def assistant(content):
    return {"role": "assistant", "content": content}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def use(id_: str, name: str = "get_weather") -> dict:
    return {"type": "tool_use", "id": id_, "name": name, "input": {"city": "Paris"}}


def result(id_: str) -> dict:
    return {"type": "tool_result", "toolUseId": id_, "content": [text("sunny")]}


# -- building --------------------------------------------------------------------------------------


def test_a_string_is_a_user_text_message():
    request = rondo.sampling.create_message("Summarise this", 100)
    assert request == {
        "method": "sampling/createMessage",
        "params": {"messages": [user(text("Summarise this"))], "maxTokens": 100},
    }
    assert rondo.sampling.create_message(["Summarise this"], 100) == request
    assert (
        rondo.sampling.create_message([{"role": "user", "content": "Summarise this"}], 100)
        == request
    )
    assert_official("CreateMessageRequest", request)
    assert kind_for(request) is SAMPLING


def test_every_option_lands_in_the_wire_params():
    request = rondo.sampling.create_message(
        [user(text("hi")), assistant([text("hello"), use("t1")]), user([result("t1")]), "and now?"],
        256,
        system_prompt="Be brief.",
        model_preferences={
            "hints": [{"name": "claude"}],
            "costPriority": 0.2,
            "speedPriority": 1,
            "intelligencePriority": 0,
        },
        stop_sequences=["END"],
        temperature=0.7,
        include_context="thisServer",
        metadata={"trace": 1, "tags": ["a"]},
        tools=[WEATHER_TOOL],
        tool_choice={"mode": "auto"},
    )
    params = request["params"]
    assert params["maxTokens"] == 256
    assert params["systemPrompt"] == "Be brief."
    assert params["modelPreferences"]["costPriority"] == 0.2
    assert params["stopSequences"] == ["END"]
    assert params["temperature"] == 0.7
    assert params["includeContext"] == "thisServer"
    assert params["metadata"] == {"trace": 1, "tags": ["a"]}
    assert params["tools"] == [WEATHER_TOOL]
    assert params["toolChoice"] == {"mode": "auto"}
    assert params["messages"][-1] == user(text("and now?"))
    assert_official("CreateMessageRequest", request)
    json.dumps(request)


def test_shorthands_for_preferences_and_tool_choice():
    one = rondo.sampling.create_message(
        "x", 5, model_preferences="sonnet", tools=[WEATHER_TOOL], tool_choice="none"
    )
    assert one["params"]["modelPreferences"] == {"hints": [{"name": "sonnet"}]}
    assert one["params"]["toolChoice"] == {"mode": "none"}
    many = rondo.sampling.create_message("x", 5, model_preferences=["sonnet", "claude"])
    assert many["params"]["modelPreferences"] == {"hints": [{"name": "sonnet"}, {"name": "claude"}]}
    assert_official("CreateMessageRequest", one)
    assert_official("CreateMessageRequest", many)


def test_every_content_block_shape_is_accepted():
    blocks = [
        text("look"),
        {"type": "image", "data": PNG, "mimeType": "image/png", "annotations": {"priority": 1}},
        {"type": "audio", "data": "", "mimeType": "audio/wav", "_meta": {"k": "v"}},
    ]
    tool_result = {
        "type": "tool_result",
        "toolUseId": "t1",
        "content": [
            text("ok"),
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "b"}},
            {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": PNG}},
        ],
        "structuredContent": {"temp": 21},
        "isError": False,
    }
    request = rondo.sampling.create_message(
        [user(blocks), assistant(use("t1")), user(tool_result)], 10, tools=[WEATHER_TOOL]
    )
    assert_official("CreateMessageRequest", request)


def test_the_builder_copies_what_it_is_given():
    messages = [user(text("hi"))]
    tools = [copy.deepcopy(WEATHER_TOOL)]
    request = rondo.sampling.create_message(messages, 10, tools=tools)
    messages[0]["content"]["text"] = "changed"
    tools[0]["name"] = "changed"
    assert request["params"]["messages"][0]["content"]["text"] == "hi"
    assert request["params"]["tools"][0]["name"] == "get_weather"


def build(messages=("hi",), max_tokens=10, **options):
    return rondo.sampling.create_message(list(messages), max_tokens, **options)


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda: build([]), "messages"),
        (lambda: rondo.sampling.create_message(3, 10), "messages"),
        (lambda: rondo.sampling.create_message({"role": "user"}, 10), "messages"),
        (lambda: build([5]), "messages[0]"),
        (lambda: build([{"role": "system", "content": text("x")}]), "messages[0].role"),
        (lambda: build([{"role": "user"}]), "messages[0].content"),
        (
            lambda: build([{"role": "user", "content": text("x"), "name": "bob"}]),
            "messages[0].name",
        ),
        (lambda: build([user({"type": "video", "url": "x"})]), "messages[0].content.type"),
        (lambda: build([user({"type": "text"})]), "messages[0].content.text"),
        (lambda: build([user({"type": "text", "text": 3})]), "messages[0].content.text"),
        (lambda: build([user([text("a"), {"text": "b"}])]), "messages[0].content[1].type"),
        (
            lambda: build(
                [user({"type": "image", "data": "not base64!", "mimeType": "image/png"})]
            ),
            "messages[0].content.data",
        ),
        (lambda: build([user({"type": "image", "data": PNG})]), "messages[0].content.mimeType"),
        (
            lambda: build([user({"type": "audio", "data": 1, "mimeType": "audio/wav"})]),
            "messages[0].content.data",
        ),
        (
            lambda: build(
                [user(text("x")), assistant({"type": "tool_use", "id": "1", "name": "t"})]
            ),
            "messages[1].content.input",
        ),
        (
            lambda: build(
                [
                    user(text("x")),
                    assistant({"type": "tool_use", "id": "", "name": "t", "input": {}}),
                ]
            ),
            "messages[1].content.id",
        ),
        (
            lambda: build(
                [
                    user(text("x")),
                    assistant({"type": "tool_use", "id": "1", "name": "t", "input": []}),
                ]
            ),
            "messages[1].content.input",
        ),
        (
            lambda: build([assistant(use("1")), user({"type": "tool_result", "toolUseId": "1"})]),
            "messages[1].content.content",
        ),
        (
            lambda: build(
                [
                    assistant(use("1")),
                    user({"type": "tool_result", "toolUseId": "1", "content": [use("2")]}),
                ]
            ),
            "messages[1].content.content[0].type",
        ),
        (
            lambda: build(
                [
                    assistant(use("1")),
                    user({"type": "tool_result", "toolUseId": "1", "content": [], "isError": "no"}),
                ]
            ),
            "messages[1].content.isError",
        ),
        (
            lambda: build([user({"type": "resource", "resource": {"uri": "file:///x"}})]),
            "messages[0].content.type",
        ),
        (
            lambda: build(
                [
                    assistant(use("1")),
                    user(
                        {
                            "type": "tool_result",
                            "toolUseId": "1",
                            "content": [
                                {
                                    "type": "resource",
                                    "resource": {"uri": "file:///x", "text": "a", "blob": PNG},
                                }
                            ],
                        }
                    ),
                ]
            ),
            "messages[1].content.content[0].resource",
        ),
        (lambda: build([user({**text("x"), "_meta": []})]), "messages[0].content._meta"),
        (lambda: build(max_tokens=0), "maxTokens"),
        (lambda: build(max_tokens=-5), "maxTokens"),
        (lambda: build(max_tokens=1.5), "maxTokens"),
        (lambda: build(max_tokens=True), "maxTokens"),
        (lambda: build(max_tokens="100"), "maxTokens"),
        (lambda: build(system_prompt=3), "systemPrompt"),
        (lambda: build(temperature=float("nan")), "temperature"),
        (lambda: build(temperature="hot"), "temperature"),
        (lambda: build(stop_sequences="END"), "stopSequences"),
        (lambda: build(stop_sequences=[""]), "stopSequences[0]"),
        (lambda: build(metadata=[1]), "metadata"),
        (lambda: build(metadata={"a": {1, 2}}), "metadata.a"),
        (lambda: build(metadata={"a": float("inf")}), "metadata.a"),
        (lambda: build(model_preferences={"costPriority": 1.5}), "modelPreferences.costPriority"),
        (
            lambda: build(model_preferences={"speedPriority": -0.1}),
            "modelPreferences.speedPriority",
        ),
        (
            lambda: build(model_preferences={"intelligencePriority": True}),
            "modelPreferences.intelligencePriority",
        ),
        (lambda: build(model_preferences={"costPriorty": 0.5}), "modelPreferences.costPriorty"),
        (
            lambda: build(model_preferences={"hints": [{"name": 3}]}),
            "modelPreferences.hints[0].name",
        ),
        (lambda: build(model_preferences={"hints": "claude"}), "modelPreferences.hints"),
        (lambda: build(model_preferences=3), "modelPreferences"),
        (lambda: build(include_context="everything"), "includeContext"),
        (lambda: build(tools=WEATHER_TOOL), "tools"),
        (lambda: build(tools=[{"name": "t"}]), "tools[0].inputSchema"),
        (lambda: build(tools=[{"inputSchema": {"type": "object"}}]), "tools[0].name"),
        (
            lambda: build(tools=[{"name": "t", "inputSchema": {"type": "array"}}]),
            "tools[0].inputSchema.type",
        ),
        (lambda: build(tools=[WEATHER_TOOL, WEATHER_TOOL]), "tools[1].name"),
        (lambda: build(tools=[{**WEATHER_TOOL, "description": 3}]), "tools[0].description"),
        (lambda: build(tools=[{**WEATHER_TOOL, "icons": [{}]}]), "tools[0].icons[0].src"),
        (lambda: build(tool_choice={"mode": "always"}), "toolChoice.mode"),
        (lambda: build(tool_choice="always"), "toolChoice.mode"),
        (lambda: build(tool_choice={"mode": "auto", "name": "x"}), "toolChoice.name"),
    ],
)
def test_malformed_requests_are_rejected_naming_the_path(call, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        call()
    assert str(info.value).startswith(path + ":"), str(info.value)


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        # a tool result with nothing to answer
        ([user(result("1"))], "messages[0]"),
        # a tool use left unanswered at the end
        ([user(text("x")), assistant(use("1"))], "messages[1]"),
        # something else slipped in before the answer
        ([assistant(use("1")), user(text("wait")), user(result("1"))], "messages[1]"),
        # results for the wrong ids, too few, too many, repeated
        ([assistant(use("1")), user(result("2"))], "messages[1]"),
        ([assistant([use("1"), use("2")]), user(result("1"))], "messages[1]"),
        ([assistant(use("1")), user([result("1"), result("2")])], "messages[1]"),
        ([assistant(use("1")), user([result("1"), result("1")])], "messages[1]"),
        # results mixed with other content, or from the assistant
        ([assistant(use("1")), user([result("1"), text("also")])], "messages[1]"),
        ([assistant(use("1")), assistant(result("1"))], "messages[1]"),
        # tool uses from the user, duplicate ids
        ([user(use("1")), user(result("1"))], "messages[0]"),
        ([assistant([use("1"), use("1")]), user([result("1"), result("1")])], "messages[0]"),
    ],
)
def test_tool_uses_must_be_answered_by_the_next_message(messages, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        rondo.sampling.create_message(messages, 10, tools=[WEATHER_TOOL])
    assert str(info.value).startswith(path + ":"), str(info.value)


def test_a_multi_round_tool_loop_is_accepted():
    messages = [
        user(text("Weather in Paris and Rome?")),
        assistant([text("Checking."), use("a"), use("b")]),
        user([result("b"), result("a")]),
        assistant(use("c")),
        user(result("c")),
    ]
    request = rondo.sampling.create_message(messages, 50, tools=[WEATHER_TOOL], tool_choice="none")
    assert_official("CreateMessageRequest", request)


def test_validate_request_is_strict_about_params():
    request = build()
    SAMPLING.validate_request(request)
    with pytest.raises(ValueError, match="^maxtokens:"):
        SAMPLING.validate_request({**request, "params": {**request["params"], "maxtokens": 3}})
    with pytest.raises(ValueError, match="^maxTokens: is required"):
        SAMPLING.validate_request(
            {"method": request["method"], "params": {"messages": request["params"]["messages"]}}
        )
    with pytest.raises(ValueError, match="^messages: is required"):
        SAMPLING.validate_request({"method": request["method"], "params": {"maxTokens": 3}})
    with pytest.raises(ValueError, match="^params:"):
        SAMPLING.validate_request({"method": request["method"], "params": []})


# -- capabilities --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "need"),
    [
        ({}, {"sampling": {}}),
        ({"include_context": "none"}, {"sampling": {}}),
        ({"tools": [WEATHER_TOOL]}, {"sampling": {"tools": {}}}),
        ({"tool_choice": "auto"}, {"sampling": {"tools": {}}}),
        ({"include_context": "thisServer"}, {"sampling": {"context": {}}}),
        ({"include_context": "allServers"}, {"sampling": {"context": {}}}),
        (
            {"tools": [WEATHER_TOOL], "include_context": "allServers"},
            {"sampling": {"tools": {}, "context": {}}},
        ),
    ],
)
def test_required_capability_follows_the_options(options, need):
    request = build(**options)
    assert SAMPLING.required_capability(request) == need
    assert SAMPLING.is_supported(request, need)
    assert SAMPLING.is_supported(request, {"sampling": {"tools": {}, "context": {}}, "roots": {}})
    assert not SAMPLING.is_supported(request, {})
    assert SAMPLING.missing_capability(request, {}) == need
    assert SAMPLING.missing_capability(request, None) == need


def test_only_the_missing_part_is_named():
    tools = build(tools=[WEATHER_TOOL], include_context="thisServer")
    assert SAMPLING.missing_capability(tools, {"sampling": {}}) == {
        "sampling": {"tools": {}, "context": {}}
    }
    assert SAMPLING.missing_capability(tools, {"sampling": {"tools": {}}}) == {
        "sampling": {"context": {}}
    }
    assert SAMPLING.missing_capability(tools, {"sampling": {"context": {}}}) == {
        "sampling": {"tools": {}}
    }
    assert SAMPLING.missing_capability(tools, {"sampling": {"tools": {}, "context": {}}}) == {}
    assert SAMPLING.missing_capability(tools, {"sampling": {"tools": True}}) == {
        "sampling": {"tools": {}, "context": {}}
    }


# -- answers -------------------------------------------------------------------------------------------


ANSWERS = [
    {
        "role": "assistant",
        "content": text("It is sunny."),
        "model": "claude-x",
        "stopReason": "endTurn",
    },
    {
        "role": "assistant",
        "content": [text("Let me check."), use("t9")],
        "model": "m",
        "stopReason": "toolUse",
    },
    {
        "role": "assistant",
        "content": {"type": "image", "data": PNG, "mimeType": "image/png"},
        "model": "m",
    },
    {"role": "user", "content": [], "model": "m", "_meta": {"com.example/cost": 3}},
    {"role": "assistant", "content": text("x"), "model": "m", "stopReason": "provider_specific"},
]


@pytest.mark.parametrize("answer", ANSWERS)
def test_a_create_message_result_becomes_a_sampling_result(answer):
    assert_official("CreateMessageResult", answer)
    request = build()
    value = SAMPLING.read_answer(request, answer)
    assert isinstance(value, SamplingResult)
    assert value.role == answer["role"]
    assert value.content == answer["content"]
    assert value.model == answer["model"]
    assert value.stop_reason == answer.get("stopReason")
    assert value.to_dict() == answer
    assert SAMPLING.read_answer(request, value.to_dict()) == value


def test_result_conveniences():
    value = SAMPLING.read_answer(build(), ANSWERS[1])
    assert value.text == "Let me check."
    assert value.tool_uses == [use("t9")]
    assert value.blocks == ANSWERS[1]["content"]
    single = SAMPLING.read_answer(build(), ANSWERS[0])
    assert single.blocks == [text("It is sunny.")]
    assert single.text == "It is sunny." and single.tool_uses == []


def test_answers_are_copied_not_aliased():
    answer = copy.deepcopy(ANSWERS[0])
    value = SAMPLING.read_answer(build(), answer)
    answer["content"]["text"] = "changed"
    assert value.text == "It is sunny."


def test_unknown_answer_keys_are_ignored():
    value = SAMPLING.read_answer(build(), {**ANSWERS[0], "usage": {"tokens": 5}})
    assert value.to_dict() == ANSWERS[0]


@pytest.mark.parametrize(
    ("answer", "path"),
    [
        ({"content": text("x"), "model": "m"}, "role"),
        ({"role": "system", "content": text("x"), "model": "m"}, "role"),
        ({"role": "assistant", "model": "m"}, "content"),
        ({"role": "assistant", "content": "plain text", "model": "m"}, "content"),
        ({"role": "assistant", "content": {"type": "text"}, "model": "m"}, "content.text"),
        (
            {
                "role": "assistant",
                "content": [text("x"), {"type": "resource_link", "uri": "a", "name": "b"}],
                "model": "m",
            },
            "content[1].type",
        ),
        ({"role": "assistant", "content": text("x")}, "model"),
        ({"role": "assistant", "content": text("x"), "model": 7}, "model"),
        ({"role": "assistant", "content": text("x"), "model": "m", "stopReason": 1}, "stopReason"),
        ({"role": "assistant", "content": text("x"), "model": "m", "_meta": "x"}, "_meta"),
    ],
)
def test_malformed_answers_are_rejected(answer, path):
    with pytest.raises(ValueError, match="^" + re.escape(path + ":")) as info:
        SAMPLING.read_answer(build(), answer)
    assert str(info.value).startswith(path + ":"), str(info.value)


@pytest.mark.parametrize("answer", [None, "sunny", 3, [ANSWERS[0]], True])
def test_non_object_answers_are_rejected(answer):
    with pytest.raises(ValueError, match="answer must be an object"):
        SAMPLING.read_answer(build(), answer)
