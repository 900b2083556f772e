"""`ClientGroup`: one `rondo.Client` per server of an mcp.json, connected at once.

    async with ClientGroup("mcp.json", on_elicit=ask) as group:
        for name, client in group.items():
            print(name, [t.name for t in await client.list_tools()])
        print(group.failed)  # {name: why} for servers that could not be reached

Servers are connected concurrently, each within `connect_timeout`; one that cannot be reached
is left out and named in `failed` (with `strict=True`, the group does not start instead). Keyword
arguments are every `Client`'s (`on_elicit`, `protocol`...); an entry's `env`, `cwd`, `headers`
and `timeout` are its own. See docs/client.md.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator, Mapping
from typing import Any

from rondo.client.errors import ClientError
from rondo.client.mcpjson import ServerEntry, load_mcp_json
from rondo.client.session import Client
from rondo.wire.errors import McpError

__all__ = ["ClientGroup"]


class ClientGroup(Mapping[str, Client]):
    """The connected clients of an mcp.json, by server name (a read-only mapping)."""

    def __init__(self, config: str | os.PathLike[str] | Mapping[str, Any], *,
                 strict: bool = False, connect_timeout: float = 30.0,
                 environ: Mapping[str, str] | None = None, **client_options: Any) -> None:
        if not connect_timeout > 0:
            raise ValueError("connect_timeout must be a positive number of seconds")
        for key in ("headers", "env", "cwd"):
            if key in client_options:
                raise ValueError(f"{key}= is each server's own, from its mcp.json entry")
        self.entries: dict[str, ServerEntry] = load_mcp_json(config, environ=environ)
        self.strict = strict
        self.connect_timeout = connect_timeout
        self.client_options = client_options
        self.failed: dict[str, str] = {}
        self._clients: dict[str, Client] = {}

    def client_for(self, entry: ServerEntry) -> Client:
        """The (unconnected) client for one entry: its target, env, cwd, headers, timeout."""
        options = dict(self.client_options)
        if entry.timeout is not None:
            options["timeout"] = entry.timeout
        if entry.kind == "sse":
            from rondo.client.transports.legacy_sse import SseTransport

            assert entry.url is not None
            return Client(SseTransport(entry.url, headers=dict(entry.headers)), **options)
        if entry.kind == "stdio":
            return Client(entry.target, env=dict(entry.env), cwd=entry.cwd, **options)
        return Client(entry.target, headers=dict(entry.headers) or None, **options)

    async def __aenter__(self) -> ClientGroup:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Connect every server at once; those that fail are named in `failed`."""
        names = list(self.entries)
        results = await asyncio.gather(*(self._connect_one(self.entries[n]) for n in names))
        for name, outcome in zip(names, results, strict=True):
            if isinstance(outcome, Client):
                self._clients[name] = outcome
            else:
                self.failed[name] = outcome
        if self.strict and self.failed:
            await self.close()
            first = next(iter(self.failed.items()))
            raise ClientError(f"{len(self.failed)} server(s) of the mcp.json could not be "
                              f"reached; {first[0]!r}: {first[1]}")

    async def _connect_one(self, entry: ServerEntry) -> Client | str:
        try:
            client = self.client_for(entry)
        except (ClientError, ValueError, TypeError) as exc:
            return str(exc)
        try:
            await asyncio.wait_for(client.connect(), self.connect_timeout)
        except TimeoutError:
            await client.close()
            return f"did not connect within {self.connect_timeout:g} s"
        except (ClientError, McpError, OSError) as exc:
            await client.close()
            return f"{type(exc).__name__}: {exc}"
        return client

    async def close(self) -> None:
        """Close every connected client."""
        clients, self._clients = list(self._clients.values()), {}
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)

    def __getitem__(self, name: str) -> Client:
        try:
            return self._clients[name]
        except KeyError:
            why = self.failed.get(name)
            if why is not None:
                raise KeyError(f"server {name!r} is not connected: {why}") from None
            raise

    def __iter__(self) -> Iterator[str]:
        return iter(self._clients)

    def __len__(self) -> int:
        return len(self._clients)
