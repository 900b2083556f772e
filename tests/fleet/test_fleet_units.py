"""The fleet pieces without processes: bind parsing, the ASGI front, the start-up guard, the
change bus, key reports and their comparison."""

from __future__ import annotations

import argparse
import asyncio
import base64
import gzip
import itertools
import json
import re
import time
import tracemalloc
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rondo
from rondo import elicit
from rondo.core.subscriptions import Listener
from rondo.fleet.bus import MemoryBus, use_bus
from rondo.fleet.front import Front, normalize_origin
from rondo.fleet.guard import FleetError, check_fleet, interactive_components
from rondo.fleet.keycheck import MAX_REPORT, compare, fetch_reports, report_url
from rondo.fleet.keyinfo import REPORT_PATH, key_report
from rondo.fleet.redis_bus import RedisBus
from rondo.fleet.run import parse_bind, parser
from tests.helpers.helpers_core import http_headers, request

SECRET_A = b"a" * 32
SECRET_B = b"b" * 32


# -- bind forms ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("8000", ("127.0.0.1", 8000)),
    ("127.0.0.1:8000", ("127.0.0.1", 8000)),
    ("0.0.0.0:0", ("0.0.0.0", 0)),
    ("[::1]:8000", ("::1", 8000)),
    ("[::]:443", ("::", 443)),
    ("localhost:80", ("localhost", 80)),
])
def test_bind_forms(text, expected):
    assert parse_bind(text) == expected


@pytest.mark.parametrize(("text", "reason"), [
    ("::1:8000", "write an IPv6 address in brackets: [::1:8000]... got '::1:8000'"),
    ("[::1]8000", "expected [IPV6]:PORT, got '[::1]8000'"),
    ("[::1", "expected [IPV6]:PORT, got '[::1'"),
    ("host:", "expected [HOST:]PORT, got 'host:'"),
    ("x:99999", "port 99999 is out of range"),
    ("abc", "expected [HOST:]PORT, got 'abc'"),
    (":8000", "expected HOST:PORT, got ':8000'"),
    ("-1", "port -1 is out of range"),
])
def test_bad_bind_forms_are_refused_with_the_expected_shape(text, reason):
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(reason)}$"):
        parse_bind(text)


@given(st.text(max_size=40))
def test_parse_bind_accepts_or_refuses_cleanly(text):
    try:
        host, port = parse_bind(text)
    except argparse.ArgumentTypeError:
        return
    assert host and 0 <= port <= 65535


@given(st.integers(0, 65535), st.sampled_from(["127.0.0.1", "0.0.0.0", "10.1.2.3", "mcp-svc"]))
def test_parse_bind_round_trips(port, host):
    assert parse_bind(f"{host}:{port}") == (host, port)
    assert parse_bind(f"[::1]:{port}") == ("::1", port)


def test_flag_values_are_checked_by_the_parser(capsys):
    for argv in (["app.py", "--workers", "0"], ["app.py", "--root-path", "tools"],
                 ["app.py", "--root-path", "/tools/"], ["app.py", "--log-level", "loud"],
                 ["app.py", "--allowed-hosts", ","]):
        with pytest.raises(SystemExit, match="^2$") as exc:  # argparse's usage error
            parser().parse_args(argv)
        assert exc.value.code == 2
        assert f"error: argument {argv[1]}" in capsys.readouterr().err
    args = parser().parse_args(["app.py", "--http", "[::1]:0", "--allowed-hosts", "a, b",
                                "--forwarded-allow-ips", "10.0.0.1", "--root-path", "/tools"])
    assert args.allowed_hosts == ["a", "b"] and args.root_path == "/tools"


def test_origins_normalize_like_browsers_send_them():
    assert normalize_origin("HTTPS://App.Example.com/") == "https://app.example.com"
    for bad in ("app.example.com", "ftp://x", "https://x/path", "https://"):
        with pytest.raises(ValueError, match=r"an allowed origin looks like https://host\[:port\], got"):
            normalize_origin(bad)


# -- the ASGI front ---------------------------------------------------------------------------

def served(state=None, **front_options):
    server = rondo.Server("front", state=state if state is not None else rondo.StatePolicy(
        keys=[("k1", SECRET_A), ("k0", SECRET_B)]))

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server, Front(server.asgi(allowed_hosts=None), server, **front_options)


