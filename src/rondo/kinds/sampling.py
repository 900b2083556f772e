"""Sampling (deprecated in 2026-07-28, still scored): ask the client to run its LLM for you.

Requests are checked structurally: roles, content block shapes, tool definitions, tool choice,
model preferences, and the tool-use ordering rule (every assistant `tool_use` is answered by the
very next message, a user message of `tool_result`s only, one per id). Whether a result makes
sense for its tool is not checked. Sampled output is untrusted input: bound what you keep.
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping, Sequence
from typing import Any, cast

import msgspec

from .base import (
    Capabilities,
    Kind,
    NotDeclared,
    check_json_value,
    check_meta,
    expect_answer_object,
    expect_list,
    expect_number,
    expect_object,
    expect_params,
    expect_string,
    fail,
    join,
    json_copy,
    json_type,
    reject_unknown,
)

METHOD = "sampling/createMessage"
ROLES = ("user", "assistant")
INCLUDE_CONTEXT = ("none", "thisServer", "allServers")
TOOL_CHOICE_MODES = ("auto", "required", "none")
# Blocks a sampling message may hold, and the (tool-result) content blocks inside a tool_result.
SAMPLING_BLOCKS = frozenset({"text", "image", "audio", "tool_use", "tool_result"})
TOOL_RESULT_BLOCKS = frozenset({"text", "image", "audio", "resource_link", "resource"})

_PARAMS = frozenset(
    {
        "messages",
        "maxTokens",
        "systemPrompt",
        "temperature",
        "stopSequences",
        "metadata",
        "modelPreferences",
        "includeContext",
        "tools",
        "toolChoice",
        "_meta",
    }
)
_MESSAGE_KEYS = frozenset({"role", "content", "_meta"})
_PREFERENCE_KEYS = frozenset({"hints", "costPriority", "speedPriority", "intelligencePriority"})
_PRIORITIES = ("costPriority", "speedPriority", "intelligencePriority")


class SamplingResult(msgspec.Struct, frozen=True):
    """What the client's model said: `content` is one block or a list of blocks."""

    role: str
    content: dict[str, Any] | list[dict[str, Any]]
    model: str
    stop_reason: str | None = None
    meta: dict[str, Any] | None = None

    @property
    def blocks(self) -> list[dict[str, Any]]:
        """The content as a list of blocks, whichever way the client sent it."""
        return list(self.content) if isinstance(self.content, list) else [self.content]

    @property
    def text(self) -> str:
        """The text blocks joined (empty when the model answered with no text)."""
        return "".join(block["text"] for block in self.blocks if block.get("type") == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [block for block in self.blocks if block.get("type") == "tool_use"]

    def to_dict(self) -> dict[str, Any]:
        """The wire form (a `CreateMessageResult`); `read_answer` reads it back unchanged."""
        out: dict[str, Any] = {
            "role": self.role,
            "content": json_copy(self.content),
            "model": self.model,
        }
        if self.stop_reason is not None:
            out["stopReason"] = self.stop_reason
        if self.meta is not None:
            out["_meta"] = json_copy(self.meta)
        return out


# -- content blocks ----------------------------------------------------------------------------


def check_block(block: Any, path: str, allowed: frozenset[str] = SAMPLING_BLOCKS) -> str:
    """Check one content block's shape; return its type. Unknown extra keys are tolerated."""
    block = expect_object(block, path)
    kind = block.get("type")
    if kind not in allowed:
        raise fail(join(path, "type"), f"must be one of {', '.join(sorted(allowed))}; got {kind!r}")
    if kind == "text":
        _required_string(block, "text", path)
    elif kind in ("image", "audio"):
        _check_base64(_required_string(block, "data", path), join(path, "data"))
        _required_string(block, "mimeType", path)
    elif kind == "tool_use":
        _required_string(block, "id", path, non_empty=True)
        _required_string(block, "name", path, non_empty=True)
        if "input" not in block:
            raise fail(join(path, "input"), "is required")
        expect_object(block["input"], join(path, "input"))
        check_json_value(block["input"], join(path, "input"))
    elif kind == "tool_result":
        _required_string(block, "toolUseId", path, non_empty=True)
        if "content" not in block:
            raise fail(join(path, "content"), "is required")
        inner_path = join(path, "content")
        for index, inner in enumerate(expect_list(block["content"], inner_path)):
            check_block(inner, join(inner_path, index), TOOL_RESULT_BLOCKS)
        if "isError" in block and not isinstance(block["isError"], bool):
            raise fail(join(path, "isError"), "must be a boolean")
        if "structuredContent" in block:
            check_json_value(block["structuredContent"], join(path, "structuredContent"))
    elif kind == "resource_link":
        _required_string(block, "uri", path, non_empty=True)
        _required_string(block, "name", path)
    elif kind == "resource":
        _check_embedded(block, path)
    if "annotations" in block:
        expect_object(block["annotations"], join(path, "annotations"))
    check_meta(block, path)
    return cast(str, kind)  # one of `allowed`


def _check_embedded(block: Mapping[str, Any], path: str) -> None:
    res_path = join(path, "resource")
    if "resource" not in block:
        raise fail(res_path, "is required")
    resource = expect_object(block["resource"], res_path)
    _required_string(resource, "uri", res_path, non_empty=True)
    if ("text" in resource) == ("blob" in resource):
        raise fail(res_path, "must have exactly one of text or blob")
    if "text" in resource:
        expect_string(resource["text"], join(res_path, "text"))
    else:
        _check_base64(
            expect_string(resource["blob"], join(res_path, "blob")), join(res_path, "blob")
        )


def _required_string(
    obj: Mapping[str, Any], key: str, path: str, *, non_empty: bool = False
) -> str:
    if key not in obj:
        raise fail(join(path, key), "is required")
    return expect_string(obj[key], join(path, key), non_empty=non_empty)


def _check_base64(data: str, path: str) -> None:
    try:
        binascii.a2b_base64(data.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise fail(path, "must be base64") from None


def check_content(content: Any, path: str) -> list[str]:
    """A message's content: one block or a list of blocks. Returns the block types."""
    if isinstance(content, Mapping):
        return [check_block(content, path)]
    blocks = expect_list(content, path)
    return [check_block(block, join(path, index)) for index, block in enumerate(blocks)]


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    return [content] if isinstance(content, Mapping) else list(content)


# -- request parts -----------------------------------------------------------------------------


def check_message(message: Any, path: str) -> None:
    message = expect_object(message, path)
    reject_unknown(message, _MESSAGE_KEYS, path)
    if message.get("role") not in ROLES:
        raise fail(join(path, "role"), f"must be user or assistant; got {message.get('role')!r}")
    if "content" not in message:
        raise fail(join(path, "content"), "is required")
    check_content(message["content"], join(path, "content"))
    check_meta(message, path)


def check_conversation(messages: Sequence[Mapping[str, Any]]) -> None:
    """Tool results only answer the tool uses of the message right before, all of them."""
    pending: set[str] | None = None  # tool-use ids the next message must answer
    for index, message in enumerate(messages):
        path = join("messages", index)
        blocks = _blocks(message["content"])
        kinds = {block["type"] for block in blocks}
        if "tool_result" in kinds:
            if message["role"] != "user" or kinds != {"tool_result"}:
                raise fail(
                    path,
                    "a message with tool_result blocks must be a user message of tool results only",
                )
            answered = [block["toolUseId"] for block in blocks]
            if pending is None or set(answered) != pending or len(answered) != len(pending):
                raise fail(
                    path, "tool results must answer exactly the tool uses of the previous message"
                )
            pending = None
            continue
        if pending is not None:
            raise fail(path, "the previous message's tool uses must be answered first")
        if "tool_use" in kinds:
            if message["role"] != "assistant":
                raise fail(path, "tool_use blocks belong in assistant messages")
            ids = [block["id"] for block in blocks if block["type"] == "tool_use"]
            if len(set(ids)) != len(ids):
                raise fail(path, "tool_use ids must be unique")
            pending = set(ids)
    if pending is not None:
        raise fail(
            join("messages", len(messages) - 1), "tool uses must be followed by their tool results"
        )


def check_tool(tool: Any, path: str) -> str:
    tool = expect_object(tool, path)
    name = _required_string(tool, "name", path, non_empty=True)
    schema_path = join(path, "inputSchema")
    if "inputSchema" not in tool:
        raise fail(schema_path, "is required")
    schema = expect_object(tool["inputSchema"], schema_path)
    if schema.get("type") != "object":
        raise fail(join(schema_path, "type"), 'must be "object"')
    check_json_value(schema, schema_path)
    for key in ("description", "title"):
        if key in tool:
            expect_string(tool[key], join(path, key))
    for key in ("annotations", "outputSchema"):
        if key in tool:
            expect_object(tool[key], join(path, key))
    if "icons" in tool:
        icons_path = join(path, "icons")
        for index, icon in enumerate(expect_list(tool["icons"], icons_path)):
            _required_string(
                expect_object(icon, join(icons_path, index)), "src", join(icons_path, index)
            )
    check_meta(tool, path)
    return name


def check_model_preferences(prefs: Any, path: str) -> None:
    prefs = expect_object(prefs, path)
    reject_unknown(prefs, _PREFERENCE_KEYS, path)
    for key in _PRIORITIES:
        if key in prefs:
            value = expect_number(prefs[key], join(path, key))
            if not 0 <= value <= 1:
                raise fail(join(path, key), "must be between 0 and 1")
    if "hints" in prefs:
        hints_path = join(path, "hints")
        for index, hint in enumerate(expect_list(prefs["hints"], hints_path)):
            hint = expect_object(hint, join(hints_path, index))
            if "name" in hint:
                expect_string(hint["name"], join(join(hints_path, index), "name"))


def check_tool_choice(choice: Any, path: str) -> None:
    choice = expect_object(choice, path)
    reject_unknown(choice, frozenset({"mode"}), path)
    if "mode" in choice and choice["mode"] not in TOOL_CHOICE_MODES:
        raise fail(
            join(path, "mode"), f"must be one of auto, required, none; got {choice['mode']!r}"
        )


# -- the kind ----------------------------------------------------------------------------------


class Sampling(Kind):
    name = "sampling"
    method = METHOD
    handler = "on_sample"

    def declared_capability(self, options: Mapping[str, Any]) -> Capabilities:
        return {"sampling": {"tools": {}} if options.get("sampling_tools") else {}}

    def handler_args(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[Any, ...]:
        if ("tools" in params or "toolChoice" in params) and not options.get("sampling_tools"):
            raise NotDeclared("it asks for sampling with tools, which this client did not declare")
        from .requests import SampleRequest

        return (SampleRequest(
            messages=list(params.get("messages") or []),
            max_tokens=int(params.get("maxTokens") or 0),
            system_prompt=params.get("systemPrompt"),
            temperature=params.get("temperature"),
            stop_sequences=params.get("stopSequences"),
            model_preferences=params.get("modelPreferences"),
            tools=params.get("tools"),
            tool_choice=params.get("toolChoice"),
            include_context=params.get("includeContext"),
            params=dict(params),
        ),)

    def required_capability(self, request: Mapping[str, Any]) -> Capabilities:
        params = request.get("params")
        params = params if isinstance(params, Mapping) else {}
        need: dict[str, Any] = {}
        if "tools" in params or "toolChoice" in params:
            need["tools"] = {}
        if params.get("includeContext", "none") != "none":
            need["context"] = {}
        return {"sampling": need}

    def validate_request(self, request: Mapping[str, Any]) -> None:
        params = expect_params(request, self)
        reject_unknown(params, _PARAMS, "")
        if "messages" not in params:
            raise fail("messages", "is required")
        messages = expect_list(params["messages"], "messages")
        if not messages:
            raise fail("messages", "must hold at least one message")
        for index, message in enumerate(messages):
            check_message(message, join("messages", index))
        check_conversation(messages)
        if "maxTokens" not in params:
            raise fail("maxTokens", "is required")
        max_tokens = params["maxTokens"]
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise fail("maxTokens", "must be a positive integer")
        if "systemPrompt" in params:
            expect_string(params["systemPrompt"], "systemPrompt")
        if "temperature" in params:
            expect_number(params["temperature"], "temperature")
        if "stopSequences" in params:
            for index, stop in enumerate(expect_list(params["stopSequences"], "stopSequences")):
                expect_string(stop, join("stopSequences", index), non_empty=True)
        if "metadata" in params:
            expect_object(params["metadata"], "metadata")
            check_json_value(params["metadata"], "metadata")
        if "modelPreferences" in params:
            check_model_preferences(params["modelPreferences"], "modelPreferences")
        if "includeContext" in params and params["includeContext"] not in INCLUDE_CONTEXT:
            raise fail("includeContext", "must be one of none, thisServer, allServers")
        if "tools" in params:
            names: set[str] = set()
            for index, tool in enumerate(expect_list(params["tools"], "tools")):
                name = check_tool(tool, join("tools", index))
                if name in names:
                    raise fail(join(join("tools", index), "name"), f"repeats {name!r}")
                names.add(name)
        if "toolChoice" in params:
            check_tool_choice(params["toolChoice"], "toolChoice")
        check_meta(params, "")

    def read_answer(self, request: Mapping[str, Any], answer: Any) -> SamplingResult:
        answer = expect_answer_object(answer)
        role = answer.get("role")
        if role not in ROLES:
            raise fail("role", f"must be user or assistant; got {role!r}")
        if "content" not in answer:
            raise fail("content", "is required")
        check_content(answer["content"], "content")
        if "model" not in answer:
            raise fail("model", "is required")
        model = expect_string(answer["model"], "model")
        stop = answer.get("stopReason")
        if stop is not None:
            expect_string(stop, "stopReason")
        meta = answer.get("_meta")
        if meta is not None:
            expect_object(meta, "_meta")
        content = answer["content"]
        return SamplingResult(
            role=role,
            content=json_copy(content)
            if isinstance(content, Mapping)
            else [json_copy(b) for b in content],
            model=model,
            stop_reason=stop,
            meta=json_copy(meta) if meta is not None else None,
        )


SAMPLING = Sampling()


# -- builder -----------------------------------------------------------------------------------


def create_message(
    messages: str | Sequence[str | Mapping[str, Any]],
    max_tokens: int,
    *,
    system_prompt: str | None = None,
    model_preferences: Mapping[str, Any] | str | Sequence[str] | None = None,
    stop_sequences: Sequence[str] | None = None,
    temperature: float | None = None,
    include_context: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: Mapping[str, Any] | str | None = None,
) -> dict[str, Any]:
    """A `sampling/createMessage` input request.

    Shorthands: a plain string message is a user text message, a plain string `content` is a
    text block, `model_preferences` may be a model-name hint or a list of them, and
    `tool_choice` may be just the mode. Raises ValueError naming the offending path.
    """
    if isinstance(messages, str):
        messages = [messages]
    elif not isinstance(messages, list | tuple):
        raise fail("messages", f"must be an array or a string, got {json_type(messages)}")
    params: dict[str, Any] = {
        "messages": [_message(message) for message in messages],
        "maxTokens": max_tokens,
    }
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if model_preferences is not None:
        params["modelPreferences"] = _preferences(model_preferences)
    if stop_sequences is not None:
        params["stopSequences"] = json_copy(stop_sequences)
    if temperature is not None:
        params["temperature"] = temperature
    if include_context is not None:
        params["includeContext"] = include_context
    if metadata is not None:
        params["metadata"] = json_copy(metadata)
    if tools is not None:
        params["tools"] = json_copy(tools)
    if tool_choice is not None:
        params["toolChoice"] = (
            {"mode": tool_choice} if isinstance(tool_choice, str) else json_copy(tool_choice)
        )
    request = {"method": METHOD, "params": params}
    SAMPLING.validate_request(request)
    return request


def _message(message: Any) -> Any:
    if isinstance(message, str):
        return {"role": "user", "content": {"type": "text", "text": message}}
    if isinstance(message, Mapping):
        out = json_copy(message)
        if isinstance(out.get("content"), str):
            out["content"] = {"type": "text", "text": out["content"]}
        return out
    return message  # validation names the path


def _preferences(prefs: Any) -> Any:
    if isinstance(prefs, str):
        return {"hints": [{"name": prefs}]}
    if isinstance(prefs, list | tuple) and all(isinstance(name, str) for name in prefs):
        return {"hints": [{"name": name} for name in prefs]}
    return json_copy(prefs)
