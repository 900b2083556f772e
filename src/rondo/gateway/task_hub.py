"""Several proxies' task relays mounted into one parent, served as one tasks extension.

`TaskRelays` is the hub a mounted proxy's `TaskRelay` (gateway/tasks.py) joins through
`hub()`/`join`/`leave` (gateway/carry.py): it routes each `tools/call`, `tasks/*` row and
listen stream's `taskIds` to the relay whose MAC the proxy task id carries, and every other
id to the parent's own tasks extension beside them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..server.method import Handler, Method, Wrap
from ..wire.errors import McpError, invalid_params, missing_capability
from .task_listen import relay_task_notes
from .tasks import (
    _MODERN,
    _PREFIX,
    EXTENSION,
    NOT_FOUND,
    TaskRelay,
    _always,
    declares_tasks,
)

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from ..server.server import Server


class TaskRelays:
    """The tasks relays of several proxies mounted into one parent, as one extension: a
    `tools/call` of a mounted proxy's tool goes through that proxy's relay (its task ids are
    bound to its upstream), and `tasks/get|update|cancel` go to the relay whose MAC the id
    carries: the id names its upstream, so nothing is kept to route it.

    The parent's own tasks (rondo's tasks extension, for `task=` tools of the parent or of a
    mounted child) run beside them: `local` is the parent's or a child's tasks extension this
    hub adopted (`adopts`, `join`), or the registered default (`server/defaults.py`, the
    `task` tool option; made when first needed), so the gateway never names the package. An
    id no relay verifies goes to `local`; with none, it is -32602 "Task not found", as an
    unknown one."""

    name = EXTENSION
    tool_options = ("task",)  # `settle()` installs no default beside it: `local` is made here

    def __init__(self) -> None:
        self.members: dict[str, TaskRelay] = {}
        self.local: Any = None  # the server's own tasks extension, if adopted or made
        self.holders: set[str] = set()  # who brought `local` ("": the parent's own)
        self.server: Server | None = None
        self._rows: dict[str, Any] = {}
        self._wraps: dict[str, Wrap] = {}
        self._made: Any = None  # `local` when this hub made it (the registered default)

    def attach(self, server: Server) -> None:
        if self.server is not server:
            server.lifespan(self._lifespan)  # the default made here is stopped with the server
        self.server = server

    async def _lifespan(self, server: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            # The registered default this hub made (`_local_tasks`) is attached to no server,
            # so no lifespan of its own stops it: stop it here. An adopted one stops with the
            # server that installed it.
            stop = getattr(self._made, "stop", None)
            if stop is not None:
                await stop()

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        if any(m.active() for m in list(self.members.values())):
            return {}
        local = self.local
        if local is not None:
            return local.capability(server)  # type: ignore[no-any-return]
        return {} if any(tool.task for tool in server.tools.values()) else None

    def adopts(self, extension: Any) -> bool:
        """Can `extension`, a tasks extension that relays nothing, run this server's own tasks
        (`gateway/carry.py`)? One instance only: another one than `local` cannot."""
        return not isinstance(extension, TaskRelay) and (
            self.local is None or self.local is extension)

    def join(self, namespace: str, member: Any) -> None:
        if isinstance(member, TaskRelay):
            self.members[namespace] = member
            return
        if not self.adopts(member):
            raise ValueError(f"two {EXTENSION!r} extensions ({type(member).__name__} and "
                             f"{type(self.local).__name__}) would run this server's tasks; "
                             "install the same instance on both, or only on the parent")
        self._take(member)
        self.holders.add(namespace)

    def leave(self, namespace: str) -> None:
        self.members.pop(namespace, None)
        if namespace in self.holders:
            self.holders.discard(namespace)
            if not self.holders:
                self._take(None)

    def alone(self) -> Any:
        """The adopted tasks extension once no proxy relays through this hub (else None): the
        carrier gives it back its own place on the server."""
        return self.local if not self.members and self.holders else None

    def _take(self, local: Any) -> None:
        self.local = local
        self._rows = {} if local is None else {m.name: m.handler for m in local.methods()}
        wraps = getattr(local, "wraps", None)
        self._wraps = {} if wraps is None else {w.method: w for w in wraps()}

    def _local_tasks(self) -> Any:
        """`local`, made from the registered default the first time a task of this server's
        own needs it."""
        if self.local is None:
            from ..server.defaults import default_of

            self._take(default_of("task"))
            self._made = self.local
        return self.local

    async def tool_of(self, core: Core, req: Request, task_id: Any) -> str | None:
        """The tool whose call made a task of the server's own (`local`'s); a proxy's task
        names none (its tool is the upstream's business)."""
        if isinstance(task_id, str) and task_id.startswith(_PREFIX + "."):
            return None
        find = getattr(self.local, "tool_of", None)
        return None if find is None else await find(core, req, task_id)

    def context_calls(self) -> dict[str, Any]:
        """`ctx.start_task()` in the server's own task tools: `local`'s."""
        def start_task(ctx: Any, *args: Any, **kwargs: Any) -> Any:
            return self._local_tasks().context_calls()["start_task"](ctx, *args, **kwargs)

        return {"start_task": start_task}

    def fleet_problem(self, server: Server) -> str | None:
        check = getattr(self.local, "fleet_problem", None)
        return None if check is None else check(server)

    def use_redis(self, url: str) -> None:
        for member in list(self.members.values()):
            member.use_redis(url)
        if self.local is not None and callable(getattr(self.local, "use_redis", None)):
            self.local.use_redis(url)

    def methods(self) -> Iterable[Method]:
        return [Method(method, self._relay_method, _MODERN, suspends=_always, name_field="taskId")
                for method in ("tasks/get", "tasks/update", "tasks/cancel")]

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap("tools/call", self._tools_call, tools=self._takes, suspends=_always),
                Wrap("subscriptions/listen", self._listen, suspends=_always)]

    def _takes(self, tool: Any) -> bool:
        return tool.task is not None or self._owner(tool) is not None

    async def _listen(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        inner = call_next
        wrap = self._wraps.get("subscriptions/listen")
        if wrap is not None:  # the server's own tasks' notifications, inside the relays'
            own = wrap.handler

            async def inner(core: Core, req: Request) -> dict[str, Any]:
                result: dict[str, Any] = await own(core, req, call_next)
                return result

        return await relay_task_notes(core, req, inner, list(self.members.values()),
                                      keep_inner=wrap is not None)

    def _owner(self, tool: Any) -> TaskRelay | None:
        # A mounted tool is `<namespace>_<name>` (a namespace has no `_`): one lookup, not a
        # scan of every proxy's tools on each call; the handler confirms it is the proxy's.
        member = self.members.get(tool.name.split("_", 1)[0])
        if member is None or not member.active() or not member.relays(tool):
            return None
        return member

    async def _tools_call(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        name = req.params.get("name")
        tool = core.server.tools.get(name) if isinstance(name, str) else None
        member = None if tool is None else self._owner(tool)
        if member is not None:
            return await member._tools_call(core, req, call_next)
        if tool is not None and tool.task is not None:
            self._local_tasks()
            result: dict[str, Any] = await self._wraps["tools/call"].handler(core, req, call_next)
            return result
        return await call_next(core, req)

    async def _relay_method(self, core: Core, req: Request) -> dict[str, Any]:
        if not declares_tasks(req.env.capabilities):
            raise missing_capability({"extensions": {EXTENSION: {}}})
        task_id = req.params.get("taskId")
        if isinstance(task_id, str) and task_id.startswith(_PREFIX + "."):
            for member in list(self.members.values()):
                try:
                    member.unwrap_id(core, req, task_id)
                except McpError:
                    continue
                return await member._relay_method(core, req)
        own = self._rows.get(req.method)
        if own is not None:  # not a proxy's: the server's own task, or unknown to it too
            result: dict[str, Any] = await own(core, req)
            return result
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("taskId must be a non-empty string")
        raise invalid_params(NOT_FOUND)
