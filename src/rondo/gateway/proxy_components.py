"""The relaying components a proxy registers for its upstream's tools, prompts, resources and
templates (`register`), listed again and swapped when the upstream's lists change (`follow`,
`refresh`, `register_list`). Each relays through its `Upstream` (`upstream.py`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from ..client import ClientError
from ..client.types import CallToolResult, GetPromptResult, ReadResourceResult
from ..server.components import Prompt
from ..server.content import ToolResult
from ..server.context import Context
from ..server.server import Server
from ..wire.errors import McpError
from .listcache import UPSTREAM
from .transform import upstream_tags
from .updates import follow_listen

if TYPE_CHECKING:
    from .upstream import Upstream

log = logging.getLogger("rondo.gateway")
_ANY_HINTS: dict[str, Any] = {"ctx": Context, "arguments": Any, "return": Any}


def _drop_none(wire: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in wire.items() if value is not None}


async def _register(server: Server, link: Upstream) -> None:
    """Page through every list the upstream advertises and register a relay for each entry."""
    client = link.client
    assert client is not None
    if not client.server_capabilities and client.era == "modern":
        await client.discover()  # a pinned modern version skips the probe that learns them
    for what in ("tools", "prompts", "resources"):  # after a restart: swapped for the new
        await _register_list(server, link, what, replace=True)


async def _register_list(server: Server, link: Upstream, what: str, *,
                         replace: bool = False) -> bool:
    """List the upstream's `what` and register a relay for each entry. With `replace`, what
    this link registered there before is dropped first, in the same step as the new entries
    are added (no await between), so no request sees the list empty."""
    client = link.client
    assert client is not None
    if what not in (client.server_capabilities or {}):
        return False
    for method in UPSTREAM[what]:  # pages of an earlier listing do not speak for this one
        client.cache.invalidate(method)
    adds: list[Any] = []
    if what == "tools":
        adds = [(_add_tool, tool) for tool in await client.list_tools(refresh=True)]
    elif what == "prompts":
        adds = [(_add_prompt, prompt) for prompt in await client.list_prompts(refresh=True)]
    else:
        resources = await client.list_resources(refresh=True)
        templates = await client.list_resource_templates(refresh=True)
        adds = [(_add_resource, (r.uri, _drop_none({
            "name": r.name, "title": r.title, "description": r.description,
            "mime_type": r.mime_type, "size": r.size, "annotations": r.annotations,
            "icons": r.icons, "meta": r.meta}))) for r in resources]
        adds += [(_add_resource, (t.uri_template, _drop_none({
            "name": t.name, "title": t.title, "description": t.description,
            "mime_type": t.mime_type, "annotations": t.annotations, "icons": t.icons,
            "meta": t.meta}))) for t in templates]
    link.fresh.heard(what, [hint for (method, _), hint in client.cache.hints.items()
                            if method in UPSTREAM[what]], modern=client.era == "modern")
    digest = repr([entry for _, entry in adds])
    if replace and link.listed.get(what) == digest:
        return False  # listed again, nothing changed: no swap (the caller decides on telling)
    link.listed[what] = digest
    if replace:
        drop = {"tools": server.remove_tool, "prompts": server.remove_prompt,
                "resources": server.remove_resource}[what]
        for name in list(link.registered[what]):
            with contextlib.suppress(KeyError):
                drop(name)
        link.registered[what].clear()
    for add, entry in adds:
        if add is _add_resource:
            _add_resource(server, link, *entry)
        else:
            add(server, link, entry)
    return True


_TELL = {"tools": Server.notify_tools_changed, "prompts": Server.notify_prompts_changed,
         "resources": Server.notify_resources_changed}


async def _refresh(server: Server, link: Upstream, what: str) -> None:
    """The upstream's `what` list changed: list it again and swap the relays. The upstream's
    word is passed on even when the entries the proxy keeps look the same (something it does
    not keep may have changed); only a refresh the proxy makes itself on a lapsed cache hint
    stays silent when nothing changed."""
    if not await _register_list(server, link, what, replace=True):
        _TELL[what](server)


async def _follow(server: Server, link: Upstream) -> None:
    """Relay the upstream's list changes into the proxy's registry (whose listeners then tell
    the proxy's clients), for as long as the proxy runs."""
    client, changes = link.client, link.changes
    assert client is not None and changes is not None
    offers = client.server_capabilities or {}
    wanted = [what for what in ("tools", "prompts", "resources")
              if (offers.get(what) or {}).get("listChanged")]

    async def redo(what: str) -> None:
        try:
            await _refresh(server, link, what)
        except (ClientError, McpError, OSError) as exc:
            log.warning("upstream %s: cannot list its %s again: %s", link.identity, what, exc)

    if client.era == "modern":  # reopened whenever the URIs watched change (updates.py)
        await follow_listen(link, client, wanted, redo)
        return
    while True:
        await redo(await changes.get())


def _add_tool(server: Server, link: Upstream, tool: Any) -> None:
    upstream_name = tool.name

    def relay(ctx: Context, arguments: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        # The relay lane's call (core/relay.py): the arguments as the client sent them, the
        # result as the proxy's result object (`Upstream.relay(tool_body=True)`). A plain def
        # handing over the coroutine: no frame of its own on every wake.
        return link.relay(ctx, "tools/call", {"name": upstream_name, "arguments": arguments},
                          tool_body=True)

    async def call(ctx: Context, **arguments: Any) -> Any:
        # The general path's (middleware, a legacy session, a mount's guard, tasks).
        result = await link.relay(ctx, "tools/call", {"name": upstream_name,
                                                      "arguments": arguments})
        if not isinstance(result, CallToolResult):
            return result
        if result.structured_content is None:
            return ToolResult(result.content, is_error=result.is_error, meta=result.meta)
        return ToolResult(result.content, structured=result.structured_content,
                          is_error=result.is_error, meta=result.meta)

    call.__annotations__ = _ANY_HINTS
    try:
        server.tool(name=tool.name, title=tool.title, description=tool.description or "",
                    input_schema=tool.input_schema, output_schema=tool.output_schema,
                    annotations=tool.annotations, icons=tool.icons, meta=tool.meta,
                    tags=upstream_tags(tool.meta))(call)
    except ValueError as exc:
        log.warning("upstream %s: tool %r not served: %s", link.identity, tool.name, exc)
        return
    server.tools[tool.name].relay = relay
    link.registered["tools"].add(tool.name)


def _add_prompt(server: Server, link: Upstream, prompt: Any) -> None:
    upstream_name = prompt.name

    async def get(ctx: Context, **arguments: Any) -> Any:
        params: dict[str, Any] = {"name": upstream_name, "arguments": arguments}
        result = await link.relay(ctx, "prompts/get", params)
        if not isinstance(result, GetPromptResult):
            return result
        return [{"role": m.role, "content": m.content} for m in result.messages]

    get.__annotations__ = _ANY_HINTS
    try:
        server.prompt(name=prompt.name, title=prompt.title, description=prompt.description,
                      icons=prompt.icons, meta=prompt.meta, tags=upstream_tags(prompt.meta))(get)
    except ValueError as exc:
        log.warning("upstream %s: prompt %r not served: %s", link.identity, prompt.name, exc)
        return
    made = server.prompts[prompt.name]
    arguments = [_drop_none({"name": a.name, "title": a.title, "description": a.description,
                             "required": a.required}) for a in prompt.arguments]
    server.prompts[prompt.name] = Prompt(made.name, made.fn, made.signature,
                                         {**made.wire, "arguments": arguments}, made.middleware,
                                         made.tags)
    link.registered["prompts"].add(prompt.name)


def _add_resource(server: Server, link: Upstream, uri: str, wire: dict[str, Any]) -> None:
    async def read(ctx: Context, **variables: Any) -> Any:
        params = {"uri": ctx.request_params["uri"]}
        result = await link.relay(ctx, "resources/read", params)
        if not isinstance(result, ReadResourceResult):
            return result
        return list(result.contents)

    read.__annotations__ = {"ctx": Context, "variables": Any, "return": Any}
    try:
        server.resource(uri, **wire, tags=upstream_tags(wire.get("meta")))(read)
    except ValueError as exc:
        log.warning("upstream %s: resource %r not served: %s", link.identity, uri, exc)
        return
    link.registered["resources"].add(uri)
