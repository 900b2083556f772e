"""Where a served request's CPU time goes, sampled inside a real server under wrk load.

    .venv/bin/python benchmarks/sample_server.py rondo mrtr      # or: floor|rondo  add|mrtr [SECONDS]

Starts the fixture (benchmarks/server.py or floor.py) over HTTP on CPU 0 with a sampler inside:
every 0.7 ms of the process's CPU time (`ITIMER_PROF`, so time in system calls counts) it notes
the running Python function and its callers. wrk (on CPU 1) warms the server up for 2 s, then
drives it for SECONDS (default 6) while the sampler runs; the server then writes the shares of
the most frequent functions: by self (time in the function and the C code it calls, such as
a socket write or the HTTP parser) and inclusive. Unlike `inprocess.py`, the caches are as cold
as a real server's between requests; unlike `perf`, it names Python functions.
"""

from __future__ import annotations

import collections
import os
import runpy
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

HERE = Path(__file__).resolve().parent
INTERVAL = 0.0007


def _name(frame: FrameType) -> str:
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}"


def serve_sampled(fixture: str, port: str, out: str) -> None:
    """In the server process: install the sampler (SIGUSR1 starts it, SIGTERM writes the
    shares to `out` and exits), then run the fixture."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = [0]

    def sample(signum: int, frame: FrameType | None) -> None:
        if frame is None:
            return
        total[0] += 1
        own[_name(frame)] += 1
        seen: set[str] = set()
        while frame is not None:
            name = _name(frame)
            if name not in seen:
                seen.add(name)
                inclusive[name] += 1
            frame = frame.f_back

    def start(*_: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)

    def finish(*_: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        n = max(total[0], 1)
        lines = [f"{total[0]} samples", "", "self:"]
        lines += [f"{100 * v / n:6.2f}%  {k}" for k, v in own.most_common(40)]
        lines += ["", "inclusive:"]
        lines += [f"{100 * v / n:6.2f}%  {k}" for k, v in inclusive.most_common(60)
                  if v < n]  # the frames every sample has (the event loop's) say nothing
        Path(out).write_text("\n".join(lines) + "\n")
        os._exit(0)

    signal.signal(signal.SIGPROF, sample)
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGTERM, finish)
    sys.path.insert(0, str(HERE))
    sys.argv = [fixture, "http", port]
    runpy.run_path(fixture, run_name="__main__")


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--serve":
        serve_sampled(argv[1], argv[2], argv[3])
        return 0
    if len(argv) not in (2, 3) or argv[0] not in ("floor", "rondo") or argv[1] not in ("add", "mrtr"):
        raise SystemExit(__doc__)
    from run import free_port, pinned, wait_http_ready, wrk_envs

    fixture = str(HERE / ("floor.py" if argv[0] == "floor" else "server.py"))
    seconds = float(argv[2]) if len(argv) == 3 else 6.0
    add_env, mrtr_env = wrk_envs()
    env = {**os.environ, **(add_env if argv[1] == "add" else mrtr_env)}
    script = str(HERE / "wrk" / ("post.lua" if argv[1] == "add" else "mrtr.lua"))
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "samples.txt")
        proc = subprocess.Popen([sys.executable, __file__, "--serve", fixture, str(port), out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=pinned(0))
        try:
            wait_http_ready(port, proc)

            def drive(duration: float) -> str:
                cmd = ["wrk", "-t2", "-c2", f"-d{max(1, round(duration))}s", "-s", script,
                       f"http://127.0.0.1:{port}/mcp"]
                return subprocess.run(cmd, env=env, capture_output=True, text=True,
                                      preexec_fn=pinned(1)).stdout

            drive(2)
            proc.send_signal(signal.SIGUSR1)
            load = drive(seconds)
            print(*(line.strip() for line in load.splitlines()
                    if "Requests/sec" in line or line.startswith("flows")), sep="\n")
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
            print(Path(out).read_text())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
