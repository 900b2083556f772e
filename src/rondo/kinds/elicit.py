"""Elicitation: ask the user through a form (`form`) or send them to a URL (`url`).

Both modes share the method `elicitation/create` and are told apart by `params.mode`; a missing
mode means form. An answer is `{"action": "accept"|"decline"|"cancel", "content"?: {...}}`, read
into an `ElicitResult`. For URL mode, `accept` means the user agreed to open the page, not that
whatever happens there has finished: check that yourself on the retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

import msgspec

from .base import (
    Capabilities,
    Kind,
    check_meta,
    expect_answer_object,
    expect_params,
    expect_string,
    fail,
    json_copy,
    json_type,
    reject_unknown,
)
from .formschema import check_content, check_requested_schema, is_uri

METHOD = "elicitation/create"
ACTIONS = ("accept", "decline", "cancel")

T = TypeVar("T")


class ElicitResult(msgspec.Struct, frozen=True):
    """The user's answer to an elicitation.

    `content` is the submitted form data (only the requested fields, checked against the
    schema) when a form was accepted, `None` otherwise.
    """

    action: str
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    @property
    def declined(self) -> bool:
        return self.action == "decline"

    @property
    def cancelled(self) -> bool:
        return self.action == "cancel"

    def to_dict(self) -> dict[str, Any]:
        """The wire form (an `ElicitResult` object); `read_answer` reads it back unchanged."""
        out: dict[str, Any] = {"action": self.action}
        if self.content is not None:
            out["content"] = json_copy(self.content)
        return out

    def content_as(self, cls: type[T]) -> T:
        """The accepted content converted to `cls` (e.g. the dataclass the form was built from)."""
        if self.content is None:
            raise ValueError(f"elicitation was not accepted (action={self.action!r})")
        return msgspec.convert(self.content, cls)


def _read_action(answer: Any) -> tuple[Mapping[str, Any], str]:
    if type(answer) is not dict:
        answer = expect_answer_object(answer)
    if "action" not in answer:
        raise fail("action", "is required")
    action = answer["action"]
    if action not in ACTIONS:
        raise fail("action", f"must be one of accept, decline, cancel; got {action!r}")
    if "_meta" in answer:
        check_meta(answer, "")
    return answer, action


def _mode(request: Mapping[str, Any]) -> Any:
    params = request.get("params")
    if type(params) is dict or isinstance(params, Mapping):
        return params.get("mode", "form")
    return "form"


class _Elicitation(Kind):
    method = METHOD
    handler = "on_elicit"

    def declared_capability(self, options: Mapping[str, Any]) -> Capabilities:
        modes = options.get("elicit_modes", ("form",))
        return {"elicitation": {self.name: {}}} if self.name in modes else {}

    def handler_args(self, params: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[Any, ...]:
        from .requests import ElicitRequest

        return (ElicitRequest(
            mode=self.name,
            message=str(params.get("message", "")),
            requested_schema=params.get("requestedSchema") if self.name == "form" else None,
            url=params.get("url") if self.name == "url" else None,
            params=dict(params),
        ),)


class FormElicitation(_Elicitation):
    name = "form"
    _PARAMS = frozenset({"mode", "message", "requestedSchema", "_meta"})

    def matches(self, request: Mapping[str, Any]) -> bool:
        return request.get("method") == METHOD and _mode(request) == "form"

    def required_capability(self, request: Mapping[str, Any]) -> Capabilities:
        return {"elicitation": {"form": {}}}

    def missing_capability(
        self, request: Mapping[str, Any], client_caps: Mapping[str, Any] | None
    ) -> Capabilities:
        declared = (
            client_caps.get("elicitation")
            if type(client_caps) is dict or isinstance(client_caps, Mapping) else None
        )
        # `elicitation: {}` (no mode named) is the older spelling of form support.
        if (type(declared) is dict or isinstance(declared, Mapping)) and (
            type(declared.get("form")) is dict
            or isinstance(declared.get("form"), Mapping)
            or ("form" not in declared and "url" not in declared)
        ):
            return {}
        return {"elicitation": {"form": {}}}

    def validate_request(self, request: Mapping[str, Any]) -> None:
        params = expect_params(request, self)
        reject_unknown(params, self._PARAMS, "")
        if params.get("mode", "form") != "form":
            raise fail("mode", 'must be "form"')
        _check_message(params)
        if "requestedSchema" not in params:
            raise fail("requestedSchema", "is required")
        check_requested_schema(params["requestedSchema"])
        check_meta(params, "")

    def read_answer(self, request: Mapping[str, Any], answer: Any) -> ElicitResult:
        answer, action = _read_action(answer)
        if action != "accept":
            return ElicitResult(action)
        content = answer.get("content")
        params = request.get("params")
        schema: Any = (
            params.get("requestedSchema")
            if type(params) is dict or isinstance(params, Mapping) else None
        )
        try:
            return ElicitResult(action, check_content(schema, {} if content is None else content))
        except (KeyError, TypeError, AttributeError, IndexError):
            # `request` is meant to be valid already (validate_request); if it was not, say
            # what is wrong with it rather than leak a crash.
            check_requested_schema(schema)
            raise fail("requestedSchema", "cannot be used to read answers") from None


class UrlElicitation(_Elicitation):
    name = "url"
    _PARAMS = frozenset({"mode", "message", "url", "_meta"})

    def matches(self, request: Mapping[str, Any]) -> bool:
        return request.get("method") == METHOD and _mode(request) == "url"

    def required_capability(self, request: Mapping[str, Any]) -> Capabilities:
        return {"elicitation": {"url": {}}}

    def validate_request(self, request: Mapping[str, Any]) -> None:
        params = expect_params(request, self)
        reject_unknown(params, self._PARAMS, "")
        if params.get("mode") != "url":
            raise fail("mode", 'must be "url"')
        _check_message(params)
        if "url" not in params:
            raise fail("url", "is required")
        check_url(params["url"], "url")
        check_meta(params, "")

    def read_answer(self, request: Mapping[str, Any], answer: Any) -> ElicitResult:
        # Content has no meaning for URL mode: the data went to the page, not to us.
        _, action = _read_action(answer)
        return ElicitResult(action)


FORM = FormElicitation()
URL = UrlElicitation()


def _check_message(params: Mapping[str, Any]) -> None:
    if "message" not in params:
        raise fail("message", "is required")
    expect_string(params["message"], "message", non_empty=True)


def check_url(value: Any, path: str) -> str:
    """An http(s) URL with a host and no user info: all a URL elicitation may point at."""
    expect_string(value, path, non_empty=True)
    if not value.isascii():
        raise fail(path, "must be ASCII (percent-encode the path, IDNA-encode the host)")
    if not is_uri(value):
        raise fail(path, "is not a valid URI")
    from urllib.parse import urlsplit  # imported on use: most servers never build URL requests

    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https"):
        raise fail(path, f"must use http or https, not {parts.scheme!r}")
    if "@" in parts.netloc:
        raise fail(path, "must not carry user info (credentials) before the host")
    if not parts.hostname:
        raise fail(path, "must have a host")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise fail(path, "has an invalid port") from None
    return cast(str, value)  # expect_string checked it


# -- builders ----------------------------------------------------------------------------------


def form(message: str, schema: Mapping[str, Any] | type) -> dict[str, Any]:
    """An `elicitation/create` form request asking the user to fill in `schema`.

    `schema` is the restricted flat schema dict, or a dataclass / TypedDict / msgspec Struct of
    primitives (see `rondo.kinds.shorthand`). Raises ValueError naming the offending path.
    """
    if isinstance(schema, type):
        from .shorthand import is_schema_class, schema_from_class

        if not is_schema_class(schema):
            raise fail(
                "requestedSchema", "a class must be a dataclass, TypedDict or msgspec Struct"
            )
        requested = schema_from_class(schema)
    elif isinstance(schema, Mapping):
        requested = json_copy(schema)
    else:
        raise fail("requestedSchema", f"must be an object or a class, got {json_type(schema)}")
    request = {
        "method": METHOD,
        "params": {"mode": "form", "message": message, "requestedSchema": requested},
    }
    FORM.validate_request(request)
    return request


def url(message: str, url: str) -> dict[str, Any]:
    """An `elicitation/create` URL request: send the user to `url` (http or https only)."""
    request = {"method": METHOD, "params": {"mode": "url", "message": message, "url": url}}
    URL.validate_request(request)
    return request