def client_for(app, client=("127.0.0.1", 5000), root_path=""):
    transport = httpx.ASGITransport(app=app, client=client, root_path=root_path)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


def discover(http, path="/mcp", **headers):
    message = request("server/discover")
    return http.post(path, json=message, headers={**http_headers(message), **headers})


def test_front_checks_host_and_origin():
    async def main():
        _, app = served(allowed_hosts=["mcp.example.com", "mcp-svc"],
                        allowed_origins=["https://app.example.com"])
        async with client_for(app) as http:
            assert (await discover(http, host="mcp-svc:8000")).status_code == 200
            assert (await discover(http, host="mcp.example.com")).status_code == 200
            refused = await discover(http, host="evil.example.com")
            assert refused.status_code == 403 and refused.json()["error"]["code"] == -32600
            assert (await discover(http, host="mcp-svc",
                                   origin="https://app.example.com")).status_code == 200
            assert (await discover(http, host="mcp-svc",
                                   origin="https://mcp-svc")).status_code == 403
        _, app = served()  # defaults: loopback names; an Origin must name an allowed host
        async with client_for(app) as http:
            assert (await discover(http, host="127.0.0.1:9")).status_code == 200
            assert (await discover(http, host="[::1]:9")).status_code == 200
            assert (await discover(http, host="localhost", origin="http://localhost:3000")
                    ).status_code == 200
            assert (await discover(http, host="localhost", origin="https://evil.example")
                    ).status_code == 403
            assert (await discover(http, host="mcp-svc")).status_code == 403
        _, app = served(allowed_hosts=["*"])
        async with client_for(app) as http:
            assert (await discover(http, host="anything.internal")).status_code == 200
    asyncio.run(main())


def test_front_judges_each_host_and_origin_pair_once_and_keeps_a_bounded_number():
    async def main():
        _, app = served(allowed_hosts=["mcp-svc"])
        async with client_for(app) as http:
            # The same Host with and without an Origin, twice each: four answers, two pairs.
            for _ in range(2):
                assert (await discover(http, host="mcp-svc")).status_code == 200
                assert (await discover(http, host="mcp-svc", origin="https://evil.example")
                        ).status_code == 403
            assert len(app._verdicts) == 2
            # Hosts a client picks at will: the memo never holds more than its bound, and a
            # verdict judged again after it was let go is the same.
            for n in range(300):
                assert (await discover(http, host=f"h{n}.example")).status_code == 403
            assert len(app._verdicts) <= 256
            assert (await discover(http, host="mcp-svc")).status_code == 200
            assert (await discover(http, host="h0.example")).status_code == 403
    asyncio.run(main())


def test_front_serves_under_a_root_path():
    async def main():
        _, app = served()
        # uvicorn puts root_path in front of the path it received from the proxy
        async with client_for(app, root_path="/tools") as http:
            assert (await discover(http, "/tools/mcp")).status_code == 200
            assert (await discover(http, "/tools/other")).status_code == 404
            assert (await http.get("/tools/healthz")).text == "ok"
    asyncio.run(main())


def test_health_and_key_report():
    async def main():
        server, app = served(worker="w1")
        async with client_for(app) as http:
            health = await http.get("/healthz", headers={"host": "10.1.2.3"})
            assert health.status_code == 200 and health.text == "ok"
            assert health.headers["rondo-worker"] == "w1"
            report = (await http.get(REPORT_PATH)).json()
            assert report["server"] == "front" and report["worker"] == "w1"
            assert report["signing"] == "k1" and [k["id"] for k in report["keys"]] == ["k1", "k0"]
            assert report["ephemeral"] is False
            text = json.dumps(report)
            for secret in (SECRET_A, SECRET_B):
                assert base64.urlsafe_b64encode(secret).decode().rstrip("=") not in text
                assert secret.decode() not in text
            # Through a proxy, or from elsewhere: not there.
            forwarded = await http.get(REPORT_PATH, headers={"x-forwarded-for": "203.0.113.9"})
            assert forwarded.status_code == 404
            assert (await http.post(REPORT_PATH)).status_code == 404
        async with client_for(app, client=("203.0.113.9", 4000)) as http:
            assert (await http.get(REPORT_PATH)).status_code == 404
            assert (await discover(http)).headers["rondo-worker"] == "w1"
    asyncio.run(main())


