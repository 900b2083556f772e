"""Webhook subscriptions as a client asks for them: `events/subscribe` (the callback URL checked
against the SSRF rules, its endpoint verified by an echoed challenge, the grant bounded) and
`events/unsubscribe`."""

from __future__ import annotations

import hmac
import json
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..wire.errors import invalid_params
from .subscriptions import canonical, subscription_id
from .types import check_arguments, iso
from .webhook import WebhookError, check_url, parse_secret, pick_address

if TYPE_CHECKING:
    from ..core.core import Core
    from ..server.request import Request
    from .extension import Events


async def subscribe(events: Events, core: Core, req: Request) -> dict[str, Any]:
    principal = events.principal_of(core, req)
    if principal is None:
        raise events.error("forbidden", "events/subscribe needs an authenticated principal")
    declared, arguments = events.subject(req, "webhook")
    delivery = req.params.get("delivery")
    if not isinstance(delivery, Mapping) or delivery.get("mode", "webhook") != "webhook":
        raise invalid_params("delivery must be {mode: 'webhook', url, secret}")
    url, secret = delivery.get("url"), delivery.get("secret")
    try:
        key = parse_secret(secret)
    except ValueError as exc:
        raise invalid_params(str(exc)) from None
    try:
        _, host, port = check_url(url, allow_http=events.delivery.allow_http)
        await pick_address(host, port, allow_private=events.delivery.allow_private,
                           resolver=events.delivery.resolver)
    except WebhookError as exc:
        if exc.category is not None:
            raise events.error("callback", "the callback endpoint could not be reached",
                              {"reason": exc.category}) from None
        raise invalid_params(f"delivery.url refused: {exc}") from None
    assert isinstance(url, str) and isinstance(secret, str)
    sub_id = subscription_id(principal, url, declared.name, arguments)
    existing = await events.subscriptions.get(sub_id)
    if existing is None or not existing.get("verified"):
        await verify_endpoint(events, url, key, sub_id)
    ttl = req.params.get("ttlMs", events.default_ttl_ms)
    if ttl is None or not isinstance(ttl, int) or isinstance(ttl, bool):
        ttl = events.max_ttl_ms  # no expiry is not granted: a finite grant is always allowed
    ttl = min(max(ttl, 1000), events.max_ttl_ms)
    expires = time.time() + ttl / 1000
    record = {"id": sub_id, "name": declared.name, "arguments": arguments, "url": url,
              "secret": secret, "expires": expires, "verified": True, "active": True,
              "lastDeliveryAt": (existing or {}).get("lastDeliveryAt"),
              "lastError": None, "key": canonical(arguments)}
    try:
        await events.subscriptions.put(record)
    except OverflowError:
        raise events.error("exhausted", "too many webhook subscriptions",
                          {"limit": "subscriptions"}) from None
    ensure_group = getattr(events.log, "ensure_group", None)
    if events.log.shared and ensure_group is not None:
        await ensure_group([declared.name])  # deliveries start with the next event
    events.deliverer.start()
    result: dict[str, Any] = {"id": sub_id, "refreshBefore": iso(expires),
                              "cursor": await events.log.head(declared.name), "truncated": False}
    if existing is not None:
        result["deliveryStatus"] = {"active": True,
                                    "lastDeliveryAt": existing.get("lastDeliveryAt"),
                                    "lastError": existing.get("lastError")}
    return result


async def verify_endpoint(events: Events, url: str, key: bytes, sub_id: str) -> None:
    challenge = secrets.token_urlsafe(24)
    body = json.dumps({"type": "verification", "challenge": challenge}).encode()
    try:
        answer = await events.delivery.send(url, key, f"msg_verification_{secrets.token_hex(8)}",
                                          body, {"X-MCP-Subscription-Id": sub_id}, attempts=1)
    except WebhookError as exc:
        raise events.error("callback", "the callback endpoint could not be verified",
                          {"reason": exc.category or "connection_refused"}) from None
    try:
        echoed = json.loads(answer).get("challenge")
    except (ValueError, AttributeError):
        echoed = None
    if not isinstance(echoed, str) or not hmac.compare_digest(echoed, challenge):
        raise events.error("callback", "the callback endpoint did not echo the challenge",
                          {"reason": "challenge_failed"})


async def unsubscribe(events: Events, core: Core, req: Request) -> dict[str, Any]:
    principal = events.principal_of(core, req)
    if principal is None:
        raise events.error("forbidden", "events/unsubscribe needs an authenticated principal")
    name = req.params.get("name")
    if not isinstance(name, str) or name not in events.types:
        raise events.error("not_found", "Unknown event", {"kind": "event"})
    arguments = check_arguments(events.types[name].input_schema, req.params.get("arguments"))
    delivery = req.params.get("delivery")
    url = delivery.get("url") if isinstance(delivery, Mapping) else None
    if not isinstance(url, str):
        raise invalid_params("delivery.url is required")
    if not await events.subscriptions.delete(subscription_id(principal, url, name, arguments)):
        raise events.error("not_found", "No such subscription", {"kind": "subscription"})
    return {}
