"""`from_fastapi`: the same generator over a FastAPI (or any ASGI app with an OpenAPI document),
called in-process through `httpx.ASGITransport`: no socket, the app's dependencies, auth and
lifespan run as they would behind a server."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

import rondo

from .build import from_openapi

IN_PROCESS_BASE = "http://fastapi.local"


def from_fastapi(app: Any, *, document: Any = None, base_url: str = IN_PROCESS_BASE,
                 headers: dict[str, str] | None = None, **options: Any) -> rondo.Server:
    """A server calling `app` in-process. `document` defaults to `app.openapi()`; `headers`
    go on every request (a service credential the app checks, say); other options are
    `from_openapi`'s. The app's lifespan runs inside the server's."""
    if document is None:
        openapi = getattr(app, "openapi", None)
        if not callable(openapi):
            raise TypeError("from_fastapi needs a FastAPI app, or document= for another ASGI app")
        document = openapi()
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=base_url,
                               headers=headers)
    server = from_openapi(document, client, **options)
    router_lifespan = getattr(getattr(app, "router", None), "lifespan_context", None)

    @server.lifespan
    async def run_app(_: rondo.Server) -> AsyncIterator[dict[str, Any]]:
        async with contextlib.AsyncExitStack() as stack:
            if router_lifespan is not None:
                await stack.enter_async_context(router_lifespan(app))
            stack.push_async_callback(client.aclose)
            yield {}

    return server
