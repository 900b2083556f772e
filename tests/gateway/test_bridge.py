"""The legacy bridge: a rondo server pinned to 2025-11-25 behind `rondo.proxy(...,
bridge=...)` asks mid-call over its back-channel (real `elicitation/create`,
`sampling/createMessage`, `roots/list` on the call's SSE stream, over loopback HTTP), and a
2026-07-28 client gets input rounds; both modes, both downstream eras."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

import rondo
from rondo.client import Client, PendingCall
from rondo.gateway.bridge import Hold, Replay
from tests.helpers.bridge_upstream import CANCELLED, RUNS, STARTED, answers, bridge_upstream
from tests.helpers.gateway_upstream import served
from tests.helpers.processes import end

MODES = ["hold", "replay"]
KEYS = rondo.StatePolicy(keys=[("k1", b"k" * 32)])


def sample(request: Any) -> Any:
    return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}


ROOTS = [{"uri": "file:///work", "name": "work"}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with served(bridge_upstream().asgi()) as (url, _):
        yield url


def front(url: str, bridge: Any, **options: Any) -> rondo.Server:
    return rondo.proxy(url, upstream_protocol="2025-11-25", bridge=bridge,
                       timeout=options.pop("timeout", 10), state=options.pop("state", KEYS),
                       **options)


def client(server: Any, protocol: str = "2026-07-28", **options: Any) -> Client:
    options.setdefault("on_elicit", answers)
    options.setdefault("on_sample", sample)
    options.setdefault("on_roots", ROOTS)
    return Client(server, protocol=protocol, **options)


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("mode", MODES)
def test_every_kind_of_question_completes_through_the_bridge(upstream: str, mode: str,
                                                             protocol: str) -> None:
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), client(proxy, protocol) as c:
            assert c.era == ("modern" if protocol == "2026-07-28" else "legacy")
            before = RUNS.copy()
            assert (await c.call_tool("book", {"room": "Blue"})).text == (
                "Blue booked for Monday at 10:00")
            assert (await c.call_tool("summarize", {"text": "x"})).text == "summary: short"
            assert (await c.call_tool("where")).text == "roots: file:///work"
            assert (await c.call_tool("all_at_once")).text == "Monday / short / 1"
            got = await c.get_prompt("brief")
            assert got.messages[0].content == {"type": "text", "text": "Brief for Monday"}
            assert (await c.read_resource("up://agenda")).text == "agenda of Monday"
            assert (await c.call_tool("add", {"a": 2, "b": 3})).text == "5"
            runs = {name: RUNS[name] - before[name] for name in
                    ("book", "summarize", "where", "all_at_once", "brief", "agenda")}
            if mode == "hold":  # the upstream call stayed open: each body ran once
                assert runs == dict.fromkeys(runs, 1)
            else:  # re-run each round: once per question round, plus the last run
                assert runs == {"book": 3, "summarize": 2, "where": 2, "all_at_once": 2,
                                "brief": 2, "agenda": 2}

    asyncio.run(go())


@pytest.mark.parametrize("bridge", [None, "hold"])
def test_a_modern_upstream_serves_a_legacy_client_every_kind_of_question(
        upstream: str, bridge: Any) -> None:
    """The other direction, which needs no bridge (and is untouched by one): the same server
    spoken to as 2026-07-28, a 2025-11-25 client of the proxy asked over its own session."""
    proxy = rondo.proxy(upstream, bridge=bridge, timeout=10, state=KEYS)

    async def go() -> None:
        async with proxy.started(), client(proxy, "2025-11-25") as c:
            assert c.era == "legacy"
            before = RUNS.copy()
            assert (await c.call_tool("book", {"room": "Blue"})).text == (
                "Blue booked for Monday at 10:00")
            assert (await c.call_tool("summarize", {"text": "x"})).text == "summary: short"
            assert (await c.call_tool("where")).text == "roots: file:///work"
            assert (await c.call_tool("all_at_once")).text == "Monday / short / 1"
            # A 2026-07-28 upstream re-runs its handler per round (MRTR): three runs for book.
            assert RUNS["book"] - before["book"] == 3
        used = _bridge(proxy)
        if bridge is None:
            assert used is None
        else:  # a modern upstream's rounds are relayed, never bridged: no session was opened
            assert used.held == {} and used.sessions.clients == {} and not used.sessions.flows

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_rounds_carry_the_upstream_questions_under_its_keys(upstream: str, mode: str) -> None:
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            first = await c.call_tool("book", {"room": "Red"}, manual=True)
            assert isinstance(first, PendingCall)
            # The key the upstream's handler asked under; the legacy-only fields are gone.
            assert first.input_requests == {"day": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "Which day?", "requestedSchema": {
                    "type": "object", "properties": {"day": {"type": "string"}},
                    "required": ["day"]}}}}
            assert isinstance(first.request_state, str) and "Which day" not in first.request_state
            second = await c.resume(first, {"day": {"action": "accept",
                                                    "content": {"day": "Friday"}}}, manual=True)
            assert isinstance(second, PendingCall) and list(second.input_requests) == ["time"]
            assert second.request_state != first.request_state
            done = await c.resume(second, {"time": {"action": "accept",
                                                    "content": {"time": "9:30"}}})
            assert done.text == "Red booked for Friday at 9:30"
            together = await c.call_tool("all_at_once", manual=True)
            assert isinstance(together, PendingCall)
            assert {k: r["method"] for k, r in together.input_requests.items()} == {
                "day": "elicitation/create", "summary": "sampling/createMessage",
                "roots": "roots/list"}

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_upstream_log_messages_reach_the_client_of_the_round_they_are_sent_in(
        upstream: str, mode: str) -> None:
    proxy = front(upstream, mode)
    heard: list[Any] = []

    def note(message: Any) -> None:
        if message.get("method") == "notifications/message":
            heard.append(message["params"]["data"])

    async def go() -> None:
        async with proxy.started(), client(proxy, log_level="info", on_notification=note) as c:
            pending = await c.call_tool("chatty", manual=True)
            assert isinstance(pending, PendingCall)
            assert heard == ["before the question"]  # debug is below the client's level
            heard.clear()
            done = await c.resume(pending, {"sure": {"action": "accept", "content": {"ok": True}}})
            assert done.text == "chatted"
            # Replay re-ran the tool from the top: its first message is sent again.
            assert heard == (["answered True"] if mode == "hold"
                             else ["before the question", "answered True"])

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_a_repeated_question_is_answered_in_order(upstream: str, mode: str) -> None:
    """Replay matches a question by its content and how often it was asked: the second
    `Sure?` is new even though the first, identical, was answered."""
    proxy = front(upstream, mode)
    yes = {"action": "accept", "content": {"ok": True}}
    no = {"action": "accept", "content": {"ok": False}}

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            first = await c.call_tool("again", manual=True)
            assert isinstance(first, PendingCall) and list(first.input_requests) == ["first"]
            second = await c.resume(first, {"first": yes}, manual=True)
            assert isinstance(second, PendingCall) and list(second.input_requests) == ["second"]
            assert (await c.resume(second, {"second": no})).text == "True then False"

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_answers_sent_before_being_asked_are_used(upstream: str, mode: str) -> None:
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            result = await c.request("tools/call", {
                "name": "book", "arguments": {"room": "Green"}, "inputResponses": {
                    "day": {"action": "accept", "content": {"day": "Sunday"}},
                    "time": {"action": "accept", "content": {"time": "noon"}},
                    "unknown": {"action": "accept", "content": {}}}})
            assert result["content"][0]["text"] == "Green booked for Sunday at noon"

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_a_malformed_answer_is_minus_32602_and_a_good_retry_still_completes(
        upstream: str, mode: str) -> None:
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            first = await c.call_tool("book", {"room": "Blue"}, manual=True)
            assert isinstance(first, PendingCall)
            with pytest.raises(rondo.McpError, match="Invalid input response for 'day'") as caught:
                await c.resume(first, {"day": {"action": "maybe"}}, manual=True)
            assert caught.value.code == -32602
            second = await c.resume(first, {"day": {"action": "accept",
                                                    "content": {"day": "Tuesday"}}}, manual=True)
            assert isinstance(second, PendingCall) and list(second.input_requests) == ["time"]

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_a_question_the_client_did_not_declare_is_minus_32021_not_a_hang(
        upstream: str, mode: str) -> None:
    """`blunt` sends elicitation/create although its session declared no elicitation (a
    non-conformant upstream): the bridge's admission refuses it with the capability named."""
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), Client(proxy, on_sample=sample) as c:
            started = time.monotonic()
            with pytest.raises(rondo.McpError, match="^Missing required client capability") as caught:
                await c.call_tool("blunt")
            assert caught.value.code == -32021
            assert caught.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
            assert time.monotonic() - started < 5  # answered, not waited out
            bridge = _bridge(proxy)
            assert bridge.held == {}  # nothing left held
        async with proxy.started(), client(proxy) as c:  # a client that declared it: answered
            assert (await c.call_tool("blunt")).text == "blunt: accept"

    asyncio.run(go())


