"""rondo vs a bare floor, the official `mcp` SDK and `fastmcp`, side by side, in one run.

    bash scripts/bench.sh                      # or: .venv/bin/python benchmarks/run.py
    .venv/bin/python benchmarks/run.py --targets rondo,mcp --duration 3
    .venv/bin/python benchmarks/run.py --targets rondo,rondo-tracing   # what tracing costs

For each target (one server process, JSON responses, 2026-07-28 wire):
  * HTTP `add`: wrk (benchmarks/wrk/post.lua) after a warm-up; requests/s, p50/p99 latency.
  * HTTP `ask_color`: the two-leg MRTR flow (benchmarks/wrk/mrtr.lua); flows/s.
  * peak RSS: VmHWM of the server after both loads; idle RSS (VmRSS) once ready.
  * stdio `add`: a driver sends N sequential `tools/call` requests; requests/s.
  * cold start: median over several spawns of spawn -> first `tools/list` answer over stdio.
The server is pinned to CPU 0 and the load generator (wrk or this driver) to CPU 1 so they do not
starve each other on a 2-core machine. Each measurement runs in rounds over all targets in turn
(their servers stay up side by side), so a change in the machine's load hits all alike. Prints one table and writes benchmarks/results/latest.md
(+ latest.json). The anchors' venvs live in benchmarks/.anchors/ and are created on first use.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
ANCHOR_VENVS = HERE / ".anchors"
VERSION = "2026-07-28"
# Same event loop and HTTP parser as rondo's venv, so the comparison is about the framework.
ANCHOR_REQUIREMENTS = {
    "mcp": ["mcp==2.3.0", "uvloop==0.23.0", "httptools==0.9.0"],
    "fastmcp": ["fastmcp==4.1.6", "uvloop==0.23.0", "httptools==0.9.0"],
}
SERVER_CPU, LOAD_CPU = 0, 1


@dataclass(frozen=True)
class Target:
    name: str
    label: str
    python: Path
    script: Path

    def command(self, *args: str) -> list[str]:
        return [str(self.python), str(self.script), *args]


TARGETS = {
    "floor": Target("floor", "bare floor", ROOT / ".venv/bin/python", HERE / "floor.py"),
    "rondo": Target("rondo", "rondo", ROOT / ".venv/bin/python", HERE / "server.py"),
    # The same server with tracing=True, opentelemetry-api installed and no SDK configured
    # (the API's no-op tracer): what tracing costs a deployment that exports nothing.
    "rondo-tracing": Target(
        "rondo-tracing", "rondo, tracing on, no exporter", ROOT / ".venv/bin/python",
        HERE / "server_tracing.py",
    ),
    "mcp": Target(
        "mcp", "mcp 2.3.0", ANCHOR_VENVS / "mcp/bin/python", HERE / "anchors/mcp_server.py"
    ),
    "fastmcp": Target(
        "fastmcp",
        "fastmcp 4.1.6",
        ANCHOR_VENVS / "fastmcp/bin/python",
        HERE / "anchors/fastmcp_server.py",
    ),
}


@dataclass
class Measured:
    http_rps: float | None = None
    http_rps_median: float | None = None
    http_p50_ms: float | None = None
    http_p99_ms: float | None = None
    http_bad: int | None = None
    mrtr_flows_per_s: float | None = None
    mrtr_median: float | None = None
    mrtr_bad: int | None = None
    rss_idle_mb: float | None = None
    rss_peak_mb: float | None = None
    stdio_rps: float | None = None
    stdio_median: float | None = None
    stdio_runs: list[float] = field(default_factory=list)
    # Server CPU (user + system) per request or flow, median run: steadier than throughput on
    # a shared machine, since time spent waiting for the CPU is not counted.
    http_cpu_us: float | None = None
    mrtr_cpu_us: float | None = None
    stdio_cpu_us: float | None = None
    cold_start_ms: float | None = None
    notes: list[str] = field(default_factory=list)


# -- messages --------------------------------------------------------------------------------


def meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }


def request(
    id: int, method: str, params: dict[str, Any] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {**(params or {}), "_meta": meta(capabilities)},
    }


ADD_PARAMS = {"name": "add", "arguments": {"a": 1, "b": 2}}
ELICIT_CAPS = {"elicitation": {"form": {}}}


def http_headers(method: str, name: str | None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name:
        headers["Mcp-Name"] = name
    return headers


# -- processes -------------------------------------------------------------------------------


def pinned(cpu: int) -> Callable[[], None] | None:
    if len(os.sched_getaffinity(0)) < 2:
        return None

    def pin() -> None:
        os.sched_setaffinity(0, {cpu})

    return pin


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proc_status(pid: int, key: str) -> float | None:
    """A kB field of /proc/PID/status, in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU a process has used so far (clock ticks, 10 ms here), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per(used: tuple[float | None, float | None], count: float) -> float | None:
    """Microseconds of server CPU per request (or flow) between two `cpu_seconds` readings."""
    before, after = used
    if before is None or after is None or not count:
        return None
    return (after - before) / count * 1e6


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def post(port: int, message: dict[str, Any], name: str | None) -> dict[str, Any]:
    body = json.dumps(message).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", body, http_headers(message["method"], name)
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.loads(resp.read())


