"""`/authorize` and the consent it asks for: the request checked (client, exact redirect URI,
PKCE S256, resource, scopes, a per-address bound), the facade's consent page and its form
(`/consent`, CSRF-bound to the browser), then the user sent to the provider's sign-in."""

from __future__ import annotations

import base64
import html
import re
from typing import TYPE_CHECKING

from ..scopes import OFFLINE
from ..urls import same_resource
from . import records as rec
from .clients import Client
from .errors import OAuthError
from .keys import OPAQUE, digest, random_token, s256
from .registration import find_client
from .upstream import UpstreamError
from .upstream_tokens import provider_endpoints
from .web import (
    Receive,
    Scope,
    Send,
    body_of,
    client_ip,
    cookie,
    cookies_of,
    header,
    params_of,
    query_of,
    send_error_page,
    send_json,
    send_page,
    send_redirect,
    with_query,
)

if TYPE_CHECKING:
    from .facade import Facade

_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


async def authorize(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] not in ("GET", "POST"):
        await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"GET, POST")])
        return
    q = query_of(scope) if scope["method"] == "GET" else params_of(
        (await body_of(receive)).decode("ascii", "replace"))
    client = await find_client(facade, q.get("client_id", ""))
    if client is None:
        await send_error_page(send, "This application is not registered here.")
        return
    redirect = q.get("redirect_uri")
    if redirect is None and len(client.redirect_uris) == 1:
        redirect = client.redirect_uris[0]
    if redirect is None or redirect not in client.redirect_uris:  # exact string match
        await send_error_page(send, "The redirect URI is not one this application registered.")
        return
    state = q.get("state")

    async def refuse(error: str, text: str) -> None:
        await send_redirect(send, with_query(redirect, {"error": error, "error_description": text,
                                                         "state": state, "iss": facade.issuer}))

    if q.get("response_type") != "code":
        await refuse("unsupported_response_type", "Only response_type=code is supported")
        return
    if q.get("code_challenge_method") != "S256" or not _CHALLENGE.fullmatch(q.get("code_challenge", "")):
        await refuse("invalid_request", "PKCE with code_challenge_method=S256 is required")
        return
    resource = q.get("resource", facade.resource)
    if not same_resource(resource, facade.resource):
        await refuse("invalid_target", "This server issues tokens for its own resource only")
        return
    try:
        scope_text = _granted_scope(facade, q.get("scope"))
    except OAuthError as exc:
        await refuse(exc.error, exc.description)
        return
    if await facade.store.count("authz-ip:" + digest(client_ip(scope)), 60) > facade.authorizations_per_minute:
        await refuse("temporarily_unavailable", "Too many sign-ins from this address; try later")
        return
    pending = rec.Pending(client_id=client.client_id, redirect_uri=redirect,
                          challenge=q["code_challenge"], resource=facade.resource,
                          scope=scope_text, state=state, csrf_nonce=_csrf_nonce(facade, scope))
    # Remembered consent skips the page only for a navigation the user started (the browser
    # says `Sec-Fetch-Site: none`); a redirect from another site, or a client that does not
    # say, sees the page again, so no site can ride an earlier approval silently.
    remembered = _remembered_user(facade, scope) if header(scope, b"sec-fetch-site") == "none" else None
    if remembered is not None and await facade.store.get(
            f"consent:{digest(remembered)}:{client.client_id}") is not None:
        await go_upstream(facade, send, pending)  # this user approved this client before
        return
    await _consent_page(facade, send, client, pending)


def _csrf_nonce(facade: Facade, scope: Scope) -> str:
    """The browser's CSRF nonce: kept while its cookie lives, so a consent page loaded twice
    (a reload, a prefetch) does not spoil the form of the first."""
    there = cookies_of(scope).get(facade.cookie_prefix + "csrf", "")
    return there if OPAQUE.fullmatch(there) else random_token(16)


def _granted_scope(facade: Facade, asked: str | None) -> str:
    wanted = asked.split() if asked else list(facade.scopes_supported)
    allowed = {*facade.scopes_supported, OFFLINE}
    if not set(wanted) <= allowed:
        raise OAuthError("invalid_scope", "A requested scope is not offered by this server")
    return " ".join(dict.fromkeys(wanted))


