"""Middleware in the kernel: the read-only `RequestView` middleware sees, and `run_chain`, which
runs a chain around the handler (`Core.dispatch`, `Core.invoke`, the legacy dialect). See
`rondo.server.middleware` for what users write and `rondo.middleware` for the public names."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..server.middleware import Middleware
from ..wire.errors import internal_error

if TYPE_CHECKING:
    from ..server.request import Request


def freeze(value: Any) -> Any:
    """A read-only deep copy of a JSON value: objects become mapping proxies, arrays tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


class RequestView:
    """One request as middleware sees it: read-only, except `extras`.

    `id`, `method`, `params` (frozen), `arguments` (tool/prompt arguments, frozen, or None),
    `name` (the tool or prompt name, or the resource URI), `component` (set for per-component
    middleware), `era`, `protocol_version`, `client_capabilities` and `client_info` (frozen,
    as the client declared them), `auth` (from the transport), `principal` (the server's
    `StatePolicy` principal of this request, None when anonymous), `is_retry` (the request
    carries `inputResponses` or `requestState`), and `extras`, a dict the handler reads as
    `ctx.extras`.
    """

    __slots__ = ("id", "method", "params", "era", "protocol_version", "client_capabilities",
                 "client_info", "auth", "component", "extras", "_server")
    id: Any
    method: str
    params: Mapping[str, Any]
    era: str
    protocol_version: str
    client_capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None
    auth: Any
    component: str | None
    extras: dict[str, Any]
    _server: Any

    def __init__(self, req: Request, server: Any, component: str | None = None) -> None:
        # Frozen copies, not the framework's objects: the core never takes anything back from
        # the view except `extras`, so nothing written through it changes what it decides on.
        put = object.__setattr__
        env = req.env
        put(self, "id", req.id)
        put(self, "method", req.method)
        put(self, "params", freeze(req.params))
        put(self, "era", str(req.dialect.era))
        put(self, "protocol_version", env.version)
        put(self, "client_capabilities", freeze(env.capabilities))
        put(self, "client_info", None if env.client_info is None else freeze(env.client_info))
        put(self, "auth", req.auth)
        put(self, "component", component)
        if req.extras is None:
            req.extras = {}
        put(self, "extras", req.extras)
        put(self, "_server", server)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"RequestView.{name} is read-only (only the extras dict is writable)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"RequestView.{name} is read-only")

    @property
    def arguments(self) -> Mapping[str, Any] | None:
        args = self.params.get("arguments")
        return args if isinstance(args, Mapping) else None

    @property
    def name(self) -> str | None:
        value = self.params.get("uri" if self.method == "resources/read" else "name")
        return value if isinstance(value, str) else None

    @property
    def is_retry(self) -> bool:
        return "inputResponses" in self.params or "requestState" in self.params

    # What a StatePolicy principal function reads (state/facts.py's RequestFacts).
    @property
    def request_method(self) -> str:
        return self.method

    @property
    def request_params(self) -> Mapping[str, Any]:
        return self.params

    @property
    def server_name(self) -> str:
        return str(self._server.name)

    @property
    def principal(self) -> str | None:
        policy = self._server.state_policy
        if policy is not None:
            return policy.principal_of(self)  # type: ignore[no-any-return]
        # No state boundary: the verified token's binding when rondo.auth authenticated it.
        binding = getattr(self.auth, "binding", None)
        return binding if isinstance(binding, str) else None

    def __repr__(self) -> str:
        return f"<RequestView {self.method} id={self.id!r} {self.era}>"


async def run_chain(
    chain: tuple[Middleware, ...], view: RequestView, endpoint: Callable[[], Awaitable[Any]]
) -> Any:
    """Run `chain` around `endpoint`, outermost first. Each link must pass on the view it got."""

    async def step(index: int, passed: Any) -> Any:
        if passed is not view:
            raise internal_error("middleware must pass on the request it was given to call_next")
        if index == len(chain):
            return await endpoint()

        def call_next(request: Any = view) -> Awaitable[Any]:
            return step(index + 1, request)

        return await chain[index](view, call_next)

    return await step(0, view)


__all__ = ["RequestView", "freeze", "run_chain"]
