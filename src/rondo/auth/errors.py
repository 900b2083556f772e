"""What a token verifier may raise, and the protocol a custom verifier follows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .principal import Principal


class InvalidToken(Exception):
    """The token is not acceptable here: 401 `invalid_token`.

    `description` goes to the client (`error_description`), so it must never quote the token;
    `reason` is for the server's debug log only (also never the token).
    """

    def __init__(self, description: str = "The access token is invalid", reason: str = "") -> None:
        super().__init__(description)
        self.description = description
        self.reason = reason or description


class VerifierUnavailable(Exception):
    """The token could not be checked (authorization server down or misbehaving): 503."""


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks one bearer token. Implement it for tokens rondo does not know how to verify.

    `verify` returns the verified `Principal`, raises `InvalidToken` for a token that must be
    refused (401) or `VerifierUnavailable` when it cannot tell (503). `cache_ttl` (seconds) is
    how long a verified token may be reused without asking again, capped by its own expiry;
    0 turns caching off for this verifier.
    """

    cache_ttl: float

    async def verify(self, token: str) -> Principal: ...
