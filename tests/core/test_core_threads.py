"""`thread=True`: a blocking plain `def` handler runs in a worker thread, not on the loop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import rondo
from rondo.client import Client


def make_server(release: threading.Event | None = None) -> rondo.Server:
    server = rondo.Server("threads", state=rondo.StatePolicy(keys=[("k", b"s" * 32)]))
    if release is None:
        release = threading.Event()
        release.set()

    @server.tool(thread=True)
    def blocking(ctx: rondo.Context) -> str:
        ctx.report_progress(1, 2, "started")
        assert release.wait(30), "never released"  # blocks its thread until the test says
        answer = ctx.ask("ok", rondo.elicit.form(
            "Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}))
        return f"{threading.current_thread() is threading.main_thread()} {answer.action}"

    @server.tool
    def quick() -> str:
        return str(threading.current_thread() is threading.main_thread())

    @server.resource("blocking://r", thread=True)
    def resource() -> str:
        time.sleep(0.05)
        return "read in a thread"

    @server.prompt(thread=True)
    def slow_prompt(topic: str) -> str:
        time.sleep(0.05)
        return f"about {topic}"

    return server


def test_a_blocking_handler_does_not_hold_up_others():
    release = threading.Event()

    async def main() -> None:
        progress: list[tuple] = []
        async with Client(make_server(release), on_elicit=lambda r: {"action": "accept",
                                                                     "content": {"ok": True}}) as client:
            slow = asyncio.ensure_future(
                client.call_tool("blocking", on_progress=lambda *a: progress.append(a)))
            deadline = time.monotonic() + 30
            while not progress:  # the blocking handler has started in its thread
                assert time.monotonic() < deadline, "the blocking handler never started"
                await asyncio.sleep(0.01)
            # Answered while the blocking handler is still held (no timing: it cannot finish
            # until released, so an answer behind it would never come).
            quick = await asyncio.wait_for(client.call_tool("quick"), 30)
            assert not slow.done()
            release.set()
            assert quick.text == "True"  # plain handlers still run on the loop's thread
            result = await slow
            assert result.text == "False accept"  # ran off the main thread, asked, finished
            assert progress and progress[0][:2] == (1, 2)
            assert (await client.read_resource("blocking://r")).text == "read in a thread"
            prompt = await client.get_prompt("slow_prompt", {"topic": "tea"})
            assert prompt.text == "about tea"

    asyncio.run(main())


def test_thread_is_refused_for_async_handlers_at_registration():
    server = rondo.Server("bad")
    with pytest.raises(ValueError, match="thread=True"):
        @server.tool(thread=True)
        async def not_blocking() -> str:
            return "x"
