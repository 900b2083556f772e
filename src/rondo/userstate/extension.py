"""`UserState`: per-user state installed on a server as an extension with no wire of its own
(no methods, nothing advertised); handlers reach it as `ctx.user_state`.

Scope rules: a view's keys live under a digest of the caller's verified principal (and, with
`scope="client"`, of the client acting for it), so no caller can name another's keys. A request
with no verified principal gets `NoPrincipal` unless `anonymous="shared"` says every anonymous
caller shares one space (a single-user stdio server, say).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .errors import NoPrincipal
from .store import MemoryStore, UserStateStore
from .view import UserStateView

if TYPE_CHECKING:
    from ..server.method import Method
    from ..server.server import Server

NAME = "dev.rondo/user-state"
_OPS = ("get", "set", "delete", "cas", "take", "get_sync", "set_sync", "delete_sync", "cas_sync",
        "take_sync")


_SCOPE_CACHE = 4096


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


class UserState:
    """Per-user state for one server: `server.extension(UserState(store=...))`.

    - `store`: a `UserStateStore` (default `MemoryStore()`; `FileStore(path)`, `RedisStore(url)`;
      `rondo run --redis URL` replaces a memory store with a `RedisStore` on that URL).
    - `scope`: `"principal"` (default: one space per verified user) or `"client"` (one per user
      and client: the token's `client_id`, else the client's self-declared name).
    - `anonymous`: `"refuse"` (default) or `"shared"`.
    - `principal(ctx)`: who the caller is; default the server's `StatePolicy.principal_of`
      (the verified token's principal under `rondo.auth`).
    - `max_key_bytes`, `max_value_bytes`: bounds on one key and one encoded value;
      `default_ttl`: seconds a value lives when `set` names no ttl (None: until deleted).
    """

    name = NAME

    def __init__(
        self,
        store: UserStateStore | None = None,
        *,
        scope: str = "principal",
        anonymous: str = "refuse",
        principal: Callable[[Any], str | None] | None = None,
        max_key_bytes: int = 256,
        max_value_bytes: int = 64 * 1024,
        default_ttl: float | None = None,
    ) -> None:
        store = MemoryStore() if store is None else store
        for op in _OPS:
            if not callable(getattr(store, op, None)):
                raise TypeError(f"store must be a UserStateStore (it has no {op}())")
        if scope not in ("principal", "client"):
            raise ValueError("scope must be 'principal' or 'client'")
        if anonymous not in ("refuse", "shared"):
            raise ValueError("anonymous must be 'refuse' or 'shared'")
        for label, bound in (("max_key_bytes", max_key_bytes), ("max_value_bytes", max_value_bytes)):
            if not isinstance(bound, int) or isinstance(bound, bool) or bound < 1:
                raise ValueError(f"{label} must be a positive integer")
        if default_ttl is not None and not default_ttl > 0:
            raise ValueError("default_ttl must be positive seconds or None")
        if principal is not None and not callable(principal):
            raise TypeError("principal must be a callable taking the Context")
        self.store: UserStateStore = store
        self.scope = scope
        self.anonymous = anonymous
        self.max_key_bytes = max_key_bytes
        self.max_value_bytes = max_value_bytes
        self.default_ttl = default_ttl
        self._principal = principal
        self._scopes: dict[tuple[str, str], str] = {}  # (principal, client) -> key prefix
        self._members: dict[str, UserState] = {}  # mounted children's, joined (fleet hooks)

    # -- the Extension protocol: nothing on the wire -------------------------------------------

    def methods(self) -> Iterable[Method]:
        return ()

    def capability(self, server: Server) -> None:
        return None

    # -- mounted (rondo.gateway.mount): each server keeps its own store -------------------------

    def hub(self) -> UserState:
        """A parent without per-user state serves a mounted child's with the child's instance;
        a mounted component's `ctx.user_state` always reaches its own server's (the mount routes
        context calls), so joining only makes the fleet hooks reach every store."""
        return self

    def join(self, namespace: str, member: Any) -> None:
        if member is not self:
            self._members[namespace] = member

    def leave(self, namespace: str) -> None:
        self._members.pop(namespace, None)

    # -- fleet hooks (rondo.fleet) -------------------------------------------------------------

    def fleet_problem(self, server: Server) -> str | None:
        """Why this cannot run as one of several workers (None: it can)."""
        for each in (self, *self._members.values()):
            if not getattr(each.store, "shared", False):
                return (f"its per-user state store ({type(each.store).__name__}) lives in one "
                        "process, so a value written on one worker would be missing on the "
                        "others. Use RedisStore (or rondo run --redis URL), or run one worker.")
        return None

    def use_redis(self, url: str) -> None:
        """`rondo run --redis URL`: a memory store becomes a Redis store on the fleet's Redis."""
        if isinstance(self.store, MemoryStore):
            from .redis_store import RedisStore

            self.store = RedisStore(url)
        for member in list(self._members.values()):
            member.use_redis(url)

    # -- views ---------------------------------------------------------------------------------

    def principal_of(self, ctx: Any) -> str | None:
        if self._principal is not None:
            return self._principal(ctx)
        # A configured StatePolicy says who the caller is; otherwise (state=None, or the default
        # policy not made yet) it is the verified token's binding, as the default policy's is.
        configured = getattr(ctx.server._state_policy, "principal_of", None)
        if configured is not None:
            result: str | None = configured(ctx)
            return result
        binding = getattr(ctx.auth, "binding", None)
        return binding if isinstance(binding, str) else None

    def context_calls(self) -> dict[str, Callable[..., Any]]:
        """What `ctx.user_state` calls (`Server.extension` files it under `context_calls`)."""
        return {"user_state": self.view}

    def view(self, ctx: Any) -> UserStateView:
        """The caller's view, or `NoPrincipal` for an anonymous caller under `"refuse"`."""
        who = self.principal_of(ctx)
        if who is None:
            if self.anonymous == "refuse":
                raise NoPrincipal("per-user state needs an authenticated caller; this request "
                                  "has no verified principal")
            who = ""
        client = ""
        if self.scope == "client":
            auth = getattr(ctx, "auth", None)
            client = getattr(auth, "client_id", None) or (ctx.client_info or {}).get("name") or ""
        scope = self._scopes.get((who, client))
        if scope is None:
            if len(self._scopes) >= _SCOPE_CACHE:
                self._scopes.clear()
            scope = self._scopes[(who, client)] = f"{'a' if who == '' else 'p'}{_digest(who, client)}:"
        return UserStateView(self, scope)
