"""One peer's share of the connections (issue 37 defect 12).

Before: an attacker that reopened every connection the server cut kept 1,100 open against a
global cap of 960, and a normal client got 1 of 37 requests answered
(`benchmarks/probe_reconnect.py`). Now each client address holds at most
`HttpLimits.max_connections_per_peer` (120) connections; beyond it, 503 at once. Behind a proxy
uvicorn trusts, connections count under the client named in `X-Forwarded-For`.

Driven in process: the protocol class `serve()` builds, one instance per connection, on
recording transports with the peer address each test chooses.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rondo.transport.serve.limits import (
    HttpLimits,
    forwarded_client,
    guarded_protocol,
    trusted_hosts,
)
from tests.client.test_coalesce import Recorder, make_app
from tests.helpers.polling import until


class Peer(Recorder):
    def __init__(self, host: str) -> None:
        super().__init__()
        self.host = host

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": (self.host, 40000), "sockname": ("127.0.0.1", 8000)}.get(name, default)


class World:
    """One server's protocol class and state; `connect(host)` is one accepted connection."""

    def __init__(self, limits: HttpLimits, parser: str = "httptools", **options: Any) -> None:
        import uvicorn
        from uvicorn.server import ServerState

        app, _ = make_app()
        self.config = uvicorn.Config(app, log_level="error", lifespan="off",
                                     server_header=False, date_header=False,
                                     **{"proxy_headers": False, **options})
        self.config.load()
        self.cls = guarded_protocol(parser, limits)
        self.state = ServerState()

    def connect(self, host: str) -> tuple[Any, Peer]:
        protocol = self.cls(config=self.config, server_state=self.state, app_state={},
                            _loop=asyncio.get_running_loop())
        transport = Peer(host)
        protocol.connection_made(transport)
        return protocol, transport


def refused(transport: Peer) -> bool:
    return transport.closed and b"".join(transport.writes).startswith(b"HTTP/1.1 503 ")


LIMITS = HttpLimits(max_connections=50, max_connections_per_peer=3)


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_a_peer_gets_its_share_and_no_more(parser: str) -> None:
    async def main() -> None:
        world = World(LIMITS, parser)
        mine = [world.connect("10.0.0.1") for _ in range(3)]
        assert not any(t.closed for _, t in mine)
        protocol, extra = world.connect("10.0.0.1")
        assert refused(extra)
        protocol.connection_lost(None)
        other, other_t = world.connect("10.0.0.2")  # another client is not affected
        assert not other_t.closed
        mine[0][0].connection_lost(None)  # a place comes free when one of its connections ends
        again, again_t = world.connect("10.0.0.1")
        assert not again_t.closed
        again.data_received(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await until(lambda: again.cycle is not None and again.cycle.response_complete)
        assert b"".join(again_t.writes).startswith(b"HTTP/1.1 404 ")
        for p, _ in [*mine[1:], (other, other_t), (again, again_t)]:
            p.connection_lost(None)

    asyncio.run(main())


def test_refused_connections_do_not_take_places() -> None:
    async def main() -> None:
        world = World(LIMITS)
        held = [world.connect("10.0.0.1") for _ in range(3)]
        for _ in range(100):  # the reconnecting attacker
            protocol, transport = world.connect("10.0.0.1")
            assert refused(transport)
            protocol.connection_lost(None)
        for protocol, _ in held:
            protocol.connection_lost(None)
        fresh = [world.connect("10.0.0.1") for _ in range(3)]
        assert not any(t.closed for _, t in fresh)

    asyncio.run(main())


def request(forwarded: str) -> bytes:
    return (b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: %s\r\n\r\n"
            % forwarded.encode())


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_behind_a_trusted_proxy_connections_count_per_forwarded_client(parser: str) -> None:
    async def main() -> None:
        world = World(LIMITS, parser, proxy_headers=True, forwarded_allow_ips="10.9.9.9")
        conns = [world.connect("10.9.9.9") for _ in range(6)]  # the proxy: never counted itself
        assert not any(t.closed for _, t in conns)
        for protocol, _ in conns[:3]:
            protocol.data_received(request("1.1.1.1"))
        protocol, transport = conns[3]
        protocol.data_received(request("1.1.1.1, 10.9.9.9"))  # the same client, via two hops
        assert refused(transport)
        protocol, transport = conns[4]
        protocol.data_received(request("2.2.2.2"))
        await until(lambda: protocol.cycle is not None and protocol.cycle.response_complete)
        assert b"".join(transport.writes).startswith(b"HTTP/1.1 404 ")
        for p, _ in conns:
            p.connection_lost(None)

    asyncio.run(main())


def test_an_untrusted_peer_is_counted_by_its_address_whatever_it_forwards() -> None:
    async def main() -> None:
        world = World(LIMITS, proxy_headers=True, forwarded_allow_ips="10.9.9.9")
        conns = [world.connect("10.0.0.7") for _ in range(3)]
        for i, (protocol, _) in enumerate(conns):
            protocol.data_received(request(f"3.3.3.{i}"))  # lies about who it is
        _, extra = world.connect("10.0.0.7")
        assert refused(extra)
        for p, _ in conns:
            p.connection_lost(None)

    asyncio.run(main())


def test_without_proxy_headers_the_proxy_is_just_a_peer() -> None:
    async def main() -> None:
        world = World(LIMITS, forwarded_allow_ips="10.9.9.9")  # proxy_headers off (serve())
        conns = [world.connect("10.9.9.9") for _ in range(3)]
        _, extra = world.connect("10.9.9.9")
        assert refused(extra)
        for p, _ in conns:
            p.connection_lost(None)

    asyncio.run(main())


def test_trusted_hosts_reads_uvicorns_setting() -> None:
    trusted = trusted_hosts("127.0.0.1, 10.0.0.0/8,fd00::/8")
    assert trusted("127.0.0.1") and trusted("10.1.2.3") and trusted("fd00::1")
    assert not trusted("11.0.0.1") and not trusted("not-an-ip") and not trusted("::1")
    assert trusted_hosts("*")("anything") and trusted_hosts(["192.168.0.1"])("192.168.0.1")
    assert not trusted_hosts("")("127.0.0.1")


def test_forwarded_client_takes_the_nearest_untrusted_address() -> None:
    trusted = trusted_hosts("10.0.0.1,10.0.0.2")
    assert forwarded_client([(b"x-forwarded-for", b"6.6.6.6, 1.1.1.1, 10.0.0.2")],
                            trusted) == "1.1.1.1"  # 6.6.6.6 is what the client claimed
    assert forwarded_client([(b"x-forwarded-for", b"10.0.0.1, 10.0.0.2")], trusted) == "10.0.0.1"
    assert forwarded_client([(b"host", b"x")], trusted) is None
    assert forwarded_client([(b"x-forwarded-for", b" , ")], trusted) is None
    assert len(forwarded_client([(b"x-forwarded-for", b"a" * 500)], trusted) or "") == 64


def test_the_share_is_checked_at_start_up_and_never_above_the_cap() -> None:
    with pytest.raises(ValueError, match="max_connections_per_peer must be a positive integer"):
        HttpLimits(max_connections_per_peer=0)
    assert HttpLimits().max_connections_per_peer == 120

    async def main() -> None:
        world = World(HttpLimits(max_connections=2, max_connections_per_peer=10))
        conns = [world.connect("10.0.0.1") for _ in range(2)]
        _, extra = world.connect("10.0.0.1")
        assert refused(extra)  # the global cap answers first
        for p, _ in conns:
            p.connection_lost(None)

    asyncio.run(main())
