"""The worker's side of running tasks: one `Keeper` per task, one `Leases` per event loop.

A keeper sleeps until its own task is written (the store's `on_change`), then reads it once:
answers from `tasks/update` go to the waiting `ctx.ask`, a `tasks/cancel` (or the task gone or
settled elsewhere) cancels the handler. It never polls, so a parked task costs nothing while
nothing happens to it. Leases are renewed for every running task of the loop together, every
third of the lease, in one `renew_many` call. A store without `on_change`/`renew_many` gets
the old way: each keeper polls every `watch_interval` and renews its own lease.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from .record import INPUT_REQUIRED, WORKING, TaskRecord
from .stopping import short

if TYPE_CHECKING:
    from .extension import Tasks
    from .runtime import Launch

log = logging.getLogger("rondo.tasks")

SWEEP = 30  # heartbeats between two renewals of every task's own lease (10 min at lease=60)


class Keeper:
    """The worker's side of one running task: answers and cancellation (leases: `Leases`)."""

    def __init__(self, launch: Launch) -> None:
        self.launch = launch
        self.waiting: list[tuple[set[str], asyncio.Future[dict[str, Any]]]] = []
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self._changed = asyncio.Event()
        self._unlisten: Any = None

    def begin(self) -> None:
        launch = self.launch
        assert launch.record is not None
        on_change = getattr(launch.tasks.store, "on_change", None)
        if callable(on_change):
            loop = launch.loop
            changed = self._changed

            def wake() -> None:
                if loop.is_closed():
                    return
                try:
                    running = asyncio.get_running_loop()
                except RuntimeError:
                    running = None
                if running is loop:
                    changed.set()
                else:
                    loop.call_soon_threadsafe(changed.set)

            self._unlisten = on_change(launch.record.id, wake)
        self._task = launch.loop.create_task(self._watch())
        launch.tasks.leases(launch.loop).add(launch)

    @property
    def task(self) -> asyncio.Task[None] | None:
        """Its watch (the server's stop awaits it once the runner ended)."""
        return self._task

    def wake(self) -> None:
        self._changed.set()

    def stop(self) -> None:
        self._stopped = True
        self._changed.set()  # ends its wait even if the cancellation below is lost (seen inside a Redis read)
        self.launch.tasks.leases(self.launch.loop).discard(self.launch)
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()

    def expect(self, keys: set[str]) -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = self.launch.loop.create_future()
        self.waiting.append((keys, fut))
        self._changed.set()  # the answer may be in already
        return fut

    async def withdraw(self, keys: set[str]) -> None:
        """A question nobody waits for any more (cancelled): stop showing it."""
        self.waiting = [(k, f) for k, f in self.waiting if k != keys]
        assert self.launch.record is not None

        def drop(rec: TaskRecord) -> bool:
            if rec.terminal or not keys & rec.requests.keys():
                return False
            for key in keys:
                rec.requests.pop(key, None)
                rec.answers.pop(key, None)
            if not rec.requests and rec.status == INPUT_REQUIRED:
                rec.status = WORKING
            return True

        await self.launch.tasks.store.modify(self.launch.record.id, drop)

    async def _watch(self) -> None:
        launch = self.launch
        tasks = launch.tasks
        assert launch.record is not None
        task_id = launch.record.id
        listening = self._unlisten is not None
        changed = self._changed
        try:
            while not self._stopped:
                changed.clear()  # before reading: a write from here on wakes the next wait
                rec = await tasks.store.get(task_id)
                if rec is None or rec.terminal or rec.cancel:
                    self._cancel()  # expired, settled elsewhere (a lease judged lost), cancelled
                    return
                if await self._deliver(rec):
                    continue  # it wrote: read again
                if self._stopped:
                    return
                if listening:
                    await changed.wait()
                else:
                    await tasks.store.wait((task_id,), tasks.watch_interval)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("task %s: the keeper failed; the lease will lapse", short(task_id))
            tasks.leases(launch.loop).discard(launch)

    async def _deliver(self, rec: TaskRecord) -> bool:
        ready = [(keys, fut) for keys, fut in self.waiting if keys <= rec.answers.keys()]
        if not ready:
            return False
        taken: dict[str, Any] = {}
        wanted = set().union(*(keys for keys, _ in ready))

        def take(r: TaskRecord) -> bool:
            for key in wanted:
                if key in r.answers:
                    taken[key] = r.answers.pop(key)
            if not r.requests and r.status == INPUT_REQUIRED:
                r.status = WORKING
            r.updated = time.time()
            return True

        assert self.launch.record is not None
        await self.launch.tasks.store.modify(self.launch.record.id, take)
        for keys, fut in ready:
            if keys <= taken.keys():
                self.waiting.remove((keys, fut))
                if not fut.done():
                    fut.set_result({k: taken[k] for k in keys})
        return True

    def _cancel(self) -> None:
        launch = self.launch
        launch.cancelled.set()
        for _, fut in self.waiting:
            fut.cancel()
        self.waiting.clear()
        if launch.runner is not None and not launch.runner.done():
            launch.runner.cancel()


class Leases:
    """Renews the lease of every task one event loop runs, together: one timer for them all."""

    def __init__(self, tasks: Tasks, loop: asyncio.AbstractEventLoop) -> None:
        self.tasks = tasks
        self.loop = loop
        self.running: dict[str, Launch] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, launch: Launch) -> None:
        assert launch.record is not None
        self.running[launch.record.id] = launch
        if self._task is None or self._task.done():
            self._task = self.loop.create_task(self._renew())

    def discard(self, launch: Launch) -> None:
        if launch.record is not None:
            self.running.pop(launch.record.id, None)

    def stop(self) -> asyncio.Task[None] | None:
        """The server stops: its timer is cancelled (and handed over to be awaited)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        return task

    async def _renew(self) -> None:
        """Every third of the lease: one heartbeat for the whole worker when the store keeps
        them (`beat`), so the cost does not grow with the tasks; every `SWEEP`-th time (or
        every time, on a store without heartbeats) each task's own lease as well, which also
        finds tasks that expired while running."""
        tasks = self.tasks
        store = tasks.store
        beat = getattr(store, "beat", None)
        renew_many = getattr(store, "renew_many", None)
        ticks = 0
        while self.running:
            await asyncio.sleep(tasks.lease / 3)
            ids = list(self.running)
            if not ids:
                break
            ticks += 1
            until = time.time() + tasks.lease
            missed: list[str] = []
            try:
                if callable(beat):
                    await beat(tasks.worker_id, until)
                    if ticks % SWEEP:
                        continue
                if callable(renew_many):
                    missed = await renew_many(ids, until)
                else:
                    missed = [i for i in ids if not await tasks.renew(i, until)]
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("could not renew the leases of %d tasks; retrying", len(ids))
                continue
            for task_id in missed:  # gone or finished: let its keeper see it
                launch = self.running.get(task_id)
                if launch is not None and launch.keeper is not None:
                    launch.keeper.wake()
