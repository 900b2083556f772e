"""The bridge: a 2025-11-25 upstream's mid-call questions as 2026-07-28 input rounds.

`Hold` keeps the upstream call open in this process between rounds: the sealed state names the
held flow, this process (`worker`) and the round; a retry that reaches a process without the
flow (another worker, a restarted one, an expired hold) gets -32602 at once. `Replay` keeps
nothing: each round calls the upstream again from the start and answers every question asked
before from the answers sealed in the state (matched by content and occurrence), until a new
question ends the run (the upstream call is cancelled) and makes a new round.

In both modes an upstream that ends its call with -32042 (URL elicitations required, 2025-11-25)
gives the client a round of those URL elicitations; once they are answered the call is made
again (replay keeps its answers so far).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ...client import ClientError, PendingCall, RequestTimeout
from ...kinds import missing_capabilities
from ...mrtr.result import InputRequired
from ...wire.errors import (
    INVALID_PARAMS,
    MISSING_CAPABILITY,
    SERVER_BUSY,
    McpError,
    missing_capability,
)
from ..upstream_errors import passed_on
from .flow import Flow, Question, RoundLog, checked_answer, next_round
from .pool import MAX_PROCESSES, MOST_PROCESSES
from .sessions import Sessions

if TYPE_CHECKING:
    from ...server.context import Context
    from ..upstream import Upstream
    from .forward import Forwarder

log = logging.getLogger("rondo.gateway")
UNAVAILABLE = -32603


class Hold:
    """Keep the upstream call open between rounds, in this process.

    `timeout`: seconds a held call waits for the client's next retry before it is cancelled
    upstream (and its state refused); `max_held`: calls held at once (waiting for a client's
    answers), beyond which a call that asks is ended upstream and refused (-32000);
    `processes`: a stdio upstream's processes for bridged calls, one call each at a time
    (gateway/bridge/pool.py), which also bounds the calls held on a stdio upstream.
    """

    name = "hold"

    def __init__(self, *, timeout: float = 300.0, max_held: int = 1000,
                 processes: int = MAX_PROCESSES) -> None:
        if not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"Hold(timeout=) must be a positive number of seconds, got {timeout!r}")
        if not isinstance(max_held, int) or isinstance(max_held, bool) or max_held < 1:
            raise ValueError(f"Hold(max_held=) must be a positive integer, got {max_held!r}")
        self.timeout = float(timeout)
        self.max_held = max_held
        self.processes = checked_processes("Hold", processes)


class Replay:
    """Call the upstream again on each round, answering what it asked before from the state.

    Only for upstream tools safe to re-run up to their questions: whatever they do before a
    question is done again on every round. `max_rounds` bounds the rounds of one call;
    `processes` a stdio upstream's processes for bridged calls running at once.
    """

    name = "replay"

    def __init__(self, *, max_rounds: int = 16, processes: int = MAX_PROCESSES) -> None:
        if not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1:
            raise ValueError(f"Replay(max_rounds=) must be a positive integer, got {max_rounds!r}")
        self.max_rounds = max_rounds
        self.processes = checked_processes("Replay", processes)


def checked_processes(mode: str, processes: Any) -> int:
    if isinstance(processes, bool) or not isinstance(processes, int) \
            or not 1 <= processes <= MOST_PROCESSES:
        raise ValueError(f"{mode}(processes=) must be an integer from 1 to {MOST_PROCESSES}, "
                         f"got {processes!r}")
    return processes


def bridge_mode(value: Any) -> Hold | Replay | None:
    """`proxy(bridge=...)`: None, "hold", "replay", or a `Hold(...)` / `Replay(...)`."""
    if value is None or isinstance(value, Hold | Replay):
        return value
    if value == "hold":
        return Hold()
    if value == "replay":
        return Replay()
    raise ValueError(f"bridge must be 'hold', 'replay', Hold(...), Replay(...) or None, got {value!r}")


URL_REQUIRED = -32042  # 2025-11-25's URLElicitationRequiredError (2026-07-28 has no such error)


class _UrlRequired(Exception):
    """The upstream ended its call with -32042: URL elicitations to do, then call again."""

    def __init__(self, requests: dict[str, Any]) -> None:
        super().__init__("URL elicitation required")
        self.requests = requests
        self.carry: dict[str, Any] = {}


def url_questions(data: Any) -> dict[str, Any]:
    """The input requests of a -32042's `data.elicitations` (well-formed URL ones only)."""
    from ...kinds import kind_for

    found: dict[str, Any] = {}
    items = data.get("elicitations") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("mode") != "url":
            continue
        request = {"method": "elicitation/create", "params": {
            "mode": "url", "message": item.get("message"), "url": item.get("url")}}
        try:
            kind_for(request).validate_request(request)
        except ValueError:
            continue
        found[f"url-{len(found) + 1}"] = request
    return found


def _gone(why: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Invalid requestState: {why}; call again without "
                    "requestState")


