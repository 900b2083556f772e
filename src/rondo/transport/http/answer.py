"""How a 2026-07-28 request is answered over HTTP once its checks passed: one JSON body, or,
when its handler emits notifications first, an SSE stream of them followed by the result. A
request that may wait runs as a task whose notifications stream as they come (bounded by
`max_pending`, kept alive every `keepalive` seconds) and which is cancelled if the client
leaves; the others run inline, their notifications answered with the result. A lane's request
(a proxy's relayed call) that asked for neither progress nor log messages waits in the
request's own task: nothing of it can stream."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from ...core.failures import masked_internal_error
from ...server.request import Emit, Request
from ...wire.errors import SERVER_BUSY, McpError, http_status, internal_error
from ...wire.jsonrpc import error_response
from .asgi import KEEPALIVE_FRAME, SSE_HEADERS, Receive, Scope, Send, send_json, sse_frame
from .pending import PendingNotes

if TYPE_CHECKING:
    from .app import HttpApp

log = logging.getLogger("rondo.http")
# A request still running after this long gets a watcher that cancels it if the client leaves.
DISCONNECT_WATCH_AFTER = 0.1


def keeper(notes: list[dict[str, Any]], cap: int) -> Callable[[dict[str, Any]], None]:
    """`emit` for a request answered inline: notifications wait for the answer, and a
    plain handler cannot wait for the client to read them, so those beyond the cap drop."""
    def keep(note: dict[str, Any]) -> None:
        if len(notes) < cap:
            notes.append(note)

    return keep


def send_inline(
    send: Send, response: dict[str, Any], notes: list[dict[str, Any]]
) -> Awaitable[None]:
    """One JSON answer, or an SSE body of the notifications and then the answer. (A plain
    def returning the writer's coroutine: no frame of its own per request.)"""
    if not notes:
        error = response.get("error")
        return send_json(send, http_status(error["code"]) if error is not None else 200, response)
    notes.append(response)
    return _send_sse(send, notes)


async def answer(
    app: HttpApp,
    rid: Any,
    method: str,
    params: dict[str, Any],
    env: Any,
    scope: Scope,
    receive: Receive,
    send: Send,
    lane: Callable[[Emit], Coroutine[Any, Any, dict[str, Any]]] | None = None,
) -> None:
    """Answer one checked request: `core.dispatch`, or `lane(emit)` (a coroutine giving the
    result object, as dispatch does) for a request a lane of the core answers instead."""
    core = app.core
    if lane is None and not core.may_suspend(method, params):
        # Nothing to wait for: run inline, no task, no disconnect watcher.
        notes: list[dict[str, Any]] = []
        try:
            result = await core.dispatch(
                Request(rid, method, params, env, core.modern, emit=keeper(notes, app.max_pending),
                        auth=scope.get("auth"), headers=scope.get("headers", ()),
                        peer=scope.get("client")))
            response: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": result}
        except McpError as exc:
            response = error_response(rid, exc)
        except Exception:
            response = error_response(rid, masked_internal_error(
                log, f"unexpected failure answering {rid!r}"))
        await send_inline(send, response, notes)
        return
    # It may wait: run it as a task, stream what it emits meanwhile.
    auth = scope.get("auth")
    loop = asyncio.get_running_loop()
    queue = PendingNotes(app.max_pending)
    wake: asyncio.Future[None] = loop.create_future()
    state: dict[str, Any] = {"wake": wake}

    def poke() -> None:
        w = state["wake"]
        if not w.done():
            w.set_result(None)

    def emit(note: dict[str, Any]) -> None:
        if queue.add(note):
            poke()
        elif not state.get("overflow"):
            # The client is not reading: drop it (a listen stream leaves the fan-out)
            # rather than buffer without bound.
            state["overflow"] = True
            log.warning("dropping request %r: %d notifications unread", rid, len(queue))
            task.cancel()

    task = loop.create_task(
        core.dispatch(Request(rid, method, params, env, core.modern, emit=emit, auth=auth,
                              headers=scope.get("headers", ()), peer=scope.get("client")))
        if lane is None else lane(emit))
    task.add_done_callback(lambda _t: poke())
    watcher: asyncio.Task[None] | None = None

    def watch() -> None:
        nonlocal watcher
        if not task.done():
            watcher = loop.create_task(_cancel_on_disconnect(receive, task))

    timer = loop.call_later(DISCONNECT_WATCH_AFTER, watch)
    try:
        await wake
        if task.done() and not queue:
            await _json_result(send, rid, task)
            return
        await _stream(app, rid, task, queue, state, loop, send)
    finally:
        timer.cancel()
        if watcher is not None:
            watcher.cancel()
        if not task.done():
            task.cancel()


async def quiet_lane(
    app: HttpApp,
    rid: Any,
    lane: Callable[[Emit], Coroutine[Any, Any, dict[str, Any]]],
    receive: Receive,
    send: Send,
) -> None:
    """A lane's request that asked for neither progress nor log messages: nothing streams
    while it waits, so it runs in the request's own task rather than a task of its own (on
    a proxy's relayed call, a task, its callbacks and two loop turns fewer). What it emits
    anyway is sent with its answer (one SSE body), and a client that leaves cancels it, as
    `answer` does for a task of its own (watched once it has run a while: `late_watch.py`)."""
    if asyncio.current_task() is None:
        # serve()'s eager start runs a request without a task until it first waits; the
        # watcher below, and what the lane awaits (clients' deadlines), need one.
        await asyncio.sleep(0)
    task = asyncio.current_task()
    assert task is not None
    gone: list[bool] = []  # the client left: the watcher cancelled this task
    watcher: asyncio.Task[None] | None = None

    def watch() -> None:
        nonlocal watcher
        watcher = asyncio.get_running_loop().create_task(
            _cancel_on_disconnect(receive, task, gone))

    notes: list[dict[str, Any]] = []
    late = app.late_watch
    late.add(task, watch)
    try:
        response: dict[str, Any] = {
            "jsonrpc": "2.0", "id": rid, "result": await lane(keeper(notes, app.max_pending))}
    except McpError as exc:
        response = error_response(rid, exc)
    except asyncio.CancelledError:
        if not gone:
            raise
        task.uncancel()
        response = error_response(rid, internal_error("Request cancelled"))
    except Exception as exc:
        response = error_response(rid, masked_internal_error(
            log, f"unexpected failure answering {rid!r}", exc))
    finally:
        late.discard(task)
        if watcher is not None:
            watcher.cancel()
    await send_inline(send, response, notes)


async def _stream(
    app: HttpApp,
    rid: Any,
    task: asyncio.Task[Any],
    queue: PendingNotes,
    state: dict[str, Any],
    loop: asyncio.AbstractEventLoop,
    send: Send,
) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    try:
        while True:
            if queue:
                batch = b"".join(sse_frame(note) for note in queue.take())
                queue.sending = True
                await send({"type": "http.response.body", "body": batch, "more_body": True})
                queue.sending = False
            if task.done():
                break
            state["wake"] = wake = loop.create_future()
            try:
                await asyncio.wait_for(asyncio.shield(wake), app.keepalive)
            except TimeoutError:
                await send({"type": "http.response.body", "body": KEEPALIVE_FRAME, "more_body": True})
        final = _final(rid, task) if not state.get("overflow") else error_response(rid, McpError(
            SERVER_BUSY, f"Stream closed: the client did not read {app.max_pending} "
                         "pending notifications"))
        await send({"type": "http.response.body", "body": sse_frame(final), "more_body": False})
    except OSError:
        task.cancel()


async def _send_sse(send: Send, frames: list[dict[str, Any]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    await send({"type": "http.response.body", "body": b"".join(sse_frame(n) for n in frames)})


async def _cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any],
                                gone: list[bool] | None = None) -> None:
    while not task.done():
        message = await receive()
        if message["type"] == "http.disconnect":
            if gone is not None:
                gone.append(True)
            task.cancel()
            return


def _final(rid: Any, task: asyncio.Task[Any]) -> dict[str, Any]:
    if task.cancelled():
        return error_response(rid, internal_error("Request cancelled"))
    exc = task.exception()
    if exc is None:
        return {"jsonrpc": "2.0", "id": rid, "result": task.result()}
    if isinstance(exc, McpError):
        return error_response(rid, exc)
    return error_response(rid, masked_internal_error(
        log, f"unexpected failure answering {rid!r}", exc))


async def _json_result(send: Send, rid: Any, task: asyncio.Task[Any]) -> None:
    response = _final(rid, task)
    error = response.get("error")
    status = http_status(error["code"]) if error is not None else 200
    await send_json(send, status, response)
