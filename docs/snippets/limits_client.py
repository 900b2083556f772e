# file: docs/snippets/limits_client.py
import asyncio

import rondo
from rondo import InputRequired, elicit
from rondo.client import Client, InputRequiredError
from rondo.client.transports.http import HttpTransport

server = rondo.Server("nosy", state=None)
QUESTION = elicit.form("?", {"type": "object", "properties": {}})


@server.tool
def survey(ctx: rondo.Context) -> InputRequired:
    return InputRequired({f"q{i}": QUESTION for i in range(500)})  # 500 questions at once


async def main() -> None:
    async with Client(server, on_elicit=lambda req: {"action": "decline"},
                      max_input_requests=64) as client:
        try:
            await client.call_tool("survey")
        except InputRequiredError as exc:
            print(exc)
            assert exc.reason == "too_many_requests"

    # Over HTTP, answers and SSE events are capped too (a clear ProtocolError beyond).
    transport = HttpTransport("http://127.0.0.1:8000/mcp", max_response=8 << 20,
                              max_event=1 << 20, max_server_requests=8)
    assert transport.max_response == 8 << 20


asyncio.run(main())
