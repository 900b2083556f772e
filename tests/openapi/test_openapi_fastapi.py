"""from_fastapi in-process and from_openapi over real HTTP on loopback, against the same FastAPI
app (tests/helpers/openapi_app.py): the same calls give the same answers both ways, with path, query,
header, body and auth; the app's lifespan runs inside the server's."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from rondo.client import Client
from rondo.openapi import from_fastapi, from_openapi
from tests.helpers.openapi_app import TOKEN, make_app

pytestmark = pytest.mark.slow
APP = Path(__file__).resolve().parents[1] / "helpers" / "openapi_app.py"
SERVICE = {"Authorization": f"Bearer {TOKEN}"}


def yes(request):
    return {"action": "accept", "content": {"confirm": True}}


async def session(server) -> list:
    """The same calls, whatever the server: their (isError, structured or text) outcomes."""
    out = []
    async with Client(server, on_elicit=yes) as client:
        for name, arguments in [
            ("get_item", {"item_id": 1, "x-trace": "abc"}),
            ("list_items", {"tag": "home", "limit": 3}),
            ("list_items", {"ids": [2]}),
            ("create_item", {"name": "mug", "price": 4.5, "tags": ["kitchen"]}),
            ("delete_item", {"item_id": 2}),
            ("get_item", {"item_id": 2}),
            ("login", {"username": "ada"}),
            ("upload", {"note": "n", "file": "abc"}),
            ("whoami", {"session": "s1"}),
            ("read_file", {"name": "a b.txt"}),
        ]:
            result = await client.call_tool(name, arguments)
            out.append((name, result.is_error, result.structured_content
                        if result.structured_content is not None else result.text))
    return out


@pytest.fixture
def loopback_api(free_port):
    proc = subprocess.Popen([sys.executable, str(APP), str(free_port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{free_port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(f"{url}/openapi.json").status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the API did not start"
        time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def test_in_process_and_loopback_answer_alike(loopback_api):
    inproc = asyncio.run(session(from_fastapi(make_app(), headers=SERVICE)))
    client = httpx.AsyncClient(base_url=loopback_api, headers=SERVICE)
    over_http = asyncio.run(session(from_openapi(f"{loopback_api}/openapi.json", client)))
    assert over_http == inproc
    assert inproc == [
        ("get_item", False, {"id": 1, "name": "kettle", "price": 20.0, "tags": ["home"]}),
        ("list_items", False, [{"id": 1, "name": "kettle", "price": 20.0, "tags": ["home"]}]),
        ("list_items", False, [{"id": 2, "name": "lamp", "price": 35.5, "tags": []}]),
        ("create_item", False, {"id": 3, "name": "mug", "price": 4.5, "tags": ["kitchen"]}),
        ("delete_item", False, {"deleted": 2}),
        ("get_item", True, 'HTTP 404 Not Found from GET /items/{item_id}: {"detail":"no item 2"}'),
        ("login", False, {"user": "ada", "remember": False}),
        ("upload", False, {"note": "n", "size": 3, "text": "abc"}),
        ("whoami", False, {"session": "s1", "authorization": f"Bearer {TOKEN}"}),
        ("read_file", False, "file a b.txt"),
    ]


def test_the_apps_lifespan_runs_inside_the_servers():
    events = []

    @asynccontextmanager
    async def lifespan(app):
        events.append("up")
        app.state.db = {"answer": 42}
        yield
        events.append("down")

    app = FastAPI(lifespan=lifespan)

    @app.get("/answer", operation_id="answer")
    def answer() -> dict:
        return {"answer": app.state.db["answer"]}

    server = from_fastapi(app)

    async def main():
        async with server.started(), Client(server) as client:  # what run_http/run_stdio do
            assert events == ["up"]
            assert (await client.call_tool("answer")).structured_content == {"answer": 42}
        assert events == ["up", "down"]

    asyncio.run(main())
