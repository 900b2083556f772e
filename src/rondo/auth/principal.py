"""`Principal`: who a verified access token speaks for, as handlers see it in `ctx.auth`.

This module is light on purpose (no JOSE import): the state policy reaches for it to bind
request state to the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any


class Principal:
    """The verified claims of the request's access token (never the token itself).

    `subject` (`sub`), `client_id` (`client_id` or `azp`), `scopes` (granted, from `scope` or
    `scp`), `issuer` (`iss`), `expires_at` (`exp`, unix seconds or None), `claims` (all of
    them, read-only). `binding` is the string request state, sessions and tasks are bound to.
    """

    __slots__ = ("subject", "client_id", "scopes", "issuer", "expires_at", "claims", "binding",
                 "_effective", "_token")

    def __init__(
        self,
        *,
        subject: str | None,
        client_id: str | None,
        scopes: frozenset[str],
        issuer: str | None,
        expires_at: float | None,
        claims: Mapping[str, Any],
    ) -> None:
        self.subject = subject
        self.client_id = client_id
        self.scopes = scopes
        self.issuer = issuer
        self.expires_at = expires_at
        self.claims: Mapping[str, Any] = _ReadOnly(claims)
        # The user if there is one, else the client acting for itself (client_credentials);
        # qualified by the issuer so two authorization servers' "alice" never collide.
        who = f"sub:{subject}" if subject else f"client:{client_id or ''}"
        self.binding = f"{issuer or ''} {who}"
        self._effective: frozenset[str] = frozenset(scopes)
        # The bearer token this principal was verified from (set by `ResourceServer`), kept for
        # RFC 8693 exchange only: no attribute, repr or error shows it (`bearer_of`).
        self._token: str | None = None

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any]) -> Principal:
        sub = claims.get("sub")
        client = claims.get("client_id", claims.get("azp"))
        iss = claims.get("iss")
        exp = claims.get("exp")
        return cls(
            subject=sub if isinstance(sub, str) and sub else None,
            client_id=client if isinstance(client, str) and client else None,
            scopes=scopes_of(claims),
            issuer=iss if isinstance(iss, str) else None,
            expires_at=float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None,
            claims=claims,
        )

    def widen_scopes(self, expand: Callable[[frozenset[str]], frozenset[str]]) -> None:
        """What the token grants, with the resource server's scope hierarchy applied (once,
        when the token is verified)."""
        self._effective = expand(self._effective)

    def hold_token(self, token: str) -> None:
        """Remember the bearer token this principal was verified from (`ResourceServer` does,
        once); only `bearer_of` reads it back, for token exchange."""
        self._token = token

    def has_scopes(self, needed: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
        """True if the token grants every scope in `needed` (scope hierarchy applied)."""
        return self._effective.issuperset(needed)

    def missing(self, needed: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(s for s in needed if s not in self._effective)

    def __repr__(self) -> str:
        return f"Principal(subject={self.subject!r}, client_id={self.client_id!r}, scopes={sorted(self.scopes)!r})"


class _ReadOnly(dict[str, Any]):
    """The claims as a dict (JSON-encodable, `dict(...)`-able) that refuses to change: one
    handler cannot alter what the next one, or the state binding, sees."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("verified claims are read-only")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """Granted scopes: RFC 9068 `scope` (space-separated) or `scp` (a list or a string)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(s for s in value if isinstance(s, str) and s)
    return frozenset()


def principal_of(ctx: Any) -> str | None:
    """The verified caller's binding string for this request, or None when unauthenticated.

    Request state is bound to it automatically; it is also the seam for anything else that must
    belong to one caller (tasks, when rondo has them: bind each task to `principal_of(ctx)` and
    refuse `tasks/*` from another).
    """
    auth = getattr(ctx, "auth", None)
    return auth.binding if isinstance(auth, Principal) else None


# The principal an outbound call is made for: `rondo.proxy` sets it while it relays a request,
# so an upstream's `httpx.Auth` (`TokenExchange.upstream_auth`) knows whose token to exchange.
CALLER: ContextVar[Principal | None] = ContextVar("rondo_auth_caller", default=None)


def bearer_of(principal: Principal) -> str | None:
    """The bearer token `principal` was verified from (None: not verified from one). For
    `rondo.auth.TokenExchange`, which sends it to the STS as `subject_token`; never send it
    anywhere else (the spec forbids passing a client's token on)."""
    return principal._token
