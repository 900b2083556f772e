"""One relayed `add` through the proxy, in process: the proxy's own CPU per call, without load.

    .venv/bin/python benchmarks/proxy_inprocess.py [N] [--profile]

The upstream is benchmarks/server.py over HTTP in its own process; the proxy (`proxy(url)`) is
served in this process through its ASGI app (inprocess.py's `call`, the express-lane request
wrk sends), so this process's CPU time (`time.process_time`) is the proxy's alone. Prints CPU
µs per relayed call and Python function calls per call (cProfile's count, with --profile), a
figure that does not move with the machine's load.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from inprocess import ADD, call  # noqa: E402
from run import free_port, wait_http_ready  # noqa: E402

from rondo.gateway import proxy  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


async def main(n: int, profile: bool) -> None:
    port = free_port()
    up = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "server.py"), "http",
                           str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_http_ready(port, up)
        server = proxy(f"http://127.0.0.1:{port}/mcp")
        app = server.asgi()
        async with server.started():
            for _ in range(300):
                assert b'"3"' in await call(app, "add", ADD)
            profiler = None
            if profile:
                import cProfile

                profiler = cProfile.Profile()
                profiler.enable()
            best = float("inf")
            for _ in range(5):
                start = time.process_time()
                for _ in range(n):
                    await call(app, "add", ADD)
                best = min(best, (time.process_time() - start) / n * 1e6)
            if profiler is not None:
                import pstats

                profiler.disable()
                stats = pstats.Stats(profiler)
                print(f"function calls per relayed add: {stats.total_calls / (5 * n):.0f}")  # type: ignore[attr-defined]
                if "--by-file" in sys.argv:
                    by: dict[str, int] = {}
                    for (file, _, _), row in stats.stats.items():  # type: ignore[attr-defined]
                        by[file] = by.get(file, 0) + row[1]
                    for file, count in sorted(by.items(), key=lambda kv: -kv[1])[:25]:
                        print(f"{count / (5 * n):7.1f}  {file}")
                else:
                    stats.sort_stats("ncalls").print_callers(r"method .get. of .dict|isinstance", 30) if "--callers" in sys.argv else stats.sort_stats("tottime").print_stats(20)
            print(f"proxy CPU per relayed add: {best:.0f} us (best of 5 x {n})")
    finally:
        up.terminate()
        up.wait()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    asyncio.run(main(int(args[0]) if args else 500, "--profile" in sys.argv))
