"""A real FastAPI application the OpenAPI tests generate tools from and call: path, query,
header, cookie, JSON / form / multipart bodies, bearer auth, deletes, redirects, slow and large
answers. Run as a script it serves on loopback: `python tests/helpers/openapi_app.py PORT`."""

import asyncio
import sys
from typing import Annotated

from fastapi import Cookie, Depends, FastAPI, File, Form, Header, HTTPException, Query, UploadFile
from fastapi.responses import PlainTextResponse, RedirectResponse
from pydantic import BaseModel

TOKEN = "s3cret-service-token"


class NewItem(BaseModel):
    name: str
    price: float
    tags: list[str] = []


class Item(NewItem):
    id: int


def bearer(authorization: Annotated[str | None, Header()] = None) -> str:
    if authorization != f"Bearer {TOKEN}":
        raise HTTPException(401, f"bad credentials: {authorization}")
    return "service"


def make_app() -> FastAPI:
    app = FastAPI(title="Shop API", version="1.0")
    items: dict[int, Item] = {1: Item(id=1, name="kettle", price=20.0, tags=["home"]),
                              2: Item(id=2, name="lamp", price=35.5, tags=[])}
    app.state.items = items
    app.state.deleted = []

    @app.get("/items", operation_id="list_items", tags=["items"])
    def list_items(tag: str | None = None, limit: int = 10,
                   ids: Annotated[list[int] | None, Query()] = None) -> list[Item]:
        """List items, filtered by tag or ids."""
        found = [i for i in items.values() if (tag is None or tag in i.tags)
                 and (ids is None or i.id in ids)]
        return found[:limit]

    @app.get("/items/{item_id}", operation_id="get_item", tags=["items"])
    def get_item(item_id: int, x_trace: Annotated[str | None, Header()] = None) -> Item:
        """One item."""
        if item_id not in items:
            raise HTTPException(404, f"no item {item_id}")
        return items[item_id]

    @app.post("/items", operation_id="create_item", tags=["items"], status_code=201)
    def create_item(item: NewItem, who: Annotated[str, Depends(bearer)]) -> Item:
        """Create an item (needs the service token)."""
        new = Item(id=max(items, default=0) + 1, **item.model_dump())
        items[new.id] = new
        return new

    @app.delete("/items/{item_id}", operation_id="delete_item", tags=["items"])
    def delete_item(item_id: int, who: Annotated[str, Depends(bearer)]) -> dict[str, object]:
        """Delete an item (needs the service token)."""
        if item_id not in items:
            raise HTTPException(404, f"no item {item_id}")
        del items[item_id]
        app.state.deleted.append(item_id)
        return {"deleted": item_id}

    @app.post("/login", operation_id="login", tags=["forms"])
    def login(username: Annotated[str, Form()], remember: Annotated[bool, Form()] = False,
              ) -> dict[str, object]:
        """A form body."""
        return {"user": username, "remember": remember}

    @app.post("/upload", operation_id="upload", tags=["forms"])
    async def upload(note: Annotated[str, Form()], file: Annotated[UploadFile, File()],
                     ) -> dict[str, object]:
        """A multipart body with a file."""
        data = await file.read()
        return {"note": note, "size": len(data), "text": data.decode()}

    @app.get("/whoami", operation_id="whoami", tags=["misc"])
    def whoami(session: Annotated[str | None, Cookie()] = None,
               authorization: Annotated[str | None, Header()] = None) -> dict[str, object]:
        """What the request carried."""
        return {"session": session, "authorization": authorization}

    @app.get("/files/{name}", operation_id="read_file", tags=["misc"])
    def read_file(name: str) -> PlainTextResponse:
        """Echo the file name received (as the app decoded it)."""
        return PlainTextResponse(f"file {name}")

    @app.get("/slow", operation_id="slow", tags=["misc"])
    async def slow(seconds: float = 5.0) -> dict[str, float]:
        await asyncio.sleep(seconds)
        return {"slept": seconds}

    @app.get("/big", operation_id="big", tags=["misc"])
    def big(size: int = 100) -> PlainTextResponse:
        return PlainTextResponse("x" * size)

    @app.get("/away", operation_id="away", tags=["misc"])
    def away(to: str = "/items") -> RedirectResponse:
        return RedirectResponse(to, status_code=302)

    @app.get("/leak", operation_id="leak", tags=["misc"])
    def leak(authorization: Annotated[str | None, Header()] = None) -> None:
        raise HTTPException(500, f"crashed while handling {authorization}")

    return app


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(make_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
