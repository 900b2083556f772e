# file: docs/snippets/openapi_basic.py
import asyncio

import httpx

from rondo.client import Client
from rondo.openapi import Route, from_openapi

DOCUMENT = {
    "openapi": "3.0.3",
    "info": {"title": "Notes", "version": "1"},
    "paths": {
        "/notes/{id}": {
            "get": {"operationId": "notes/get", "summary": "Read a note",
                    "parameters": [{"name": "id", "in": "path", "required": True,
                                    "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "the note", "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Note"}}}}}},
            "delete": {"operationId": "notes/delete", "summary": "Delete a note",
                       "parameters": [{"name": "id", "in": "path", "required": True,
                                       "schema": {"type": "integer"}}],
                       "responses": {"204": {"description": "deleted"}}},
        },
        "/admin/reset": {"post": {"operationId": "reset", "responses": {"200": {"description": ""}}}},
    },
    "components": {"schemas": {"Note": {"type": "object", "properties": {
        "id": {"type": "integer"}, "text": {"type": "string", "nullable": True}}}}},
}
notes = {1: "buy milk"}


def api(request: httpx.Request) -> httpx.Response:  # stands for the real API
    note_id = int(request.url.path.rsplit("/", 1)[1])
    if request.method == "DELETE":
        notes.pop(note_id)
        return httpx.Response(204)
    return httpx.Response(200, json={"id": note_id, "text": notes.get(note_id)})


client = httpx.AsyncClient(base_url="https://notes.example/v1",
                           transport=httpx.MockTransport(api))
server = from_openapi(DOCUMENT, client, routes=[Route(kind="exclude", pattern="^/admin/")])
asked = []


def user(request) -> dict:  # the person at the client answers the confirmation
    asked.append(request.message)
    return {"action": "accept", "content": {"confirm": True}}


async def main() -> None:
    async with Client(server, on_elicit=user) as mcp:
        assert [t.name for t in await mcp.list_tools()] == ["notes_get", "notes_delete"]
        note = await mcp.call_tool("notes_get", {"id": 1})
        assert note.structured_content == {"id": 1, "text": "buy milk"}
        gone = await mcp.call_tool("notes_delete", {"id": 1})
        assert gone.text == "HTTP 204 (no content)" and notes == {}
        assert asked == ["Send this request?\n\nDELETE https://notes.example/v1/notes/1"]


asyncio.run(main())
