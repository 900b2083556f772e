"""Revocation: a grant's whole family ended (its refresh tokens at once, its access tokens
within `verify_ttl`, the provider's tokens dropped and revoked there too), and `/revoke`
(RFC 7009) for a client to end one of its own tokens."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from . import records as rec
from .access_tokens import decode_access
from .errors import OAuthError
from .keys import OPAQUE, digest
from .registration import client_auth
from .upstream import UpstreamError
from .upstream_tokens import load_tokens, provider_endpoints
from .web import NO_STORE, Receive, Scope, Send, body_of, params_of, send_json

if TYPE_CHECKING:
    from .facade import Facade

log = logging.getLogger("rondo.auth.facade")


async def revoke_grant(facade: Facade, grant_id: str) -> None:
    """Revoke a family: its refresh tokens stop working at once, its access tokens within
    `verify_ttl` (their verification asks the store). The provider's tokens it kept are
    dropped, and revoked at the provider too when it has a revocation endpoint (its own
    refresh token, never one of the facade's; best effort: a failure is logged)."""
    await facade.store.put("revoked:" + grant_id, b"1", facade.refresh_ttl)
    try:
        stored = await load_tokens(facade, grant_id)
    except UpstreamError:
        return  # nothing kept (already dropped)
    await facade.store.delete("upstream:" + grant_id)
    try:
        up = await provider_endpoints(facade)
        if up.revocation_url is None:
            return
        token, hint = ((stored.refresh_token, "refresh_token") if stored.refresh_token
                       else (stored.access_token, "access_token"))
        status = await facade.upstream_http.revoke(token, hint)
        if status != 200:
            log.warning("rondo.auth.facade: the provider answered a revocation with HTTP %d", status)
    except UpstreamError as exc:
        log.warning("rondo.auth.facade: revoking at the provider failed: %s", exc.reason)


async def revoke(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
        return
    try:
        form = params_of((await body_of(receive)).decode("ascii", "replace"))
        client = await client_auth(facade, scope, form)
    except OAuthError as exc:
        await send_json(send, exc.status, exc.body(), list(NO_STORE))
        return
    token = form.get("token", "")
    grant_id: str | None = None
    if OPAQUE.fullmatch(token):
        record = rec.decode(await facade.store.get("refresh:" + digest(token)), rec.Refresh)
        if record is not None and record.client_id == client.client_id:
            grant_id = record.grant
    elif token.count(".") == 2 and len(token) < 8192:
        claims = await decode_access(facade, token, verify_exp=False)
        if claims is not None and claims.get("client_id") == client.client_id:
            grant_id = claims.get("gid")
    if isinstance(grant_id, str):
        await revoke_grant(facade, grant_id)
    await send_json(send, 200, {}, NO_STORE)  # RFC 7009 §2.2: 200 whatever the token was
