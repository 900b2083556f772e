# file: docs/snippets/gateway_transform.py
import asyncio

import rondo
from rondo.client import Client
from rondo.gateway import mount
from rondo.testing import principal

app = rondo.Server("app")
files = rondo.Server("files")


@files.tool(tags={"read"})
def cat(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@files.tool(tags={"read"})
def ls() -> str:
    """List files."""
    return "a.txt b.txt"


@files.tool(tags={"write"})
def rm(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@files.tool
def debug() -> str:
    """Untagged: not brought in."""
    return "internals"


def admins_only(who, kind, name):  # who: the caller's rondo.auth.Principal, or None
    return name != "rm" or (who is not None and "admin" in who.scopes)


assert app.tools == {} and files.tools["rm"].tags == frozenset({"write"})
mount(app, files, namespace="fs",
      rename={"cat": "read"},                 # served as fs_read
      describe={"ls": "List the shared folder."},
      tags={"read", "write"},                 # only components tagged so
      visible=admins_only)                    # fs_rm for admins only


async def main() -> None:
    async with Client(app, auth=principal("ada", scopes=["admin"])) as admin:
        tools = {t.name: t.description for t in await admin.list_tools()}
        assert tools == {"fs_read": "Read a file.", "fs_ls": "List the shared folder.",
                         "fs_rm": "Delete a file."}
        assert (await admin.call_tool("fs_read", {"path": "a.txt"})).text == "contents of a.txt"
        assert all(t.meta is None for t in await admin.list_tools())  # tags stay server-side
    async with Client(app, auth=principal("bob")) as user:
        assert sorted(t.name for t in await user.list_tools()) == ["fs_ls", "fs_read"]
        try:
            await user.call_tool("fs_rm", {"path": "a.txt"})
            raise AssertionError("a hidden tool answered")
        except rondo.McpError as exc:
            assert exc.code == -32602 and exc.message == "Unknown tool: fs_rm"


asyncio.run(main())
