"""The provider's side of a sign-in, kept per grant: its endpoints (discovered once, on first
need), its tokens sealed in the store, and handing them to tools (`Facade.upstream_tokens`),
refreshed at the provider once across every worker sharing the store."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from . import records as rec
from .clients import GRANT_REFRESH
from .upstream import Upstream, UpstreamError, UpstreamTokens
from .upstream_http import UpstreamRefused

if TYPE_CHECKING:
    from .facade import Facade

log = logging.getLogger("rondo.auth.facade")


async def provider_endpoints(facade: Facade) -> Upstream:
    """The provider's declaration with its endpoints, discovered (OIDC or RFC 8414) the first
    time this worker needs them."""
    if not facade.discovered:
        try:
            doc = await facade.upstream_http.discover()
        except UpstreamError as exc:
            log.warning("rondo.auth.facade: provider discovery failed: %s", exc.reason)
            raise
        facade.upstream = facade.upstream.with_endpoints(doc)
        facade.upstream_http.upstream = facade.upstream
        facade.discovered = True
    return facade.upstream


async def keep_tokens(facade: Facade, grant_id: str, tokens: UpstreamTokens) -> None:
    """The provider's tokens for a grant, sealed with the secret, kept as long as the grant."""
    stored = rec.StoredTokens(access_token=tokens.access_token, token_type=tokens.token_type,
                              refresh_token=tokens.refresh_token, expires_at=tokens.expires_at,
                              id_token=tokens.id_token, scope=tokens.scope)
    sealed = facade.keys.seal(rec.encode(stored), "upstream|" + grant_id)
    await facade.store.put("upstream:" + grant_id, sealed, facade.refresh_ttl)


async def upstream_tokens(facade: Facade, principal: Any) -> UpstreamTokens:
    """The provider's tokens for the user behind `principal` (a facade-verified
    `ctx.auth`), refreshed at the provider first when the access token is about to expire.
    Use them for the provider's own APIs; never send the client's token anywhere."""
    grant_id = principal.claims.get("gid") if principal is not None else None
    if not isinstance(grant_id, str):
        raise UpstreamError("this request was not authorized by the facade")
    stored = await load_tokens(facade, grant_id)
    if _fresh(stored, facade.clock()) or stored.refresh_token is None:
        return _public(stored)
    lock = facade.refreshing.setdefault(grant_id, asyncio.Lock())
    try:
        async with lock:  # one refresh per grant in this process ...
            stored = await load_tokens(facade, grant_id)  # another call may have refreshed it
            if _fresh(stored, facade.clock()) or stored.refresh_token is None:
                return _public(stored)
            return await _refresh_once(facade, grant_id)
    finally:
        if not lock.locked():
            facade.refreshing.pop(grant_id, None)


async def _refresh_once(facade: Facade, grant_id: str) -> UpstreamTokens:
    """... and one across the workers sharing the store: a claim on the grant (held at most
    the provider's timeout); the others wait for the new tokens instead of spending the
    provider's refresh token a second time (a rotating provider would refuse it)."""
    claim = "upstream-refresh:" + grant_id
    hold = facade.upstream.timeout + 5
    loop = asyncio.get_running_loop()
    give_up = loop.time() + hold
    while await facade.store.add(claim, b"1", hold) is not None:
        await asyncio.sleep(0.05)
        stored = await load_tokens(facade, grant_id)
        if _fresh(stored, facade.clock()) or stored.refresh_token is None:
            return _public(stored)
        if loop.time() > give_up:
            break  # the holder died: refresh anyway
    try:
        stored = await load_tokens(facade, grant_id)
        if _fresh(stored, facade.clock()) or stored.refresh_token is None:
            return _public(stored)
        await provider_endpoints(facade)
        try:
            tokens = await facade.upstream_http.token({"grant_type": GRANT_REFRESH,
                                                     "refresh_token": stored.refresh_token})
        except UpstreamRefused as exc:
            log.warning("rondo.auth.facade: the provider refused a refresh (%s)", exc.code)
            raise
        if tokens.refresh_token is None:  # the provider kept the refresh token
            tokens = UpstreamTokens(**{**_fields(tokens), "refresh_token": stored.refresh_token})
        await keep_tokens(facade, grant_id, tokens)
        return tokens
    finally:
        await facade.store.delete(claim)


async def upstream_token(facade: Facade, principal: Any) -> str:
    """The provider's access token for this request's user (see `upstream_tokens`)."""
    return (await upstream_tokens(facade, principal)).access_token


async def load_tokens(facade: Facade, grant_id: str) -> rec.StoredTokens:
    """The provider's tokens kept for a grant; `UpstreamError` when there are none."""
    sealed = await facade.store.get("upstream:" + grant_id)
    opened = None if sealed is None else facade.keys.open(sealed, "upstream|" + grant_id)
    stored = rec.decode(opened, rec.StoredTokens)
    if stored is None:
        raise UpstreamError("no provider tokens are kept for this sign-in")
    return stored  # type: ignore[no-any-return]


def _fresh(stored: rec.StoredTokens, now: float) -> bool:
    return stored.expires_at is None or stored.expires_at - 30 > now


def _public(stored: rec.StoredTokens) -> UpstreamTokens:
    return UpstreamTokens(access_token=stored.access_token, token_type=stored.token_type,
                          refresh_token=stored.refresh_token, expires_at=stored.expires_at,
                          id_token=stored.id_token, scope=stored.scope)


def _fields(tokens: UpstreamTokens) -> dict[str, Any]:
    return {"access_token": tokens.access_token, "token_type": tokens.token_type,
            "refresh_token": tokens.refresh_token, "expires_at": tokens.expires_at,
            "id_token": tokens.id_token, "scope": tokens.scope, "raw": tokens.raw}
