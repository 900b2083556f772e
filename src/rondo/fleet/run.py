"""`rondo run APP --http HOST:PORT [--workers N]`: serve over HTTP, one process or a fleet.

Workers are uvicorn's own process manager (`uvicorn.supervisors.Multiprocess`): this process
loads the app once to check it (the start-up guard, the flags), binds the socket, says where it
serves, and hands the bound socket to N spawned workers that each import the app through the
factory in `worker.py`. The manager restarts a worker that dies. Nothing is printed before the
socket is bound, so "serving at" is true when it appears.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

ENV_RUN = "RONDO_RUN"  # the run configuration, JSON, for spawned workers
ENV_REDIS = "RONDO_REDIS_URL"
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


class RunConfig:
    """What `rondo run` was asked for; travels to spawned workers as JSON (`RONDO_RUN`)."""

    def __init__(
        self,
        target: str,
        host: str = "127.0.0.1",
        port: int = 8000,
        workers: int = 1,
        allowed_hosts: list[str] | None = None,  # names besides the loopback ones
        allowed_origins: list[str] | None = None,
        root_path: str = "",
        proxy_headers: bool = False,
        forwarded_allow_ips: str | None = None,
        log_level: str = "warning",
        redis: str | None = None,
        worker_id: str | None = None,
        fleet: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.target = target
        self.host = host
        self.port = port
        self.workers = workers
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins
        self.root_path = root_path
        self.proxy_headers = proxy_headers
        self.forwarded_allow_ips = forwarded_allow_ips
        self.log_level = log_level
        self.redis = redis
        self.worker_id = worker_id
        self.fleet = fleet
        self.extra = extra or {}

    def to_env(self) -> str:
        return json.dumps(vars(self))

    @classmethod
    def from_env(cls, text: str) -> RunConfig:
        return cls(**json.loads(text))


def parse_bind(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT`, `[IPv6]:PORT` -> (host, port); IPv6 without brackets is refused."""
    text = text.strip()
    if text.startswith("["):
        end = text.find("]")
        if end == -1 or text[end + 1: end + 2] != ":":
            raise argparse.ArgumentTypeError(f"expected [IPV6]:PORT, got {text!r}")
        host, port_text = text[1:end], text[end + 2:]
    elif text.count(":") > 1:
        raise argparse.ArgumentTypeError(f"write an IPv6 address in brackets: [{text}]... got {text!r}")
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            host = "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is out of range")
    if not host:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, port


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def _listing(text: str) -> list[str]:
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--workers needs a number, got {text!r}") from None
    if not 1 <= n <= 64:
        raise argparse.ArgumentTypeError("--workers must be 1 to 64")
    return n


def _root_path(text: str) -> str:
    if text and (not text.startswith("/") or text.endswith("/") or "?" in text):
        raise argparse.ArgumentTypeError(f"--root-path looks like /prefix, got {text!r}")
    return text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rondo run", description="Serve a rondo server file.")
    p.add_argument("target", help="path/to/app.py[:server]")
    p.add_argument("--http", metavar="[HOST:]PORT", type=parse_bind,
                   help="serve Streamable HTTP at http://HOST:PORT/mcp (default: stdio); "
                        "IPv6 as [::1]:PORT; port 0 picks a free one")
    p.add_argument("--workers", type=_workers, default=1,
                   help="worker processes sharing the socket (uvicorn's process manager)")
    p.add_argument("--allowed-hosts", type=_listing, metavar="HOST,...",
                   help="Host names clients may use (default: loopback names only; '*' turns "
                        "the check off, e.g. when the proxy checks). Required off loopback")
    p.add_argument("--allowed-origins", type=_listing, metavar="ORIGIN,...",
                   help="browser origins allowed (https://app.example.com; '*' any); default: "
                        "an Origin whose host is an allowed host")
    p.add_argument("--root-path", type=_root_path, default="",
                   help="the prefix a proxy strips before forwarding (e.g. /tools)")
    p.add_argument("--proxy-headers", action="store_true",
                   help="trust X-Forwarded-For/-Proto from --forwarded-allow-ips")
    p.add_argument("--forwarded-allow-ips", metavar="IPS",
                   help="proxies trusted for forwarded headers (comma-separated; implies "
                        "--proxy-headers; default 127.0.0.1)")
    p.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                   help="uvicorn and rondo log level; info and below log each request")
    p.add_argument("--redis", metavar="URL",
                   help=f"Redis for the fleet: change bus and one-time-state store "
                        f"(default ${ENV_REDIS})")
    p.add_argument("--worker-id", metavar="ID",
                   help="this worker's name; legacy session ids start with it (sticky routing)")
    p.add_argument("--fleet", action="store_true",
                   help="this process is one replica of many (same as RONDO_FLEET=1)")
    return p


def fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


