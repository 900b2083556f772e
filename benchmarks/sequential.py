"""A keep-alive client that sends N requests one after another to a benchmark fixture over HTTP.

    .venv/bin/python benchmarks/sequential.py PORT N add|flow

`add` sends the `add` call N times; `flow` does N two-leg `ask_color` flows (2N requests).
Every answer is checked. `server_instructions.sh` drives a server under cachegrind with it.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import ADD_PARAMS, ELICIT_CAPS, http_headers, meta  # noqa: E402


def post(port: int, tool: str, params: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"_meta": meta(), **params}}).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in http_headers("tools/call", tool).items())
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def connect(port: int, seconds: float = 120.0) -> socket.socket:
    deadline = time.monotonic() + seconds  # a server under valgrind starts slowly
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def exchange(sock: socket.socket, data: bytes) -> dict[str, Any]:
    sock.sendall(data)
    buffer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("server closed the connection")
        buffer += chunk
        head, sep, body = buffer.partition(b"\r\n\r\n")
        if sep:
            length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            if len(body) >= length:
                answer: dict[str, Any] = json.loads(body[:length])
                return answer


def main(port: int, n: int, what: str) -> None:
    sock = connect(port)
    add = post(port, "add", ADD_PARAMS)
    leg1 = post(port, "ask_color", {"name": "ask_color", "arguments": {}, "_meta": meta(ELICIT_CAPS)})
    for _ in range(n):
        if what == "add":
            answer = exchange(sock, add)
            assert answer["result"]["content"][0]["text"] == "3", answer
            continue
        first = exchange(sock, leg1)["result"]
        params = {"name": "ask_color", "arguments": {}, "_meta": meta(ELICIT_CAPS),
                  "inputResponses": {next(iter(first["inputRequests"])): {
                      "action": "accept", "content": {"color": "blue"}}}}
        if "requestState" in first:
            params["requestState"] = first["requestState"]
        answer = exchange(sock, post(port, "ask_color", params))
        assert answer["result"]["content"][0]["text"] == "blue", answer
    sock.close()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
