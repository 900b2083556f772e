"""Build time and memory of an MCP server generated from GitHub's REST description (1,223
operations; tests/peers/openapi, installed by scripts/setup.sh): rondo's `from_openapi` against
FastMCP's `FastMCP.from_openapi` on the same document in the same run, plus what each built.

    .venv/bin/python benchmarks/openapi_build.py [--repeat 3] [--before REV]

FastMCP (pinned below) is installed on first use into its own venv under .cache; it is never a
rondo dependency. Each build runs in a fresh process. For rondo: the wall time from reading the
file to a built server, then the first `tools/list` through an in-process client (where a lazy
build translates its schemas), and the growth of the process's resident memory over each span
(imports excluded for every row). Rows: `rondo` (lazy, the default), `rondo-eager`
(`lazy=False`, every schema at build, as before laziness), `rondo@REV` with `--before REV` (that
commit's src/, exported with git archive), and FastMCP, whose figure includes its
`list_tools()` since it builds its tools there. Then the rondo and FastMCP tool lists are
compared: tool count, names, and per tool the argument names, required sets and whether an
output schema is given. Writes benchmarks/results/openapi_build.json (ignored by git).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "tests/peers/openapi/node_modules/@octokit/openapi/generated/api.github.com.json"
FASTMCP_PIN = "fastmcp==4.1.6"
FASTMCP_VENV = ROOT / ".cache" / "openapi-fastmcp-venv"

# One build in a fresh interpreter; prints {"seconds", "rss_mb"} and writes the tool list.
CHILD = r'''
import asyncio, json, sys, time

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

which, document, out = sys.argv[1:4]
if which.startswith("rondo"):
    import httpx
    client = httpx.AsyncClient(base_url="https://api.github.com")
    from rondo.client import Client
    from rondo.openapi import from_openapi
    options = {"lazy": False} if which == "rondo-eager" else {}

    async def listing(server):
        async with Client(server) as mcp:
            return await mcp.list_tools()

    before, start = rss(), time.perf_counter()
    server = from_openapi(document, client, **options)
    seconds, grown = time.perf_counter() - start, rss() - before
    listed = asyncio.run(listing(server))
    total, total_grown = time.perf_counter() - start, rss() - before
    tools = [(t.name, t.input_schema, t.output_schema) for t in listed]
    extra = {"list_seconds": total - seconds, "total_seconds": total,
             "total_rss_mb": total_grown / 1e6}
else:
    import httpx2  # FastMCP 4's HTTP client
    from fastmcp import FastMCP
    client = httpx2.AsyncClient(base_url="https://api.github.com")
    before, start = rss(), time.perf_counter()
    with open(document, "rb") as f:
        spec = json.loads(f.read())
    server = FastMCP.from_openapi(openapi_spec=spec, client=client)
    listed = asyncio.run(server.list_tools())
    seconds, grown = time.perf_counter() - start, rss() - before
    tools = [(t.name, t.parameters, t.output_schema) for t in listed]
    extra = {"list_seconds": 0.0, "total_seconds": seconds, "total_rss_mb": grown / 1e6}
with open(out, "w") as f:
    json.dump(tools, f)
print(json.dumps({"seconds": seconds, "rss_mb": grown / 1e6, "tools": len(tools), **extra}))
'''


def fastmcp_python() -> Path:
    python = FASTMCP_VENV / "bin" / "python"
    check = [str(python), "-c", "import importlib.metadata as m, sys; "
             f"sys.exit(m.version('fastmcp') != {FASTMCP_PIN.split('==')[1]!r})"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    print(f"installing {FASTMCP_PIN} into {FASTMCP_VENV}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(FASTMCP_VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    FASTMCP_PIN], check=True)
    return python


def build(python: Path, which: str, out: Path, src: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src) if which.startswith("rondo") else ""}
    done = subprocess.run([str(python), "-c", CHILD, which, str(DOCUMENT), str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{which} build failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def compare(ours: list, theirs: list) -> dict:
    mine = {key(n): (n, i, o) for n, i, o in ours}
    other = {key(n): (n, i, o) for n, i, o in theirs}
    # FastMCP cuts long names: such a name matches the one rondo name it begins.
    for k in sorted(set(other) - set(mine)):
        longer = [m for m in set(mine) - set(other) if m.startswith(k)]
        if len(longer) == 1:
            other[longer[0]] = other.pop(k)
    both = sorted(set(mine) & set(other))
    args_differ, required_differ, output_differ, examples = [], [], [], []
    for k in both:
        (n1, i1, o1), (_, i2, o2) = mine[k], other[k]
        p1, p2 = list(i1.get("properties", {})), list(i2.get("properties", {}))
        if sorted(p1) != sorted(p2):
            args_differ.append(n1)
            if len(examples) < 5:
                examples.append({"tool": n1, "rondo_only": sorted(set(p1) - set(p2)),
                                 "fastmcp_only": sorted(set(p2) - set(p1))})
        if sorted(i1.get("required", [])) != sorted(i2.get("required", [])):
            required_differ.append(n1)
        if (o1 is None) != (o2 is None):
            output_differ.append(n1)
    return {
        "rondo_tools": len(ours), "fastmcp_tools": len(theirs), "matched": len(both),
        "only_rondo": sorted(mine[k][0] for k in set(mine) - set(other)),
        "only_fastmcp": sorted(other[k][0] for k in set(other) - set(mine)),
        "names_differ": sum(mine[k][0] != other[k][0] for k in both),
        "name_examples": [(mine[k][0], other[k][0]) for k in both
                          if mine[k][0] != other[k][0]][:3],
        "argument_names_differ": len(args_differ), "argument_examples": examples,
        "required_differ": len(required_differ), "required_examples": required_differ[:5],
        "output_schema_presence_differs": len(output_differ),
        "output_examples": output_differ[:5],
        "rondo_schema_bytes": sum(len(json.dumps(i)) for _, i, _ in ours),
        "fastmcp_schema_bytes": sum(len(json.dumps(i)) for _, i, _ in theirs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also build with this commit's src/")
    args = parser.parse_args()
    if not DOCUMENT.exists():
        raise SystemExit("tests/peers/openapi is not installed: run bash scripts/setup.sh")
    ours = ROOT / ".venv" / "bin" / "python"
    rows = {"rondo": (ours, ROOT / "src"), "rondo-eager": (ours, ROOT / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "src"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            rows[f"rondo@{args.before}"] = (ours, Path(tmp) / "src")
        rows["fastmcp"] = (fastmcp_python(), Path(tmp))
        runs: dict[str, list[dict]] = {which: [] for which in rows}
        lists = {which: Path(tmp) / f"{which}.json" for which in runs}
        for _ in range(args.repeat):
            for which, (python, src) in rows.items():  # interleaved: drift hits every row
                runs[which].append(build(python, which, lists[which], src))
        tools = {which: json.loads(path.read_text()) for which, path in lists.items()}
    summary = {which: {"seconds_median": statistics.median(r["seconds"] for r in rs),
                       "seconds_best": min(r["seconds"] for r in rs),
                       "rss_mb_median": statistics.median(r["rss_mb"] for r in rs),
                       "list_seconds_median": statistics.median(r["list_seconds"] for r in rs),
                       "total_seconds_median": statistics.median(r["total_seconds"] for r in rs),
                       "total_rss_mb_median": statistics.median(r["total_rss_mb"] for r in rs),
                       "tools": rs[0]["tools"]} for which, rs in runs.items()}
    diff = compare(tools["rondo"], tools["fastmcp"])
    same = tools["rondo"] == tools["rondo-eager"]
    print(f"GitHub REST description ({DOCUMENT.stat().st_size / 1e6:.1f} MB), {args.repeat} "
          "builds each, fresh process per build (medians; FastMCP's build includes its listing)")
    print(f"{'':16} {'tools':>6} {'build s':>8} {'best':>6} {'+RSS MB':>8} {'1st list s':>11} "
          f"{'build+list s':>13} {'+RSS MB':>8}")
    for which, s in summary.items():
        print(f"{which:16} {s['tools']:>6} {s['seconds_median']:>8.2f} {s['seconds_best']:>6.2f} "
              f"{s['rss_mb_median']:>8.1f} {s['list_seconds_median']:>11.2f} "
              f"{s['total_seconds_median']:>13.2f} {s['total_rss_mb_median']:>8.1f}")
    r, e, f = summary["rondo"], summary["rondo-eager"], summary["fastmcp"]
    print(f"lazy build against eager: {e['seconds_median'] / r['seconds_median']:.1f}x faster, "
          f"{r['rss_mb_median'] / e['rss_mb_median']:.2f} of the memory")
    print(f"rondo build+list against fastmcp: "
          f"{f['total_seconds_median'] / r['total_seconds_median']:.1f}x faster, "
          f"{r['total_rss_mb_median'] / f['total_rss_mb_median']:.2f} of the memory")
    print(f"lazy and eager servers list the same tools and schemas: {same}")
    print(f"tools matched by name (case and punctuation ignored): {diff['matched']}; "
          f"names spelled differently: {diff['names_differ']} e.g. {diff['name_examples'][:1]}")
    print(f"unmatched: rondo {len(diff['only_rondo'])} e.g. {diff['only_rondo'][:2]}, "
          f"fastmcp {len(diff['only_fastmcp'])} e.g. {diff['only_fastmcp'][:2]}")
    print(f"argument names differ: {diff['argument_names_differ']} e.g. "
          f"{diff['argument_examples'][:2]}")
    print(f"required sets differ: {diff['required_differ']} e.g. {diff['required_examples']}")
    print(f"output schema given by one only: {diff['output_schema_presence_differs']} e.g. "
          f"{diff['output_examples']}")
    print(f"input schema bytes: rondo {diff['rondo_schema_bytes']:,}, "
          f"fastmcp {diff['fastmcp_schema_bytes']:,}")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "openapi_build.json").write_text(json.dumps(
        {"summary": summary, "runs": runs, "diff": diff, "lazy_equals_eager": same}, indent=2))


if __name__ == "__main__":
    main()
