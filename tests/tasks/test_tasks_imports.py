"""The tasks extension's public names, and the redis client loaded only when its store is asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_redis_store_is_reachable_from_both_public_paths() -> None:
    import rondo.tasks
    import rondo.tasks as server_tasks
    from rondo.tasks.redis_store import RedisTaskStore

    assert server_tasks.RedisTaskStore is RedisTaskStore
    assert rondo.tasks.RedisTaskStore is RedisTaskStore
    for module in (server_tasks, rondo.tasks):
        with pytest.raises(AttributeError, match="NoSuchStore"):
            module.NoSuchStore  # noqa: B018


def test_a_memory_store_server_never_imports_redis() -> None:
    code = (
        "import sys, rondo\n"
        "from rondo.tasks import Tasks, MemoryTaskStore\n"
        "import rondo.tasks\n"
        "s = rondo.Server('t')\n"
        "s.extension(Tasks(MemoryTaskStore()))\n"
        "print(sorted(m for m in sys.modules if m == 'redis' or m.startswith('redis.')"
        " or m.endswith('redis_store')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
