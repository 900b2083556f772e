"""Keyrings for sealed request state: validation, lookup by key id, and the env format.

A keyring holds 1 to 8 `(id, secret)` pairs. `seal` signs with the first; `open` verifies with
the key the token names. A bare `secret=` is a keyring of one key with no id of its own: its
tokens name a fingerprint of the secret (`~` plus 12 characters, never a valid user id), so any
keyring that contains the same secret opens them, and it opens tokens naming any id (the HMAC
still has to verify under that one secret). That is what makes secret -> keyring migration free.
"""

from __future__ import annotations

import binascii
import os
import re
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Iterable, Mapping
from typing import Any

from ..wire.logs import logger

log = logger("rondo.state")

MIN_SECRET_BYTES = 32
MAX_KEYS = 8
ENV_KEYS = "RONDO_STATE_KEYS"

_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_FINGERPRINT_LABEL = b"rondo.state key fingerprint v1"
_AEAD_LABEL = b"rondo.state aes-256-gcm key v1"


class Key:
    """One secret, with its HMAC-SHA256 pads precomputed (the hot path copies two hash states)."""

    __slots__ = ("secret", "fingerprint", "_inner", "_outer", "_aead")

    def __init__(self, secret: bytes) -> None:
        # Imported here, when a key is first built: a stdio server that never seals a state
        # does not pay for loading OpenSSL's hashes at start-up.
        import base64
        import hashlib

        self.secret = secret
        block = secret if len(secret) <= 64 else hashlib.sha256(secret).digest()
        block = block.ljust(64, b"\0")
        self._inner = hashlib.sha256(bytes(b ^ 0x36 for b in block))
        self._outer = hashlib.sha256(bytes(b ^ 0x5C for b in block))
        self._aead: Any = None
        digest = self.mac(_FINGERPRINT_LABEL)[:9]
        self.fingerprint = "~" + base64.urlsafe_b64encode(digest).decode("ascii")

    def mac(self, message: bytes) -> bytes:
        """HMAC-SHA256(secret, message) (RFC 2104, from the precomputed pads)."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()

    def aead(self) -> Any:
        """The AES-256-GCM cipher for this secret (key derived by HMAC; `cryptography` needed)."""
        if self._aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._aead = AESGCM(self.mac(_AEAD_LABEL))
        return self._aead


def _check_secret(secret: Any, what: str) -> bytes:
    if isinstance(secret, str):
        raise TypeError(
            f"{what} must be bytes, not str: decode it first "
            "(e.g. base64.urlsafe_b64decode(text + '=='))"
        )
    if not isinstance(secret, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} must be bytes, not {type(secret).__name__}")
    raw = bytes(secret)
    if len(raw) < MIN_SECRET_BYTES:
        raise ValueError(
            f"{what} is {len(raw)} bytes; at least {MIN_SECRET_BYTES} random bytes are needed "
            "(generate one with secrets.token_bytes(32))"
        )
    return raw


class Keyring:
    """Validated signing/verification keys. Build it once, at configuration time."""

    __slots__ = ("signing_id", "signing_kid", "signing_key", "ids", "_by_id", "_bare")

    def __init__(self, keys: Iterable[tuple[str, bytes]] | None = None, *, secret: Any = None):
        if (keys is None) == (secret is None):
            raise ValueError("pass exactly one of secret= (bytes) or keys=[(id, secret), ...]")
        self._by_id: dict[str, Key] = {}
        if secret is not None:
            key = Key(_check_secret(secret, "secret"))
            self._bare = True
            self.signing_id = key.fingerprint
            self.signing_kid = key.fingerprint.encode("ascii")  # as tokens spell it
            self.signing_key = key
            self.ids: tuple[str, ...] = ()
            self._by_id[key.fingerprint] = key
            return
        if isinstance(keys, (str, bytes, Mapping)):
            raise TypeError("keys must be a list of (id, secret) pairs")
        try:
            pairs = list(keys)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError("keys must be a list of (id, secret) pairs") from None
        if not 1 <= len(pairs) <= MAX_KEYS:
            raise ValueError(f"keys must hold 1 to {MAX_KEYS} keys, got {len(pairs)}")
        ids: list[str] = []
        fingerprints: dict[str, Key] = {}
        for n, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"keys[{n}] must be an (id, secret) pair")
            key_id, raw = pair
            if not isinstance(key_id, str):
                raise TypeError(f"keys[{n}] id must be a str, not {type(key_id).__name__}")
            if not _KEY_ID.fullmatch(key_id):
                raise ValueError(
                    f"keys[{n}] id {key_id!r} must be 1 to 32 characters from A-Z a-z 0-9 _ -"
                )
            if key_id in self._by_id:
                raise ValueError(f"key id {key_id!r} appears twice")
            key = Key(_check_secret(raw, f"secret of key {key_id!r}"))
            self._by_id[key_id] = key
            fingerprints.setdefault(key.fingerprint, key)
            ids.append(key_id)
        # Fingerprints start with "~", which no id may contain: the two never collide.
        self._by_id.update(fingerprints)
        self._bare = False
        self.ids = tuple(ids)
        self.signing_id = ids[0]
        self.signing_kid = ids[0].encode("ascii")  # as tokens spell it
        self.signing_key = self._by_id[ids[0]]

    def lookup_token_kid(self, kid: bytes) -> Key | None:
        """`lookup` of the id as a token spells it (ASCII bytes): the signing key's own id, the
        usual case, without decoding it first."""
        if kid == self.signing_kid:
            return self.signing_key
        return self.lookup(kid.decode("ascii"))

    def lookup(self, key_id: str) -> Key | None:
        """The key a token names, or None. A bare secret answers for any well-formed id."""
        key = self._by_id.get(key_id)
        if key is None and self._bare and _KEY_ID.fullmatch(key_id):
            return self.signing_key
        return key

    def __repr__(self) -> str:  # never show secrets
        if self._bare:
            return f"<Keyring secret {self.signing_id}>"
        return f"<Keyring ids={list(self.ids)}>"


def keyring_from(secret: Any = None, keys: Any = None) -> Keyring:
    """A Keyring from the `secret=` / `keys=` arguments (a ready Keyring passes through)."""
    if isinstance(keys, Keyring) and secret is None:
        return keys
    return Keyring(keys, secret=secret)


def parse_env_keys(text: str) -> list[tuple[str, bytes]]:
    """Parse `RONDO_STATE_KEYS`: `id1:base64url-secret,id2:base64url-secret`, signing key first.

    Error messages name the entry, never its secret.
    """
    import base64

    pairs: list[tuple[str, bytes]] = []
    for n, entry in enumerate(text.split(","), start=1):
        entry = entry.strip()
        if not entry:
            raise ValueError(f"{ENV_KEYS}: entry {n} is empty (format: id:base64url-secret,...)")
        key_id, sep, encoded = entry.partition(":")
        key_id, encoded = key_id.strip(), encoded.strip()
        if not sep or not key_id or not encoded:
            raise ValueError(f"{ENV_KEYS}: entry {n} is not id:base64url-secret")
        if not re.fullmatch(r"[A-Za-z0-9_-]+={0,2}", encoded):
            raise ValueError(f"{ENV_KEYS}: the secret of key {key_id!r} is not base64url")
        try:
            bare = encoded.rstrip("=")
            secret = base64.urlsafe_b64decode(bare + "=" * (-len(bare) % 4))
        except (binascii.Error, ValueError):
            raise ValueError(f"{ENV_KEYS}: the secret of key {key_id!r} is not base64url") from None
        pairs.append((key_id, secret))
    return pairs


def new_secret_text() -> str:
    """A fresh 32-byte secret in the base64url form `RONDO_STATE_KEYS` expects."""
    import base64

    return base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode("ascii")


_process_lock = allocate_lock()
_process_keyring: Keyring | None = None


def process_keyring() -> Keyring:
    """The random key this process uses when none is configured.

    Right for stdio (one client, one process); the HTTP transport warns about it, since
    several workers or a restart need shared keys.
    """
    global _process_keyring
    with _process_lock:
        if _process_keyring is None:
            _process_keyring = Keyring(secret=os.urandom(32))
        return _process_keyring

