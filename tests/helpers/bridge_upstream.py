"""A rondo server whose tools ask mid-call, for the legacy bridge (tests/gateway/test_bridge.py).

Behind `rondo.proxy(url, upstream_protocol="2025-11-25")` it is a 2025-11-25 upstream: every
`ctx.ask` reaches the proxy as a real `elicitation/create`, `sampling/createMessage` or
`roots/list` on the call's SSE stream. `RUNS` counts how often each tool body started, which is
what tells hold (one run) from replay (one run per round).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from typing import Any

import rondo
from rondo import elicit, roots, sampling

RUNS: Counter[str] = Counter()
CANCELLED: Counter[str] = Counter()
STARTED: list[str] = []
DAY = elicit.form("Which day?", {
    "type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]})
TIME = elicit.form("What time?", {
    "type": "object", "properties": {"time": {"type": "string"}}, "required": ["time"]})
SURE = elicit.form("Sure?", {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})


def bridge_upstream() -> rondo.Server:
    up = rondo.Server("legacy-upstream")

    @up.tool
    def book(room: str, ctx: rondo.Context) -> str:
        """Two questions, one after the other (two rounds)."""
        RUNS["book"] += 1
        day = ctx.ask("day", DAY).content["day"]
        time = ctx.ask("time", TIME).content["time"]
        return f"{room} booked for {day} at {time}"

    @up.tool
    def summarize(text: str, ctx: rondo.Context) -> str:
        """Asks the client's model."""
        RUNS["summarize"] += 1
        answer = ctx.ask("summary", sampling.create_message([f"Summarize: {text}"], 50))
        return f"summary: {answer.text}"

    @up.tool
    def where(ctx: rondo.Context) -> str:
        """Asks for the client's roots."""
        RUNS["where"] += 1
        found = ctx.ask("roots", roots.list())
        return "roots: " + ",".join(root.uri for root in found)

    @up.tool
    def all_at_once(ctx: rondo.Context) -> str:
        """Three questions sent together: one round."""
        RUNS["all_at_once"] += 1
        got = ctx.ask_all({"day": DAY, "summary": sampling.create_message(["Hi"], 10),
                           "roots": roots.list()})
        return f"{got['day'].content['day']} / {got['summary'].text} / {len(got['roots'])}"

    @up.tool
    def again(ctx: rondo.Context) -> str:
        """The same question twice: answered in order, each once."""
        RUNS["again"] += 1
        first = ctx.ask("first", SURE).content["ok"]
        second = ctx.ask("second", SURE).content["ok"]
        return f"{first} then {second}"

    @up.tool
    async def blunt(ctx: rondo.Context) -> str:
        """Sends elicitation/create whatever the client declared (a non-conformant upstream)."""
        call = ctx._session
        _, answer = call.session.request("elicitation/create", {
            "mode": "form", "message": "Sure?", "requestedSchema": SURE["params"]["requestedSchema"]},
            call.send)
        return f"blunt: {(await answer)['action']}"

    @up.tool
    async def patient(ctx: rondo.Context) -> str:
        """Asks, and records whether its call was cancelled while waiting."""
        RUNS["patient"] += 1
        try:
            answer = await ctx.ask("sure", SURE)
        except asyncio.CancelledError:
            CANCELLED["patient"] += 1
            raise
        return f"patient: {answer.content['ok']}"

    @up.tool
    async def dawdle(tag: str, ctx: rondo.Context) -> str:
        """Works 20 s before asking, recording whether it was cancelled meanwhile."""
        STARTED.append(tag)
        try:
            await asyncio.sleep(20)
        except asyncio.CancelledError:
            CANCELLED[tag] += 1
            raise
        return f"dawdled: {(await ctx.ask('sure', SURE)).content['ok']}"

    @up.tool
    async def chatty(ctx: rondo.Context) -> str:
        """Logs, asks, logs again: each message belongs to the round it is sent in."""
        await ctx.log("info", "before the question")
        await ctx.debug("too fine")
        answer = await ctx.ask("sure", SURE)
        await ctx.log("info", f"answered {answer.content['ok']}")
        return "chatted"

    @up.tool
    async def impatient(ctx: rondo.Context) -> str:
        """Asks, gives up after half a second (its `notifications/cancelled` tells the client),
        and answers without it."""
        try:
            answer = await asyncio.wait_for(ctx.ask("sure", SURE), 0.5)
        except TimeoutError:
            return "gave up waiting"
        return f"impatient: {answer.content['ok']}"

    @up.tool
    async def steps(ctx: rondo.Context) -> str:
        """Reports progress and logs on each side of its question."""
        await ctx.report_progress(1, 3, "about to ask")
        await ctx.log("info", "asking")
        answer = await ctx.ask("sure", SURE)
        await ctx.report_progress(2, 3, "answered")
        await ctx.log("info", f"answered {answer.content['ok']}")
        await ctx.debug("too fine")
        return "stepped"

    @up.tool
    async def fickle(ctx: rondo.Context) -> str:
        """Gives up on its first question after half a second, then asks another."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ctx.ask("sure", SURE), 0.5)
        return f"changed its mind: {(await ctx.ask('day', DAY)).content['day']}"

    @up.tool
    def consent(tag: str) -> str:
        """Ends its first call for `tag` with -32042 (a URL to open first, 2025-11-25's error
        path); a later call goes through."""
        RUNS[f"consent/{tag}"] += 1
        if RUNS[f"consent/{tag}"] == 1:
            raise rondo.McpError(-32042, "This request needs your consent in the browser.", {
                "elicitations": [{"mode": "url", "url": "https://example.com/consent",
                                  "message": "Open the page to consent.", "elicitationId": "e-1"}]})
        return f"consented ({tag})"

    @up.tool
    def session(ctx: rondo.Context) -> str:
        """The id of the 2025-11-25 session this call came on, and what it declared."""
        legacy = ctx._session.session
        return f"{legacy.id} {sorted(legacy.capabilities)}"

    @up.tool
    def add(a: int, b: int) -> int:
        """No question at all."""
        return a + b

    @up.prompt
    def brief(ctx: rondo.Context) -> str:
        """A prompt that asks first."""
        RUNS["brief"] += 1
        return f"Brief for {ctx.ask('day', DAY).content['day']}"

    @up.resource("up://agenda", mime_type="text/plain")
    def agenda(ctx: rondo.Context) -> str:
        """A resource that asks first."""
        RUNS["agenda"] += 1
        return f"agenda of {ctx.ask('day', DAY).content['day']}"

    return up


def answers(request: Any) -> Any:
    """A client's elicitation handler: a day, a time, or yes."""
    message = request.message
    if message == "Which day?":
        return {"action": "accept", "content": {"day": "Monday"}}
    if message == "What time?":
        return {"action": "accept", "content": {"time": "10:00"}}
    return {"action": "accept", "content": {"ok": True}}


if __name__ == "__main__":  # the same upstream over stdio (a 2025-11-25 stdio upstream)
    bridge_upstream().run_stdio()