def _bridge(proxy: rondo.Server) -> Any:
    """The bridge inside a proxy (the relay closures hold the link)."""
    tool = proxy.tools["add"]
    for cell in tool.fn.__closure__ or ():
        link = cell.cell_contents
        if hasattr(link, "bridge"):
            return link.bridge
    raise AssertionError("no bridge found")


@pytest.mark.parametrize("mode", MODES)
def test_each_call_gets_an_upstream_session_of_its_own_declaring_its_clients_capabilities(
        upstream: str, mode: str) -> None:
    """A legacy upstream keeps per-session state (roots it fetched, levels): two calls, from
    one client or two, never share a session; each declares what its own client declared."""
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), client(proxy) as full, Client(proxy, on_sample=sample) as bare:
            seen = [(await c.call_tool("session")).text.split(" ", 1)
                    for c in (full, full, bare, bare)]
            assert len({sid for sid, _ in seen}) == 4
            assert [caps for _, caps in seen] == [
                "['elicitation', 'roots', 'sampling']", "['elicitation', 'roots', 'sampling']",
                "['sampling']", "['sampling']"]
            assert _bridge(proxy).sessions.clients == {}  # each closed when its call ended

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_a_url_elicitation_error_becomes_a_round_and_the_call_is_made_again(
        upstream: str, mode: str) -> None:
    """2025-11-25's -32042 (URL elicitations required) has no 2026-07-28 form: the client gets
    a round of those URL elicitations (without the upstream's elicitationId), and once it has
    answered them the proxy calls the upstream again."""
    proxy = front(upstream, mode)
    tag = f"url-{mode}"

    async def go() -> None:
        async with proxy.started(), client(proxy, elicit_modes=("form", "url")) as c:
            pending = await c.call_tool("consent", {"tag": tag}, manual=True)
            assert isinstance(pending, PendingCall)
            assert pending.input_requests == {"url-1": {"method": "elicitation/create", "params": {
                "mode": "url", "message": "Open the page to consent.",
                "url": "https://example.com/consent"}}}
            again = await c.resume(pending, {}, manual=True)  # not answered: asked again
            assert isinstance(again, PendingCall) and list(again.input_requests) == ["url-1"]
            assert RUNS[f"consent/{tag}"] == 1
            done = await c.resume(again, {"url-1": {"action": "accept"}})
            assert done.text == f"consented ({tag})"
            assert RUNS[f"consent/{tag}"] == 2
        async with proxy.started(), client(proxy) as c:  # no URL mode declared: admission
            with pytest.raises(rondo.McpError, match="^Missing required client capability"):
                await c.call_tool("consent", {"tag": tag + "-2"})

    asyncio.run(go())