class Bridge:
    """The bridge of one upstream link (one per proxy process)."""

    def __init__(self, link: Upstream, mode: Hold | Replay) -> None:
        self.link = link
        self.mode = mode
        self.sessions = Sessions(link, processes=mode.processes)
        self.worker = secrets.token_hex(8)  # names this process in the states it seals
        self.held: dict[str, Flow] = {}
        self.forwarder: Forwarder | None = None  # hold in a fleet: retries over Redis

    def use_redis(self, url: str) -> None:
        """Hold in a fleet (`rondo run --redis`): a retry reaching a process without its held
        call is forwarded to the holder over Redis (gateway/bridge/forward.py)."""
        if isinstance(self.mode, Hold) and self.forwarder is None:
            from .forward import Forwarder

            self.forwarder = Forwarder(self, url)

    async def start(self) -> None:
        self.sessions.open()  # a proxy started again after a close bridges calls again
        if self.forwarder is not None:
            await self.forwarder.start()

    async def close(self) -> None:
        if self.forwarder is not None:
            await self.forwarder.stop()
        for fid in list(self.held):
            self._end(fid)
        await self.sessions.close()

    async def relay(self, ctx: Context, method: str, params: dict[str, Any]) -> Any:
        state = ctx.state
        if state is not None and (not isinstance(state, dict)
                                  or state.get("up") != self.link.identity
                                  or state.get("b") != self.mode.name):
            raise McpError(INVALID_PARAMS, "invalid requestState: not this upstream's")
        if state is not None and "url" in state:  # after a -32042: the URL flows done?
            asked: dict[str, Any] = state["url"]
            responses = ctx.input_responses or {}
            if not all(key in responses for key in asked):
                return InputRequired(asked, state=state)
            for key, request in asked.items():
                checked_answer(key, request, responses[key])
            # Done out of band: call the upstream again (replay keeps its answers so far).
            state = None if isinstance(self.mode, Hold) else {
                "a": state.get("a") or {}, "p": {}, "n": state.get("n") or 0}
        try:
            if isinstance(self.mode, Hold):
                return await self._hold(self.mode, ctx, method, params, state)
            return await self._replay(self.mode, ctx, method, params, state)
        except _UrlRequired as needed:
            missing = missing_capabilities(needed.requests, ctx.client_capabilities)
            if missing:
                raise missing_capability(missing) from None
            return InputRequired(needed.requests, state={
                "up": self.link.identity, "b": self.mode.name, "url": needed.requests,
                **needed.carry})

    # -- the upstream call ----------------------------------------------------------------------

    async def _start(self, flow: Flow, ctx: Context, method: str, params: dict[str, Any]) -> None:
        key, client = await self.sessions.client_for(ctx.client_capabilities,
                                                     logs=ctx.log_level is not None)
        self.sessions.flows.setdefault(key, set()).add(flow)

        def progress(done: float, total: float | None, message: str | None) -> None:
            now = flow.ctx
            meta = now.request_params.get("_meta") if now is not None else None
            if isinstance(meta, Mapping) and meta.get("progressToken") is not None:
                now.report_progress(done, total, message)

        async def call() -> Any:
            from ...auth.principal import CALLER, Principal
            from ..upstream import _RELAYING

            # The upstream's log messages go to the client of the round under way.
            _RELAYING.set(cast(Any, RoundLog(flow)))
            # Whom the call is made for (`upstream_auth` exchanges that caller's token).
            CALLER.set(ctx.auth if isinstance(ctx.auth, Principal) else None)
            cancelled = False
            try:
                return await client.resume(PendingCall(method=method, params=dict(params)), {},
                                           manual=True, on_progress=progress)
            except (ClientError, OSError):
                self.sessions.drop(key, client)
                raise
            except asyncio.CancelledError:
                cancelled = True  # the upstream may still have a question in flight
                raise
            finally:
                self.sessions.flows.get(key, set()).discard(flow)
                self.sessions.release(key, client, cancelled=cancelled)

        flow.ctx = ctx
        flow.start(call())

    async def _step(self, flow: Flow, ctx: Context, carried: list[Question]) -> Any:
        """The upstream's result, or the questions of the next round (a list)."""
        while True:
            kind, value = await next_round(flow, self.link.timeout, carried)
            if kind != "ask":
                break
            # A question the upstream gave up on before the round went out is not asked.
            value = [q for q in value if not q.future.done()]
            if value:
                break
            carried = []
        if kind == "done":
            return value
        if kind == "timeout":
            raise McpError(UNAVAILABLE, f"upstream did not answer within {self.link.timeout:g} s")
        if kind == "error":
            if isinstance(value, McpError) and value.code == URL_REQUIRED:
                requests = url_questions(value.data)
                if requests:
                    raise _UrlRequired(requests)
            if isinstance(value, McpError):
                data = value.data if value.code == MISSING_CAPABILITY else None
                raise passed_on(value, data) from None
            if isinstance(value, RequestTimeout):
                raise McpError(UNAVAILABLE, "upstream did not answer in time") from None
            log.warning("upstream %s: %s: %s", self.link.identity, type(value).__name__, value)
            raise McpError(UNAVAILABLE, "upstream unavailable") from None
        questions: list[Question] = value
        requests = {q.key: q.request for q in questions}
        missing = missing_capabilities(requests, ctx.client_capabilities)
        if missing:  # the upstream asked what this client did not declare: admission
            raise missing_capability(missing)
        return questions

    # -- hold -----------------------------------------------------------------------------------

    async def _hold(self, mode: Hold, ctx: Context, method: str, params: dict[str, Any],
                    state: dict[str, Any] | None) -> Any:
        carried: list[Question] = []
        if state is None:
            fid = secrets.token_urlsafe(12)
            flow = Flow(offered=ctx.input_responses)
            self.held[fid] = flow
            try:
                await self._start(flow, ctx, method, params)
            except BaseException:
                self._end(fid)
                raise
        else:
            if state.get("w") != self.worker:
                if self.forwarder is not None:  # the holder answers over Redis
                    return await self.forwarder.forward(ctx, method, state)
                raise _gone("the upstream call it names is held by another proxy process "
                            "(bridge=hold keeps it in the process that began it), which this "
                            "one is not")
            fid = str(state.get("f"))
            held = self.held.get(fid)
            if held is None or held.round != state.get("r"):
                raise _gone(f"the held upstream call has ended (unanswered for "
                            f"{mode.timeout:g} s, or finished)")
            if held.busy:
                raise _gone("the held upstream call is being resumed by another request")
            flow = held
            carried = self._answer(flow, ctx.input_responses or {})  # -32602: the hold stays
            if flow.expiry is not None:
                flow.expiry.cancel()
                flow.expiry = None
            flow.ctx = ctx
        flow.busy = True
        try:
            outcome = await self._step(flow, ctx, carried)
        except BaseException:
            self._end(fid)
            raise
        finally:
            flow.busy = False
        if not isinstance(outcome, list):
            self._end(fid)
            return outcome
        if flow.round == 0 and sum(f.round > 0 for f in self.held.values()) >= mode.max_held:
            self._end(fid)  # would be one hold too many: the upstream call ends here
            raise McpError(SERVER_BUSY, f"the proxy already holds {mode.max_held} upstream "
                           "calls waiting for input; try again later")
        flow.round += 1
        flow.expiry = asyncio.get_running_loop().call_later(mode.timeout, self._expire, fid)
        return InputRequired({q.key: q.request for q in outcome},
                             state={"up": self.link.identity, "b": "hold", "w": self.worker,
                                    "f": fid, "r": flow.round})

    def _answer(self, flow: Flow, responses: Mapping[str, Any]) -> list[Question]:
        """Give the held questions the retry's answers; those left unanswered are returned.
        A malformed answer is -32602 and answers none (the hold stays, for a correct retry)."""
        asked = list(flow.open.values())
        given = {q.key: checked_answer(q.key, q.request, responses[q.key])
                 for q in asked if q.key in responses}
        for question in asked:
            if question.key in given:
                question.future.set_result(given[question.key])
        flow.offered = {k: v for k, v in responses.items() if k not in given}
        return flow.unanswered(asked)

    def _expire(self, fid: str) -> None:
        if fid in self.held:
            log.info("upstream %s: a held call was not resumed within %g s and is cancelled",
                     self.link.identity, getattr(self.mode, "timeout", 0))
            self._end(fid)

    def _end(self, fid: str) -> None:
        flow = self.held.pop(fid, None)
        if flow is not None:
            flow.close()

    # -- replay ---------------------------------------------------------------------------------

    async def _replay(self, mode: Replay, ctx: Context, method: str, params: dict[str, Any],
                      state: dict[str, Any] | None) -> Any:
        responses = dict(ctx.input_responses or {})
        answers: dict[str, list[Any]] = {}
        rounds = 0
        if state is not None:
            answers = {str(k): list(v) for k, v in (state.get("a") or {}).items()}
            pending: dict[str, Any] = state.get("p") or {}
            rounds = int(state.get("n") or 0)
            got = False
            for key, (digest, request) in pending.items():
                if key in responses:
                    value = checked_answer(key, request, responses.pop(key))
                    answers.setdefault(digest, []).append(value)
                    got = True
            if pending and not got:  # nothing answered: the same round again, not re-run
                return InputRequired({k: r for k, (_, r) in pending.items()}, state=state)
        flow = Flow(answers=answers, offered=responses)
        try:
            await self._start(flow, ctx, method, params)
            outcome = await self._step(flow, ctx, [])
        except _UrlRequired as needed:
            needed.carry = {"a": flow.answers, "n": rounds + 1}
            raise
        finally:
            flow.close()  # a run that asked something new ends here; the next round re-runs it
        if not isinstance(outcome, list):
            return outcome
        if rounds >= mode.max_rounds:
            raise McpError(UNAVAILABLE, f"the upstream asked for input more than "
                           f"{mode.max_rounds} rounds in one call")
        return InputRequired({q.key: q.request for q in outcome},
                             state={"up": self.link.identity, "b": "replay", "a": flow.answers,
                                    "p": {q.key: [q.fingerprint, q.request] for q in outcome},
                                    "n": rounds + 1})


__all__ = ["Bridge", "Hold", "Replay", "bridge_mode"]
