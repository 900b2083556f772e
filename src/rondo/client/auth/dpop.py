"""DPoP (RFC 9449): sender-constrained tokens. One ES256 key per auth object; a fresh proof
JWT for every token request and every request to the server (`htm`, `htu`, `iat`, `jti`,
`ath` for the resource, the last `nonce` each server handed out). Signed with PyJWT (the
`auth` extra)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ALGORITHM = "ES256"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class DpopKey:
    def __init__(self) -> None:
        try:
            import jwt  # noqa: F401
            from cryptography.hazmat.primitives.asymmetric import ec
        except ImportError:  # pragma: no cover - depends on the installed extras
            raise RuntimeError("DPoP needs PyJWT: pip install 'rondo-mcp[auth]'") from None
        self._key = ec.generate_private_key(ec.SECP256R1())
        numbers = self._key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "x": _b64(numbers.x.to_bytes(32, "big")),
                    "y": _b64(numbers.y.to_bytes(32, "big"))}
        canonical = json.dumps({k: self.jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
        self.thumbprint = _b64(hashlib.sha256(canonical.encode()).digest())  # RFC 7638
        self.nonces: dict[str, str] = {}  # origin -> the last DPoP-Nonce it sent

    def __repr__(self) -> str:
        return f"DpopKey(jkt={self.thumbprint!r})"

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        import jwt

        parts = urlsplit(url)
        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(16), "htm": method,
                                  "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
                                  "iat": int(time.time())}
        nonce = self.nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        return str(jwt.encode(claims, self._key, algorithm=ALGORITHM, headers={"typ": "dpop+jwt", "jwk": self.jwk}))

    def remember_nonce(self, url: str, headers: Any) -> bool:
        """Keep a `DPoP-Nonce` the server sent; True when it is new."""
        nonce = headers.get("dpop-nonce")
        if not isinstance(nonce, str) or not nonce or len(nonce) > 512:
            return False
        origin = _origin(url)
        if self.nonces.get(origin) == nonce:
            return False
        self.nonces[origin] = nonce
        return True


def server_supports(metadata_raw: dict[str, Any]) -> bool:
    algs = metadata_raw.get("dpop_signing_alg_values_supported")
    return isinstance(algs, list) and ALGORITHM in algs