def test_hold_a_retry_at_another_process_gets_a_clean_error(upstream: str) -> None:
    """Two proxy processes sharing state keys (a fleet): a hold lives in the one that began it;
    the other refuses the retry at once (-32602), naming why, without touching its upstream."""
    one, other = front(upstream, "hold"), front(upstream, "hold")

    async def go() -> None:
        async with one.started(), other.started(), client(one) as a, client(other) as b:
            pending = await a.call_tool("book", {"room": "Blue"}, manual=True)
            assert isinstance(pending, PendingCall)
            started = time.monotonic()
            with pytest.raises(rondo.McpError,
                               match="held by another proxy process") as caught:
                await b.resume(pending, {"day": {"action": "accept",
                                                 "content": {"day": "Monday"}}})
            assert caught.value.code == -32602
            assert time.monotonic() - started < 5
            # The holder still serves it.
            more = await a.resume(pending, {"day": {"action": "accept",
                                                    "content": {"day": "Monday"}}},
                                  manual=True)
            assert isinstance(more, PendingCall) and list(more.input_requests) == ["time"]

    asyncio.run(go())


def test_hold_an_unanswered_call_expires_is_cancelled_upstream_and_its_state_refused(
        upstream: str) -> None:
    proxy = front(upstream, Hold(timeout=0.3))

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            cancelled = CANCELLED["patient"]
            pending = await c.call_tool("patient", manual=True)
            assert isinstance(pending, PendingCall)
            bridge = _bridge(proxy)
            assert len(bridge.held) == 1
            deadline = time.monotonic() + 10
            while (bridge.held or CANCELLED["patient"] == cancelled) \
                    and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert bridge.held == {}
            assert CANCELLED["patient"] == cancelled + 1  # the upstream saw its call end
            with pytest.raises(rondo.McpError, match="held upstream call has ended") as caught:
                await c.resume(pending, {"sure": {"action": "accept", "content": {"ok": True}}})
            assert caught.value.code == -32602

    asyncio.run(go())


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("mode", MODES)
def test_a_cancelled_bridged_call_is_cancelled_upstream(upstream: str, mode: str,
                                                        protocol: str) -> None:
    proxy = front(upstream, mode)
    tag = f"{mode}/{protocol}"

    async def go() -> None:
        async with proxy.started(), client(proxy, protocol) as c:
            call = asyncio.ensure_future(c.call_tool("dawdle", {"tag": tag}))
            deadline = asyncio.get_running_loop().time() + 10
            while tag not in STARTED:  # the call reached the upstream's handler
                assert asyncio.get_running_loop().time() < deadline, "upstream never called"
                await asyncio.sleep(0.02)
            call.cancel()
            await asyncio.wait({call})
            assert call.cancelled()
            while not CANCELLED[tag]:  # the upstream's handler ended by cancellation
                assert asyncio.get_running_loop().time() < deadline, "upstream never cancelled"
                await asyncio.sleep(0.05)
            bridge = _bridge(proxy)
            assert bridge.held == {}
            assert (await c.call_tool("add", {"a": 1, "b": 2})).text == "3"

    asyncio.run(go())


