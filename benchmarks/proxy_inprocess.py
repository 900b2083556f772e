"""One relayed `add` (or MRTR flow) through the proxy, in process: the proxy's own CPU per call,
without load.

    .venv/bin/python benchmarks/proxy_inprocess.py [N] [--flow] [--uvloop] [--stub] [--profile]

The upstream is benchmarks/server.py over HTTP in its own process; the proxy (`proxy(url)`) is
served in this process through its ASGI app (inprocess.py's `call`, the express-lane request
wrk sends), so this process's CPU time (`time.process_time`) is the proxy's alone. Prints CPU
µs per relayed call and Python function calls per call (cProfile's count, with --profile), a
figure that does not move with the machine's load.

`--flow` relays `ask_color`'s two legs (the upstream's input round sealed in the proxy's state,
then the retry) instead of `add`. `--uvloop` runs the loop `rondo proxy` serves with (uvloop;
without it, asyncio's own, whose Python code weighs more in a profile). `--stub` answers the
upstream link's `resume` from memory (the answers the upstream gives), so what remains is the
proxy's downstream side alone: the HTTP checks, the relay lane, the sealing, the result.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inprocess import ADD, LEG1, best_of_five, call, leg2_body  # noqa: E402
from run import free_port, wait_http_ready  # noqa: E402

from rondo.client.types import CallToolResult, PendingCall  # noqa: E402
from rondo.gateway import proxy  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUESTION = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Favourite colour?",
    "requestedSchema": {"type": "object", "properties": {"color": {"type": "string"}},
                        "required": ["color"]}}}


def stub(client: Any) -> None:
    """The upstream link's `resume`, answered from memory as benchmarks/server.py answers."""

    async def resume(pending: PendingCall, responses: Any = None, *, manual: bool = False,
                     on_progress: Any = None, raw: bool = False) -> Any:
        if pending.params["name"] == "add":
            if raw:
                return {"content": [{"type": "text", "text": "3"}], "resultType": "complete"}
            return CallToolResult(content=[{"type": "text", "text": "3"}])
        if not responses:
            return PendingCall(method=pending.method, params=pending.params,
                               input_requests={"color": dict(QUESTION)},
                               request_state="upstream-state-" + "x" * 120)
        if raw:
            return {"content": [{"type": "text", "text": "blue"}], "resultType": "complete"}
        return CallToolResult(content=[{"type": "text", "text": "blue"}])

    client.resume = resume


async def main(n: int, profile: bool, flow: bool, stubbed: bool) -> None:
    port = free_port()
    up = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "server.py"), "http",
                           str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http_ready(port, up)
        server = proxy(f"http://127.0.0.1:{port}/mcp")
        app = server.asgi()
        async with server.started():
            if stubbed:
                link = next(ext.link for ext in server.extensions.values() if hasattr(ext, "link"))
                stub(link.client)

            async def add() -> None:
                assert b'"3"' in await call(app, "add", ADD)

            async def mrtr() -> None:
                first = json.loads(await call(app, "ask_color", LEG1))["result"]
                retry = leg2_body(next(iter(first["inputRequests"])), first["requestState"])
                assert b"blue" in await call(app, "ask_color", retry)

            one = mrtr if flow else add
            what = "flow" if flow else "add"
            profiler = None
            if profile:
                import cProfile

                profiler = cProfile.Profile()
            best = await best_of_five(one, n, warm=300, clock=time.process_time,
                                      profiler=profiler)
            if profiler is not None:
                import pstats

                stats = pstats.Stats(profiler)
                print(f"function calls per relayed {what}: {stats.total_calls / (5 * n):.0f}")  # type: ignore[attr-defined]
                if "--by-file" in sys.argv:
                    by: dict[str, int] = {}
                    for (file, _, _), row in stats.stats.items():  # type: ignore[attr-defined]
                        by[file] = by.get(file, 0) + row[1]
                    for file, count in sorted(by.items(), key=lambda kv: -kv[1])[:25]:
                        print(f"{count / (5 * n):7.1f}  {file}")
                else:
                    stats.sort_stats("ncalls").print_callers(r"method .get. of .dict|isinstance", 30) if "--callers" in sys.argv else stats.sort_stats("tottime").print_stats(20)
            print(f"proxy CPU per relayed {what}: {best:.0f} us (best of 5 x {n})")
    finally:
        up.terminate()
        up.wait()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--uvloop" in sys.argv:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.run(main(int(args[0]) if args else 500, "--profile" in sys.argv,
                     "--flow" in sys.argv, "--stub" in sys.argv))
