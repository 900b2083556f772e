"""`/token`: the client authenticated, then an authorization code redeemed (once, with PKCE;
a replayed code revokes what it produced) or a refresh token rotated (racing refreshes within
the grace window all get the one successor; a reuse after it revokes the family)."""

from __future__ import annotations

import hmac
import logging
import re
from typing import TYPE_CHECKING, Any

from ..urls import same_resource
from . import records as rec
from .access_tokens import token_answer
from .clients import GRANT_CODE, GRANT_REFRESH, Client
from .errors import OAuthError
from .keys import OPAQUE, digest, random_token, s256
from .registration import client_auth
from .revocation import revoke_grant
from .web import NO_STORE, Receive, Scope, Send, body_of, params_of, send_json

if TYPE_CHECKING:
    from .facade import Facade

log = logging.getLogger("rondo.auth.facade")

_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


async def token(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
        return
    try:
        form = params_of((await body_of(receive)).decode("ascii", "replace"))
        client = await client_auth(facade, scope, form)
        grant_type = form.get("grant_type")
        if grant_type == GRANT_CODE:
            answer = await _redeem_code(facade, client, form)
        elif grant_type == GRANT_REFRESH:
            answer = await _refresh(facade, client, form)
        else:
            raise OAuthError("unsupported_grant_type", "Supported: authorization_code, refresh_token")
    except OAuthError as exc:
        extra = list(NO_STORE)
        if exc.status == 401:
            extra.append((b"www-authenticate", b'Basic realm="token"'))
        await send_json(send, exc.status, exc.body(), extra)
        return
    await send_json(send, 200, answer, NO_STORE)


async def _redeem_code(facade: Facade, client: Client, form: dict[str, str]) -> dict[str, Any]:
    code = form.get("code", "")
    if not OPAQUE.fullmatch(code):
        raise OAuthError("invalid_grant", "The authorization code is invalid")
    key = digest(code)
    stored = rec.decode(await facade.store.take("code:" + key), rec.Code)
    if stored is None:
        used = await facade.store.get("code-used:" + key)
        if used is not None:  # a replayed code: what it produced is revoked (RFC 6749 §4.1.2)
            await revoke_grant(facade, used.decode())
            log.warning("rondo.auth.facade: an authorization code was replayed; its grant is revoked")
        raise OAuthError("invalid_grant", "The authorization code is invalid, used or expired")
    await facade.store.put("code-used:" + key, stored.grant.encode(), 600)
    if stored.expires_at <= facade.clock():
        raise OAuthError("invalid_grant", "The authorization code is invalid, used or expired")
    if stored.client_id != client.client_id:
        raise OAuthError("invalid_grant", "The authorization code was issued to another client")
    if form.get("redirect_uri", stored.redirect_uri) != stored.redirect_uri:
        raise OAuthError("invalid_grant", "The redirect URI does not match the authorization request")
    verifier = form.get("code_verifier", "")
    if not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(s256(verifier), stored.challenge):
        raise OAuthError("invalid_grant", "The PKCE code verifier does not match")
    resource = form.get("resource")
    if resource is not None and not same_resource(resource, stored.resource):
        raise OAuthError("invalid_target", "This server issues tokens for its own resource only")
    grant = rec.decode(await facade.store.get("grant:" + stored.grant), rec.Grant)
    if grant is None:
        raise OAuthError("invalid_grant", "The sign-in has expired")
    refresh = await _new_refresh(facade, stored.grant, client.client_id) \
        if GRANT_REFRESH in client.grant_types else None
    return await token_answer(facade, stored.grant, grant, grant.scope, refresh)


async def _new_refresh(facade: Facade, grant_id: str, client_id: str) -> str:
    token = random_token(32)
    record = rec.Refresh(grant=grant_id, client_id=client_id,
                         expires_at=facade.clock() + facade.refresh_ttl)
    await facade.store.put("refresh:" + digest(token), rec.encode(record), facade.refresh_ttl)
    return token


async def _refresh(facade: Facade, client: Client, form: dict[str, str]) -> dict[str, Any]:
    token = form.get("refresh_token", "")
    if not OPAQUE.fullmatch(token):
        raise OAuthError("invalid_grant", "The refresh token is invalid")
    key = digest(token)
    record = rec.decode(await facade.store.get("refresh:" + key), rec.Refresh)
    if record is None or record.expires_at <= facade.clock():
        raise OAuthError("invalid_grant", "The refresh token is invalid or expired")
    if record.client_id != client.client_id:
        raise OAuthError("invalid_grant", "The refresh token was issued to another client")
    if await facade.store.get("revoked:" + record.grant) is not None:
        raise OAuthError("invalid_grant", "The refresh token has been revoked")
    grant = rec.decode(await facade.store.get("grant:" + record.grant), rec.Grant)
    if grant is None:
        raise OAuthError("invalid_grant", "The sign-in has expired")
    resource = form.get("resource")
    if resource is not None and not same_resource(resource, grant.resource):
        raise OAuthError("invalid_target", "This server issues tokens for its own resource only")
    scope_text = grant.scope
    asked = form.get("scope")
    if asked is not None:
        if not set(asked.split()) <= set(grant.scope.split()):
            raise OAuthError("invalid_scope", "A refresh cannot widen the granted scopes")
        scope_text = " ".join(dict.fromkeys(asked.split()))
    now = facade.clock()
    rotated = await facade.store.get("rotated:" + key)
    if rotated is None:
        # Write the successor first, then claim the rotation: of racing refreshes exactly
        # one claim wins, and every loser answers with the winner's successor.
        successor = await _new_refresh(facade, record.grant, client.client_id)
        claim = rec.Rotation(successor=facade.keys.seal(successor.encode(), "rotated|" + key).hex(),
                             at=now)
        rotated = await facade.store.add("rotated:" + key, rec.encode(claim), facade.refresh_ttl)
        if rotated is None:
            await _extend(facade, record.grant, grant)  # the family lives as long as its newest token
            return await token_answer(facade, record.grant, grant, scope_text, successor)
        await facade.store.delete("refresh:" + digest(successor))
    won = rec.decode(rotated, rec.Rotation)
    if won is not None and now - won.at <= facade.grace:
        opened = facade.keys.open(bytes.fromhex(won.successor), "rotated|" + key)
        if opened is not None:
            return await token_answer(facade, record.grant, grant, scope_text, opened.decode())
    # Presented again after the grace window: someone holds a copy. Revoke the family.
    await revoke_grant(facade, record.grant)
    log.warning("rondo.auth.facade: a rotated refresh token was reused after the grace "
                "window; its family is revoked")
    raise OAuthError("invalid_grant", "The refresh token was already used")


async def _extend(facade: Facade, grant_id: str, grant: rec.Grant) -> None:
    await facade.store.put("grant:" + grant_id, rec.encode(grant), facade.refresh_ttl)
    sealed = await facade.store.get("upstream:" + grant_id)
    if sealed is not None:
        await facade.store.put("upstream:" + grant_id, sealed, facade.refresh_ttl)
