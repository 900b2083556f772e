"""`serve()`: an `HttpApp` under uvicorn, bounded.

The pieces coupled to uvicorn live here, apart from the ASGI app (`rondo.transport.http`), which
runs under any ASGI server: the connection limits (`limits.py`), one socket write per
fixed-length answer (`coalesce.py`) and the task-free start of a request that never waits
(`eager.py`), the last two only under the httptools protocol `limits.py` builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .limits import HttpLimits, uvicorn_options

if TYPE_CHECKING:
    from ...server.server import Server

__all__ = ["SERVE_OPTIONS", "HttpLimits", "serve", "uvicorn_options"]


def _is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1", "[::1]") or host.startswith("127.")


# The uvicorn options `serve()` always sets: no access log, no proxy-header rewriting, no
# `server` or `date` header (benchmarks/inprocess.py builds the same protocol from them).
SERVE_OPTIONS: dict[str, Any] = {"access_log": False, "proxy_headers": False,
                                 "server_header": False, "date_header": False}


def serve(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    limits: HttpLimits | None = None,
    **options: Any,
) -> None:
    """Serve with uvicorn (uvloop and httptools when installed), bounded by `limits`
    (`rondo.transport.serve.HttpLimits`; docs/limits.md)."""
    import uvicorn

    from ..http.app import HttpApp

    limits = limits or HttpLimits()  # checked now: a bad limit fails at start-up

    if "allowed_hosts" not in options and not _is_loopback(host):
        # A public bind has public host names we cannot guess; the caller must name them.
        raise ValueError(
            f"binding {host!r} needs allowed_hosts=[...] (your public host names) or "
            "allowed_hosts=None to turn off DNS-rebinding protection"
        )
    app = HttpApp(server, **options)
    config: dict[str, Any] = {"host": host, "port": port, "log_level": log_level,
                              "lifespan": "on", **SERVE_OPTIONS,
                              # Open SSE streams (legacy GET streams, listen) never end on their
                              # own: cancel them shortly after a shutdown signal instead of waiting.
                              "timeout_graceful_shutdown": 2}
    try:
        import uvloop  # noqa: F401

        config["loop"] = "uvloop"
    except ImportError:
        pass
    config.update(uvicorn_options(limits))  # timeouts, connection cap, header bounds
    uvicorn.run(app, **config)