def wait_http_ready(port: int, proc: subprocess.Popen[Any], timeout: float = 60) -> None:
    """Poll until `add` answers correctly (also the correctness check of the fixture)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering")
        try:
            answer = post(port, request(1, "tools/call", ADD_PARAMS), "add")
            result = answer.get("result", {})
            if result.get("content", [{}])[0].get("text") != "3":
                raise RuntimeError(f"`add` answered wrongly: {answer}")
            return
        except (OSError, urllib.error.URLError) as exc:
            last = exc
            time.sleep(0.1)
    raise RuntimeError(f"server did not answer within {timeout} s ({last})")


# -- HTTP with wrk ---------------------------------------------------------------------------


def wrk_headers(tool: str) -> str:
    """`WRK_HEADERS` for a `tools/call` of `tool`: one "Name: value" line per header."""
    return "\n".join(f"{k}: {v}" for k, v in http_headers("tools/call", tool).items())


def wrk_envs() -> tuple[dict[str, str], dict[str, str]]:
    """The wrk environments of the `add` load (post.lua) and of the MRTR flow (mrtr.lua)."""
    return ({"WRK_BODY": json.dumps(request(1, "tools/call", ADD_PARAMS)),
             "WRK_HEADERS": wrk_headers("add")},
            {"WRK_META": json.dumps(meta(ELICIT_CAPS)), "WRK_HEADERS": wrk_headers("ask_color")})


def wrk(
    script: str, port: int, env: dict[str, str], args: argparse.Namespace, seconds: float
) -> str:
    threads = args.connections  # one connection per thread keeps MRTR legs ordered
    cmd = [
        "wrk",
        f"-t{threads}",
        f"-c{args.connections}",
        f"-d{max(1, round(seconds))}s",
        "--latency",
        "-s",
        str(HERE / "wrk" / script),
        f"http://127.0.0.1:{port}/mcp",
    ]
    done = subprocess.run(
        cmd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        preexec_fn=pinned(LOAD_CPU),
        timeout=seconds + 60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def parse_ms(value: str) -> float:
    number, unit = re.match(r"([\d.]+)(\w+)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def wrk_numbers(output: str) -> dict[str, float]:
    found: dict[str, float] = {}
    if m := re.search(r"Requests/sec:\s+([\d.]+)", output):
        found["rps"] = float(m.group(1))
    if m := re.search(r"(\d+) requests in", output):
        found["requests"] = float(m.group(1))
    for pct in ("50", "99"):
        if m := re.search(rf"^\s+{pct}%\s+(\S+)", output, re.M):
            found[f"p{pct}"] = parse_ms(m.group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(r"Socket errors:.*", output)
    found["non2xx"] = float(non2xx.group(1)) if non2xx else 0.0
    found["socket_errors"] = (
        float(sum(int(n) for n in re.findall(r"\d+", errors.group(0)))) if errors else 0.0
    )
    for key in ("bad_responses", "flows", "bad", "duration_us"):
        if m := re.search(rf"\b{key} (\d+)", output):
            found[key] = float(m.group(1))
    return found


class HttpServer:
    """One target's HTTP server, pinned to the server CPU, on a free port."""

    def __init__(self, target: Target) -> None:
        self.port = free_port()
        self.log = open(RESULTS / f"{target.name}-http.log", "wb")  # noqa: SIM115 - close()
        self.proc = subprocess.Popen(
            target.command("http", str(self.port)),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=pinned(SERVER_CPU),
            cwd=ROOT,
        )

    def close(self) -> None:
        stop(self.proc)
        self.log.close()


