"""The facade's secrets, all derived from one `secret` so every worker sharing it agrees:
AES-256-GCM for what is kept at rest (upstream tokens, rotated refresh tokens), HMAC-SHA256 for
cookies and the consent form. The RS256 key that signs access tokens (or one you give) is not
derived: the first worker makes one and keeps it in the store, sealed, for all the others."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
from typing import Any

_INFO_SEAL = b"rondo.facade seal v1"
_INFO_MAC = b"rondo.facade mac v1"
_INFO_SIGN = b"rondo.facade signing-key id v1"
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
OPAQUE = re.compile(r"[A-Za-z0-9_-]{16,128}")  # what random_token makes: codes, states, refresh tokens


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def digest(value: str) -> str:
    """What a secret value is stored under: never the value itself."""
    return b64(hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest())


def random_token(nbytes: int = 32) -> str:
    return b64(os.urandom(nbytes))


def s256(verifier: str) -> str:
    """The PKCE S256 code challenge of a code verifier (RFC 7636 §4.2)."""
    return b64(hashlib.sha256(verifier.encode()).digest())


def _derive(secret: bytes, info: bytes) -> bytes:
    return hmac.new(secret, info, hashlib.sha256).digest()


class Signer:
    """The key that signs the facade's access tokens, and their verification without PyJWT's
    general path (the facade checks only its own tokens: one algorithm, one key, known claims).
    RS256 by default (an RSA verification is the cheapest of the JWS algorithms in
    `cryptography`, several times cheaper than ES256 or EdDSA); a P-256 key signs ES256."""

    def __init__(self, key: Any) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec, rsa

        if isinstance(key, str | bytes):
            from cryptography.hazmat.primitives.serialization import load_pem_private_key

            key = load_pem_private_key(key.encode() if isinstance(key, str) else key, password=None)
        if isinstance(key, rsa.RSAPrivateKey):
            if key.key_size < 2048:
                raise ValueError("signing_key: an RSA key must have at least 2048 bits")
            nums = key.public_key().public_numbers()
            n = b64(nums.n.to_bytes((nums.n.bit_length() + 7) // 8, "big"))
            e = b64(nums.e.to_bytes((nums.e.bit_length() + 7) // 8, "big"))
            self.alg = "RS256"
            self.jwk: dict[str, Any] = {"kty": "RSA", "use": "sig", "alg": "RS256", "n": n, "e": e}
            thumb = f'{{"e":"{e}","kty":"RSA","n":"{n}"}}'
        elif isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            numbers = key.public_key().public_numbers()
            self.alg = "ES256"
            self.jwk = {"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
                        "x": b64(numbers.x.to_bytes(32, "big")), "y": b64(numbers.y.to_bytes(32, "big"))}
            thumb = f'{{"crv":"P-256","kty":"EC","x":"{self.jwk["x"]}","y":"{self.jwk["y"]}"}}'
        else:
            raise ValueError("signing_key must be an RSA (RS256, 2048 bits or more) or a P-256 "
                             "(ES256) private key")
        self.key = key
        self.public_key = key.public_key()
        self.kid = b64(hashlib.sha256(thumb.encode()).digest())[:16]  # RFC 7638 thumbprint, cut
        self.jwk["kid"] = self.kid
        self._header = {"kid": self.kid, "typ": "at+jwt"}

    def sign(self, claims: dict[str, Any]) -> str:
        import jwt

        return jwt.encode(claims, self.key, algorithm=self.alg, headers=self._header)

    def verify(self, token: str) -> dict[str, Any] | None:
        """The claims of a token this key signed (header `alg` and `kid` ours, no `crit`), or
        None. Claims are not checked here."""
        import msgspec
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding

        if len(token) > 8192:
            return None
        parts = token.split(".")
        if len(parts) != 3 or not all(_B64URL.fullmatch(part) for part in parts):
            return None
        try:
            header = msgspec.json.decode(unb64(parts[0]))
            if (not isinstance(header, dict) or header.get("alg") != self.alg
                    or header.get("kid") != self.kid or "crit" in header):
                return None
            signature = unb64(parts[2])
            if b64(signature) != parts[2]:  # one encoding per signature: no spare bits set
                return None
            signed = f"{parts[0]}.{parts[1]}".encode("ascii")
            if self.alg == "RS256":
                self.public_key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
            else:
                from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

                if len(signature) != 64:
                    return None
                der = encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                           int.from_bytes(signature[32:], "big"))
                self.public_key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
            claims = msgspec.json.decode(unb64(parts[1]))
        except (InvalidSignature, ValueError, msgspec.DecodeError, RecursionError):
            return None
        return claims if isinstance(claims, dict) else None


def generate_signing_key() -> Any:
    """A fresh RSA-2048 key for RS256 (kept sealed in the store and shared by every worker)."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem_of(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))


class Keys:
    """Everything keyed by the facade's `secret` (32 bytes or more). `signer` is the given
    `signing_key`, or None until the facade has read (or made) the shared one in its store."""

    def __init__(self, secret: bytes, signing_key: Any = None) -> None:
        if not isinstance(secret, bytes | bytearray) or len(secret) < 32:
            raise ValueError("the facade's secret must be at least 32 random bytes (the same on "
                             "every worker): generate one with python -m rondo.state")
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise ImportError("the authorization facade needs PyJWT and cryptography: "
                              "pip install 'rondo-mcp[auth]'") from None
        secret = bytes(secret)
        self._aead = AESGCM(_derive(secret, _INFO_SEAL))
        self._mac_key = _derive(secret, _INFO_MAC)
        self.given = signing_key is not None
        self.signer: Signer | None = Signer(signing_key) if signing_key is not None else None
        # Which secret this is (never the secret): the process-wide cache of generated keys.
        self.secret_id = b64(_derive(secret, _INFO_SIGN))

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
        return f"Keys(kid={self.signer.kid if self.signer else None!r})"
