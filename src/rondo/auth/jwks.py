"""An issuer's signing keys: fetched from its metadata's `jwks_uri`, cached for `ttl`, fetched
again at most once per `min_refresh` when a token names a `kid` we do not hold (key rotation),
and kept past their expiry while the authorization server cannot be reached (`max_stale`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from .errors import InvalidToken, VerifierUnavailable
from .fetch import Fetcher, as_metadata

log = logging.getLogger("rondo.auth")

MAX_KEYS = 64


def _same_key(a: Any, b: Any) -> bool:
    from cryptography.hazmat.primitives import serialization

    def der(key: Any) -> bytes:
        public = key.key.public_key() if hasattr(key.key, "public_key") else key.key
        return bytes(public.public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo))

    try:
        return der(a) == der(b)
    except (AttributeError, TypeError, ValueError):
        return False


class Jwks:
    def __init__(
        self,
        issuer: str,
        fetcher: Fetcher,
        *,
        jwks_uri: str | None = None,
        ttl: float = 300.0,
        min_refresh: float = 10.0,
        max_stale: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self.fetcher = fetcher
        self.jwks_uri = jwks_uri
        self.ttl = ttl
        self.min_refresh = min_refresh
        self.max_stale = max_stale
        self._clock = clock
        self._keys: dict[str, Any] = {}   # kid -> PyJWK
        self._anonymous: list[Any] = []   # keys without a kid
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._kid_refresh_at: float | None = None
        self._generation = 0  # completed attempts: waiters on the lock reuse a fresh outcome
        self._last_error: VerifierUnavailable | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: Any = None
        self.fetches = 0

    def _the_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    async def key_for(self, kid: str | None) -> Any:
        """(PyJWK, its declared alg or None) for `kid`; InvalidToken if the issuer has no such
        key, VerifierUnavailable if we cannot find out."""
        if self._fetched_at is None or self._clock() - self._fetched_at >= self.ttl:
            await self._refresh(stale_ok=True)
        key = self._lookup(kid)
        now = self._clock()
        if key is None and (self._kid_refresh_at is None or now - self._kid_refresh_at >= self.min_refresh):
            # Rotation: the token may name a key published since we fetched. At most once per
            # `min_refresh`, so a stream of made-up kids cannot become a fetch per request.
            self._kid_refresh_at = now
            await self._refresh(stale_ok=False)
            key = self._lookup(kid)
        if key is None:
            raise InvalidToken("The access token is signed by an unknown key",
                               reason=f"unknown kid from {self.issuer}")
        return key

    async def replaced(self, kid: str, old: Any) -> Any:
        """After a signature failed with `old`, the key held for `kid`: the set fetched again (at most
        once per `min_refresh`, the same budget as unknown kids, so bad signatures cannot become
        a fetch per request) and the key now published under `kid`, or None if there is no
        other one to try."""
        now = self._clock()
        if self._kid_refresh_at is not None and now - self._kid_refresh_at < self.min_refresh:
            return None
        self._kid_refresh_at = now
        try:
            await self._refresh(stale_ok=False)
        except VerifierUnavailable:
            return None
        fresh = self._lookup(kid)
        if fresh is None or fresh[0].key_type == old.key_type and _same_key(fresh[0], old):
            return None
        return fresh

    def _lookup(self, kid: str | None) -> Any:
        if kid is None:
            return self._anonymous[0] if len(self._anonymous) == 1 and not self._keys else None
        return self._keys.get(kid)

    def _failed_recently(self) -> bool:
        """The last attempt failed less than `min_refresh` ago: fail fast instead of waiting on
        an unreachable server again for every request."""
        return (self._last_error is not None and self._attempted_at is not None
                and self._clock() - self._attempted_at < self.min_refresh)

    def _stale_usable(self) -> bool:
        return self._fetched_at is not None and self._clock() - self._fetched_at < self.ttl + self.max_stale

    async def _refresh(self, *, stale_ok: bool) -> None:
        seen = self._generation
        async with self._the_lock():
            if self._generation != seen or self._failed_recently():
                # Someone else just tried (or we tried too recently): use that outcome.
                if self._last_error is not None and not (stale_ok and self._stale_usable()):
                    raise self._last_error
                return
            self._attempted_at = self._clock()
            try:
                await self._fetch()
                self._last_error = None
            except VerifierUnavailable as exc:
                self._last_error = exc
                self._generation += 1
                if stale_ok and self._stale_usable():
                    log.warning("rondo.auth: keeping cached keys of %s: %s", self.issuer, exc)
                    return
                raise

    async def _fetch(self) -> None:
        import jwt

        uri = self.jwks_uri
        if uri is None:
            meta = await as_metadata(self.fetcher, self.issuer)
            found = meta.get("jwks_uri")
            if not isinstance(found, str) or not found.startswith(("https://", "http://")):
                raise VerifierUnavailable(f"metadata of {self.issuer} has no usable jwks_uri")
            uri = found
        doc = await self.fetcher.json(uri)
        self.fetches += 1
        raw = doc.get("keys")
        if not isinstance(raw, list):
            raise VerifierUnavailable(f"JWKS of {self.issuer} has no keys array")
        keys: dict[str, Any] = {}
        anonymous: list[Any] = []
        for entry in raw[:MAX_KEYS]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = jwt.PyJWK(entry)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError):
                continue  # a key type we cannot use: skip it, keep the others
            kid = entry.get("kid")
            declared = entry.get("alg") if isinstance(entry.get("alg"), str) else None
            if isinstance(kid, str):
                keys[kid] = (key, declared)
            else:
                anonymous.append((key, declared))
        self._keys, self._anonymous = keys, anonymous
        self._generation += 1
        self.jwks_uri = uri
        self._fetched_at = self._clock()