def interleaved(
    names: list[str], results: dict[str, Measured], step: str, rounds: int,
    one: Callable[[str], None],
) -> None:
    """`rounds` rounds of `one(name)` over the targets in turn. A shared machine's load moves
    over minutes: interleaved, every target's best comes from the same spells of it, where
    one target after the other would compare different machines. A target that fails is noted
    and left out of the later rounds."""
    failed: set[str] = set()
    for _ in range(rounds):
        for name in names:
            if name in failed:
                continue
            try:
                one(name)
            except Exception as exc:  # one broken target must not hide the others' figures
                failed.add(name)
                results[name].notes.append(f"{step} failed: {exc}")
                print(f"  {name}: {step} failed: {exc}", flush=True)


def measured_wrk(
    server: HttpServer, script: str, env: dict[str, str], args: argparse.Namespace, counted: str
) -> dict[str, float]:
    """One measured wrk run's numbers, with the server CPU it took per `counted` (requests or
    flows) as `cpu_us`."""
    before = cpu_seconds(server.proc.pid)
    numbers = wrk_numbers(wrk(script, server.port, env, args, args.duration))
    used = cpu_per((before, cpu_seconds(server.proc.pid)), numbers.get(counted, 0))
    if used is not None:
        numbers["cpu_us"] = used
    return numbers


def measure_http(names: list[str], args: argparse.Namespace, results: dict[str, Measured]) -> None:
    """Every round starts each target's server afresh (then warms it up, measures `add`, warms
    up and measures the MRTR flow, and stops it): one process of the same code can run a third
    faster or slower than the next on this machine, so the median over fresh processes is what
    compares frameworks. Idle RSS is the median at first answer; peak RSS the highest after a
    round's loads."""
    add_env, mrtr_env = wrk_envs()
    add_runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    mrtr_runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    idle: dict[str, list[float]] = {n: [] for n in names}
    peak: dict[str, list[float]] = {n: [] for n in names}

    def one_round(name: str) -> None:
        server = HttpServer(TARGETS[name])
        try:
            wait_http_ready(server.port, server.proc)
            rss = proc_status(server.proc.pid, "VmRSS")
            if rss is not None:
                idle[name].append(rss)
            wrk("post.lua", server.port, add_env, args, args.warmup)
            add_runs[name].append(measured_wrk(server, "post.lua", add_env, args, "requests"))
            if not args.skip_mrtr:
                wrk("mrtr.lua", server.port, mrtr_env, args, args.warmup)
                mrtr_runs[name].append(measured_wrk(server, "mrtr.lua", mrtr_env, args, "flows"))
            hwm = proc_status(server.proc.pid, "VmHWM")
            if hwm is not None:
                peak[name].append(hwm)
        finally:
            server.close()

    interleaved(names, results, "http", args.repeat, one_round)
    for name in names:
        out = results[name]
        runs = add_runs[name]
        if runs:
            best = max(runs, key=lambda r: r.get("rps", 0))
            out.http_rps = best.get("rps")
            out.http_rps_median = statistics.median(r.get("rps", 0) for r in runs)
            out.http_p50_ms, out.http_p99_ms = best.get("p50"), best.get("p99")
            out.http_bad = int(sum(r.get("bad_responses", 0) + r["non2xx"]
                                   + r["socket_errors"] for r in runs))
            out.http_cpu_us = median_of(r.get("cpu_us") for r in runs)
        flows = [r for r in mrtr_runs[name] if r.get("duration_us")]
        if flows:
            rates = [r.get("flows", 0) / (r["duration_us"] / 1e6) for r in flows]
            out.mrtr_flows_per_s = max(rates)
            out.mrtr_median = statistics.median(rates)
            out.mrtr_bad = int(sum(r.get("bad", 0) + r["non2xx"] + r["socket_errors"]
                                   for r in mrtr_runs[name]))
            out.mrtr_cpu_us = median_of(r.get("cpu_us") for r in flows)
        if idle[name]:
            out.rss_idle_mb = statistics.median(idle[name])
        if peak[name]:
            out.rss_peak_mb = max(peak[name])


# -- stdio -----------------------------------------------------------------------------------


