"""Is this process one replica of many, and may it run as one? (`rondo.fleet` builds on this.)

A worker is a replica when `rondo run --workers N` starts it with N > 1, or when
`RONDO_FLEET=1` says so (one process per container, many containers). A replica whose server has
interactive components and no shared keys would seal request state that no other worker can
open: every multi-round flow would break as soon as a round lands elsewhere. So it refuses to
start, with a message naming the fix. One process keeps the warning the HTTP transport logs.

A worker's name (`RONDO_WORKER_ID`, `rondo run --worker-id`) starts its legacy (2025-11-25)
session ids (`w1.`), so a proxy can pin a session to the worker that opened it by matching the
prefix: the session id does not exist yet when `initialize` is routed, so no hash of it can
lead back to that worker.

It lives in `server/` because the HTTP transport and legacy sessions use it.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..state.keys import ENV_KEYS

if TYPE_CHECKING:
    from ..server.server import Server

ENV_FLEET = "RONDO_FLEET"
_TRUE = ("1", "true", "yes", "on")
# Return annotations that cannot be an InputRequired: such a handler without a Context is plain.
_PLAIN_RETURNS = ("str", "int", "float", "bool", "bytes", "dict", "list", "None")


class FleetError(RuntimeError):
    """A fleet configuration that would break multi-round flows; raised before serving."""


def is_replica(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(ENV_FLEET, "").strip().lower() in _TRUE


def _interactive(fn: Any, context_param: str | None) -> bool:
    if context_param is not None:
        return True  # ctx.ask, or state read from ctx
    try:
        returns = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return True
    if returns is inspect.Signature.empty:
        return True
    text = returns if isinstance(returns, str) else getattr(returns, "__name__", repr(returns))
    head = text.split("[", 1)[0].strip()
    return "InputRequired" in text or head not in _PLAIN_RETURNS


def interactive_components(server: Server) -> list[str]:
    """Components that may answer `input_required` (they take a Context, or may return
    `InputRequired` by their annotation; no annotation counts as may)."""
    found: list[str] = []
    for name, tool in server.tools.items():
        if _interactive(tool.fn, tool.signature.context_param):
            found.append(f"tool {name}")
    for name, prompt in server.prompts.items():
        if _interactive(prompt.fn, prompt.signature.context_param):
            found.append(f"prompt {name}")
    for uri, resource in (*server.resources.items(), *server.templates.items()):
        if _interactive(resource.fn, resource.signature.context_param):
            found.append(f"resource {uri}")
    return found


def check_fleet(server: Server, workers: int = 1, environ: Mapping[str, str] = os.environ) -> None:
    """Raise `FleetError` if this server may not run as a fleet member as configured."""
    if workers <= 1 and not is_replica(environ):
        return
    what = f"{workers} workers" if workers > 1 else f"a replica ({ENV_FLEET}=1)"
    server.settle()  # a tool option's default extension answers for itself below
    for extension in server.extensions.values():
        # An extension that keeps data per process says why it cannot be one of many.
        problem = getattr(extension, "fleet_problem", None)
        reason = problem(server) if problem is not None else None
        if reason:
            raise FleetError(f"rondo: refusing to start {server.name!r} as {what}: {reason}")
    policy = server.state_policy
    if policy is None:
        return  # state=None: the server handles raw requestState itself
    if policy.ephemeral:
        interactive = interactive_components(server)
        if interactive:
            shown = ", ".join(interactive[:4]) + (", ..." if len(interactive) > 4 else "")
            raise FleetError(
                f"rondo: refusing to start {server.name!r} as {what} with a random per-process "
                f"state key: {shown} may answer input_required, and its requestState would not "
                f"open on another worker. Set {ENV_KEYS} to the same value on every worker "
                "(generate one with: python -m rondo.state), or run one worker."
            )
    if policy.once:
        from ..state.replay import MemoryReplayStore

        if isinstance(policy.replay_store, MemoryReplayStore):
            raise FleetError(
                f"rondo: refusing to start {server.name!r} as {what}: its StatePolicy has "
                "once=True with an in-memory replay store, so a one-time requestState could be "
                "replayed on another worker. Use RedisReplayStore (or rondo run --redis URL)."
            )


# -- worker ids ---------------------------------------------------------------------------------

ENV_WORKER_ID = "RONDO_WORKER_ID"
_WORKER_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def check_worker_id(value: str) -> str:
    if not _WORKER_ID.fullmatch(value):
        raise ValueError(
            f"worker id {value!r} must be 1 to 32 characters from A-Z a-z 0-9 _ - "
            f"(--worker-id / {ENV_WORKER_ID})"
        )
    return value


def worker_id(environ: Mapping[str, str] = os.environ) -> str | None:
    value = environ.get(ENV_WORKER_ID, "").strip()
    return check_worker_id(value) if value else None


def session_prefix(environ: Mapping[str, str] = os.environ) -> str:
    """What legacy session ids of this worker start with ("" outside a named fleet)."""
    value = worker_id(environ)
    return f"{value}." if value else ""
