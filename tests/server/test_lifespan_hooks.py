"""Lifespan hooks of every accepted shape, and the mistakes refused with a message that says why."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

import rondo
from rondo.server.lifespan import MissingLifespanValue


def test_a_hook_that_is_not_callable_is_refused_at_registration() -> None:
    server = rondo.Server("life", state=None)
    with pytest.raises(TypeError, match="function taking the server"):
        server.lifespan({"db": "pool"})  # type: ignore[arg-type]


def test_a_hook_returning_its_own_async_context_manager_runs_around_the_block() -> None:
    server = rondo.Server("life", state=None)
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def pool(srv: rondo.Server) -> AsyncIterator[dict[str, str]]:
        events.append("open")
        yield {"db": f"pool of {srv.name}"}
        events.append("close")

    server.lifespan(pool)  # decorated: a plain function returning a context manager

    async def go() -> tuple[str, bool]:
        async with server.started() as state:
            value = state["db"]
        return value, "db" in state

    assert asyncio.run(go()) == ("pool of life", False)  # the state is cleared at shutdown
    assert events == ["open", "close"]


def test_a_hook_yielding_something_else_than_a_dict_fails_start_up_and_unwinds() -> None:
    server = rondo.Server("life", state=None)
    events: list[str] = []

    @server.lifespan
    async def first(srv: rondo.Server) -> AsyncIterator[dict[str, str]]:
        try:
            yield {"db": "pool"}
        finally:  # the failure is raised at the yield, as in any async context manager
            events.append("first closed")

    @server.lifespan
    async def wrong(srv: rondo.Server) -> AsyncIterator[list[str]]:
        yield ["not", "a", "dict"]

    async def go() -> None:
        async with server.started():
            events.append("served")  # pragma: no cover - start-up fails first

    with pytest.raises(TypeError, match=r"'wrong' must yield a dict .* got list"):
        asyncio.run(go())
    assert events == ["first closed"]  # hooks already open are closed again

    async def again() -> Any:
        async with server.started() as state:
            return state["missing"]

    # Not stuck in the "already running" state: the next start runs the hooks again (and fails).
    with pytest.raises(TypeError, match="must yield a dict"):
        asyncio.run(again())


def test_a_hook_that_is_neither_a_generator_nor_returns_a_context_manager_is_refused() -> None:
    server = rondo.Server("life", state=None)

    @server.lifespan
    def plain(srv: rondo.Server) -> dict[str, str]:
        return {"db": "pool"}

    async def go() -> None:
        async with server.started():
            pass  # pragma: no cover - start-up fails first

    with pytest.raises(TypeError, match=r"'plain' must be an async generator function"):
        asyncio.run(go())


def test_a_missing_value_is_a_key_error_that_names_the_fix() -> None:
    server = rondo.Server("life", state=None)

    async def go() -> None:
        async with server.started() as state:
            state["db"]

    with pytest.raises(MissingLifespanValue, match="no lifespan hook provided it") as caught:
        asyncio.run(go())
    assert isinstance(caught.value, KeyError) and MissingLifespanValue.public
