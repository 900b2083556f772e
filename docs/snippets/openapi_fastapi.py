# file: docs/snippets/openapi_fastapi.py
import asyncio

from fastapi import Depends, FastAPI, Header, HTTPException

import rondo
from rondo.client import Client
from rondo.openapi import from_fastapi

app = FastAPI(title="Tasks")
TASKS = {1: "write docs"}


def service(authorization: str = Header("")) -> None:
    if authorization != "Bearer service-token":
        raise HTTPException(401, "who are you?")


@app.get("/tasks/{task_id}", operation_id="get_task")
def get_task(task_id: int, _: None = Depends(service)) -> dict:
    """One task."""
    if task_id not in TASKS:
        raise HTTPException(404, f"no task {task_id}")
    return {"id": task_id, "title": TASKS[task_id]}


def credentials(ctx: rondo.Context) -> dict[str, str]:
    # Per call, from ctx.auth (who is calling): here one service token for everyone.
    return {"Authorization": "Bearer service-token"}


server = from_fastapi(app, auth_headers=credentials)


async def main() -> None:
    async with Client(server) as mcp:
        found = await mcp.call_tool("get_task", {"task_id": 1})
        assert found.structured_content == {"id": 1, "title": "write docs"}
        missing = await mcp.call_tool("get_task", {"task_id": 7})
        assert missing.is_error
        assert missing.text == 'HTTP 404 Not Found from GET /tasks/{task_id}: {"detail":"no task 7"}'


asyncio.run(main())
