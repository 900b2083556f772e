"""Upstreams nobody here wrote, each behind a real `rondo proxy --http` process, walked by
clients nobody here wrote and by `rondo.Client`, on both downstream eras.

    .venv/bin/python interop/gateway_peers_check.py [--clients rondo,ts,python,mcpdo]

Upstreams (pinned):
- `everything`: the official reference server `@modelcontextprotocol/server-everything`
  2026.8.31 (interop/everything/package.json; TypeScript SDK 1.x, a 2025-11-25 server over
  Streamable HTTP with sessions): its non-interactive tools, a resource, a prompt, the lists.
  Its interactive tools (they ask mid-call) need the legacy bridge: interop/bridge_everything_check.py.
- `python-sdk`: benchmarks/anchors/mcp_server.py on the official Python SDK (`mcp` 2.3.0,
  `MCPServer`, stateless JSON, 2026-07-28): `add`, and `ask_color`, whose resolver answers
  `input_required` (MRTR), relayed through the proxy with its state sealed in the proxy's own.
- `fastmcp`: benchmarks/anchors/fastmcp_server.py on FastMCP 4.1.6 (2026-07-28): `add`, and
  `ask_color` returning `InputRequiredResult` itself.

Clients: `rondo.Client` in this process; the official TypeScript client 2.4.0
(interop/gateway_peers_ts.mjs); the official Python client (`mcp` 2.3.0,
interop/gateway_peers_py.py); the Inspector CLI `mcpdo` 2.12.0. Each on 2026-07-28 and on
2025-11-25 (the handshake): on the legacy era the proxy asks the client over its session and
retries upstream itself. Every check line names the upstream, the era the upstream speaks (as
`rondo.Client` negotiates it, the same negotiation the proxy makes) and the downstream era.
Exits 0 when every check passes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from harness import free_port

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("RONDO_PY", str(ROOT / ".venv" / "bin" / "python"))
RONDO = str(Path(PYTHON).parent / "rondo")
NODE = os.environ.get("RONDO_NODE", shutil.which("node") or "node")
MCP_PY = os.environ.get("RONDO_MCP_PY", str(ROOT / ".cache" / "interop-mcp-venv" / "bin" / "python"))
FASTMCP_PY = os.environ.get("RONDO_FASTMCP_PY",
                            str(ROOT / ".cache" / "interop-fastmcp-venv" / "bin" / "python"))
EVERYTHING = ROOT / "interop/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
MCPDO = str(ROOT / "interop" / "node_modules" / ".bin" / "mcpdo")
ERAS = {"modern": "2026-07-28", "legacy": "2025-11-25"}
# How the upstream's input_required reaches each downstream era through the proxy.
ASKED = {"modern": "(upstream input_required relayed as the proxy's round, state sealed)",
         "legacy": "(upstream input_required asked over the client's session by the proxy)"}
# What each upstream serves that every client checks.
EXPECT = {
    "everything": {"tools": ["echo", "get-sum"], "era": "legacy"},
    "python-sdk": {"tools": ["add", "ask_color"], "era": "modern"},
    "fastmcp": {"tools": ["add", "ask_color"], "era": "modern"},
}


def wait_http(url: str, proc: subprocess.Popen[bytes], what: str, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text()[-800:]}")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not start within 30 s")


@contextmanager
def process(argv: list[str], url: str, what: str, logs: Path,
            env: dict[str, str] | None = None) -> Iterator[str]:
    log = logs / f"{what}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, cwd=ROOT)
    try:
        wait_http(url, proc, what, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def upstream(name: str, stack: ExitStack, logs: Path) -> str:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    if name == "everything":
        argv = [NODE, str(EVERYTHING), "streamableHttp"]
        return stack.enter_context(process(argv, url, "up-everything", logs, {"PORT": str(port)}))
    python, script = {"python-sdk": (MCP_PY, "mcp_server.py"),
                      "fastmcp": (FASTMCP_PY, "fastmcp_server.py")}[name]
    argv = [python, str(ROOT / "benchmarks" / "anchors" / script), "http", str(port)]
    return stack.enter_context(process(argv, url, f"up-{name}", logs))


def front(name: str, up_url: str, stack: ExitStack, logs: Path) -> str:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [RONDO, "proxy", up_url, "--http", f"127.0.0.1:{port}", "--timeout", "20"]
    return stack.enter_context(process(argv, url, f"proxy-{name}", logs))


# -- rondo.Client ------------------------------------------------------------------------------


async def upstream_era(url: str) -> str:
    """The era the upstream speaks, negotiated as the proxy negotiates it."""
    from rondo.client import Client

    async with Client(url, timeout=20) as client:
        return f"{client.era} {client.protocol_version}"


async def rondo_walk(name: str, url: str, era: str) -> list[str]:
    from rondo.client import Client, ElicitResult

    def green(request: Any) -> Any:
        return ElicitResult("accept", {"color": "green"})

    done = []
    async with Client(url, protocol=ERAS[era], on_elicit=green, timeout=20) as client:
        assert client.era == era, client.era
        tools = {t.name for t in await client.list_tools()}
        assert set(EXPECT[name]["tools"]) <= tools, tools
        done.append(f"tools/list ({len(tools)} tools)")
        if name == "everything":
            assert (await client.call_tool("echo", {"message": "hi"})).text == "Echo: hi"
            got = (await client.call_tool("get-sum", {"a": 2, "b": 3})).text
            assert got == "The sum of 2 and 3 is 5.", got
            done.append("tools echo, get-sum")
            resources = await client.list_resources()
            assert resources, "no resources listed"
            read = await client.read_resource(resources[0].uri)
            assert read.contents, read
            done.append(f"resources/list ({len(resources)}), resources/read {resources[0].uri}")
            prompt = await client.get_prompt("simple-prompt")
            assert prompt.messages[0].content["text"] == "This is a simple prompt without arguments."
            done.append("prompts/get simple-prompt")
        else:
            assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
            got = (await client.call_tool("ask_color")).text
            assert got == "green", got
            done.append("add; ask_color " + ASKED[era])
    return done


# -- mcpdo (the Inspector CLI) -----------------------------------------------------------------


class Mcpdo:
    """One private mcpdo daemon with its own HOME; `run(...)` returns the parsed JSON output."""

    def __init__(self, home: Path) -> None:
        self.env = {**os.environ, "HOME": str(home), "MCP_INSPECTOR_SECRET_STORE": "memory",
                    "NO_COLOR": "1"}
        out = subprocess.run([MCPDO, "private"], env=self.env, capture_output=True, text=True,
                             timeout=60, check=True).stdout
        for line in out.splitlines():
            if line.startswith("export "):
                key, _, value = line[len("export "):].partition("=")
                self.env[key] = value.strip("'\"")

    def run(self, *args: str) -> Any:
        proc = subprocess.run([MCPDO, "--format", "json", *args], env=self.env,
                              capture_output=True, text=True, timeout=90)
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"mcpdo {' '.join(args)}: rc={proc.returncode} "
                                 f"stdout={proc.stdout[-500:]!r} stderr={proc.stderr[-800:]!r}"
                                 ) from None

    def stop(self) -> None:
        subprocess.run([MCPDO, "daemon", "stop"], env=self.env, capture_output=True, timeout=30)


def text_of(result: Any) -> str:
    if "content" in result:
        return "".join(b.get("text", "") for b in result["content"])
    if "messages" in result:
        return str(result["messages"][0]["content"]["text"])
    return str(result["contents"][0].get("text", ""))


def mcpdo_walks(fronts: dict[str, str], era: str) -> list[tuple[str, str]]:
    home = Path(tempfile.mkdtemp(prefix=f"rondo-gw-mcpdo-{era}-"))
    cli: Mcpdo | None = None
    done: list[tuple[str, str]] = []
    try:
        config = home / "servers.json"
        config.write_text(json.dumps({"mcpServers": {
            name: {"type": "streamable-http", "url": url} for name, url in fronts.items()}}))
        cli = Mcpdo(home)
        for name in fronts:
            out = cli.run("--config", str(config), "connect", name, "--era", era)
            assert out.get("protocolEra") == era, out
            conn = f"@{name}"
            tools = {t["name"] for t in cli.run(conn, "tools/list")["tools"]}
            assert set(EXPECT[name]["tools"]) <= tools, tools
            if name == "everything":
                got = text_of(cli.run(conn, "tools/call", "get-sum", "a:=2", "b:=3"))
                assert got == "The sum of 2 and 3 is 5.", got
                got = text_of(cli.run(conn, "prompts/get", "simple-prompt"))
                assert got == "This is a simple prompt without arguments.", got
                done.append((name, "tools/list, get-sum, prompts/get simple-prompt"))
            else:
                assert text_of(cli.run(conn, "tools/call", "add", "a:=2", "b:=3")) == "5"
                out = cli.run(conn, "tools/call", "ask_color")
                assert "elicitationPending" in out, f"expected a parked question, got {out}"
                ask = out["elicitationPending"]
                got = text_of(cli.run("elicitation/respond", ask["elicitationId"], "color:=blue"))
                assert got == "blue", got
                done.append((name, "tools/list, add, ask_color " + ASKED[era]
                             + ", answered with elicitation/respond"))
    finally:
        if cli is not None:
            cli.stop()
        shutil.rmtree(home, ignore_errors=True)
    return done


# -- the run -----------------------------------------------------------------------------------


def sub_walk(argv: list[str], fronts: dict[str, str], era: str) -> list[tuple[str, str]]:
    """A walker in another runtime: prints one JSON line per check, `{"upstream", "check"}`."""
    proc = subprocess.run([*argv, "--era", era, json.dumps(fronts)], capture_output=True,
                          text=True, timeout=180, cwd=ROOT)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0:
        raise AssertionError(f"{argv[-1]} --era {era}: rc={proc.returncode}\n"
                             f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    return [(line["upstream"], line["check"]) for line in lines]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", default="rondo,ts,python,mcpdo")
    parser.add_argument("--upstreams", default=",".join(EXPECT))
    args = parser.parse_args(argv)
    clients = args.clients.split(",")
    names = args.upstreams.split(",")
    logs = ROOT / "results" / "gateway-peers"
    logs.mkdir(parents=True, exist_ok=True)
    failed = 0
    with ExitStack() as stack:
        fronts: dict[str, str] = {}
        eras: dict[str, str] = {}
        for name in names:
            up = upstream(name, stack, logs)
            eras[name] = asyncio.run(upstream_era(up))
            assert eras[name].split()[0] == EXPECT[name]["era"], (name, eras[name])
            fronts[name] = front(name, up, stack, logs)

        def report(client: str, era: str, results: list[tuple[str, str]]) -> None:
            for name, check in results:
                print(f"ok   {client} ({era}) -> rondo proxy -> {name} "
                      f"[upstream {eras[name]}]: {check}", flush=True)

        for era in ERAS:
            for client in clients:
                try:
                    if client == "rondo":
                        results = [(name, check) for name in names
                                   for check in asyncio.run(rondo_walk(name, fronts[name], era))]
                    elif client == "ts":
                        results = sub_walk([NODE, str(ROOT / "interop/gateway_peers_ts.mjs")],
                                           fronts, era)
                    elif client == "python":
                        results = sub_walk([MCP_PY, str(ROOT / "interop/gateway_peers_py.py")],
                                           fronts, era)
                    elif client == "mcpdo":
                        results = mcpdo_walks(fronts, era)
                    else:
                        raise SystemExit(f"unknown client {client!r}")
                    missing = set(names) - {name for name, _ in results}
                    assert not missing, f"no checks reported for {sorted(missing)}"
                    report(client, era, results)
                except Exception as exc:  # noqa: BLE001  (every walk reports; the run fails)
                    failed += 1
                    print(f"FAIL {client} ({era}): {type(exc).__name__}: {exc}", flush=True)
    print(f"gateway peers: {'all passed' if not failed else f'{failed} walks failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