def test_key_report_of_a_random_key_and_of_state_off():
    server = rondo.Server("r", state=rondo.StatePolicy())
    report = key_report(server)
    assert report["ephemeral"] is True and report["signing"].startswith("~")
    assert key_report(rondo.Server("off", state=None))["state"] == "off"


# -- the start-up guard -------------------------------------------------------------------------

def guarded(state):
    server = rondo.Server("g", state=state)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


def test_guard_refuses_a_fleet_on_a_random_key_only_with_interactive_components():
    server = guarded(rondo.StatePolicy())
    check_fleet(server, 4, environ={})  # nothing can answer input_required: fine
    assert interactive_components(server) == []

    @server.tool
    def ask(ctx: rondo.Context) -> str:
        return ctx.ask("x", elicit.form("x?", {"type": "object", "properties": {}})).action

    @server.tool
    def quote(city: str):  # no annotation: may return InputRequired
        return rondo.InputRequired(state={"city": city})

    @server.prompt
    def plain(topic: str) -> str:
        return topic

    assert interactive_components(server) == ["tool ask", "tool quote"]
    check_fleet(server, 1, environ={})  # one process: the transport warns instead
    with pytest.raises(FleetError, match="RONDO_STATE_KEYS") as exc:
        check_fleet(server, 2, environ={})
    assert "2 workers" in str(exc.value) and "tool ask" in str(exc.value)
    with pytest.raises(FleetError, match="RONDO_FLEET=1"):
        check_fleet(server, 1, environ={"RONDO_FLEET": "1"})
    keyed = guarded(rondo.StatePolicy(keys=[("k1", SECRET_A)]))
    keyed.tool(ask)
    check_fleet(keyed, 8, environ={})
    check_fleet(guarded(None), 8, environ={})


def test_guard_refuses_one_time_state_in_process_memory_in_a_fleet():
    from rondo.state.replay import RedisReplayStore

    server = guarded(rondo.StatePolicy(keys=[("k1", SECRET_A)], once=True))
    with pytest.raises(FleetError, match="once=True"):
        check_fleet(server, 2, environ={})
    server.state_policy.replay_store = RedisReplayStore(url="redis://127.0.0.1:1/0")
    check_fleet(server, 2, environ={})


def test_http_app_of_a_replica_refuses_a_random_key(monkeypatch):
    monkeypatch.setenv("RONDO_FLEET", "1")
    server = guarded(rondo.StatePolicy())
    server.tool(lambda ctx: "x", name="asks")
    with pytest.raises(FleetError, match="^rondo: refusing to start 'g' as a replica .* with a random "
                                         "per-process state key: tool asks may answer input_required"):
        server.asgi()


# -- the change bus ------------------------------------------------------------------------------

def listening(server, flags=frozenset({"toolsListChanged"}), uris=()):
    got: list[dict] = []
    server.core.subscriptions.add(Listener(1, flags, uris, got.append))
    return got


def test_a_memory_bus_fans_changes_out_to_every_attached_server():
    bus = MemoryBus()
    a, b = rondo.Server("a"), rondo.Server("b")
    use_bus(a, bus)
    use_bus(b, bus)
    heard_a = listening(a, uris=("file:///docs",))
    heard_b = listening(b)
    b.notify_tools_changed()
    assert [m["method"] for m in heard_a] == ["notifications/tools/list_changed"]
    assert [m["method"] for m in heard_b] == ["notifications/tools/list_changed"]
    b.notify_resource_updated("file:///docs/a.md")
    assert heard_a[-1]["params"]["uri"] == "file:///docs/a.md" and len(heard_b) == 1
    with pytest.raises(ValueError, match="already has a bus"):
        use_bus(a, MemoryBus())
    with pytest.raises(ValueError, match="not a change a bus carries: 'evil'"):
        bus.publish("evil", "x")
    with pytest.raises(TypeError, match=r"bus must have attach\(\), publish\(\), start\(\) and stop\(\)"):
        use_bus(rondo.Server("c"), object())  # type: ignore[arg-type]


def test_without_a_bus_changes_stay_in_the_process():
    a = rondo.Server("a")
    heard = listening(a)
    a.notify_tools_changed()
    assert len(heard) == 1 and a.core.subscriptions.bus is None