class StdioServer:
    """A server subprocess spoken to with newline-delimited JSON-RPC."""

    def __init__(self, target: Target, log_name: str) -> None:
        self.log = open(RESULTS / log_name, "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            target.command("stdio"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            preexec_fn=pinned(SERVER_CPU),
            cwd=ROOT,
        )

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def answer(self, id: int) -> dict[str, Any]:
        """Read lines (skipping notifications and other ids) until the answer to `id`."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed stdout (exit {self.proc.poll()})")
            message = json.loads(line)
            if message.get("id") == id and ("result" in message or "error" in message):
                return message

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            stop(self.proc)
        if self.proc.stdout:
            self.proc.stdout.close()
        self.log.close()


def add_line(id: int) -> bytes:
    return json.dumps(request(id, "tools/call", ADD_PARAMS), separators=(",", ":")).encode() + b"\n"


def measure_stdio(names: list[str], args: argparse.Namespace, results: dict[str, Measured]) -> None:
    """Every run is a fresh server process: how fast one process of a target runs moves by up
    to a third from one start to the next on this machine (where its code and data land), so
    the median over fresh processes says more than any number of runs of one."""
    rates: dict[str, list[float]] = {}
    cpu: dict[str, list[float | None]] = {}
    # Each run lasts `--stdio-seconds` (whole batches of 100 calls): a fixed count would last
    # 0.07 s on the fast targets, short enough for one spell of load to decide it.
    sentinel = 987654321
    prefix, suffix = add_line(sentinel).split(str(sentinel).encode())

    def one_run(name: str) -> None:
        server = StdioServer(TARGETS[name], f"{name}-stdio.log")
        try:
            for i in range(1, 201):  # warm-up
                server.send(add_line(i))
                server.answer(i)
            first = rid = 1000
            cpu_before = cpu_seconds(server.proc.pid)
            began = time.perf_counter()
            deadline = began + args.stdio_seconds
            while True:
                for _ in range(100):
                    server.send(b"%s%d%s" % (prefix, rid, suffix))
                    answer = server.answer(rid)
                    if "result" not in answer:
                        raise RuntimeError(f"stdio `add` failed: {answer}")
                    rid += 1
                if time.perf_counter() >= deadline:
                    break
            rates.setdefault(name, []).append((rid - first) / (time.perf_counter() - began))
            cpu.setdefault(name, []).append(
                cpu_per((cpu_before, cpu_seconds(server.proc.pid)), rid - first))
            if answer["result"]["content"][0]["text"] != "3":
                raise RuntimeError(f"stdio `add` answered wrongly: {answer}")
        finally:
            server.close()

    interleaved(names, results, "stdio", args.repeat, one_run)
    for name, runs in rates.items():
        results[name].stdio_runs = runs
        results[name].stdio_rps = max(runs)
        results[name].stdio_median = statistics.median(runs)
        results[name].stdio_cpu_us = median_of(cpu.get(name, ()))


def measure_cold_start(
    names: list[str], args: argparse.Namespace, results: dict[str, Measured]
) -> None:
    """Spawn -> first `tools/list` answer; every target speaks 2026-07-28 directly (no handshake).
    The spawns alternate between targets; each target's first only warms the file cache."""
    line = json.dumps(request(1, "tools/list")).encode() + b"\n"
    times: dict[str, list[float]] = {n: [] for n in names}
    spawned: dict[str, int] = {}

    def spawn(name: str) -> None:
        target = TARGETS[name]
        if name not in spawned:
            _compile_bytecode(target)
        start = time.perf_counter()
        server = StdioServer(target, f"{name}-cold.log")
        try:
            server.send(line)
            answer = server.answer(1)
            elapsed = time.perf_counter() - start
        finally:
            server.close()
        if "result" not in answer or not answer["result"].get("tools"):
            raise RuntimeError(f"tools/list failed: {answer}")
        if spawned.get(name, 0):  # the first spawn of each target is not counted
            times[name].append(elapsed * 1000)
        spawned[name] = spawned.get(name, 0) + 1

    interleaved(names, results, "cold start", args.cold_runs + 1, spawn)
    for name, measured in times.items():
        if measured:
            results[name].cold_start_ms = statistics.median(measured)


