"""`FacadeVerifier`: the facade's access tokens checked in process (no HTTP), for the resource
server the facade hands to `Server(auth=...)`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import records as rec
from .access_tokens import decode_access
from .keys import OPAQUE

if TYPE_CHECKING:
    from .facade import Facade


class FacadeVerifier:
    """The facade's access tokens, checked in process: the signature with the facade's key,
    `iss`, `aud` = the resource, `exp`; then the store says whether the family was revoked.
    `ctx.auth.claims["upstream"]` holds the provider's identity claims."""

    def __init__(self, facade: Facade) -> None:
        self.facade = facade
        self.cache_ttl = facade.verify_ttl

    async def verify(self, token: str) -> Any:
        from ..errors import InvalidToken
        from ..principal import Principal

        facade = self.facade
        try:
            claims = await decode_access(facade, token)
        except Exception as exc:  # the store is away (Redis down) while reading the key: 503
            _unless_store_failed(exc)
            raise
        if claims is None:
            raise InvalidToken("The access token is invalid", reason="not a valid facade token")
        grant_id = claims["gid"]
        if not isinstance(grant_id, str) or not OPAQUE.fullmatch(grant_id):
            raise InvalidToken("The access token is invalid", reason="bad gid")
        try:
            many = getattr(facade.store, "get_many", None)
            if many is not None:  # one round trip (an MGET on Redis)
                revoked, raw_grant = await many(["revoked:" + grant_id, "grant:" + grant_id])
            else:
                revoked = await facade.store.get("revoked:" + grant_id)
                raw_grant = await facade.store.get("grant:" + grant_id)
        except Exception as exc:  # the store is away (Redis down): 503, not a crash
            _unless_store_failed(exc)
            raise
        if revoked is not None:
            raise InvalidToken("The access token has been revoked", reason="family revoked")
        grant = rec.decode(raw_grant, rec.Grant)
        if grant is None:
            raise InvalidToken("The access token's sign-in has ended", reason="no grant")
        return Principal.from_claims({**claims, "upstream": grant.identity})


def _unless_store_failed(exc: Exception) -> None:
    """A store failure (a socket error, Redis's own errors) becomes `VerifierUnavailable`;
    anything else is left to propagate."""
    from ..errors import VerifierUnavailable

    if isinstance(exc, OSError | ConnectionError | TimeoutError) or \
            type(exc).__module__.split(".")[0] == "redis":
        raise VerifierUnavailable(f"the facade's store failed ({type(exc).__name__})") from None
