"""Hold in a fleet: a retry that reaches a proxy process without its held call is forwarded
over Redis to the process that holds it (docs/gateway.md, "Fleets").

Each process with a hold bridge and a Redis (`rondo proxy --bridge hold --redis URL`, which
`rondo run`'s `connect_redis` hands to the proxy) subscribes to one channel of its own,
`rondo:bridge:<worker>` (the worker id its sealed states name). A retry whose state names
another worker is published to that worker's channel as a request (`{"t": "q"}`: the verified
state, the retry's input responses and client capabilities); the holder resumes the held call
as if the retry had reached it and publishes the outcome to the asker's channel (`{"t": "a"}`:
the result, the next round, or the error).

While the holder resumes the call, the upstream's progress and log messages of that round go
to the asker's channel too (`{"t": "n"}`, before the answer, in order; at most `MAX_NOTES` a
round), and the asker passes them to its client as a local round does: log messages at the
level the retry asked for (sent with the request), progress only when the retry carried a
progress token (the asker's own token is used).

Bounds: `PUBLISH` reports how many processes listen on the holder's channel; none (the holder
exited, was killed, or never had Redis) is the clean -32602 at once. A holder that listens but
does not answer within the upstream's timeout plus `MARGIN` seconds (it died while resuming, or
Redis is away) is the same -32602 then.

Messages come from a Redis the fleet trusts (as its change bus); a malformed or oversized one is
dropped. The state inside was verified by the forwarding process's state policy (shared keys).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any

import msgspec

from ...mrtr.result import InputRequired
from ...wire.errors import INVALID_PARAMS, McpError
from ...wire.meta import LOG_LEVEL_RANK

if TYPE_CHECKING:
    from .relay import Bridge

log = logging.getLogger("rondo.gateway")

PREFIX = "rondo:bridge:"
MARGIN = 2.0  # seconds past the upstream's timeout a forwarded retry waits for its holder
CONNECT_TIMEOUT = 5.0  # seconds: connecting to Redis, subscribing, and one PUBLISH
MAX_MESSAGE = 4 * 1024 * 1024  # bytes: a larger message on the channel is dropped
RETRY_SECONDS = 0.5
MAX_NOTES = 1000  # progress and log messages one forwarded round passes on at most


def channel(worker: str) -> str:
    return PREFIX + worker


def _gone(why: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid requestState: {why}; call again without "
                    "requestState")


class _Retry:
    """Stands for the forwarded retry's `Context` in the holding process: the round's progress
    and log messages go to `notes` (published to the asker, gateway/bridge/forward.py)."""

    __slots__ = ("client_capabilities", "input_responses", "log_level", "noted", "notes",
                 "request_params", "state")
    auth = None

    def __init__(self, state: Any, responses: Any, capabilities: Any, *, level: Any = None,
                 progress: Any = False,
                 notes: asyncio.Queue[dict[str, Any] | None] | None = None) -> None:
        self.state = state
        self.input_responses = responses if isinstance(responses, dict) else {}
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.log_level = level if level in LOG_LEVEL_RANK else None
        # The bridge passes progress on only to a round whose request carried a token.
        self.request_params: dict[str, Any] = (
            {"_meta": {"progressToken": "forwarded"}} if progress is True else {})
        self.notes = notes
        self.noted = 0

    def _note(self, note: dict[str, Any]) -> None:
        if self.notes is not None and self.noted < MAX_NOTES:
            self.noted += 1
            self.notes.put_nowait(note)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        wanted = self.log_level
        if wanted is not None and LOG_LEVEL_RANK.get(level, -1) >= LOG_LEVEL_RANK[wanted]:
            self._note({"k": "log", "level": level, "data": data, "logger": logger})

    def report_progress(self, done: float, total: float | None = None,
                        message: str | None = None) -> None:
        if self.request_params:
            self._note({"k": "progress", "done": done, "total": total, "message": message})


def _pass_on(ctx: Any, note: Any) -> None:
    """A progress or log message the holder sent for the forwarded round, to its client."""
    if not isinstance(note, dict):
        return
    if note.get("k") == "log" and note.get("level") in LOG_LEVEL_RANK:
        logger = note.get("logger")
        ctx.log(note["level"], note.get("data"), logger if isinstance(logger, str) else None)
    elif note.get("k") == "progress":
        done, total, message = note.get("done"), note.get("total"), note.get("message")
        if isinstance(done, int | float) and not isinstance(done, bool) \
                and (total is None or isinstance(total, int | float)) \
                and (message is None or isinstance(message, str)):
            ctx.report_progress(done, total, message)


def _result_type(method: str) -> Any:
    from ...client.types import CallToolResult, GetPromptResult, ReadResourceResult

    return {"tools/call": CallToolResult, "prompts/get": GetPromptResult,
            "resources/read": ReadResourceResult}.get(method)


class Forwarder:
    """The Redis side of one hold bridge: serve forwarded retries, forward this process's."""

    def __init__(self, bridge: Bridge, url: str) -> None:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            raise ImportError("a hold bridge in a fleet needs the redis package: "
                              "pip install 'rondo-mcp[redis]'") from None
        self.bridge = bridge
        self._url = url
        self._redis: Any = None
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._asking: dict[str, Any] = {}  # the retry each forwarded request stands for
        self._serving: set[asyncio.Task[None]] = set()

    @property
    def bound(self) -> float:
        """Seconds a forwarded retry waits for its holder's answer."""
        return self.bridge.link.timeout + MARGIN

    async def start(self) -> None:
        import redis.asyncio

        self._redis = redis.asyncio.Redis.from_url(
            self._url, socket_connect_timeout=CONNECT_TIMEOUT)
        self._pubsub = self._redis.pubsub()
        async with asyncio.timeout(CONNECT_TIMEOUT):
            await self._pubsub.subscribe(channel(self.bridge.worker))
            while True:  # subscribed once confirmed: a retry forwarded after this is heard
                message = await self._pubsub.get_message(timeout=CONNECT_TIMEOUT)
                if message is not None and message.get("type") == "subscribe":
                    break
        self._task = asyncio.get_running_loop().create_task(self._read())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for serving in list(self._serving):
            serving.cancel()
        for waiting in self._waiting.values():
            waiting.cancel()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None

    # -- asking the holder ------------------------------------------------------------------

    async def forward(self, ctx: Any, method: str, state: dict[str, Any]) -> Any:
        """The retry `ctx` (whose `state` names another worker) served by its holder."""
        holder = state.get("w")
        if self._redis is None or not isinstance(holder, str):
            raise _gone("the upstream call it names is held by another proxy process, "
                        "which this one cannot reach")
        rid = secrets.token_urlsafe(12)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        self._asking[rid] = ctx
        meta = (getattr(ctx, "request_params", None) or {}).get("_meta")
        try:
            message = msgspec.json.encode({
                "t": "q", "id": rid, "from": self.bridge.worker, "m": method, "s": state,
                "i": dict(ctx.input_responses or {}), "c": dict(ctx.client_capabilities or {}),
                "l": getattr(ctx, "log_level", None),
                "p": isinstance(meta, dict) and meta.get("progressToken") is not None})
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    listening = await self._redis.publish(channel(holder), message)
            except Exception as exc:
                log.warning("upstream %s: cannot forward a held call's retry (%s)",
                            self.bridge.link.identity, type(exc).__name__)
                listening = 0
            if not listening:
                raise _gone("the proxy process holding the upstream call it names is gone "
                            "(bridge=hold keeps it in the process that began it)")
            try:
                async with asyncio.timeout(self.bound):
                    reply = await future
            except TimeoutError:
                raise _gone(f"the proxy process holding the upstream call it names did not "
                            f"answer within {self.bound:g} s") from None
        finally:
            self._waiting.pop(rid, None)
            self._asking.pop(rid, None)
        return self._outcome(method, reply)

    @staticmethod
    def _outcome(method: str, reply: dict[str, Any]) -> Any:
        if "e" in reply:
            error = reply["e"]
            raise McpError(int(error.get("code", -32603)), str(error.get("message", "")),
                           error.get("data"))
        if "ir" in reply:
            asked = reply["ir"]
            return InputRequired(asked.get("r") or {}, state=asked.get("s"))
        kind = _result_type(method)
        value = reply.get("ok")
        return value if kind is None else msgspec.convert(value, kind)

    # -- serving what is forwarded here -----------------------------------------------------

    async def _send_notes(self, notes: asyncio.Queue[dict[str, Any] | None],
                          message: dict[str, Any]) -> None:
        """Publish the round's progress and log messages in order, until the round ends
        (None); one that cannot be published ends the passing on (the answer still goes)."""
        failed = False
        while (note := await notes.get()) is not None:
            if failed or self._redis is None:
                continue
            try:
                async with asyncio.timeout(CONNECT_TIMEOUT):
                    await self._redis.publish(channel(message["from"]), msgspec.json.encode(
                        {"t": "n", "id": message["id"], "n": note}))
            except Exception as exc:
                log.warning("upstream %s: cannot pass on a forwarded round's message (%s)",
                            self.bridge.link.identity, type(exc).__name__)
                failed = True

    async def _read(self) -> None:
        while True:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True,
                                                         timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: the client reconnects and resubscribes
                log.warning("rondo.gateway: bridge channel read failed (%s); retrying",
                            type(exc).__name__)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if message is not None and message.get("type") == "message":
                self.receive(message.get("data"))

    def receive(self, data: Any) -> None:
        """Take one raw channel message: a forwarded retry to serve, or an answer awaited."""
        if not isinstance(data, bytes) or len(data) > MAX_MESSAGE:
            return
        try:
            message = msgspec.json.decode(data)
        except (msgspec.DecodeError, RecursionError):
            return
        if not isinstance(message, dict) or not isinstance(message.get("id"), str):
            return
        if message.get("t") == "a":
            future = self._waiting.get(message["id"])
            if future is not None and not future.done():
                future.set_result(message)
        elif message.get("t") == "n":
            asking = self._asking.get(message["id"])
            if asking is not None:
                _pass_on(asking, message.get("n"))
        elif message.get("t") == "q" and isinstance(message.get("from"), str) \
                and isinstance(message.get("s"), dict) and isinstance(message.get("m"), str):
            task = asyncio.get_running_loop().create_task(self._serve(message))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)

    async def _serve(self, message: dict[str, Any]) -> None:
        notes: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        retry = _Retry(message["s"], message.get("i"), message.get("c"), level=message.get("l"),
                       progress=message.get("p"), notes=notes)
        reply: dict[str, Any] = {"t": "a", "id": message["id"]}
        sender = asyncio.ensure_future(self._send_notes(notes, message))
        try:
            outcome = await self.bridge.relay(retry, message["m"], {})  # type: ignore[arg-type]
        except McpError as exc:
            reply["e"] = {"code": exc.code, "message": exc.message, "data": exc.data}
        except Exception as exc:
            log.warning("upstream %s: serving a forwarded retry: %s", self.bridge.link.identity,
                        type(exc).__name__)
            reply["e"] = {"code": -32603, "message": "upstream unavailable"}
        else:
            if isinstance(outcome, InputRequired):
                reply["ir"] = {"r": outcome.input_requests, "s": outcome.state}
            else:
                reply["ok"] = msgspec.to_builtins(outcome)
        finally:
            retry.notes = None  # the round is over: what it sends later is not its own
            notes.put_nowait(None)
        await sender  # every message of the round is published before its answer
        if self._redis is None:
            return
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                await self._redis.publish(channel(message["from"]), msgspec.json.encode(reply))
        except Exception as exc:
            log.warning("upstream %s: cannot answer a forwarded retry (%s)",
                        self.bridge.link.identity, type(exc).__name__)