def _compile_bytecode(target: Target) -> None:
    """Write the .pyc files an installed package has (pip compiles on install): without them,
    e.g. under PYTHONDONTWRITEBYTECODE=1, every spawn would time compiling, not starting."""
    paths = [str(target.script.parent)]
    if target.python == ROOT / ".venv/bin/python":
        paths.append(str(ROOT / "src"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([str(target.python), "-m", "compileall", "-q", *paths], env=env,
                   check=True, stdout=subprocess.DEVNULL)


# -- set-up ----------------------------------------------------------------------------------


def ensure_anchor(name: str) -> None:
    venv = ANCHOR_VENVS / name
    stamp = venv / ".requirements"
    wanted = "\n".join(ANCHOR_REQUIREMENTS[name])
    if stamp.exists() and stamp.read_text() == wanted and (venv / "bin/python").exists():
        return
    print(
        f"setting up {venv.relative_to(ROOT)}: {', '.join(ANCHOR_REQUIREMENTS[name])}", flush=True
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         *ANCHOR_REQUIREMENTS[name]],
        check=True,
    )  # fmt: skip
    stamp.write_text(wanted)


# -- report ----------------------------------------------------------------------------------


def fmt(value: float | int | None, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def ratio(a: float | None, b: float | None, higher_is_better: bool = True) -> str:
    if not a or not b:
        return "n/a"
    return f"{(a / b if higher_is_better else b / a):.2f}x"


def median_of(values: Any) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def cost(plain: float | None, traced: float | None, higher_is_better: bool = True) -> str:
    """How much worse the traced figure is, in percent of the plain one (negative: better)."""
    if not plain or not traced:
        return "n/a"
    worse = (plain - traced) / plain if higher_is_better else (traced - plain) / plain
    return f"{worse * 100:+.1f}%"


ROWS: list[tuple[str, str, int, bool, str]] = [
    # label, field, digits, higher is better, target
    ("HTTP `add` requests/s, best run", "http_rps", 0, True, "rondo ≥ 0.95x floor, ≥ 3x mcp"),
    ("HTTP `add` requests/s, median run", "http_rps_median", 0, True, "the same"),
    ("HTTP `add` p50 latency (ms)", "http_p50_ms", 2, False, ""),
    ("HTTP `add` p99 latency (ms)", "http_p99_ms", 2, False, ""),
    ("HTTP `add` bad responses", "http_bad", 0, False, "0"),
    ("HTTP MRTR `ask_color` flows/s, best run", "mrtr_flows_per_s", 0, True,
     "rondo ≥ 0.75x floor, ≥ 5x mcp"),
    ("HTTP MRTR `ask_color` flows/s, median run", "mrtr_median", 0, True, "the same"),
    ("HTTP MRTR bad responses", "mrtr_bad", 0, False, "0"),
    ("HTTP `add` server CPU per request (us), median run", "http_cpu_us", 1, False, ""),
    ("HTTP MRTR server CPU per flow (us), median run", "mrtr_cpu_us", 1, False, ""),
    ("stdio `add` requests/s, best run", "stdio_rps", 0, True, "rondo ≥ 0.95x floor"),
    ("stdio `add` requests/s, median run", "stdio_median", 0, True, "the same"),
    ("stdio `add` server CPU per request (us), median run", "stdio_cpu_us", 1, False, ""),
    ("cold start, stdio, median (ms)", "cold_start_ms", 0, False, "rondo ≤ 100 ms"),
    ("RSS idle, HTTP (MB)", "rss_idle_mb", 1, False, ""),
    ("peak RSS after HTTP load (MB)", "rss_peak_mb", 1, False, "rondo ≤ 40 MB"),
]


def table(results: dict[str, Measured]) -> str:
    names = list(results)
    header = ["metric", *(TARGETS[n].label for n in names)]
    with_ratio = "rondo" in results and "mcp" in results
    with_floor = "rondo" in results and "floor" in results
    if with_ratio:
        header.append("rondo vs mcp")
    if with_floor:
        header.append("rondo / floor")
    with_tracing = "rondo" in results and "rondo-tracing" in results
    if with_tracing:
        header.append("tracing cost (goal < 5%)")
    header.append("target")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, key, digits, higher, goal in ROWS:
        cells = [label, *(fmt(getattr(results[n], key), digits) for n in names)]
        if with_ratio:
            rondo, mcp = getattr(results["rondo"], key), getattr(results["mcp"], key)
            cells.append(ratio(rondo, mcp, higher) if "bad" not in key else "")
        if with_floor:
            rondo, floor = getattr(results["rondo"], key), getattr(results["floor"], key)
            cells.append(ratio(rondo, floor, higher) if "bad" not in key else "")
        if with_tracing:
            plain, traced = getattr(results["rondo"], key), getattr(results["rondo-tracing"], key)
            cells.append(cost(plain, traced, higher) if "bad" not in key else "")
        cells.append(goal)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cpu_ticks(stat: str | None = None) -> tuple[int, int] | None:
    """(stolen, all) CPU ticks of the whole machine so far, from the first line of /proc/stat
    (`steal` is time the hypervisor gave this VM's CPUs to someone else); None off Linux."""
    try:
        line = (stat if stat is not None else Path("/proc/stat").read_text()).splitlines()[0]
        fields = [int(x) for x in line.split()[1:]]
    except (OSError, IndexError, ValueError):
        return None
    if len(fields) < 8:
        return None
    return fields[7], sum(fields[:8])  # user..steal; guest time is already inside user


def stolen_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of the machine's CPU time stolen between two `cpu_ticks` readings."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def machine(load: tuple[float, float, float], stolen: float | None = None) -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    before = ", ".join(f"{x:.2f}" for x in load)
    # Stolen time is the one sign, from inside a VM, that its neighbours took the cores: a run
    # with a few percent of it reads slower and noisier than a quiet one, whatever the code.
    steal = "" if stolen is None else f"; CPU time stolen by the hypervisor during the run: {stolen:.1%}"
    return (
        f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}; "
        f"load average before the run (other jobs): {before}{steal}"
    )


def report(
    results: dict[str, Measured], args: argparse.Namespace, load: tuple[float, float, float],
    stolen: float | None = None,
) -> str:
    notes = [f"- {TARGETS[n].label}: {note}" for n, m in results.items() for note in m.notes]
    pin = "server on CPU 0, wrk / stdio driver on CPU 1" if pinned(0) else "no pinning (1 CPU)"
    return "\n".join(
        [
            f"# Benchmark results ({time.strftime('%Y-%m-%d %H:%M %Z')})",
            "",
            f"Machine: {machine(load, stolen)}. Pinning: {pin}.",
            f"HTTP: wrk -t{args.connections} -c{args.connections}, {args.repeat} rounds, each by a "
            f"fresh server process: {args.warmup:g} s warm-up then {args.duration:g} s measured, "
            "per workload; the best and the median run (latencies are the best run's; bad "
            "responses summed over all runs). stdio: "
            f"the best and the median of {args.repeat} runs of {args.stdio_seconds:g} s of "
            "sequential requests, each by a fresh server process after 200 warm-up. Cold start: "
            f"median of {args.cold_runs} spawns after one unmeasured spawn. Every measurement is "
            "interleaved: each round runs every target in turn, so all are measured in the same "
            "spells of machine load. "
            f"All targets: one process, JSON responses, the {VERSION} wire (per-request `_meta`, "
            "no handshake, no session).",
            "",
            table(results),
            *([""] + notes if notes else []),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", default="floor,rondo,mcp,fastmcp")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measured run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up per run")
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument(
        "--repeat", type=int, default=3, help="measured runs per workload; the best one counts"
    )
    parser.add_argument("--stdio-seconds", type=float, default=1.0)
    parser.add_argument("--cold-runs", type=int, default=10)
    parser.add_argument("--skip-mrtr", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.md")
    args = parser.parse_args(argv)

    names = [n.strip() for n in args.targets.split(",") if n.strip()]
    unknown = set(names) - set(TARGETS)
    if unknown:
        parser.error(f"unknown targets {sorted(unknown)}; choose from {sorted(TARGETS)}")
    if shutil.which("wrk") is None:
        parser.error("wrk is not installed (apt-get install -y wrk, or run scripts/bench.sh)")
    load_before = os.getloadavg()
    ticks_before = cpu_ticks()
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name in names:
        if name in ANCHOR_REQUIREMENTS:
            ensure_anchor(name)

    results = {name: Measured() for name in names}
    for step, fn in (
        ("http", measure_http),
        ("stdio", measure_stdio),
        ("cold start", measure_cold_start),
    ):
        print(f"{step}: {', '.join(TARGETS[n].label for n in names)} (interleaved) ...", flush=True)
        try:
            fn(names, args, results)
        except Exception as exc:  # one broken step must not hide the others' figures
            for name in names:
                results[name].notes.append(f"{step} failed: {exc}")
            print(f"  {step} failed: {exc}", flush=True)

    text = report(results, args, load_before, stolen_share(ticks_before, cpu_ticks()))
    print()
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(
        json.dumps({n: asdict(m) for n, m in results.items()}, indent=2)
    )
    print(f"written to {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 1 if any(m.notes for m in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
