"""What the facade stores, as msgspec structs (JSON in the store; secrets sealed first)."""

from __future__ import annotations

from typing import Any

import msgspec


class Pending(msgspec.Struct):
    """An authorization request validated and waiting for the user's consent."""

    client_id: str
    redirect_uri: str
    challenge: str
    resource: str
    scope: str
    state: str | None
    csrf_nonce: str


class Flow(msgspec.Struct):
    """A consented request sent upstream, under the random `state` the provider echoes."""

    client_id: str
    redirect_uri: str
    challenge: str
    resource: str
    scope: str
    state: str | None
    upstream_verifier: str
    nonce: str | None = None  # the OpenID nonce sent upstream (when `openid` is asked for)


class Code(msgspec.Struct):
    """One of the facade's authorization codes (stored under its digest, single use)."""

    client_id: str
    redirect_uri: str
    challenge: str
    resource: str
    scope: str
    grant: str
    expires_at: float


class Grant(msgspec.Struct):
    """One sign-in of one user for one client: the refresh-token family."""

    subject: str
    client_id: str
    scope: str
    resource: str
    identity: dict[str, Any]
    created: float


class Refresh(msgspec.Struct):
    """A refresh token (stored under its digest): which family it belongs to."""

    grant: str
    client_id: str
    expires_at: float


class Rotation(msgspec.Struct):
    """What a rotated refresh token became: its successor (sealed) and when."""

    successor: str
    at: float


class StoredTokens(msgspec.Struct, omit_defaults=True):
    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    id_token: str | None = None
    scope: str | None = None

    def __repr__(self) -> str:  # the provider's tokens, never shown (a log, a traceback)
        return f"StoredTokens(token_type={self.token_type!r}, expires_at={self.expires_at!r})"


encode = msgspec.json.encode


def decode(raw: bytes | None, kind: type[Any]) -> Any:
    if raw is None:
        return None
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.DecodeError:
        return None