def test_hold_over_its_bound_a_new_call_is_refused(upstream: str) -> None:
    proxy = front(upstream, Hold(max_held=1))

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            first = await c.call_tool("patient", manual=True)
            assert isinstance(first, PendingCall)
            with pytest.raises(rondo.McpError, match="already holds 1 upstream calls") as caught:
                await c.call_tool("patient", manual=True)
            assert caught.value.code == -32000
            assert (await c.call_tool("add", {"a": 1, "b": 1})).text == "2"  # no question: served
            done = await c.resume(first, {"sure": {"action": "accept", "content": {"ok": True}}})
            assert done.text == "patient: True"
            again = await c.call_tool("patient", manual=True)  # the slot is free again
            assert isinstance(again, PendingCall)

    asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_a_tampered_or_crossed_state_is_refused(upstream: str, mode: str) -> None:
    proxy = front(upstream, mode)

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            pending = await c.call_tool("book", {"room": "Blue"}, manual=True)
            assert isinstance(pending, PendingCall) and pending.request_state
            answer = {"day": {"action": "accept", "content": {"day": "Monday"}}}
            for forged in (pending.request_state[:-2] + "xx", "not-a-state"):
                bad = PendingCall(method="tools/call", params=pending.params,
                                  request_state=forged)
                with pytest.raises(rondo.McpError, match="^Invalid requestState") as caught:
                    await c.resume(bad, answer)
                assert caught.value.code == -32602
            crossed = PendingCall(method="tools/call",
                                  params={"name": "book", "arguments": {"room": "Red"}},
                                  request_state=pending.request_state)
            with pytest.raises(rondo.McpError, match="^Invalid requestState"):
                await c.resume(crossed, answer)

    asyncio.run(go())


