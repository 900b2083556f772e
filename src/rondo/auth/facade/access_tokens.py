"""The facade's access tokens: the key that signs them (the given one, or one the workers
sharing a store share, kept there sealed), issuing one with a token answer, and reading one
back (no PyJWT on this path: one algorithm, one key, the claims the facade issues)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..scopes import OFFLINE
from . import records as rec
from .keys import Signer, generate_signing_key, pem_of, random_token, unb64

if TYPE_CHECKING:
    from .facade import Facade

_KEY_RECORD = "signing-key:v1"
_KEY_TTL = 100 * 365 * 86400.0  # kept as long as the store keeps anything
# RSA keys this process made, by secret (not the secret): a second facade with the same secret
# in one process (tests, several apps) offers the same key instead of making another.
_GENERATED: dict[str, Any] = {}


async def current_signer(facade: Facade, kid: str | None = None) -> Signer:
    """The key that signs access tokens: the given `signing_key`, or the one this facade's
    workers share, kept in the store sealed with the secret (the first worker to need it
    makes it; `add` lets one win). A token naming another `kid` (the store lost the key and
    another worker made a new one) reads the store again, at most every 10 s."""
    signer = facade.keys.signer
    if signer is not None and (facade.keys.given or kid is None or kid == signer.kid
                               or facade.clock() < facade.key_checked_at + 10):
        return signer
    facade.key_checked_at = facade.clock()
    sealed = await facade.store.get(_KEY_RECORD)
    if sealed is None:
        key = signer.key if signer is not None else _GENERATED.get(facade.keys.secret_id)
        if key is None:
            key = _GENERATED.setdefault(facade.keys.secret_id, generate_signing_key())
        mine = facade.keys.seal(pem_of(key), _KEY_RECORD)
        sealed = await facade.store.add(_KEY_RECORD, mine, _KEY_TTL) or mine
    pem = facade.keys.open(sealed, _KEY_RECORD)
    if pem is None:
        raise RuntimeError("the facade's signing key in the store is sealed with another "
                           "secret: every worker sharing a store needs the same secret")
    if signer is None or pem != pem_of(signer.key):
        signer = Signer(pem)
        facade.keys.signer = signer
    return signer


async def token_answer(facade: Facade, grant_id: str, grant: rec.Grant, scope_text: str,
                       refresh: str | None) -> dict[str, Any]:
    """The `/token` answer: a new access token for the grant's family, and `refresh` if any."""
    signer = await current_signer(facade)
    now = int(facade.clock())
    claims: dict[str, Any] = {
        "iss": facade.issuer, "sub": grant.subject, "aud": grant.resource,
        "client_id": grant.client_id, "iat": now, "exp": now + facade.access_ttl,
        "jti": random_token(16), "gid": grant_id}
    resource_scopes = " ".join(s for s in scope_text.split() if s != OFFLINE)
    if resource_scopes:
        claims["scope"] = resource_scopes
    access = signer.sign(claims)
    answer: dict[str, Any] = {"access_token": access, "token_type": "Bearer",
                              "expires_in": facade.access_ttl}
    if resource_scopes:
        answer["scope"] = resource_scopes
    if refresh is not None:
        answer["refresh_token"] = refresh
    return answer


async def decode_access(facade: Facade, token: str, *, verify_exp: bool = True) -> dict[str, Any] | None:
    """The claims of one of our access tokens (signature, `iss`, `aud` = the resource,
    `exp`, `iat`, `sub`, `gid` present), or None."""
    signer = facade.keys.signer or await current_signer(facade)
    claims = signer.verify(token)
    if claims is None and not facade.keys.given:
        head = token.split(".", 1)[0]
        try:
            kid = msgspec.json.decode(unb64(head)).get("kid") if len(head) < 512 else None
        except (ValueError, AttributeError, msgspec.DecodeError):
            kid = None
        if isinstance(kid, str) and kid != signer.kid:
            fresh = await current_signer(facade, kid)
            if fresh is not signer:
                claims = fresh.verify(token)
    if claims is None or claims.get("iss") != facade.issuer:
        return None
    aud = claims.get("aud")
    if aud != facade.resource and not (isinstance(aud, list) and facade.resource in aud):
        return None
    exp = claims.get("exp")
    if not isinstance(exp, int) or isinstance(exp, bool) or not isinstance(claims.get("iat"), int) \
            or not isinstance(claims.get("sub"), str) or "gid" not in claims:
        return None
    if verify_exp and exp <= facade.clock() - 5:
        return None  # expired, on the facade's clock (the one that issued it)
    return claims
