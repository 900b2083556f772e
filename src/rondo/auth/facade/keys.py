"""The facade's secrets, all derived from one `secret` so every worker sharing it agrees:
AES-256-GCM for what is kept at rest (upstream tokens, rotated refresh tokens), HMAC-SHA256 for
cookies and the consent form, and the ES256 key that signs access tokens (or one you give)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any

_INFO_SEAL = b"rondo.facade seal v1"
_INFO_MAC = b"rondo.facade mac v1"
_INFO_SIGN = b"rondo.facade es256 v1"


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def digest(value: str) -> str:
    """What a secret value is stored under: never the value itself."""
    return b64(hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest())


def random_token(nbytes: int = 32) -> str:
    return b64(os.urandom(nbytes))


def _derive(secret: bytes, info: bytes) -> bytes:
    return hmac.new(secret, info, hashlib.sha256).digest()


class Keys:
    """Everything keyed by the facade's `secret` (32 bytes or more)."""

    def __init__(self, secret: bytes, signing_key: Any = None) -> None:
        if not isinstance(secret, bytes | bytearray) or len(secret) < 32:
            raise ValueError("the facade's secret must be at least 32 random bytes (the same on "
                             "every worker): generate one with python -m rondo.state")
        try:
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise ImportError("the authorization facade needs PyJWT and cryptography: "
                              "pip install 'rondo-mcp[auth]'") from None
        secret = bytes(secret)
        self._aead = AESGCM(_derive(secret, _INFO_SEAL))
        self._mac_key = _derive(secret, _INFO_MAC)
        if signing_key is None:
            # A P-256 key derived from the secret: every worker signs with the same key.
            scalar = int.from_bytes(_derive(secret, _INFO_SIGN), "big")
            order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
            signing_key = ec.derive_private_key(scalar % (order - 1) + 1, ec.SECP256R1())
        elif isinstance(signing_key, str | bytes):
            from cryptography.hazmat.primitives.serialization import load_pem_private_key

            signing_key = load_pem_private_key(signing_key.encode() if isinstance(signing_key, str)
                                               else signing_key, password=None)
        if not isinstance(signing_key, ec.EllipticCurvePrivateKey) or signing_key.curve.name != "secp256r1":
            raise ValueError("signing_key must be a P-256 (ES256) private key")
        self.signing_key = signing_key
        numbers = signing_key.public_key().public_numbers()
        self.jwk = {"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
                    "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
        thumb = f'{{"crv":"P-256","kty":"EC","x":"{self.jwk["x"]}","y":"{self.jwk["y"]}"}}'
        self.kid = b64(hashlib.sha256(thumb.encode()).digest())[:16]  # RFC 7638 thumbprint, cut
        self.jwk["kid"] = self.kid
        self.public_key = signing_key.public_key()

    def seal(self, plain: bytes, context: str) -> bytes:
        """AES-256-GCM, bound to `context` (what the value is, whose it is): a sealed value
        copied to another record fails to open."""
        nonce = os.urandom(12)
        return nonce + self._aead.encrypt(nonce, plain, context.encode())

    def open(self, sealed: bytes, context: str) -> bytes | None:
        from cryptography.exceptions import InvalidTag

        if len(sealed) < 28:
            return None
        try:
            return bytes(self._aead.decrypt(sealed[:12], sealed[12:], context.encode()))
        except InvalidTag:
            return None

    def mac(self, message: str) -> str:
        return b64(hmac.new(self._mac_key, message.encode("utf-8", "surrogatepass"),
                            hashlib.sha256).digest())

    def mac_ok(self, message: str, tag: str) -> bool:
        return hmac.compare_digest(self.mac(message), tag)

    def __repr__(self) -> str:
        return f"Keys(kid={self.kid!r})"
