"""`LoopClient`: one pooled `httpx.AsyncClient` per event loop, for the auth code that talks to
an authorization server, an identity provider or an STS. An asyncio client belongs to the loop
it was first used on (an app imported before its server's loop starts, tests running several
loops), so a new running loop gets a new client. No redirects followed, no proxy from the
environment: these exchanges carry secrets and go only where they were configured to."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


class LoopClient:
    __slots__ = ("timeout", "transport", "_client", "_loop")

    def __init__(self, timeout: float, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout = timeout
        self.transport = transport
        self._client: httpx.AsyncClient | None = None
        self._loop: Any = None

    def get(self) -> httpx.AsyncClient:
        """The running loop's client, made on its first use there."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False,
                                             trust_env=False, transport=self.transport)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the current client (a new one is made on next use)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
