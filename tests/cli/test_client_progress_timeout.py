"""Progress extends a request's timeout (counted again from each notification), up to the
client's `max_timeout`; a request without progress still ends at `timeout`."""

from __future__ import annotations

import asyncio

import pytest

import rondo
from rondo.client import Client, RequestTimeout

STEP = 0.1  # seconds between progress notifications: a tenth of the request timeout
TIMEOUT = 1.0


def _server() -> rondo.Server:
    server = rondo.Server("slow", state=None)

    @server.tool
    async def crunch(steps: int, ctx: rondo.Context) -> str:
        for done in range(steps):
            await asyncio.sleep(STEP)
            await ctx.report_progress(done + 1, steps)
        return f"{steps} steps"

    return server


async def _call(steps: int, *, progress: bool, **client: float | None) -> tuple[str, list[float]]:
    seen: list[float] = []
    async with Client(_server(), timeout=TIMEOUT, **client) as c:  # type: ignore[arg-type]
        result = await c.call_tool("crunch", {"steps": steps},
                                   on_progress=(lambda p, t, m: seen.append(p)) if progress else None)
    return result.text, seen


def test_progress_keeps_a_long_call_alive_past_the_request_timeout() -> None:
    steps = 20  # 2 s of work, twice the timeout, with progress every 0.1 s
    text, seen = asyncio.run(_call(steps, progress=True))
    assert text == "20 steps"
    assert seen == [float(n) for n in range(1, steps + 1)]


def test_without_progress_the_request_timeout_still_ends_the_call() -> None:
    with pytest.raises(RequestTimeout, match=r"within 1\.0 s$"):
        asyncio.run(_call(20, progress=False))


def test_max_timeout_bounds_a_call_whose_progress_never_ends() -> None:
    # The message names max_timeout: that timer, not the 100 s of work nor the 30 s hang guard,
    # ended the call.
    with pytest.raises(RequestTimeout, match="1.5 s in all \\(max_timeout\\)"):
        asyncio.run(asyncio.wait_for(_call(1000, progress=True, max_timeout=1.5), 30))


def test_max_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_timeout must be a positive"):
        Client(_server(), max_timeout=0)


def test_progress_extends_the_timeout_over_stdio_too(tmp_path) -> None:
    import sys

    app = tmp_path / "slow_app.py"
    app.write_text(
        "import asyncio\nimport rondo\nserver = rondo.Server('slow', state=None)\n\n\n"
        "@server.tool\nasync def crunch(steps: int, ctx: rondo.Context) -> str:\n"
        "    for done in range(steps):\n        await asyncio.sleep(0.1)\n"
        "        await ctx.report_progress(done + 1, steps)\n    return f'{steps} steps'\n\n\n"
        "if __name__ == '__main__':\n    server.run()\n")

    async def go() -> str:
        async with Client([sys.executable, str(app)], timeout=TIMEOUT) as c:
            return (await c.call_tool("crunch", {"steps": 20}, on_progress=lambda *a: None)).text

    assert asyncio.run(go()) == "20 steps"