def test_replay_bounds_its_rounds(upstream: str) -> None:
    proxy = front(upstream, Replay(max_rounds=1))

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            assert (await c.call_tool("summarize", {"text": "x"})).text == "summary: short"
            with pytest.raises(rondo.McpError, match="more than 1 rounds"):
                await c.call_tool("book", {"room": "Blue"})

    asyncio.run(go())


def test_without_a_bridge_a_legacy_question_is_refused_naming_the_option(upstream: str) -> None:
    proxy = rondo.proxy(upstream, upstream_protocol="2025-11-25", timeout=10)

    async def go() -> None:
        async with proxy.started(), client(proxy) as c:
            result = await c.call_tool("summarize", {"text": "x"})
            # The upstream's tool fails on the refused question, told why.
            assert result.is_error
            assert result.text.startswith("The client refused input request 'summary'")
            assert "only with a bridge" in result.text

    asyncio.run(go())


def test_bad_bridge_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="bridge must be 'hold', 'replay'"):
        rondo.proxy("http://127.0.0.1:1/mcp", bridge="sideways")
    with pytest.raises(ValueError, match=r"^Hold\(timeout=\) must be a positive"):
        Hold(timeout=0)
    with pytest.raises(ValueError, match=r"^Hold\(max_held=\) must be a positive integer"):
        Hold(max_held=0)
    with pytest.raises(ValueError, match=r"^Replay\(max_rounds=\) must be a positive integer"):
        Replay(max_rounds=True)


@pytest.mark.parametrize("mode, runs", [("hold", 1), ("replay", 3)])
def test_rondo_proxy_bridge_flag(upstream: str, mode: str, runs: int) -> None:
    """`rondo proxy URL --upstream-protocol 2025-11-25 --bridge MODE`, a real process served
    over stdio; the upstream (in this process) counts how often `book` ran."""
    command = [sys.executable, "-m", "rondo", "proxy", upstream, "--upstream-protocol",
               "2025-11-25", "--bridge", mode]

    async def go() -> None:
        async with client(command, timeout=30) as c:
            before = RUNS["book"]
            assert (await c.call_tool("book", {"room": "Blue"})).text == (
                "Blue booked for Monday at 10:00")
            assert RUNS["book"] - before == runs

    asyncio.run(go())


