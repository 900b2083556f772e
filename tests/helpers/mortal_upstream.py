"""A stdio upstream that can be told to die: `pid` says which process answers, `die` exits
mid-call. Each start appends a line to $MORTAL_LOG (if set) and prints $MORTAL_KEY on stderr,
as a careless server might print its own secret."""

from __future__ import annotations

import os
import sys

import rondo

up = rondo.Server("mortal")


@up.tool
def pid() -> int:
    """The answering process's id."""
    return os.getpid()


@up.tool
def die() -> str:
    """Exits the process before answering."""
    os._exit(3)


if __name__ == "__main__":
    if os.environ.get("MORTAL_LOG"):
        with open(os.environ["MORTAL_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
    print(f"mortal starting, key={os.environ.get('MORTAL_KEY', '')}", file=sys.stderr, flush=True)
    if os.environ.get("MORTAL_EXIT_AT_ONCE"):
        sys.exit(5)
    up.run_stdio()