@given(st.one_of(st.binary(max_size=200), st.text(max_size=50).map(str.encode),
                 st.builds(lambda k, p: json.dumps({"k": k, "p": p}).encode(),
                           st.one_of(st.sampled_from(["list_changed", "resource_updated"]), st.text()),
                           st.one_of(st.text(), st.integers(), st.none(),
                                     st.sampled_from(["tools", "prompts", "resources"])))))
def test_the_redis_bus_delivers_only_well_formed_changes(data):
    bus = RedisBus(url="redis://127.0.0.1:1/0")
    got: list[tuple[str, str]] = []
    bus.attach(lambda kind, payload: got.append((kind, payload)))
    bus.receive(data)
    for kind, payload in got:
        assert (kind == "list_changed" and payload in ("tools", "prompts", "resources")) or (
            kind == "resource_updated" and isinstance(payload, str) and payload)


def test_the_redis_bus_delivers_here_when_redis_is_down(caplog):
    bus = RedisBus(url="redis://127.0.0.1:1/0", channel="c")
    got: list[tuple[str, str]] = []
    bus.attach(lambda kind, payload: got.append((kind, payload)))
    bus.publish("list_changed", "tools")
    assert got == [("list_changed", "tools")]  # at once: publish never waits for Redis
    deadline = time.monotonic() + 10
    while bus.lost < 1:  # the publisher thread's PUBLISH is refused, and counted lost
        assert time.monotonic() < deadline, "the failed publish was never counted"
        time.sleep(0.01)
    assert got == [("list_changed", "tools")]  # not delivered twice: unsubscribed, no echo
    assert "could not publish" in caplog.text and "127.0.0.1:1" not in repr(bus)
    with pytest.raises(ValueError, match="one server"):
        bus.attach(lambda kind, payload: None)


# -- comparing key reports ---------------------------------------------------------------------

def report(pid, signing="k1", keys=(("k1", "~a"),), ephemeral=False, server="s"):
    return {"server": server, "pid": pid, "state": "shared keys", "ephemeral": ephemeral,
            "signing": signing, "keys": [{"id": i, "fingerprint": f} for i, f in keys]}


def test_compare_key_reports():
    same = [("u1", report(1)), ("u2", report(2)), ("u3", report(3))]
    assert compare(same) == []
    (problem,) = compare([*same, ("u4", report(4, keys=(("k1", "~other"),)))])
    assert problem.startswith("u4 (pid 4)") and "different keys" in problem
    (problem,) = compare([*same, ("u4", report(4, signing="k0", keys=(("k0", "~b"), ("k1", "~a"))))])
    assert "different signing key" in problem
    (problem,) = compare([*same, ("u4", report(4, signing="~r", ephemeral=True))])
    assert "random per-process key" in problem
    assert any("different servers" in p for p in compare([*same, ("u4", report(4, server="x"))]))


def test_report_url():
    assert report_url("http://10.0.0.5:8000/mcp") == "http://10.0.0.5:8000" + REPORT_PATH
    assert report_url("http://10.0.0.5:8000/") == "http://10.0.0.5:8000" + REPORT_PATH


def _report_endpoint(body: Iterator[bytes], pulled: list[int], **headers: str) -> httpx.MockTransport:
    """A worker answering its key report with `body`, counting the raw bytes the checker pulls."""
    def counted() -> Iterator[bytes]:
        for chunk in body:
            pulled.append(len(chunk))
            yield chunk

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == REPORT_PATH
        return httpx.Response(200, headers={"content-type": "application/json", **headers},
                              content=counted())
    return httpx.MockTransport(handle)


def test_keys_check_reads_a_report_whole_and_a_gzipped_one():
    report = json.dumps({"pid": 7, "state": "shared", "signing": "k1", "keys": []}).encode()
    for body, headers in ((report, {}), (gzip.compress(report), {"content-encoding": "gzip"})):
        pulled: list[int] = []
        found = fetch_reports("http://w/mcp", 1, 5.0, _report_endpoint(iter([body]), pulled, **headers))
        assert found == [json.loads(report)] and pulled == [len(body)]


def test_keys_check_refuses_an_endless_report_at_its_cap():
    pulled: list[int] = []
    endless = _report_endpoint(itertools.repeat(b" " * 4096), pulled)
    with pytest.raises(RuntimeError, match=f"^http://w/mcp: the key report is larger than {MAX_REPORT} bytes$"):
        fetch_reports("http://w/mcp", 1, 5.0, endless)
    assert MAX_REPORT < sum(pulled) <= MAX_REPORT + 4096  # stopped at the cap, not read on


