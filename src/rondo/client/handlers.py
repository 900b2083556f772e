"""The client's answers to input requests: elicitation, sampling and roots handlers.

One `Handlers` object serves both eras: on 2026-07-28 it answers the `inputRequests` of an
input_required result; on 2025-11-25 it answers the server's `elicitation/create`,
`sampling/createMessage` and `roots/list` requests. Capabilities are declared only for the
handlers installed (URL elicitation only when asked for), and every answer is shape-checked
with `rondo.kinds` before it leaves.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

import msgspec

from rondo.client.loop import NoHandler, Unanswerable

Json = dict[str, Any]


class ElicitRequest(msgspec.Struct, kw_only=True, frozen=True):
    """An elicitation the server asked for: a form (`requested_schema`) or a URL to visit."""

    mode: str
    message: str
    requested_schema: Json | None = None
    url: str | None = None
    params: Json = msgspec.field(default_factory=dict)

    @property
    def defaults(self) -> Json:
        """The schema's default values (what a form would show pre-filled)."""
        return form_defaults(self.requested_schema or {})


class SampleRequest(msgspec.Struct, kw_only=True, frozen=True):
    """A sampling request: `messages` for the client's model, capped at `max_tokens`."""

    messages: list[Json]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    model_preferences: Json | None = None
    tools: list[Json] | None = None
    tool_choice: Json | None = None
    include_context: str | None = None
    params: Json = msgspec.field(default_factory=dict)


ElicitHandler = Callable[[ElicitRequest], Any]
SampleHandler = Callable[[SampleRequest], Any]
RootsHandler = Callable[[], Any]


def form_defaults(schema: Mapping[str, Any]) -> Json:
    """`{field: default}` for every property of a form schema that declares a default."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {k: p["default"] for k, p in props.items() if isinstance(p, Mapping) and "default" in p}


async def _call(handler: Callable[..., Any], *args: Any) -> Any:
    value = handler(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


def _wire(answer: Any) -> Any:
    """A handler's return value in wire form (value types know their own)."""
    to_dict = getattr(answer, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(answer, msgspec.Struct):
        return msgspec.to_builtins(answer)
    return answer


class Handlers:
    """The installed handlers, the capabilities they imply, and how to answer with them."""

    def __init__(
        self,
        *,
        on_elicit: ElicitHandler | None = None,
        on_sample: SampleHandler | None = None,
        on_roots: RootsHandler | Collection[Any] | None = None,
        elicit_modes: Collection[str] = ("form",),
        sampling_tools: bool = False,
        extra_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        unknown = set(elicit_modes) - {"form", "url"}
        if unknown:
            raise ValueError(f"unknown elicitation modes: {sorted(unknown)}")
        self.on_elicit = on_elicit
        self.on_sample = on_sample
        self.on_roots = on_roots
        self.elicit_modes = frozenset(elicit_modes) if on_elicit else frozenset()
        self.sampling_tools = sampling_tools
        self.extra_capabilities = dict(extra_capabilities or {})

    def capabilities(self) -> Json:
        """ClientCapabilities naming exactly what the installed handlers can answer (plus what
        the caller declared it answers itself, in manual mode)."""
        from rondo.kinds import merge_capabilities

        caps: Json = merge_capabilities({}, self.extra_capabilities)
        if self.elicit_modes:
            merge_capabilities(caps, {"elicitation": {mode: {} for mode in sorted(self.elicit_modes)}})
        if self.on_sample is not None:
            merge_capabilities(caps, {"sampling": {"tools": {}} if self.sampling_tools else {}})
        if self.on_roots is not None:
            merge_capabilities(caps, {"roots": {}})
        return caps

    async def answer_all(self, requests: Mapping[str, Json]) -> dict[str, Json]:
        """Answers for every input request, under the same keys (concurrently)."""
        keys = list(requests)
        answers = await asyncio.gather(*(self.answer(requests[k], key=k) for k in keys))
        return dict(zip(keys, answers, strict=True))

    async def answer(self, request: Mapping[str, Any], *, key: str = "", strict: bool = True) -> Json:
        """One checked answer; `Unanswerable` when no handler fits or the answer is malformed.

        `strict` also checks the request itself (modern input requests); the 2025-11-25 wire
        carries extra fields such as `elicitationId`, so legacy requests skip that check.
        """
        from rondo import kinds

        label = f"input request {key!r}" if key else "server request"
        try:
            kind = kinds.kind_for(request)
        except ValueError as exc:
            raise NoHandler(f"{label}: {exc}") from None
        if strict:
            try:
                kind.validate_request(request)
            except ValueError as exc:
                raise Unanswerable(f"{label} ({request.get('method')}) is malformed: {exc}") from None
        params = request.get("params") or {}
        answer = _wire(await self._dispatch(kind.name, params, label))
        try:
            kind.read_answer(request, answer)
        except ValueError as exc:
            raise Unanswerable(f"the {kind.name} handler's answer to {label} is malformed: {exc}") from None
        return answer

    async def _dispatch(self, kind: str, params: Mapping[str, Any], label: str) -> Any:
        if kind in ("form", "url"):
            if kind not in self.elicit_modes or self.on_elicit is None:
                raise NoHandler(f"{label} wants {kind} elicitation, and no handler takes it")
            request = ElicitRequest(
                mode=kind,
                message=str(params.get("message", "")),
                requested_schema=params.get("requestedSchema") if kind == "form" else None,
                url=params.get("url") if kind == "url" else None,
                params=dict(params),
            )
            return await _call(self.on_elicit, request)
        if kind == "sampling":
            if self.on_sample is None:
                raise NoHandler(f"{label} wants sampling, and no on_sample handler is installed")
            if ("tools" in params or "toolChoice" in params) and not self.sampling_tools:
                raise NoHandler(f"{label} asks for sampling with tools, which this client did not declare")
            return await _call(self.on_sample, _sample_request(params))
        if kind == "roots":
            if self.on_roots is None:
                raise NoHandler(f"{label} wants roots, and no on_roots handler is installed")
            roots = await _call(self.on_roots) if callable(self.on_roots) else self.on_roots
            return _roots_answer(roots)
        raise Unanswerable(f"{label}: no handler for {kind}")


def _sample_request(params: Mapping[str, Any]) -> SampleRequest:
    return SampleRequest(
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
    )


def _roots_answer(roots: Any) -> Any:
    if isinstance(roots, Mapping) or hasattr(roots, "to_dict"):
        return _wire(roots)
    return {"roots": [_wire(r) if not isinstance(r, str) else {"uri": r} for r in roots]}