def _remembered_user(facade: Facade, scope: Scope) -> str | None:
    if not facade.remember_consent:
        return None
    value = cookies_of(scope).get(facade.cookie_prefix + "user", "")
    who, _, tag = value.rpartition(".")
    if not who or not tag:
        return None
    try:
        subject = base64.urlsafe_b64decode(who + "=" * (-len(who) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return subject if facade.keys.mac_ok("user|" + subject, tag) else None


async def _consent_page(facade: Facade, send: Send, client: Client, pending: rec.Pending) -> None:
    request_id = random_token(24)
    await facade.store.put("pending:" + request_id, rec.encode(pending), facade.flow_ttl)
    csrf = facade.keys.mac(f"csrf|{request_id}|{pending.csrf_nonce}")
    e = html.escape
    name = client.name or "An unnamed application"
    scopes = " ".join(facade.upstream.scopes)
    body = (
        f"<p><strong>{e(name)}</strong> (client id <code>{e(client.client_id)}</code>) asks to "
        f"use this server as you.</p>"
        f"<p>It will get access to: <code>{e(pending.scope or '(no scopes)')}</code>.</p>"
        f"<p>You will sign in at <strong>{e(facade.upstream.name)}</strong>, which will be asked "
        f"for <code>{e(scopes)}</code>.</p>"
        f"<p>Afterwards you are sent to <code>{e(pending.redirect_uri)}</code>. Approve only "
        "if you started this sign-in and trust that address.</p>"
        f'<form method="post" action="{e(facade.endpoint["consent"])}">'
        f'<input type="hidden" name="request" value="{e(request_id)}">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        '<button name="decision" value="approve">Approve</button> '
        '<button name="decision" value="deny">Deny</button></form>')
    await send_page(send, 200, "Allow access?", body, [
        cookie(facade.cookie_prefix + "csrf", pending.csrf_nonce, secure=facade.secure,
               max_age=facade.flow_ttl)])


async def consent(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
        return
    form = params_of((await body_of(receive)).decode("ascii", "replace"))
    request_id = form.get("request", "")
    if not OPAQUE.fullmatch(request_id):
        await send_error_page(send, "This approval form is not valid.")
        return
    pending = rec.decode(await facade.store.take("pending:" + request_id), rec.Pending)
    nonce = cookies_of(scope).get(facade.cookie_prefix + "csrf", "")
    if pending is None or not nonce or nonce != pending.csrf_nonce or not facade.keys.mac_ok(
            f"csrf|{request_id}|{nonce}", form.get("csrf", "")):
        await send_error_page(send, "This approval form has expired or was not shown to "
                                    "this browser. Start the sign-in again.")
        return
    if form.get("decision") != "approve":
        await send_redirect(send, with_query(pending.redirect_uri, {
            "error": "access_denied", "error_description": "The user denied access",
            "state": pending.state, "iss": facade.issuer}))
        return
    await go_upstream(facade, send, pending)


async def go_upstream(facade: Facade, send: Send, pending: rec.Pending) -> None:
    """Consent given: store the flow under a fresh `state`, bind it to this browser, and
    send the user to the provider."""
    try:
        up = await provider_endpoints(facade)
    except UpstreamError:
        await send_redirect(send, with_query(pending.redirect_uri, {
            "error": "temporarily_unavailable", "error_description":
            "The identity provider could not be reached", "state": pending.state,
            "iss": facade.issuer}))
        return
    state = random_token(32)
    verifier = random_token(48)
    nonce = random_token(24) if "openid" in up.scopes else None
    flow = rec.Flow(client_id=pending.client_id, redirect_uri=pending.redirect_uri,
                    challenge=pending.challenge, resource=pending.resource, scope=pending.scope,
                    state=pending.state, upstream_verifier=verifier, nonce=nonce)
    await facade.store.put("flow:" + state, rec.encode(flow), facade.flow_ttl)
    params: dict[str, str | None] = {
        "response_type": "code", "client_id": up.client_id, "redirect_uri": facade.callback_url,
        "scope": " ".join(up.scopes), "state": state, **up.extra_authorize_params}
    if up.pkce:
        params["code_challenge"] = s256(verifier)
        params["code_challenge_method"] = "S256"
    if nonce is not None:
        params["nonce"] = nonce
    assert up.authorize_url is not None
    await send_redirect(send, with_query(up.authorize_url, params), [
        cookie(facade.cookie_prefix + "flow", facade.keys.mac("flow|" + state), secure=facade.secure,
               max_age=facade.flow_ttl)])