def test_keys_check_refuses_a_compressed_bomb_as_it_inflates():
    # 16 MiB of zeros, gzipped twice: about 1 KB on the wire. Before, `response.json()` decoded all
    # of it; now inflation stops one piece past the 64 KiB cap.
    bomb = gzip.compress(gzip.compress(bytes(16 << 20)))
    pulled: list[int] = []
    stacked = _report_endpoint(iter([bomb]), pulled, **{"content-encoding": "gzip, gzip"})
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="the key report is larger than 65536 bytes$"):
            fetch_reports("http://w/mcp", 1, 5.0, stacked)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pulled == [len(bomb)] and peak < 4 << 20, peak
    triple = _report_endpoint(iter([bomb]), [], **{"content-encoding": "gzip, gzip, gzip"})
    with pytest.raises(RuntimeError, match=r"cannot be decoded \(3 stacked content encodings"):
        fetch_reports("http://w/mcp", 1, 5.0, triple)


def test_rondo_keys_new_and_usage(capsys):
    from rondo.cli import main
    from rondo.state.keys import Keyring, parse_env_keys

    assert main(["keys", "new", "k9"]) == 0
    entry = capsys.readouterr().out.strip()
    assert entry.startswith("k9:") and Keyring(parse_env_keys(entry)).ids == ("k9",)
    assert main(["keys", "rotate"]) == 2 and "unknown command" in capsys.readouterr().err
    assert main(["keys"]) == 2


def _task_server(store=None):
    from rondo.tasks import Tasks

    server = rondo.Server("t", state=None)

    @server.tool(task="required")
    async def slow(n: int) -> int:
        return n

    if store is not None:
        server.extension(Tasks(store=store))
    return server


def test_guard_refuses_tasks_in_process_memory_in_a_fleet():
    from rondo.tasks import MemoryTaskStore, RedisTaskStore

    with pytest.raises(FleetError, match="MemoryTaskStore") as exc:
        check_fleet(_task_server(), 2, environ={})  # the default store, installed later
    assert "--redis" in str(exc.value) and "2 workers" in str(exc.value)
    with pytest.raises(FleetError, match="tasks are kept in process memory"):
        check_fleet(_task_server(MemoryTaskStore()), 1, environ={"RONDO_FLEET": "1"})
    check_fleet(_task_server(), 1, environ={})  # one process: in memory is right
    check_fleet(_task_server(RedisTaskStore(url="redis://127.0.0.1:1/0")), 4, environ={})
    check_fleet(guarded(None), 4, environ={})  # no task-opted tool: nothing to lose


def test_redis_flag_moves_tasks_out_of_process_memory():
    from rondo.fleet.worker import connect_redis
    from rondo.tasks import EXTENSION, MemoryTaskStore, RedisTaskStore

    for server in (_task_server(), _task_server(MemoryTaskStore())):
        connect_redis(server, "redis://127.0.0.1:1/0")
        assert isinstance(server.extensions[EXTENSION].store, RedisTaskStore)
        check_fleet(server, 2, environ={})


def test_the_serving_line_gives_a_usable_url_for_a_wildcard_bind():
    from rondo.fleet.run import RunConfig, serving_line

    wild = RunConfig("app.py", host="0.0.0.0", allowed_hosts=["mcp.example.com", "mcp-svc"],
                     workers=2)
    assert serving_line("notes", wild, 8000) == (
        "rondo: serving notes at http://127.0.0.1:8000/mcp (2 workers); listening on all "
        "interfaces (0.0.0.0:8000), clients elsewhere use mcp.example.com, mcp-svc")
    six = RunConfig("app.py", host="::", allowed_hosts=["*"], root_path="/api")
    assert serving_line("notes", six, 9) == (
        "rondo: serving notes at http://[::1]:9/api/mcp; listening on all interfaces "
        "([::]:9), clients elsewhere use any host name")
    assert serving_line("notes", RunConfig("app.py", host="10.0.0.5",
                                           allowed_hosts=["a"]), 80) == \
        "rondo: serving notes at http://10.0.0.5:80/mcp"
