# file: docs/snippets/logging_levels.py
import asyncio
import logging

import rondo
from rondo.client import Client

server = rondo.Server("importer", state=None)
log = logging.getLogger("importer")  # your own log: stays on the server (stderr)


@server.tool
async def load(rows: int, ctx: rondo.Context) -> str:
    """Import some rows."""
    log.info("importing %d rows", rows)  # server log, never sent to the client
    await ctx.info(f"importing {rows} rows")  # to the client, if it asked for info or lower
    await ctx.debug("row-level detail")  # sent only to a client that asked for debug
    await ctx.log("warning", {"skipped": 1}, logger="importer.rows")  # any JSON, named logger
    return "done"


async def messages(level: str | None) -> list[tuple[str, object]]:
    seen: list[tuple[str, object]] = []

    def on_notification(note: dict) -> None:
        if note["method"] == "notifications/message":
            seen.append((note["params"]["level"], note["params"]["data"]))

    async with Client(server, log_level=level, on_notification=on_notification) as client:
        assert (await client.call_tool("load", {"rows": 3})).text == "done"
    return seen


async def main() -> None:
    assert await messages("info") == [("info", "importing 3 rows"), ("warning", {"skipped": 1})]
    assert len(await messages("debug")) == 3
    assert await messages("error") == []
    assert await messages(None) == []  # a client that does not ask gets no log messages


logging.basicConfig(level=logging.WARNING)  # what run_stdio sets up when you did not
asyncio.run(main())
