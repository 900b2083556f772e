"""`from_openapi`: a `rondo.Server` whose tools (and, by rule, resources) call an HTTP API."""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import httpx

import rondo
from rondo import Context, ToolError
from rondo.server import Wrap

from . import confirm, document
from .call import Limits, result, send
from .errors import OpenAPIError, OperationSkipped, Unsupported
from .naming import Names, clean, default_name
from .operations import METHODS, Operation, Plan, read, translate
from .request import prepare
from .routes import UNSAFE_METHODS, Route, choose
from .schemas import Translator

AuthHeaders = Callable[[Context], "Mapping[str, str] | Awaitable[Mapping[str, str]]"]
Customize = Callable[[Operation], "Operation | None"]
_TEMPLATE_VAR = re.compile(r"^[A-Za-z0-9_]+$")
_HINTS: dict[str, Any] = {"ctx": Context, "arguments": Any, "return": Any}


def from_openapi(
    source: Any,
    client: httpx.AsyncClient,
    *,
    name: str | None = None,
    base_url: str | None = None,
    routes: Iterable[Route] = (),
    customize: Customize | None = None,
    unconfirmed: str = "refuse",
    auth_headers: AuthHeaders | None = None,
    timeout: float = 30.0,
    max_response_bytes: int = 10 * 1024 * 1024,
    max_document_bytes: int = document.MAX_DOCUMENT_BYTES,
    server: rondo.Server | None = None,
    resource_scheme: str = "openapi",
    lazy: bool = True,
    **server_options: Any,
) -> rondo.Server:
    """A server with one tool per operation of `source` (a dict, a JSON file path or an http(s)
    URL fetched once), calling the API through `client` (its base URL, auth and transport).

    `routes` choose what each operation becomes (first match wins; default: a tool);
    `customize(op)` may rename, re-describe or re-kind an operation, or return None to hide it.
    POST, PUT, PATCH and DELETE ask the user to confirm the exact request first (override per
    `Route(confirm=...)` or in `customize`); a client that cannot be asked is refused with a
    tool error, or, with `unconfirmed="run"`, the call runs unasked. `auth_headers(ctx)` gives
    per-call headers (say, an exchanged token for `ctx.auth`); the MCP client's own token is
    never forwarded.

    Building reads the document's outline only (names, methods, paths, parameters, bodies);
    each tool's schemas are translated when first needed: every listed tool's on the first
    `tools/list`, one tool's on its first call. `lazy=False` translates them all now.
    """
    if unconfirmed not in confirm.UNCONFIRMED:
        raise ValueError(f"unconfirmed must be one of {confirm.UNCONFIRMED}, got {unconfirmed!r}")
    if not isinstance(client, httpx.AsyncClient):
        raise TypeError("client must be an httpx.AsyncClient")
    limits = Limits(timeout, max_response_bytes)
    doc = document.load(source, max_bytes=max_document_bytes)
    base = _base_url(doc, client, base_url)
    routes = tuple(routes)
    tr = Translator(doc)
    schemas = _Schemas(tr) if lazy else None
    if server is None:
        title = doc.get("info", {}).get("title") if isinstance(doc.get("info"), dict) else None
        server = rondo.Server(name or clean(str(title or "openapi")), **server_options)
    elif server_options:
        raise TypeError("server options go to rondo.Server; pass them there when giving server=")
    if schemas is not None:  # a wrap of tools/list: tools/call keeps the express lane
        schemas.server = server
        server.extension(schemas)
    names = Names()
    uri_base = f"{resource_scheme}://{clean(server.name)}"
    for path, item in doc.get("paths", {}).items():
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            op_doc = item.get(method)
            if not isinstance(op_doc, dict):
                continue
            upper = method.upper()
            raw_tags = op_doc.get("tags")
            tags = [t for t in raw_tags if isinstance(t, str)] if isinstance(raw_tags, list) else []
            route = choose(routes, upper, path, tags)
            if route.kind == "exclude":
                continue
            try:
                op, plan = read(doc, tr, path, method, item, op_doc,
                                default_name(op_doc.get("operationId"), method, path))
                if schemas is None:
                    op.input_schema, op.output_schema = translate(tr, plan)
                else:  # filled in place on first need (the server emits them verbatim)
                    op.input_schema = {"type": "object"}
                    op.output_schema = None if plan.output is None else {}
            except _MALFORMED as exc:
                warnings.warn(f"{upper} {path} skipped: {_why(exc)}", OperationSkipped,
                              stacklevel=2)
                continue
            op.kind = route.kind
            op.confirm = upper in UNSAFE_METHODS if route.confirm is None else route.confirm
            if customize is not None:
                changed = customize(op)
                if changed is None:
                    continue
                op = changed
            if op.kind == "exclude":
                continue
            if op.kind in ("resource", "template") and not _readable(op):
                warnings.warn(f"{upper} {path} served as a tool: a {op.kind} must be a GET "
                              "whose only arguments are path variables", OperationSkipped,
                              stacklevel=2)
                op.kind = "tool"
            op.name = names.claim(clean(op.name))
            caller = _Caller(op, client, base, limits, auth_headers, unconfirmed)
            if op.kind == "tool":
                call = _add_tool(server, op, caller)
                if schemas is not None:
                    caller.schemas = schemas
                    schemas.pending[op.name] = (op, plan, call)
            else:
                _add_resource(server, op, caller, uri_base)
    return server


