"""Tasks through the proxy: the upstream's `io.modelcontextprotocol/tasks`, relayed.

`TaskRelay` is the extension a proxy installs for its upstream. It is advertised only while the
upstream advertises tasks. Its `tools/call` wrap lets a call whose client declared tasks come
back as the upstream's task (`resultType: "task"`), under a proxy task id; `tasks/get`,
`tasks/update` and `tasks/cancel` take that id, check it, and are relayed upstream with the
upstream's own id; a `subscriptions/listen` naming such ids in `taskIds` is followed on the
upstream's own listen stream (`relay_task_notes`, gateway/task_listen.py).

A proxy task id keeps no memory: it is `t2.<upstream id>.<key id>.<mac>`, where the MAC (the
proxy's `StatePolicy` keys) binds the upstream's id to this upstream and to the principal the
proxy authenticated; its input frames each field with its length, so no field's content can
move a boundary. Any replica with the keys serves it; another principal's id, another
upstream's, or an edited one is refused -32602 exactly as an unknown id is, and never reaches
the upstream. A `t1` id (fields joined by newlines, which a field could contain) is refused as
unknown. An upstream task id longer than `MAX_UPSTREAM_ID` bytes is not wrapped: the upstream
task is cancelled and the `tools/call` fails -32603, so no task is issued that no id reaches.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import hmac
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..auth.principal import CALLER, Principal
from ..client import ClientError, RequestTimeout
from ..server.method import Handler, Method, Wrap
from ..server.request import Request
from ..state.policy import anonymous
from ..wire.era import MODERN
from ..wire.errors import McpError, invalid_params, missing_capability
from .upstream_errors import passed_on

if TYPE_CHECKING:
    from ..client import Client
    from ..client.session import ResultHandler
    from ..core.core import Core
    from ..server.server import Server
    from .task_hub import TaskRelays

    # Moved to gateway/task_listen.py; still importable from here (`__getattr__` below).
    from .task_listen import MAX_TASK_IDS as MAX_TASK_IDS
    from .task_listen import relay_task_notes as relay_task_notes
    from .upstream import Upstream

log = logging.getLogger("rondo.gateway")

UNAVAILABLE = -32603
# The extension's wire names, spelled here: the gateway relays tasks, it does not run them, so
# it needs nothing of rondo's own tasks package (which a proxy never imports).
EXTENSION = "io.modelcontextprotocol/tasks"
NOT_FOUND = "Failed to retrieve task: Task not found"
_PREFIX = "t2"
_MAX_ID = 512  # a proxy task id longer than this is not one of ours
_MAC_BYTES = 20
# The longest upstream task id (UTF-8 bytes) a proxy id carries: its base64 (448 characters),
# "t2." and the dots, the longest key id (32) and the MAC (27) make exactly `_MAX_ID`.
MAX_UPSTREAM_ID = 336
_MODERN = frozenset({MODERN})


class _Caught:
    """Where the upstream's task lands while one relayed `tools/call` runs."""

    __slots__ = ("task",)

    def __init__(self) -> None:
        self.task: dict[str, Any] | None = None


_CATCH: contextvars.ContextVar[_Caught | None] = contextvars.ContextVar(
    "rondo_proxy_task", default=None)


class TaskPassThrough:
    """The upstream client's half: takes `resultType: "task"` (declared per request only when
    the downstream client declared tasks) and hands the task to the relaying `tools/call`."""

    name = EXTENSION
    capability: Mapping[str, Any] = {}

    def __init__(self) -> None:
        self.result_types: Mapping[str, ResultHandler] = {"task": self._caught}

    @staticmethod
    async def _caught(client: Client, method: str, params: dict[str, Any],
                      result: dict[str, Any]) -> dict[str, Any]:
        caught = _CATCH.get()
        if caught is None or method != "tools/call":
            # An upstream that answers a task to a request that did not declare tasks.
            raise ClientError(f"upstream answered {method} with a task it was not offered")
        caught.task = result
        # A placeholder the wrap replaces with the task (the tool's shaping never reaches
        # the client).
        return {"content": [], "resultType": "complete"}


