"""The MCP Inspector CLI `mcpdo` (@modelcontextprotocol/inspector 2.12.0, pinned in
interop/package.json) walks examples/preferences.py in both eras over stdio and HTTP.

    .venv/bin/python interop/mcpdo_check.py [--era modern|legacy] [--stdio | --http]

Per era and transport: its own private mcpdo daemon and HOME, a read-only config naming the
example, `connect --era ...`, then every flow: the tool, the resource and the prompt
(form elicitation), two questions one after the other (profile), a URL elicitation followed by a
state-only round (connect_calendar), and a declined answer. mcpdo parks each question
(`elicitationPending`); the script answers with `elicitation/respond`. In modern mode the
answers come back as MRTR retries, in legacy mode over the session's back-channel: the same
handlers serve both. Exits 0 when every check passes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from harness import free_port

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("RONDO_PY", str(ROOT / ".venv" / "bin" / "python"))
EXAMPLE = str(ROOT / "examples" / "preferences.py")
MCPDO = str(ROOT / "interop" / "node_modules" / ".bin" / "mcpdo")


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
        if "MCP_INSPECTOR_DAEMON_DIR" not in self.env:
            raise RuntimeError(f"mcpdo private printed no daemon: {out!r}")

    def run(self, *args: str) -> Any:
        proc = subprocess.run([MCPDO, "--format", "json", *args], env=self.env,
                              capture_output=True, text=True, timeout=90)
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"mcpdo {' '.join(args)}: rc={proc.returncode} "
                                 f"stdout={proc.stdout[-500:]!r} stderr={proc.stderr[-800:]!r}") from None

    def stop(self) -> None:
        subprocess.run([MCPDO, "daemon", "stop"], env=self.env, capture_output=True, timeout=30)


def text_of(result: Any) -> str:
    if "content" in result:
        return "".join(b.get("text", "") for b in result["content"])
    if "messages" in result:
        return result["messages"][0]["content"]["text"]
    return result["contents"][0]["text"]


def pending(out: Any, mode: str) -> dict[str, Any]:
    assert "elicitationPending" in out, f"expected a parked elicitation, got {out}"
    ask = out["elicitationPending"]
    assert ask["mode"] == mode, ask
    return ask  # type: ignore[no-any-return]


def walk(cli: Mcpdo, era: str) -> list[str]:
    done: list[str] = []
    conn = "@prefs"
    info = cli.run("connections/show", conn)
    assert info.get("protocolEra", info.get("connection", {}).get("protocolEra")) == era, info
    done.append(f"connected, era {era}")

    tools = {t["name"] for t in cli.run(conn, "tools/list")["tools"]}
    assert {"favorite_color", "profile", "connect_calendar"} <= tools, tools
    done.append("tools/list")

    ask = pending(cli.run(conn, "tools/call", "favorite_color", "user:=ann"), "form")
    assert ask["message"] == "Which color do you like, ann?", ask
    assert text_of(cli.run("elicitation/respond", ask["elicitationId"], "color:=green")) == "ann likes green."
    done.append("tool favorite_color")

    ask = pending(cli.run(conn, "resources/read", "prefs://bob/color"), "form")
    assert text_of(cli.run("elicitation/respond", ask["elicitationId"], "color:=blue")) == "bob likes blue."
    done.append("resource prefs://bob/color")

    ask = pending(cli.run(conn, "prompts/get", "color_poem", "--prompt-args", "user=cy"), "form")
    got = text_of(cli.run("elicitation/respond", ask["elicitationId"], "color:=red"))
    assert got == "Write a short poem for cy about the color red.", got
    done.append("prompt color_poem")

    ask = pending(cli.run(conn, "tools/call", "profile", "user:=dee"), "form")
    assert "color" in ask["requestedSchema"]["properties"], ask
    ask = pending(cli.run("elicitation/respond", ask["elicitationId"], "color:=green"), "form")
    assert "size" in ask["requestedSchema"]["properties"], ask
    got = text_of(cli.run("elicitation/respond", ask["elicitationId"], "size:=large"))
    assert got == "dee: color green, size large.", got
    done.append("profile: two questions, one after the other")

    ask = pending(cli.run(conn, "tools/call", "connect_calendar", "user:=eve"), "url")
    assert ask["url"] == "https://calendar.example.com/connect?user=eve", ask
    got = text_of(cli.run("elicitation/respond", ask["elicitationId"], "--done"))
    assert got == "Calendar connected for eve.", got
    done.append("connect_calendar: URL elicitation, then a state-only round")

    ask = pending(cli.run(conn, "tools/call", "favorite_color", "user:=fay"), "form")
    assert text_of(cli.run("elicitation/respond", ask["elicitationId"], "--decline")) == "fay did not pick a color."
    done.append("declined answer")
    return done


def wait_http(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not start within 20 s")


def one(era: str, transport: str) -> list[str]:
    home = Path(tempfile.mkdtemp(prefix=f"rondo-mcpdo-{era}-{transport}-"))
    server: subprocess.Popen[bytes] | None = None
    cli: Mcpdo | None = None
    try:
        if transport == "stdio":
            entry: dict[str, Any] = {"command": PYTHON, "args": [EXAMPLE, "--stdio"]}
        else:
            port = free_port()
            server = subprocess.Popen([PYTHON, EXAMPLE, "--http", str(port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            url = f"http://127.0.0.1:{port}/mcp"
            wait_http(url, server)
            entry = {"type": "streamable-http", "url": url}
        config = home / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"prefs": entry}}))
        cli = Mcpdo(home)
        out = cli.run("--config", str(config), "connect", "prefs", "--era", era)
        assert out.get("protocolEra") == era, out
        return walk(cli, era)
    finally:
        if cli is not None:
            cli.stop()
        if server is not None:
            server.terminate()
            server.wait(10)
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--era", choices=("modern", "legacy"))
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--http", action="store_true")
    args = parser.parse_args(argv)
    eras = [args.era] if args.era else ["modern", "legacy"]
    transports = [t for t in ("stdio", "http") if getattr(args, t)] or ["stdio", "http"]
    failed = False
    for era in eras:
        for transport in transports:
            try:
                for step in one(era, transport):
                    print(f"ok   {era} {transport}: {step}")
            except Exception as exc:
                failed = True
                print(f"FAIL {era} {transport}: {type(exc).__name__}: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
