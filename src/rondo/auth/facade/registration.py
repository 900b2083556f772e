"""Who the clients are: `/register` (RFC 7591, flood-bounded), finding a client by its ID
(registered here, or a client ID metadata document's URL, fetched then kept), and
authenticating one at `/token` and `/revoke` as it registered."""

from __future__ import annotations

import base64
import hmac
import logging
from typing import TYPE_CHECKING
from urllib.parse import unquote

import msgspec

from . import records as rec
from .clients import Client, check_registration
from .errors import OAuthError
from .keys import OPAQUE, digest, random_token
from .web import NO_STORE, Receive, Scope, Send, body_of, client_ip, header, send_json

if TYPE_CHECKING:
    from .facade import Facade

log = logging.getLogger("rondo.auth.facade")


async def find_client(facade: Facade, client_id: str) -> Client | None:
    if facade.cimd is not None and isinstance(client_id, str) and client_id.startswith("https://"):
        return await _metadata_client(facade, client_id)
    if not isinstance(client_id, str) or not OPAQUE.fullmatch(client_id):
        return None
    found: Client | None = rec.decode(await facade.store.get("client:" + client_id), Client)
    return found


async def _metadata_client(facade: Facade, url: str) -> Client | None:
    """A client identified by its metadata document's URL (fetched, then kept)."""
    from .cimd import is_cimd

    if not is_cimd(url):
        return None
    key = digest(url)
    kept: Client | None = rec.decode(await facade.store.get("cimd:" + key), Client)
    if kept is not None:
        return kept
    if await facade.store.get("cimd-bad:" + key) is not None:
        return None  # failed recently: not fetched again for a minute
    try:
        fetched: tuple[Client, int] = await facade.cimd.fetch(url)
    except OAuthError as exc:
        log.info("rondo.auth.facade: client metadata document refused: %s", exc.description)
        await facade.store.put("cimd-bad:" + key, b"1", 60)
        return None
    found, ttl = fetched
    await facade.store.put("cimd:" + key, rec.encode(found), ttl)
    return found


async def register(facade: Facade, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] != "POST":
        await send_json(send, 405, {"error": "invalid_request"}, [(b"allow", b"POST")])
        return
    ip = client_ip(scope)
    if (await facade.store.count("reg-ip:" + digest(ip), 60) > facade.registrations_per_minute
            or await facade.store.count("reg-all", 3600) > facade.max_registrations_per_hour):
        log.warning("rondo.auth.facade: registration refused (flood bound reached)")
        await send_json(send, 429, {"error": "temporarily_unavailable",
                                    "error_description": "Too many registrations; try later"},
                        [(b"retry-after", b"60"), *NO_STORE])
        return
    raw = await body_of(receive)
    try:
        doc = msgspec.json.decode(raw)
        meta = check_registration(doc)
    except (msgspec.DecodeError, RecursionError):
        await send_json(send, 400, {"error": "invalid_client_metadata",
                                    "error_description": "The registration is not JSON"}, NO_STORE)
        return
    except OAuthError as exc:
        await send_json(send, exc.status, exc.body(), NO_STORE)
        return
    client_id = random_token(24)
    secret = None if meta["token_endpoint_auth_method"] == "none" else random_token(32)
    now = int(facade.clock())
    record = Client(client_id=client_id, redirect_uris=meta["redirect_uris"],
                    auth_method=meta["token_endpoint_auth_method"],
                    secret_digest=digest(secret) if secret else None,
                    name=meta.get("client_name"), issued_at=now, grant_types=meta["grant_types"])
    await facade.store.put("client:" + client_id, rec.encode(record), facade.client_ttl)
    answer = {"client_id": client_id, "client_id_issued_at": now, **meta}
    if secret is not None:
        answer["client_secret"] = secret
        answer["client_secret_expires_at"] = 0
    await send_json(send, 201, answer, NO_STORE)


async def client_auth(facade: Facade, scope: Scope, form: dict[str, str]) -> Client:
    """The client making a token or revocation request, authenticated as it registered."""
    basic = header(scope, b"authorization")
    client_id = form.get("client_id")
    secret = form.get("client_secret")
    method = "none"
    if basic is not None and basic[:6].lower() == "basic ":
        try:
            pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
            user, _, password = pair.partition(":")
            user, password = unquote(user), unquote(password)
        except (ValueError, UnicodeDecodeError):
            raise OAuthError("invalid_client", "Client authentication failed", 401) from None
        if client_id is not None and client_id != user:
            raise OAuthError("invalid_request", "Two different client ids")
        client_id, secret, method = user, password, "client_secret_basic"
    elif secret is not None:
        method = "client_secret_post"
    client = await find_client(facade, client_id or "")
    if client is None:
        raise OAuthError("invalid_client", "Client authentication failed", 401)
    if client.secret_digest is None:
        if method != "none":
            raise OAuthError("invalid_client", "Client authentication failed", 401)
        return client
    if secret is None or not hmac.compare_digest(digest(secret), client.secret_digest):
        raise OAuthError("invalid_client", "Client authentication failed", 401)
    return client