def run_command(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.http is None:
        from .loader import load_server

        for flag in ("workers", "allowed_hosts", "allowed_origins", "redis", "worker_id"):
            if getattr(args, flag) not in (None, 1):
                return fail(f"rondo run: --{flag.replace('_', '-')} needs --http")
        load_server(args.target).run_stdio()
        return 0
    host, port = args.http
    config = RunConfig(
        target=args.target, host=host, port=port, workers=args.workers,
        allowed_hosts=args.allowed_hosts, allowed_origins=args.allowed_origins,
        root_path=args.root_path, proxy_headers=args.proxy_headers or bool(args.forwarded_allow_ips),
        forwarded_allow_ips=args.forwarded_allow_ips, log_level=args.log_level,
        redis=args.redis or os.environ.get(ENV_REDIS) or None,
        worker_id=args.worker_id, fleet=args.fleet,
    )
    return serve(config)


def serve(config: RunConfig) -> int:
    from .guard import ENV_FLEET, FleetError
    from .identity import ENV_WORKER_ID, check_worker_id
    from .worker import build

    if not is_loopback(config.host) and config.allowed_hosts is None:
        return fail(
            f"rondo run: binding {config.host} (not loopback) needs --allowed-hosts: the host "
            "names clients will use (e.g. --allowed-hosts mcp.example.com,mcp-svc), or "
            "--allowed-hosts '*' when the proxy in front checks Host"
        )
    if config.allowed_origins:
        from .front import normalize_origin

        for origin in config.allowed_origins:
            if origin != "*":
                try:
                    normalize_origin(origin)
                except ValueError as exc:
                    return fail(f"rondo run: --allowed-origins: {exc}")
    if config.worker_id is not None:
        try:
            check_worker_id(config.worker_id)
        except ValueError as exc:
            return fail(f"rondo run: {exc}")
        os.environ[ENV_WORKER_ID] = config.worker_id
    if config.fleet or config.workers > 1:
        os.environ[ENV_FLEET] = "1"
    # Load and check here, before binding: a misconfigured fleet fails before it serves.
    try:
        app, server = build(config)
    except (FleetError, ValueError, TypeError, ImportError) as exc:
        return fail(str(exc) if str(exc).startswith("rondo") else f"rondo run: {exc}")
    if config.redis:
        problem = redis_problem(config.redis)
        if problem:
            return fail(f"rondo run: --redis: {problem}")
    import uvicorn

    uv = uvicorn_options(config)
    if config.workers > 1:
        os.environ[ENV_RUN] = config.to_env()
        uv_config = uvicorn.Config("rondo.fleet.worker:app", factory=True, workers=config.workers, **uv)
    else:
        uv_config = uvicorn.Config(app, **uv)
    try:
        sock = bind(config.host, config.port)
    except OSError as exc:
        return fail(f"rondo run: cannot bind {format_host(config.host)}:{config.port}: "
                    f"{exc.strerror or exc}")
    bound_port = sock.getsockname()[1]
    print(serving_line(server.name, config, bound_port), file=sys.stderr, flush=True)
    try:
        if config.workers > 1:
            from uvicorn.supervisors import Multiprocess

            try:
                manager = Multiprocess(uv_config, sockets=[sock])
            except TypeError:  # uvicorn before 0.4x takes the worker's entry point too
                manager = Multiprocess(uv_config, target=uvicorn.Server(uv_config).run,
                                       sockets=[sock])  # type: ignore[call-arg]
            manager.run()
        else:
            uvicorn.Server(uv_config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled: a clean stop
        pass
    return 0


def redis_problem(url: str) -> str | None:
    """Why the fleet's Redis cannot be used (None if it answers PING). Never shows the URL,
    which may hold a password."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except Exception as exc:
        where = client.connection_pool.connection_kwargs
        return (f"Redis at {where.get('host', '?')}:{where.get('port', '?')} does not answer "
                f"({type(exc).__name__})")
    finally:
        client.close()
    return None


def serving_line(name: str, config: RunConfig, port: int) -> str:
    """What `rondo run` prints once bound: a URL a client on this machine can use (loopback
    is always allowed, so not 0.0.0.0), and for a wildcard bind what was bound and the names
    clients elsewhere use."""
    workers = f" ({config.workers} workers)" if config.workers > 1 else ""
    shown, where = config.host, ""
    if config.host in ("0.0.0.0", "::", ""):
        shown = "::1" if config.host == "::" else "127.0.0.1"
        names = [h for h in config.allowed_hosts or () if h != "*"]
        where = (f"; listening on all interfaces ({format_host(config.host or '0.0.0.0')}:"
                 f"{port}), clients elsewhere use " + (", ".join(names) or "any host name"))
    return (f"rondo: serving {name} at "
            f"http://{format_host(shown)}:{port}{config.root_path}/mcp{workers}{where}")


def format_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def bind(host: str, port: int) -> socket.socket:
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host = "127.0.0.1"
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def uvicorn_options(config: RunConfig) -> dict[str, Any]:
    options: dict[str, Any] = {
        "log_level": config.log_level,
        # Each request is logged at info and below (the client as the proxy headers say).
        "access_log": LOG_LEVELS.index(config.log_level) >= LOG_LEVELS.index("info"),
        "lifespan": "on",
        "proxy_headers": config.proxy_headers,
        "root_path": config.root_path,
        "server_header": False,
        "date_header": False,
        # Open SSE streams (listen, legacy GET) never end by themselves: cut them shortly
        # after a shutdown signal rather than wait forever.
        "timeout_graceful_shutdown": 2,
    }
    import copy

    from uvicorn.config import LOGGING_CONFIG

    log_config = copy.deepcopy(LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"  # stdout stays quiet
    options["log_config"] = log_config
    if config.forwarded_allow_ips:
        options["forwarded_allow_ips"] = config.forwarded_allow_ips
    try:
        import uvloop  # noqa: F401

        options["loop"] = "uvloop"
    except ImportError:
        pass
    from ..transport.serve import uvicorn_options as bounded

    options.update(bounded())  # timeouts, connection cap, header bounds (docs/limits.md)
    return options
