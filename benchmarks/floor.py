"""The floor: the least a server can do to answer the benchmark's calls, with no MCP checks.

    python benchmarks/floor.py http PORT    # a bare ASGI callable on uvicorn (uvloop, httptools)
    python benchmarks/floor.py stdio        # a bare newline-delimited loop

It decodes the body, looks at the method and tool name, and answers `tools/list`, `add` and both
legs of `ask_color` (a fixed opaque requestState, nothing sealed, nothing validated). Every
target's figure is also reported as a fraction of this one, measured in the same run on the same
server stack: what the framework costs above the bytes.

Its answers to `add` and to both legs are the rondo fixture's, less what sealing adds (held so
by `tests/project/test_inprocess_driver.py`): the same question, and the `_meta.serverInfo` the
2026-07-28 spec says servers SHOULD put on every result. A floor that answered with fewer bytes
would count their encoding and the client's parse as framework work: on stdio those 70 bytes
moved the floor itself by about 6% (`benchmarks/README.md`).
"""

from __future__ import annotations

import sys

import msgspec

_decode = msgspec.json.decode
_encode = msgspec.json.encode
_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": "1.0.0"}}
_TOOLS = {"tools": [
    {"name": "add", "inputSchema": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
    {"name": "ask_color", "inputSchema": {"type": "object"}},
], "resultType": "complete", "_meta": _INFO}
_QUESTION = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Which color?", "requestedSchema": {
        "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}}}
_ASK = {"resultType": "input_required", "requestState": "floor",
        "inputRequests": {"color": _QUESTION}, "_meta": _INFO}


def answer(body: bytes) -> bytes:
    msg = _decode(body)
    params = msg.get("params") or {}
    method = msg.get("method")
    if method == "tools/list":
        result: dict = _TOOLS
    elif params.get("name") == "add":
        args = params["arguments"]
        result = {"content": [{"type": "text", "text": str(args["a"] + args["b"])}],
                  "resultType": "complete", "_meta": _INFO}
    elif "inputResponses" in params:
        color = params["inputResponses"]["color"]["content"]["color"]
        result = {"content": [{"type": "text", "text": color}], "resultType": "complete",
                  "_meta": _INFO}
    else:
        result = _ASK
    return _encode({"jsonrpc": "2.0", "id": msg.get("id"), "result": result})


# For the sealed floors (floor_sealed.py, floor_minseal.py), which answer both legs of ask_color
# themselves once their token is sealed or verified: the same results as `answer`, which keeps
# its own inline so that the floor's count holds no extra call.
def asked(msg: dict, token: str) -> bytes:
    """Leg 1's answer, carrying `token` as its requestState."""
    return _encode({"jsonrpc": "2.0", "id": msg.get("id"), "result": {**_ASK, "requestState": token}})


def answered(msg: dict) -> bytes:
    """Leg 2's answer: the color the retry's input response chose."""
    color = msg["params"]["inputResponses"]["color"]["content"]["color"]
    return _encode({"jsonrpc": "2.0", "id": msg.get("id"), "result": {
        "content": [{"type": "text", "text": color}], "resultType": "complete", "_meta": _INFO}})


async def lifespan(receive, send) -> None:  # type: ignore[no-untyped-def]
    """The ASGI lifespan, started and then stopped (floor_proxy.py's too); not on a request's path."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        else:
            await send({"type": "lifespan.shutdown.complete"})
            return


async def app(scope: dict, receive, send) -> None:  # type: ignore[no-untyped-def]
    if scope["type"] == "lifespan":
        return await lifespan(receive, send)
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    data = answer(body)
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def stdio() -> None:
    import os

    buffer = b""
    while True:
        chunk = os.read(0, 65536)
        if not chunk:
            return
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        out = b"".join(answer(line) + b"\n" for line in lines if line.strip())
        if out:
            os.write(1, out)


def main(argv: list[str]) -> None:
    """`stdio`, or `http PORT`: plain uvicorn with uvloop and httptools."""
    if argv[:1] == ["stdio"]:
        stdio()
    else:
        import uvicorn

        uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning",
                    access_log=False, loop="uvloop", http="httptools", lifespan="on")


if __name__ == "__main__":
    main(sys.argv[1:])
