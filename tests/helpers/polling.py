"""Waiting on something a test can observe, with a deadline, instead of sleeping and hoping:
`await until(lambda: task.done(), 5, "the task ended")` polls `condition` and fails the test
with `what` if it has not become true within `seconds`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


async def until(condition: Callable[[], Any], seconds: float = 5.0, what: str = "timed out") -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.001)
