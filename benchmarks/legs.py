"""Server CPU per request of each MRTR leg, served: where a two-leg flow's cost goes.

    .venv/bin/python benchmarks/legs.py              # 3 rounds, 3 s per measured load
    .venv/bin/python benchmarks/legs.py --rounds 5 --duration 4

`run.py` reports a whole flow; this splits it. Each round starts every target afresh, pinned as
in `run.py` (server on CPU 0, wrk on CPU 1), and loads it with one fixed request at a time
(`wrk/post.lua`): `add`, leg 1 of `ask_color` (its answer must be input_required) and leg 2
(the answer with the requestState that server gave on a first leg; must complete). Targets:

  floor        benchmarks/floor.py: the same answers, no checks, nothing sealed
  rondo        benchmarks/server.py
  floor-sealed benchmarks/floor_sealed.py: the floor plus rondo's token codec (sealed on leg 1,
               opened and verified on leg 2), no other MCP work
  floor-minseal benchmarks/floor_minseal.py: the floor plus the cheapest sealing I could write
               (one HMAC over the claims and params, one base64, no key id): a lower bound
  rondo-clear  benchmarks/server_clear_state.py: rondo with its state carried as plain JSON,
               unsigned (never deployable): rondo less the sealing and opening
  rondo-minseal benchmarks/server_minseal.py: rondo with floor-minseal's sealing, every other
               MCP check kept: the best a flow in rondo could do with the cheapest codec

The figure is the server's user + system CPU over the measured run divided by the requests wrk
counted (`/proc/PID/stat`), the median round; requests/s beside it. floor-sealed less the floor
is what the codec costs alone (floor-minseal less the floor: what any sealing costs at the
least); rondo less rondo-clear is what sealing and opening cost in rondo;
rondo-clear less the floor is every other MCP cost of a leg.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from typing import Any

import run
from run import HERE, ROOT, Target

TARGETS = {
    "floor": run.TARGETS["floor"],
    "rondo": run.TARGETS["rondo"],
    "floor-sealed": Target("floor-sealed", "floor, state sealed", ROOT / ".venv/bin/python",
                           HERE / "floor_sealed.py"),
    "floor-minseal": Target("floor-minseal", "floor, least sealing", ROOT / ".venv/bin/python",
                            HERE / "floor_minseal.py"),
    "rondo-clear": Target("rondo-clear", "rondo, state in clear", ROOT / ".venv/bin/python",
                          HERE / "server_clear_state.py"),
    "rondo-minseal": Target("rondo-minseal", "rondo, least sealing", ROOT / ".venv/bin/python",
                            HERE / "server_minseal.py"),
}
PATHS = ("add", "leg1", "leg2")


def bodies(port: int) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """Per path: the tool (for Mcp-Name), the resultType its answers must have, the message."""
    first = {"name": "ask_color", "arguments": {}}
    leg1 = run.request(1, "tools/call", first, run.ELICIT_CAPS)
    answer = run.post(port, leg1, "ask_color")["result"]
    if answer.get("resultType") != "input_required":
        raise RuntimeError(f"leg 1 did not ask: {answer}")
    params: dict[str, Any] = {**first, "inputResponses": {
        next(iter(answer["inputRequests"])): {"action": "accept", "content": {"color": "blue"}}}}
    if "requestState" in answer:
        params["requestState"] = answer["requestState"]
    leg2 = run.request(2, "tools/call", params, run.ELICIT_CAPS)
    return {"add": ("add", "complete", run.request(1, "tools/call", run.ADD_PARAMS)),
            "leg1": ("ask_color", "input_required", leg1),
            "leg2": ("ask_color", "complete", leg2)}


def wrk_env(tool: str, result_type: str, message: dict[str, Any]) -> dict[str, str]:
    return {"WRK_BODY": json.dumps(message), "WRK_HEADERS": run.wrk_headers(tool),
            "WRK_RESULT": result_type}


def one_round(target: Target, args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """(server CPU us per request, requests/s) of each path, from one fresh server."""
    run.RESULTS.mkdir(exist_ok=True)
    server = run.HttpServer(target)
    try:
        run.wait_http_ready(server.port, server.proc)
        found: dict[str, tuple[float, float]] = {}
        for path, (tool, result_type, message) in bodies(server.port).items():
            env = wrk_env(tool, result_type, message)
            run.wrk("post.lua", server.port, env, args, args.warmup)
            numbers = run.measured_wrk(server, "post.lua", env, args, "requests")
            if numbers.get("bad_responses", 0) or numbers.get("non2xx", 0):
                raise RuntimeError(f"{target.name} {path}: bad answers under load")
            found[path] = (numbers["cpu_us"], numbers["rps"])
        return found
    finally:
        server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured load")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--targets", default=",".join(TARGETS))
    args = parser.parse_args(argv)
    names = args.targets.split(",")
    runs: dict[str, list[dict[str, tuple[float, float]]]] = {name: [] for name in names}
    for _ in range(args.rounds):  # interleaved, as in run.py
        for name in names:
            runs[name].append(one_round(TARGETS[name], args))
    print(f"server CPU per request, us (median of {args.rounds} rounds; requests/s in brackets)")
    print("| target | " + " | ".join(PATHS) + " | leg1 + leg2 |")
    print("|---|" + "---|" * (len(PATHS) + 1))
    for name in names:
        cpu = {p: statistics.median(r[p][0] for r in runs[name]) for p in PATHS}
        rps = {p: statistics.median(r[p][1] for r in runs[name]) for p in PATHS}
        cells = [f"{cpu[p]:.1f} ({rps[p]:,.0f})" for p in PATHS]
        print(f"| {name} | " + " | ".join(cells) + f" | {cpu['leg1'] + cpu['leg2']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
