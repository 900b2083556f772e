"""Sealed request state: what a server hands out as `requestState` and trusts on the retry.

`seal(data, ctx, ...)` binds `data` to the request `ctx` describes (method, salient params,
principal, server name) and to an expiry; `open(token, ctx, ...)` gives the data back only when
every binding holds, and otherwise raises the one -32602 error. `StatePolicy` carries the same
options for the server-level boundary. See docs/state.md.
"""

from __future__ import annotations

import time
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..wire.logs import logger
from .codec import (
    DEFAULT_LEEWAY,
    DEFAULT_TTL,
    MAX_TOKEN_CHARS,
    MAX_TTL,
    UNBOUND_PARAMS,
    Rejected,
    ReplayStore,
    check_leeway,
    check_principal,
    check_ttl,
    open_token,
    seal_token,
)
from .keys import ENV_KEYS, Keyring, keyring_from, new_secret_text, parse_env_keys
from .policy import REJECTED_MESSAGE, StatePolicy, rejected, require_cryptography
from .replay import MemoryReplayStore, RedisReplayStore

if TYPE_CHECKING:
    from .facts import RequestFacts

__all__ = [
    "DEFAULT_TTL",
    "ENV_KEYS",
    "MAX_TOKEN_CHARS",
    "MAX_TTL",
    "REJECTED_MESSAGE",
    "UNBOUND_PARAMS",
    "Keyring",
    "MemoryReplayStore",
    "RedisReplayStore",
    "ReplayStore",
    "StatePolicy",
    "new_secret_text",
    "open",
    "parse_env_keys",
    "seal",
]

log = logger("rondo.state")

# Keyrings built from per-call `secret=`/`keys=` are cached: validating and precomputing a key
# on every call would cost more than sealing. Bounded; entries are the caller's own secrets.
_KEYRING_CACHE_SIZE = 16
_keyrings: dict[Any, Keyring] = {}
_default_store: MemoryReplayStore | None = None
_lock = allocate_lock()


def _keyring(secret: Any, keys: Any) -> Keyring:
    if isinstance(keys, Keyring) and secret is None:
        return keys
    cache_key: Any = None
    if keys is None and isinstance(secret, bytes):
        cache_key = ("secret", secret)
    elif secret is None and isinstance(keys, (list, tuple)):
        try:
            cache_key = ("keys", tuple(keys))
            hash(cache_key)
        except TypeError:
            try:  # pairs given as lists
                cache_key = ("keys", tuple(map(tuple, keys)))
                hash(cache_key)
            except TypeError:
                cache_key = None  # unhashable or malformed: let Keyring say what is wrong
    if cache_key is not None:
        found = _keyrings.get(cache_key)
        if found is not None:
            return found
    built = keyring_from(secret, keys)
    if cache_key is not None:
        with _lock:
            if len(_keyrings) >= _KEYRING_CACHE_SIZE:
                _keyrings.clear()
            _keyrings[cache_key] = built
    return built


def _memory_store() -> MemoryReplayStore:
    global _default_store
    with _lock:
        if _default_store is None:
            _default_store = MemoryReplayStore()
        return _default_store


def seal(
    data: Any,
    ctx: RequestFacts,
    *,
    secret: bytes | None = None,
    keys: Any = None,
    principal: str | None,
    ttl: float = DEFAULT_TTL,
    encrypt: bool = False,
    once: bool = False,
    clock: Callable[[], float] | None = None,
) -> str:
    """Seal JSON `data` for the retry of the request `ctx` describes.

    `principal` is required (None means anonymous, explicitly). Exactly one of `secret`
    (>= 32 bytes) and `keys` (`[(id, secret), ...]`, signing key first). `ttl` is at most
    900 s. `encrypt=True` uses AES-256-GCM; `once=True` makes the token single-use.
    """
    keyring = _keyring(secret, keys)
    check_principal(principal)
    ttl = check_ttl(ttl)
    if encrypt:
        require_cryptography()
    return seal_token(
        data,
        ctx.request_method,
        ctx.server_name,
        ctx.request_params,
        principal,
        keyring,
        ttl=ttl,
        encrypt=bool(encrypt),
        once=bool(once),
        now=(clock or time.time)(),
    )


def open(  # noqa: A001 - the pair is seal/open by design
    token: Any,
    ctx: RequestFacts,
    *,
    secret: bytes | None = None,
    keys: Any = None,
    principal: str | None,
    replay_store: ReplayStore | None = None,
    leeway: float = DEFAULT_LEEWAY,
    clock: Callable[[], float] | None = None,
) -> Any:
    """The data sealed in `token`, if it was sealed for this request, principal and server and
    has not expired (or been used, for one-time tokens). Any failure raises
    `McpError(-32602)` with one fixed message; the reason is logged at debug level.
    """
    keyring = _keyring(secret, keys)
    check_principal(principal)
    leeway = check_leeway(leeway)
    try:
        return open_token(
            token,
            ctx.request_method,
            ctx.server_name,
            ctx.request_params,
            principal,
            keyring,
            now=(clock or time.time)(),
            leeway=leeway,
            replay_store=replay_store if replay_store is not None else _memory_store(),
        )
    except Rejected as exc:
        log.debug("requestState rejected on %s: %s", ctx.request_method, exc.reason)
        raise rejected() from None
