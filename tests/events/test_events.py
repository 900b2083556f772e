"""The events extension (experimental): poll, push and webhook delivery through real requests,
its error codes, cursors and bounded backlog, signatures that verify, SSRF refusals."""

from __future__ import annotations

import asyncio
import base64
import functools
import time
from typing import Any

import pytest

import rondo
from rondo.events import SEP_CODES, Delivery, Events, MemoryEventLog, WebhookError, sign, verify
from rondo.testing import connect, principal
from tests.helpers.webhook_receiver import Receiver

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
SCHEMA = {"type": "object", "properties": {"severity": {"type": "string"}}}


def run_async(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(fn(*args, **kwargs))
    return wrapper


def make(**options: Any) -> tuple[rondo.Server, Events]:
    server = rondo.Server("events-test", state=None)
    events = Events(**options)
    server.extension(events)
    events.event("incident.created", description="A new incident", input_schema=SCHEMA,
                 payload_schema={"type": "object"})
    events.event("poll.only", description="Polled", delivery=["poll"])
    return server, events


async def rpc(conn: Any, method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    reply: dict[str, Any] = await conn.send({"jsonrpc": "2.0", "id": rid, "method": method,
                                             "params": {**params, "_meta": META}})
    return reply


@run_async
async def test_poll_starts_from_now_then_returns_matching_events_in_order() -> None:
    server, _ = make()
    conn = connect(server)
    listed = (await rpc(conn, "events/list", {}))["result"]["events"]
    assert [e["name"] for e in listed] == ["incident.created", "poll.only"]
    assert listed[0]["delivery"] == ["poll", "push", "webhook"] and listed[1]["delivery"] == ["poll"]
    args = {"name": "incident.created", "arguments": {"severity": "P1"}}
    first = (await rpc(conn, "events/poll", {**args, "cursor": None}))["result"]
    assert first["events"] == [] and first["hasMore"] is False and first["nextPollMs"] == 5000
    await server.emit("incident.created", {"severity": "P1", "n": 1})
    await server.emit("incident.created", {"severity": "P3", "n": 2})  # filtered out
    await server.emit("incident.created", {"severity": "P1", "n": 3}, event_id="evt_up_3")
    page = (await rpc(conn, "events/poll", {**args, "cursor": first["cursor"], "maxEvents": 1}))["result"]
    assert [e["data"]["n"] for e in page["events"]] == [1] and page["hasMore"] is True
    rest = (await rpc(conn, "events/poll", {**args, "cursor": page["cursor"]}))["result"]
    assert [e["data"]["n"] for e in rest["events"]] == [3] and rest["hasMore"] is False
    assert rest["events"][0]["eventId"] == "evt_up_3" and rest["truncated"] is False
    assert set(rest["events"][0]) == {"eventId", "name", "timestamp", "data"}
    again = (await rpc(conn, "events/poll", {**args, "cursor": rest["cursor"]}))["result"]
    assert again["events"] == []


@run_async
async def test_a_cursor_behind_the_backlog_is_truncated_and_max_age_skips_old_events() -> None:
    server, events = make(log=MemoryEventLog(backlog=2))
    conn = connect(server)
    args = {"name": "incident.created", "arguments": {}}
    start = (await rpc(conn, "events/poll", {**args, "cursor": None}))["result"]["cursor"]
    for n in range(5):
        await server.emit("incident.created", {"n": n})
    late = (await rpc(conn, "events/poll", {**args, "cursor": start}))["result"]
    assert late["truncated"] is True and [e["data"]["n"] for e in late["events"]] == [3, 4]
    cursor = late["cursor"]
    await events.emit("incident.created", {"n": 5}, timestamp=time.time() - 600)
    aged = (await rpc(conn, "events/poll", {**args, "cursor": cursor, "maxAgeMs": 60_000}))["result"]
    assert aged["events"] == [] and aged["truncated"] is True


@run_async
async def test_errors_use_the_configured_codes() -> None:
    server, _ = make()
    conn = connect(server)
    cases = [
        ({"name": "nope", "cursor": None}, -32011, "Unknown event"),
        ({"name": "poll.only", "cursor": None}, None, None),
        ({"name": "incident.created", "cursor": "garbage"}, -32602, "Invalid cursor"),
        ({"name": "incident.created", "cursor": "m99"}, -32602, "Invalid cursor"),
        ({"name": "incident.created", "arguments": {"severity": 1}, "cursor": None}, -32602, "must be string"),
        ({"name": "incident.created", "arguments": [], "cursor": None}, -32602, "must be an object"),
    ]
    for params, code, message in cases:
        reply = await rpc(conn, "events/poll", params)
        if code is None:
            assert "result" in reply
        else:
            assert reply["error"]["code"] == code and message in reply["error"]["message"], reply
    stream = await rpc(conn, "events/stream", {"name": "poll.only"})
    assert stream["error"]["code"] == -32014
    assert stream["error"]["data"] == {"feature": "deliveryMode", "value": "push"}
    sep_server, _ = make(codes=SEP_CODES)
    assert (await rpc(connect(sep_server), "events/poll", {"name": "x"}))["error"]["code"] == -32023
    with pytest.raises(ValueError, match="not declared"):
        await server.emit("nope", {})


@run_async
async def test_a_stream_pushes_events_then_heartbeats() -> None:
    server, _ = make(heartbeat=0.2)
    conn = connect(server)
    seen: list[dict[str, Any]] = []
    task = asyncio.create_task(conn.send(
        {"jsonrpc": "2.0", "id": 7, "method": "events/stream",
         "params": {"name": "incident.created", "arguments": {"severity": "P1"}, "cursor": None,
                    "_meta": META}}, on_notification=seen.append))

    async def until(predicate: Any) -> None:
        deadline = time.monotonic() + 5
        while not predicate():
            assert time.monotonic() < deadline, seen
            await asyncio.sleep(0.01)

    await until(lambda: any(n["method"] == "notifications/events/active" for n in seen))
    await server.emit("incident.created", {"severity": "P1", "n": 1})
    await server.emit("incident.created", {"severity": "P2", "n": 2})
    await until(lambda: any(n["method"] == "notifications/events/event" for n in seen))
    await until(lambda: any(n["method"] == "notifications/events/heartbeat" for n in seen))
    task.cancel()
    events = [n["params"] for n in seen if n["method"] == "notifications/events/event"]
    assert [e["data"]["n"] for e in events] == [1]
    assert events[0]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
    beat = next(n["params"] for n in seen if n["method"] == "notifications/events/heartbeat")
    assert beat["cursor"] == "m2"  # the position checked, past the filtered-out event


def _allowing(**options: Any) -> Delivery:
    return Delivery(allow_http=True, allow_private=True, backoff=0.01, **options)


@run_async
async def test_webhooks_are_verified_signed_and_retried() -> None:
    receiver = await Receiver(SECRET, statuses=[503]).start()
    server, events = make(delivery=_allowing())
    alice = connect(server, auth=principal("alice"))
    try:
        params = {"name": "incident.created", "arguments": {"severity": "P1"},
                  "delivery": {"mode": "webhook", "url": receiver.url, "secret": SECRET},
                  "cursor": None, "ttlMs": 60_000}
        made = (await rpc(alice, "events/subscribe", params))["result"]
        assert made["id"].startswith("sub_") and made["truncated"] is False
        assert made["refreshBefore"].endswith("Z")
        await server.emit("incident.created", {"severity": "P1", "n": 1})
        deadline = time.monotonic() + 5
        while not receiver.deliveries:
            assert time.monotonic() < deadline, "no delivery"
            await asyncio.sleep(0.01)
        (delivery,) = receiver.deliveries
        assert receiver.attempts == 2  # the 503 was retried
        assert delivery["verified"] is True
        assert delivery["headers"]["x-mcp-subscription-id"] == made["id"]
        assert delivery["headers"]["webhook-id"] == delivery["body"]["eventId"]
        assert delivery["body"]["data"] == {"severity": "P1", "n": 1} and delivery["body"]["cursor"]
        refreshed = (await rpc(alice, "events/subscribe", params))["result"]
        assert refreshed["id"] == made["id"]
        assert refreshed["deliveryStatus"]["lastError"] is None
        bob = connect(server, auth=principal("bob"))
        gone = await rpc(bob, "events/unsubscribe", {"name": "incident.created",
                                                      "arguments": {"severity": "P1"},
                                                      "delivery": {"url": receiver.url}})
        assert gone["error"]["code"] == -32011  # bob cannot remove alice's subscription
        done = await rpc(alice, "events/unsubscribe", {"name": "incident.created",
                                                        "arguments": {"severity": "P1"},
                                                        "delivery": {"url": receiver.url}})
        assert "error" not in done and done["result"]["resultType"] == "complete"
    finally:
        await events.stop()
        await receiver.close()


@run_async
async def test_subscribe_refuses_what_it_must() -> None:
    receiver = await Receiver(SECRET, echo=False).start()
    server, events = make(delivery=_allowing())
    strict, strict_events = make()
    alice = connect(server, auth=principal("alice"))
    base = {"name": "incident.created", "arguments": {}, "cursor": None}
    try:
        anonymous = await rpc(connect(server), "events/subscribe", {
            **base, "delivery": {"url": receiver.url, "secret": SECRET}})
        assert anonymous["error"]["code"] == -32012
        for secret in ("nope", "whsec_!!", "whsec_" + base64.b64encode(b"x" * 8).decode()):
            bad = await rpc(alice, "events/subscribe", {**base, "delivery": {"url": receiver.url,
                                                                            "secret": secret}})
            assert bad["error"]["code"] == -32602 and "secret" in bad["error"]["message"]
        echo = await rpc(alice, "events/subscribe", {**base, "delivery": {"url": receiver.url,
                                                                         "secret": SECRET}})
        assert echo["error"]["code"] == -32015
        assert echo["error"]["data"] == {"reason": "challenge_failed"}
        assert receiver.attempts == 0  # nothing but the challenge was sent
        strict_alice = connect(strict, auth=principal("alice"))
        for url, why in ((receiver.url, "https"), ("https://127.0.0.1/x", "non-public"),
                         ("https://10.1.2.3/x", "non-public"), ("https://[::1]/x", "non-public"),
                         ("https://user:pw@example.com/x", "credentials")):
            refused = await rpc(strict_alice, "events/subscribe",
                                {**base, "delivery": {"url": url, "secret": SECRET}})
            assert refused["error"]["code"] == -32602 and why in refused["error"]["message"], refused
    finally:
        await events.stop()
        await strict_events.stop()
        await receiver.close()


@run_async
async def test_delivery_resolves_at_send_time_and_refuses_rebinding() -> None:
    answers = {"hook.example": ["93.184.216.34"]}

    async def resolver(host: str, port: int) -> list[str]:
        return answers[host]

    delivery = Delivery(resolver=resolver, attempts=1)
    key = base64.b64decode(SECRET[6:])
    answers["hook.example"] = ["127.0.0.1"]  # the name now points inward: refused, not sent
    with pytest.raises(WebhookError, match="non-public address"):
        await delivery.send("https://hook.example/x", key, "evt_1", b"{}", {})
    answers["hook.example"] = ["93.184.216.34", "10.0.0.1"]  # any inward answer is refused
    with pytest.raises(WebhookError, match="non-public address"):
        await delivery.send("https://hook.example/x", key, "evt_1", b"{}", {})
    with pytest.raises(WebhookError, match="over 262144 bytes"):
        await delivery.send("https://hook.example/x", key, "evt_1", b"x" * (256 * 1024 + 1), {})
    await delivery.aclose()


@run_async
async def test_a_413_is_final_and_recorded_as_a_category() -> None:
    receiver = await Receiver(SECRET, statuses=[413, 413, 413]).start()
    key = base64.b64decode(SECRET[6:])
    delivery = _allowing(attempts=3)
    try:
        with pytest.raises(WebhookError, match="^endpoint answered 413$") as err:
            await delivery.send(receiver.url, key, "evt_1", b'{"a":1}', {})
        assert err.value.category == "http_4xx" and receiver.attempts == 1
    finally:
        await delivery.aclose()
        await receiver.close()


def test_signatures_follow_standard_webhooks() -> None:
    key = base64.b64decode(SECRET[6:])
    now = int(time.time())
    headers = {"Webhook-Id": "evt_1", "Webhook-Timestamp": str(now),
               "Webhook-Signature": "v1,bogus " + sign(key, "evt_1", now, b'{"a":1}')}
    assert verify(SECRET, headers, b'{"a":1}') is True  # any of several signatures
    assert verify(SECRET, headers, b'{"a":2}') is False  # the raw body is signed
    assert verify(SECRET, headers, b'{"a":1}', now=now + 301) is False  # too old
    other = "whsec_" + base64.b64encode(b"z" * 32).decode()
    assert verify(other, headers, b'{"a":1}') is False


def test_a_fleet_needs_a_shared_log() -> None:
    from rondo.fleet.guard import FleetError, check_fleet

    server, _ = make()
    with pytest.raises(FleetError, match="event log or webhook subscriptions live in one process"):
        check_fleet(server, workers=2, environ={})


@run_async
async def test_the_client_side_polls_drains_and_subscribes() -> None:
    from rondo.client.events import EventsClient, new_secret

    receiver = await Receiver("whsec_placeholder").start()
    server, events = make(delivery=_allowing(), max_events=2)
    try:
        async with rondo.Client(server, auth=principal("alice")) as client:
            ev = EventsClient(client)
            assert [e["name"] for e in await ev.list_events()] == ["incident.created", "poll.only"]
            start = (await ev.poll("incident.created"))["cursor"]
            for n in range(5):
                await server.emit("incident.created", {"n": n})
            found, cursor, truncated = await ev.drain("incident.created", cursor=start)
            assert [e["data"]["n"] for e in found] == [0, 1, 2, 3, 4] and truncated is False
            assert (await ev.poll("incident.created", cursor=cursor))["events"] == []
            secret = new_secret()
            receiver.secret = secret
            made = await ev.subscribe("incident.created", {}, receiver.url, secret=secret)
            assert made["secret"] == secret and made["id"].startswith("sub_")
            await server.emit("incident.created", {"n": 9})
            deadline = time.monotonic() + 5
            while not receiver.deliveries:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.01)
            assert receiver.deliveries[0]["verified"] is True
            await ev.unsubscribe("incident.created", {}, receiver.url)
            with pytest.raises(rondo.McpError, match="No such subscription"):
                await ev.unsubscribe("incident.created", {}, receiver.url)
        with pytest.raises(ValueError, match="24 to 64"):
            new_secret(8)
    finally:
        await events.stop()
        await receiver.close()


def test_a_dead_workers_unacknowledged_delivery_is_taken_over() -> None:
    from rondo.events import RedisEventLog
    from tests.helpers import fleet_parts, redis_server

    fleet_parts.need("redis-server")

    async def go(url: str) -> None:
        log = RedisEventLog(url, prefix="reclaim:")
        await log.ensure_group(["job.done"])
        await log.append("job.done", {"eventId": "evt_1", "name": "job.done", "data": {}})
        first = await log.claim(["job.done"], "dead-worker", 0.1, reclaim_after=0.2)
        assert [o["eventId"] for _, _, o in first] == ["evt_1"]  # taken, never acknowledged
        assert await log.claim(["job.done"], "live-worker", 0.1, reclaim_after=60) == []
        deadline = time.monotonic() + 5
        while True:
            retaken = await log.claim(["job.done"], "live-worker", 0.1, reclaim_after=0.2)
            if retaken:
                break
            assert time.monotonic() < deadline, "never reclaimed"
        assert [o["eventId"] for _, _, o in retaken] == ["evt_1"]
        # A second entry, taken after evt_1 was and never acknowledged: once it can be
        # reclaimed, so could evt_1 had its acknowledgement not removed it.
        await log.append("job.done", {"eventId": "evt_2", "name": "job.done", "data": {}})
        taken = await log.claim(["job.done"], "another-dead-worker", 0.1, reclaim_after=60)
        assert [o["eventId"] for _, _, o in taken] == ["evt_2"]
        await log.done("job.done", retaken[0][1])
        deadline = time.monotonic() + 5
        while not (later := await log.claim(["job.done"], "third", 0.1, reclaim_after=0.2)):
            assert time.monotonic() < deadline, "evt_2 never reclaimed"
        assert [o["eventId"] for _, _, o in later] == ["evt_2"]  # evt_1 was acknowledged

    with redis_server.running() as url:
        asyncio.run(go(url))


@run_async
async def test_the_client_side_streams_and_resumes_from_its_cursor() -> None:
    from rondo.client.events import EventsClient

    server, _ = make(heartbeat=0.2)
    async with rondo.Client(server) as client:
        ev = EventsClient(client)
        async with ev.stream("incident.created", {"severity": "P1"}) as stream:
            assert stream.cursor == "m0"
            await server.emit("incident.created", {"severity": "P2", "n": 1})
            await server.emit("incident.created", {"severity": "P1", "n": 2})
            got = await asyncio.wait_for(anext(stream), 5)
            assert got["data"] == {"severity": "P1", "n": 2} and got["cursor"] == "m2"
            assert stream.cursor == "m2"
            saved = stream.cursor
        await server.emit("incident.created", {"severity": "P1", "n": 3})  # while disconnected
        async with ev.stream("incident.created", {"severity": "P1"}, cursor=saved) as again:
            missed = await asyncio.wait_for(anext(again), 5)
            assert missed["data"]["n"] == 3 and again.truncated is False
    async with rondo.Client(server, protocol="2025-11-25") as legacy:
        with pytest.raises(rondo.client.ClientError, match="poll instead"):
            async with EventsClient(legacy).stream("incident.created"):
                pass


def _certificate(tmp_path: Any, name: str) -> tuple[str, str]:
    """A self-signed certificate and key for `name` (PEM files)."""
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=1)).not_valid_after(now + dt.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_https_delivery_goes_to_the_checked_address_with_the_host_name_for_tls(tmp_path: Any) -> None:
    """The POST connects to the address the resolver gave (127.0.0.1 here) while TLS checks the
    certificate against the URL's host name (SNI), and Host names it too."""
    import ssl

    cert, key = _certificate(tmp_path, "hook.test")
    other_cert, other_key = _certificate(tmp_path, "other.test")

    async def go() -> None:
        seen: list[dict[str, str]] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readline()
                headers: dict[str, str] = {}
                while (raw := (await reader.readline()).decode().rstrip("\r\n")):
                    name, _, value = raw.partition(":")
                    headers[name.strip().lower()] = value.strip()
                await reader.readexactly(int(headers.get("content-length", "0")))
                seen.append(headers)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                await writer.drain()
            except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
                pass
            finally:
                writer.close()

        async def resolver(host: str, port: int) -> list[str]:
            return ["127.0.0.1"]

        key_bytes = base64.b64decode(SECRET[6:])
        for served_cert, served_key, ok in ((cert, key, True), (other_cert, other_key, False)):
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(served_cert, served_key)
            server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
            port = server.sockets[0].getsockname()[1]
            trust = ssl.create_default_context(cafile=cert)  # the client trusts hook.test's cert
            delivery = Delivery(resolver=resolver, allow_private=True, attempts=1, verify=trust)
            try:
                if ok:
                    await delivery.send(f"https://hook.test:{port}/in", key_bytes, "evt_1", b"{}", {})
                    assert seen[-1]["host"] == f"hook.test:{port}"
                else:  # a certificate for another name is refused, as a category
                    with pytest.raises(WebhookError, match="^could not connect$") as err:
                        await delivery.send(f"https://hook.test:{port}/in", key_bytes, "evt_1", b"{}", {})
                    assert err.value.category == "tls_error"
            finally:
                await delivery.aclose()
                server.close()
                await server.wait_closed()
        assert len(seen) == 1

    asyncio.run(go())


@run_async
async def test_poll_works_on_a_2025_11_25_session_too() -> None:
    from rondo.client.events import EventsClient

    server, _ = make()
    async with rondo.Client(server, protocol="2025-11-25") as legacy:
        assert legacy.era != "modern"
        ev = EventsClient(legacy)
        start = (await ev.poll("incident.created", {"severity": "P1"}))["cursor"]
        await server.emit("incident.created", {"severity": "P1", "n": 1})
        page = await ev.poll("incident.created", {"severity": "P1"}, cursor=start)
        assert [e["data"]["n"] for e in page["events"]] == [1]