_MALFORMED = (Unsupported, TypeError, AttributeError, KeyError, IndexError, ValueError)


def _why(exc: Exception) -> str:
    if isinstance(exc, Unsupported):
        return str(exc)
    # A shape the document's schema forbids (a list where an object belongs...): this operation
    # is malformed, the rest of the document may be fine.
    return f"malformed ({type(exc).__name__}: {str(exc)[:200]})"


_BUILDS = itertools.count(1)


class _Schemas:
    """The tools whose schemas are not translated yet: all of them on the first `tools/list`
    (a `Wrap` of that row, installed as an extension that advertises nothing: middleware would
    turn the express lane off for every call), one on its first call. An operation whose
    schemas cannot be translated is then left out as it would have been at build: a warning,
    the tool removed."""

    def __init__(self, tr: Translator) -> None:
        self.name = f"dev.rondo/openapi-schemas-{next(_BUILDS)}"  # one per build into a server
        self.tr: Translator | None = tr  # holds the document: let go once nothing is pending
        self.server: rondo.Server | None = None
        self.pending: dict[str, tuple[Operation, Plan, Callable[..., Any]]] = {}
        self.broken: dict[str, str] = {}  # tool name -> why it was left out

    def ensure(self, name: str) -> str | None:
        """Translate tool `name`'s schemas if they are not yet; the reason it is broken, or None."""
        entry = self.pending.pop(name, None)
        if entry is None:
            return self.broken.get(name)
        op, plan, call = entry
        tr = self.tr
        assert tr is not None  # only None once nothing is pending
        if not self.pending:
            self.tr = None  # the last one: the document is no longer needed
        try:
            given, output = translate(tr, plan)
        except _MALFORMED as exc:
            reason = self.broken[name] = _why(exc)
            server = self.server
            if server is not None and getattr(server.tools.get(name), "fn", None) is call:
                server.remove_tool(name)
            # Last: under `-W error` the warning raises, and the server is already consistent.
            warnings.warn(f"{op.method} {op.path} skipped: {reason}", OperationSkipped,
                          stacklevel=2)
            return reason
        op.input_schema.clear()
        op.input_schema.update(given)
        if op.output_schema is not None:  # promised at build: an untranslatable one says nothing
            op.output_schema.update(output or {})
        return None

    def ensure_all(self) -> None:
        for name in list(self.pending):
            self.ensure(name)

    def methods(self) -> tuple[()]:
        return ()

    def capability(self, server: Any) -> None:
        return None

    def wraps(self) -> list[Wrap]:
        return [Wrap("tools/list", self.listing)]

    async def listing(self, core: Any, request: Any,
                      call_next: Callable[[Any, Any], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        if self.pending:
            self.ensure_all()
        return await call_next(core, request)


def _base_url(doc: dict[str, Any], client: httpx.AsyncClient, given: str | None) -> httpx.URL:
    if given is not None:
        url = httpx.URL(given)
    elif str(client.base_url).strip("/"):
        url = client.base_url
    else:
        servers = doc.get("servers") or []
        first = servers[0] if servers and isinstance(servers[0], dict) else {}
        raw = first.get("url")
        if not isinstance(raw, str):
            raise OpenAPIError("no base URL: give base_url=, a client with a base_url, or a "
                               "document with servers")
        for var, spec in (first.get("variables") or {}).items():
            if isinstance(spec, dict) and "default" in spec:
                raw = raw.replace("{" + var + "}", str(spec["default"]))
        url = httpx.URL(raw)
    if url.scheme not in ("http", "https") or not url.host:
        raise OpenAPIError(f"the API base URL must be an absolute http(s) URL, got {str(url)!r}")
    return url


def _readable(op: Operation) -> bool:
    if op.method != "GET" or op.body is not None:
        return False
    if any(p.location != "path" and p.required for p in op.params):
        return False
    path_params = [p for p in op.params if p.location == "path"]
    if op.kind == "resource":
        return not path_params
    return bool(path_params) and all(_TEMPLATE_VAR.match(p.name) and p.arg == p.name
                                     and p.style == "simple" for p in path_params)


class _Caller:
    """Runs one operation: prepare, confirm if needed, send, shape the answer."""

    __slots__ = ("op", "client", "base", "limits", "auth_headers", "unconfirmed", "schemas")

    def __init__(self, op: Operation, client: httpx.AsyncClient, base: httpx.URL, limits: Limits,
                 auth_headers: AuthHeaders | None, unconfirmed: str) -> None:
        self.op = op
        self.client = client
        self.base = base
        self.limits = limits
        self.auth_headers = auth_headers
        self.unconfirmed = unconfirmed
        self.schemas: _Schemas | None = None

    async def __call__(self, ctx: Context, arguments: dict[str, Any]) -> Any:
        op = self.op
        if self.schemas is not None:
            broken = self.schemas.ensure(op.name)
            if broken is not None:
                raise ToolError(f"{op.name} is not served: {broken}")
        try:
            prepared = prepare(op, arguments, self.base)
        except ValueError as exc:
            raise ToolError(f"{op.name}: {exc}") from None
        if op.confirm:
            asking = confirm.check(ctx, prepared, self.unconfirmed)
            if asking is not None:
                return asking
        extra: dict[str, str] = {}
        if self.auth_headers is not None:
            given = self.auth_headers(ctx)
            if inspect.isawaitable(given):
                given = await given
            extra = {str(k).lower(): str(v) for k, v in dict(given).items()}
        response, body, secrets = await send(self.client, prepared, extra, self.limits)
        return result(op, response, body, secrets)


def _annotations(op: Operation) -> dict[str, Any]:
    hints: dict[str, Any] = {}
    if op.title:
        hints["title"] = op.title
    safe = op.method in ("GET", "HEAD", "OPTIONS")
    hints["readOnlyHint"] = safe
    if not safe:
        hints["destructiveHint"] = op.method == "DELETE"
    hints["idempotentHint"] = op.method in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE")
    hints["openWorldHint"] = True
    return hints


@functools.cache
def _signature() -> inspect.Signature:
    """Every tool function's signature (the same shape): read once, not once per tool."""
    async def call(ctx: Context, **arguments: Any) -> Any: ...

    call.__annotations__ = _HINTS
    return inspect.signature(call)


def _add_tool(server: rondo.Server, op: Operation, caller: _Caller) -> Callable[..., Any]:
    async def call(ctx: Context, **arguments: Any) -> Any:
        return await caller(ctx, arguments)

    call.__annotations__ = _HINTS  # objects, not strings: nothing to evaluate per tool
    call.__signature__ = _signature()  # type: ignore[attr-defined]  # one for every tool

    server.tool(
        name=op.name,
        description=op.description or f"{op.method} {op.path}",
        input_schema=op.input_schema,
        output_schema=op.output_schema,
        annotations=_annotations(op),
    )(call)
    return call


def _add_resource(server: rondo.Server, op: Operation, caller: _Caller, uri_base: str) -> None:
    from rondo import McpError

    async def read_it(ctx: Context, **variables: Any) -> str:
        try:
            value = await caller(ctx, variables)
        except ToolError as exc:  # 404: the resource does not exist (-32602 in 2026-07-28)
            code = -32602 if getattr(exc, "status", None) == 404 else -32603
            raise McpError(code, str(exc)) from None
        return value if isinstance(value, str) else str(value.content[0])

    read_it.__annotations__ = {"ctx": Context, "variables": Any, "return": str}

    server.resource(
        uri_base + op.path,
        name=op.name,
        description=op.description or f"{op.method} {op.path}",
        mime_type=None,
    )(read_it)
