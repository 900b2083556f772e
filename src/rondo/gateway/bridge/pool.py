"""The bridge's stdio upstream processes: a bounded pool, one bridged call per process at once.

A 2025-11-25 server's `elicitation/create` (`sampling/createMessage`, `roots/list`) carries
nothing that names the call it belongs to: over Streamable HTTP it comes on the call's own
response stream, but a stdio process has one stream for everything. With two bridged calls
open on one process the proxy could only guess whose question it is, so each process runs one
bridged call at a time, and calls open at once get processes of their own (`processes=` of
`Hold`/`Replay`, `MAX_PROCESSES` by default, per upstream, spawned on demand, initialized with the input capabilities the call's client
declared, and kept idle for the next call of a client declaring the same). A call that finds
every process busy waits for one up to the upstream's timeout, then gets -32000.

A process whose call was cancelled (a replay round's run, an expired hold) goes back to the pool
only after a `ping` round trip: stdio is one ordered stream, so a question the cancelled call
had in flight arrives before the pong, while the process belongs to no call, and is refused
there instead of being taken as the next call's. (An upstream that ignores the cancellation
and asks later still could be; a conformant one stops.)

Each process is supervised as the proxy's main stdio upstream is (gateway/supervise.py): its
stderr is logged (configured env values masked), its exit is noticed at once (an idle one is
dropped from the pool; the call on a busy one ends with -32603), and the next call starts a
new one under the upstream's `Restart` backoff: a process that served less than `steady`
seconds counts as a failed start, the next start waits `Restart.delay(failures)` (the call
waits with it, within the upstream's timeout), and after `attempts` failed starts in a row the
bridge answers -32603 for that upstream until the proxy is restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...wire.errors import SERVER_BUSY, McpError

if TYPE_CHECKING:
    from ...client import Client
    from ..upstream import Upstream

log = logging.getLogger("rondo.gateway")
MAX_PROCESSES = 8  # stdio upstream processes one bridge runs at once (each: one bridged call)
MOST_PROCESSES = 256  # the most `Hold(processes=)` / `Replay(processes=)` may ask for
UNAVAILABLE = -32603


class _Process:
    __slots__ = ("began", "caps", "client", "closing", "key", "watcher")

    def __init__(self, key: str, caps: str, client: Client) -> None:
        self.key = key
        self.caps = caps
        self.client = client
        self.began = time.monotonic()
        self.closing = False
        self.watcher: asyncio.Task[None] | None = None


class Pool:
    """Stdio upstream processes for bridged calls, keyed by the declared capability set."""

    def __init__(self, link: Upstream, make: Callable[[dict[str, Any], str], Client],
                 connect: Callable[[Client], Any], size: int | None = None) -> None:
        self.link = link
        self._make = make  # a new (unconnected) client declaring caps, under a key
        self._connect = connect  # connects it, or raises McpError
        self.size = size if size is not None else MAX_PROCESSES
        self._idle: list[_Process] = []
        self._busy: dict[str, _Process] = {}
        self._starting = 0
        self._settling = 0
        self._waiting = 0
        self._closed = False
        self._freed = asyncio.Condition()
        self._ids = itertools.count(1)
        self._failures = 0
        self._died_at = 0.0
        self._gave_up = False
        self._tasks: set[asyncio.Future[None]] = set()

    @property
    def processes(self) -> int:
        """Processes running (idle or in a call) or being started."""
        return len(self._idle) + len(self._busy) + self._starting + self._settling

    @property
    def waiting(self) -> int:
        """Calls waiting for a process (the pool is full and none idles)."""
        return self._waiting

    def pids(self) -> list[int]:
        """The pids of the processes running (for tests and operators)."""
        found = []
        for proc in (*self._idle, *self._busy.values()):
            pid = getattr(getattr(proc.client.transport, "_proc", None), "pid", None)
            if isinstance(pid, int):
                found.append(pid)
        return found

    async def acquire(self, caps: str, declared: dict[str, Any]) -> tuple[str, Client]:
        """A process for one bridged call of a client that declared `declared` (whose
        canonical JSON is `caps`); hand it back with `release`."""
        try:
            async with asyncio.timeout(self.link.timeout):
                return await self._acquire(caps, declared)
        except TimeoutError:
            raise McpError(SERVER_BUSY, f"all {self.size} upstream processes of the bridge "
                           "are in bridged calls; try again later") from None

    async def _acquire(self, caps: str, declared: dict[str, Any]) -> tuple[str, Client]:
        async with self._freed:
            while True:
                if self._closed:
                    raise McpError(UNAVAILABLE, "upstream unavailable: the proxy is closing")
                for proc in self._idle:
                    if proc.caps == caps:
                        self._idle.remove(proc)
                        self._busy[proc.key] = proc
                        return proc.key, proc.client
                if self.processes < self.size:
                    break
                if self._idle:  # full, but one idles for another capability set: its turn ends
                    self._retire(self._idle.pop(0))
                    break
                self._waiting += 1
                try:
                    await self._freed.wait()
                finally:
                    self._waiting -= 1
            self._starting += 1
        try:
            proc = await self._start(caps, declared)
        except BaseException:
            self._starting -= 1
            self._background(self._notify())  # its place is free: a waiting call may start one
            raise
        self._starting -= 1
        if self._closed:  # closed while it started: no process outlives the pool
            self._retire(proc)
            raise McpError(UNAVAILABLE, "upstream unavailable: the proxy is closing")
        self._busy[proc.key] = proc
        return proc.key, proc.client

    async def _start(self, caps: str, declared: dict[str, Any]) -> _Process:
        if self._gave_up:
            raise McpError(UNAVAILABLE, "upstream unavailable")
        if self._failures:
            wait = self._died_at + self.link.restart.delay(self._failures - 1) - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
        key = f"proc-{next(self._ids)}"
        client = self._make(declared, key)
        try:
            await self._connect(client)
        except McpError:
            self._failed()
            raise
        proc = _Process(key, caps, client)
        proc.watcher = asyncio.get_running_loop().create_task(self._watch(proc))
        return proc

    def _failed(self) -> None:
        self._failures += 1
        self._died_at = time.monotonic()
        policy = self.link.restart
        if self._failures >= max(policy.attempts, 1) and not self._gave_up:
            self._gave_up = True
            log.error("upstream %s: bridge processes not started again after %d failed "
                      "starts; its bridged calls answer 'upstream unavailable'", self.link.label,
                      self._failures)

    async def _watch(self, proc: _Process) -> None:
        from ..supervise import _ended

        await _ended(proc.client)
        if proc.closing:
            return
        log.warning("upstream %s: a bridge process ended; the next bridged call starts another",
                    self.link.label)
        if time.monotonic() - proc.began >= self.link.restart.steady:
            self._failures = 0
        else:
            self._failed()
        if proc in self._idle:
            self._idle.remove(proc)
            self._retire(proc)

    def release(self, key: str, *, broken: bool = False, settle: bool = False) -> None:
        """The bridged call on process `key` ended: the process idles for the next call (or
        is let go when it failed or ended; with `settle`, once a ping has come back)."""
        proc = self._busy.pop(key, None)
        if proc is None:
            return
        ended = proc.watcher is None or proc.watcher.done()
        if broken or ended or self._closed:
            self._retire(proc)
        elif settle:
            self._settling += 1
            self._background(self._settle(proc))
            return
        else:
            self._idle.append(proc)
        self._background(self._notify())

    async def _settle(self, proc: _Process) -> None:
        """Back to the pool once the process answers a ping (what it sent before is read by
        then); one that does not answer within the upstream's timeout is let go."""
        try:
            async with asyncio.timeout(self.link.timeout):
                await proc.client.request("ping", {})
        except asyncio.CancelledError:
            self._settling -= 1
            self._retire(proc)
            raise
        except Exception:
            self._settling -= 1
            self._retire(proc)
        else:
            self._settling -= 1
            if not self._closed and proc.watcher is not None and not proc.watcher.done():
                self._idle.append(proc)
            else:
                self._retire(proc)
        await self._notify()

    async def _notify(self) -> None:
        async with self._freed:
            self._freed.notify()

    def _retire(self, proc: _Process) -> None:
        proc.closing = True
        if proc.watcher is not None:
            proc.watcher.cancel()
        self._background(proc.client.close())

    def _background(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("closing a bridge process: %s", task.exception())

    async def close(self) -> None:
        self._closed = True
        async with self._freed:
            self._freed.notify_all()  # a waiting call hears the pool is closing
        procs = [*self._idle, *self._busy.values()]
        self._idle, self._busy = [], {}
        for proc in procs:
            proc.closing = True
            if proc.watcher is not None:
                proc.watcher.cancel()
            with contextlib.suppress(Exception):
                await proc.client.close()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)
