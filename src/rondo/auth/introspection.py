"""RFC 7662 token introspection: ask the authorization server about each (uncached) token.

For opaque tokens, or when revocation must take effect quickly: results are cached for
`cache_ttl` seconds (default 30), so a revoked token is refused at most that long after.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from .errors import InvalidToken, VerifierUnavailable
from .fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, Fetcher, as_metadata
from .principal import Principal
from .urls import check_url, same_resource


class IntrospectionVerifier:
    """Verify tokens at `issuer`'s introspection endpoint (from its metadata, or `endpoint`).

    `client_id`/`client_secret` authenticate this resource server to the endpoint (HTTP Basic).
    An active answer must name a trusted `iss` if it has one, one of `audiences` if it has `aud`,
    and an `exp` in the future (with `leeway`).
    """

    def __init__(
        self,
        issuer: str,
        audiences: str | Iterable[str],
        *,
        endpoint: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        cache_ttl: float = 30.0,
        leeway: float = 30.0,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = check_url(issuer, "issuer")
        self.audiences = (audiences,) if isinstance(audiences, str) else tuple(audiences)
        if not self.audiences:
            raise ValueError("IntrospectionVerifier needs at least one audience")
        self.endpoint = None if endpoint is None else check_url(endpoint, "introspection endpoint")
        if (client_id is None) != (client_secret is None):
            raise ValueError("give both client_id and client_secret, or neither")
        self._credentials = None if client_id is None else (client_id, client_secret or "")
        if not isinstance(cache_ttl, int | float) or not 0 <= cache_ttl <= 300:
            raise ValueError("cache_ttl must be between 0 and 300 seconds")
        self.cache_ttl = float(cache_ttl)
        self.leeway = float(leeway)
        self._clock = clock
        self._fetcher = Fetcher(timeout=timeout, max_bytes=max_bytes)

    async def _endpoint(self) -> str:
        if self.endpoint is None:
            meta = await as_metadata(self._fetcher, self.issuer)
            found = meta.get("introspection_endpoint")
            if not isinstance(found, str):
                raise VerifierUnavailable(f"{self.issuer} advertises no introspection_endpoint")
            self.endpoint = check_url(found, "introspection endpoint")
        return self.endpoint

    async def verify(self, token: str) -> Principal:
        url = await self._endpoint()
        answer: dict[str, Any] = await self._fetcher.json(
            url, form={"token": token, "token_type_hint": "access_token"}, auth=self._credentials)
        if answer.get("active") is not True:
            raise InvalidToken("The access token is not active", reason="introspection: inactive")
        iss = answer.get("iss")
        if iss is not None and iss != self.issuer:
            raise InvalidToken("The access token was not issued by a trusted authorization server",
                               reason="introspection: untrusted iss")
        if "aud" in answer:
            aud = answer["aud"]
            auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
            if not any(isinstance(a, str) and same_resource(a, m) for a in auds for m in self.audiences):
                raise InvalidToken("The access token was not issued for this resource",
                                   reason="introspection: audience mismatch")
        now = self._clock()
        exp = answer.get("exp")
        if isinstance(exp, int | float) and exp + self.leeway < now:
            raise InvalidToken("The access token has expired", reason="introspection: expired")
        nbf = answer.get("nbf")
        if isinstance(nbf, int | float) and nbf - self.leeway > now:
            raise InvalidToken("The access token is not valid yet", reason="introspection: nbf")
        claims = {k: v for k, v in answer.items() if k != "active"}
        claims.setdefault("iss", self.issuer)
        return Principal.from_claims(claims)
