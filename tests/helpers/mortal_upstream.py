"""A stdio upstream that can be told to die: `pid` says which process answers, `die` exits
mid-call, `babble` writes garbage on stdout. Each start appends a line to $MORTAL_LOG (if set) and prints $MORTAL_KEY on stderr,
as a careless server might print its own secret."""

from __future__ import annotations

import os
import sys

import rondo

up = rondo.Server("mortal")
_STDOUT_PIPE = os.fstat(1).st_ino  # the pipe the client reads, before rondo takes fd 1


@up.tool
def pid() -> int:
    """The answering process's id."""
    return os.getpid()


@up.tool
def die() -> str:
    """Exits the process before answering."""
    os._exit(3)


@up.tool
async def babble() -> str:
    """Writes what is not JSON-RPC on stdout, then waits: the stream cannot be trusted."""
    import asyncio

    # rondo points fd 1 at stderr while serving; the protocol's pipe is a private copy of it.
    for fd in range(3, 256):
        try:
            if os.fstat(fd).st_ino == _STDOUT_PIPE:
                os.write(fd, b"this is not JSON-RPC\n")
                break
        except OSError:
            continue
    await asyncio.sleep(30)
    return "never"


if __name__ == "__main__":
    if os.environ.get("MORTAL_LOG"):
        with open(os.environ["MORTAL_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
    print(f"mortal starting, key={os.environ.get('MORTAL_KEY', '')}", file=sys.stderr, flush=True)
    if os.environ.get("MORTAL_EXIT_AT_ONCE"):
        sys.exit(5)
    up.run_stdio()
