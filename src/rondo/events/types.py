"""The events extension's declared types: an `EventType` and the checks of what a request says of
one (its subscription arguments), the error codes to choose from, and the wire's timestamps."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

from ..wire.errors import invalid_params

EXTENSION = "io.modelcontextprotocol/events"
MODES = ("poll", "push", "webhook")
# The design sketch's codes (also what OpenAI's guide uses); SEP-3415's provisional numbers are
# SEP_CODES. Neither is settled: pass `codes=` to choose.
SKETCH_CODES = {"not_found": -32011, "forbidden": -32012, "exhausted": -32013,
                "unsupported": -32014, "callback": -32015}
SEP_CODES = {"not_found": -32023, "forbidden": -32024, "exhausted": -32025,
             "unsupported": -32026, "callback": -32027}
Match = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]


def default_match(arguments: Mapping[str, Any], data: Mapping[str, Any]) -> bool:
    """An occurrence matches when every argument that names a payload field equals it."""
    return all(data[k] == v for k, v in arguments.items() if k in data)


def iso(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class EventType:
    __slots__ = ("name", "description", "delivery", "input_schema", "payload_schema", "match")

    def __init__(self, name: str, description: str, delivery: tuple[str, ...],
                 input_schema: dict[str, Any], payload_schema: dict[str, Any], match: Match) -> None:
        self.name = name
        self.description = description
        self.delivery = delivery
        self.input_schema = input_schema
        self.payload_schema = payload_schema
        self.match = match

    def wire(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "delivery": list(self.delivery),
                "inputSchema": self.input_schema, "payloadSchema": self.payload_schema}


def check_arguments(schema: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """A shallow check of subscription arguments: an object, required keys present, declared
    primitive types kept, no unknown keys when `additionalProperties` is false."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise invalid_params("arguments must be an object")
    props = schema.get("properties") or {}
    for key in schema.get("required") or ():
        if key not in arguments:
            raise invalid_params(f"arguments: {key!r} is required")
    types: dict[str, type | tuple[type, ...]] = {
        "string": str, "boolean": bool, "integer": int, "number": (int, float), "object": dict,
        "array": list}
    for key, value in arguments.items():
        spec = props.get(key)
        if spec is None:
            if schema.get("additionalProperties") is False:
                raise invalid_params(f"arguments: {key!r} is not allowed")
            continue
        kind = spec.get("type") if isinstance(spec, dict) else None
        expected = types.get(kind) if isinstance(kind, str) else None
        if expected is not None and (not isinstance(value, expected) or
                                     (isinstance(value, bool) and kind != "boolean")):
            raise invalid_params(f"arguments: {key!r} must be {kind}")
    return arguments
