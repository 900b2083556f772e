# file: docs/snippets/resources_files.py
import asyncio
import tempfile
from pathlib import Path

import rondo
from rondo.client import Client
from rondo.paths import inside

DATA = Path(tempfile.mkdtemp())  # the directory this server may read, and nothing above it
(DATA / "guide").mkdir()
(DATA / "guide" / "intro.md").write_text("# Intro")

server = rondo.Server("files")


@server.resource("tree:///data/{+path}", mime_type="text/plain")
def read_file(path: str) -> str:
    """Any file below DATA. `{+path}` may hold `/`, so never join it by hand: `inside`
    refuses absolute paths, drives, `..`, control characters and symlinks that lead out."""
    return inside(DATA, path).read_text()


async def main() -> None:
    async with Client(server) as client:
        assert (await client.read_resource("tree:///data/guide/intro.md")).text == "# Intro"
        for uri in ("tree:///data//etc/passwd",  # `{+path}` is "/etc/passwd"
                    "tree:///data/%2fetc%2fpasswd",  # the same, percent-encoded
                    "tree:///data/C:%5cWindows%5cwin.ini"):  # a drive letter
            try:
                await client.read_resource(uri)
            except rondo.McpError as exc:
                assert exc.code == -32602 and exc.message == "Resource not found"
            else:
                raise AssertionError(f"{uri} was served")


asyncio.run(main())
