"""Build the ASGI app of one worker from a `RunConfig` (in-process, or in a spawned worker).

`app()` is the import-string factory uvicorn's process manager calls in each spawned worker
(`rondo.fleet.worker:app`); it reads the configuration from `RONDO_RUN`.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..server.server import Server
    from .run import RunConfig


def build(config: RunConfig) -> tuple[Any, Server]:
    from ..transport.http import HttpApp
    from .front import Front
    from .identity import worker_id
    from .loader import load_server

    logging.getLogger("rondo").setLevel(config.log_level.upper() if config.log_level != "trace"
                                        else "DEBUG")
    server = load_server(config.target)
    if config.redis:
        connect_redis(server, config.redis)
    from .guard import check_fleet

    check_fleet(server, config.workers)
    inner = HttpApp(server, allowed_hosts=None, **config.extra)
    # --allowed-hosts adds names to the loopback ones (a client on the machine itself is no
    # DNS-rebinding risk); "*" turns the check off.
    hosts = config.allowed_hosts
    allowed = _loopback() if not hosts else hosts if "*" in hosts else [*_loopback(), *hosts]
    front = Front(inner, server, allowed_hosts=allowed,
                  allowed_origins=config.allowed_origins, worker=worker_id())
    return front, server


def connect_redis(server: Server, url: str) -> None:
    """One Redis for the fleet: the change bus, one-time state where it was in memory, any
    extension with a `use_redis(url)` hook (tasks', per-user state's memory stores), and the
    authorization facade's store when it was in memory."""
    from ..state.replay import MemoryReplayStore, RedisReplayStore
    from .bus import use_bus
    from .redis_bus import RedisBus

    policy = server.state_policy
    if policy is not None and isinstance(policy.replay_store, MemoryReplayStore):
        policy.replay_store = RedisReplayStore(url=url)
    server.settle()  # a tool option's default extension moves to Redis below
    use_bus(server, RedisBus(url=url, channel=f"rondo:changes:{server.name}"))
    for extension in server.extensions.values():
        use_redis = getattr(extension, "use_redis", None)  # e.g. per-user state's memory store
        if use_redis is not None:
            use_redis(url)
    # The authorization facade (ResourceServer(endpoints=...)) keeps its memory store no more.
    endpoints = getattr(server.auth, "endpoints", None)
    use_redis = getattr(endpoints, "use_redis", None)
    if use_redis is not None:
        use_redis(url)


def _loopback() -> list[str]:
    from ..transport.http import LOOPBACK_HOSTS

    return list(LOOPBACK_HOSTS)


def app() -> Any:
    from .run import ENV_RUN, RunConfig

    front, _server = build(RunConfig.from_env(os.environ[ENV_RUN]))
    return front
