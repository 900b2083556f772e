"""`StatePolicy`: the server-level state boundary's configuration and its two entry points.

The server core calls `policy.open_for(ctx, token)` on every inbound `requestState` of
`tools/call`, `prompts/get` and `resources/read` before any handler runs, and
`policy.seal_for(ctx, data)` on whatever state a handler returns. Everything that can be wrong
with the configuration is found here, in `__init__`, never at request time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..wire.errors import STATE_REJECTED_MESSAGE, state_rejected
from ..wire.logs import logger
from .codec import (
    DEFAULT_LEEWAY,
    DEFAULT_TTL,
    Rejected,
    ReplayStore,
    check_leeway,
    check_principal,
    check_ttl,
    new_token_id,
    open_token,
    seal,
)
from .keys import ENV_KEYS, Keyring, keyring_from, parse_env_keys, process_keyring
from .replay import MemoryReplayStore, StoreFull

if TYPE_CHECKING:
    from .facts import RequestFacts

log = logger("rondo.state")

REJECTED_MESSAGE = STATE_REJECTED_MESSAGE

PrincipalFn = Callable[["RequestFacts"], "str | None"]


rejected = state_rejected


def anonymous(ctx: RequestFacts) -> str | None:
    """The default principal: the verified token's when `rondo.auth` authenticated the request
    (its `Principal.binding`, so a state sealed for one user never opens for another), else
    nobody. Tokens always bind method, params, audience and expiry."""
    binding = getattr(getattr(ctx, "auth", None), "binding", None)  # rondo.auth hook
    return binding if isinstance(binding, str) else None


def require_cryptography() -> None:
    try:
        import cryptography.hazmat.primitives.ciphers.aead  # noqa: F401
    except ImportError:
        raise ImportError(
            "encrypt=True needs the cryptography package: pip install 'rondo-mcp[crypto]'"
        ) from None


def check_store(store: Any) -> ReplayStore:
    if not callable(getattr(store, "consume", None)):
        raise TypeError("replay_store must have a consume(token_id, ttl) -> bool method")
    return cast("ReplayStore", store)


class StatePolicy:
    """How a server seals and opens `requestState`.

    - `keys=[(id, secret), ...]` (1 to 8, signing key first) or `secret=b"..."`; neither means a
      random per-process key, fine for one process, wrong for a fleet or across restarts.
    - `principal(ctx) -> str | None`: who the request is, from its trusted authentication
      (e.g. `ctx.auth`); default anonymous.
    - `ttl` seconds (default 300, at most 900), `encrypt` (AES-256-GCM, needs `cryptography`),
      `once` (single-use tokens, consumed in `replay_store`, default an in-memory store).
    """

    __slots__ = (
        "_keyring",
        "ephemeral",
        "ttl",
        "encrypt",
        "once",
        "leeway",
        "replay_store",
        "_principal",
        "_clock",
    )

    def __init__(
        self,
        *,
        secret: bytes | None = None,
        keys: Any = None,
        principal: PrincipalFn | None = None,
        ttl: float = DEFAULT_TTL,
        encrypt: bool = False,
        once: bool = False,
        replay_store: ReplayStore | None = None,
        leeway: float = DEFAULT_LEEWAY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ephemeral = secret is None and keys is None
        # The random per-process key is made when first needed (hashlib, OpenSSL): a stdio
        # server that never seals a state starts without it.
        self._keyring: Keyring | None = None if self.ephemeral else keyring_from(secret, keys)
        if principal is None:
            principal = anonymous
        if not callable(principal):
            raise TypeError("principal must be a callable taking the Context (or None)")
        self._principal = principal
        self.ttl = check_ttl(ttl)
        self.leeway = check_leeway(leeway)
        if not isinstance(encrypt, bool) or not isinstance(once, bool):
            raise TypeError("encrypt and once must be True or False")
        if encrypt:
            require_cryptography()
        self.encrypt = encrypt
        self.once = once
        self.replay_store = MemoryReplayStore() if replay_store is None else check_store(replay_store)
        if not callable(clock):
            raise TypeError("clock must be a callable returning unix seconds")
        self._clock = clock

    @property
    def keyring(self) -> Keyring:
        """The keys this policy seals with and opens by."""
        keyring = self._keyring
        if keyring is None:
            keyring = self._keyring = process_keyring()
        return keyring

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] = os.environ, **options: Any
    ) -> StatePolicy:
        """A policy keyed from `RONDO_STATE_KEYS` (`id1:base64url-secret,id2:...`, signing key
        first); unset or empty means a random per-process key. Other options pass through."""
        if "keys" in options or "secret" in options:
            raise TypeError("from_env reads the keys from the environment; pass other options only")
        text = environ.get(ENV_KEYS, "").strip()
        if not text:
            return cls(**options)
        return cls(keys=parse_env_keys(text), **options)

    def _principal_for(self, ctx: RequestFacts) -> str | None:
        # `principal_of` with the default `anonymous` read inline: once per seal and per open.
        if self._principal is anonymous:
            # Most requests carry no authentication: then no attribute lookup on None (which
            # makes and drops an AttributeError inside `getattr`).
            auth = getattr(ctx, "auth", None)
            if auth is None:
                return None
            binding = getattr(auth, "binding", None)
            return binding if isinstance(binding, str) else None
        principal = self._principal(ctx)
        if principal is not None and type(principal) is not str:
            check_principal(principal)  # says what is wrong with it
        return principal

    def principal_of(self, ctx: RequestFacts) -> str | None:
        """Who this request is, as the configured `principal` callable says (None: anonymous)."""
        return check_principal(self._principal(ctx))

    def seal_for(
        self, ctx: RequestFacts, data: Any, *, ttl: float | None = None, once: bool | None = None
    ) -> str:
        """Seal `data` for the retry of the request `ctx` describes. A one-time token takes a
        place in the replay store now (`StoreFull` when there is none left for this principal),
        so a full store refuses new seals, never a valid token."""
        principal = self._principal_for(ctx)  # says what is wrong with it
        ttl = self.ttl if ttl is None else check_ttl(ttl)
        once = self.once if once is None else bool(once)
        token_id = None
        if once:
            token_id = new_token_id()
            reserve = getattr(self.replay_store, "reserve", None)
            client = principal if principal is not None else _peer_client(ctx)
            if reserve is not None and not reserve(token_id, ttl + self.leeway, client):
                refusal = getattr(self.replay_store, "refusal", None)
                raise refusal(client) if refusal is not None else StoreFull()
        return seal(
            data,
            ctx.request_method,
            ctx.server_name,
            ctx.request_params,
            principal,
            self._keyring or self.keyring,
            ttl,
            self.encrypt,
            token_id,
            self._clock(),
        )

    def open_for(self, ctx: RequestFacts, token: Any) -> Any:
        """The verified data of an inbound `requestState`, or `McpError(-32602)` (fixed message,
        no data; the real reason is logged at debug level)."""
        principal = self._principal_for(ctx)
        try:
            return open_token(
                token,
                ctx.request_method,
                ctx.server_name,
                ctx.request_params,
                principal,
                self._keyring or self.keyring,
                self._clock(),
                self.leeway,
                self.replay_store,
            )
        except Rejected as exc:
            log.debug("requestState rejected on %s: %s", ctx.request_method, exc.reason)
            raise rejected() from None

    def __repr__(self) -> str:
        return (
            f"StatePolicy({self.keyring!r}, ttl={self.ttl}, encrypt={self.encrypt}, "
            f"once={self.once})"
        )


def _peer_client(ctx: Any) -> str | None:
    """Whom an anonymous one-time seal counts against: its HTTP peer's host (None: a pipe)."""
    peer = getattr(ctx, "peer", None)
    if isinstance(peer, list | tuple) and peer and isinstance(peer[0], str):
        return "\0peer:" + peer[0]  # NUL: never a principal's name
    return None