def declares_tasks(capabilities: Mapping[str, Any] | None) -> bool:
    extensions = (capabilities or {}).get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def upstream_capabilities(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The extensions part of what a relayed request tells the upstream: tasks, when this
    request's client declared them (the upstream then may answer with a task)."""
    return {"extensions": {EXTENSION: {}}} if declares_tasks(declared) else {}


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    # Only the one spelling `_b64` writes: the decoder alone skips characters outside the
    # alphabet and takes padding and unused low bits as they come, so an edited id ("!" or
    # "=" added, a last character's spare bits changed) would open as the one it was made from.
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:
        raise ValueError("not base64url as a proxy task id spells it")
    return raw


class TaskRelay:
    """The upstream's tasks extension, served by the proxy (see the module docstring)."""

    name = EXTENSION

    def __init__(self, link: Upstream) -> None:
        self.link = link
        self.server: Server | None = None
        # `active()` asked on every relayed call: judged again only when the upstream client,
        # its era or what it says it offers (a reconnect's new capabilities) changed.
        self._judged: tuple[Any, Any, str | None, bool] = (None, None, "", False)

    # -- the Extension protocol --------------------------------------------------------------

    def attach(self, server: Server) -> None:
        self.server = server

    def hub(self) -> TaskRelays:
        """Mounted (gateway/carry.py): the parent serves every mounted proxy's relay through one
        `TaskRelays` (gateway/task_hub.py), which routes by the sealed task id."""
        from .task_hub import TaskRelays

        return TaskRelays()

    def relays(self, tool: Any) -> bool:
        """Is `tool` (a mounted copy included: same handler) one this proxy serves?"""
        server = self.server
        if server is None:
            return False
        own = server.tools.get(tool.name.split("_", 1)[-1])
        return (own is not None and own.fn is tool.fn) or any(
            each.fn is tool.fn for each in list(server.tools.values()))

    def use_redis(self, url: str) -> None:
        """`rondo run --redis`: the proxy's hold bridge forwards retries over Redis (this is
        the proxy's one extension, so the fleet's `use_redis` hook reaches the bridge here)."""
        if self.link.bridge is not None:
            self.link.bridge.use_redis(url)

    def active(self) -> bool:
        """Does the upstream offer tasks (a 2026-07-28 upstream with the extension)?"""
        client = self.link.client
        if client is None:
            return False
        caps, era = client.server_capabilities, client.era
        seen_client, seen_caps, seen_era, verdict = self._judged
        if client is seen_client and caps is seen_caps and era == seen_era:
            return verdict
        offers = (caps or {}).get("extensions")
        verdict = (era == MODERN and isinstance(offers, Mapping)
                   and isinstance(offers.get(EXTENSION), Mapping))
        self._judged = (client, caps, era, verdict)
        return verdict

    def capability(self, server: Server) -> Mapping[str, Any] | None:
        return {} if self.active() else None

    def methods(self) -> Iterable[Method]:
        return [Method(method, self._relay_method, _MODERN, suspends=_always, name_field="taskId")
                for method in ("tasks/get", "tasks/update", "tasks/cancel")]

    def wraps(self) -> Iterable[Wrap]:
        return [Wrap("tools/call", self._tools_call, tools=lambda _tool: self.active(),
                     suspends=_always),
                Wrap("subscriptions/listen", self._listen, suspends=_always)]

    async def _listen(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        from .task_listen import relay_task_notes  # task_listen imports this module

        return await relay_task_notes(core, req, call_next, [self])

    # -- ids -----------------------------------------------------------------------------------

    def _principal(self, core: Core, req: Request) -> str:
        ctx = core.modern.context(core, req)
        policy = core.server.state_policy
        principal = anonymous(ctx) if policy is None else policy.principal_of(ctx)
        return "" if principal is None else "p:" + principal

    def _mac(self, key: Any, kid: str, upstream_id: str, principal: str) -> bytes:
        return bytes(key.mac(mac_input(kid, self.link.identity, upstream_id, principal))
                     )[:_MAC_BYTES]

    def _keyring(self, core: Core) -> Any:
        policy = core.server.state_policy
        if policy is None:  # proxy() refuses state=None; a hand-built server may not
            raise McpError(UNAVAILABLE, "the proxy has no state policy to bind task ids with")
        return policy.keyring

    def wrap_id(self, core: Core, req: Request, upstream_id: str) -> str:
        """The proxy task id for `upstream_id`, bound to this upstream and caller; -32603 for
        an upstream id longer than `MAX_UPSTREAM_ID` bytes (no id of ours could carry it)."""
        if len(upstream_id.encode()) > MAX_UPSTREAM_ID:
            raise McpError(UNAVAILABLE, "the upstream's task id is longer than "
                           f"{MAX_UPSTREAM_ID} bytes; the proxy cannot relay that task")
        keyring = self._keyring(core)
        mac = self._mac(keyring.signing_key, keyring.signing_id, upstream_id,
                        self._principal(core, req))
        return ".".join((_PREFIX, _b64(upstream_id.encode()), keyring.signing_id, _b64(mac)))

    def unwrap_id(self, core: Core, req: Request, task_id: Any) -> str:
        """The upstream's id inside a proxy task id this principal holds, else -32602."""
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("taskId must be a non-empty string")
        parts = task_id.split(".") if len(task_id) <= _MAX_ID else []
        try:
            if len(parts) != 4 or parts[0] != _PREFIX:
                raise ValueError("not a proxy task id")
            upstream_id = _unb64(parts[1]).decode()
            mac = _unb64(parts[3])
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise invalid_params(NOT_FOUND) from None
        key = self._keyring(core).lookup(parts[2])
        if key is None or not hmac.compare_digest(
                mac, self._mac(key, parts[2], upstream_id, self._principal(core, req))):
            raise invalid_params(NOT_FOUND)  # another's, another upstream's, or edited: unknown
        return upstream_id

    # -- rows ----------------------------------------------------------------------------------

    async def listen_upstream(self, stack: contextlib.AsyncExitStack, req: Request,
                              upstream_ids: list[str]) -> Any:
        """The upstream's listen stream for `upstream_ids`, entered on `stack` (None when it
        cannot be opened: those ids are then not acknowledged downstream)."""
        client = self.link.client
        if client is None:
            return None
        caller = CALLER.set(req.auth if isinstance(req.auth, Principal) else None)
        try:  # whom it is opened for (`upstream_auth`): the stream's request copies it
            return await stack.enter_async_context(client.listen(task_ids=upstream_ids))
        except (ClientError, McpError, OSError) as exc:
            log.warning("upstream %s: task notifications not followed: %s", self.link.identity,
                        type(exc).__name__)
            return None
        finally:
            CALLER.reset(caller)

    async def _tools_call(self, core: Core, req: Request, call_next: Handler) -> dict[str, Any]:
        if not declares_tasks(req.env.capabilities):
            return await call_next(core, req)
        caught = _Caught()
        token = _CATCH.set(caught)
        try:
            result = await call_next(core, req)
        finally:
            _CATCH.reset(token)
        task = caught.task
        if task is None:
            return result
        upstream_id = _task_id(task)
        try:
            task_id = self.wrap_id(core, req, upstream_id)
        except McpError:
            await self._cancel_unreachable(req, upstream_id)
            raise
        return _rewritten(task, task_id, "task")

    async def _cancel_unreachable(self, req: Request, upstream_id: str) -> None:
        """Cancel upstream a task no proxy id can name (best effort, within the link's
        timeout): nobody could ever get, update or cancel it through the proxy."""
        client = self.link.client
        if client is None:
            return
        caller = CALLER.set(req.auth if isinstance(req.auth, Principal) else None)
        try:
            await client.request("tasks/cancel", {"taskId": upstream_id})
        except (ClientError, McpError, OSError) as exc:
            log.warning("upstream %s: an unrelayable task was not cancelled: %s",
                        self.link.identity, type(exc).__name__)
        finally:
            CALLER.reset(caller)

    async def _relay_method(self, core: Core, req: Request) -> dict[str, Any]:
        if not declares_tasks(req.env.capabilities):
            raise missing_capability({"extensions": {EXTENSION: {}}})
        client = self.link.client
        if client is None or not self.active():
            raise McpError(-32601, f"Method not found: {req.method}")
        upstream_id = self.unwrap_id(core, req, req.params.get("taskId"))
        params: dict[str, Any] = {"taskId": upstream_id}
        if req.method == "tasks/update":
            responses = req.params.get("inputResponses")
            if not isinstance(responses, Mapping):
                raise invalid_params("inputResponses must be an object")
            params["inputResponses"] = dict(responses)
        # Whom it is relayed for: `upstream_auth` exchanges that caller's token (as for calls).
        caller = CALLER.set(req.auth if isinstance(req.auth, Principal) else None)
        try:
            result = await client.request(req.method, params)
        except McpError as exc:
            if exc.code == -32602:
                raise invalid_params(NOT_FOUND) from None
            raise passed_on(exc) from None
        except RequestTimeout:
            raise McpError(UNAVAILABLE, f"upstream did not answer within {self.link.timeout:g} s"
                           ) from None
        except (ClientError, OSError) as exc:
            log.warning("upstream %s: %s: %s", self.link.identity, type(exc).__name__, exc)
            raise McpError(UNAVAILABLE, "upstream unavailable") from None
        finally:
            CALLER.reset(caller)
        if req.method != "tasks/get":
            return {}  # update and cancel: the empty ack
        _task_id(result)
        # The id as the client holds it (any key of ours).
        return _rewritten(result, req.params["taskId"], "complete")


def mac_input(kid: str, identity: str, upstream_id: str, principal: str) -> bytes:
    """What a `t2` id's MAC covers: each field framed by its UTF-8 length, so two different
    tuples never give the same bytes whatever the fields contain."""
    out = bytearray(b"rondo-proxy-task/2")
    for field in (kid, identity, upstream_id, principal):
        raw = field.encode()
        out += b"%d:" % len(raw) + raw
    return bytes(out)


def _task_id(task: Mapping[str, Any]) -> str:
    upstream_id = task.get("taskId")
    if not isinstance(upstream_id, str) or not upstream_id:
        raise McpError(UNAVAILABLE, "upstream answered a task without a taskId")
    return upstream_id


def _rewritten(task: Mapping[str, Any], task_id: str, result_type: str) -> dict[str, Any]:
    out = {key: value for key, value in task.items() if key != "requestState"}
    out["taskId"] = task_id
    out["resultType"] = result_type
    return out


def _always(core: Core, params: Mapping[str, Any]) -> bool:
    return True


def __getattr__(name: str) -> Any:
    """`relay_task_notes` and `MAX_TASK_IDS` moved to gateway/task_listen.py and still import
    from here: task_listen imports this module, so it is loaded when first asked for."""
    if name in ("relay_task_notes", "MAX_TASK_IDS"):
        from . import task_listen

        return getattr(task_listen, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
