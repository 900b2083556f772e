"""`/callback`: back from the provider's sign-in. The flow is found by its `state` and must
come back to the browser that consented; the provider's code is redeemed, the user's identity
read, and the client gets the facade's own authorization code (a grant records the sign-in)."""

from __future__ import annotations

import base64
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from . import records as rec
from .clients import GRANT_CODE
from .keys import OPAQUE, digest, random_token
from .upstream import Identity, UpstreamError, userinfo_identity
from .upstream_tokens import keep_tokens, provider_endpoints
from .web import (
    Receive,
    Scope,
    Send,
    cookie,
    cookies_of,
    query_of,
    send_error_page,
    send_redirect,
    with_query,
)

if TYPE_CHECKING:
    from .facade import Facade

log = logging.getLogger("rondo.auth.facade")


async def callback(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    q = query_of(scope)
    state = q.get("state", "")
    if not OPAQUE.fullmatch(state):
        await send_error_page(send, "This sign-in is unknown or has expired.")
        return
    flow = rec.decode(await facade.store.take("flow:" + state), rec.Flow)
    bound = cookies_of(scope).get(facade.cookie_prefix + "flow", "")
    if flow is None or not facade.keys.mac_ok("flow|" + state, bound):
        # Unknown, used, expired, or finished in another browser than the one that consented.
        await send_error_page(send, "This sign-in is unknown, has expired, or was started "
                                    "in another browser.")
        return

    async def refuse(error: str, text: str) -> None:
        await send_redirect(send, with_query(flow.redirect_uri, {
            "error": error, "error_description": text, "state": flow.state, "iss": facade.issuer}))

    if "error" in q or "code" not in q:
        upstream_error = q.get("error")
        error = upstream_error if upstream_error in ("access_denied", "temporarily_unavailable") else "access_denied"
        await refuse(error, "The identity provider did not sign you in")
        return
    form = {"grant_type": GRANT_CODE, "code": q["code"], "redirect_uri": facade.callback_url}
    try:
        up = await provider_endpoints(facade)  # this worker may not have discovered them yet
        if up.pkce:
            form["code_verifier"] = flow.upstream_verifier
        tokens = await facade.upstream_http.token(form)
        if flow.nonce is not None:
            tokens = dataclasses.replace(tokens, nonce=flow.nonce)
        reader = up.identity or userinfo_identity
        identity = await reader(facade.upstream_http, tokens, up)
        if not isinstance(identity, Identity) or not isinstance(identity.subject, str) or not identity.subject:
            raise UpstreamError("the identity reader returned no subject")
    except UpstreamError as exc:
        log.warning("rondo.auth.facade: sign-in at the provider failed: %s", exc.reason)
        await refuse("temporarily_unavailable", "The identity provider could not be reached")
        return
    now = facade.clock()
    grant_id = random_token(24)
    grant = rec.Grant(subject=identity.subject, client_id=flow.client_id, scope=flow.scope,
                      resource=flow.resource, identity=_plain(identity.claims), created=now)
    await facade.store.put("grant:" + grant_id, rec.encode(grant), facade.refresh_ttl)
    await keep_tokens(facade, grant_id, tokens)
    code = random_token(32)
    stored = rec.Code(client_id=flow.client_id, redirect_uri=flow.redirect_uri,
                      challenge=flow.challenge, resource=flow.resource, scope=flow.scope,
                      grant=grant_id, expires_at=now + facade.code_ttl)
    await facade.store.put("code:" + digest(code), rec.encode(stored), facade.code_ttl)
    extra = []
    if facade.remember_consent:
        await facade.store.put(f"consent:{digest(identity.subject)}:{flow.client_id}", b"1",
                               facade.consent_ttl)
        who = base64.urlsafe_b64encode(identity.subject.encode()).rstrip(b"=").decode()
        extra.append(cookie(facade.cookie_prefix + "user", f"{who}.{facade.keys.mac('user|' + identity.subject)}",
                            secure=facade.secure, max_age=facade.consent_ttl))
    await send_redirect(send, with_query(flow.redirect_uri, {
        "code": code, "state": flow.state, "iss": facade.issuer}), extra)


def _plain(claims: Any) -> dict[str, Any]:
    """Identity claims as plain JSON, bounded (a provider's userinfo can be large)."""
    try:
        data = msgspec.json.decode(msgspec.json.encode(dict(claims)))
    except (TypeError, msgspec.EncodeError, msgspec.DecodeError):
        return {}
    if len(msgspec.json.encode(data)) > 16 * 1024:
        return {k: v for k, v in data.items() if isinstance(v, str | int | float | bool) and len(str(v)) < 512}
    return data  # type: ignore[no-any-return]