@pytest.mark.parametrize("argv, message", [
    (["--bridge", "sideways"], "invalid choice: 'sideways'"),
    (["--bridge", "hold", "--max-held", "0"], "expected a number from 1 to 1000000"),
    (["--bridge", "replay", "--max-rounds", "many"], "expected a whole number"),
    (["--bridge", "hold", "--hold-timeout", "0"], "--hold-timeout must be more than 0"),
])
def test_bad_bridge_flags_are_refused(argv: list[str], message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from rondo.cli import main

    with pytest.raises(SystemExit, match="2"):
        main(["proxy", "http://127.0.0.1:1/mcp", *argv])
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("workers", [["--workers", "3"], ["--workers=2"]])
def test_hold_with_several_workers_is_refused_at_start(workers: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from rondo.cli import main

    assert main(["proxy", "http://127.0.0.1:1/mcp", "--bridge", "hold", "--http", "8000",
                 *workers]) == 2
    assert "--bridge hold keeps each held call in the process" in capsys.readouterr().err


@pytest.mark.parametrize("mode", MODES)
def test_a_proxy_process_killed_mid_flow(upstream: str, mode: str) -> None:
    """Two real `rondo proxy --bridge MODE --http` processes sharing state keys; the one that
    served the first round is killed (SIGKILL). hold: the retry at the survivor is -32602 at
    once, naming why; replay: the survivor completes the flow."""
    from rondo.state.keys import new_secret_text
    from tests.gateway.test_gateway_cli import wait_for_line
    from tests.helpers.gateway_upstream import free_port

    env = {**os.environ, "RONDO_STATE_KEYS": f"k1:{new_secret_text()}"}
    procs, urls = [], []
    try:
        for _ in range(2):
            port = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "rondo", "proxy", upstream, "--http", str(port),
                 "--upstream-protocol", "2025-11-25", "--bridge", mode, "--timeout", "10"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                env=env))
            urls.append(f"http://127.0.0.1:{port}/mcp")
        for proc in procs:
            wait_for_line(proc, b"serving rondo-proxy at")

        async def first_round() -> PendingCall:
            async with client(urls[0], timeout=20) as c:
                pending = await c.call_tool("book", {"room": "Blue"}, manual=True)
                assert isinstance(pending, PendingCall)
                return pending

        pending = asyncio.run(first_round())
        procs[0].kill()
        procs[0].wait(10)
        monday = {"day": {"action": "accept", "content": {"day": "Monday"}}}

        async def retry() -> None:
            async with client(urls[1], timeout=20) as c:
                started = time.monotonic()
                if mode == "hold":
                    with pytest.raises(rondo.McpError,
                                       match="held by another proxy process") as caught:
                        await c.resume(pending, monday)
                    assert caught.value.code == -32602
                    assert time.monotonic() - started < 5
                else:
                    assert (await c.resume(pending, monday)).text == (
                        "Blue booked for Monday at 10:00")

        asyncio.run(retry())
    finally:
        for proc in procs:
            end(proc, 10, signal.SIGINT)


class Stalling:
    """ASGI wrapper: once `stall` is set, every POST waits (until `release`) without answering."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.stall = False
        self.release = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.stall and scope["type"] == "http" and scope["method"] == "POST":
            self.loop = asyncio.get_running_loop()
            await self.release.wait()
            return
        await self.app(scope, receive, send)

    def unstall(self) -> None:
        self.stall = False
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.release.set)


@pytest.mark.parametrize("mode", MODES)
def test_an_upstream_that_stops_answering_is_a_clean_error_within_the_bound(mode: str) -> None:
    """The bridge's own upstream session (opened per call) is bounded by the proxy's timeout
    too: its handshake with an upstream that went silent ends in -32603, not a hang."""
    wrapper = Stalling(bridge_upstream().asgi())
    with served(wrapper) as (url, _):
        proxy = front(url, mode, timeout=1.0)

        async def go() -> None:
            async with proxy.started(), client(proxy) as c:
                wrapper.stall = True
                started = time.monotonic()
                with pytest.raises(rondo.McpError,
                                   match=r"^upstream did not answer within 1 s$") as caught:
                    await c.call_tool("add", {"a": 1, "b": 2})
                assert caught.value.code == -32603
                assert time.monotonic() - started < 5

        try:
            asyncio.run(go())
        finally:
            wrapper.unstall()


def test_a_question_sent_after_its_call_ended_is_refused_not_left_waiting() -> None:
    from rondo.client.loop import Unanswerable
    from rondo.gateway.bridge.flow import Flow

    async def go() -> None:
        flow = Flow()
        flow.close()
        with pytest.raises(Unanswerable, match="^the relayed call has ended$"):
            await asyncio.wait_for(flow.ask("roots/list", {}), 1)

    asyncio.run(go())
