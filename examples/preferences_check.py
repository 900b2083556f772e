"""Walks every flow of `preferences.py` over a raw JSON-RPC connection and checks the wire.

Used by `python examples/preferences.py --check`: runs every flow in-process, over stdio and
over HTTP, and exits non-zero on any deviation. It speaks the
2026-07-28 wire by hand on purpose, so it checks what is on the wire: fresh ids, byte-exact
request state, exact texts and error codes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "preferences-check", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}

Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Wire = list[bytes]  # every request body exactly as a sender wrote it to the transport


class Deviation(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Deviation(message)


class Driver:
    """Sends requests and runs the MRTR retry loop with scripted answers.

    Ids are checked where they matter, on the wire: each request the sender actually wrote
    must carry an id never written before, and the response must carry that same id.
    """

    def __init__(self, send: Send, wire: Wire, log: Callable[[str], None] | None = None) -> None:
        self.send = send
        self.wire = wire
        self.log = log or (lambda _line: None)
        self.ids = itertools.count(1)
        self.wire_ids: set[Any] = set()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method,
                   "params": {**params, "_meta": META}}
        before = len(self.wire)
        response = await self.send(message)
        written = [json.loads(body) for body in self.wire[before:]]
        expect(len(written) == 1, f"{method}: {len(written)} requests on the wire, want 1")
        wire_id = written[0].get("id")
        expect(isinstance(wire_id, int | str) and wire_id not in self.wire_ids,
               f"{method}: request id {wire_id!r} on the wire is not fresh")
        self.wire_ids.add(wire_id)
        expect(response.get("id") == wire_id, f"response id {response.get('id')!r} != {wire_id!r}")
        return response

    async def flow(
        self, method: str, params: dict[str, Any], answers: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], int]:
        """Call, answer each round from `answers` in turn, return (final response, rounds)."""
        extra: dict[str, Any] = {}
        rounds = 0
        while True:
            response = await self.request(method, {**params, **extra})
            result = response.get("result")
            if result is None or result.get("resultType") != "input_required":
                return response, rounds
            rounds += 1
            expect(rounds <= len(answers) + 1, f"{method}: too many rounds")
            asked = result.get("inputRequests", {})
            self.log(f"  round {rounds}: server asks {sorted(asked) or 'nothing (state only)'}")
            for key, request in asked.items():
                self.log(f"    {key}: {request['params'].get('message')}")
            extra = {}
            if asked:
                answer = answers[rounds - 1]
                expect(set(answer) >= set(asked), f"{method}: no scripted answer for {sorted(asked)}")
                extra["inputResponses"] = {k: answer[k] for k in asked}
                self.log(f"    answering {json.dumps(extra['inputResponses'])}")
            if "requestState" in result:
                extra["requestState"] = result["requestState"]


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content} if content else {"action": "accept"}


DECLINE = {"action": "decline"}


def text_of(response: dict[str, Any]) -> str:
    result = response["result"]
    if "content" in result:
        return result["content"][0]["text"]
    if "contents" in result:
        return result["contents"][0]["text"]
    return result["messages"][0]["content"]["text"]


async def check_flows(driver: Driver) -> list[str]:
    """Every workflow of the preference example; returns the final texts in order."""
    texts: list[str] = []

    async def final(label: str, method: str, params: dict[str, Any], answers: list[Any],
                    want: str, rounds: int) -> None:
        driver.log(f"{label}: {method} {json.dumps(params)}")
        response, seen = await driver.flow(method, params, answers)
        expect("result" in response, f"{label}: error {response.get('error')}")
        got = text_of(response)
        expect(got == want, f"{label}: got {got!r}, want {want!r}")
        expect(seen == rounds, f"{label}: {seen} rounds, want {rounds}")
        expect(response["result"]["resultType"] == "complete", f"{label}: not complete")
        driver.log(f"  -> {got}")
        texts.append(got)

    await final("tool", "tools/call", {"name": "favorite_color", "arguments": {"user": "ana"}},
                [{"color": accept(color="green")}], "ana likes green.", 1)
    await final("resource", "resources/read", {"uri": "prefs://bo/color"},
                [{"color": accept(color="red")}], "bo likes red.", 1)
    await final("prompt", "prompts/get", {"name": "color_poem", "arguments": {"user": "cy"}},
                [{"color": accept(color="blue")}], "Write a short poem for cy about the color blue.", 1)
    await final("declined", "tools/call", {"name": "favorite_color", "arguments": {"user": "di"}},
                [{"color": DECLINE}], "di did not pick a color.", 1)
    await final("multi-round", "tools/call", {"name": "profile", "arguments": {"user": "ed"}},
                [{"color": accept(color="red")}, {"size": accept(size="large")}],
                "ed: color red, size large.", 2)
    await final("url + state-only", "tools/call",
                {"name": "connect_calendar", "arguments": {"user": "flo"}},
                [{"consent": accept()}], "Calendar connected for flo.", 2)
    await final("url declined", "tools/call",
                {"name": "connect_calendar", "arguments": {"user": "gus"}},
                [{"consent": DECLINE}], "gus did not connect a calendar.", 1)

    # The state is bound to the arguments: replaying it with other arguments is refused.
    driver.log("changed arguments: profile for 'hal', retried as 'ivy' with hal's state")
    first = await driver.request("tools/call", {"name": "profile", "arguments": {"user": "hal"}})
    state = first["result"]["requestState"]
    expect(isinstance(state, str) and state, "profile must hand out a request state")
    replay = await driver.request("tools/call", {
        "name": "profile", "arguments": {"user": "ivy"},
        "inputResponses": {"color": accept(color="red")}, "requestState": state})
    expect(replay.get("error", {}).get("code") == -32602, f"changed arguments: got {replay}")
    driver.log(f"  -> error {replay['error']['code']}: {replay['error']['message']}")
    # A tampered state is refused too, and the byte-exact one is accepted.
    tampered = await driver.request("tools/call", {
        "name": "profile", "arguments": {"user": "hal"},
        "inputResponses": {"color": accept(color="red")}, "requestState": state + "x"})
    expect(tampered.get("error", {}).get("code") == -32602, "a tampered state must be refused")
    exact = await driver.request("tools/call", {
        "name": "profile", "arguments": {"user": "hal"},
        "inputResponses": {"color": accept(color="red")}, "requestState": state})
    expect(exact.get("result", {}).get("resultType") == "input_required", "exact state must work")
    # A malformed answer is -32602 naming the key; a missing one is asked again.
    bad = await driver.request("tools/call", {
        "name": "favorite_color", "arguments": {"user": "jo"},
        "inputResponses": {"color": accept(color="purple")}})
    expect(bad.get("error", {}).get("code") == -32602 and "color" in bad["error"]["message"],
           f"invalid answer: got {bad}")
    again = await driver.request("tools/call", {
        "name": "favorite_color", "arguments": {"user": "jo"}, "inputResponses": {"other": accept()}})
    expect(again["result"]["resultType"] == "input_required", "a missing answer is asked again")
    return texts


# -- transports --------------------------------------------------------------------------------


def memory_sender(wire: Wire) -> tuple[Send, Callable[[], Awaitable[None]]]:
    from preferences import server

    from rondo.testing import connect

    conn = connect(server)

    async def send(message: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(message).encode()
        wire.append(body)
        response = await conn.send(json.loads(body))  # the server gets what was recorded
        assert response is not None
        return response

    return send, conn.close


async def stdio_sender(wire: Wire) -> tuple[Send, Callable[[], Awaitable[None]]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "preferences.py"), "--stdio",
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ),
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def send(message: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(message).encode()
        wire.append(body)
        stdin.write(body + b"\n")
        await stdin.drain()
        while True:
            line = await asyncio.wait_for(stdout.readline(), 10)
            expect(bool(line), "stdio server closed its output")
            reply = json.loads(line)
            if "method" not in reply:  # a response (notifications are skipped)
                return reply

    async def close() -> None:
        stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            raise Deviation("stdio server did not exit at end of input") from None
        expect(proc.returncode == 0, f"stdio server exited with {proc.returncode}")

    return send, close


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def http_sender(wire: Wire) -> tuple[Send, Callable[[], Awaitable[None]]]:
    import httpx

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "preferences.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    client = httpx.AsyncClient(timeout=10)
    deadline = time.monotonic() + 15
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise Deviation("HTTP server did not start") from None
            await asyncio.sleep(0.05)

    async def send(message: dict[str, Any]) -> dict[str, Any]:
        params = message["params"]
        headers = {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": message["method"],
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        name = params.get("name", params.get("uri"))
        if name is not None:
            headers["Mcp-Name"] = name
        body = json.dumps(message).encode()
        wire.append(body)
        reply = await client.post(url, content=body, headers=headers)
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            for line in reply.text.splitlines():
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    if "method" not in event:  # the response (notifications are skipped)
                        return event
            raise Deviation("SSE stream ended without a response")
        return reply.json()

    async def close() -> None:
        await client.aclose()
        proc.terminate()
        proc.wait(10)

    return send, close


async def run(transport: str, log: Callable[[str], None] | None = None) -> list[str]:
    wire: Wire = []
    if transport == "memory":
        send, close = memory_sender(wire)
    elif transport == "stdio":
        send, close = await stdio_sender(wire)
    else:
        send, close = await http_sender(wire)
    try:
        return await check_flows(Driver(send, wire, log))
    finally:
        await close()


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE))
    if argv and argv[0] == "--check":
        failed = False
        for transport in ("memory", "stdio", "http"):
            try:
                texts = asyncio.run(run(transport))
                print(f"ok   {transport}: {len(texts)} flows")
            except Exception as exc:  # report every transport, then fail
                failed = True
                print(f"FAIL {transport}: {exc!r}")
        return 1 if failed else 0
    print("usage: preferences.py --check")
    return 2
