"""What a client's handlers receive: the typed form of an input request.

Only the client needs these, so a server never builds their classes (cold start).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec


class ElicitRequest(msgspec.Struct, kw_only=True, frozen=True):
    """What a client's `on_elicit` handler receives: a form (`requested_schema`) or a URL."""

    mode: str
    message: str
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def defaults(self) -> dict[str, Any]:
        """The schema's default values (what a form would show pre-filled)."""
        return form_defaults(self.requested_schema or {})


def form_defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`{field: default}` for every property of a form schema that declares a default."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {k: p["default"] for k, p in props.items() if isinstance(p, Mapping) and "default" in p}


class SampleRequest(msgspec.Struct, kw_only=True, frozen=True):
    """What a client's `on_sample` handler receives: `messages` for its model, capped at
    `max_tokens`."""

    messages: list[dict[str, Any]]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    model_preferences: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: dict[str, Any] | None = None
    include_context: str | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)
