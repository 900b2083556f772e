"""What OAuth costs per request: HTTP `add` with a JWT on every request, beside no auth.

Starts the test authorization server (tests/authserver, oauth2-mock-server on loopback), then
benchmarks/auth_server.py twice (without and with a ResourceServer), and drives each with wrk
exactly as benchmarks/run.py does (`post.lua`, server on CPU 0, wrk on CPU 1). The rounds
alternate between the two, each by a fresh server process; the share is that of the median
rounds. The
client reuses one access token, as real clients do, so after the first request the token is
served from the verified-token cache (SHA-256 digest -> principal). It also times, in process,
a cold verification (signature, claims) of fresh tokens, which is what a cache miss costs.

Run: .venv/bin/python benchmarks/bench_auth.py [--duration 5 --repeat 5 --connections 2]
Target (issue 10): with auth, under 15% fewer requests/s than without.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from run import (  # noqa: E402
    ADD_PARAMS,
    RESULTS,
    SERVER_CPU,
    free_port,
    http_headers,
    pinned,
    request,
    stop,
    wrk,
    wrk_numbers,
)

from tests.authserver.fixture import AuthServer  # noqa: E402


def wait_ready(port: int, proc: subprocess.Popen[Any], token: str | None) -> None:
    headers = http_headers("tools/call", "add")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps(request(1, "tools/call", ADD_PARAMS)).encode()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited")
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", body, headers)
            with urllib.request.urlopen(req, timeout=5) as resp:
                answer = json.loads(resp.read())
            assert answer["result"]["content"][0]["text"] == "3", answer
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not answer")


class Target:
    """One fixture server process (without or with auth) and the wrk environment for it."""

    def __init__(self, label: str, issuer: str | None, mint: Any) -> None:
        self.label = label
        self.port = port = free_port()
        RESULTS.mkdir(exist_ok=True)
        self.log = open(RESULTS / f"auth-{label}.log", "wb")  # noqa: SIM115
        cmd = [sys.executable, str(HERE / "auth_server.py"), "http", str(port)]
        if issuer is not None:
            cmd.append(issuer)  # aud must name this endpoint: minted after the port is known
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, preexec_fn=pinned(SERVER_CPU),
                                     cwd=ROOT)
        jwt = mint(port) if mint is not None else None
        wait_ready(port, self.proc, jwt)
        headers = http_headers("tools/call", "add")
        if jwt:
            headers["Authorization"] = f"Bearer {jwt}"
        self.env = {"WRK_BODY": json.dumps(request(1, "tools/call", ADD_PARAMS)),
                    "WRK_HEADERS": "\n".join(f"{k}: {v}" for k, v in headers.items())}

    def run(self, args: argparse.Namespace, seconds: float) -> dict[str, float]:
        return wrk_numbers(wrk("post.lua", self.port, self.env, args, seconds))

    def close(self) -> None:
        stop(self.proc)
        self.log.close()


def measure_side_by_side(configs: list[tuple[str, str | None, Any]],
                         args: argparse.Namespace) -> dict[str, list[dict[str, float]]]:
    """`--repeat` rounds, each over both configurations in turn, each by a freshly started
    server (warm-up, then one measured run): the load on a shared machine moves over minutes,
    and one process of the same code runs up to a third faster or slower than the next, so
    both get the same spells and neither hangs on one lucky start."""
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in configs}
    for _ in range(args.repeat):
        for label, issuer, mint in configs:
            target = Target(label, issuer, mint)
            try:
                target.run(args, args.warmup)
                runs[label].append(target.run(args, args.duration))
            finally:
                target.close()
    return runs


def summary(runs: list[dict[str, float]]) -> dict[str, float]:
    """The best and the median round, and the bad responses of all of them."""
    ranked = sorted(runs, key=lambda r: r.get("rps", 0))
    out = dict(ranked[-1])
    out["median"] = statistics.median(r.get("rps", 0) for r in runs)
    out["bad"] = sum(r.get("bad_responses", 0) + r["non2xx"] + r["socket_errors"] for r in runs)
    return out


def cold_verify_us(auth: AuthServer, count: int) -> float:
    """Microseconds to verify one fresh JWT (keys already fetched, no cache hit)."""
    from rondo.auth import ResourceServer

    resource = "http://127.0.0.1:1/mcp"
    rs = ResourceServer(resource=resource, issuer=auth.issuer, token_cache_size=0)
    tokens = [auth.mint(aud=resource, scope="mcp:use") for _ in range(count)]

    async def run() -> float:
        await rs.authenticate(tokens[0])  # fetch the keys once
        start = time.perf_counter()
        for t in tokens:
            await rs.authenticate(t)
        return (time.perf_counter() - start) / len(tokens) * 1e6

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--cold-tokens", type=int, default=200)
    args = parser.parse_args(argv)
    with AuthServer.start() as auth:
        runs = measure_side_by_side([
            ("off", None, None),
            ("on", auth.issuer, lambda port: auth.mint(aud=f"http://127.0.0.1:{port}/mcp",
                                                       scope="mcp:use")),
        ], args)
        cold = cold_verify_us(auth, args.cold_tokens)
    plain, signed = summary(runs["off"]), summary(runs["on"])
    cost = 1 - signed["median"] / plain["median"]
    best_cost = 1 - signed["rps"] / plain["rps"]
    print("| HTTP `add` | no auth | JWT on every request (cached) |")
    print("|---|---|---|")

    def change(c: float) -> str:
        return f"{c:.1%} fewer" if c >= 0 else f"{-c:.1%} more: noise, re-run"

    print(f"| requests/s, median round | {plain['median']:,.0f} | {signed['median']:,.0f} "
          f"({change(cost)}) |")
    print(f"| requests/s, best round | {plain['rps']:,.0f} | {signed['rps']:,.0f} "
          f"({change(best_cost)}) |")
    print(f"| p50 / p99 latency (ms), best round | {plain['p50']:.2f} / {plain['p99']:.2f} | "
          f"{signed['p50']:.2f} / {signed['p99']:.2f} |")
    print(f"| bad responses | {plain['bad']:.0f} | {signed['bad']:.0f} |")
    print("\nRounds (no auth / auth, requests/s): " + ", ".join(
        f"{a.get('rps', 0):,.0f} / {b.get('rps', 0):,.0f}"
        for a, b in zip(runs["off"], runs["on"], strict=True)))
    print(f"\nCold verification of a fresh RS256 JWT (cache miss): {cold:.0f} us")
    print(f"Target: under 15% fewer requests/s with auth (median rounds): "
          f"{'met' if cost < 0.15 else 'NOT met'}")
    return 0 if plain["bad"] == 0 and signed["bad"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
