"""JWT access tokens (RFC 9068) checked against the issuer's published keys, with PyJWT.

Why PyJWT (`pyjwt[crypto]`, the `auth` extra) rather than joserfc: it is the most used Python
JOSE library, small, with one dependency (`cryptography`, already rondo's `crypto` extra), and
its `decode` refuses any algorithm not in the list it is given, so the allow-list below is
enforced by the library as well as by us.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from .errors import InvalidToken
from .fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, Fetcher
from .jwks import Jwks
from .principal import Principal
from .urls import same_resource

# Asymmetric only: `none` and the HMAC family (a shared secret, the classic key-confusion
# target when an RSA public key is fed to HS256) are never accepted.
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                      "ES256", "ES384", "ES512", "EdDSA")
_REFUSED = frozenset({"none", "HS256", "HS384", "HS512"})
DEFAULT_LEEWAY = 30.0


class JwtVerifier:
    """Verify JWT access tokens issued by `issuers` for `audiences`.

    Checked: signature with a key from the issuer's JWKS (found through its RFC 8414 / OpenID
    metadata, or `jwks_uri`), `alg` in `algorithms` and matching the key, `iss` exactly one of
    `issuers`, `aud` naming one of `audiences` (RFC 8707; scheme and host case-insensitive),
    `exp` required and `nbf`/`iat` honoured with `leeway` seconds of clock skew.
    """

    cache_ttl = float("inf")  # a verified JWT stays valid until its own exp

    def __init__(
        self,
        issuers: str | Iterable[str],
        audiences: str | Iterable[str],
        *,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = DEFAULT_LEEWAY,
        jwks_uri: str | None = None,
        jwks_ttl: float = 300.0,
        jwks_min_refresh: float = 10.0,
        jwks_max_stale: float = 3600.0,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        try:
            import jwt  # noqa: F401
        except ImportError:
            raise ImportError("JWT verification needs PyJWT: pip install 'rondo-mcp[auth]'") from None
        self.issuers = (issuers,) if isinstance(issuers, str) else tuple(issuers)
        self.audiences = (audiences,) if isinstance(audiences, str) else tuple(audiences)
        if not self.issuers or not all(isinstance(i, str) and i for i in self.issuers):
            raise ValueError("JwtVerifier needs at least one issuer")
        if not self.audiences or not all(isinstance(a, str) and a for a in self.audiences):
            raise ValueError("JwtVerifier needs at least one audience")
        self.algorithms = tuple(algorithms)
        bad = _REFUSED.intersection(self.algorithms)
        if bad or not self.algorithms:
            raise ValueError(f"algorithms must be asymmetric JWS algorithms (refused: {sorted(bad)})")
        if not isinstance(leeway, int | float) or not 0 <= leeway <= 300:
            raise ValueError("leeway must be between 0 and 300 seconds")
        if jwks_uri is not None and len(self.issuers) != 1:
            raise ValueError("jwks_uri can only be given with a single issuer")
        self.leeway = float(leeway)
        self._clock = clock
        fetcher = Fetcher(timeout=timeout, max_bytes=max_bytes)
        self.keys = {
            iss: Jwks(iss, fetcher, jwks_uri=jwks_uri, ttl=jwks_ttl,
                      min_refresh=jwks_min_refresh, max_stale=jwks_max_stale)
            for iss in self.issuers
        }

    async def verify(self, token: str) -> Principal:

        header, claims = _peek(token)
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidToken("The access token uses a signing algorithm this server refuses",
                               reason=f"alg {alg!r} not allowed")
        iss = claims.get("iss")
        jwks = self.keys.get(iss) if isinstance(iss, str) else None
        if jwks is None or not isinstance(iss, str):
            raise InvalidToken("The access token was not issued by a trusted authorization server",
                               reason="untrusted iss")
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        key, declared = await jwks.key_for(kid)
        verified = _decode(token, key, declared, alg, iss, self.leeway)
        if verified is None and kid is not None:
            # The issuer may have replaced the key under the same kid: fetch the set again,
            # at most once per jwks_min_refresh (shared with unknown kids), and try once more.
            fresh = await jwks.replaced(kid, key)
            if fresh is not None:
                verified = _decode(token, fresh[0], fresh[1], alg, iss, self.leeway)
        if verified is None:
            raise InvalidToken("The access token signature is invalid", reason="bad signature")
        aud = verified.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not any(isinstance(a, str) and same_resource(a, mine) for a in auds for mine in self.audiences):
            raise InvalidToken("The access token was not issued for this resource",
                               reason="audience mismatch")
        return Principal.from_claims(verified)


# The key type each algorithm family signs with (RFC 7518 §3.1, RFC 8037 §3.1).
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


def _decode(token: str, key: Any, declared: str | None, alg: str, iss: str, leeway: float) -> dict[str, Any] | None:
    """The verified claims, None when only the signature is wrong (the key may have been
    replaced), InvalidToken for everything else."""
    import jwt

    if declared is not None and declared != alg:
        raise InvalidToken("The access token's algorithm does not match its key",
                           reason=f"alg {alg!r} vs key {declared!r}")
    if _KEY_TYPES.get(alg[:2]) != key.key_type:
        # A JWKS without `alg` (Entra ID's) leaves the type check to us: PyJWT would raise a
        # TypeError deep inside `cryptography` for an RS256 token naming an EC key.
        raise InvalidToken("The access token's algorithm does not match its key",
                           reason=f"alg {alg!r} vs key type {key.key_type!r}")
    try:
        verified: dict[str, Any] = jwt.decode(
            token,
            key=key.key,
            algorithms=[alg],
            issuer=iss,
            leeway=leeway,
            options={"require": ["exp", "iss"], "verify_aud": False},
        )
    except jwt.InvalidSignatureError:
        return None
    except jwt.ExpiredSignatureError:
        raise InvalidToken("The access token has expired", reason="expired") from None
    except jwt.ImmatureSignatureError:
        raise InvalidToken("The access token is not valid yet", reason="nbf/iat in the future") from None
    except jwt.MissingRequiredClaimError as exc:
        raise InvalidToken("The access token lacks a required claim", reason=f"missing {exc.claim}") from None
    except jwt.PyJWTError as exc:
        raise InvalidToken("The access token is invalid", reason=type(exc).__name__) from None
    except (TypeError, ValueError) as exc:  # a key the algorithm cannot use (e.g. a P-384 key for ES256)
        raise InvalidToken("The access token's algorithm does not match its key",
                           reason=type(exc).__name__) from None
    return verified


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _peek(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Header and claims before verification, only to pick the issuer and key."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts[:2]):
        raise InvalidToken("The access token is not a JWT", reason="not three parts")
    try:
        header = msgspec.json.decode(_b64(parts[0]))
        claims = msgspec.json.decode(_b64(parts[1]))
    except (binascii.Error, ValueError, msgspec.DecodeError, RecursionError):
        raise InvalidToken("The access token is not a JWT", reason="undecodable") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise InvalidToken("The access token is not a JWT", reason="not objects")
    if "crit" in header or "jku" in header or "x5u" in header or "jwk" in header:
        # Access tokens need none of these; keys come only from the configured issuer's JWKS.
        raise InvalidToken("The access token uses JWS header parameters this server refuses",
                           reason="crit/jku/x5u/jwk header")
    return header, claims
