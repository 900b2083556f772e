"""The client's answers to input requests, driven by the kinds table.

One `Handlers` object serves both eras: on 2026-07-28 it answers the `inputRequests` of an
input_required result; on 2025-11-25 it answers the server's `elicitation/create`,
`sampling/createMessage` and `roots/list` requests. Each kind (`rondo.kinds`) names the
handler option that answers it, the typed request that handler receives and the capability
installing it declares, so nothing here knows a kind by name. Capabilities are declared only
for the handlers installed, and every answer is shape-checked before it leaves.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

from rondo.client.loop import NoHandler, Unanswerable
from rondo.kinds import KINDS, NotDeclared, kind_for, merge_capabilities
from rondo.kinds.requests import ElicitRequest, SampleRequest, form_defaults

Json = dict[str, Any]

ElicitHandler = Callable[[ElicitRequest], Any]
SampleHandler = Callable[[SampleRequest], Any]
RootsHandler = Callable[[], Any]

__all__ = ["ElicitRequest", "Handlers", "SampleRequest", "form_defaults"]


class Handlers:
    """The installed handlers, the capabilities they imply, and how to answer with them.

    `handlers` maps a kind's handler option name (`"on_elicit"`, ...) to a callable (or, for
    roots, a fixed collection); the named keywords are the same thing spelled out.
    """

    def __init__(
        self,
        *,
        on_elicit: ElicitHandler | None = None,
        on_sample: SampleHandler | None = None,
        on_roots: RootsHandler | Collection[Any] | None = None,
        elicit_modes: Collection[str] = ("form",),
        sampling_tools: bool = False,
        extra_capabilities: Mapping[str, Any] | None = None,
        handlers: Mapping[str, Any] | None = None,
    ) -> None:
        unknown = set(elicit_modes) - {"form", "url"}
        if unknown:
            raise ValueError(f"unknown elicitation modes: {sorted(unknown)}")
        installed = {"on_elicit": on_elicit, "on_sample": on_sample, "on_roots": on_roots}
        installed.update(handlers or {})
        known = {kind.handler for kind in KINDS}
        stray = set(installed) - known
        if stray:
            raise ValueError(f"no input kind is answered by {sorted(stray)}")
        self.installed = {name: h for name, h in installed.items() if h is not None}
        self.options: Json = {"elicit_modes": frozenset(elicit_modes),
                              "sampling_tools": sampling_tools}
        self.extra_capabilities = dict(extra_capabilities or {})
        self._caps = self._declare()

    def _declare(self) -> Json:
        caps: Json = merge_capabilities({}, self.extra_capabilities)
        for kind in KINDS:
            if kind.handler in self.installed:
                merge_capabilities(caps, kind.declared_capability(self.options))
        return caps

    def capabilities(self) -> Json:
        """ClientCapabilities naming exactly what the installed handlers can answer (plus what
        the caller declared it answers itself, in manual mode)."""
        return merge_capabilities({}, self._caps)  # a copy: callers may keep or change it

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
        label = f"input request {key!r}" if key else "server request"
        try:
            kind = kind_for(request)
        except ValueError as exc:
            raise NoHandler(f"{label}: {exc}") from None
        if strict:
            try:
                kind.validate_request(request)
            except ValueError as exc:
                raise Unanswerable(f"{label} ({request.get('method')}) is malformed: {exc}") from None
        params = request.get("params") or {}
        handler = self.installed.get(kind.handler)
        if handler is None or not kind.declared_capability(self.options):
            raise NoHandler(f"{label} wants {kind.name}, and no {kind.handler} handler takes it")
        try:
            args = kind.handler_args(params, self.options)
        except NotDeclared as exc:
            raise NoHandler(f"{label}: {exc}") from None
        value = handler(*args) if callable(handler) else handler
        if inspect.isawaitable(value):
            value = await value
        answer: Json = kind.wire_answer(value)
        try:
            kind.read_answer(request, answer)
        except ValueError as exc:
            raise Unanswerable(f"the {kind.name} handler's answer to {label} is malformed: {exc}") from None
        return answer
